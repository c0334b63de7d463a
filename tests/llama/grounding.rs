//! Grounding by construction on the embedded engine: under llguidance, a grounded string can only be a
//! span of the source, so every grounded value the real model writes is an exact span at its offsets,
//! with no re-asking; under llama.cpp's GBNF sampler (no such lexeme) the same values are grounded after
//! parsing and reported honestly.
#![cfg(feature = "llama-cpp")]

use crate::llama_common;

use llama_common::model;
use llm_extract::document::Chunker;
use llm_extract::ground::MatchKind;
use llm_extract::llm::llama_cpp::{GrammarEngine, LlamaCpp};
use llm_extract::{Extract, Extractor, Llm};
use serde::Deserialize;

/// People and places of a story, by name as written.
#[derive(Extract, Deserialize, Debug, Clone, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Mention {
    /// A person, by name.
    Person {
        /// The name as the text writes it.
        #[extract(grounded)]
        name: String,
    },
    /// A place, by name.
    Place {
        /// The name as the text writes it.
        #[extract(grounded)]
        name: String,
    },
}

/// The first chunk `llm-extract doc --embedded` makes of "A Case of Identity" (3,072 bytes at most, CRLF
/// line ends, quotes and dashes as in the book): the first token of a grounded string walks the whole
/// chunk's substring automaton, more lexer work than llguidance allows by default.
fn passage() -> String {
    let story = include_str!("../data/a-case-of-identity.txt");
    Chunker::new(3072)
        .split(story)
        .first()
        .map(|chunk| chunk.text.to_owned())
        .unwrap_or_default()
}

#[tokio::test]
async fn every_grounded_value_of_the_embedded_engine_is_an_exact_span_at_its_offsets() {
    let text = passage();
    assert!(model().constrains_grounding());
    let out = Extractor::new(model())
        .max_tokens(160)
        .extract_grounded::<Mention>(&text)
        .await
        .unwrap();
    assert!(!out.value.is_empty(), "{:#?}", out.report);
    for item in &out.value {
        for span in &item.spans {
            assert_eq!(span.kind, MatchKind::Exact, "{span:?}\n{:#?}", out.report);
            assert_eq!(text.get(span.bytes.clone()), Some(span.value.as_str()));
            let by_chars: String = text
                .chars()
                .skip(span.chars.start)
                .take(span.chars.len())
                .collect();
            assert_eq!(by_chars, span.value);
        }
    }
    assert!(
        out.report.skipped.is_empty(),
        "nothing is re-asked for grounding: {:#?}",
        out.report.skipped
    );
}

#[tokio::test]
async fn without_llguidance_the_values_are_grounded_after_parsing() {
    let gbnf = LlamaCpp::builder(model().model_path())
        .grammar_engine(GrammarEngine::Gbnf)
        .build()
        .unwrap();
    assert!(!gbnf.constrains_grounding());
    let text = passage();
    let out = Extractor::new(gbnf)
        .max_tokens(160)
        .max_attempts(1)
        .extract_grounded::<Mention>(&text)
        .await
        .unwrap();
    for item in &out.value {
        for span in &item.spans {
            if span.kind.is_found() {
                assert!(text.get(span.bytes.clone()).is_some(), "{span:?}");
            } else {
                assert_eq!(span.bytes, 0..0, "{span:?}");
            }
        }
    }
}
