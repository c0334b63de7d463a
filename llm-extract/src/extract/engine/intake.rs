//! The items of a list answer as the decoder completes them: held back while they might be a loop,
//! dropped when a follow-up answer repeats what was kept (beyond the times the input holds it),
//! counted against `max_items`, handed on.

use crate::extract::loops::{leaves, InputText, LoopGuard, Occurrences};
use crate::extract::loops::{ItemGuard, Verdict};
use crate::extract::setup::target::Found;
use crate::llm::Finish;
use crate::parse::{Fix, LineEvent, Skipped, WithJson};
use serde_json::Value;
use std::collections::HashMap;

/// The items kept so far, across every answer of one extraction.
#[derive(Default)]
pub(super) struct Kept {
    /// The items' JSON, in order.
    pub json: Vec<Value>,
    /// Their canonical forms, with how many times each was kept, to drop duplicates.
    seen: HashMap<String, usize>,
    /// The fixes that made them parse.
    pub fixes: Vec<Fix>,
}

/// Takes the decoder's events of one answer: holds back copies of recent items, drops duplicates of
/// kept items in follow-up answers, counts, and hands items on. A follow-up item equal to a kept one is
/// kept while the input text holds it more times than it was kept (the same train twice in a
/// timetable); past that it is a restatement, dropped.
pub(super) struct Intake<'k, 's, O> {
    kept: &'k mut Kept,
    sink: &'k mut (dyn FnMut(O) + Send + 's),
    dedupe: bool,
    max_items: Option<usize>,
    guard: ItemGuard<O>,
    /// The input text, to tell real repeats from copies.
    input_text: InputText,
    count: Occurrences,
    /// The items this answer handed on.
    pub items: usize,
    /// The lines this answer skipped.
    pub skipped: Vec<Skipped>,
    /// Bytes of the answer fed to the decoder so far.
    pub bytes: usize,
    /// Where the last item that repeated nothing ended (about: the end of its delta).
    pub new_item_at: usize,
    /// The keys of the items this stream of the answer delivered (handed on, or owed and met again).
    emitted: Vec<String>,
    /// Items a broken stream of this answer handed on before it was sent again, by key, with how many
    /// times each: the new stream's first matching items are already with the caller.
    owed: HashMap<String, usize>,
}

impl<'k, 's, O> Intake<'k, 's, O> {
    /// An intake handing items to `sink`; with `dedupe`, items equal to one kept are dropped (once
    /// kept as many times as `input_text` holds them).
    pub fn new(
        kept: &'k mut Kept,
        sink: &'k mut (dyn FnMut(O) + Send + 's),
        dedupe: bool,
        max_items: Option<usize>,
        (guard, input_text): (LoopGuard, &InputText),
    ) -> Self {
        Intake {
            kept,
            sink,
            dedupe,
            max_items,
            guard: ItemGuard::new(guard, input_text),
            input_text: input_text.clone(),
            count: input_text.counter(),
            items: 0,
            skipped: Vec::new(),
            bytes: 0,
            new_item_at: 0,
            emitted: Vec::new(),
            owed: HashMap::new(),
        }
    }

    /// Takes events; returns why generation must stop, if it must.
    pub fn take_all(&mut self, events: Vec<LineEvent<WithJson<O>>>) -> Option<Finish> {
        for event in events {
            let item = match event {
                LineEvent::Skipped(skipped) => {
                    self.skipped.push(skipped);
                    continue;
                }
                LineEvent::Item(item) => item,
            };
            let key = canonical(&item.value.json);
            match self.guard.offer(item, &key) {
                Verdict::Hold => {}
                Verdict::Loop => return Some(Finish::Loop),
                Verdict::Emit(items) => {
                    self.new_item_at = self.bytes;
                    for item in items {
                        if let Some(stop) = self.emit(item) {
                            return Some(stop);
                        }
                    }
                }
            }
        }
        None
    }

    /// The stream starts over (it broke and was sent again): what was handed on becomes owed, and the
    /// count of this answer's items and skipped lines starts from nothing.
    pub fn restart(&mut self, guard: LoopGuard) {
        for key in self.emitted.drain(..) {
            *self.owed.entry(key).or_insert(0) += 1;
        }
        self.guard = ItemGuard::new(guard, &self.input_text);
        self.items = 0;
        self.skipped.clear();
        self.bytes = 0;
        self.new_item_at = 0;
    }

    /// Hands on the items the guard still holds (they were not a loop after all).
    pub fn flush(&mut self) {
        for item in self.guard.release() {
            if self.emit(item).is_some() {
                break;
            }
        }
    }

    fn emit(&mut self, item: Found<O>) -> Option<Finish> {
        let key = canonical(&item.value.json);
        if let Some(owed) = self.owed.get_mut(&key).filter(|n| **n > 0) {
            // With the caller already; owed again if this stream breaks too.
            *owed -= 1;
            self.emitted.push(key);
            return None;
        }
        // Stop at the first item past the maximum, not at the last one allowed: an answer with exactly
        // `max_items` items then ends normally, with its usage.
        if self
            .max_items
            .is_some_and(|max| self.kept.json.len() >= max)
        {
            return Some(Finish::MaxItems);
        }
        let times = self.kept.seen.get(&key).copied().unwrap_or(0);
        if self.dedupe && times > 0 && times >= self.count.value_in_text(leaves(&item.value.json)) {
            return None;
        }
        self.emitted.push(key.clone());
        self.kept.seen.insert(key, times + 1);
        self.kept.json.push(item.value.json);
        self.kept.fixes.extend(item.fixes);
        self.items += 1;
        (self.sink)(item.value.value);
        None
    }
}

/// A string equal for equal JSON values whatever their key order, for deduplication.
fn canonical(value: &Value) -> String {
    fn write(value: &Value, out: &mut String) {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                out.push('{');
                for (i, key) in keys.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&Value::String(key.clone()).to_string());
                    out.push(':');
                    if let Some(v) = map.get(key) {
                        write(v, out);
                    }
                }
                out.push('}');
            }
            Value::Array(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write(v, out);
                }
                out.push(']');
            }
            scalar => out.push_str(&scalar.to_string()),
        }
    }
    let mut out = String::new();
    write(value, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_ignores_key_order() {
        assert_eq!(
            canonical(&json!({"a": 1, "b": [true, {"d": null, "c": "x"}]})),
            canonical(&json!({"b": [true, {"c": "x", "d": null}], "a": 1}))
        );
        assert_ne!(canonical(&json!({"a": 1})), canonical(&json!({"a": "1"})));
    }
}
