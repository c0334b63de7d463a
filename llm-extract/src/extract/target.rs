//! What an extraction produces: a Rust type ([`Typed`]) or validated JSON for a runtime schema
//! ([`Untyped`]). The loop in [`super::run`] is written once against [`Target`] and serves both.

use crate::parse::{self, Item, LineDecoder, LineEvent, ParseError, ParseOptions, Parsed};
use crate::schema::SchemaSet;
use crate::Extract;
use serde_json::Value;
use std::marker::PhantomData;

/// What the loop needs from the thing being extracted.
pub(crate) trait Target: Sync {
    /// What one value or item becomes.
    type Output: Send;

    /// The schemas and instructions.
    fn schema(&self) -> &SchemaSet;

    /// Parses and validates one value.
    fn parse_one(
        &self,
        text: &str,
        options: &ParseOptions,
    ) -> Result<Parsed<Self::Output>, ParseError>;

    /// An incremental decoder of many items.
    fn decoder(&self, options: ParseOptions) -> Box<dyn Decode<Self::Output> + Send + '_>;
}

/// An incremental decoder of items, typed or not.
pub(crate) trait Decode<O> {
    /// Feeds a chunk; returns what it completed.
    fn feed(&mut self, chunk: &[u8]) -> Vec<LineEvent<O>>;
    /// Ends the input; returns the rest.
    fn finish(self: Box<Self>) -> Vec<LineEvent<O>>;
}

/// A Rust type implementing [`Extract`].
pub(crate) struct Typed<T>(PhantomData<fn() -> T>);

impl<T> Typed<T> {
    pub fn new() -> Self {
        Typed(PhantomData)
    }
}

impl<T: Extract> Target for Typed<T> {
    type Output = T;

    fn schema(&self) -> &SchemaSet {
        T::schema()
    }

    fn parse_one(&self, text: &str, options: &ParseOptions) -> Result<Parsed<T>, ParseError> {
        parse::parse_with::<T>(text, options)
    }

    fn decoder(&self, options: ParseOptions) -> Box<dyn Decode<T> + Send + '_> {
        Box::new(LineDecoder::<T>::with_options(options))
    }
}

impl<T: Extract> Decode<T> for LineDecoder<T> {
    fn feed(&mut self, chunk: &[u8]) -> Vec<LineEvent<T>> {
        LineDecoder::feed(self, chunk)
    }

    fn finish(self: Box<Self>) -> Vec<LineEvent<T>> {
        LineDecoder::finish(*self)
    }
}

/// Validated JSON for a runtime schema.
pub(crate) struct Untyped<'s>(pub &'s SchemaSet);

impl Target for Untyped<'_> {
    type Output = Value;

    fn schema(&self) -> &SchemaSet {
        self.0
    }

    fn parse_one(&self, text: &str, options: &ParseOptions) -> Result<Parsed<Value>, ParseError> {
        parse::parse_value(text, self.0, options)
    }

    fn decoder(&self, options: ParseOptions) -> Box<dyn Decode<Value> + Send + '_> {
        Box::new(parse::ValueDecoder::new(self.0, options))
    }
}

impl Decode<Value> for parse::ValueDecoder<'_> {
    fn feed(&mut self, chunk: &[u8]) -> Vec<LineEvent<Value>> {
        parse::ValueDecoder::feed(self, chunk)
            .into_iter()
            .map(value_event)
            .collect()
    }

    fn finish(self: Box<Self>) -> Vec<LineEvent<Value>> {
        parse::ValueDecoder::finish(*self)
            .into_iter()
            .map(value_event)
            .collect()
    }
}

fn value_event(event: parse::ValueEvent) -> LineEvent<Value> {
    match event {
        parse::ValueEvent::Item(item) => LineEvent::Item(Item {
            value: item.json.clone(),
            json: item.json,
            line: item.line,
            repairs: item.repairs,
        }),
        parse::ValueEvent::Skipped(skipped) => LineEvent::Skipped(skipped),
    }
}
