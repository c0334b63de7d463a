//! Loop detection in a streamed answer: a small state machine fed every delta, and a window over the
//! items a list has completed.
//!
//! A small model under a grammar often degenerates into text that is valid JSON but never ends: a digit
//! run inside a number or string (`"125000000000…`), a short phrase repeated, whitespace between tokens,
//! or list items that cycle (`A, B, A, B, …`). The grammar cannot stop it, so the extraction loop asks
//! these detectors after every delta and drops the stream when one fires.
//!
//! - [`LoopDetector`] sees the bytes. For each period `p` up to [`LoopGuard::max_period`] it keeps
//!   the number of consecutive bytes equal to the byte `p` positions back (a ring buffer of the
//!   last bytes), so a substring of period `p` repeated is seen in `O(max_period)` work per byte,
//!   with no re-scan of the prefix. It also counts one byte repeated inside a string or number, and
//!   whitespace between tokens (the crate's JSON lexer, `lex`, read byte by byte, tells the two
//!   apart), and, when given
//!   a bound ([`LoopDetector::max_string`]), the characters of the current string value: a small
//!   model often writes the rest of the source into the first string (`"A-77, customer_name:
//!   Greenleaf Design, …`) for hundreds of bytes before anything repeats, and a value cannot hold
//!   more than the source it is extracted from ([`LoopGuard::string_margin`]).
//! - [`ItemWindow`] sees the completed items (as a hash of their canonical text): an item equal to one of
//!   the last [`LoopGuard::item_window`] items is a copy; [`LoopGuard::item_copies`] copies in a row
//!   are a loop (one item again and again, or a cycle of several).
//!
//! - [`LoopDetector`] also follows the arrays and objects of the answer, at any depth, and offers the
//!   children of each (an array's elements, an object's member values) to a window of its own, like
//!   items: a child of at least [`LoopGuard::min_element`] bytes (canonical JSON, whitespace between
//!   tokens left out) equal to one of the container's last [`LoopGuard::item_window`] such children
//!   is a copy, and [`LoopGuard::element_copies`] copies in a row are a loop
//!   ([`LoopKind::Elements`], with the JSON pointer of the container). Shorter children are never
//!   offered, so `[1, 1, 2]` or `["yes", "yes", "yes", "yes"]` are no loop, and a long one between
//!   them does not break a run: the rule is "the same element of at least `min_element` bytes (or a
//!   cycle of such elements) copied `element_copies` times in a row".
//!
//! - Repeats are relative to the input ([`LoopDetector::input_text`], [`ItemWindow::offer_held`](super::ItemWindow::offer_held)): a
//!   receipt with four identical coffee lines, a timetable with the same train twice, are real data.
//!   A run of equal items or elements, or a period whose unit crosses JSON structure (`{…}, {…}, {…}`),
//!   is a loop only past the number of times the input text holds what it copies ([`InputText`]: the
//!   fewest occurrences of the value's leaves that occur at all). A run past that count is still a
//!   loop, started after the copies the text holds, so a model that writes a real line fifty times is
//!   stopped a few copies past the real ones. Without an input text every repeat is a copy, as before.
//!
//! All are linear in the answer; they hold a bounded amount of state, plus one frame per open array
//! or object; counting in the input costs at most a bounded number of linear scans of it per answer
//! ([`Occurrences`]). The defaults and the measurements behind them are in BENCHMARKS.md ("Loops").

use super::elements::Elements;
use super::guard::LoopGuard;
use super::occurrences::{InputText, Occurrences};
use super::unit::{self, Role};
use crate::parse::lex::{Class, Lexer, Syntax};
use crate::report::{Loop, LoopKind};
use std::collections::VecDeque;

/// What the detector's lexer reads: JSON's double-quoted strings, nothing irregular recorded.
const SYNTAX: Syntax = Syntax {
    report: false,
    ..Syntax::STRICT
};

