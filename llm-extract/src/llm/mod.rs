//! The [`Llm`] trait every backend implements, and its request and response types.
//!
//! The trait is deliberately small (like tower's `Service`): a [`ChatRequest`] in, a [`ChatResponse`]
//! or a [`ChatStream`] of [`ChatEvent`]s out. It is object-safe, so backends can be boxed
//! (`Arc<dyn Llm>`) and shared across tasks.
//!
//! What lives here, one file per job:
//! - the request and answer: this file's types, `accumulate.rs` (one streamed answer merged event by
//!   event), `media.rs` (images and PDFs, with each backend's limits), `error.rs`;
//! - the HTTP backends: `backend.rs` (the one HTTP backend, generic over a provider's wire format),
//!   `http.rs` (the transport: client, sending, error statuses, streamed bodies), `retry_policy.rs`,
//!   `credentials.rs` and `env.rs` (which key goes where, kept out of every text), `exchange.rs` (the
//!   exchange hook), `description.rs` (who a backend is), `custom.rs` (a wire format of the caller's);
//! - each provider's wire format: `openai.rs`, `anthropic.rs`, `gemini.rs` (with `gemini_files.rs`
//!   and `gemini_openapi.rs`), `ollama.rs` (with `ollama_host.rs`); `batch_wire.rs`, what a provider's
//!   batch API needs of them; `prompt_cache.rs`, a prompt's cached prefix;
//! - other backends: `from_fn.rs` (a closure), `llama_cpp/` (the embedded engine, feature
//!   `llama-cpp`), and scoring instead of sampling (`likelihood.rs`);
//! - `layer/`: the layers over any backend (retry, fallback, rate limit, cache, media conversion);
//!   `verdict.rs`: the extraction's verdict on an answer, which a caching layer waits for.
//!
//! Next in the flow: [`parse`](crate::parse) reads what the model wrote.

use crate::schema::Dialect;
use futures_core::Stream;
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

mod accumulate;
mod anthropic;
mod backend;
mod batch_wire;
mod credentials;
mod custom;
mod description;
mod env;
mod error;
mod exchange;
mod from_fn;
mod gemini;
mod gemini_files;
mod gemini_openapi;
mod http;
mod layer;
mod likelihood;
mod media;
mod ollama;
mod ollama_host;
mod openai;
mod prompt_cache;
mod retry_policy;
mod verdict;

pub use anthropic::{Anthropic, AnthropicBuilder, AnthropicOutput};
pub(crate) use backend::join_url;
pub use backend::{Answer, Framing, Protocol, Site, StreamReader};
pub use credentials::OfficialApi;
pub use credentials::{redact_url, Secret};
pub use custom::{HttpBackend, HttpBuilder};
pub(crate) use description::{answered, noting_who_answers, take_answered};
pub use description::{CredentialDigest, Description};
pub use error::{LlmError, MediaError, Status, TimeoutPhase};
pub use exchange::{Exchange, ExchangeHook};
pub use from_fn::{from_fn, from_stream_fn, FnLlm, StreamFnLlm};
pub use gemini::{Gemini, GeminiBuilder};
#[cfg(feature = "pdf")]
pub use layer::ConvertMedia;
pub use layer::{
    Cache, CacheError, ErrorClass, ErrorClasses, Fallback, LlmExt, RateLimit, ResponseStore, Retry,
};
pub use likelihood::Likelihood;
pub use media::{Media, MediaLimits, MediaSource, MediaSupport, MediaType};
pub use ollama::{ModelInfo, Ollama, OllamaBuilder, Think};
pub use openai::{OpenAiBuilder, OpenAiCompatible};
pub use prompt_cache::{CacheTtl, PromptCache};
pub use retry_policy::RetryPolicy;

pub(crate) use accumulate::{Accumulator, Merged};
pub(crate) use batch_wire::BatchWire;
pub(crate) use http::excerpt as http_excerpt;
pub(crate) use verdict::{accept as accept_answer, discard as discard_answer};

#[cfg(feature = "llama-cpp")]
pub mod llama_cpp;

