//! One context, many sequences: a model's requests are decoded together, as the sequences of one
//! llama.cpp batch (continuous batching, as llama-server does).
//!
//! Each model has one scheduler thread, started with its first request, that owns the model's one
//! llama.cpp context for as long as the model lives (created once, cleared per request, rebuilt only to
//! grow). The context has a slot per concurrent request ([`LlamaCppBuilder::parallel`](super::LlamaCppBuilder::parallel)):
//! a request takes a free slot, or waits for one in first-come, first-served order. Each step decodes one
//! batch holding the next tokens of every sequence that has some (one sampled token plus the tokens its
//! grammar forces, or the next chunk of its prompt), then each sequence reads its own scores and chooses
//! its next tokens with its own sampler and grammar matcher. A finished or cancelled sequence frees its
//! slot at once for the next request; the others never notice.
//!
//! **Prompt-prefix reuse.** A slot keeps the keys and values of its last request's tokens after it
//! finishes. A new request starts from the longest prefix of its prompt that any slot holds (the system
//! prompt, the format instructions and the examples are the same for every document of a batch and every
//! chunk of a document): its own slot's cache is trimmed to that prefix, or another slot's cache is
//! copied into it and trimmed (`llama_memory_seq_cp` copies a whole stream, see **Memory**). Only the
//! rest of the prompt is read. Prompts are read in pieces ending at multiples of [`PIECE`] positions and
//! only whole pieces read as a prompt are reused, so a token's keys and values are computed the same way
//! whether they are reused or read again (see [`PIECE`]).
//!
//! **Memory.** Each slot has its own stream of the KV cache (`kv_unified` off): `per-slot` cells each,
//! position `p` of a sequence in its cell `p`. A token then attends over its own sequence's cells only,
//! where a unified cache makes every token of a batch step over all sequences' cells: with four
//! sequences the aggregate generation rate was 1.03x to 1.27x one sequence's with the unified cache
//! (3 runs) and 1.12x to 1.45x with a stream each (7 runs), against 1.26x to 1.43x for llama.cpp's own
//! `llama-batched-bench` on the same machine (BENCHMARKS.md). The per-slot size starts at what the
//! first request needs (rounded up) and grows, up to the model's context size, when a request needs
//! more: the context is rebuilt when no sequence is running.

use super::exit::{register_exit_handler, stopping, Inside, Stage};
use super::generate::{Advance, Sequence, BATCH};
use super::LlamaCppError;
use crate::llm::Finish;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;
use std::collections::VecDeque;
use std::num::NonZeroU32;
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex};

/// The per-slot context grows in steps of this many positions.
const GROWTH: u32 = 1024;

/// A prompt is read in pieces that end at multiples of this many positions (or at the prompt's end), and a
/// reused prefix ends on such a multiple. llama.cpp computes a token differently depending on the shape
/// of the batch it is read in (attention for one query takes another path than for a block of queries), so
/// this is what makes reuse exact: every prompt token is read in the same piece, at the same positions,
/// over the same cached keys and values, whether the prefix before it was reused or read again. Smaller
/// pieces reuse more of a shared prefix but read a long prompt in more steps (BENCHMARKS.md, "Prompt-prefix
/// reuse", has the figures at this size).
const PIECE: usize = 64;

/// Serialises the decoding steps of every model that did not ask for its own cores
/// ([`LlamaCppBuilder::parallel`](super::LlamaCppBuilder::parallel) not set): each step already keeps all
/// cores busy, and two models decoding at once on the same cores would only slow both.
static SHARED_CORES: Mutex<()> = Mutex::new(());

/// The handle requests are submitted through; the scheduler thread ends when it is dropped.
///
/// A panic inside a decoding step is caught there: the requests the step was decoding fail with
/// [`LlamaCppError::Panicked`], the context is rebuilt, and the thread goes on serving. Should the thread
/// end all the same, the next request starts a new one.
pub(super) struct Scheduler {
    /// The model the thread decodes with.
    model: Arc<LlamaModel>,
    /// The model's name, for the thread's.
    name: String,
    /// The context's settings.
    config: Config,
    jobs: Mutex<Option<Sender<Sequence>>>,
    /// Makes the next decoding step panic (tests of panic containment).
    #[cfg(test)]
    pub(super) panic_next_step: Arc<std::sync::atomic::AtomicBool>,
}

impl Scheduler {
    /// The scheduler of `model` (named `name`), its thread not started yet.
    pub(super) fn new(model: Arc<LlamaModel>, name: String, config: Config) -> Self {
        Scheduler {
            model,
            name,
            config,
            jobs: Mutex::new(None),
            #[cfg(test)]
            panic_next_step: Arc::default(),
        }
    }

