//! What the extraction loop does about a model that loops: hold back items that repeat recent ones
//! until it is clear whether they were a loop ([`ItemGuard`]), and change what produced the loop in the
//! next attempt ([`recover`], by the [`Recovery`] settings), and the same for a repair that gets back
//! the answer it rejected ([`Rejected`], [`unstick`]). Repeats are judged against the input
//! ([`Bounds`]): an item or element repeated no more times than the text holds it is real data.
//!
//! The detectors beside it: the thresholds that tell a loop ([`LoopGuard`], `guard.rs`), the
//! byte-level detector fed every delta ([`LoopDetector`], `detector.rs`, with the repeated unit of a
//! period in `unit.rs` and the elements of arrays and objects in `elements.rs`), the window over
//! completed items ([`ItemWindow`], `window.rs`), and how many times the input holds a value
//! ([`InputText`], `occurrences.rs`). What a loop was is recorded in the report
//! ([`Loop`](crate::report::Loop)).

use super::setup::target::{Found, Target};
use crate::llm::ChatRequest;
use crate::parse::{self, ParseOptions};
use crate::report::{Loop, LoopKind};
use crate::schema::SchemaSet;
use serde_json::{Map, Value};
use std::hash::{Hash, Hasher};

mod detector;
mod elements;
mod guard;
mod occurrences;
mod unit;
mod window;

pub use detector::LoopDetector;
pub use guard::LoopGuard;
pub(crate) use occurrences::leaves;
pub use occurrences::{InputText, Occurrences};
pub use window::{ItemVerdict, ItemWindow};

/// What every answer of one extraction is watched against, from its input: the longest string value
/// it may hold, and the text that tells a real repeat from a loop.
#[derive(Debug, Clone, Default)]
pub(crate) struct Bounds {
    /// See [`max_string`].
    pub max_string: Option<usize>,
    /// The input's text (its string variables, one after the other).
    pub input_text: InputText,
}

impl Bounds {
    /// The bounds of an extraction from `vars` into `schema`.
    pub fn of(guard: &LoopGuard, vars: &Map<String, Value>, schema: &Value) -> Self {
        let text: Vec<&str> = vars.values().filter_map(Value::as_str).collect();
        Bounds {
            max_string: max_string(guard, vars, schema),
            input_text: InputText::new(&text.join("\n")),
        }
    }

    /// A detector for one answer.
    pub fn detector(&self, guard: LoopGuard) -> LoopDetector {
        LoopDetector::new(guard)
            .max_string(self.max_string)
            .input_text(&self.input_text)
    }
}

/// The longest string value an answer may hold ([`LoopGuard::max_string`]): the input's characters
/// (every variable, a string counted as its text, anything else as its JSON) plus the margin, at least
/// the largest `maxLength` in `schema`.
pub(crate) fn max_string(
    guard: &LoopGuard,
    vars: &Map<String, Value>,
    schema: &Value,
) -> Option<usize> {
    guard.string_margin?;
    let input: usize = vars
        .values()
        .map(|value| match value {
            Value::String(text) => text.chars().count(),
            other => other.to_string().chars().count(),
        })
        .sum();
    guard.max_string(input, largest_max_length(schema))
}

/// The largest `maxLength` anywhere in `schema` (walked without recursion: linear in its size).
fn largest_max_length(schema: &Value) -> Option<usize> {
    let mut largest = None;
    let mut stack = vec![schema];
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(map) => {
                if let Some(n) = map.get("maxLength").and_then(Value::as_u64) {
                    let n = usize::try_from(n).unwrap_or(usize::MAX);
                    largest = Some(largest.map_or(n, |l: usize| l.max(n)));
                }
                stack.extend(map.values());
            }
            Value::Array(values) => stack.extend(values),
            _ => {}
        }
    }
    largest
}

