//! The embedded llama.cpp engine (cargo feature `llama-cpp`): a GGUF model run in process, behind the
//! same [`Llm`] trait as the HTTP backends, with grammar-constrained decoding.
//!
//! ```no_run
//! # async fn demo() -> Result<(), llm_extract::llm::LlmError> {
//! use llm_extract::llm::llama_cpp::LlamaCpp;
//! use llm_extract::{ChatRequest, Llm};
//!
//! // `LLM_EXTRACT_MODEL`, or the default model that `scripts/fetch-model.sh` caches.
//! let llm = LlamaCpp::from_env()?;
//! let schema = serde_json::json!({
//!     "type": "object",
//!     "properties": { "person": { "type": "string" } },
//!     "required": ["person"],
//!     "additionalProperties": false
//! });
//! let answer = llm
//!     .chat(ChatRequest::new("Who wrote this? -- Ada").with_schema("Author", schema).with_max_tokens(64))
//!     .await?;
//! println!("{}", answer.text);
//! # Ok(())
//! # }
//! ```
//!
//! How it works:
//! - **The model** is loaded once ([`LlamaCpp`] is an `Arc` inside: clone it freely). The llama.cpp
//!   backend is initialised once per process.
//! - **The prompt** goes through the model's own chat template (ChatML when the model has none, or one
//!   llama.cpp cannot apply). A last assistant message is a prefill: the answer continues it.
//! - **The schema** of a request is in the Ollama dialect, so it is first checked by llama.cpp's
//!   JSON-Schema-to-grammar converter (the one Ollama enforces): a schema Ollama would reject is rejected
//!   here too ([`schema_to_grammar`]). Decoding is then constrained by llguidance, which computes each
//!   token's mask lazily; the tokens the grammar forces (keys, quotes, separators) are decoded together in
//!   one batch instead of being sampled one by one, so a constrained answer comes out faster than free
//!   text (`benches/constrained.rs` measures it). [`GrammarEngine::Gbnf`] selects llama.cpp's own grammar
//!   sampler instead: exactly what Ollama runs, and slower. With [`ChatRequest::json_lines`] the grammar
//!   is one value per line.
//! - **Sampling**: greedy unless the request sets a temperature above 0; then top-k 40, top-p 0.95,
//!   min-p 0.05 and the temperature, seeded by [`ChatRequest::seed`] (llama.cpp's defaults).
//! - **Generation** runs on a blocking thread and streams UTF-8-safe text deltas through a channel;
//!   dropping the stream stops generation at the next token. It uses about one thread per physical core
//!   ([`LlamaCppBuilder::threads`]).
//! - **Concurrency**: each request gets its own llama.cpp context (its own KV cache, sized to the
//!   request), and requests wait their turn in a first-come, first-served queue. By default every model
//!   of the process shares one queue with one slot: a generation already keeps all cores busy, and two at
//!   once on the same cores would only slow both. [`LlamaCppBuilder::parallel`] gives a model its own queue
//!   with more slots (for many cores or a GPU). A generation never waits for its reader (deltas are
//!   buffered), so a slow or absent reader cannot hold the queue.

use super::{
    BoxFuture, ChatEvent, ChatRequest, ChatResponse, ChatStream, Finish, Llm, LlmError, Role, Usage,
};
use crate::schema::Dialect;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::vocab::VocabType;
use llguidance::api::TopLevelGrammar;
use llguidance::toktrie::{TokEnv, TokTrie, TokenizerEnv};
use llguidance::{Matcher, ParserFactory};
use serde_json::{json, Value};
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The environment variable naming a GGUF model file to use instead of the default model.
pub const MODEL_ENV: &str = "LLM_EXTRACT_MODEL";

/// The file name of the default model (SmolLM2-135M-Instruct, Q4_1) in the model cache.
pub const DEFAULT_MODEL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";

/// What to run to put the default model in the cache.
const FETCH_HINT: &str =
    "run scripts/fetch-model.sh (it downloads the default model, SmolLM2-135M-Instruct, 98 MB, \
     into the cache) or set LLM_EXTRACT_MODEL to any GGUF file";

/// The embedded engine failed. Every variant says what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LlamaCppError {
    /// There is no model file where one was expected.
    #[error("no model file at {}: {hint}", path.display())]
    ModelNotFound {
        /// Where the model was looked for.
        path: PathBuf,
        /// How to get one.
        hint: String,
    },
    /// The file exists but llama.cpp cannot load it (not a GGUF file, truncated, or an unsupported model).
    #[error("cannot load the model {}: {message}", path.display())]
    ModelLoad {
        /// The model file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// llama.cpp's JSON-Schema-to-grammar converter (the one Ollama enforces) rejected the schema.
    #[error(
        "llama.cpp's JSON-Schema-to-grammar converter (what Ollama enforces) rejected the schema: {message}. \
         Render the schema for the Ollama dialect (SchemaSet::for_dialect(Dialect::Ollama, ..)) and keep to its \
         subset (no `{{}}` any-value, anchored patterns). Schema: {schema}"
    )]
    SchemaRejected {
        /// What the converter said.
        message: String,
        /// The rejected schema, as JSON.
        schema: String,
    },
    /// A grammar could not be built from a schema the converter accepted.
    #[error("cannot build the decoding grammar: {message}")]
    Grammar {
        /// What went wrong.
        message: String,
    },
    /// The prompt does not fit in the context.
    #[error(
        "the prompt is {prompt_tokens} tokens but the context holds {context_size}: shorten the input or raise \
         LlamaCppBuilder::context_size (the model was trained on {trained} tokens)"
    )]
    ContextOverflow {
        /// Tokens in the prompt.
        prompt_tokens: usize,
        /// Tokens the context holds.
        context_size: u32,
        /// The model's training context.
        trained: u32,
    },
    /// The request cannot be run (for example a message holds a NUL byte).
    #[error("invalid request for the embedded engine: {message}")]
    InvalidRequest {
        /// What is wrong.
        message: String,
    },
    /// llama.cpp failed while generating; `partial` holds the text generated before.
    #[error("llama.cpp failed: {message}")]
    Engine {
        /// What went wrong.
        message: String,
        /// The text generated before the failure.
        partial: String,
    },
}

impl LlamaCppError {
    fn engine(message: impl std::fmt::Display) -> Self {
        LlamaCppError::Engine {
            message: message.to_string(),
            partial: String::new(),
        }
    }
}

