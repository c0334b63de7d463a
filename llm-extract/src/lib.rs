//! # llm-extract
//!
//! Typed, validated Rust values from what a language model writes.
//!
//! Derive [`Extract`] (with serde's `Deserialize`) on a type: at compile time the derive yields its JSON
//! Schema, the schema each provider accepts ([`Dialect`](schema::Dialect)) and short format
//! instructions for the prompt. At run time an extraction asks a model through any [`Llm`] backend,
//! parses the answer leniently, validates it against the schema, deserializes it with serde and, when
//! it is wrong, shows the model its answer and the exact errors, up to [`Extractor::max_attempts`].
//! Every result and every error carries a [`Report`] of the attempts and the tokens they cost.
//!
//! ```
//! use llm_extract::llm::ChatResponse;
//! use llm_extract::{from_fn, Extract, Extractor};
//! use serde::Deserialize;
//!
//! /// Someone the text names.
//! #[derive(Extract, Deserialize, Debug)]
//! struct Person {
//!     /// The full name, as the text writes it.
//!     name: String,
//!     #[extract(minimum = 1000, maximum = 2100)]
//!     born: Option<u16>,
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! // Any backend: Ollama, an OpenAI-compatible server, Anthropic, Gemini, the embedded engine, a closure.
//! let llm = from_fn(|_request| async {
//!     Ok(ChatResponse::new("Sure! ```json\n{\"name\": \"Ada Lovelace\", \"born\": \"1815\",}\n```"))
//! });
//! let person = Person::extract(&llm, "Ada Lovelace was born in 1815.").await?;
//! assert_eq!(person.born, Some(1815));
//!
//! let extraction = Extractor::new(&llm).max_attempts(2).extract::<Person>("...").await?;
//! assert_eq!(extraction.report.attempts.len(), 1);
//! assert!(!extraction.report.fixes.is_empty()); // the fence, the trailing comma, the quoted number
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! # The front door
//!
//! The root holds what a program calls first; everything else is one module deeper.
//!
//! - The derive and its traits: [`macro@Extract`], [`Extract`], [`Schema`].
//! - [`Extractor`]: every setting (one table, on its page) and seven `extract*` methods over a target
//!   type: one value, all items, a stream of items, a value as it is written, items with their spans,
//!   a long document and its stream. [`Extractor::with_schema`] gives the same seven for a runtime
//!   schema ([`DynamicSchema`]); [`Input`] fills a prompt template.
//! - What comes back: [`Extraction`] (the value and its [`Report`]).
//! - The errors: [`ExtractError`], [`LlmError`], [`SchemaError`], [`ParseError`].
//! - The backends: [`Ollama`], [`OpenAiCompatible`], [`Anthropic`], [`Gemini`], `LlamaCpp` (feature
//!   `llama-cpp`), [`from_fn`] for a closure, and the [`Llm`] trait they implement.
//! - [`from_str`]: the lenient parser on its own.
//!
//! # The modules, in the order an extraction flows through them
//!
//! 1. [`schema`]: what a type yields ([`Schema`]: the generic JSON Schema, the list schema, format
//!    instructions), its rendering per provider [`Dialect`](schema::Dialect), and runtime schemas
//!    ([`DynamicSchema`], signatures). The derive implements [`Schema`] and [`Extract`]; see
//!    [`macro@Extract`].
//! 2. [`llm`]: the [`Llm`] trait, its request and response types, and the backends: [`Ollama`],
//!    [`OpenAiCompatible`], [`Anthropic`], [`Gemini`], the embedded engine `LlamaCpp` (feature
//!    `llama-cpp`), and [`from_fn`] for a closure. One retry policy for transient failures; keys kept
//!    out of logs, `Debug` output and errors.
//! 3. [`parse`](mod@parse): the model's answer read leniently, as one value ([`from_str`]), JSON
//!    Lines ([`parse::lines_from_str`], the incremental [`parse::LineDecoder`]) or a value still being
//!    written ([`parse::PartialReader`]).
//! 4. [`validate`]: one compiled validator per schema; every violation with its JSON pointer.
//! 5. [`ground`]: where in the source text each quoted (`#[extract(grounded)]`) value came from, and
//!    the merge of long documents' items; [`document`]: documents read to text (PDFs, web pages) and a
//!    long text split into chunks ([`document::Chunker`]).
//! 6. [`extract`](mod@extract): [`Extractor`], the loop that ties the steps together: ask, parse,
//!    validate, repair, continue a cut-off answer; one value, lists, streams, partial values, grounded
//!    extractions and long documents ([`extract::DocumentSource`]); the [`extract::LoopGuard`] that
//!    stops an answer repeating itself.
//! 7. [`report`]: what an extraction tried and cost ([`Extraction`], [`report::Attempt`],
//!    [`llm::Usage`]).
//!
//! Built on top of the loop: [`batch`] (many records, bounded concurrency, several backends),
//! [`prompts`] (a JSON file of named prompts, shared with the command-line tool), [`eval`] (scoring
//! extractions against answers), [`check`] (checks a schema cannot say) and [`blocking`] (the same
//! extractions without an async runtime). [`error`] holds the errors shared across modules; each
//! module owns the errors of its own job ([`ExtractError`], [`LlmError`], [`ParseError`]).
//! [`stable_hash`] is the hash that names what a later run must find again (batch request ids, the
//! command line's resume directories).
//!
//! # Backends
//!
//! | backend | type | the schema is sent as |
//! |---|---|---|
//! | Ollama (`/api/chat`, `OLLAMA_HOST`) | [`Ollama`] | `format` ([`Dialect::Gbnf`](schema::Dialect::Gbnf)) |
//! | vLLM, llama-server, LM Studio, OpenAI (`/v1/chat/completions`) | [`OpenAiCompatible`] | `response_format: json_schema` ([`Dialect::OpenAiStrict`](schema::Dialect::OpenAiStrict)) |
//! | Anthropic Messages API (`ANTHROPIC_API_KEY`) | [`Anthropic`] | `output_config.format`, or one forced tool ([`Dialect::Anthropic`](schema::Dialect::Anthropic)) |
//! | Gemini (`GEMINI_API_KEY`) | [`Gemini`] | `generationConfig.responseJsonSchema` ([`Dialect::Gemini`](schema::Dialect::Gemini)) |
//! | llama.cpp in process (feature `llama-cpp`) | `LlamaCpp` | a grammar (llguidance) the model cannot leave |
//! | an async closure | [`from_fn`] | whatever the closure does |
//!
//! [`Mode`](extract::Mode) chooses how the schema travels: sent and described in the prompt
//! ([`Mode::Constrained`](extract::Mode::Constrained), the default), described only
//! ([`Mode::Prompted`](extract::Mode::Prompted)), or as one tool the model must call
//! ([`Mode::Tool`](extract::Mode::Tool)). Whatever the mode, every answer is parsed and validated
//! locally: a keyword a provider cannot carry is left out of what is sent, never out of what is checked.
//!
//! # Defaults
//!
//! - Requests are greedy and seeded (temperature 0, seed 0) unless [`Extractor::temperature`] or
//!   [`Extractor::seed`] say otherwise, so the same request gives the same answer.
//! - `max_tokens` follows from what the schema lets a value cost where it bounds it, else 1024 for one
//!   value and 4096 for a list ([`Extractor::max_tokens`]).
//! - Three attempts: the first answer and up to two repairs ([`Extractor::max_attempts`]); transport
//!   retries are separate ([`llm::RetryPolicy`]).
//!
//! The table of every setting, its default and what reads it is on [`Extractor`].
//!
//! # Cargo features
//!
//! - `llama-cpp`: the embedded llama.cpp engine (`llm::llama_cpp`). Its build needs cmake, clang and
//!   libclang-dev.