    /// Queues `sequence`, starting the thread on first use, and again if it has ended.
    pub(super) fn submit(&self, sequence: Sequence) -> Result<(), LlamaCppError> {
        let mut jobs = self.jobs.lock().unwrap_or_else(|p| p.into_inner());
        let sequence = match jobs.as_ref() {
            Some(sender) => match sender.send(sequence) {
                Ok(()) => return Ok(()),
                // The thread has ended: a new one takes over.
                Err(failed) => failed.0,
            },
            None => sequence,
        };
        match self.start() {
            Ok(sender) => {
                let sent = sender.send(sequence).map_err(|failed| {
                    failed
                        .0
                        .conclude(Err(LlamaCppError::engine("the scheduler has stopped")));
                    LlamaCppError::engine("the scheduler has stopped")
                });
                *jobs = Some(sender);
                sent
            }
            Err(e) => {
                sequence.conclude(Err(e.clone()));
                Err(e)
            }
        }
    }

    /// Starts a scheduler thread and returns the sender of its requests.
    fn start(&self) -> Result<Sender<Sequence>, LlamaCppError> {
        let (sender, receiver) = std::sync::mpsc::channel();
        let model = Arc::clone(&self.model);
        let config = self.config.clone();
        #[cfg(test)]
        let config = Config {
            panic_next_step: Arc::clone(&self.panic_next_step),
            ..config
        };
        std::thread::Builder::new()
            .name(format!("llama-{}", self.name))
            .spawn(move || run(&model, &config, &receiver))
            .map_err(|e| {
                LlamaCppError::engine(format!("cannot start the scheduler thread: {e}"))
            })?;
        Ok(sender)
    }
}

/// The settings of the context, from the engine's (the thread must not keep the engine alive).
#[derive(Clone)]
pub(super) struct Config {
    backend: &'static LlamaBackend,
    slots: usize,
    context_size: u32,
    threads: i32,
    reuse_prefix: bool,
    shared_cores: bool,
    #[cfg(test)]
    panic_next_step: Arc<std::sync::atomic::AtomicBool>,
}

impl Config {
    /// The settings of a context on `backend`: `slots` sequences, up to `context_size` tokens, decoded
    /// on `threads` threads; a request starts from the longest cached prefix of its prompt with
    /// `reuse_prefix`; decoding steps take turns with other models with `shared_cores`.
    pub(super) fn new(
        backend: &'static LlamaBackend,
        slots: usize,
        context_size: u32,
        threads: i32,
        reuse_prefix: bool,
        shared_cores: bool,
    ) -> Self {
        Config {
            backend,
            slots,
            context_size,
            threads,
            reuse_prefix,
            shared_cores,
            #[cfg(test)]
            panic_next_step: Arc::default(),
        }
    }
}

/// One sequence slot of the context.
#[derive(Default)]
struct Slot {
    /// The tokens whose keys and values are in the cache for this slot's sequence, from position 0.
    cached: Vec<LlamaToken>,
    /// How many of `cached` were read as prompt pieces ([`PIECE`]); the rest are an answer's tokens,
    /// read a step at a time, and are never reused.
    read: usize,
    /// The request being generated, if any.
    active: Option<Active>,
}

struct Active {
    sequence: Sequence,
    /// Tokens to decode next: the rest of the prompt, or the tokens chosen last step.
    pending: Vec<LlamaToken>,
}

/// The context and its size.
struct Context<'m> {
    context: LlamaContext<'m>,
    per_slot: u32,
}

