//! What an extraction produces: a Rust type ([`Derived`]) or validated JSON for a runtime schema
//! ([`Runtime`]). The loop in [`super::engine`] is written once against [`Target`] and serves both;
//! both decode their items through the one generic [`LineDecoder`].

use super::example::{Example, ExampleError};
use crate::parse::{
    self, Item, LineDecoder, LineEvent, ParseError, ParseOptions, Parsed, WithJson,
};
use crate::schema::SchemaSet;
use crate::Extract;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::marker::PhantomData;

/// An item the loop decoded, with the validated JSON it came from (to drop repeats, to see a model
/// looping and to quote kept items back).
pub(crate) type Found<O> = Item<WithJson<O>>;

/// What the loop needs from the thing being extracted.
pub(crate) trait Target: Sync {
    /// What one value or item becomes.
    type Output: DeserializeOwned + Send;

    /// The schemas and instructions.
    fn schema(&self) -> &SchemaSet;

    /// The target's own worked examples (a derived type's `#[extract(example(...))]`).
    fn examples(&self) -> Result<Vec<Example>, ExampleError> {
        Ok(Vec::new())
    }

    /// The source text the target's grounded strings must come from, if it grounds any: a backend that
    /// [constrains grounding](crate::llm::Llm::constrains_grounding) decodes them as spans of it.
    fn grounding(&self) -> Option<&str> {
        None
    }

    /// Parses and validates one value.
    fn parse_one(
        &self,
        text: &str,
        options: &ParseOptions,
    ) -> Result<Parsed<Self::Output>, ParseError>;

    /// An incremental decoder of many items, each with its validated JSON.
    fn decoder(&self, options: ParseOptions) -> LineDecoder<'_, WithJson<Self::Output>> {
        LineDecoder::with_json(self.schema(), options)
    }

    /// Checks what the decoder completed before the loop takes it: a target may complete an item
    /// (e.g. with the spans of its grounded values) or turn it into a skipped line the loop re-asks.
    /// Default: as decoded.
    fn vet(
        &self,
        events: Vec<LineEvent<WithJson<Self::Output>>>,
    ) -> Vec<LineEvent<WithJson<Self::Output>>> {
        events
    }
}

/// A Rust type implementing [`Extract`].
pub(crate) struct Derived<T>(PhantomData<fn() -> T>);

impl<T> Derived<T> {
    pub fn new() -> Self {
        Derived(PhantomData)
    }
}

impl<T: Extract> Target for Derived<T> {
    type Output = T;

    fn schema(&self) -> &SchemaSet {
        T::schema()
    }

    fn examples(&self) -> Result<Vec<Example>, ExampleError> {
        T::examples()
    }

    fn parse_one(&self, text: &str, options: &ParseOptions) -> Result<Parsed<T>, ParseError> {
        parse::from_str_with::<T>(text, options)
    }
}

/// Validated JSON for a runtime schema.
pub(crate) struct Runtime<'s>(pub &'s SchemaSet);

impl Target for Runtime<'_> {
    type Output = Value;

    fn schema(&self) -> &SchemaSet {
        self.0
    }

    fn parse_one(&self, text: &str, options: &ParseOptions) -> Result<Parsed<Value>, ParseError> {
        parse::from_str_value(text, self.0, options)
    }
}
