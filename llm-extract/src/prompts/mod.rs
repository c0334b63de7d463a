//! Prompt configs: a JSON file of named prompts, each a template with `{{var}}` placeholders and the shape of
//! the answer it expects, usable from Rust and from the `llm-extract prompt` command alike.
//!
//! ```json
//! {
//!   "summarize": {
//!     "prompt": "Summarize in one sentence:\n{{text}}",
//!     "response-type": "text"
//!   },
//!   "sentiment": {
//!     "prompt": "What is the sentiment of this review? {{text}}",
//!     "response-type": "json",
//!     "schema": "{sentiment (positive | negative | neutral), score :float}"
//!   },
//!   "extract-definitions": {
//!     "prompt": ["List every term the text defines.", "{{text}}"],
//!     "response-type": "jsonl",
//!     "object-schema": {
//!       "type": "object",
//!       "properties": {"term": {"type": "string"}, "definition": {"type": "string"}},
//!       "required": ["term", "definition"]
//!     }
//!   }
//! }
//! ```
//!
//! The file is an object of prompts keyed by id (as above) or an array of prompts each with an `"id"`.
//! A prompt has:
//! - `prompt` (required): the template, a string or an array of lines joined with newlines;
//! - `response-type`: `text` (the raw answer, streamable), `json` (one value, parsed, validated and
//!   repaired; an error when it never validates) or `jsonl` (every valid line; lines that never validate are
//!   reported as skipped, and an empty result is a warning, not an error). Defaults to `json` when a
//!   schema is given, else `text`;
//! - `schema`: a JSON Schema (or a [signature](crate::schema::signature) string) for the whole `json`
//!   answer, or for each line of a `jsonl` answer; `object-schema` is accepted for the latter too;
//! - optionally `system` (instructions placed before the format instructions), `description`,
//!   `max-tokens` and `temperature`;
//! - optionally `examples` (`json` and `jsonl` prompts): worked examples, each
//!   `{"text": "...", "value": ...}` (for `jsonl` also `{"text": "...", "items": [...]}`), validated
//!   against the schema when the config is loaded. Each is shown to the model as the template filled
//!   with the example's text as `{{text}}` (so the template must use `{{text}}`), answered with the value
//!   (see [`crate::extract::Example`]).
//!
//! The extraction's own wording (its system prompt, the repair and continuation turns, the per-field
//! questions) and the `{{var}}` filling that configs and extractions share live a layer below, in the
//! extraction (`extract/prompts/`), which sends them; this module, which runs extractions, sits above it.
//!
//! Files: this one holds the prompts and their calls; `config_file.rs` reads a config file's format into
//! [`Prompt`]s, every mistake named by prompt and key, and `example_config.rs` a prompt's `examples`.
//!
//! ```
//! use llm_extract::llm::{from_fn, ChatResponse};
//! use llm_extract::prompts::{PromptOutput, PromptSet};
//! use llm_extract::extract::Input;
//! use serde_json::json;
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let prompts = PromptSet::from_json(json!({
//!     "sentiment": {
//!         "prompt": "What is the sentiment of this review? {{text}}",
//!         "schema": "{sentiment (positive | negative), score :float}"
//!     }
//! }))?;
//! let llm = from_fn(|_request| async { Ok(ChatResponse::new(r#"{"sentiment": "positive", "score": 0.9}"#)) });
//! let prompt = prompts.get("sentiment").expect("defined above");
//! let output = prompt.invoke(&llm, Input::text("Loved it.")).await?;
//! assert_eq!(output.to_value(), json!({"sentiment": "positive", "score": 0.9}));
//!
//! // Typed code reads the same file:
//! #[derive(serde::Deserialize)]
//! struct Sentiment { sentiment: String, score: f64 }
//! let typed: Sentiment = prompt.invoke_typed(&llm, Input::text("Loved it.")).await?;
//! assert_eq!(typed.sentiment, "positive");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

use crate::extract::{
    Example, ExtractError, ExtractErrorKind, ExtractStream, Extractor, Input, Mode, TemplateError,
};
use crate::llm::{ChatRequest, ChatResponse, ChatStream, Llm, LlmError, Media, Message};
use crate::parse::Skipped;
use crate::report::Extraction;
use crate::schema::{DynamicSchema, DynamicSchemaError};
use futures_util::StreamExt;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::path::Path;

mod config_file;
mod example_config;

/// A set of named prompts, in the order the file lists them.
#[derive(Debug, Clone, Default)]
pub struct PromptSet {
    prompts: Vec<Prompt>,
}

/// The shape of answer a prompt expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ResponseType {
    /// The raw answer, as written (streamable).
    Text,
    /// One JSON value, validated against the schema.
    Json,
    /// JSON Lines: one value per line, each validated against the schema.
    Jsonl,
}

impl ResponseType {
    /// The name used in config files: `text`, `json` or `jsonl`.
    pub fn name(self) -> &'static str {
        match self {
            ResponseType::Text => "text",
            ResponseType::Json => "json",
            ResponseType::Jsonl => "jsonl",
        }
    }
}

impl std::fmt::Display for ResponseType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One prompt of a [`PromptSet`].
#[derive(Debug, Clone)]
pub struct Prompt {
    id: String,
    template: String,
    response_type: ResponseType,
    schema: Option<DynamicSchema>,
    system: Option<String>,
    description: Option<String>,
    max_tokens: Option<u32>,
    temperature: Option<f32>,
    examples: Vec<Example>,
}

/// A prompt config could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PromptConfigError {
    /// The file could not be read.
    #[error("cannot read prompt config {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not JSON.
    #[error("prompt config {path} is not valid JSON: {source}")]
    Json {
        /// The file.
        path: String,
        /// The JSON error.
        source: serde_json::Error,
    },
    /// The config is JSON but not a valid prompt set.
    #[error("{}{message}", prompt_prefix(.id))]
    Invalid {
        /// The prompt at fault, if the problem is in one prompt.
        id: Option<String>,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// A prompt's schema cannot be used.
    #[error("prompt `{id}`: {source}")]
    Schema {
        /// The prompt.
        id: String,
        /// Why its schema cannot be used.
        source: DynamicSchemaError,
    },
}

/// A config mistake, in the prompt `id` (or in the config as a whole).
fn invalid(id: Option<&str>, message: impl Into<String>) -> PromptConfigError {
    PromptConfigError::Invalid {
        id: id.map(str::to_owned),
        message: message.into(),
    }
}

fn prompt_prefix(id: &Option<String>) -> String {
    match id {
        Some(id) => format!("prompt `{id}`: "),
        None => "prompt config: ".to_owned(),
    }
}

/// Invoking a prompt failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PromptError {
    /// The template could not be filled (a variable is missing): nothing was sent.
    #[error("prompt `{id}`: {source}")]
    Template {
        /// The prompt.
        id: String,
        /// What is missing.
        source: TemplateError,
    },
    /// The backend failed (`text` prompts).
    #[error("prompt `{id}`: the backend failed: {source}")]
    Llm {
        /// The prompt.
        id: String,
        /// The backend's error.
        source: LlmError,
    },
    /// No valid answer (`json`), or the backend failed (`json`, `jsonl`); carries every attempt and its raw
    /// answer.
    #[error("prompt `{id}`: {source}")]
    Extract {
        /// The prompt.
        id: String,
        /// The extraction's error and ledger.
        source: ExtractError,
    },
    /// The validated answer does not deserialize into the requested Rust type.
    #[error("prompt `{id}`: the answer does not fit the Rust type: {message}")]
    Deserialize {
        /// The prompt.
        id: String,
        /// serde's message.
        message: String,
        /// The validated answer.
        value: Value,
    },
    /// The call does not match the prompt's response type (e.g. a text stream of a `json` prompt).
    #[error("prompt `{id}` has response-type {actual}; {message}")]
    WrongType {
        /// The prompt.
        id: String,
        /// Its response type.
        actual: ResponseType,
        /// What was asked for instead.
        message: String,
    },
}

