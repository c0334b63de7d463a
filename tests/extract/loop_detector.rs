//! Property tests of the loop detectors on synthetic streams: no false stop on long legitimate values
//! (base64, many distinct items, numbers with many distinct digits), and a stop on every loop within a
//! bounded number of bytes, however the stream is chunked.

use llm_extract::extract::{ItemVerdict, ItemWindow, LoopDetector, LoopGuard};
use llm_extract::report::{Loop, LoopKind};
use proptest::prelude::*;

/// Feeds `text` in chunks of the given sizes (cycled) and returns the first loop.
fn first_loop(text: &[u8], chunks: &[usize], guard: LoopGuard) -> Option<Loop> {
    bounded_loop(text, chunks, guard, None)
}

/// [`first_loop`] with string values bounded to `max_string` characters.
fn bounded_loop(
    text: &[u8],
    chunks: &[usize],
    guard: LoopGuard,
    max_string: Option<usize>,
) -> Option<Loop> {
    let detector = LoopDetector::new(guard).max_string(max_string);
    feed_in_chunks(detector, text, chunks)
}

/// Feeds `text` to `detector` in chunks of the given sizes (cycled) and returns the first loop.
pub(crate) fn feed_in_chunks(
    mut detector: LoopDetector,
    text: &[u8],
    chunks: &[usize],
) -> Option<Loop> {
    let mut rest = text;
    let mut sizes = chunks.iter().cycle();
    while !rest.is_empty() {
        let size = (*sizes.next().unwrap_or(&1)).clamp(1, rest.len());
        let (chunk, tail) = rest.split_at(size);
        if let Some(found) = detector.feed(chunk) {
            return Some(found);
        }
        rest = tail;
    }
    None
}

fn base64_text(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, b)| acc | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}

