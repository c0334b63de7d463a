//! The embedded llama.cpp engine (cargo feature `llama-cpp`): a GGUF model run in process, behind the
//! same [`Llm`](super::Llm) trait as the HTTP backends, with grammar-constrained decoding.
//!
//! ```no_run
//! # async fn demo() -> Result<(), llm_extract::llm::LlmError> {
//! use llm_extract::llm::llama_cpp::LlamaCpp;
//! use llm_extract::{Llm, llm::ChatRequest};
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
//!   llama.cpp cannot apply). A last assistant message is a prefill: the answer continues it. Only the
//!   template's own text can hold control tokens: a message's text is always read as text, so a document
//!   that contains `<|im_end|><|im_start|>system` cannot end its turn or open another, and a NUL byte in it
//!   is read as the byte it is (`chat_tokens.rs`).
//! - **The schema** of a request is the full JSON Schema ([`Dialect::Generic`](crate::schema::Dialect::Generic)):
//!   llguidance enforces it as written (`allOf`, `anyOf`, recursion through `$ref`, `patternProperties`,
//!   bounds, formats), and only a schema llguidance refuses is constrained by its lowering for the Ollama
//!   dialect instead ([`guidance_matcher`]). llguidance computes each token's mask lazily; the tokens the
//!   grammar forces (keys, quotes, separators) are decoded together in one batch instead of being sampled
//!   one by one, so a constrained answer comes out faster than free text (`benches/constrained.rs`
//!   measures it). [`GrammarEngine::Gbnf`] selects llama.cpp's own grammar sampler over the Ollama
//!   lowering instead ([`schema_to_grammar`]): exactly what Ollama runs, and slower. With
//!   [`ChatRequest::json_lines`] the grammar is one value per line.
//! - **Sampling**: greedy unless the request sets a temperature above 0; then top-k 40, top-p 0.95,
//!   min-p 0.05 and the temperature, seeded by [`ChatRequest::seed`] (llama.cpp's defaults).
//! - **Log-probabilities** ([`ChatRequest::logprobs`](super::ChatRequest::logprobs)): each sampled
//!   token's log-softmax of the model's raw scores (no penalty, no temperature), over the tokens the
//!   grammar allowed at that step and over the whole vocabulary
//!   ([`TokenLogprob`](super::TokenLogprob)); a token the grammar forced has 0 and no vocabulary figure.
//! - **Generation** streams UTF-8-safe text deltas through a channel; dropping the stream stops that
//!   generation at the next step. It uses one thread per physical core, as llama-server does
//!   ([`LlamaCppBuilder::threads`]; BENCHMARKS.md, "Threads", has the measurements behind it).
//! - **Concurrency**: each model has one llama.cpp context, created once and kept (cleared per request,
//!   rebuilt only to grow), and one scheduler thread that decodes up to [`LlamaCppBuilder::parallel`]
//!   requests (default 1, see there for why) as the sequences of shared batches, continuously: a finished or cancelled
//!   request frees its slot for the next at once, and the others never notice. Each sequence has its own
//!   sampler and grammar matcher. Requests beyond that wait their turn, first come, first served. A
//!   generation never waits for its reader (deltas are buffered), so a slow or absent reader holds up no
//!   one. The decoding steps of all models without their own `parallel` setting take turns, since each
//!   step keeps every core busy.
//! - **Prompt-prefix reuse**: a request starts from the keys and values already computed for the
//!   longest prefix of its prompt that an earlier request left in the context (the system prompt, format
//!   instructions and examples of a batch), and reads only the rest ([`LlamaCppBuilder::reuse_prefix`],
//!   on by default). Prompts are read in pieces aligned to fixed positions, and only whole pieces are
//!   reused, so every prompt token is computed in the same batch shape either way: answers are the same
//!   as with reuse off, token for token.
//!
//! One file per job: `error.rs` (the error type), `model_file.rs` (which file to load), `engine.rs` (the
//! loaded model and a request's preparation), `chat_tokens.rs` (the prompt's tokens, message text
//! kept as text), `grammar.rs`, `guidance_options.rs` and `tok_env.rs` (schemas to constraints),
//! `grounded.rs` (strings that can only be spans of the source text), `log_likelihood.rs` (how likely
//! the model finds given continuations, nothing sampled), `scheduler.rs` (the context, its sequence slots, batches and cached
//! prefixes), `worker.rs` (the [`Llm`](super::Llm) implementation), `generate.rs` (one sequence's token
//! choices), `sampling.rs`, `utf8.rs` and `stop.rs` (what it uses), `exit.rs` (no thread inside llama.cpp
//! while the process exits).