/// What a prompt produced.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum PromptOutput {
    /// A `text` prompt's answer.
    Text(ChatResponse),
    /// A `json` prompt's validated value, with its ledger.
    Json(Extraction<Value>),
    /// A `jsonl` prompt's valid lines, with the skipped ones in [`Report::skipped`](crate::report::Report::skipped).
    Jsonl(Extraction<Vec<Value>>),
}

/// Something worth telling about an answer that is not an error.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PromptWarning {
    /// A `jsonl` answer held no valid line.
    #[error("the answer held no valid line")]
    NoItems,
    /// Some lines of a `jsonl` answer never validated and were left out.
    #[error("{} line(s) skipped: {}", .0.len(), describe(.0))]
    Skipped(Vec<Skipped>),
}

fn describe(skipped: &[Skipped]) -> String {
    skipped
        .iter()
        .take(3)
        .map(|s| format!("line {}: {}", s.line, s.reason))
        .collect::<Vec<_>>()
        .join("; ")
}

impl PromptOutput {
    /// The answer as JSON: a `text` answer as a string, a `jsonl` answer as an array of its lines.
    pub fn to_value(&self) -> Value {
        match self {
            PromptOutput::Text(response) => Value::String(response.text.clone()),
            PromptOutput::Json(extraction) => extraction.value.clone(),
            PromptOutput::Jsonl(extraction) => Value::Array(extraction.value.clone()),
        }
    }

