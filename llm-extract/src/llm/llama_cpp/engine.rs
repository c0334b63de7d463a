//! The loaded model and everything before the first answer token: backend, chat template, prompt,
//! constraint, context and prompt decoding.

use super::chat_tokens::chat_tokens;
use super::exit::{register_exit_handler, Inside, Stage};
use super::generate::{Limits, Sequence, Sink};
use super::grammar::{gbnf_grammar, guidance_matcher, Constraint, GrammarEngine};
use super::model_file::{check_gguf_magic, FETCH_HINT};
use super::sampling::{fold_seed, RepeatPenalty};
use super::scheduler::{self, Scheduler};
use super::stop::StopScanner;
use super::tok_env::ModelTokEnv;
use super::{LlamaCppBuilder, LlamaCppError};
use crate::llm::{ChatRequest, Role};
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llguidance::ParserFactory;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// The llama.cpp backend, initialised once per process. Its logs go to `tracing` (silent by default).
///
/// It lives in a `static`, which Rust never drops: `llama_backend_free` never runs while a model or a
/// context still exists, not even at exit (see `exit.rs`).
pub(super) fn backend() -> Result<&'static LlamaBackend, LlamaCppError> {
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

/// Settings fixed at load time.
#[derive(Debug, Clone)]
pub(super) struct Settings {
    pub(super) context_size: u32,
    pub(super) threads: i32,
    pub(super) grammar_engine: GrammarEngine,
    pub(super) fast_forward: bool,
    pub(super) repeat_penalty: (f32, usize),
    pub(super) ignore_eos: bool,
    /// Sequences decoded together in the model's context.
    pub(super) slots: usize,
    /// Whether a request starts from the longest cached prefix of its prompt.
    pub(super) reuse_prefix: bool,
    /// Whether decoding steps take turns with every other model that did not ask for its own cores.
    pub(super) shared_cores: bool,
}

/// The loaded model and what is derived from it once.
pub(super) struct Engine {
    pub(super) model: Arc<LlamaModel>,
    pub(super) path: PathBuf,
    pub(super) name: String,
    pub(super) template: LlamaChatTemplate,
    pub(super) settings: Settings,
    /// llguidance's parser factory (token trie and slices), built on the first constrained request.
    pub(super) guidance: OnceLock<Result<Arc<ParserFactory>, String>>,
    /// The thread that owns the model's context and decodes its requests' sequences.
    pub(super) scheduler: Scheduler,
}

/// llguidance's budget of lexer work per token (see `guidance_factory`).
const STEP_LEXER_FUEL: u64 = 2_000_000;