/// The byte-level detector: feed it every delta of one answer.
#[derive(Debug, Clone)]
pub struct LoopDetector {
    guard: LoopGuard,
    /// Bytes seen so far.
    offset: usize,
    /// The last `2 * max_period` bytes, newest last, and what each was to the lexer (a period's unit,
    /// whole in any `2p - 1` bytes of it, for [`LoopDetector::input_text`](super::LoopDetector::input_text)).
    recent: VecDeque<u8>,
    roles: VecDeque<Role>,
    /// The input text, for a period that repeats values ([`LoopDetector::input_text`](super::LoopDetector::input_text)); `None` without.
    count: Option<Occurrences>,
    /// For period `p` (index `p - 2`): consecutive bytes equal to the byte `p` back.
    matches: Vec<usize>,
    /// The current run of one byte, and the byte.
    run: usize,
    last: Option<u8>,
    /// Whitespace bytes in a row outside strings.
    whitespace: usize,
    /// The JSON lexer, byte by byte: inside a string (with its escapes) or a number.
    lexer: Lexer,
    /// The longest string value in characters (0: no bound), the current string's characters so far,
    /// and the offset of its first byte.
    max_string: usize,
    string_chars: usize,
    string_start: usize,
    /// The open arrays and objects, for [`LoopKind::Elements`].
    elements: Elements,
    found: Option<Loop>,
}

impl LoopDetector {
    /// A detector with these settings.
    pub fn new(guard: LoopGuard) -> Self {
        let periods = guard.max_period.saturating_sub(1);
        LoopDetector {
            guard,
            offset: 0,
            recent: VecDeque::with_capacity(2 * guard.max_period),
            roles: VecDeque::with_capacity(2 * guard.max_period),
            count: None,
            matches: vec![0; periods],
            run: 0,
            last: None,
            whitespace: 0,
            lexer: Lexer::new(SYNTAX),
            max_string: 0,
            string_chars: 0,
            string_start: 0,
            elements: Elements::new(guard),
            found: None,
        }
    }

    /// Bounds the characters of a string value (an escape sequence counts as its characters after the
    /// backslash): a longer one is a [`LoopKind::LongString`]. `None` leaves strings unbounded. The
    /// extraction sets it from [`LoopGuard::max_string`].
    pub fn max_string(mut self, chars: Option<usize>) -> Self {
        self.max_string = chars.map_or(0, |n| n.max(1));
        self
    }

    /// Judges repeated elements against the input text `input_text`: an element repeated no more times
    /// than the text holds it is real data (a receipt's identical lines), and only a run past that is
    /// a [`LoopKind::Elements`] ([`ItemWindow::offer_held`](super::ItemWindow::offer_held)). Without an input text every repeat counts.
    ///
    /// ```
    /// use llm_extract::extract::{LoopDetector, LoopGuard, InputText};
    ///
    /// let line = r#"{"item": "Flat white", "price": 3.5}"#;
    /// let answer = format!(r#"{{"lines": [{line}, {line}, {line}, {line}]}}"#);
    /// let receipt = InputText::new(&"Flat white 3.50\n".repeat(4));
    /// let mut detector = LoopDetector::new(LoopGuard::default()).input_text(&receipt);
    /// assert_eq!(detector.feed(answer.as_bytes()), None);
    /// // Without the receipt, the same four lines are a loop.
    /// assert!(LoopDetector::new(LoopGuard::default()).feed(answer.as_bytes()).is_some());
    /// ```
    pub fn input_text(mut self, input_text: &InputText) -> Self {
        self.elements.set_count(input_text.counter());
        self.count = Some(input_text.counter());
        self
    }

    /// Feeds the next bytes of the answer; returns the loop once one is seen (and from then on).
    pub fn feed(&mut self, bytes: &[u8]) -> Option<Loop> {
        if self.found.is_some()
            || !(self.guard.bytes_on() || self.max_string > 0 || self.elements.is_on())
        {
            return self.found.clone();
        }
        for &byte in bytes {
            if let Some(found) = self.step(byte) {
                self.found = Some(found);
                return self.found.clone();
            }
        }
        None
    }

    /// The bytes fed so far.
    pub fn offset(&self) -> usize {
        self.offset
    }