    /// The answer as JSON, by value.
    pub fn into_value(self) -> Value {
        match self {
            PromptOutput::Text(response) => Value::String(response.text),
            PromptOutput::Json(extraction) => extraction.value,
            PromptOutput::Jsonl(extraction) => Value::Array(extraction.value),
        }
    }

    /// What a caller may want to tell the user: an empty `jsonl` result, skipped lines.
    pub fn warnings(&self) -> Vec<PromptWarning> {
        let mut warnings = Vec::new();
        if let PromptOutput::Jsonl(extraction) = self {
            if extraction.value.is_empty() {
                warnings.push(PromptWarning::NoItems);
            }
            if !extraction.report.skipped.is_empty() {
                warnings.push(PromptWarning::Skipped(extraction.report.skipped.clone()));
            }
        }
        warnings
    }
}

impl PromptSet {
    /// Loads a prompt config file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, PromptConfigError> {
        let path = path.as_ref();
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| PromptConfigError::Io {
            path: shown.clone(),
            source,
        })?;
        let value = serde_json::from_str(&text).map_err(|source| PromptConfigError::Json {
            path: shown,
            source,
        })?;
        Self::from_json(value)
    }

    /// Reads a prompt config from JSON: an object of prompts keyed by id, or an array of prompts each
    /// with an `"id"`.
    pub fn from_json(config: Value) -> Result<Self, PromptConfigError> {
        let entries = config_file::entries(config)?;
        let mut prompts: Vec<Prompt> = Vec::with_capacity(entries.len());
        for entry in entries {
            if prompts.iter().any(|p| p.id == entry.id) {
                return Err(invalid(Some(&entry.id), "defined twice"));
            }
            prompts.push(Prompt::try_from(entry)?);
        }
        Ok(PromptSet { prompts })
    }

    /// The prompt named `id`.
    pub fn get(&self, id: &str) -> Option<&Prompt> {
        self.prompts.iter().find(|p| p.id == id)
    }

    /// The ids, in file order.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.prompts.iter().map(|p| p.id.as_str())
    }

    /// Every prompt, in file order.
    pub fn iter(&self) -> impl Iterator<Item = &Prompt> {
        self.prompts.iter()
    }

    /// How many prompts there are.
    pub fn len(&self) -> usize {
        self.prompts.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.prompts.is_empty()
    }
}

/// The filled prompt as the input of an extraction, with the caller's media.
fn with_media(rendered: String, media: Vec<Media>) -> Input {
    media
        .into_iter()
        .fold(Input::text(rendered), Input::with_media)
}

impl Prompt {
    /// The prompt's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The template, with `{{var}}` placeholders.
    pub fn template(&self) -> &str {
        &self.template
    }

    /// What the answer must be.
    pub fn response_type(&self) -> ResponseType {
        self.response_type
    }

    /// The schema of the answer (`json`) or of each line (`jsonl`); `None` for `text`.
    pub fn schema(&self) -> Option<&DynamicSchema> {
        self.schema.as_ref()
    }

