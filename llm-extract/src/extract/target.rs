//! What an extraction produces: a Rust type ([`Typed`]) or validated JSON for a runtime schema
//! ([`Untyped`]). The loop in [`super::engine`] is written once against [`Target`] and serves both.

use super::example::{Example, ExampleError};
use crate::parse::{
    self, ParseError, ParseOptions, Parsed, Repair, Skipped, ValueDecoder, ValueEvent,
};
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

    /// The target's own worked examples (a derived type's `#[extract(example(...))]`).
    fn examples(&self) -> Result<Vec<Example>, ExampleError> {
        Ok(Vec::new())
    }

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
    fn feed(&mut self, chunk: &[u8]) -> Vec<Event<O>>;
    /// Ends the input; returns the rest.
    fn finish(self: Box<Self>) -> Vec<Event<O>>;
}

/// What the loop's decoder completed: an item, or a line it skipped.
pub(crate) enum Event<O> {
    Item(Found<O>),
    Skipped(Skipped),
}

/// An item with the validated JSON it came from, which the loop needs to drop repeats, to see a
/// model looping and to report partial results.
pub(crate) struct Found<O> {
    pub(crate) value: O,
    pub(crate) json: Value,
    pub(crate) repairs: Vec<Repair>,
    /// 1-based line of the answer where it starts.
    pub(crate) line: usize,
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

    fn examples(&self) -> Result<Vec<Example>, ExampleError> {
        T::examples()
    }

    fn parse_one(&self, text: &str, options: &ParseOptions) -> Result<Parsed<T>, ParseError> {
        parse::parse_with::<T>(text, options)
    }

    fn decoder(&self, options: ParseOptions) -> Box<dyn Decode<T> + Send + '_> {
        Box::new(TypedDecoder::<T>(
            ValueDecoder::new(T::schema(), options),
            PhantomData,
        ))
    }
}

/// Items of `T` with their JSON, from the untyped decoder.
struct TypedDecoder<T>(ValueDecoder<'static>, PhantomData<fn() -> T>);

impl<T: Extract> Decode<T> for TypedDecoder<T> {
    fn feed(&mut self, chunk: &[u8]) -> Vec<Event<T>> {
        self.0.feed(chunk).into_iter().map(typed_event).collect()
    }

    fn finish(self: Box<Self>) -> Vec<Event<T>> {
        self.0.finish().into_iter().map(typed_event).collect()
    }
}

fn typed_event<T: Extract>(event: ValueEvent) -> Event<T> {
    match event {
        ValueEvent::Skipped(skipped) => Event::Skipped(skipped),
        ValueEvent::Item(item) => match parse::typed_item::<T>(&item.json, item.line) {
            Ok(value) => Event::Item(Found {
                value,
                json: item.json,
                repairs: item.repairs,
                line: item.line,
            }),
            Err(skipped) => Event::Skipped(skipped),
        },
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
        Box::new(ValueDecoder::new(self.0, options))
    }
}

impl Decode<Value> for ValueDecoder<'_> {
    fn feed(&mut self, chunk: &[u8]) -> Vec<Event<Value>> {
        ValueDecoder::feed(self, chunk)
            .into_iter()
            .map(value_event)
            .collect()
    }

    fn finish(self: Box<Self>) -> Vec<Event<Value>> {
        ValueDecoder::finish(*self)
            .into_iter()
            .map(value_event)
            .collect()
    }
}

fn value_event(event: ValueEvent) -> Event<Value> {
    match event {
        ValueEvent::Item(item) => Event::Item(Found {
            value: item.json.clone(),
            json: item.json,
            repairs: item.repairs,
            line: item.line,
        }),
        ValueEvent::Skipped(skipped) => Event::Skipped(skipped),
    }
}