    fn step(&mut self, byte: u8) -> Option<Loop> {
        let at = self.offset;
        self.offset += 1;
        let guard = self.guard;
        let found = |kind, length: usize| Loop {
            kind,
            start: at + 1 - length,
            detected_at: at + 1,
            path: None,
        };

        // What the byte is to the lexer: in a string (its quotes, its text, an escaping backslash),
        // in a number, or between tokens.
        let class = self.lexer.step(byte);
        let role = Role::of_class(class);
        let (was_in_string, in_string) = role.in_string();
        if class == Class::StringOpen {
            self.string_chars = 0;
            self.string_start = at + 1;
        }
        // Characters of the string value: not a UTF-8 continuation byte, not an escaping backslash.
        if class == Class::StringText && byte & 0xC0 != 0x80 {
            self.string_chars += 1;
            if self.max_string > 0 && self.string_chars > self.max_string {
                return Some(Loop {
                    kind: LoopKind::LongString,
                    start: self.string_start,
                    detected_at: at + 1,
                    path: None,
                });
            }
        }
        if self.elements.is_on() {
            if let Some(found) = self.elements.step(byte, at, (was_in_string, in_string)) {
                return Some(found);
            }
        }
        let between_tokens = role == Role::Outside;
        if between_tokens && byte.is_ascii_whitespace() {
            self.whitespace += 1;
            if guard.max_whitespace > 0 && self.whitespace > guard.max_whitespace {
                return Some(found(LoopKind::Whitespace, self.whitespace));
            }
        } else {
            self.whitespace = 0;
        }

        // One byte repeated, inside a string or a number.
        if self.last == Some(byte) {
            self.run += 1;
        } else {
            self.run = 1;
            self.last = Some(byte);
        }
        let in_value = matches!(
            class,
            Class::StringText | Class::StringEscape | Class::Number
        );
        if in_value && guard.max_run > 0 && self.run > guard.max_run {
            return Some(found(LoopKind::Run, self.run));
        }

        // Periods 2..=max_period: consecutive bytes equal to the one p back.
        if guard.max_period >= 2 {
            let len = self.recent.len();
            let mut hit = None;
            for (i, count) in self.matches.iter_mut().enumerate() {
                let p = i + 2;
                let same = len >= p && self.recent.get(len - p) == Some(&byte);
                if same {
                    *count += 1;
                    let span = *count + p;
                    let needed = (guard.min_times.max(2) * p).max(guard.min_span);
                    if span >= needed && hit.is_none() {
                        hit = Some(found(LoopKind::Period(p), span));
                    }
                } else {
                    *count = 0;
                }
            }
            if self.recent.len() >= 2 * guard.max_period {
                self.recent.pop_front();
                self.roles.pop_front();
            }
            self.recent.push_back(byte);
            self.roles.push_back(role);
            let hit = hit.and_then(|hit| self.beyond_the_text(hit));
            // Whitespace between tokens is left to its own check (and its own bound).
            if let Some(hit) = hit.filter(|h| self.whitespace < h.detected_at - h.start) {
                // A run of one byte also repeats with every period; report it as the run it is.
                if self.run >= hit.detected_at - hit.start {
                    return Some(found(LoopKind::Run, self.run));
                }
                return Some(hit);
            }
        }
        None
    }
}