    /// The system instructions, if the config gives any.
    pub fn system(&self) -> Option<&str> {
        self.system.as_deref()
    }

    /// The worked examples the config gives (their text as written, not yet filled into the template).
    pub fn examples(&self) -> &[Example] {
        &self.examples
    }

    /// The description, if the config gives one.
    pub fn description(&self) -> Option<&str> {
        self.description.as_deref()
    }

    /// Fills the template from `input`: an error naming the first variable the input lacks.
    pub fn render(&self, input: impl Into<Input>) -> Result<String, PromptError> {
        input
            .into()
            .into_vars()
            .and_then(|vars| crate::extract::render(&self.template, &vars))
            .map_err(|source| PromptError::Template {
                id: self.id.clone(),
                source,
            })
    }

    /// A call of this prompt on `llm`, to adjust before running it.
    pub fn call<L: Llm>(&self, llm: L) -> PromptCall<'_, L> {
        PromptCall {
            prompt: self,
            llm,
            max_attempts: None,
            max_tokens: self.max_tokens,
            temperature: self.temperature,
            mode: Mode::Constrained,
        }
    }

    /// Runs the prompt on `llm` with default settings (see [`PromptCall::run`]).
    pub async fn invoke<L: Llm>(
        &self,
        llm: L,
        input: impl Into<Input>,
    ) -> Result<PromptOutput, PromptError> {
        self.call(llm).run(input).await
    }

    /// Runs the prompt on `llm` and deserializes the answer into `T` (see [`PromptCall::run_typed`]).
    pub async fn invoke_typed<T: DeserializeOwned, L: Llm>(
        &self,
        llm: L,
        input: impl Into<Input>,
    ) -> Result<T, PromptError> {
        self.call(llm).run_typed(input).await
    }
}

/// One invocation of a [`Prompt`], with its settings. The config's `max-tokens` and `temperature` are the
/// defaults; the methods here override them.
#[derive(Debug, Clone)]
#[must_use = "a prompt call does nothing until it is run"]
pub struct PromptCall<'p, L> {
    prompt: &'p Prompt,
    llm: L,
    max_attempts: Option<u32>,
    max_tokens: Option<u32>,
    temperature: Option<f32>,
    mode: Mode,
}