/// Converts a JSON Schema to a llama.cpp GBNF grammar with llama.cpp's own converter, the one Ollama and
/// llama-server enforce. A schema this accepts is one Ollama accepts.
///
/// # Errors
/// [`LlamaCppError::SchemaRejected`] when the converter rejects the schema (llama.cpp does not say why;
/// the usual causes are a subschema with no constraining keyword, such as `true` or `{"title": ..}`, and an
/// unanchored `pattern`).
pub fn schema_to_grammar(schema: &Value) -> Result<String, LlamaCppError> {
    let text = schema.to_string();
    llama_cpp_2::json_schema_to_grammar(&text).map_err(|e| LlamaCppError::SchemaRejected {
        message: e.to_string(),
        schema: text,
    })
}

/// The GBNF grammar of a JSON Lines answer: one or more values of `line_grammar`'s root, each on its own
/// line. Whitespace inside a value is limited to spaces, so a value cannot spill over lines.
fn json_lines_gbnf(line_grammar: &str) -> String {
    let mut out = String::from("root ::= (jsonl-line \"\\n\")+\n");
    for rule in line_grammar.lines() {
        if let Some(body) = rule.strip_prefix("root ::=") {
            out.push_str("jsonl-line ::=");
            out.push_str(body);
        } else if rule.starts_with("space ::=") {
            out.push_str("space ::= | \" \"");
        } else {
            out.push_str(rule);
        }
        out.push('\n');
    }
    out
}

/// llguidance's JSON compile options: values written the way `json.dumps` writes them, on one line, with
/// `oneOf` read as `anyOf` (the tag of each variant keeps them apart) and unknown keywords ignored (the
/// llama.cpp converter already vetted the schema, and every value is validated after parsing anyway).
fn with_guidance_options(schema: &Value) -> Value {
    let mut schema = schema.clone();
    if let Value::Object(map) = &mut schema {
        map.insert(
            "x-guidance".into(),
            json!({
                "whitespace_flexible": false,
                "item_separator": ", ",
                "key_separator": ": ",
                "coerce_one_of": true,
                "lenient": true
            }),
        );
    }
    schema
}

/// The llguidance grammar of a request's schema.
fn guidance_grammar(schema: &Value, json_lines: bool) -> TopLevelGrammar {
    let schema = with_guidance_options(schema);
    if json_lines {
        TopLevelGrammar::from_lark(format!("start: (item \"\\n\")+\nitem: %json {schema}\n"))
    } else {
        TopLevelGrammar::from_json_schema(schema)
    }
}

/// Where the default model is cached: `${XDG_CACHE_HOME:-$HOME/.cache}/llm-extract/models/`, as
/// `scripts/fetch-model.sh` writes it. `None` when neither variable is set.
pub fn default_model_path() -> Option<PathBuf> {
    let non_empty = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let cache = non_empty("XDG_CACHE_HOME")
        .filter(|p| p.is_absolute())
        .or_else(|| non_empty("HOME").map(|home| home.join(".cache")))?;
    Some(
        cache
            .join("llm-extract")
            .join("models")
            .join(DEFAULT_MODEL_FILE),
    )
}

/// The model file to load: the file `LLM_EXTRACT_MODEL` names, else the cached default model.
///
/// # Errors
/// [`LlamaCppError::ModelNotFound`] when that file does not exist, saying how to get one. Nothing is
/// downloaded here.
pub fn model_path_from_env() -> Result<PathBuf, LlamaCppError> {
    if let Some(path) = std::env::var_os(MODEL_ENV).filter(|v| !v.is_empty()) {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(LlamaCppError::ModelNotFound {
                path,
                hint: format!("{MODEL_ENV} names no file; point it at a GGUF file, or unset it to use the default model"),
            })
        };
    }
    match default_model_path() {
        Some(path) if path.is_file() => Ok(path),
        Some(path) => Err(LlamaCppError::ModelNotFound {
            path,
            hint: FETCH_HINT.into(),
        }),
        None => Err(LlamaCppError::ModelNotFound {
            path: PathBuf::from(DEFAULT_MODEL_FILE),
            hint: format!("neither HOME nor XDG_CACHE_HOME is set, so there is no model cache; set {MODEL_ENV} to a GGUF file"),
        }),
    }
}

/// The llama.cpp backend, initialised once per process. Its logs go to `tracing` (silent by default).
fn backend() -> Result<&'static LlamaBackend, LlamaCppError> {
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            llama_cpp_2::send_logs_to_tracing(llama_cpp_2::LogOptions::default());
            LlamaBackend::init().map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| {
            LlamaCppError::engine(format!(
                "cannot initialise the llama.cpp backend ({e}); if this process initialised it already, \
                 only one owner can"
            ))
        })
}

/// Which sampler enforces a schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum GrammarEngine {
    /// llguidance: masks computed lazily over a token trie, close to unconstrained speed. The default.
    #[default]
    Guidance,
    /// llama.cpp's GBNF grammar sampler over the converter's grammar: exactly what Ollama runs, and slower.
    Gbnf,
}

/// Builds a [`LlamaCpp`] with non-default settings.
#[derive(Debug, Clone)]
pub struct LlamaCppBuilder {
    path: PathBuf,
    context_size: u32,
    threads: Option<usize>,
    parallel: Option<usize>,
    grammar_engine: GrammarEngine,
    fast_forward: bool,
    repeat_penalty: (f32, usize),
    ignore_eos: bool,
}

impl LlamaCppBuilder {
    /// The largest context a request may use, in tokens (prompt plus answer; default 4096, capped at the
    /// model's training context). Each request's context is sized to what it needs, up to this.
    pub fn context_size(mut self, tokens: u32) -> Self {
        self.context_size = tokens.max(16);
        self
    }