/// A boxed, sendable future, as returned by [`Llm`] methods.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A stream of text deltas ending in one [`ChatEvent::Done`]; an error, if any, is always the last item.
/// A [`ChatEvent::Restart`] voids every event before it: the answer starts over.
pub type ChatStream = Pin<Box<dyn Stream<Item = Result<ChatEvent, LlmError>> + Send>>;

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions.
    System,
    /// The caller.
    User,
    /// The model.
    Assistant,
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Message {
    /// Who said it.
    pub role: Role,
    /// What was said.
    pub content: String,
    /// Images and PDF documents sent with the text (user messages only), before it in the wire forms
    /// (the providers advise the image first). A backend that cannot take one refuses the request
    /// with [`LlmError::Media`] before sending it. Never serialized: a message written out (a log, a
    /// record) keeps its text, not its files.
    #[serde(skip)]
    pub media: Vec<Media>,
}

impl Message {
    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Message {
            role: Role::System,
            content: content.into(),
            media: Vec::new(),
        }
    }
    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Message {
            role: Role::User,
            content: content.into(),
            media: Vec::new(),
        }
    }
    /// Adds `media` to the message (see [`Message::media`]).
    ///
    /// ```
    /// use llm_extract::llm::{Media, Message};
    ///
    /// let message = Message::user("What is the total?").with_media([Media::png(vec![0x89])]);
    /// assert_eq!(message.media.len(), 1);
    /// ```
    pub fn with_media(mut self, media: impl IntoIterator<Item = Media>) -> Self {
        self.media.extend(media);
        self
    }
    /// An assistant message.
    pub fn assistant(content: impl Into<String>) -> Self {
        Message {
            role: Role::Assistant,
            content: content.into(),
            media: Vec::new(),
        }
    }
}

/// A chat request, backend-neutral.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ChatRequest {
    /// The system prompt, if any (sent as the first message).
    pub system: Option<String>,
    /// The conversation.
    pub messages: Vec<Message>,
    /// A schema already rendered for the backend's [`Llm::dialect`]; `None` for free text.
    pub schema: Option<Value>,
    /// A name for the schema (OpenAI's `json_schema.name`).
    pub schema_name: Option<String>,
    /// `schema` is in its dialect's non-strict form (see
    /// [`Lowering::strict`](crate::schema::dialect::Lowering::strict)): a backend with a strict mode sends
    /// it without one. Default `false`.
    pub schema_relaxed: bool,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// The maximum number of tokens to generate.
    pub max_tokens: Option<u32>,
    /// A sampling seed, for reproducible answers where the backend supports it.
    pub seed: Option<u64>,
    /// A repeat penalty (1.0 is none; above 1 makes tokens generated recently less likely), mapped to
    /// what the backend has: Ollama's `repeat_penalty`, the OpenAI-compatible `frequency_penalty` (the
    /// factor minus one; llama-server's own `repeat_penalty` too with
    /// [`OpenAiBuilder::repeat_penalty`](crate::llm::OpenAiBuilder::repeat_penalty)), the embedded engine's
    /// sampler.
    pub repeat_penalty: Option<f32>,
    /// Strings that end generation.
    pub stop: Vec<String>,
    /// The answer is JSON Lines: `schema` describes one line, and the answer is one compact value per line.
    /// Only a backend that can constrain line by line (the embedded llama.cpp engine) enforces it; a server
    /// that takes one schema for the whole answer cannot, so do not send it a line schema. Default `false`.
    pub json_lines: bool,
    /// Send `schema` as one tool the model must call, the call's arguments being the answer, instead of
    /// as the backend's output format. The OpenAI-compatible and Anthropic backends honour it; the others
    /// send the schema their usual way. Default `false`.
    pub tool_call: bool,
    /// The source text of a grounded extraction. When `schema` carries grounding marks (`"x-grounded":
    /// true`, rendered by [`crate::schema::SchemaSet::for_dialect_grounded`]),
    /// a backend that [constrains grounding](Llm::constrains_grounding) decodes each marked string as a
    /// verbatim span of this text. The others ignore it (their values are grounded after parsing).
    pub grounding: Option<Arc<str>>,
    /// Ask for the log-probability of each answer token ([`ChatResponse::logprobs`]): the embedded
    /// engine computes them from its scores, the OpenAI-compatible backend sends `"logprobs": true`,
    /// Gemini `responseLogprobs`. Anthropic and Ollama have none to give and ignore it. Default `false`.
    pub logprobs: bool,
    /// How many of the first `messages` are the same in every request of a run (the worked examples
    /// before the input): with the system prompt, the prefix a provider's prompt cache can keep (see
    /// [`AnthropicBuilder::prompt_cache`]). The extraction sets it; 0 (the default) counts the system
    /// prompt alone.
    pub stable_messages: usize,
    /// How many bytes at the start of the input's message (the first after the
    /// [`stable_messages`](Self::stable_messages)) are the same in every request of a run: the prompt
    /// template's text before its `{{text}}` placeholder, such as a long context every chunk of a
    /// document is sent with. A provider's prompt cache can keep them with the prefix before them (see
    /// [`PromptCache::context`]). The extraction sets it; 0 (the default) when there are none.
    pub stable_input: usize,
}