impl<'p, L: Llm> PromptCall<'p, L> {
    /// The most answers requested for a `json` or `jsonl` prompt (see [`Extractor::max_attempts`]).
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = Some(attempts);
        self
    }

    /// The most tokens one answer may have.
    pub fn max_tokens(mut self, tokens: u32) -> Self {
        self.max_tokens = Some(tokens);
        self
    }

    /// The sampling temperature.
    pub fn temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }

    /// Constrained (the default: the schema is sent to the backend) or prompted.
    pub fn mode(mut self, mode: Mode) -> Self {
        self.mode = mode;
        self
    }

    /// Runs the prompt: the raw answer for `text`, one validated value for `json` (an error if none
    /// validates after repairs), every valid line for `jsonl` (skipped lines are reported in the
    /// extraction; no line at all is a [warning](PromptOutput::warnings), not an error).
    pub async fn run(self, input: impl Into<Input>) -> Result<PromptOutput, PromptError> {
        let input = input.into();
        let examples = example_config::shown(self.prompt, &input)?;
        let media = input.media().to_vec();
        let rendered = self.prompt.render(input)?;
        let prompt = self.prompt;
        match (prompt.response_type, &prompt.schema) {
            (ResponseType::Json, Some(schema)) => examples
                .into_iter()
                .fold(self.extractor(), Extractor::with_example)
                .with_schema(schema)
                .extract(with_media(rendered, media))
                .await
                .map(PromptOutput::Json)
                .map_err(|source| prompt.extract_error(source)),
            (ResponseType::Jsonl, Some(schema)) => examples
                .into_iter()
                .fold(self.extractor(), Extractor::with_example)
                .with_schema(schema)
                .extract_all(with_media(rendered, media))
                .await
                .map(PromptOutput::Jsonl)
                .map_err(|source| prompt.extract_error(source)),
            _ => {
                let request = self.text_request(rendered, media);
                self.llm
                    .chat(request)
                    .await
                    .map(PromptOutput::Text)
                    .map_err(|source| PromptError::Llm {
                        id: prompt.id.clone(),
                        source,
                    })
            }
        }
    }

    /// Runs the prompt and deserializes the answer into `T`: a `json` value as it is, a `jsonl` answer as
    /// an array of its lines (e.g. into a `Vec`), a `text` answer as a JSON string.
    pub async fn run_typed<T: DeserializeOwned>(
        self,
        input: impl Into<Input>,
    ) -> Result<T, PromptError> {
        let id = self.prompt.id.clone();
        let value = self.run(input).await?.into_value();
        serde_json::from_value(value.clone()).map_err(|e| PromptError::Deserialize {
            id,
            message: e.to_string(),
            value,
        })
    }

    /// Streams a `text` prompt's answer as it is written. The stream's last event is
    /// [`ChatEvent::Done`](crate::llm::ChatEvent::Done) with the usage and finish.
    pub async fn text_stream(self, input: impl Into<Input>) -> Result<ChatStream, PromptError> {
        let prompt = self.prompt;
        if prompt.response_type != ResponseType::Text {
            return Err(PromptError::WrongType {
                id: prompt.id.clone(),
                actual: prompt.response_type,
                message:
                    "only a text prompt streams raw text; use run(), or items_stream() for jsonl"
                        .into(),
            });
        }
        let input = input.into();
        let media = input.media().to_vec();
        let rendered = prompt.render(input)?;
        let request = self.text_request(rendered, media);
        self.llm
            .chat_stream(request)
            .await
            .map_err(|source| PromptError::Llm {
                id: prompt.id.clone(),
                source,
            })
    }

    /// Streams a `jsonl` prompt's valid lines, each as soon as it is complete.
    pub fn items_stream(
        self,
        input: impl Into<Input>,
    ) -> Result<ExtractStream<'p, Value>, PromptError>
    where
        L: 'p,
    {
        let prompt = self.prompt;
        let schema = match (prompt.response_type, &prompt.schema) {
            (ResponseType::Jsonl, Some(schema)) => schema,
            _ => {
                return Err(PromptError::WrongType {
                    id: prompt.id.clone(),
                    actual: prompt.response_type,
                    message: "only a jsonl prompt streams items; use run() or text_stream()".into(),
                })
            }
        };
        let input = input.into();
        let examples = example_config::shown(prompt, &input)?;
        let media = input.media().to_vec();
        let rendered = prompt.render(input)?;
        let extractor = examples
            .into_iter()
            .fold(self.extractor(), Extractor::with_example);
        Ok(ExtractStream::start(move |mut sink, _spent| async move {
            let mut items = extractor
                .with_schema(schema)
                .extract_stream(with_media(rendered, media));
            while let Some(item) = items.next().await {
                sink(item?);
            }
            Ok(items.report().cloned().unwrap_or_default())
        }))
    }

    /// The extractor for `json` and `jsonl`: the template is already filled, so its own is the default
    /// `{{text}}`, which inserts the filled prompt as it is.
    fn extractor(self) -> Extractor<L> {
        let mut extractor = Extractor::new(self.llm).mode(self.mode);
        if let Some(system) = &self.prompt.system {
            extractor = extractor.instructions(system.clone());
        }
        if let Some(attempts) = self.max_attempts {
            extractor = extractor.max_attempts(attempts);
        }
        if let Some(tokens) = self.max_tokens {
            extractor = extractor.max_tokens(tokens);
        }
        if let Some(temperature) = self.temperature {
            extractor = extractor.temperature(temperature);
        }
        extractor
    }

    fn text_request(&self, rendered: String, media: Vec<Media>) -> ChatRequest {
        let mut request =
            ChatRequest::default().with_message(Message::user(rendered).with_media(media));
        if let Some(system) = &self.prompt.system {
            request = request.with_system(system.clone());
        }
        if let Some(tokens) = self.max_tokens {
            request = request.with_max_tokens(tokens);
        }
        // Greedy and seeded unless the config says otherwise, like every extraction.
        request
            .with_temperature(self.temperature.unwrap_or(0.0))
            .with_seed(0)
    }
}