    /// CPU threads per generation (default: half the logical CPUs, at least one: about one per physical
    /// core, as llama.cpp itself defaults to). More threads than free cores makes llama.cpp's thread
    /// barriers wait on descheduled threads, which can slow generation tenfold on a busy machine.
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = Some(threads.max(1));
        self
    }

    /// Gives this model its own queue where up to `requests` generations run at the same time, each in
    /// its own context. By default all models of the process share one queue with one slot.
    pub fn parallel(mut self, requests: usize) -> Self {
        self.parallel = Some(requests.max(1));
        self
    }

    /// Which sampler enforces schemas (default [`GrammarEngine::Guidance`]).
    pub fn grammar_engine(mut self, engine: GrammarEngine) -> Self {
        self.grammar_engine = engine;
        self
    }

    /// Whether tokens the grammar leaves no choice about (a key, `": "`, a closing brace) are decoded
    /// together in one batch instead of sampled one by one (default `true`; llguidance only, and only for
    /// byte-level BPE vocabularies, whose fragments tokenize as they would in context).
    pub fn fast_forward(mut self, enabled: bool) -> Self {
        self.fast_forward = enabled;
        self
    }

    /// A repeat penalty like Ollama's: the scores of tokens among the last `last_n` generated ones are
    /// divided by `factor` (Ollama uses 1.1 over 64). Off by default (factor 1): extraction copies names from
    /// the text again and again, and a penalty makes a model misspell them. It can keep a small model from
    /// listing the same item over and over.
    pub fn repeat_penalty(mut self, factor: f32, last_n: usize) -> Self {
        self.repeat_penalty = (factor, last_n);
        self
    }

    /// Never end an answer at an end-of-generation token: it runs to `max_tokens` (or until the grammar is
    /// complete). For benchmarks that compare equal answer lengths; off by default.
    pub fn ignore_eos(mut self, ignore: bool) -> Self {
        self.ignore_eos = ignore;
        self
    }

    /// Loads the model.
    ///
    /// # Errors
    /// [`LlamaCppError::ModelNotFound`] or [`LlamaCppError::ModelLoad`] (wrapped in [`LlmError::LlamaCpp`]).
    pub fn build(self) -> Result<LlamaCpp, LlmError> {
        Ok(LlamaCpp {
            engine: Arc::new(Engine::load(self)?),
        })
    }
}

/// A local GGUF model run by llama.cpp in this process. Cheap to clone: clones share the loaded model.
#[derive(Clone)]
pub struct LlamaCpp {
    engine: Arc<Engine>,
}

impl std::fmt::Debug for LlamaCpp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlamaCpp")
            .field("model", &self.engine.path)
            .field("grammar_engine", &self.engine.settings.grammar_engine)
            .finish_non_exhaustive()
    }
}

/// One finished generation, with timings (see [`LlamaCpp::generate`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Generation {
    /// The answer, as [`Llm::chat`] returns it.
    pub response: ChatResponse,
    /// Time spent reading the prompt.
    pub prompt_time: Duration,
    /// Time spent generating the answer (sampling, grammar masks and decoding).
    pub generation_time: Duration,
    /// How many of the completion tokens the grammar forced (decoded in batches, not sampled).
    pub forced_tokens: u64,
}

impl Generation {
    /// Generated tokens per second (0 when nothing was generated).
    pub fn tokens_per_second(&self) -> f64 {
        let secs = self.generation_time.as_secs_f64();
        if secs > 0.0 {
            self.response.usage.completion_tokens as f64 / secs
        } else {
            0.0
        }
    }
}

impl LlamaCpp {
    /// Loads the model named by `LLM_EXTRACT_MODEL`, else the cached default model
    /// (see [`model_path_from_env`]). Never downloads.
    ///
    /// # Errors
    /// A missing model file (with what to run to get one) or a file llama.cpp cannot load.
    pub fn from_env() -> Result<Self, LlmError> {
        Self::load(model_path_from_env()?)
    }

    /// Loads a GGUF model file with default settings.
    ///
    /// # Errors
    /// A missing file, or a file llama.cpp cannot load.
    pub fn load(path: impl Into<PathBuf>) -> Result<Self, LlmError> {
        Self::builder(path).build()
    }

    /// A builder for non-default settings.
    pub fn builder(path: impl Into<PathBuf>) -> LlamaCppBuilder {
        LlamaCppBuilder {
            path: path.into(),
            context_size: 4096,
            threads: None,
            parallel: None,
            grammar_engine: GrammarEngine::default(),
            fast_forward: true,
            repeat_penalty: (1.0, 64),
            ignore_eos: false,
        }
    }

    /// The model file.
    pub fn model_path(&self) -> &Path {
        &self.engine.path
    }

    /// The model's name as responses report it (the file name without `.gguf`).
    pub fn model_name(&self) -> &str {
        &self.engine.name
    }

    /// Runs `request` on the calling thread, blocking it, and calls `on_text` with each piece of answer
    /// text as it is decoded; generation stops early when `on_text` returns `false`. The request waits its
    /// turn in the queue like any other.
    ///
    /// # Errors
    /// A schema the converter rejects, a grammar that fails to build, a prompt longer than the context, or
    /// a llama.cpp failure (with the text generated so far).
    pub fn generate(
        &self,
        request: &ChatRequest,
        mut on_text: impl FnMut(&str) -> bool,
    ) -> Result<Generation, LlmError> {
        let _turn = block_on(Arc::clone(&self.engine.queue).acquire_owned())
            .map_err(|_| LlamaCppError::engine("the request queue is closed"))?;
        let mut run = self.engine.prepare(request)?;
        Ok(run.generate(&mut on_text)?)
    }
}

impl Llm for LlamaCpp {
    fn dialect(&self) -> Dialect {
        Dialect::Ollama
    }

    fn constrains_json_lines(&self) -> bool {
        true
    }

    fn chat_stream(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatStream, LlmError>> {
        let engine = Arc::clone(&self.engine);
        Box::pin(async move {
            let permit = Arc::clone(&engine.queue)
                .acquire_owned()
                .await
                .map_err(|_| LlamaCppError::engine("the request queue is closed"))?;
            // Unbounded: generation must never wait for the reader while it holds a queue slot.
            let (events, receiver) =
                tokio::sync::mpsc::unbounded_channel::<Result<ChatEvent, LlmError>>();
            let (ready, started) = tokio::sync::oneshot::channel::<Result<(), LlmError>>();
            let job = move || {
                let _permit = permit;
                let mut run = match engine.prepare(&request) {
                    Ok(run) => run,
                    Err(e) => {
                        let _ = ready.send(Err(e.into()));
                        return;
                    }
                };
                if ready.send(Ok(())).is_err() {
                    return; // the caller is gone
                }
                let mut on_text = |text: &str| {
                    if text.is_empty() {
                        !events.is_closed()
                    } else {
                        events.send(Ok(ChatEvent::Delta(text.to_owned()))).is_ok()
                    }
                };
                let last = match run.generate(&mut on_text) {
                    Ok(generation) => Ok(ChatEvent::Done(generation.response)),
                    Err(e) => Err(e.into()),
                };
                let _ = events.send(last);
            };
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => drop(runtime.spawn_blocking(job)),
                Err(_) => drop(std::thread::spawn(job)),
            }
            started.await.map_err(|_| {
                LlamaCppError::engine("the generation thread stopped before starting")
            })??;
            let stream = futures_util::stream::unfold(receiver, |mut receiver| async move {
                receiver.recv().await.map(|event| (event, receiver))
            });
            Ok(Box::pin(stream) as ChatStream)
        })
    }
}