#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod batch;
pub mod blocking;
pub mod check;
pub mod document;
pub mod error;
pub mod eval;
pub mod extract;
pub mod ground;
pub mod llm;
#[cfg(feature = "otlp")]
#[cfg_attr(docsrs, doc(cfg(feature = "otlp")))]
pub mod otlp;
pub mod parse;
pub mod prompts;
pub mod report;
pub mod schema;
pub mod stable_hash;
pub mod validate;

pub use error::SchemaError;
pub use extract::{Extract, ExtractError, Extractor, Input};
#[cfg(feature = "llama-cpp")]
#[cfg_attr(docsrs, doc(cfg(feature = "llama-cpp")))]
pub use llm::llama_cpp::LlamaCpp;
pub use llm::{from_fn, Anthropic, Gemini, Llm, LlmError, Ollama, OpenAiCompatible};
pub use parse::{from_str, ParseError};
pub use report::{Extraction, Report};
pub use schema::{DynamicSchema, Schema};

/// Derives [`Schema`] and [`Extract`] for a type that also derives serde's `Deserialize`; the
/// attributes it reads (`#[extract(...)]` and the `#[serde(...)]` ones it mirrors) are listed below.
pub use llm_extract_derive::Extract;

/// The one path generated code goes through. Not public API: no stability promise.
#[doc(hidden)]
pub mod __private {
    pub use crate::parse::partial::Node;
    pub use crate::parse::partial_value::{
        complete_str, content_or_empty, descend_field, field_shown, json_shown, member, one_item,
        sync_field, sync_json, without_keys, written, PartialField, PartialValue,
    };
    pub use crate::schema::builder::*;
    pub use crate::schema::SchemaSet;
    pub use serde::{self, Serialize};
    pub use serde_json::{self, json, Map, Value};
    pub use std::sync::OnceLock;
}