impl Engine {
    pub(super) fn load(builder: LlamaCppBuilder) -> Result<Self, LlamaCppError> {
        let path = builder.path;
        if !path.is_file() {
            return Err(LlamaCppError::ModelNotFound {
                path,
                hint: FETCH_HINT.into(),
            });
        }
        check_gguf_magic(&path)?;
        let _inside = Inside::enter()?;
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
        register_exit_handler(Stage::ModelLoaded);
        let template = usable_template(&model);
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().trim_end_matches(".gguf").to_string())
            .unwrap_or_default();
        let threads = builder.threads.unwrap_or_else(default_threads);
        let context_size = builder.context_size.min(model.n_ctx_train().max(16));
        let model = Arc::new(model);
        let settings = Settings {
            context_size,
            threads: i32::try_from(threads).unwrap_or(i32::MAX),
            grammar_engine: builder.grammar_engine,
            fast_forward: builder.fast_forward,
            repeat_penalty: builder.repeat_penalty,
            ignore_eos: builder.ignore_eos,
            slots: builder.parallel.unwrap_or(DEFAULT_SLOTS),
            reuse_prefix: builder.reuse_prefix,
            shared_cores: builder.parallel.is_none(),
        };
        let context = scheduler::Config::new(
            backend,
            settings.slots,
            settings.context_size,
            settings.threads,
            settings.reuse_prefix,
            settings.shared_cores,
        );
        Ok(Engine {
            scheduler: Scheduler::new(Arc::clone(&model), name.clone(), context),
            model,
            path,
            name,
            template,
            settings,
            guidance: OnceLock::new(),
        })
    }

    fn guidance_factory(&self) -> Result<Arc<ParserFactory>, LlamaCppError> {
        self.guidance
            .get_or_init(|| {
                let env = ModelTokEnv::for_model(&self.model);
                let mut factory = ParserFactory::new_simple(&env).map_err(|e| e.to_string())?;
                factory.quiet();
                // The first token of a grounded string may be any prefix of any span of the source:
                // its mask walks the source's substring automaton, about 250,000 units of lexer work for
                // a 3 KB chunk against the default budget of 200,000 per token (measured on the
                // default model's vocabulary). Ten times the default covers chunks of 24 KB.
                factory.limits_mut().step_lexer_fuel = STEP_LEXER_FUEL;
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
        match self.settings.grammar_engine {
            GrammarEngine::Guidance => {
                let factory = self.guidance_factory()?;
                let (matcher, _) = guidance_matcher(
                    &factory,
                    schema,
                    request.json_lines,
                    request.grounding.as_deref(),
                )?;
                Ok(Constraint::Guidance(Box::new(matcher)))
            }
            GrammarEngine::Gbnf => {
                let gbnf = gbnf_grammar(schema, request.json_lines)?;
                LlamaSampler::grammar(&self.model, &gbnf, "root")
                    .map(Constraint::Gbnf)
                    .map_err(|e| LlamaCppError::Grammar {
                        message: format!("llama.cpp rejected the grammar ({e}): {gbnf}"),
                    })
            }
        }
    }

    /// How many tokens `text` is (no special tokens added, none parsed); `None` once the process is
    /// exiting (llama.cpp's tokenizer is not entered then, see `exit.rs`).
    pub(super) fn count_tokens(&self, text: &str) -> Option<usize> {
        let _inside = Inside::enter().ok()?;
        Some(
            self.model
                .vocab()
                .tokenize(text.as_bytes(), false, false)
                .len(),
        )
    }

    /// The prompt's tokens and the prefill (a last assistant message the answer continues), if any.
    pub(super) fn prompt(
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
        let mut tokens = chat_tokens(&self.model, &self.template, &turns)?;
        let vocab = self.model.vocab();
        if let Some(prefill) = &prefill {
            tokens.extend(vocab.tokenize(prefill.as_bytes(), false, false));
        }
        Ok((tokens, prefill))
    }

    /// Everything before the first answer token that needs no context: the prompt's tokens, the
    /// constraint (fed the prefill), the sampler and the limits. The scheduler does the rest.
    pub(super) fn prepare(
        &self,
        request: &ChatRequest,
        sink: Sink,
    ) -> Result<Sequence, LlamaCppError> {
        if let Some(factor) = request.repeat_penalty {
            LlamaCppError::check_repeat_penalty(factor)?;
        }
        let (prompt, prefill) = self.prompt(request)?;
        if prompt.is_empty() {
            return Err(LlamaCppError::InvalidRequest {
                message: "the prompt is empty".into(),
            });
        }
        let mut constraint = self.constraint(request)?;
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
        // A request's penalty replaces the load-time factor, over the same window.
        let (factor, last_n) = request
            .repeat_penalty
            .map_or(self.settings.repeat_penalty, |factor| {
                (factor, self.settings.repeat_penalty.1)
            });
        Ok(Sequence::new(
            prompt,
            constraint,
            sampler,
            RepeatPenalty::new(factor, last_n, self.model.n_vocab()),
            StopScanner::new(&request.stop),
            Limits {
                max_new,
                n_ctx: limit,
                ignore_eos: self.settings.ignore_eos,
                fast_forward: self.settings.fast_forward,
                logprobs: request.logprobs,
            },
            self.name.clone(),
            sink,
        ))
    }

    /// Prepares `request` and queues it for a sequence slot; its output goes to `sink`.
    pub(super) fn submit(&self, request: &ChatRequest, sink: Sink) -> Result<(), LlamaCppError> {
        let sequence = self.prepare(request, sink)?;
        self.scheduler.submit(sequence)
    }
}

/// One thread per physical core this process may use, as llama.cpp's own programs default to
/// (`common_cpu_get_num_math`): the cores are counted as llama.cpp counts them on Linux, one per distinct
/// set of thread siblings in `/sys/devices/system/cpu/cpu*/topology/thread_siblings`, and capped at the
/// CPUs this process may run on (a container limited to one CPU gets one thread). Where the topology
/// cannot be read, half the logical CPUs (two hardware threads per core being the common case). On the
/// project's 2-core machine this is two threads, as llama-server uses there: measured in BENCHMARKS.md
/// ("Threads"), two threads serve a batch best when the cores are free; on a machine busy with other
/// work, `threads(1)` avoids llama.cpp's threads waiting at every step for one that is descheduled.
fn default_threads() -> usize {
    let logical = std::thread::available_parallelism().map_or(2, usize::from);
    physical_cores(std::path::Path::new("/sys/devices/system/cpu"))
        .unwrap_or(logical / 2)
        .min(logical)
        .max(1)
}

/// The number of distinct thread-sibling sets under `cpus` (`cpu0/topology/thread_siblings`, `cpu1/...`,
/// read until the first CPU that has none): the physical cores. `None` when there are none to read.
fn physical_cores(cpus: &std::path::Path) -> Option<usize> {
    let mut siblings = std::collections::HashSet::new();
    for cpu in 0.. {
        let path = cpus.join(format!("cpu{cpu}/topology/thread_siblings"));
        let Ok(set) = std::fs::read_to_string(path) else {
            break;
        };
        siblings.insert(set.trim().to_owned());
    }
    (!siblings.is_empty()).then_some(siblings.len())
}

/// Sequences decoded together when [`LlamaCppBuilder::parallel`] is not set: one, so that greedy
/// decoding is reproducible (a sequence decoded in a batch with others can come out differently) and
/// because at one thread four batched sequences gave 0.88x the tokens per second of one (BENCHMARKS.md).
pub(super) const DEFAULT_SLOTS: usize = 1;

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

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory laid out as `/sys/devices/system/cpu`, with one `thread_siblings` mask per CPU
    /// (a fresh temporary directory, removed when dropped).
    fn cpus(masks: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (cpu, mask) in masks.iter().enumerate() {
            let topology = dir.path().join(format!("cpu{cpu}/topology"));
            std::fs::create_dir_all(&topology).unwrap();
            std::fs::write(topology.join("thread_siblings"), format!("{mask}\n")).unwrap();
        }
        dir
    }

    #[test]
    fn physical_cores_are_the_distinct_sibling_sets() {
        // Two cores of two hardware threads each (cpu0 and cpu2 share a core, as do cpu1 and cpu3).
        let smt = cpus(&["5", "a", "5", "a"]);
        assert_eq!(physical_cores(smt.path()), Some(2));
        // Two cores without hyper-threading: each CPU its own core.
        let plain = cpus(&["1", "2"]);
        assert_eq!(physical_cores(plain.path()), Some(2));
        let none = cpus(&[]);
        assert_eq!(physical_cores(none.path()), None);
        assert!(default_threads() >= 1);
    }
}
