//! What a streamed answer cost when the backend does not say: servers send their counts only in the
//! summary at the end, so an answer the extraction stops early (a loop, `max_items`, a dropped stream) or
//! a stream that breaks would otherwise cost nothing.
//!
//! The estimate: one completion token per streamed text event (Ollama streams one NDJSON line per
//! token, OpenAI-compatible servers one SSE chunk per token, the embedded engine one piece per token)
//! and one prompt token per four bytes of the prompt's text and schema. It is marked
//! [`Usage::estimated`].

use crate::llm::{ChatRequest, Usage};
use std::sync::{Mutex, PoisonError};

/// Bytes of prompt text per estimated token (English text and JSON average about four).
const BYTES_PER_TOKEN: u64 = 4;

/// Counts one answer's streamed events.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Meter {
    prompt_estimate: u64,
    events: u64,
}

impl Meter {
    /// A meter for the answer to `request`.
    pub fn new(request: &ChatRequest) -> Self {
        let text: usize = request.system.as_ref().map_or(0, String::len)
            + request
                .messages
                .iter()
                .map(|m| m.content.len())
                .sum::<usize>()
            + request
                .schema
                .as_ref()
                .map_or(0, |schema| schema.to_string().len());
        let bytes = u64::try_from(text).unwrap_or(u64::MAX);
        Meter {
            prompt_estimate: bytes.div_ceil(BYTES_PER_TOKEN),
            events: 0,
        }
    }

    /// One streamed text event (answer or reasoning).
    pub fn event(&mut self) {
        self.events = self.events.saturating_add(1);
    }

    /// The usage so far, estimated.
    pub fn estimate(&self) -> Usage {
        if self.events == 0 {
            return Usage::default();
        }
        Usage {
            prompt_tokens: self.prompt_estimate,
            completion_tokens: self.events,
            estimated: true,
            ..Usage::default()
        }
    }

    /// The backend's counts, with each missing (zero) count of an answer that produced text estimated.
    pub fn settle(&self, reported: Usage) -> Usage {
        if self.events == 0 {
            return reported;
        }
        let mut usage = reported;
        if usage.prompt_tokens == 0 {
            usage.prompt_tokens = self.prompt_estimate;
            usage.estimated = true;
        }
        if usage.completion_tokens == 0 {
            usage.completion_tokens = self.events;
            usage.estimated = true;
        }
        usage
    }
}

/// The running cost of an extraction, shared with whoever may want it before the extraction ends (an
/// [`ExtractStream`](crate::extract::ExtractStream) its caller stops reading): the finished attempts plus the
/// estimate of the one streaming now.
#[derive(Debug, Default)]
pub(crate) struct Spent {
    state: Mutex<(Usage, Usage)>,
}

impl Spent {
    /// The answer streaming now has cost `current` so far.
    pub fn streaming(&self, current: Usage) {
        self.state.lock().unwrap_or_else(PoisonError::into_inner).1 = current;
    }

    /// An attempt ended, costing `usage`.
    pub fn settled(&self, usage: Usage) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.0 += usage;
        state.1 = Usage::default();
    }

    /// Everything spent so far.
    pub fn total(&self) -> Usage {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.0 + state.1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_with_text_never_costs_zero() {
        let request = ChatRequest::new("x".repeat(40)).with_system("y".repeat(40));
        let mut meter = Meter::new(&request);
        assert_eq!(meter.estimate(), Usage::default());
        meter.event();
        meter.event();
        let estimate = meter.estimate();
        assert_eq!(
            (estimate.prompt_tokens, estimate.completion_tokens),
            (20, 2)
        );
        assert!(estimate.estimated);
        let reported = Usage {
            prompt_tokens: 30,
            completion_tokens: 3,
            estimated: false,
            ..Usage::default()
        };
        assert_eq!(meter.settle(reported), reported);
        let settled = meter.settle(Usage::default());
        assert_eq!(settled, estimate);
    }

    #[test]
    fn spent_adds_finished_attempts_and_the_current_one() {
        let spent = Spent::default();
        let one = Usage {
            prompt_tokens: 1,
            completion_tokens: 2,
            estimated: false,
            ..Usage::default()
        };
        spent.settled(one);
        spent.streaming(one);
        assert_eq!(spent.total().total(), 6);
        spent.settled(one);
        assert_eq!(spent.total().total(), 6);
    }
}