/// Settings fixed at load time.
#[derive(Debug, Clone)]
struct Settings {
    context_size: u32,
    threads: i32,
    grammar_engine: GrammarEngine,
    fast_forward: bool,
    repeat_penalty: (f32, usize),
    ignore_eos: bool,
}

/// The loaded model and what is derived from it once.
struct Engine {
    model: Arc<LlamaModel>,
    backend: &'static LlamaBackend,
    path: PathBuf,
    name: String,
    template: LlamaChatTemplate,
    settings: Settings,
    /// llguidance's parser factory (token trie and slices), built on the first constrained request.
    guidance: OnceLock<Result<Arc<ParserFactory>, String>>,
    /// llama.cpp's context creation mutates the model, so contexts are created one at a time.
    context_lock: Mutex<()>,
    /// Requests allowed to generate at once; the rest wait here in order.
    queue: Arc<tokio::sync::Semaphore>,
}

impl Engine {
    fn load(builder: LlamaCppBuilder) -> Result<Self, LlamaCppError> {
        let path = builder.path;
        if !path.is_file() {
            return Err(LlamaCppError::ModelNotFound {
                path,
                hint: FETCH_HINT.into(),
            });
        }
        check_gguf_magic(&path)?;
        let backend = backend()?;
        let model = LlamaModel::load_from_file(backend, &path, &LlamaModelParams::default()).map_err(|e| {
            LlamaCppError::ModelLoad {
                path: path.clone(),
                message: format!(
                    "llama.cpp could not load it ({e}): the file may be truncated or corrupt (delete it and run \
                     scripts/fetch-model.sh again) or be a model this llama.cpp does not support"
                ),
            }
        })?;
        let template = usable_template(&model);
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().trim_end_matches(".gguf").to_string())
            .unwrap_or_default();
        let threads = builder.threads.unwrap_or_else(default_threads);
        let context_size = builder.context_size.min(model.n_ctx_train().max(16));
        Ok(Engine {
            model: Arc::new(model),
            backend,
            path,
            name,
            template,
            settings: Settings {
                context_size,
                threads: i32::try_from(threads).unwrap_or(i32::MAX),
                grammar_engine: builder.grammar_engine,
                fast_forward: builder.fast_forward,
                repeat_penalty: builder.repeat_penalty,
                ignore_eos: builder.ignore_eos,
            },
            guidance: OnceLock::new(),
            context_lock: Mutex::new(()),
            queue: match builder.parallel {
                Some(slots) => Arc::new(tokio::sync::Semaphore::new(slots)),
                None => Arc::clone(shared_queue()),
            },
        })
    }

    fn guidance_factory(&self) -> Result<Arc<ParserFactory>, LlamaCppError> {
        self.guidance
            .get_or_init(|| {
                let env = ModelTokEnv::for_model(&self.model);
                let mut factory = ParserFactory::new_simple(&env).map_err(|e| e.to_string())?;
                factory.quiet();
                Ok(Arc::new(factory))
            })
            .clone()
            .map_err(|message| LlamaCppError::Grammar { message })
    }

    /// The constraint for `request`, if it has a schema.
    fn constraint(&self, request: &ChatRequest) -> Result<Constraint, LlamaCppError> {
        let Some(schema) = &request.schema else {
            return Ok(Constraint::None);
        };
        // Ollama's converter decides what is accepted, whichever sampler runs.
        let gbnf = schema_to_grammar(schema)?;
        match self.settings.grammar_engine {
            GrammarEngine::Guidance => {
                let factory = self.guidance_factory()?;
                let grammar = guidance_grammar(schema, request.json_lines);
                let matcher = Matcher::new(factory.create_parser(grammar));
                match matcher.get_error() {
                    Some(message) => Err(LlamaCppError::Grammar { message }),
                    None => Ok(Constraint::Guidance(Box::new(matcher))),
                }
            }
            GrammarEngine::Gbnf => {
                let gbnf = if request.json_lines {
                    json_lines_gbnf(&gbnf)
                } else {
                    gbnf
                };
                LlamaSampler::grammar(&self.model, &gbnf, "root")
                    .map(Constraint::Gbnf)
                    .map_err(|e| LlamaCppError::Grammar {
                        message: format!("llama.cpp rejected the grammar ({e}): {gbnf}"),
                    })
            }
        }
    }

    /// The prompt's tokens and the prefill (a last assistant message the answer continues), if any.
    fn prompt(
        &self,
        request: &ChatRequest,
    ) -> Result<(Vec<LlamaToken>, Option<String>), LlamaCppError> {
        let mut turns: Vec<(&str, &str)> = Vec::with_capacity(request.messages.len() + 1);
        if let Some(system) = &request.system {
            turns.push(("system", system));
        }
        for message in &request.messages {
            let role = match message.role {
                Role::System => "system",
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            turns.push((role, &message.content));
        }
        let prefill = match turns.last() {
            Some(("assistant", content)) => Some(content.to_string()),
            _ => None,
        };
        if prefill.is_some() {
            turns.pop();
        }
        let messages = turns
            .iter()
            .map(|(role, content)| LlamaChatMessage::new(role.to_string(), content.to_string()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| LlamaCppError::InvalidRequest {
                message: "a message contains a NUL byte".into(),
            })?;
        let text = self
            .model
            .apply_chat_template(&self.template, &messages, true)
            .map_err(|e| LlamaCppError::engine(format!("cannot apply the chat template: {e}")))?;
        let vocab = self.model.vocab();
        let mut tokens = vocab.tokenize(text.as_bytes(), true, true);
        if let Some(prefill) = &prefill {
            tokens.extend(vocab.tokenize(prefill.as_bytes(), false, false));
        }
        Ok((tokens, prefill))
    }

    /// Everything before the first answer token: prompt, constraint, context, prompt decoding.
    fn prepare(&self, request: &ChatRequest) -> Result<Run<'_>, LlamaCppError> {
        let started = Instant::now();
        let (prompt, prefill) = self.prompt(request)?;
        if prompt.is_empty() {
            return Err(LlamaCppError::InvalidRequest {
                message: "the prompt is empty".into(),
            });
        }
        let tokenized = started.elapsed();
        let mut constraint = self.constraint(request)?;
        let constrained = started.elapsed();
        let limit = self.settings.context_size;
        let prompt_len = u32::try_from(prompt.len()).unwrap_or(u32::MAX);
        if prompt_len >= limit {
            return Err(LlamaCppError::ContextOverflow {
                prompt_tokens: prompt.len(),
                context_size: limit,
                trained: self.model.n_ctx_train(),
            });
        }
        let room = limit - prompt_len;
        let max_new = request.max_tokens.map_or(room, |m| m.min(room));
        if let Some(prefill) = &prefill {
            let tokens = self
                .model
                .vocab()
                .tokenize(prefill.as_bytes(), false, false);
            constraint.feed_prefill(&tokens)?;
        }
        // Round up so llama.cpp's own padding of the context never cuts an answer short.
        let n_ctx = (prompt_len + max_new)
            .div_ceil(256)
            .saturating_mul(256)
            .clamp(256, limit.max(256));
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(n_ctx))
            .with_n_batch(BATCH)
            .with_n_ubatch(BATCH)
            .with_n_threads(self.settings.threads)
            .with_n_threads_batch(self.settings.threads);
        let mut context = {
            let _one_at_a_time = self.context_lock.lock().unwrap_or_else(|p| p.into_inner());
            self.model.new_context(self.backend, params).map_err(|e| {
                LlamaCppError::engine(format!("cannot create a context of {n_ctx} tokens: {e}"))
            })?
        };
        let n_ctx = context.n_ctx();
        let context_ready = started.elapsed();
        let mut batch = LlamaBatch::new(BATCH as usize, 1);
        let last = prompt.len() - 1;
        for (chunk_index, chunk) in prompt.chunks(BATCH as usize).enumerate() {
            batch.clear();
            for (i, token) in chunk.iter().enumerate() {
                let index = chunk_index * BATCH as usize + i;
                let pos = i32::try_from(index).unwrap_or(i32::MAX);
                batch
                    .add(*token, pos, &[0], index == last)
                    .map_err(LlamaCppError::engine)?;
            }
            context
                .decode(&mut batch)
                .map_err(|e| LlamaCppError::engine(format!("cannot read the prompt: {e}")))?;
        }
        tracing::debug!(
            prompt_tokens = prompt.len(),
            n_ctx,
            "prompt tokenized in {tokenized:?}, grammar ready at {constrained:?}, context at {context_ready:?}, \
             prompt read at {:?}",
            started.elapsed()
        );
        let sampler = match request.temperature {
            Some(t) if t > 0.0 => Some(LlamaSampler::chain_simple([
                LlamaSampler::top_k(40),
                LlamaSampler::top_p(0.95, 1),
                LlamaSampler::min_p(0.05, 1),
                LlamaSampler::temp(t),
                LlamaSampler::dist(request.seed.map_or(u32::MAX, fold_seed)),
            ])),
            _ => None,
        };
        Ok(Run {
            engine: self,
            context,
            batch,
            constraint,
            sampler,
            logits_index: i32::try_from(batch_index_of_last(prompt.len())).unwrap_or(0),
            pos: prompt_len,
            n_ctx,
            max_new,
            prompt_tokens: prompt.len(),
            stops: StopScanner::new(&request.stop),
            prompt_time: started.elapsed(),
            // A request's penalty replaces the load-time factor, over the same window.
            repeat_penalty: request
                .repeat_penalty
                .map_or(self.settings.repeat_penalty, |factor| {
                    (factor, self.settings.repeat_penalty.1)
                }),
        })
    }
}