/// The most a looped answer `text` held before the loop `found`, as a text `target` takes with
/// `options` (which salvage: a cut value is closed): the text before the loop began; else, for a
/// string that ran on ([`LoopKind::LongString`]), the text up to where it was stopped with the string
/// closed there; else the text up to where the loop was seen. Each either as it stands or with every
/// missing required property its schema lets be `null` set to `null` (a loop in the first field
/// leaves the others unwritten). `None` when none is a value.
pub(crate) fn salvage<G: Target>(
    target: &G,
    text: &str,
    found: &Loop,
    options: &ParseOptions,
) -> Option<String> {
    let schema = target.schema().generic();
    let open = SchemaSet::new("Any", Value::Object(Map::new()));
    let seen = text.get(..found.detected_at);
    let closed = match found.kind {
        LoopKind::LongString => seen.map(|cut| {
            // Without the character past the bound, nor a backslash left open.
            let mut cut = cut.to_owned();
            cut.pop();
            if cut.ends_with('\\') {
                cut.pop();
            }
            cut.push('"');
            cut
        }),
        _ => seen.map(str::to_owned),
    };
    let candidates = [text.get(..found.start).map(str::to_owned), closed];
    for prefix in candidates.into_iter().flatten() {
        if target.parse_one(&prefix, options).is_ok() {
            return Some(prefix);
        }
        let Ok(parsed) = parse::from_str_value(&prefix, &open, options) else {
            continue;
        };
        let mut value = parsed.value;
        if fill_nulls(&mut value, schema) {
            let filled = value.to_string();
            if target.parse_one(&filled, options).is_ok() {
                return Some(filled);
            }
        }
    }
    None
}

/// Sets to `null` each required property missing from the object `value` whose schema in the object
/// `schema` admits `null`; true if it set any.
fn fill_nulls(value: &mut Value, schema: &Value) -> bool {
    let (Some(object), Some(required)) = (
        value.as_object_mut(),
        schema.get("required").and_then(Value::as_array),
    ) else {
        return false;
    };
    let properties = schema.get("properties");
    let mut filled = false;
    for name in required.iter().filter_map(Value::as_str) {
        let nullable = properties
            .and_then(|p| p.get(name))
            .is_some_and(admits_null);
        if nullable && !object.contains_key(name) {
            object.insert(name.to_owned(), Value::Null);
            filled = true;
        }
    }
    filled
}

/// Whether a property's schema admits `null` on its face (`"type": "null"`, a list of types with
/// `"null"`, `nullable`, or an `anyOf`/`oneOf` branch that does).
fn admits_null(schema: &Value) -> bool {
    let typed = match schema.get("type") {
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(types)) => types.iter().any(|t| t == "null"),
        _ => false,
    };
    typed
        || schema.get("nullable") == Some(&Value::Bool(true))
        || ["anyOf", "oneOf"].iter().any(|key| {
            schema
                .get(*key)
                .and_then(Value::as_array)
                .is_some_and(|branches| branches.iter().any(admits_null))
        })
}

/// What the attempt after a loop changes: a repeat penalty, then also a temperature with a fixed seed
/// (set with [`Extractor::recovery`](crate::extract::Extractor::recovery)). A repair that gets back the
/// answer it rejected is sent with the same temperature and seed.
///
/// ```
/// use llm_extract::extract::{Extractor, Recovery};
/// use llm_extract::llm::{from_fn, ChatResponse};
///
/// let recovery = Recovery::default().penalty(1.5).temperature(0.4).seed(11);
/// assert_eq!((recovery.penalty, recovery.temperature, recovery.seed), (1.5, 0.4, 11));
/// let llm = from_fn(|_| async { Ok(ChatResponse::new("{}")) });
/// let extractor = Extractor::new(llm).recovery(recovery);
/// # let _ = extractor;
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Recovery {
    /// The repeat penalty of the attempt after a loop, where the backend has one (default 1.3); each
    /// further loop adds its excess again (1.6 after the second loop, 1.9 after the third).
    pub penalty: f32,
    /// The temperature of the second attempt after a loop, with a fixed seed (default 0.3; the first
    /// recovery keeps the temperature and adds only the penalty); each further loop adds it again (0.6
    /// after the third loop), up to 1.
    pub temperature: f32,
    /// The seed sent with [`Recovery::temperature`] when the caller set none (default 7).
    pub seed: u64,
}