fn chunks() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(1usize..24, 1..8)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_long_base64_string_is_not_a_loop(bytes in prop::collection::vec(any::<u8>(), 1000..4000), sizes in chunks()) {
        let text = format!("{{\"file\": \"{}\"}}", base64_text(&bytes));
        prop_assert_eq!(first_loop(text.as_bytes(), &sizes, LoopGuard::default()), None);
    }

    #[test]
    fn a_long_list_of_distinct_items_is_not_a_loop(
        names in prop::collection::hash_set("[A-Z][a-z]{2,9}( [A-Z][a-z]{2,9})?", 20..120),
        sizes in chunks(),
    ) {
        let mut window = ItemWindow::new(LoopGuard::default());
        let mut text = String::from("{\"items\": [");
        for (i, name) in names.iter().enumerate() {
            let item = format!("{{\"name\": \"{name}\", \"kind\": \"person\", \"n\": {i}}}");
            prop_assert_eq!(window.offer(hash(&item)), ItemVerdict::New);
            if i > 0 {
                text.push_str(", ");
            }
            text.push_str(&item);
        }
        text.push_str("]}");
        prop_assert_eq!(first_loop(text.as_bytes(), &sizes, LoopGuard::default()), None);
    }

    #[test]
    fn a_number_with_many_distinct_digits_is_not_a_loop(
        digits in prop::collection::vec(0u8..10, 40..400),
        sizes in chunks(),
    ) {
        // Distinct neighbours: no digit repeated in a row, and no short period of them.
        let mut text = String::from("{\"total\": 1");
        let mut previous = 1u8;
        for d in digits {
            let d = if d == previous { (d + 1) % 10 } else { d };
            text.push(char::from(b'0' + d));
            previous = d;
        }
        text.push('}');
        let found = first_loop(text.as_bytes(), &sizes, LoopGuard::default());
        prop_assert_eq!(found, None);
    }

    #[test]
    fn a_run_inside_a_string_stops_within_the_limit(
        prefix in "[a-z0-9 ]{0,40}",
        byte in prop::sample::select(b"0123456789aZ-.".to_vec()),
        sizes in chunks(),
    ) {
        let start = format!("{{\"invoice_number\": \"{prefix}");
        let text = format!("{start}{}", char::from(byte).to_string().repeat(2000));
        let guard = LoopGuard::default();
        let found = first_loop(text.as_bytes(), &sizes, guard).expect("the run is a loop");
        // Found within the run limit of the run's start (the prefix may end with the same byte).
        prop_assert!(found.detected_at <= start.len() + guard.max_run + 1, "{found:?}");
        prop_assert!(found.start <= start.len());
    }

    #[test]
    fn a_repeated_phrase_stops_within_its_span(
        phrase in "[a-z]{2,8}( [a-z]{2,8}){0,5}\\. ",
        sizes in chunks(),
    ) {
        let start = "{\"note\": \"";
        let text = format!("{start}{}", phrase.repeat(400));
        let guard = LoopGuard::default();
        let found = first_loop(text.as_bytes(), &sizes, guard).expect("the phrase loops");
        let p = phrase.len();
        let needed = (guard.min_times * p).max(guard.min_span);
        // Seen at most one period after the span that proves it (a shorter period may be seen first).
        prop_assert!(found.detected_at <= start.len() + needed + p, "{found:?} period {p}");
        prop_assert!(found.start >= start.len().saturating_sub(1));
    }

    #[test]
    fn whitespace_without_end_stops(pad in prop::sample::select(vec![" ", "\n", "\t", " \n"]), sizes in chunks()) {
        let text = format!("{{\"a\": 1,{}", pad.repeat(500));
        let guard = LoopGuard::default();
        let found = first_loop(text.as_bytes(), &sizes, guard).expect("whitespace loops");
        prop_assert!(found.detected_at <= 8 + guard.max_whitespace + 1);
    }

    #[test]
    fn cycling_items_stop_within_two_cycles(cycle in 1usize..6, noise in 0usize..30) {
        let guard = LoopGuard::default().item_window(16);
        let mut window = ItemWindow::new(guard);
        for i in 0..noise {
            prop_assert_eq!(window.offer(hash(&format!("distinct {i}"))), ItemVerdict::New);
        }
        let mut offered = 0;
        let verdict = loop {
            let verdict = window.offer(hash(&format!("cycle {}", offered % cycle)));
            offered += 1;
            if verdict == ItemVerdict::Loop || offered > 100 {
                break verdict;
            }
        };
        prop_assert_eq!(verdict, ItemVerdict::Loop);
        prop_assert!(offered <= cycle + guard.item_copies);
    }

    #[test]
    fn a_string_within_the_bound_is_not_stopped(
        bytes in prop::collection::vec(any::<u8>(), 30..3000),
        margin in 0usize..64,
        sizes in chunks(),
    ) {
        // A long base64 value copied from an input that holds it: the input's length bounds it.
        let value = base64_text(&bytes);
        let guard = LoopGuard::default().string_margin(Some(margin));
        let bound = guard.max_string(value.len(), None);
        let text = format!("{{\"file\": \"{value}\", \"name\": \"{}\"}}", &value[..value.len() / 2]);
        prop_assert_eq!(bounded_loop(text.as_bytes(), &sizes, guard, bound), None);
    }

    #[test]
    fn a_string_past_the_bound_always_stops_at_the_bound(
        value in "([^\"\\\\]|\\\\[nt\"\\\\/])*",
        bound in 16usize..200, // above the key's 14 characters: a key is a string too
        sizes in chunks(),
    ) {
        // Any characters, escapes and multi-byte ones included, however the stream is chunked.
        let start = "{\"invoice_number\": \"";
        let text = format!("{start}{value}{}", "é, total: 12".repeat(40));
        let found = bounded_loop(text.as_bytes(), &sizes, LoopGuard::off(), Some(bound))
            .expect("a string past the bound is a loop");
        prop_assert_eq!(found.kind, LoopKind::LongString);
        prop_assert_eq!(found.start, start.len());
        // Seen at the first byte of character bound + 1, an escape counted as one: linear, no look back.
        let chars: Vec<usize> = text[start.len()..]
            .char_indices()
            .scan(false, |escaped, (at, c)| {
                let counted = c != '\\' || *escaped;
                *escaped = c == '\\' && !*escaped;
                Some((at, counted))
            })
            .filter(|&(_, counted)| counted)
            .map(|(at, _)| at)
            .collect();
        prop_assert_eq!(Some(found.detected_at), chars.get(bound).map(|at| start.len() + at + 1));
    }

    #[test]
    fn elements_stop_exactly_when_a_long_one_recurs_beyond_the_limit(
        picks in prop::collection::vec(0usize..10, 0..60),
        limit in 1usize..5,
        spaces in prop::sample::select(vec!["", " ", "\n  "]),
        sizes in chunks(),
    ) {
        // Elements 0..5 are long (a string or an object of at least 16 bytes), 5..10 short ones
        // that repeat on purpose; the array sits two levels down.
        let element = |k: usize| match k {
            0..=2 => format!("\"the long element number {k}\""),
            3 | 4 => format!("{{\"name\":{spaces}\"person {k}\",{spaces}\"n\": {k}}}"),
            5..=7 => k.to_string(),
            _ => "\"yes\"".to_owned(),
        };
        let items: Vec<String> = picks.iter().map(|&k| element(k)).collect();
        let text = format!(
            "{{\"id\": 7, \"events\": [{{\"title\": \"x\", \"attendees\": [{}]}}]}}",
            items.join(&format!(",{spaces}"))
        );
        let guard = LoopGuard::off().elements(16, limit);
        let found = first_loop(text.as_bytes(), &sizes, guard);

        // The rule, written the slow way: among the long elements, `limit` in a row that each equal
        // one of the 16 long elements before them.
        let long: Vec<usize> = picks.iter().copied().filter(|&k| k < 5).collect();
        let mut run = 0;
        let mut loops = false;
        for (i, k) in long.iter().enumerate() {
            let recent = &long[i.saturating_sub(16)..i];
            run = if recent.contains(k) { run + 1 } else { 0 };
            loops |= run >= limit;
        }
        prop_assert_eq!(found.is_some(), loops, "{}", text);
        if let Some(found) = found {
            prop_assert_eq!(found.kind, LoopKind::Elements);
            prop_assert_eq!(found.path.as_deref(), Some("/events/0/attendees"));
            prop_assert!(found.start < found.detected_at);
        }
    }

    #[test]
    fn the_guard_off_never_stops(text in "[0 ]{0,3000}") {
        prop_assert_eq!(first_loop(text.as_bytes(), &[7], LoopGuard::off()), None);
    }
}

fn hash(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    hasher.finish()
}

#[test]
fn a_megabyte_of_counting_text_is_not_a_loop() {
    let text: String = (0..200_000u32).map(|i| format!("{i:x}")).collect();
    assert_eq!(
        first_loop(text.as_bytes(), &[4096], LoopGuard::default()),
        None
    );
}