impl ChatRequest {
    /// A request with one user message.
    pub fn new(user: impl Into<String>) -> Self {
        ChatRequest {
            messages: vec![Message::user(user)],
            ..Default::default()
        }
    }
    /// Sets the system prompt.
    pub fn with_system(mut self, system: impl Into<String>) -> Self {
        self.system = Some(system.into());
        self
    }
    /// Sets the schema (already rendered for the backend's dialect) and its name.
    pub fn with_schema(mut self, name: impl Into<String>, schema: Value) -> Self {
        self.schema_name = Some(name.into());
        self.schema = Some(schema);
        self
    }
    /// Sets the maximum number of tokens.
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }
    /// Sets the temperature.
    pub fn with_temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }
    /// Sets the seed.
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }
    /// Sets the repeat penalty (see [`ChatRequest::repeat_penalty`]).
    pub fn with_repeat_penalty(mut self, penalty: f32) -> Self {
        self.repeat_penalty = Some(penalty);
        self
    }
    /// Asks for JSON Lines: `schema` (if any) then describes one line. See [`ChatRequest::json_lines`].
    pub fn with_json_lines(mut self, json_lines: bool) -> Self {
        self.json_lines = json_lines;
        self
    }
    /// Sends the schema as a forced tool call (see [`ChatRequest::tool_call`]).
    pub fn with_tool_call(mut self, tool_call: bool) -> Self {
        self.tool_call = tool_call;
        self
    }
    /// The system prompt (if any) then the conversation, as the `{role, content}` objects of the
    /// OpenAI-compatible and Ollama wire formats (Anthropic and Gemini take the system prompt apart);
    /// `attach` writes the media of a message that has some into its object, in the backend's form.
    pub(crate) fn wire_messages(
        &self,
        attach: impl Fn(&Message, &mut serde_json::Map<String, Value>),
    ) -> Vec<Value> {
        let system = self
            .system
            .iter()
            .map(|system| serde_json::json!({"role": "system", "content": system}));
        let conversation = self.messages.iter().map(|m| {
            let mut object = serde_json::Map::new();
            object.insert("role".into(), serde_json::json!(m.role));
            object.insert("content".into(), Value::String(m.content.clone()));
            if !m.media.is_empty() {
                attach(m, &mut object);
            }
            Value::Object(object)
        });
        system.chain(conversation).collect()
    }

    /// Whether any message carries media.
    pub fn has_media(&self) -> bool {
        self.messages.iter().any(|m| !m.media.is_empty())
    }

    /// Asks for token log-probabilities (see [`ChatRequest::logprobs`]).
    pub fn with_logprobs(mut self, logprobs: bool) -> Self {
        self.logprobs = logprobs;
        self
    }

    /// Appends a message.
    pub fn with_message(mut self, message: Message) -> Self {
        self.messages.push(message);
        self
    }
}