/// The highest-scoring token whose id `allowed` accepts (the first of equals); `None` when there is none.
fn argmax(
    scored: impl Iterator<Item = (i32, f32)>,
    allowed: impl Fn(i32) -> bool,
) -> Option<LlamaToken> {
    let mut best: Option<(i32, f32)> = None;
    for (id, logit) in scored {
        if best.is_none_or(|(_, top)| logit > top) && allowed(id) {
            best = Some((id, logit));
        }
    }
    best.map(|(id, _)| LlamaToken(id))
}

/// Ollama's repeat penalty over the last tokens generated (a sliding window with a count per token).
struct RepeatPenalty {
    factor: f32,
    window: usize,
    recent: std::collections::VecDeque<i32>,
    counts: Vec<u16>,
}

impl RepeatPenalty {
    fn new(factor: f32, window: usize, n_vocab: i32) -> Self {
        let on = factor.is_finite() && factor > 0.0 && factor != 1.0 && window > 0;
        RepeatPenalty {
            factor,
            window,
            recent: std::collections::VecDeque::with_capacity(window),
            counts: if on {
                vec![0; usize::try_from(n_vocab).unwrap_or(0)]
            } else {
                Vec::new()
            },
        }
    }

    /// `logit` of token `id`, penalised if the token is in the window.
    fn apply(&self, id: i32, logit: f32) -> f32 {
        let seen = usize::try_from(id)
            .ok()
            .and_then(|i| self.counts.get(i))
            .is_some_and(|&c| c > 0);
        match (seen, logit > 0.0) {
            (false, _) => logit,
            (true, true) => logit / self.factor,
            (true, false) => logit * self.factor,
        }
    }

    /// Records a generated token.
    fn push(&mut self, id: i32) {
        let Ok(index) = usize::try_from(id) else {
            return;
        };
        if index >= self.counts.len() {
            return;
        }
        if self.recent.len() == self.window {
            if let Some(old) = self.recent.pop_front() {
                if let Some(count) = usize::try_from(old)
                    .ok()
                    .and_then(|i| self.counts.get_mut(i))
                {
                    *count = count.saturating_sub(1);
                }
            }
        }
        self.recent.push_back(id);
        self.counts[index] = self.counts[index].saturating_add(1);
    }
}

/// About one thread per physical core: half the logical CPUs this process may use, at least one.
fn default_threads() -> usize {
    let logical = std::thread::available_parallelism().map_or(2, usize::from);
    (logical / 2).max(1)
}

/// The queue every model without its own ([`LlamaCppBuilder::parallel`]) waits in: one generation at a time.
fn shared_queue() -> &'static Arc<tokio::sync::Semaphore> {
    static QUEUE: OnceLock<Arc<tokio::sync::Semaphore>> = OnceLock::new();
    QUEUE.get_or_init(|| Arc::new(tokio::sync::Semaphore::new(1)))
}

/// Runs a future to completion on this thread (to wait for a queue slot outside any async runtime).
fn block_on<F: std::future::Future>(future: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl std::task::Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = std::task::Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut context = std::task::Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        match future.as_mut().poll(&mut context) {
            std::task::Poll::Ready(output) => return output,
            std::task::Poll::Pending => std::thread::park(),
        }
    }
}

/// Tokens decoded per llama.cpp call while reading the prompt.
const BATCH: u32 = 512;

/// The index, within its batch, of the prompt's last token (the one whose logits are read).
fn batch_index_of_last(prompt_len: usize) -> usize {
    (prompt_len - 1) % BATCH as usize
}