/// The scheduler thread: waits for requests, and decodes while any sequence is running.
fn run(model: &Arc<LlamaModel>, config: &Config, jobs: &Receiver<Sequence>) {
    let mut waiting: VecDeque<Sequence> = VecDeque::new();
    let mut slots: Vec<Slot> = (0..config.slots).map(|_| Slot::default()).collect();
    let mut context: Option<Context<'_>> = None;
    let mut batch = LlamaBatch::new(BATCH as usize, 1);
    let mut open = true;
    loop {
        let busy = slots.iter().any(|s| s.active.is_some());
        // Block only when there is nothing to decode.
        if !busy && waiting.is_empty() {
            if !open {
                break;
            }
            match jobs.recv() {
                Ok(sequence) => waiting.push_back(sequence),
                Err(_) => break,
            }
        }
        loop {
            match jobs.try_recv() {
                Ok(sequence) => waiting.push_back(sequence),
                Err(std::sync::mpsc::TryRecvError::Empty) => break,
                Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                    open = false;
                    break;
                }
            }
        }
        let inside = match Inside::enter() {
            Ok(inside) => inside,
            Err(e) => {
                abandon(&mut slots, &mut waiting, &e.to_string());
                continue;
            }
        };
        let cores = config
            .shared_cores
            .then(|| SHARED_CORES.lock().unwrap_or_else(|p| p.into_inner()));
        let stepped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            if let Err(e) = admit(model, config, &mut context, &mut slots, &mut waiting) {
                // The context could not be created: every waiting request fails with the reason.
                let message = e.to_string();
                for sequence in waiting.drain(..) {
                    sequence.conclude(Err(LlamaCppError::engine(&message)));
                }
            }
            #[cfg(test)]
            if config
                .panic_next_step
                .swap(false, std::sync::atomic::Ordering::AcqRel)
            {
                panic!("a panic injected into the decoding step");
            }
            if let Some(ctx) = context.as_mut() {
                step(model, ctx, &mut batch, &mut slots);
            }
        }));
        if let Err(payload) = stepped {
            recover(&mut context, &mut slots, &panic_message(payload.as_ref()));
        }
        drop(cores);
        drop(inside);
    }
    // The model is going away: free the context inside llama.cpp, counted as such (or, when the process
    // is exiting, leave it to the process's end: llama.cpp's static objects may be gone already).
    match Inside::enter() {
        Ok(_inside) => drop(context),
        Err(_) => std::mem::forget(context),
    }
}

/// After a panic in a decoding step: the running requests fail with `message`, and the context (whose
/// cache may hold half a step) is dropped, to be created afresh for the next request. Waiting requests
/// keep their place.
fn recover(context: &mut Option<Context<'_>>, slots: &mut [Slot], message: &str) {
    tracing::error!("the llama.cpp scheduler panicked while decoding ({message}); recovering");
    for slot in slots.iter_mut() {
        if let Some(active) = slot.active.take() {
            let error = LlamaCppError::Panicked {
                message: message.to_owned(),
            };
            // A sequence left half-updated may panic again as it ends: it is then dropped, which
            // closes its channel.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                active.sequence.conclude(Err(error));
            }));
        }
        slot.cached.clear();
        slot.read = 0;
    }
    *context = None;
}

/// The text of a panic's payload (`panic!` gives a `&str` or a `String`).
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}

/// Ends every request: the process is exiting.
fn abandon(slots: &mut [Slot], waiting: &mut VecDeque<Sequence>, reason: &str) {
    for slot in slots.iter_mut() {
        if let Some(active) = slot.active.take() {
            active
                .sequence
                .conclude(Ok(Finish::Other(reason.to_owned())));
        }
    }
    for sequence in waiting.drain(..) {
        sequence.conclude(Err(LlamaCppError::engine(reason)));
    }
}

/// Gives free slots to waiting requests, in order, creating or growing the context as needed.
fn admit<'m>(
    model: &'m LlamaModel,
    config: &Config,
    context: &mut Option<Context<'m>>,
    slots: &mut [Slot],
    waiting: &mut VecDeque<Sequence>,
) -> Result<(), LlamaCppError> {
    // A request whose reader has gone never takes a slot.
    let mut kept = VecDeque::with_capacity(waiting.len());
    for mut sequence in waiting.drain(..) {
        if sequence.wanted() {
            kept.push_back(sequence);
        } else {
            sequence.conclude(Ok(Finish::Other("cancelled".into())));
        }
    }
    *waiting = kept;
    while let Some(front) = waiting.front() {
        let Some(free) = slots.iter().position(|s| s.active.is_none()) else {
            return Ok(());
        };
        let needs = front.needs().min(config.context_size);
        let fits = context.as_ref().is_some_and(|c| c.per_slot >= needs);
        if !fits {
            if slots.iter().any(|s| s.active.is_some()) {
                return Ok(()); // grown once the running sequences are done
            }
            let per_slot = needs
                .max(context.as_ref().map_or(0, |c| c.per_slot))
                .div_ceil(GROWTH)
                .saturating_mul(GROWTH)
                .min(config.context_size);
            *context = None; // the old one is freed before the new one is allocated
            for slot in slots.iter_mut() {
                slot.cached.clear();
                slot.read = 0;
            }
            *context = Some(new_context(model, config, per_slot)?);
        }
        let Some(ctx) = context.as_mut() else {
            return Ok(());
        };
        let Some(mut sequence) = waiting.pop_front() else {
            return Ok(());
        };
        let reused = if config.reuse_prefix {
            share_prefix(&mut ctx.context, slots, free, &sequence.prompt)
        } else {
            forget(&mut ctx.context, slots, free);
            0
        };
        sequence.admit(reused);
        let pending = sequence.prompt.get(reused..).unwrap_or_default().to_vec();
        if let Some(slot) = slots.get_mut(free) {
            slot.active = Some(Active { sequence, pending });
        }
    }
    Ok(())
}