/// Token counts.
///
/// Servers send their counts only at the end of an answer. When the extraction stops a stream early (a
/// loop, `max_items`, a broken stream, a dropped stream) or a server sends no counts, the figure is
/// estimated instead and `estimated` is set: one completion token per streamed text event (servers
/// stream one event per generated token: Ollama one NDJSON line, OpenAI-compatible servers one SSE
/// chunk, the embedded engine one piece) and a prompt of one token per four bytes of its text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Usage {
    /// Tokens in the prompt.
    pub prompt_tokens: u64,
    /// Tokens generated.
    pub completion_tokens: u64,
    /// Whether any part of these counts is an estimate rather than the backend's own count.
    #[serde(default)]
    pub estimated: bool,
    /// Of `prompt_tokens`, those read from the provider's prompt cache (Anthropic's
    /// `cache_read_input_tokens`, OpenAI's `prompt_tokens_details.cached_tokens`, llama-server's
    /// `timings.cache_n`, Gemini's `cachedContentTokenCount`); 0 where a backend does not say (Ollama
    /// reports no count of the prompt tokens it reused).
    #[serde(default)]
    pub cache_read_tokens: u64,
    /// Of `prompt_tokens`, those written to the provider's prompt cache (Anthropic's
    /// `cache_creation_input_tokens`); 0 where a backend does not say.
    #[serde(default)]
    pub cache_write_tokens: u64,
    /// Of `completion_tokens`, those spent on reasoning the answer does not show (Gemini's
    /// `thoughtsTokenCount`); 0 where a backend does not say.
    #[serde(default)]
    pub thinking_tokens: u64,
}

impl Usage {
    /// Prompt plus completion tokens.
    pub fn total(&self) -> u64 {
        self.prompt_tokens.saturating_add(self.completion_tokens)
    }
}

impl std::ops::Add for Usage {
    type Output = Usage;
    fn add(self, rhs: Usage) -> Usage {
        Usage {
            prompt_tokens: self.prompt_tokens.saturating_add(rhs.prompt_tokens),
            completion_tokens: self.completion_tokens.saturating_add(rhs.completion_tokens),
            estimated: self.estimated || rhs.estimated,
            cache_read_tokens: self.cache_read_tokens.saturating_add(rhs.cache_read_tokens),
            cache_write_tokens: self
                .cache_write_tokens
                .saturating_add(rhs.cache_write_tokens),
            thinking_tokens: self.thinking_tokens.saturating_add(rhs.thinking_tokens),
        }
    }
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, rhs: Usage) {
        *self = *self + rhs;
    }
}

/// Why generation ended.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Finish {
    /// The model ended its answer (end of sequence or a stop string).
    #[default]
    Stop,
    /// The token limit or the context was reached: the answer is truncated.
    Length,
    /// We stopped it: the model was looping (one character, a phrase or items repeating); the attempt's
    /// [`Attempt::looped`](crate::report::Attempt::looped) says what and where.
    Loop,
    /// We stopped it: the requested maximum number of items was reached.
    MaxItems,
    /// Anything else the backend reported.
    Other(String),
}

/// A complete answer.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct ChatResponse {
    /// The answer's text (the content channel only).
    pub text: String,
    /// Reasoning text a thinking model produced apart from its content, if any.
    pub thinking: Option<String>,
    /// Token counts.
    pub usage: Usage,
    /// Why generation ended.
    pub finish: Finish,
    /// The model that answered, as the backend names it.
    pub model: Option<String>,
    /// Each answer token with its log-probability, in order, when the request asked for them
    /// ([`ChatRequest::logprobs`]) and the backend gives them; `None` otherwise. Their bytes, joined,
    /// are the answer's text (up to a stop string the backend cut).
    pub logprobs: Option<Vec<TokenLogprob>>,
    /// The answer came from a response [`Cache`], not from the model: nothing was spent on it (its
    /// `usage` is zero).
    pub cached: bool,
}