/// A 64-bit seed folded into llama.cpp's 32 bits (`u32::MAX` means "random" there, so it is avoided).
fn fold_seed(seed: u64) -> u32 {
    let folded = (seed ^ (seed >> 32)) as u32;
    if folded == u32::MAX {
        0
    } else {
        folded
    }
}

/// The model's chat template if llama.cpp can apply it, else ChatML.
fn usable_template(model: &LlamaModel) -> LlamaChatTemplate {
    let chatml = || LlamaChatTemplate::new("chatml").expect("a literal without NUL");
    let Ok(template) = model.chat_template(None) else {
        return chatml();
    };
    let probe = LlamaChatMessage::new("user".into(), "hi".into()).expect("a literal without NUL");
    match model.apply_chat_template(&template, &[probe], true) {
        Ok(_) => template,
        Err(e) => {
            tracing::warn!("llama.cpp cannot apply the model's chat template ({e}); using ChatML");
            chatml()
        }
    }
}

/// Refuses a file that is not GGUF before llama.cpp sees it, with a clearer message than llama.cpp's.
fn check_gguf_magic(path: &Path) -> Result<(), LlamaCppError> {
    use std::io::Read;
    let mut magic = [0u8; 4];
    let read = std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut magic));
    match read {
        Ok(()) if &magic == b"GGUF" => Ok(()),
        Ok(()) => Err(LlamaCppError::ModelLoad {
            path: path.to_path_buf(),
            message: "not a GGUF file (it does not start with the GGUF magic bytes)".into(),
        }),
        Err(e) => Err(LlamaCppError::ModelLoad {
            path: path.to_path_buf(),
            message: format!("cannot read it: {e}"),
        }),
    }
}

/// What constrains the next token.
enum Constraint {
    /// Free text.
    None,
    /// llguidance: we compute the mask and feed it each accepted token.
    Guidance(Box<Matcher>),
    /// llama.cpp's grammar sampler: applied to the candidates, then told the chosen token.
    Gbnf(LlamaSampler),
}

impl Constraint {
    /// Feeds a prefill's tokens, so the grammar continues from where the prefill left off.
    fn feed_prefill(&mut self, tokens: &[LlamaToken]) -> Result<(), LlamaCppError> {
        let rejected = || LlamaCppError::InvalidRequest {
            message: "the assistant prefill (the last message) does not match the schema's grammar"
                .into(),
        };
        match self {
            Constraint::None => Ok(()),
            Constraint::Guidance(matcher) => {
                let ids: Vec<u32> = tokens.iter().map(|t| t.0.cast_unsigned()).collect();
                matcher.consume_tokens(&ids).map_err(|_| rejected())
            }
            Constraint::Gbnf(grammar) => tokens
                .iter()
                .try_for_each(|t| grammar.try_accept(*t).map_err(|_| rejected())),
        }
    }

    /// The grammar is complete and allows nothing more.
    fn is_complete(&self) -> bool {
        matches!(self, Constraint::Guidance(m) if m.is_stopped())
    }
}

/// One request between its prompt and its last token.
struct Run<'a> {
    engine: &'a Engine,
    context: LlamaContext<'a>,
    batch: LlamaBatch<'static>,
    constraint: Constraint,
    /// `None`: greedy decoding.
    sampler: Option<LlamaSampler>,
    logits_index: i32,
    pos: u32,
    n_ctx: u32,
    max_new: u32,
    prompt_tokens: usize,
    stops: StopScanner,
    prompt_time: Duration,
    repeat_penalty: (f32, usize),
}

