//! Shared by the real-model tests (`tests/llama_*.rs`): the model, loaded once per test binary.
//!
//! The model is the file `LLM_EXTRACT_MODEL` names, else the default model that `scripts/fetch-model.sh`
//! caches. Nothing is downloaded here: without a model these tests fail, saying what to run.
#![allow(dead_code)]

use llm_extract::llm::llama_cpp::LlamaCpp;
use std::sync::OnceLock;

/// The model every real-model test of this binary shares (requests queue on it, one at a time).
pub fn model() -> &'static LlamaCpp {
    static MODEL: OnceLock<LlamaCpp> = OnceLock::new();
    MODEL.get_or_init(|| match LlamaCpp::from_env() {
        Ok(model) => model,
        Err(e) => panic!(
            "the real-model tests need a GGUF model: {e}\n(scripts/test.sh and .ci/run fetch it first; \
             or run scripts/fetch-model.sh, or set LLM_EXTRACT_MODEL to a GGUF file)"
        ),
    })
}

/// A short text naming one person and one company.
pub const PERSON_AND_COMPANY: &str = "Satya Nadella is the chief executive of Microsoft.";

/// A short text with entities, relationships and attributes.
pub const ONTOLOGY_TEXT: &str =
    "Marie Curie was a physicist born in Warsaw. She worked at the University of Paris.";