fn new_context<'m>(
    model: &'m LlamaModel,
    config: &Config,
    per_slot: u32,
) -> Result<Context<'m>, LlamaCppError> {
    let slots = u32::try_from(config.slots).unwrap_or(u32::MAX);
    let n_ctx = per_slot.saturating_mul(slots);
    let params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(n_ctx))
        .with_n_batch(BATCH)
        .with_n_ubatch(BATCH)
        .with_n_seq_max(slots)
        .with_kv_unified(false)
        .with_n_threads(config.threads)
        .with_n_threads_batch(config.threads);
    let context = model.new_context(config.backend, params).map_err(|e| {
        LlamaCppError::engine(format!(
            "cannot create a context of {n_ctx} tokens ({slots} sequences of {per_slot}): {e}"
        ))
    })?;
    Ok(Context { context, per_slot })
}

/// Empties slot `free`'s cache.
fn forget(context: &mut LlamaContext<'_>, slots: &mut [Slot], free: usize) {
    let seq = u32::try_from(free).unwrap_or(u32::MAX);
    let _ = context.clear_kv_cache_seq(Some(seq), None, None);
    if let Some(slot) = slots.get_mut(free) {
        slot.cached.clear();
        slot.read = 0;
    }
}

/// Puts the longest reusable prefix of `prompt` into slot `free` and returns its length: tokens some slot
/// read as prompt pieces, ending at a multiple of [`PIECE`], at most all but the prompt's last token
/// (whose scores must be computed).
fn share_prefix(
    context: &mut LlamaContext<'_>,
    slots: &mut [Slot],
    free: usize,
    prompt: &[LlamaToken],
) -> usize {
    let longest = |slot: &Slot| {
        let common = slot
            .cached
            .iter()
            .take(slot.read)
            .zip(prompt)
            .take_while(|(a, b)| a == b)
            .count()
            .min(prompt.len().saturating_sub(1));
        common - common % PIECE
    };
    let own = slots.get(free).map_or(0, longest);
    let best = slots
        .iter()
        .enumerate()
        .map(|(i, s)| (longest(s), i))
        .max_by_key(|&(len, i)| (len, usize::from(i == free)));
    let seq = u32::try_from(free).unwrap_or(u32::MAX);
    let (Ok(dst), Ok(keep)) = (i32::try_from(free), u32::try_from(own)) else {
        forget(context, slots, free);
        return 0;
    };
    match best {
        Some((len, src)) if len > own && src != free => {
            let (Ok(src_id), Ok(end)) = (i32::try_from(src), u32::try_from(len)) else {
                forget(context, slots, free);
                return 0;
            };
            forget(context, slots, free);
            // Each sequence has its own cache stream: llama.cpp copies a whole stream (a partial range
            // would abort the process), then the copy's tail past the prefix is dropped.
            let copied = context.copy_kv_cache_seq(src_id, dst, None, None).is_ok()
                && matches!(
                    context.clear_kv_cache_seq(Some(seq), Some(end), None),
                    Ok(true)
                );
            if !copied {
                forget(context, slots, free);
                return 0;
            }
            if let Some(slot) = slots.get_mut(free) {
                slot.cached = prompt.get(..len).unwrap_or_default().to_vec();
                slot.read = len;
            }
            len
        }
        _ => {
            // Keep this slot's own prefix, drop the rest (a model whose memory cannot drop a tail, such
            // as a recurrent one, starts over).
            let trimmed = context.clear_kv_cache_seq(Some(seq), Some(keep), None);
            if !matches!(trimmed, Ok(true)) {
                forget(context, slots, free);
                return 0;
            }
            if let Some(slot) = slots.get_mut(free) {
                slot.cached.truncate(own);
                slot.read = own;
            }
            own
        }
    }
}

/// Where a sequence's tokens went in the batch.
struct Taken {
    slot: usize,
    count: usize,
    /// The batch index of its last token when its scores were requested.
    logits: Option<i32>,
}