impl Default for Recovery {
    fn default() -> Self {
        Recovery {
            penalty: 1.3,
            temperature: 0.3,
            seed: 7,
        }
    }
}

impl Recovery {
    /// Sets [`Recovery::penalty`].
    pub fn penalty(mut self, penalty: f32) -> Self {
        self.penalty = penalty;
        self
    }

    /// Sets [`Recovery::temperature`].
    pub fn temperature(mut self, temperature: f32) -> Self {
        self.temperature = temperature;
        self
    }

    /// Sets [`Recovery::seed`].
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }
}

/// Holds back items that repeat a recent one until a new item arrives (then they were legitimate) or
/// too many arrive in a row (a loop: they are dropped). An item the input text holds as many times as
/// it was offered is no copy ([`ItemWindow::offer_held`]).
pub(crate) struct ItemGuard<O> {
    window: ItemWindow,
    held: Vec<Found<O>>,
    count: Occurrences,
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
    /// A guard judging repeats against `input_text`.
    pub fn new(guard: LoopGuard, input_text: &InputText) -> Self {
        ItemGuard {
            window: ItemWindow::new(guard),
            held: Vec::new(),
            count: input_text.counter(),
        }
    }

    /// Offers a completed item with its canonical text.
    pub fn offer(&mut self, item: Found<O>, canonical: &str) -> Verdict<O> {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        canonical.hash(&mut hasher);
        let count = &mut self.count;
        let in_text = || count.value_in_text(leaves(&item.value.json));
        match self.window.offer_held(hasher.finish(), in_text) {
            ItemVerdict::New => {
                let mut out = std::mem::take(&mut self.held);
                out.push(item);
                Verdict::Emit(out)
            }
            ItemVerdict::Copy => {
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
/// recovery's). A caller's higher temperature or penalty is kept.
pub(crate) fn recover(request: &mut ChatRequest, recovery: &Recovery, loops: u32) {
    // Each further loop adds the guard's penalty again (1.3, 1.6, 1.9 ...): a recovery that looped the
    // same way shows the penalty was too weak for this answer (through an OpenAI-compatible server it
    // goes out as `frequency_penalty`, which at 0.3 can leave every greedy token as it was).
    let steps = loops.max(1) as f32;
    let wanted = 1.0 + (recovery.penalty - 1.0) * steps;
    let penalty = request.repeat_penalty.map_or(wanted, |p| p.max(wanted));
    request.repeat_penalty = Some(penalty);
    if loops >= 2 {
        let wanted = (recovery.temperature * (steps - 1.0)).min(1.0);
        let temperature = request.temperature.map_or(wanted, |t| t.max(wanted));
        request.temperature = Some(temperature);
        request.seed = Some(request.seed.unwrap_or(recovery.seed));
    }
}

/// The answers a one-value extraction rejected, to tell when a repair got the same answer back: a
/// greedy model shown its error often writes the rejected answer again, token for token, and asking
/// the same way again would only spend another attempt on it.
#[derive(Default)]
pub(crate) struct Rejected {
    seen: std::collections::HashSet<u64>,
    /// How many answers were a copy of one rejected before.
    pub(crate) copies: u32,
}

impl Rejected {
    /// Notes a rejected answer; true if it is a copy of one rejected before.
    pub fn note(&mut self, raw: &str) -> bool {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        raw.trim().hash(&mut hasher);
        let copy = !self.seen.insert(hasher.finish());
        if copy {
            self.copies += 1;
        }
        copy
    }
}

/// Changes `request` for a repair after `copies` answers that copied a rejected one (1 for the
/// first): a temperature of `copies` times the recovery temperature (at most 1), with a fixed seed
/// (the caller's, else the recovery's), so the model is no longer held to the answer it already
/// gave. A caller's higher temperature is kept.
pub(crate) fn unstick(request: &mut ChatRequest, recovery: &Recovery, copies: u32) {
    if copies == 0 {
        return;
    }
    let wanted = (recovery.temperature * copies as f32).min(1.0);
    request.temperature = Some(request.temperature.map_or(wanted, |t| t.max(wanted)));
    request.seed = Some(request.seed.unwrap_or(recovery.seed));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::WithJson;
    use serde_json::{json, Value};

    #[test]
    fn the_string_bound_is_the_input_plus_the_margin_at_least_the_largest_max_length() {
        let guard = LoopGuard::default();
        let vars = json!({ "text": "été", "n": 12345 });
        let vars = vars.as_object().cloned().unwrap_or_default();
        let open = json!({ "type": "object", "properties": { "a": { "type": "string" } } });
        // 8 characters of input and no margin: the floor.
        assert_eq!(max_string(&guard, &vars, &open), Some(32));
        let wide = LoopGuard::default().string_margin(Some(32)).min_string(0);
        assert_eq!(max_string(&wide, &vars, &open), Some(3 + 5 + 32));
        let bounded = json!({ "properties": { "a": { "anyOf": [{ "maxLength": 9 }, { "maxLength": 400 }] } } });
        assert_eq!(max_string(&guard, &vars, &bounded), Some(400));
        assert_eq!(max_string(&LoopGuard::off(), &vars, &open), None);
    }

    fn item(json: Value) -> Found<Value> {
        Found {
            value: WithJson {
                value: json.clone(),
                json,
            },
            line: 1,
            fixes: Vec::new(),
        }
    }

    fn offer(guard: &mut ItemGuard<Value>, json: Value) -> Verdict<Value> {
        let text = json.to_string();
        guard.offer(item(json), &text)
    }

    #[test]
    fn the_guard_releases_pairs_and_stops_loops() {
        let mut guard = ItemGuard::new(LoopGuard::default(), &InputText::default());
        assert!(matches!(offer(&mut guard, json!(1)), Verdict::Emit(v) if v.len() == 1));
        assert!(matches!(offer(&mut guard, json!(1)), Verdict::Hold));
        assert!(matches!(offer(&mut guard, json!(2)), Verdict::Emit(v) if v.len() == 2));
        assert!(matches!(offer(&mut guard, json!(2)), Verdict::Hold));
        assert!(matches!(offer(&mut guard, json!(2)), Verdict::Loop));
        assert!(guard.release().is_empty());
        let mut off = ItemGuard::new(LoopGuard::off(), &InputText::default());
        for _ in 0..5 {
            assert!(matches!(offer(&mut off, json!(1)), Verdict::Emit(_)));
        }
    }

    #[test]
    fn items_the_input_holds_are_handed_on_and_a_run_past_them_stops() {
        let board = InputText::new("Ferry board: 09:00 F1 Vlieland | 09:00 F1 Vlieland | 09:00 F1 Vlieland | 11:30 F2 Terschelling");
        let ferry = json!({"time": "09:00", "line": "F1", "destination": "Vlieland"});
        let mut guard = ItemGuard::new(LoopGuard::default(), &board);
        for _ in 0..3 {
            assert!(matches!(offer(&mut guard, ferry.clone()), Verdict::Emit(v) if v.len() == 1));
        }
        // A fourth and fifth are more than the board holds: held, then a loop.
        assert!(matches!(offer(&mut guard, ferry.clone()), Verdict::Hold));
        assert!(matches!(offer(&mut guard, ferry), Verdict::Loop));
    }

    #[test]
    fn the_bounds_read_the_input_text() {
        let vars = json!({ "text": "Milk 1L 1.09\nMilk 1L 1.09", "n": 3 });
        let vars = vars.as_object().cloned().unwrap_or_default();
        let bounds = Bounds::of(&LoopGuard::default(), &vars, &json!({}));
        assert_eq!(bounds.input_text.counter().value_in_text(["Milk 1L"]), 2);
        assert_eq!(bounds.max_string, Some(32));
    }

    #[test]
    fn a_cycle_of_two_items_is_a_loop() {
        let mut guard = ItemGuard::new(LoopGuard::default(), &InputText::default());
        for n in [1, 2] {
            assert!(matches!(offer(&mut guard, json!(n)), Verdict::Emit(_)));
        }
        assert!(matches!(offer(&mut guard, json!(1)), Verdict::Hold));
        assert!(matches!(offer(&mut guard, json!(2)), Verdict::Loop));
    }

    #[test]
    fn recovery_adds_a_penalty_then_a_temperature_with_a_seed() {
        let guard = Recovery::default();
        let mut request = ChatRequest::new("x").with_temperature(0.0);
        recover(&mut request, &guard, 1);
        assert_eq!(request.repeat_penalty, Some(1.3));
        assert_eq!((request.temperature, request.seed), (Some(0.0), None));
        recover(&mut request, &guard, 2);
        assert_eq!((request.temperature, request.seed), (Some(0.3), Some(7)));
        assert!(
            (request.repeat_penalty.unwrap() - 1.6).abs() < 1e-6,
            "stronger each loop"
        );
        recover(&mut request, &guard, 3);
        assert!((request.repeat_penalty.unwrap() - 1.9).abs() < 1e-6);
        assert!((request.temperature.unwrap() - 0.6).abs() < 1e-6);
        let mut hot = ChatRequest::new("x").with_temperature(0.9).with_seed(1);
        recover(&mut hot, &guard, 2);
        assert_eq!((hot.temperature, hot.seed), (Some(0.9), Some(1)));
    }

    #[test]
    fn a_rejected_answer_seen_again_is_a_repeat_and_raises_the_temperature_step_by_step() {
        let mut rejected = Rejected::default();
        assert!(!rejected.note("{\"stars\": 9}"));
        assert!(
            rejected.note(" {\"stars\": 9}\n"),
            "whitespace around it does not matter"
        );
        assert!(!rejected.note("{\"stars\": 8}"));
        assert_eq!(rejected.copies, 1);

        let guard = Recovery::default();
        let mut request = ChatRequest::default();
        unstick(&mut request, &guard, 0);
        assert_eq!((request.temperature, request.seed), (None, None));
        unstick(&mut request, &guard, 1);
        assert_eq!(request.temperature, Some(guard.temperature));
        assert_eq!(request.seed, Some(guard.seed));
        let mut request = ChatRequest::default();
        unstick(&mut request, &guard, 2);
        assert_eq!(request.temperature, Some(2.0 * guard.temperature));
        let mut request = ChatRequest {
            temperature: Some(0.9),
            seed: Some(42),
            ..ChatRequest::default()
        };
        unstick(&mut request, &guard, 1);
        assert_eq!((request.temperature, request.seed), (Some(0.9), Some(42)));
        let mut request = ChatRequest::default();
        unstick(&mut request, &guard, 10);
        assert_eq!(request.temperature, Some(1.0));
    }

    #[test]
    fn recovery_follows_its_own_settings() {
        let recovery = Recovery::default().penalty(1.5).temperature(0.2).seed(3);
        let mut request = ChatRequest::new("x");
        recover(&mut request, &recovery, 2);
        assert!((request.repeat_penalty.unwrap() - 2.0).abs() < 1e-6);
        assert_eq!((request.temperature, request.seed), (Some(0.2), Some(3)));
        let mut request = ChatRequest::new("x");
        unstick(&mut request, &recovery, 2);
        assert_eq!((request.temperature, request.seed), (Some(0.4), Some(3)));
    }
}
