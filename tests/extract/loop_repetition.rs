//! Property tests of repetition relative to the input: a run of equal elements (or items) is real
//! data while the input text holds that many copies of what they copy, and a loop once the run goes
//! past them, however the stream is chunked; the work of counting is bounded whatever the answer.

use llm_extract::extract::{InputText, ItemVerdict, ItemWindow, LoopDetector, LoopGuard};
use llm_extract::report::{Loop, LoopKind};
use proptest::prelude::*;

/// Feeds `text` in chunks of the given sizes (cycled) and returns the first loop.
fn first_loop(text: &str, chunks: &[usize], detector: LoopDetector) -> Option<Loop> {
    crate::loop_detector::feed_in_chunks(detector, text.as_bytes(), chunks)
}

fn chunks() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(1usize..24, 1..8)
}

/// A receipt line: a name of a few words and a price.
fn line() -> impl Strategy<Value = (String, u32)> {
    ("[A-Z][a-z]{3,9}( [a-z]{3,8}){0,2}", 100u32..9999)
}

/// A receipt holding `held` copies of the line among other lines, and an answer listing it `copies`
/// times in a row in an array.
fn receipt((name, cents): &(String, u32), held: usize, copies: usize) -> (String, String) {
    let price = format!("{}.{:02}", cents / 100, cents % 100);
    let mut text = String::from("Receipt 0042\n");
    for n in 0..held {
        text.push_str(&format!("{name} {price}\n"));
        if n % 2 == 1 {
            text.push_str("Other thing 0.10\n");
        }
    }
    let element = format!(r#"{{"item": "{name}", "price": {price}}}"#);
    let answer = format!(r#"{{"lines": [{}]}}"#, vec![element; copies].join(", "));
    (text, answer)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The rule: with `element_copies` at `c`, a run of `k` equal elements the text holds `m` times
    /// is never a loop when `k <= m` (real data), and always one when `k >= max(m, 1) + c`, seen after
    /// more than `m` copies; whatever the chunks. (Between the two, a line short enough to be a
    /// repeated period may be stopped as one as soon as the copies pass what the text holds.)
    #[test]
    fn a_run_of_elements_is_a_loop_only_past_what_the_text_holds(
        line in line(),
        held in 0usize..8,
        copies in 1usize..16,
        sizes in chunks(),
    ) {
        let (text, answer) = receipt(&line, held, copies);
        let guard = LoopGuard::default();
        let detector = LoopDetector::new(guard).input_text(&InputText::new(&text));
        let found = first_loop(&answer, &sizes, detector);
        if copies <= held {
            prop_assert_eq!(found.clone(), None, "{} copies, {} held", copies, held);
        }
        if copies >= held.max(1) + guard.element_copies {
            prop_assert!(found.is_some(), "{} copies, {} held", copies, held);
        }
        if let Some(found) = found {
            prop_assert!(matches!(found.kind, LoopKind::Elements | LoopKind::Period(_)), "{:?}", found);
            // Not before the copies the text holds are all written.
            let element = answer.find("}, {").map_or(answer.len(), |end| end + 3) - answer.find('[').unwrap_or(0) - 1;
            prop_assert!(found.detected_at > held * element, "{:?} {}", found, element);
        }
    }

    /// Without a text every repeat counts, as it always did: an input text never makes a loop.
    #[test]
    fn an_input_text_never_stops_what_none_lets_through(
        line in line(),
        held in 0usize..8,
        copies in 1usize..16,
        sizes in chunks(),
    ) {
        let (text, answer) = receipt(&line, held, copies);
        let guard = LoopGuard::default();
        let with = first_loop(&answer, &sizes, LoopDetector::new(guard).input_text(&InputText::new(&text)));
        let without = first_loop(&answer, &sizes, LoopDetector::new(guard));
        prop_assert!(with.is_none() || without.is_some());
        // And with an input text it stops no earlier.
        if let (Some(with), Some(without)) = (with, without) {
            prop_assert!(with.detected_at >= without.detected_at);
        }
    }

    /// Items the same way: `k` equal items the text holds `m` times are a loop exactly when
    /// `k >= max(m, 1) + item_copies`.
    #[test]
    fn a_run_of_items_is_a_loop_exactly_past_what_the_text_holds(
        held in 0usize..10,
        copies in 1usize..20,
        copies_limit in 1usize..5,
    ) {
        let mut items = ItemWindow::new(LoopGuard::default().item_copies(copies_limit));
        let verdicts: Vec<ItemVerdict> = (0..copies).map(|_| items.offer_held(42, || held)).collect();
        let looped = verdicts.contains(&ItemVerdict::Loop);
        prop_assert_eq!(looped, copies >= held.max(1) + copies_limit);
        // The first `held` are never held back.
        prop_assert!(verdicts.iter().take(held).all(|v| *v == ItemVerdict::New));
    }
}

/// A model that repeats a real line fifty times is stopped, a few elements past the four the text
/// holds: the text bounds a run, it never lifts the guard.
#[test]
fn fifty_copies_of_a_real_line_are_still_a_loop() {
    let line = ("Flat white".to_owned(), 350);
    let (text, answer) = receipt(&line, 4, 50);
    let detector = LoopDetector::new(LoopGuard::default()).input_text(&InputText::new(&text));
    let found = first_loop(&answer, &[7], detector).expect("a loop");
    let element = r#"{"item": "Flat white", "price": 3.50}"#.len() + 2;
    // Seen by the end of the seventh copy (four real, then three copies), and not before the fifth.
    let opened = answer.find('[').unwrap_or(0);
    assert!(found.detected_at <= opened + 1 + 7 * element, "{found:?}");
    assert!(found.detected_at > opened + 4 * element, "{found:?}");
    // It starts after the four the text holds (give or take the separator).
    assert!(found.start + 2 >= opened + 1 + 4 * element, "{found:?}");
}

/// Many distinct repeated elements count at most a bounded number of leaves in the text: an answer of
/// 200 different lines, each written twice, against a long text, is judged without a scan per line
/// (past the bound, a repeat counts as a copy, as without a text).
#[test]
fn counting_is_bounded_whatever_the_answer() {
    let text: String = (0..200)
        .map(|n| format!("Part number {n:04} 1.00\n"))
        .collect();
    let element = |n: usize| format!(r#"{{"item": "Part number {n:04}", "price": 1.00}}"#);
    let mut lines = Vec::new();
    for n in 0..200 {
        lines.push(element(n));
        lines.push(element(n));
    }
    let answer = format!(r#"{{"lines": [{}]}}"#, lines.join(", "));
    let found = first_loop(
        &answer,
        &[64],
        LoopDetector::new(LoopGuard::default()).input_text(&InputText::new(&text)),
    );
    // Pairs are never a loop, counted or not.
    assert_eq!(found, None);
}