impl LoopDetector {
    /// A period `hit` that repeats values (its unit crosses JSON structure: `{…}, {…}, {…}`) as far as
    /// the input text holds them: no loop while the copies are no more than the text holds of the
    /// unit's leaves, and past that a loop that starts after the copies the text holds. A period inside
    /// one value, or without an input text, is the hit as it was.
    fn beyond_the_text(&mut self, mut hit: Loop) -> Option<Loop> {
        let (LoopKind::Period(p), Some(count)) = (hit.kind, self.count.as_mut()) else {
            return Some(hit);
        };
        // Every leaf of the unit is whole in the last `2p - 1` bytes, whichever its rotation.
        let skip = self.recent.len().saturating_sub(2 * p - 1);
        let unit: Vec<(u8, Role)> = self
            .recent
            .iter()
            .zip(self.roles.iter())
            .skip(skip)
            .map(|(byte, role)| (*byte, *role))
            .collect();
        if !unit::is_structural(&unit) {
            return Some(hit);
        }
        let held = count.value_in_text(unit::leaves(&unit));
        let copies = (hit.detected_at - hit.start) / p.max(1);
        if copies <= held {
            return None;
        }
        hit.start += held * p;
        Some(hit)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{ItemVerdict, ItemWindow};
    use super::*;

    fn first_loop(text: &str, guard: LoopGuard) -> Option<Loop> {
        let mut detector = LoopDetector::new(guard);
        // Fed in small pieces, like a stream.
        text.as_bytes()
            .chunks(3)
            .find_map(|chunk| detector.feed(chunk))
    }

    #[test]
    fn a_digit_run_in_a_string_stops_after_max_run() {
        let text = format!(r#"{{"invoice_number": "125{}"#, "0".repeat(200));
        let found = first_loop(&text, LoopGuard::default()).unwrap();
        assert_eq!(found.kind, LoopKind::Run);
        assert_eq!(found.start, text.find("00").unwrap());
        assert_eq!(found.detected_at - found.start, 33);
    }

    #[test]
    fn a_digit_run_in_a_number_stops_too() {
        let text = format!(r#"{{"total": 1{}"#, "9".repeat(100));
        assert_eq!(
            first_loop(&text, LoopGuard::default()).map(|l| l.kind),
            Some(LoopKind::Run)
        );
    }

    #[test]
    fn a_repeated_phrase_is_a_period() {
        let text = format!(r#"{{"note": "{}"#, "the sum is due. ".repeat(20));
        let found = first_loop(&text, LoopGuard::default()).unwrap();
        assert_eq!(found.kind, LoopKind::Period(16));
        // The repeated region starts with the first copy; it is seen after 40 bytes of it (three
        // copies of 16 bytes are 48).
        assert_eq!(found.start, text.find("the").unwrap());
        assert_eq!(found.detected_at - found.start, 48);
    }

    #[test]
    fn whitespace_between_tokens_is_bounded_but_not_inside_strings() {
        let text = format!("{{\"a\": 1,{}", " ".repeat(60));
        assert_eq!(
            first_loop(&text, LoopGuard::default()).map(|l| l.kind),
            Some(LoopKind::Whitespace)
        );
        // Spaces inside a string are text, and 20 of them are no run.
        let text = format!("{{\"a\": \"x{}y\"}}", " ".repeat(20));
        assert_eq!(first_loop(&text, LoopGuard::default()), None);
    }

    #[test]
    fn ordinary_json_is_not_a_loop() {
        let text = r#"{"items": [{"name": "Ada", "kind": "person"}, {"name": "Bob", "kind": "person"}, {"name": "Lyon", "kind": "place"}, {"name": "IBM", "kind": "company"}]}"#;
        assert_eq!(first_loop(text, LoopGuard::default()), None);
        let escaped = format!("\"{}\"", "\\\"".repeat(10));
        assert_eq!(first_loop(&escaped, LoopGuard::default()), None);
    }

    #[test]
    fn a_string_longer_than_the_input_is_a_long_string() {
        // invoice-03 of the evaluation set (120 characters): the model writes the rest of the invoice
        // into the first value.
        let input = "Hi Tom Becker, attached is invoice #A-77 for £96.50. Please pay by the thirtieth of June 2025. Greenleaf Design, Leeds.";
        let guard = LoopGuard::default();
        let bound = guard.max_string(input.chars().count(), None);
        let runaway = "{\"invoice_number\": \"A-77, customer_name:Greenleaf Design, customer_address:Leeds, total:96.50, currency:GBP, due_date:2025-06-30, paid:false, notes:Please pay by the thirtieth of June 2025, invoice_date:2025-06-01";
        let mut detector = LoopDetector::new(guard).max_string(bound);
        let found = detector.feed(runaway.as_bytes()).unwrap();
        assert_eq!(found.kind, LoopKind::LongString);
        assert_eq!(found.start, 20);
        assert_eq!(
            found.to_string(),
            "a string longer than the input from byte 20 (seen at byte 140)"
        );
        // The same value within the bound, and any value without one, is not a loop.
        let fits = LoopDetector::new(guard)
            .max_string(Some(runaway.len()))
            .feed(runaway.as_bytes());
        assert_eq!(fits, None);
        assert_eq!(LoopDetector::new(guard).feed(runaway.as_bytes()), None);
    }

    #[test]
    fn the_string_bound_respects_max_length_and_off() {
        let guard = LoopGuard::default().string_margin(Some(32));
        assert_eq!(guard.max_string(10, None), Some(42));
        assert_eq!(guard.min_string(64).max_string(10, None), Some(64));
        assert_eq!(guard.max_string(10, Some(1000)), Some(1000));
        assert_eq!(guard.string_margin(None).max_string(10, Some(1000)), None);
        assert!(LoopGuard::off().string_margin(Some(0)).is_on());
    }

    #[test]
    fn off_sees_nothing() {
        let text = "0".repeat(1000);
        assert_eq!(first_loop(&text, LoopGuard::off()), None);
        let mut items = ItemWindow::new(LoopGuard::off());
        assert!((0..10).all(|_| items.offer(1) == ItemVerdict::New));
    }

    /// The event of the issue: the whole input sentence written into `attendees` again and again.
    fn looping_attendees(copies: usize) -> String {
        let sentence = "Team offsite with Maria Lopez and Ken Ito at the Oslo office on 12 May.";
        let copies = vec![format!("\"{sentence}\""); copies].join(", ");
        format!(r#"{{"title": "Team offsite", "attendees": [{copies}], "place": "Oslo"}}"#)
    }

    #[test]
    fn an_array_repeating_one_long_element_is_a_loop_with_its_path() {
        let text = looping_attendees(57);
        let found = first_loop(&text, LoopGuard::default()).unwrap();
        assert_eq!(found.kind, LoopKind::Elements);
        assert_eq!(found.path.as_deref(), Some("/attendees"));
        // It starts after the first copy and is seen at the end of the fourth.
        let open = text.find('[').unwrap();
        let first = open + text[open..].find("\", \"").unwrap() + 1;
        assert_eq!(found.start, first);
        // Each further copy is `, "…"`: the quoted sentence and two bytes.
        let copy = first - open - 1 + 2;
        assert_eq!(found.detected_at, first + 3 * copy + 1);
        assert!(found
            .to_string()
            .contains("elements repeating in `/attendees`"));
        // Three copies are no loop; the same answer with the check off is none either.
        assert_eq!(
            first_loop(&looping_attendees(3), LoopGuard::default()),
            None
        );
        let off = LoopGuard::default().elements(16, 0);
        assert_eq!(first_loop(&text, off), None);
    }

    #[test]
    fn short_elements_repeated_on_purpose_are_no_loop() {
        for text in [
            r#"{"scores": [1, 1, 2, 1, 1, 1, 1, 1]}"#,
            r#"{"answers": ["yes", "yes", "yes", "yes", "yes", "no"]}"#,
            r#"{"a": "same", "b": "same", "c": "same", "d": "same", "e": "same"}"#,
        ] {
            assert_eq!(first_loop(text, LoopGuard::default()), None, "{text}");
        }
    }

    #[test]
    fn objects_cycling_deep_inside_are_a_loop_at_their_path() {
        let line =
            |n: u32| format!(r#"{{"description": "Water damage repair {n}", "amount": 1200}}"#);
        let cycle = [1, 2, 1, 2, 1, 2].map(line).join(",\n    ");
        let text = format!(r#"{{"claim": {{"id": "C-1", "lines": [{cycle}]}}}}"#);
        let found = first_loop(&text, LoopGuard::default()).unwrap();
        assert_eq!(found.kind, LoopKind::Elements);
        assert_eq!(found.path.as_deref(), Some("/claim/lines"));
        // Distinct lines, and the same cycle one element short, are not.
        let distinct = (1..=8).map(line).collect::<Vec<_>>().join(", ");
        let text = format!(r#"{{"lines": [{distinct}]}}"#);
        assert_eq!(first_loop(&text, LoopGuard::default()), None);
        let text = format!(r#"{{"lines": [{}]}}"#, [1, 2, 1, 2].map(line).join(", "));
        assert_eq!(first_loop(&text, LoopGuard::default()), None);
    }

    #[test]
    fn the_same_value_across_the_fields_of_an_object_is_a_loop() {
        let value = "\"Invoice A-77 from Greenleaf Design\"";
        let text = format!(
            r#"{{"items": [{{"number": {value}, "customer": {value}, "address": {value}, "notes": {value}}}]}}"#
        );
        let found = first_loop(&text, LoopGuard::default()).unwrap();
        assert_eq!(found.kind, LoopKind::Elements);
        assert_eq!(found.path.as_deref(), Some("/items/0"));
    }

    #[test]
    fn whitespace_does_not_make_elements_differ_and_keys_are_escaped_in_the_path() {
        let element = r#"{"name": "Ada Lovelace", "role": "speaker"}"#;
        let spaced = r#"{ "name" : "Ada Lovelace" ,"role":"speaker" }"#;
        let text = format!(r#"{{"a/b~c": [{element}, {spaced}, {element},{spaced}, {element}]}}"#);
        let found = first_loop(&text, LoopGuard::default()).unwrap();
        assert_eq!(found.path.as_deref(), Some("/a~1b~0c"));
        // A space inside a string does make them differ.
        let other = r#"{"name": "Ada  Lovelace", "role": "speaker"}"#;
        let text = format!(r#"{{"x": [{element}, {other}, {element}, {other}]}}"#);
        assert_eq!(first_loop(&text, LoopGuard::default()), None);
    }

    #[test]
    fn four_identical_coffee_lines_the_receipt_holds_are_no_loop() {
        let receipt = "Café Lumen\nFlat white 3.50\nFlat white 3.50\nFlat white 3.50\nFlat white 3.50\nCroissant 2.20\nTotal 16.20";
        let line = r#"{"item": "Flat white", "price": 3.50}"#;
        let text = format!(
            r#"{{"lines": [{line}, {line}, {line}, {line}, {{"item": "Croissant", "price": 2.20}}]}}"#
        );
        let guard = LoopGuard::default();
        let mut detector = LoopDetector::new(guard).input_text(&InputText::new(receipt));
        assert_eq!(detector.feed(text.as_bytes()), None);
        // The same answer without the receipt is stopped, as before (the line is short enough to be a
        // repeated period before it is four elements).
        let found = first_loop(&text, guard).map(|l| l.kind);
        assert_eq!(found, Some(LoopKind::Period(line.len() + 2)));
        // Seven copies are more than the receipt holds: a loop again, after the four it holds.
        let seven = format!(r#"{{"lines": [{}]}}"#, [line; 7].join(", "));
        let mut detector = LoopDetector::new(guard).input_text(&InputText::new(receipt));
        let found = detector.feed(seven.as_bytes()).expect("a loop");
        let fifth = seven.find(line).unwrap_or(0) + 4 * (line.len() + 2);
        assert!(found.start + 4 >= fifth, "{found:?} {fifth}");
    }

    #[test]
    fn a_value_nested_in_an_element_counts_for_it() {
        // The leaves of a nested object are the element's: the train number is the rare one.
        let board = "08:15 IC 512 Utrecht\n08:45 IC 514 Utrecht\n08:15 IC 512 Utrecht\n09:15 IC 516 Utrecht\n08:15 IC 512 Utrecht\n08:15 IC 512 Utrecht";
        let row = r#"{"train": {"number": "IC 512", "to": "Utrecht"}, "time": "08:15"}"#;
        let text = format!(r#"{{"departures": [{}]}}"#, [row; 4].join(", "));
        let guard = LoopGuard::default();
        let mut detector = LoopDetector::new(guard).input_text(&InputText::new(board));
        assert_eq!(detector.feed(text.as_bytes()), None);
        // Eight rows are more than the board holds.
        let text = format!(r#"{{"departures": [{}]}}"#, [row; 8].join(", "));
        let mut detector = LoopDetector::new(guard).input_text(&InputText::new(board));
        assert!(detector.feed(text.as_bytes()).is_some());
    }

    #[test]
    fn the_attendees_loop_is_stopped_where_it_was_with_the_input_given() {
        // The sentence the model copies is in the input once: the same stop as without the input.
        let input = "Team offsite with Maria Lopez and Ken Ito at the Oslo office on 12 May.";
        let text = looping_attendees(57);
        let with = LoopDetector::new(LoopGuard::default())
            .input_text(&InputText::new(input))
            .feed(text.as_bytes());
        assert_eq!(with, first_loop(&text, LoopGuard::default()));
        assert!(with.is_some());
    }

    #[test]
    fn items_the_text_holds_are_new_and_a_run_past_them_is_a_loop() {
        let mut items = ItemWindow::new(LoopGuard::default());
        // The same train twice on a board that lists it twice: two new items.
        assert_eq!(items.offer_held(1, || 2), ItemVerdict::New);
        assert_eq!(items.offer_held(1, || 2), ItemVerdict::New);
        assert_eq!(items.offer_held(1, || 2), ItemVerdict::Copy);
        assert_eq!(items.offer_held(1, || 2), ItemVerdict::Loop);
        // Asked only for a repeat.
        let mut asked = 0;
        let mut items = ItemWindow::new(LoopGuard::default());
        for hash in 0..5 {
            items.offer_held(hash, || {
                asked += 1;
                0
            });
        }
        assert_eq!(asked, 0);
    }

    #[test]
    fn items_that_cycle_are_a_loop_and_a_pair_is_not() {
        let mut items = ItemWindow::new(LoopGuard::default());
        assert_eq!(items.offer(1), ItemVerdict::New);
        assert_eq!(items.offer(1), ItemVerdict::Copy);
        assert_eq!(items.offer(2), ItemVerdict::New);
        assert_eq!(items.offer(3), ItemVerdict::New);
        assert_eq!(items.offer(2), ItemVerdict::Copy);
        assert_eq!(items.offer(3), ItemVerdict::Loop);
    }
}