impl Run<'_> {
    fn generate(
        &mut self,
        on_text: &mut dyn FnMut(&str) -> bool,
    ) -> Result<Generation, LlamaCppError> {
        let started = Instant::now();
        let vocab = self.engine.model.vocab();
        let mut text = String::new();
        let mut utf8 = Utf8Decoder::default();
        let mut candidates: Vec<LlamaTokenData> = Vec::new();
        let mut generated: u32 = 0;
        let mut piece = Vec::new();
        let mut step: Vec<LlamaToken> = Vec::new();
        let mut mask_ids: Vec<i32> = Vec::new();
        let (factor, last_n) = self.repeat_penalty;
        let mut penalty = RepeatPenalty::new(factor, last_n, self.engine.model.n_vocab());
        let mut forced_count: u64 = 0;
        let fail = |message: String, text: &str| LlamaCppError::Engine {
            message,
            partial: text.to_owned(),
        };
        let finish = loop {
            if generated >= self.max_new || self.pos >= self.n_ctx {
                break Finish::Length;
            }
            let ignore_eos = self.engine.settings.ignore_eos;
            let allowed = |id: i32| !(ignore_eos && vocab.is_eog(LlamaToken(id)));
            let logits = self.context.get_logits_ith(self.logits_index);
            let token = match (&mut self.constraint, &mut self.sampler) {
                // Greedy: the best allowed token, without building a candidate array.
                (Constraint::None, None) => argmax(
                    (0..)
                        .zip(logits)
                        .map(|(id, &logit)| (id, penalty.apply(id, logit))),
                    allowed,
                ),
                (Constraint::Guidance(matcher), None) => {
                    let mask = matcher
                        .compute_mask()
                        .map_err(|e| fail(format!("the grammar failed: {e}"), &text))?;
                    mask_ids.clear();
                    mask.iter_set_entries(|id| mask_ids.extend(i32::try_from(id).ok()));
                    let scored = mask_ids
                        .iter()
                        .filter_map(|&id| Some((id, *logits.get(usize::try_from(id).ok()?)?)))
                        .map(|(id, logit)| (id, penalty.apply(id, logit)));
                    argmax(scored, allowed)
                }
                // Everything else goes through llama.cpp's samplers on a candidate array.
                (constraint, sampler) => {
                    candidates.clear();
                    if let Constraint::Guidance(matcher) = constraint {
                        let mask = matcher
                            .compute_mask()
                            .map_err(|e| fail(format!("the grammar failed: {e}"), &text))?;
                        mask.iter_set_entries(|id| {
                            if let (Some(&logit), Ok(id)) = (logits.get(id), i32::try_from(id)) {
                                let logit = penalty.apply(id, logit);
                                candidates.push(LlamaTokenData::new(LlamaToken(id), logit, 0.0));
                            }
                        });
                    } else {
                        candidates.extend((0..).zip(logits).map(|(id, &logit)| {
                            LlamaTokenData::new(LlamaToken(id), penalty.apply(id, logit), 0.0)
                        }));
                    }
                    if ignore_eos {
                        candidates.retain(|c| allowed(c.id().0));
                    }
                    let mut array =
                        LlamaTokenDataArray::new(std::mem::take(&mut candidates), false);
                    if let Constraint::Gbnf(grammar) = constraint {
                        array.apply_sampler(grammar);
                    }
                    array.apply_sampler(sampler.get_or_insert_with(LlamaSampler::greedy));
                    let token = array.selected_token();
                    candidates = array.data;
                    token
                }
            };
            let Some(token) = token else {
                break Finish::Stop; // nothing may follow: the grammar is done
            };
            if vocab.is_eog(token) {
                break Finish::Stop;
            }
            // `apply` does not accept: this is the one accept of this token (accepting twice aborts).
            match &mut self.constraint {
                Constraint::Guidance(matcher) => matcher
                    .consume_token(token.0.cast_unsigned())
                    .map_err(|e| fail(format!("the grammar refused its own token: {e}"), &text))?,
                Constraint::Gbnf(grammar) => grammar
                    .try_accept(token)
                    .map_err(|e| fail(format!("the grammar refused its own token: {e}"), &text))?,
                Constraint::None => {}
            }
            step.clear();
            step.push(token);
            // Tokens the grammar leaves no choice about go in with it, decoded in the same batch.
            if self.engine.settings.fast_forward {
                if let Constraint::Guidance(matcher) = &mut self.constraint {
                    let room = (self.max_new - generated - 1).min(self.n_ctx - self.pos - 1);
                    let room = (room as usize).min(BATCH as usize - 1);
                    let forced = forced_tokens(matcher, room, &vocab).map_err(|e| {
                        fail(format!("the grammar refused its forced tokens: {e}"), &text)
                    })?;
                    forced_count += forced.len() as u64;
                    step.extend(forced);
                }
            }
            let mut ended = None;
            for token in &step {
                generated += 1;
                penalty.push(token.0);
                piece.clear();
                vocab.token_to_piece_into(*token, &mut piece, false, None);
                let decoded = utf8.push(&piece);
                let (emit, stopped) = self.stops.push(&decoded);
                text.push_str(&emit);
                if !on_text(&emit) {
                    ended = Some(Finish::Other("cancelled".into()));
                    break;
                }
                if stopped {
                    ended = Some(Finish::Stop);
                    break;
                }
            }
            if let Some(finish) = ended {
                break finish;
            }
            if self.constraint.is_complete() {
                break Finish::Stop;
            }
            self.batch.clear();
            let last = step.len() - 1;
            for (i, token) in step.iter().enumerate() {
                let pos = i32::try_from(self.pos as usize + i).unwrap_or(i32::MAX);
                self.batch
                    .add(*token, pos, &[0], i == last)
                    .map_err(|e| fail(e.to_string(), &text))?;
            }
            self.context
                .decode(&mut self.batch)
                .map_err(|e| fail(format!("decoding failed: {e}"), &text))?;
            self.logits_index = i32::try_from(last).unwrap_or(0);
            self.pos += step.len() as u32;
        };
        let tail = self.stops.finish(&utf8.finish());
        if !tail.is_empty() {
            text.push_str(&tail);
            let _ = on_text(&tail);
        }
        let response = ChatResponse {
            text,
            thinking: None,
            usage: Usage {
                prompt_tokens: self.prompt_tokens as u64,
                completion_tokens: u64::from(generated),
                estimated: false,
            },
            finish,
            model: Some(self.engine.name.clone()),
        };
        Ok(Generation {
            response,
            prompt_time: self.prompt_time,
            generation_time: started.elapsed(),
            forced_tokens: forced_count,
        })
    }
}

/// The tokens the grammar forces next (at most `room`, none past an end-of-generation token), already fed
/// to the matcher.
fn forced_tokens(
    matcher: &mut Matcher,
    room: usize,
    vocab: &llama_cpp_2::vocab::LlamaVocab<'_>,
) -> Result<Vec<LlamaToken>, String> {
    if room == 0 || matcher.is_stopped() {
        return Ok(Vec::new());
    }
    let mut forced = matcher.compute_ff_tokens();
    forced.truncate(room);
    if let Some(end) = forced
        .iter()
        .position(|&t| vocab.is_eog(LlamaToken(t.cast_signed())))
    {
        forced.truncate(end);
    }
    if !forced.is_empty() {
        matcher.consume_tokens(&forced).map_err(|e| e.to_string())?;
    }
    Ok(forced
        .into_iter()
        .map(|t| LlamaToken(t.cast_signed()))
        .collect())
}

/// llguidance's view of the vocabulary, tokenizing with the model's own tokenizer. A tokenizer that gives
/// the model's canonical tokens lets llguidance force (fast-forward) the tokens a grammar leaves no choice
/// about, healing the token boundary at the end of the forced text.
struct ModelTokEnv {
    trie: TokTrie,
    model: Arc<LlamaModel>,
}

impl ModelTokEnv {
    /// The environment of `model`. Only byte-level BPE vocabularies (GPT-2 style) tokenize a fragment
    /// exactly as it would be tokenized in context; other vocabularies keep llguidance's approximate
    /// tokenizer, which disables forcing.
    fn for_model(model: &Arc<LlamaModel>) -> TokEnv {
        let approximate = LlamaSampler::llguidance_tok_env(model);
        if model.vocab().vocab_type() != VocabType::BPE {
            return approximate;
        }
        Arc::new(ModelTokEnv {
            trie: approximate.tok_trie().clone(),
            model: Arc::clone(model),
        })
    }
}

impl TokenizerEnv for ModelTokEnv {
    fn tok_trie(&self) -> &TokTrie {
        &self.trie
    }

    fn tokenize_bytes(&self, bytes: &[u8]) -> Vec<u32> {
        if std::str::from_utf8(bytes).is_err() {
            return self.trie.greedy_tokenize(bytes);
        }
        let tokens = self.model.vocab().tokenize(bytes, false, false);
        tokens.into_iter().map(|t| t.0.cast_unsigned()).collect()
    }

    fn tokenize_is_canonical(&self) -> bool {
        true
    }
}

/// Turns token pieces (bytes) into text without splitting a character across two deltas.
#[derive(Debug, Default)]
struct Utf8Decoder {
    pending: Vec<u8>,
}

