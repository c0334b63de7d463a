//! What the extraction loop does about a model that loops: hold back items that repeat recent ones
//! until it is clear whether they were a loop ([`ItemGuard`]), and change what produced the loop in the
//! next attempt ([`recover`]). The detectors themselves are in `parse::repetition`.

use super::target::Found;
use crate::llm::ChatRequest;
use crate::parse::{ItemVerdict, ItemWindow, LoopGuard};
use std::hash::{Hash, Hasher};

/// Holds back items that repeat a recent one until a new item arrives (then they were legitimate) or
/// too many arrive in a row (a loop: they are dropped).
pub(crate) struct ItemGuard<O> {
    window: ItemWindow,
    held: Vec<Found<O>>,
}

/// What to do with an item offered to the [`ItemGuard`].
pub(crate) enum Verdict<O> {
    /// Hand these on (the held items, then the new one).
    Emit(Vec<Found<O>>),
    /// Wait.
    Hold,
    /// The model is looping: stop.
    Loop,
}

impl<O> ItemGuard<O> {
    pub fn new(guard: LoopGuard) -> Self {
        ItemGuard {
            window: ItemWindow::new(guard),
            held: Vec::new(),
        }
    }

    /// Offers a completed item with its canonical text.
    pub fn offer(&mut self, item: Found<O>, canonical: &str) -> Verdict<O> {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        canonical.hash(&mut hasher);
        match self.window.offer(hasher.finish()) {
            ItemVerdict::New => {
                let mut out = std::mem::take(&mut self.held);
                out.push(item);
                Verdict::Emit(out)
            }
            ItemVerdict::Recurs => {
                self.held.push(item);
                Verdict::Hold
            }
            ItemVerdict::Loop => {
                self.held.clear();
                Verdict::Loop
            }
        }
    }

    /// The items still held when the answer ended without a loop: they were legitimate.
    pub fn release(&mut self) -> Vec<Found<O>> {
        std::mem::take(&mut self.held)
    }
}

/// Changes `request` for the attempt after the `loops`-th loop (1 for the first): a repeat penalty,
/// and from the second loop on also a small temperature with a fixed seed (the caller's, else the
/// guard's). A caller's higher temperature or penalty is kept.
pub(crate) fn recover(request: &mut ChatRequest, guard: &LoopGuard, loops: u32) {
    let penalty = request
        .repeat_penalty
        .map_or(guard.recovery_penalty, |p| p.max(guard.recovery_penalty));
    request.repeat_penalty = Some(penalty);
    if loops >= 2 {
        let temperature = request.temperature.map_or(guard.recovery_temperature, |t| {
            t.max(guard.recovery_temperature)
        });
        request.temperature = Some(temperature);
        request.seed = Some(request.seed.unwrap_or(guard.recovery_seed));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn item(json: Value) -> Found<Value> {
        Found {
            value: json.clone(),
            json,
            repairs: Vec::new(),
            line: 1,
        }
    }

    fn offer(guard: &mut ItemGuard<Value>, json: Value) -> Verdict<Value> {
        let text = json.to_string();
        guard.offer(item(json), &text)
    }

    #[test]
    fn the_guard_releases_pairs_and_stops_loops() {
        let mut guard = ItemGuard::new(LoopGuard::default());
        assert!(matches!(offer(&mut guard, json!(1)), Verdict::Emit(v) if v.len() == 1));
        assert!(matches!(offer(&mut guard, json!(1)), Verdict::Hold));
        assert!(matches!(offer(&mut guard, json!(2)), Verdict::Emit(v) if v.len() == 2));
        assert!(matches!(offer(&mut guard, json!(2)), Verdict::Hold));
        assert!(matches!(offer(&mut guard, json!(2)), Verdict::Loop));
        assert!(guard.release().is_empty());
        let mut off = ItemGuard::new(LoopGuard::off());
        for _ in 0..5 {
            assert!(matches!(offer(&mut off, json!(1)), Verdict::Emit(_)));
        }
    }

    #[test]
    fn a_cycle_of_two_items_is_a_loop() {
        let mut guard = ItemGuard::new(LoopGuard::default());
        for n in [1, 2] {
            assert!(matches!(offer(&mut guard, json!(n)), Verdict::Emit(_)));
        }
        assert!(matches!(offer(&mut guard, json!(1)), Verdict::Hold));
        assert!(matches!(offer(&mut guard, json!(2)), Verdict::Loop));
    }

    #[test]
    fn recovery_adds_a_penalty_then_a_temperature_with_a_seed() {
        let guard = LoopGuard::default();
        let mut request = ChatRequest::new("x").with_temperature(0.0);
        recover(&mut request, &guard, 1);
        assert_eq!(request.repeat_penalty, Some(1.3));
        assert_eq!((request.temperature, request.seed), (Some(0.0), None));
        recover(&mut request, &guard, 2);
        assert_eq!((request.temperature, request.seed), (Some(0.3), Some(7)));
        let mut hot = ChatRequest::new("x").with_temperature(0.9).with_seed(1);
        recover(&mut hot, &guard, 2);
        assert_eq!((hot.temperature, hot.seed), (Some(0.9), Some(1)));
    }
}
