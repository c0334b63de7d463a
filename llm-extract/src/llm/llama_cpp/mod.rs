//! The embedded llama.cpp engine (cargo feature `llama-cpp`): a GGUF model run in process, behind the
//! same [`Llm`](super::Llm) trait as the HTTP backends, with grammar-constrained decoding.
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
//!
//! One file per job: `error.rs` (the error type), `model_file.rs` (which file to load), `engine.rs` (the
//! loaded model and the prompt), `grammar.rs` and `tok_env.rs` (schemas to constraints), `queue.rs` (whose
//! turn it is), `worker.rs` (the [`Llm`](super::Llm) implementation), `generate.rs` (the token loop),
//! `sampling.rs`, `utf8.rs` and `stop.rs` (what the loop uses), `exit.rs` (no thread inside llama.cpp
//! while the process exits).

mod engine;
mod error;
mod exit;
mod generate;
mod grammar;
mod model_file;
mod queue;
mod sampling;
mod stop;
mod tok_env;
mod utf8;
mod worker;

pub use error::LlamaCppError;
pub use generate::Generation;
pub use grammar::{schema_to_grammar, GrammarEngine};
pub use model_file::{default_model_path, model_path_from_env, DEFAULT_MODEL_FILE, MODEL_ENV};

use super::{ChatRequest, LlmError};
use engine::Engine;
use queue::block_on;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
        // Declared before `run`, so dropped after it: the context is freed inside (see `exit.rs`).
        let _inside = exit::Inside::enter()?;
        let mut run = self.engine.prepare(request)?;
        Ok(run.generate(&mut on_text)?)
    }
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
}