/// One generated token and how likely the model found it.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct TokenLogprob {
    /// The token's bytes: a token may hold part of a UTF-8 character, so the answer's byte offsets are
    /// rebuilt by joining bytes, not strings.
    pub bytes: Vec<u8>,
    /// The natural log of the token's probability among the tokens the model could choose: on the
    /// embedded engine the tokens the grammar allowed at that step (a token the grammar forced has 0);
    /// on a server, what it reports.
    pub logprob: f32,
    /// The natural log of the token's probability over the model's whole vocabulary, before the
    /// grammar's mask (the embedded engine only; `None` for a forced token, which the model was not
    /// asked about, and on servers).
    pub vocabulary_logprob: Option<f32>,
}

impl TokenLogprob {
    /// A token of `bytes` with log-probability `logprob`.
    pub fn new(bytes: impl Into<Vec<u8>>, logprob: f32) -> Self {
        TokenLogprob {
            bytes: bytes.into(),
            logprob,
            vocabulary_logprob: None,
        }
    }

    /// Sets the log-probability over the whole vocabulary (see [`TokenLogprob::vocabulary_logprob`]).
    pub fn with_vocabulary_logprob(mut self, logprob: f32) -> Self {
        self.vocabulary_logprob = Some(logprob);
        self
    }

    /// The token's text (a partial UTF-8 character shows as U+FFFD).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }
}

impl ChatResponse {
    /// A response with `text`, a stop finish and zero usage.
    pub fn new(text: impl Into<String>) -> Self {
        ChatResponse {
            text: text.into(),
            ..Default::default()
        }
    }
    /// Sets the finish.
    pub fn with_finish(mut self, finish: Finish) -> Self {
        self.finish = finish;
        self
    }
    /// Sets the usage.
    pub fn with_usage(mut self, prompt_tokens: u64, completion_tokens: u64) -> Self {
        self.usage = Usage {
            prompt_tokens,
            completion_tokens,
            estimated: false,
            ..Usage::default()
        };
        self
    }
    /// Sets the token log-probabilities.
    pub fn with_logprobs(mut self, logprobs: Vec<TokenLogprob>) -> Self {
        self.logprobs = Some(logprobs);
        self
    }
    /// Sets the model name.
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }
}

/// One event of a streamed answer.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ChatEvent {
    /// More answer text.
    Delta(String),
    /// More reasoning text (kept apart from the answer).
    Thinking(String),
    /// The end: the summary, with `text` holding the whole answer (and, when asked for, the log-probability
    /// of every token of it, [`ChatResponse::logprobs`]: a backend that streams collects them itself).
    Done(ChatResponse),
    /// The stream broke before its end (the connection closed or went silent, or the server sent
    /// something other than the stream asked for) and the backend sent the request again under its
    /// [`RetryPolicy`]: every event before this one is void, and the answer starts over from nothing.
    Restart {
        /// Why the answer so far was dropped.
        error: LlmError,
        /// What the dropped answer cost, as far as the server said before it broke (servers mostly send
        /// their counts at the end, so this is often zero: a caller estimates from what it received).
        usage: Usage,
    },
}

/// Restarts are equal when they cost the same and their errors say the same ([`LlmError`] has no
/// equality of its own).
impl PartialEq for ChatEvent {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (ChatEvent::Delta(a), ChatEvent::Delta(b)) => a == b,
            (ChatEvent::Thinking(a), ChatEvent::Thinking(b)) => a == b,
            (ChatEvent::Done(a), ChatEvent::Done(b)) => a == b,
            (
                ChatEvent::Restart { error, usage },
                ChatEvent::Restart {
                    error: other_error,
                    usage: other_usage,
                },
            ) => usage == other_usage && error.to_string() == other_error.to_string(),
            _ => false,
        }
    }
}

/// A chat model: a request in, a response or a stream out.
pub trait Llm: Send + Sync {
    /// The schema dialect this backend's server enforces.
    fn dialect(&self) -> Dialect;

    /// Sends `request` and returns the whole answer.
    ///
    /// The default implementation collects [`Llm::chat_stream`].
    fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, LlmError>> {
        Box::pin(async move { accumulate::collect(self.chat_stream(request).await?).await })
    }