impl Prompt {
    fn extract_error(&self, source: ExtractError) -> PromptError {
        match source.kind() {
            ExtractErrorKind::Template(template) => PromptError::Template {
                id: self.id.clone(),
                source: template.clone(),
            },
            _ => PromptError::Extract {
                id: self.id.clone(),
                source,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{from_fn, ChatEvent, ChatRequest};
    use futures_util::FutureExt;
    use serde_json::json;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};

    fn run<F: std::future::Future>(future: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(future)
    }

    fn config() -> PromptSet {
        PromptSet::from_json(json!({
            "summarize": {
                "prompt": "Summarize in {{language}}:\n{{text}}",
                "response-type": "text",
                "system": "You are terse."
            },
            "sentiment": {
                "prompt": "Sentiment of: {{text}}",
                "response-type": "json",
                "schema": {
                    "type": "object",
                    "properties": {"sentiment": {"enum": ["positive", "negative"]}, "score": {"type": "number"}},
                    "required": ["sentiment", "score"]
                }
            },
            "extract-definitions": {
                "prompt": ["List the terms defined in:", "{{text}}"],
                "response-type": "jsonl",
                "object-schema": "{term :string, definition :string}"
            }
        }))
        .unwrap()
    }

    /// A backend that records every request and answers from `answers` in turn.
    fn scripted(answers: &[&str]) -> (impl Llm, Arc<Mutex<Vec<ChatRequest>>>) {
        let answers: Vec<String> = answers.iter().map(|a| a.to_string()).collect();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let recorded = Arc::clone(&seen);
        let next = Arc::new(AtomicUsize::new(0));
        let llm = from_fn(move |request: ChatRequest| {
            recorded.lock().unwrap().push(request);
            let i = next.fetch_add(1, Ordering::SeqCst);
            let answer = answers
                .get(i)
                .or(answers.last())
                .cloned()
                .unwrap_or_default();
            async move { Ok(ChatResponse::new(answer).with_usage(7, 3)) }
        });
        (llm, seen)
    }

    #[test]
    fn text_prompts_return_the_raw_answer_and_stream_it() {
        let prompts = config();
        let prompt = prompts.get("summarize").unwrap();
        let (llm, seen) = scripted(&["A short summary, {not json}."]);
        let input = Input::text("Long text.").var("language", "French");
        let output = run(prompt.invoke(&llm, input.clone())).unwrap();
        let PromptOutput::Text(response) = &output else {
            panic!("{output:?}")
        };
        assert_eq!(response.text, "A short summary, {not json}.");
        let request = seen.lock().unwrap()[0].clone();
        assert_eq!(request.system.as_deref(), Some("You are terse."));
        assert_eq!(
            request.messages[0].content,
            "Summarize in French:\nLong text."
        );
        assert_eq!(request.schema, None);

        let streamed = run(async {
            let mut stream = prompt.call(&llm).text_stream(input).await.unwrap();
            let mut deltas = Vec::new();
            while let Some(event) = stream.next().await {
                match event.unwrap() {
                    ChatEvent::Delta(delta) => deltas.push(delta),
                    ChatEvent::Done(_) => break,
                    _ => {}
                }
            }
            deltas
        });
        assert!(streamed.len() > 1, "{streamed:?}");
        assert_eq!(streamed.concat(), "A short summary, {not json}.");
    }

    #[test]
    fn json_prompts_validate_and_repair() {
        let prompts = config();
        let prompt = prompts.get("sentiment").unwrap();
        let (llm, seen) = scripted(&[
            r#"{"sentiment": "happy", "score": 1}"#,
            r#"Sure: {"sentiment": "positive", "score": 0.75}"#,
        ]);
        let output = run(prompt.invoke(&llm, "Great film")).unwrap();
        assert_eq!(
            output.to_value(),
            json!({"sentiment": "positive", "score": 0.75})
        );
        let PromptOutput::Json(extraction) = &output else {
            panic!()
        };
        assert_eq!(extraction.report.attempts.len(), 2);
        assert!(output.warnings().is_empty());
        assert_eq!(
            seen.lock().unwrap()[0].messages[0].content,
            "Sentiment of: Great film"
        );

        #[derive(serde::Deserialize, Debug)]
        struct Sentiment {
            sentiment: String,
            score: f64,
        }
        let (llm, _) = scripted(&[r#"{"sentiment": "negative", "score": 0.1}"#]);
        let typed: Sentiment = run(prompt.invoke_typed(&llm, "Dull")).unwrap();
        assert_eq!((typed.sentiment.as_str(), typed.score), ("negative", 0.1));
    }

    #[test]
    fn json_prompts_fail_after_the_repairs_with_every_raw_answer() {
        let prompts = config();
        let prompt = prompts.get("sentiment").unwrap();
        let (llm, _) = scripted(&["I cannot say.", "Still no.", "No."]);
        let err = run(prompt.call(&llm).max_attempts(2).run("Meh")).unwrap_err();
        let PromptError::Extract { source, .. } = &err else {
            panic!("{err:?}")
        };
        assert!(matches!(source.kind(), ExtractErrorKind::Invalid(_)));
        let raws: Vec<&str> = source.attempts().iter().map(|a| a.raw.as_str()).collect();
        assert_eq!(raws, ["I cannot say.", "Still no."]);
    }

    #[test]
    fn jsonl_prompts_keep_valid_lines_and_report_skipped_ones() {
        let prompts = config();
        let prompt = prompts.get("extract-definitions").unwrap();
        let answer = "{\"term\": \"cat\", \"definition\": \"a small feline\"}\n{\"term\": \"fish\"}\n{\"term\": \"dog\", \"definition\": \"a canine\"}\n";
        let (llm, _) = scripted(&[answer, "{\"term\": \"fish\"}"]);
        let output = run(prompt
            .call(&llm)
            .mode(Mode::Prompted)
            .max_attempts(2)
            .run("..."))
        .unwrap();
        assert_eq!(
            output.to_value(),
            json!([
                {"term": "cat", "definition": "a small feline"},
                {"term": "dog", "definition": "a canine"}
            ])
        );
        let warnings = output.warnings();
        assert!(
            matches!(warnings.as_slice(), [PromptWarning::Skipped(s)] if s.len() == 1),
            "{warnings:?}"
        );
    }

    #[test]
    fn an_empty_jsonl_result_is_a_warning_not_an_error() {
        let prompts = config();
        let prompt = prompts.get("extract-definitions").unwrap();
        let (llm, _) = scripted(&[""]);
        let output = run(prompt
            .call(&llm)
            .mode(Mode::Prompted)
            .max_attempts(1)
            .run("nothing here"))
        .unwrap();
        assert_eq!(output.to_value(), json!([]));
        assert_eq!(output.warnings(), [PromptWarning::NoItems]);
    }

    #[test]
    fn jsonl_prompts_stream_items() {
        let prompts = config();
        let prompt = prompts.get("extract-definitions").unwrap();
        let (llm, _) = scripted(&[
            "{\"term\": \"a\", \"definition\": \"b\"}\n{\"term\": \"c\", \"definition\": \"d\"}\n",
        ]);
        let items = run(async {
            let mut stream = prompt
                .call(&llm)
                .mode(Mode::Prompted)
                .items_stream("x")
                .unwrap();
            let mut items = Vec::new();
            while let Some(item) = stream.next().await {
                items.push(item.unwrap()["term"].clone());
            }
            items
        });
        assert_eq!(items, [json!("a"), json!("c")]);
        assert!(matches!(
            prompt.call(&llm).text_stream("x").now_or_never(),
            Some(Err(PromptError::WrongType { .. }))
        ));
    }

    #[test]
    fn a_missing_variable_is_an_error_before_anything_is_sent() {
        let prompts = config();
        let (llm, seen) = scripted(&["unused"]);
        for id in ["summarize", "sentiment", "extract-definitions"] {
            let prompt = prompts.get(id).unwrap();
            let input = if id == "summarize" {
                Input::text("t")
            } else {
                Input::context(&json!({"txt": "t"}))
            };
            let err = run(prompt.invoke(&llm, input)).unwrap_err();
            let PromptError::Template {
                source: TemplateError::MissingVariable { name, .. },
                ..
            } = &err
            else {
                panic!("{id}: {err:?}")
            };
            assert_eq!(
                name,
                if id == "summarize" {
                    "language"
                } else {
                    "text"
                }
            );
            assert!(err.to_string().contains(&format!("prompt `{id}`")), "{err}");
        }
        assert!(seen.lock().unwrap().is_empty());
    }

    #[test]
    fn configs_with_mistakes_are_rejected_with_the_prompt_named() {
        let cases = [
            (
                json!({"a": {"response-type": "text"}}),
                "missing \"prompt\"",
            ),
            (
                json!({"a": {"prompt": "x", "respons-type": "json"}}),
                "unknown field `respons-type`",
            ),
            (
                json!({"a": {"prompt": "x", "response-type": "yaml"}}),
                "\"response-type\": unknown variant `yaml`, expected one of `text`, `json`, `jsonl`",
            ),
            (
                json!({"a": {"prompt": "x", "response-type": "json"}}),
                "needs a \"schema\"",
            ),
            (
                json!({"a": {"prompt": "x", "response-type": "text", "schema": {"type": "string"}}}),
                "takes no \"schema\"",
            ),
            (
                json!({"a": {"prompt": "x", "schema": {"allOf": []}}}),
                "invalid JSON Schema at /allOf",
            ),
            (
                json!({"a": {"prompt": "x", "schema": "{a :nope}"}}),
                "column",
            ),
            (json!([{"prompt": "x"}]), "no string \"id\""),
            (
                json!([{"id": "a", "prompt": "x"}, {"id": "a", "prompt": "y"}]),
                "defined twice",
            ),
            (json!("prompts"), "expected an object"),
            (
                json!({"a": {"prompt": 3}}),
                "prompt `a`: \"prompt\": a string or an array of lines",
            ),
            (
                json!({"a": {"prompt": "x", "max-tokens": -1}}),
                "\"max-tokens\": invalid value: integer `-1`, expected u32",
            ),
            (
                json!({"a": {"id": "b", "prompt": "x"}}),
                "keyed \"a\"",
            ),
            (
                json!({"a": {"prompt": "{{text}}", "schema": "{a :int}",
                             "examples": [{"text": "t", "vaule": {"a": 1}}]}}),
                "\"examples[0].vaule\": unknown field `vaule`, expected one of `text`, `value`, `items`",
            ),
            (json!({"a": "x"}), "expected an object with at least \"prompt\""),
        ];
        for (config, expected) in cases {
            let err = PromptSet::from_json(config.clone())
                .unwrap_err()
                .to_string();
            assert!(err.contains(expected), "{config}: {err}");
        }
    }

    #[test]
    fn arrays_snake_case_keys_and_defaults_are_accepted() {
        let prompts = PromptSet::from_json(json!([
            {"id": "one", "prompt": "{{text}}", "schema": "{a :int}"},
            {"id": "many", "prompt": "{{text}}", "object_schema": {"type": "object", "properties": {"a": {"type": "integer"}}}},
            {"id": "free", "prompt": "{{text}}", "max_tokens": 12}
        ]))
        .unwrap();
        let types: Vec<ResponseType> = prompts.iter().map(Prompt::response_type).collect();
        assert_eq!(
            types,
            [ResponseType::Json, ResponseType::Jsonl, ResponseType::Text]
        );
        assert_eq!(prompts.ids().collect::<Vec<_>>(), ["one", "many", "free"]);
        assert!(prompts.get("nope").is_none());
    }

    #[test]
    fn templates_fill_with_the_extraction_loop_rules() {
        let vars = json!({"text": "Ada", "n": 3, "meta": {"lang": "en"}});
        let vars = vars.as_object().unwrap();
        assert_eq!(
            crate::extract::render("Hi {{text}}, {{ n }} in {{meta.lang}}", vars).unwrap(),
            "Hi Ada, 3 in en"
        );
        assert_eq!(
            crate::extract::render(r#"{{"x": 1}} {{text}} {{"#, vars).unwrap(),
            r#"{{"x": 1}} Ada {{"#
        );
        assert_eq!(crate::extract::render("{{text}}}}", vars).unwrap(), "Ada}}");
    }
}