/// The front door stays small: what the crate root re-exports and how many `extract*` methods
/// [`Extractor`] has, read from the sources.
#[cfg(test)]
mod front_door {
    use std::path::Path;

    /// The names `pub use` brings into `source`, outside the hidden `__private` module.
    fn reexported(source: &str) -> Vec<String> {
        let public = source.split("pub mod __private").next().unwrap_or_default();
        let mut names = Vec::new();
        for statement in public.split(';') {
            let Some(at) = statement.find("pub use ") else {
                continue;
            };
            let path = &statement[at + "pub use ".len()..];
            let list = match (path.find('{'), path.rfind('}')) {
                (Some(open), Some(close)) => &path[open + 1..close],
                _ => path.rsplit("::").next().unwrap_or_default(),
            };
            for item in list
                .split(',')
                .map(str::trim)
                .filter(|item| !item.is_empty())
            {
                let name = item.rsplit(" as ").next().unwrap_or(item);
                names.push(name.rsplit("::").next().unwrap_or(name).to_owned());
            }
        }
        names
    }

    /// The `pub fn extract*` of every `impl ... Extractor<...>` block in `source`.
    fn extract_methods(source: &str) -> Vec<String> {
        let mut methods = Vec::new();
        let mut depth = 0usize;
        let mut inside: Option<usize> = None;
        for line in source.lines() {
            let code = line.trim_start();
            if inside.is_none()
                && code.starts_with("impl")
                && code.contains(" Extractor<")
                && !code.contains("for ")
            {
                inside = Some(depth);
            }
            if inside.is_some() {
                let signature = code
                    .strip_prefix("pub async fn ")
                    .or_else(|| code.strip_prefix("pub fn "));
                if let Some(name) = signature.filter(|rest| rest.starts_with("extract")) {
                    let end = name.find(['<', '(']).unwrap_or(name.len());
                    methods.push(name[..end].to_owned());
                }
            }
            depth += code.matches('{').count();
            depth = depth.saturating_sub(code.matches('}').count());
            if inside.is_some_and(|start| depth <= start) && code.contains('}') {
                inside = None;
            }
        }
        methods
    }

    fn sources(dir: &Path, found: &mut Vec<(String, String)>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                sources(&path, found);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                found.push((path.display().to_string(), text));
            }
        }
    }

    #[test]
    fn the_root_reexports_at_most_twenty_names() {
        let names = reexported(include_str!("lib.rs"));
        assert!(names.contains(&"Extractor".to_owned()), "{names:?}");
        assert!(names.len() <= 20, "{} names: {names:?}", names.len());
    }

    #[test]
    fn extractor_has_at_most_eight_extract_methods() {
        let mut files = Vec::new();
        sources(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
            &mut files,
        );
        let mut methods = Vec::new();
        for (path, text) in &files {
            methods.extend(
                extract_methods(text)
                    .into_iter()
                    .map(|m| format!("{m} ({path})")),
            );
        }
        assert!(
            methods.iter().any(|m| m.starts_with("extract_document ")),
            "{methods:?}"
        );
        assert!(
            methods.len() <= 8,
            "{} methods: {methods:#?}",
            methods.len()
        );
    }

    #[test]
    fn the_readers_count_what_they_should() {
        let lib = "pub use a::{B, c::D as E};\npub use f::G;\n#[doc(hidden)]\npub mod __private {\n    pub use h::I;\n}";
        assert_eq!(reexported(lib), ["B", "E", "G"]);
        let methods = "impl<L: Llm> Extractor<L> {\n    pub async fn extract<T>(&self) {}\n    pub fn extract_all(&self) {\n        if x {}\n    }\n    fn extract_hidden(&self) {}\n}\nimpl<'a, L> SchemaExtractor<'a, L> {\n    pub fn extract(&self) {}\n}\nimpl<L> Extractor<L> {\n    pub fn extract_more(&self) {}\n}";
        assert_eq!(
            extract_methods(methods),
            ["extract", "extract_all", "extract_more"]
        );
    }
}