    /// Sends `request` and streams the answer.
    fn chat_stream(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatStream, LlmError>>;

    /// Whether this backend constrains a JSON Lines answer line by line (see [`ChatRequest::json_lines`]).
    ///
    /// A server takes one schema for the whole answer, so the default is `false`, and `extract_all` in
    /// constrained mode then sends the list schema (`{"items": [...]}`) instead.
    fn constrains_json_lines(&self) -> bool {
        false
    }

    /// Whether this backend decodes the strings a schema marks grounded as verbatim spans of
    /// [`ChatRequest::grounding`] (the embedded llama.cpp engine, through its grammar). A server cannot:
    /// the default is `false`, and grounded values are then looked up in the source after parsing.
    fn constrains_grounding(&self) -> bool {
        false
    }

    /// How many tokens `text` is for this backend's model, when the backend can count them with the
    /// model's own tokenizer (the embedded engine); `None` otherwise (servers do not say before a
    /// request), and callers fall back to a character budget.
    fn count_tokens(&self, text: &str) -> Option<usize> {
        let _ = text;
        None
    }

    /// Who this backend is (its provider, address and model), for telemetry and logs; `None` (the
    /// default) when it does not say. Never a key: an address comes with its credentials redacted.
    fn describe(&self) -> Option<Description> {
        None
    }

    /// Whether this backend can take `request` as it is, checked before anything is sent: the error
    /// it would refuse it with ([`LlmError::Media`] for an image or PDF of a form it does not take or
    /// over its limits), or `Ok`. A [`Fallback`] asks only the backends that can. The default takes
    /// every request; the HTTP backends and the embedded engine check the media.
    fn accepts(&self, request: &ChatRequest) -> Result<(), LlmError> {
        let _ = request;
        Ok(())
    }

    /// Whether this backend gives token log-probabilities when a request asks for them
    /// ([`ChatRequest::logprobs`]). `true` by default; `false` for the backends known to give none
    /// (Anthropic, Ollama), which a [`Fallback`] passes over for a request that asks for them while
    /// one of its backends gives them.
    fn gives_logprobs(&self) -> bool {
        true
    }

    /// The same model as a [`Likelihood`], when this backend can score given continuations instead of
    /// sampling (the embedded llama.cpp engine); `None` (the default) otherwise. The per-field strategy
    /// ([`Strategy::PerField`](crate::extract::Strategy::PerField)) chooses enums and booleans by it.
    fn likelihood(&self) -> Option<&dyn Likelihood> {
        None
    }
}

/// Pointers to a backend are backends: `Arc<dyn Llm>`, `&L` and `Box<dyn Llm>` forward every method.
macro_rules! forward_llm {
    ($($pointer:ty),*) => {$(
        impl<L: Llm + ?Sized> Llm for $pointer {
            fn dialect(&self) -> Dialect {
                (**self).dialect()
            }
            fn constrains_json_lines(&self) -> bool {
                (**self).constrains_json_lines()
            }
            fn constrains_grounding(&self) -> bool {
                (**self).constrains_grounding()
            }
            fn count_tokens(&self, text: &str) -> Option<usize> {
                (**self).count_tokens(text)
            }
            fn describe(&self) -> Option<Description> {
                (**self).describe()
            }
            fn accepts(&self, request: &ChatRequest) -> Result<(), LlmError> {
                (**self).accepts(request)
            }
            fn gives_logprobs(&self) -> bool {
                (**self).gives_logprobs()
            }
            fn likelihood(&self) -> Option<&dyn Likelihood> {
                (**self).likelihood()
            }
            fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, LlmError>> {
                (**self).chat(request)
            }
            fn chat_stream(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatStream, LlmError>> {
                (**self).chat_stream(request)
            }
        }
    )*};
}

forward_llm!(std::sync::Arc<L>, &L, Box<L>);

impl std::fmt::Display for Finish {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Finish::Stop => f.write_str("stop"),
            Finish::Length => f.write_str("length"),
            Finish::Loop => f.write_str("loop"),
            Finish::MaxItems => f.write_str("max items"),
            Finish::Other(reason) => f.write_str(reason),
        }
    }
}