mod chat_tokens;
mod engine;
mod error;
mod exit;
mod generate;
mod grammar;
mod grounded;
mod guidance_options;
mod log_likelihood;
mod model_file;
mod sampling;
mod scheduler;
mod stop;
mod tok_env;
mod utf8;
mod worker;

pub use error::LlamaCppError;
pub use generate::Generation;
pub use grammar::{guidance_matcher, schema_to_grammar, GrammarEngine, GrammarSource};
/// The grammar engine the embedded engine builds on (its [`ParserFactory`](llguidance::ParserFactory)
/// and [`Matcher`](llguidance::Matcher) appear in [`guidance_matcher`]).
pub use llguidance;
pub use model_file::{default_model_path, model_path_from_env, DEFAULT_MODEL_FILE, MODEL_ENV};

use super::{ChatRequest, LlmError};
use engine::Engine;
use generate::Out;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Builds a [`LlamaCpp`] with non-default settings.
#[derive(Debug, Clone)]
pub struct LlamaCppBuilder {
    path: PathBuf,
    context_size: u32,
    threads: Option<usize>,
    parallel: Option<usize>,
    reuse_prefix: bool,
    grammar_engine: GrammarEngine,
    fast_forward: bool,
    repeat_penalty: (f32, usize),
    ignore_eos: bool,
}

impl LlamaCppBuilder {
    /// The largest context a request may use, in tokens (prompt plus answer; default 4096, capped at the
    /// model's training context). The model's context holds this many positions per sequence slot at
    /// most; it starts at what the first request needs and grows when a request needs more.
    pub fn context_size(mut self, tokens: u32) -> Self {
        self.context_size = tokens.max(16);
        self
    }