/// One decoding step: a batch with the next tokens of every running sequence, then each sequence
/// chooses what comes next.
fn step(model: &LlamaModel, ctx: &mut Context<'_>, batch: &mut LlamaBatch<'_>, slots: &mut [Slot]) {
    // Cancelled requests free their slot before the batch is built.
    for slot in slots.iter_mut() {
        if let Some(active) = slot.active.as_mut() {
            if !active.sequence.wanted() {
                if let Some(active) = slot.active.take() {
                    active
                        .sequence
                        .conclude(Ok(Finish::Other("cancelled".into())));
                }
            }
        }
    }
    batch.clear();
    let mut taken: Vec<Taken> = Vec::new();
    let mut room = BATCH as usize;
    // Answers first (a token or a few each), then prompts in the room that is left.
    let mut order: Vec<usize> = (0..slots.len()).collect();
    order.sort_by_key(|&i| {
        slots
            .get(i)
            .and_then(|s| s.active.as_ref())
            .map_or(usize::MAX, |a| a.pending.len())
    });
    for i in order {
        let Some(slot) = slots.get(i) else { continue };
        let Some(active) = slot.active.as_ref() else {
            continue;
        };
        if room == 0 || active.pending.is_empty() {
            continue;
        }
        let start = slot.cached.len();
        let mut count = active.pending.len().min(room);
        if start < active.sequence.prompt.len() {
            count = count.min(PIECE - start % PIECE);
        }
        let all = count == active.pending.len();
        let mut logits = None;
        for (k, token) in active.pending.iter().take(count).enumerate() {
            let last = all && k + 1 == count;
            let pos = i32::try_from(start + k).unwrap_or(i32::MAX);
            if last {
                logits = Some(batch.n_tokens());
            }
            let seq = i32::try_from(i).unwrap_or(0);
            if batch.add(*token, pos, &[seq], last).is_err() {
                break;
            }
        }
        room -= count;
        taken.push(Taken {
            slot: i,
            count,
            logits,
        });
    }
    if taken.is_empty() {
        return;
    }
    if let Err(e) = ctx.context.decode(batch) {
        // Nothing of this batch is trusted: its sequences fail, and their cache is dropped.
        for t in &taken {
            if let Some(slot) = slots.get_mut(t.slot) {
                if let Some(active) = slot.active.take() {
                    active
                        .sequence
                        .conclude(Err(LlamaCppError::engine(format!("decoding failed: {e}"))));
                }
            }
            forget(&mut ctx.context, slots, t.slot);
        }
        return;
    }
    register_exit_handler(Stage::Decoded);
    let exiting = stopping();
    for t in taken {
        let Some(slot) = slots.get_mut(t.slot) else {
            continue;
        };
        let Some(active) = slot.active.as_mut() else {
            continue;
        };
        let decoded: Vec<LlamaToken> = active.pending.drain(..t.count).collect();
        slot.cached.extend(decoded);
        slot.read = slot.cached.len().min(active.sequence.prompt.len());
        if exiting {
            if let Some(active) = slot.active.take() {
                active
                    .sequence
                    .conclude(Ok(Finish::Other("the process is exiting".into())));
            }
            continue;
        }
        let Some(index) = t.logits else { continue };
        let pos = u32::try_from(slot.cached.len()).unwrap_or(u32::MAX);
        let logits = ctx.context.get_logits_ith(index);
        match active.sequence.advance(logits, pos, model) {
            Advance::Decode(tokens) => active.pending = tokens,
            Advance::Finish(finish) => {
                if let Some(active) = slot.active.take() {
                    active.sequence.conclude(Ok(finish));
                }
            }
            Advance::Fail(e) => {
                if let Some(active) = slot.active.take() {
                    active.sequence.conclude(Err(e));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{real_model, LlamaCpp};
    use super::*;
    use crate::llm::{ChatRequest, LlmError};
    use std::sync::atomic::Ordering;

    #[test]
    fn a_panic_in_a_decoding_step_fails_its_request_and_the_next_one_runs() {
        // A model of its own: the injected panic must reach this model's scheduler only.
        let llm = LlamaCpp::builder(real_model().model_path())
            .build()
            .unwrap();
        let request = ChatRequest::new("Say yes.").with_max_tokens(4);
        let first = llm.generate(&request, |_| true).unwrap();
        assert!(first.response.usage.completion_tokens > 0);

        llm.engine
            .scheduler
            .panic_next_step
            .store(true, Ordering::Release);
        let err = llm.generate(&request, |_| true).unwrap_err();
        assert!(
            matches!(&err, LlmError::LlamaCpp(LlamaCppError::Panicked { message })
                if message.contains("injected")),
            "{err}"
        );
        // The scheduler kept serving: the next requests run on a fresh context, and answer as before.
        for _ in 0..2 {
            let next = llm.generate(&request, |_| true).unwrap();
            assert_eq!(next.response.text, first.response.text);
        }
    }
}