impl Utf8Decoder {
    /// The text completed by `bytes`; an incomplete character at the end waits for the next piece.
    fn push(&mut self, bytes: &[u8]) -> String {
        self.pending.extend_from_slice(bytes);
        let mut out = String::new();
        loop {
            match std::str::from_utf8(&self.pending) {
                Ok(s) => {
                    out.push_str(s);
                    self.pending.clear();
                    return out;
                }
                Err(e) => {
                    let (valid, rest) = self.pending.split_at(e.valid_up_to());
                    // SAFETY-free: `valid` is valid UTF-8 by `valid_up_to`.
                    out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                    match e.error_len() {
                        // An incomplete sequence at the end: keep it for the next piece.
                        None => {
                            self.pending = rest.to_vec();
                            return out;
                        }
                        // Bytes that can never be UTF-8: replace them, as a lossy decoder would.
                        Some(bad) => {
                            out.push(char::REPLACEMENT_CHARACTER);
                            self.pending = rest[bad..].to_vec();
                        }
                    }
                }
            }
        }
    }

    /// Whatever is left at the end (an incomplete character becomes U+FFFD).
    fn finish(&mut self) -> String {
        let out = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        out
    }
}

/// Finds stop strings in the answer as it streams, holding back text that may be the start of one.
#[derive(Debug, Default)]
struct StopScanner {
    stops: Vec<String>,
    held: String,
    stopped: bool,
}

impl StopScanner {
    fn new(stops: &[String]) -> Self {
        StopScanner {
            stops: stops.iter().filter(|s| !s.is_empty()).cloned().collect(),
            held: String::new(),
            stopped: false,
        }
    }

    /// Adds `text`; returns what can be emitted now and whether a stop string was found (the stop string
    /// and everything after it are dropped).
    fn push(&mut self, text: &str) -> (String, bool) {
        if self.stopped {
            return (String::new(), true);
        }
        if self.stops.is_empty() {
            return (text.to_owned(), false);
        }
        self.held.push_str(text);
        if let Some(at) = self
            .stops
            .iter()
            .filter_map(|s| self.held.find(s.as_str()))
            .min()
        {
            self.stopped = true;
            let emit = self.held[..at].to_owned();
            self.held.clear();
            return (emit, true);
        }
        // Keep the longest tail that could still grow into a stop string.
        let keep_from = self
            .held
            .char_indices()
            .map(|(i, _)| i)
            .find(|&i| {
                let tail = &self.held[i..];
                self.stops.iter().any(|s| s.starts_with(tail))
            })
            .unwrap_or(self.held.len());
        let emit = self.held[..keep_from].to_owned();
        self.held.replace_range(..keep_from, "");
        (emit, false)
    }

    /// What is still held at the end of the answer, after `text` (the decoder's last bytes).
    fn finish(&mut self, text: &str) -> String {
        let (mut out, stopped) = self.push(text);
        if !stopped {
            out.push_str(&std::mem::take(&mut self.held));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_decoder_holds_a_character_split_across_pieces() {
        let mut d = Utf8Decoder::default();
        let euro = "€".as_bytes(); // three bytes
        assert_eq!(d.push(b"a"), "a");
        assert_eq!(d.push(&euro[..1]), "");
        assert_eq!(d.push(&euro[1..2]), "");
        assert_eq!(d.push(&[euro[2], b'b']), "€b");
        assert_eq!(d.finish(), "");
    }

    #[test]
    fn utf8_decoder_replaces_invalid_bytes_and_flushes_an_incomplete_tail() {
        let mut d = Utf8Decoder::default();
        assert_eq!(d.push(&[b'x', 0xFF, b'y']), "x\u{FFFD}y");
        assert_eq!(d.push(&[0xE2, 0x82]), "");
        assert_eq!(d.finish(), "\u{FFFD}");
    }

    #[test]
    fn stop_scanner_holds_a_possible_prefix_and_cuts_at_the_stop() {
        let mut s = StopScanner::new(&["END".to_string()]);
        assert_eq!(s.push("abc E"), ("abc ".to_string(), false));
        assert_eq!(s.push("N"), (String::new(), false));
        assert_eq!(s.push("Dxyz"), (String::new(), true));
        assert_eq!(s.finish(""), "");
    }

    #[test]
    fn stop_scanner_releases_a_false_start() {
        let mut s = StopScanner::new(&["END".to_string()]);
        assert_eq!(s.push("EN"), (String::new(), false));
        assert_eq!(s.push("x"), ("ENx".to_string(), false));
        assert_eq!(s.push("E"), (String::new(), false));
        assert_eq!(s.finish(""), "E");
    }

    #[test]
    fn stop_scanner_without_stops_passes_text_through() {
        let mut s = StopScanner::new(&[]);
        assert_eq!(s.push("é"), ("é".to_string(), false));
        assert_eq!(s.finish(""), "");
    }

    #[test]
    fn json_lines_gbnf_wraps_the_root_and_keeps_values_on_one_line() {
        let line = schema_to_grammar(
            &json!({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}),
        )
        .unwrap();
        let lines = json_lines_gbnf(&line);
        assert!(
            lines.starts_with("root ::= (jsonl-line \"\\n\")+\n"),
            "{lines}"
        );
        assert!(lines.contains("jsonl-line ::="), "{lines}");
        assert!(lines.contains("space ::= | \" \"\n"), "{lines}");
        assert_eq!(lines.matches("root ::=").count(), 1, "{lines}");
    }

    #[test]
    fn the_converter_rejects_what_ollama_rejects() {
        let err =
            schema_to_grammar(&json!({"type": "object", "properties": {"v": true}})).unwrap_err();
        assert!(matches!(err, LlamaCppError::SchemaRejected { .. }), "{err}");
        assert!(
            err.to_string().contains("\"v\":true"),
            "the message carries the schema: {err}"
        );
    }

    #[test]
    fn a_missing_model_is_an_error_that_says_how_to_get_one() {
        let err = LlamaCpp::load("/nonexistent/model.gguf").unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("/nonexistent/model.gguf") && text.contains("fetch-model.sh"),
            "{text}"
        );
    }

    #[test]
    fn a_file_that_is_not_gguf_is_a_load_error() {
        let path =
            std::env::temp_dir().join(format!("llm-extract-not-gguf-{}.gguf", std::process::id()));
        std::fs::write(&path, b"this is not a model").unwrap();
        let err = LlamaCpp::load(&path).unwrap_err();
        std::fs::remove_file(&path).ok();
        assert!(
            matches!(err, LlmError::LlamaCpp(LlamaCppError::ModelLoad { .. })),
            "{err}"
        );
    }

    #[test]
    fn seeds_fold_into_32_bits_without_hitting_random() {
        assert_eq!(fold_seed(7), 7);
        assert_ne!(fold_seed(u64::from(u32::MAX)), u32::MAX);
        assert_ne!(fold_seed(1 << 40), fold_seed(1 << 41));
    }
}
