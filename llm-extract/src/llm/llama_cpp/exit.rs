//! Process exit and llama.cpp: no thread may be inside llama.cpp while the process exits.
//!
//! `std::process::exit` (and returning from `main` with threads still running) runs the C and C++ exit
//! handlers: llama.cpp's and ggml's static objects are destroyed (the backend registry, the CPU backend's
//! weight-repacking traits, ...) while other threads keep running. A thread still inside llama.cpp then
//! reads freed memory, and the process dies with SIGSEGV after it has printed its result. The threads at
//! risk are the models' scheduler threads (`scheduler.rs`): nothing joins them, `std::process::exit` does
//! not wait for them, and a generation can outlive its reader.
//!
//! Two rules keep them out of the way:
//! - A generation frees what it alone holds in llama.cpp (its samplers) *before* it sends its last event
//!   (`generate.rs`), and a scheduler thread counts as inside llama.cpp ([`Inside`]) only during a
//!   decoding step, never while it waits for work: a caller that got its answer and exits waits at most
//!   for the step other sequences are in.
//! - A generation that is still running at exit (its stream was dropped, or never read to the end) is
//!   stopped: an exit handler sets [`stopping`], which the scheduler reads after each step, and waits
//!   until every thread has left llama.cpp ([`Inside`]). That takes at most one decoding step. No new
//!   generation starts after that, and a model's context is then left to the process's end. The handler
//!   is registered after the first model is loaded and again after its first batch is decoded, so it runs
//!   before the destructors of the static objects llama.cpp creates lazily (exit handlers run in reverse
//!   order of registration).
//!
//! The llama.cpp backend itself lives in a `static` that is never dropped (`engine.rs`), so
//! `llama_backend_free` never runs under a model or a context.

use super::LlamaCppError;
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, Once};

/// Set by the exit handler: generations stop at their next step.
static STOPPING: AtomicBool = AtomicBool::new(false);
/// How many threads are inside llama.cpp on behalf of a request or a model.
static INSIDE: Mutex<usize> = Mutex::new(0);
/// Signalled each time a thread leaves.
static LEFT: Condvar = Condvar::new();

thread_local! {
    /// How many [`Inside`] guards this thread holds (so the exit handler does not wait for itself when
    /// `exit` is called from inside a generation, e.g. from `LlamaCpp::generate`'s callback).
    static HELD: Cell<usize> = const { Cell::new(0) };
}

/// Whether the process is exiting: a generation that sees this stops at once.
pub(super) fn stopping() -> bool {
    STOPPING.load(Ordering::Acquire)
}

/// Held by a thread while it works inside llama.cpp; the exit handler waits until none is held.
#[must_use = "the thread counts as inside llama.cpp only while the guard lives"]
pub(super) struct Inside(());

impl Inside {
    /// Counts this thread as inside llama.cpp until the guard is dropped.
    ///
    /// # Errors
    /// [`LlamaCppError::Engine`] once the process is exiting: nothing new starts inside llama.cpp then.
    pub(super) fn enter() -> Result<Self, LlamaCppError> {
        let mut inside = INSIDE.lock().unwrap_or_else(|p| p.into_inner());
        // Read under the lock the exit handler sets it under: either the handler waits for this thread,
        // or this thread sees that the process is exiting.
        if stopping() {
            return Err(LlamaCppError::engine("the process is exiting"));
        }
        *inside += 1;
        HELD.with(|held| held.set(held.get() + 1));
        Ok(Inside(()))
    }
}

impl Drop for Inside {
    fn drop(&mut self) {
        HELD.with(|held| held.set(held.get().saturating_sub(1)));
        let mut inside = INSIDE.lock().unwrap_or_else(|p| p.into_inner());
        *inside = inside.saturating_sub(1);
        LEFT.notify_all();
    }
}

/// The exit handler: stops every generation and waits until no other thread is inside llama.cpp.
extern "C" fn wait_for_generations() {
    let own = HELD.try_with(Cell::get).unwrap_or(0);
    let mut inside = INSIDE.lock().unwrap_or_else(|p| p.into_inner());
    STOPPING.store(true, Ordering::Release);
    while *inside > own {
        inside = LEFT.wait(inside).unwrap_or_else(|p| p.into_inner());
    }
}

/// When the exit handler is registered.
#[derive(Debug, Clone, Copy)]
pub(super) enum Stage {
    /// A model was loaded (the backend and the weights' static objects exist).
    ModelLoaded,
    /// A batch was decoded (the static objects of computing exist too).
    Decoded,
}

/// Registers the exit handler once per [`Stage`]: as early as a generation can start, and again once the
/// last of llama.cpp's lazily created static objects exist, so that one registration runs before their
/// destructors (exit handlers run in reverse order; the earlier one then finds nothing left to wait for).
pub(super) fn register_exit_handler(stage: Stage) {
    static LOADED: Once = Once::new();
    static DECODED: Once = Once::new();
    let once = match stage {
        Stage::ModelLoaded => &LOADED,
        Stage::Decoded => &DECODED,
    };
    once.call_once(|| {
        extern "C" {
            fn atexit(handler: extern "C" fn()) -> std::os::raw::c_int;
        }
        // SAFETY: `atexit` is the C library's (ISO C, always linked); it stores the pointer to a function
        // that lives as long as the program and runs it from `exit`. The handler takes no argument,
        // never unwinds (it only locks, waits and stores) and touches only statics and this thread's
        // counter (read with `try_with`, which is fine while thread-locals are being torn down).
        let failed = unsafe { atexit(wait_for_generations) } != 0;
        if failed {
            tracing::warn!(
                "cannot register the llama.cpp exit handler: exiting during a generation may crash"
            );
        }
    });
}
