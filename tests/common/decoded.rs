//! What the incremental decoders yield, comparably: the typed [`LineDecoder`] checked, event by
//! event, against the same decoder reading validated JSON (`LineDecoder<Value>`) fed the same chunks. A clean frame takes a different
//! path in the typed one (straight from its text to `T`) and must come out the same.

use llm_extract::parse::{LineEvent, ParseOptions, Skipped};
use llm_extract::{parse::LineDecoder, Schema};
use serde_json::Value;

/// One event: an item's validated JSON and line, or a skipped line.
#[derive(Debug, Clone, PartialEq)]
pub enum Out {
    Item(Value, usize),
    Skip(Skipped),
}

/// Feeds `chunks` to both decoders, asserts they agree, and returns the events.
pub fn decode<T: Schema + PartialEq + std::fmt::Debug>(
    chunks: &[&[u8]],
    options: ParseOptions,
) -> Vec<Out> {
    let mut typed = LineDecoder::<T>::with_options(options);
    let mut untyped = LineDecoder::with_schema(T::schema(), options);
    let (mut events, mut values) = (Vec::new(), Vec::new());
    for chunk in chunks {
        events.extend(typed.feed(chunk));
        values.extend(untyped.feed(chunk));
    }
    events.extend(typed.finish());
    values.extend(untyped.finish());
    assert_eq!(events.len(), values.len());
    events
        .into_iter()
        .zip(values)
        .map(|pair| match pair {
            (LineEvent::Item(item), LineEvent::Item(json)) => {
                let value: T = serde_json::from_value(json.value.clone()).unwrap();
                assert_eq!(item.value, value);
                assert_eq!((item.line, &item.fixes), (json.line, &json.fixes));
                Out::Item(json.value, item.line)
            }
            (LineEvent::Skipped(typed), LineEvent::Skipped(untyped)) => {
                assert_eq!(typed, untyped);
                Out::Skip(typed)
            }
            // Valid JSON that serde still refuses: the typed decoder skips it.
            (LineEvent::Skipped(typed), LineEvent::Item(_)) => Out::Skip(typed),
            (typed, untyped) => panic!("typed {typed:?}, untyped {untyped:?}"),
        })
        .collect()
}