    /// CPU threads for the model's decoding steps (default: one per physical core this process may
    /// use, counted as llama.cpp's own programs count them, so the same as llama-server's default). More
    /// threads than free cores makes llama.cpp's thread barriers wait on descheduled threads, which can
    /// slow generation tenfold on a busy machine (BENCHMARKS.md, "Threads": on the shared 2-core machine,
    /// loaded by other builds, two threads were 2.5 times slower than one): set `threads(1)` where other
    /// work keeps the cores busy.
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = Some(threads.max(1));
        self
    }

    /// Up to `requests` generations of this model run at the same time, as the sequences of one
    /// llama.cpp context decoded in shared batches; more wait their turn, first come, first served
    /// (default 1). Setting it also gives the model the cores to itself: by default the decoding steps of
    /// all models of the process take turns, since each step keeps every core busy.
    ///
    /// A sequence decoded in a batch with others is computed in a different floating-point order, so
    /// where two tokens are nearly tied a greedy answer can differ from the one it gets alone: with more
    /// than one, greedy decoding is no longer reproducible from run to run. At one thread, four batched
    /// sequences gave 0.88x the tokens per second of one on the 2-vCPU machine (BENCHMARKS.md); with more
    /// threads on a bigger machine batching pays.
    pub fn parallel(mut self, requests: usize) -> Self {
        self.parallel = Some(requests.max(1));
        self
    }

    /// Whether a request starts from the keys and values an earlier request already computed for the
    /// same prompt prefix (system prompt, format instructions, examples), reading only the rest of its
    /// prompt (default `true`; llama-server's `cache_prompt`). It cuts prompt reading per document of a
    /// batch sharing a long prefix to under a tenth (BENCHMARKS.md, "Prompt-prefix reuse").
    ///
    /// With one sequence at a time (the default [`parallel`](Self::parallel)) reuse changes no answer:
    /// a prompt is always read in pieces that end at fixed positions (multiples of 64), and only whole
    /// pieces an earlier request read as its prompt are reused, so each prompt token is computed from the
    /// same inputs in the same batch shape whether its prefix came from the cache or not (llama.cpp
    /// computes a token differently in a batch of another size, which flipped near-tied greedy choices
    /// before). At most the last 63 tokens of a shared prefix are read again. Turning it off only costs
    /// time; it stays for measuring that cost.
    pub fn reuse_prefix(mut self, enabled: bool) -> Self {
        self.reuse_prefix = enabled;
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
    ///
    /// `factor` must be finite and above 0 (below 1 it makes repeats more likely), else
    /// [`build`](Self::build) fails with [`LlamaCppError::InvalidSetting`]; a request's
    /// [`ChatRequest::repeat_penalty`] is held to the same range. `last_n` 0 turns the penalty off.
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
    /// [`LlamaCppError::InvalidSetting`] for a setting outside its range (checked before anything is
    /// loaded), [`LlamaCppError::ModelNotFound`] or [`LlamaCppError::ModelLoad`] (wrapped in
    /// [`LlmError::LlamaCpp`]).
    pub fn build(self) -> Result<LlamaCpp, LlmError> {
        LlamaCppError::check_repeat_penalty(self.repeat_penalty.0)?;
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
            reuse_prefix: true,
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

    /// Runs `request`, blocking the calling thread until it is done, and calls `on_text` on this thread
    /// with each piece of answer text as it is decoded; generation stops at its next step when `on_text`
    /// returns `false` (the text generated by then is in the answer). The request is decoded by the
    /// model's scheduler, alongside any other requests, like every other request.
    ///
    /// # Errors
    /// A schema the converter rejects, a grammar that fails to build, a prompt longer than the context, or
    /// a llama.cpp failure (with the text generated so far).
    pub fn generate(
        &self,
        request: &ChatRequest,
        mut on_text: impl FnMut(&str) -> bool,
    ) -> Result<Generation, LlmError> {
        let (sender, receiver) = std::sync::mpsc::channel::<Out>();
        let cancelled = Arc::new(AtomicBool::new(false));
        let stop = Arc::clone(&cancelled);
        let sink = Box::new(move |out: Out| {
            let wanted = !stop.load(Ordering::Acquire);
            match out {
                Out::Text(text) if text.is_empty() => wanted,
                Out::Text(text) => wanted && sender.send(Out::Text(text)).is_ok(),
                Out::Done(result) => sender.send(Out::Done(result)).is_ok(),
            }
        });
        {
            // Preparing builds samplers inside llama.cpp (see `exit.rs`).
            let _inside = exit::Inside::enter()?;
            self.engine.submit(request, sink)?;
        }
        for out in receiver {
            match out {
                Out::Text(text) => {
                    if !cancelled.load(Ordering::Acquire) && !on_text(&text) {
                        cancelled.store(true, Ordering::Release);
                    }
                }
                Out::Done(result) => return Ok((*result)?),
            }
        }
        Err(LlamaCppError::engine("the generation stopped without an answer").into())
    }
}

/// The real model for unit tests that need one (`LLM_EXTRACT_MODEL`, else the default model that
/// `scripts/fetch-model.sh` caches), loaded once per test binary; without one these tests fail, saying
/// what to run.
#[cfg(test)]
pub(super) fn real_model() -> &'static LlamaCpp {
    static MODEL: std::sync::OnceLock<LlamaCpp> = std::sync::OnceLock::new();
    MODEL.get_or_init(|| {
        LlamaCpp::from_env().unwrap_or_else(|e| {
            panic!("these tests need a GGUF model: {e} (run scripts/fetch-model.sh)")
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("not-gguf.gguf");
        std::fs::write(&path, b"this is not a model").unwrap();
        let err = LlamaCpp::load(&path).unwrap_err();
        assert!(
            matches!(err, LlmError::LlamaCpp(LlamaCppError::ModelLoad { .. })),
            "{err}"
        );
    }
}
