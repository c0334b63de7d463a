//! Partial values while they stream: the derived partial form, `#[extract(stream = ...)]`, the
//! incremental reader under every split of an answer (property tests), and `extract_partial` end to end
//! (closures and a local OpenAI-compatible server): retries, invalid and truncated answers.

use crate::common;
use crate::support;

use common::snapshots::{grows, pieces_agree};

use futures_util::StreamExt;
use llm_extract::extract::{ExtractErrorKind, Extractor, PartialEvent};
use llm_extract::llm::{from_fn, from_stream_fn, ChatEvent, ChatResponse, ChatStream};
use llm_extract::parse::{Partial, PartialReader};
use llm_extract::report::AttemptKind;
use llm_extract::{Extract, OpenAiCompatible};
use proptest::prelude::*;
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use support::{openai, Answer, TestServer};

#[derive(Extract, Deserialize, Debug, Clone, PartialEq)]
struct Invoice {
    /// Shown before anything else of the invoice.
    #[extract(stream = "required")]
    number: String,
    customer: Customer,
    lines: Vec<Line>,
    status: Status,
    total: f64,
    note: Option<String>,
    /// Never shown half-written.
    #[extract(stream = "done")]
    iban: String,
    payment: Payment,
}

#[derive(Extract, Deserialize, Debug, Clone, PartialEq)]
struct Customer {
    name: String,
    #[serde(alias = "mail")]
    email: Option<String>,
}

#[derive(Extract, Deserialize, Debug, Clone, PartialEq)]
struct Line {
    #[extract(stream = "required")]
    sku: String,
    description: String,
    quantity: u32,
    tags: Vec<String>,
}

#[derive(Extract, Deserialize, Debug, Clone, Copy, PartialEq)]
#[serde(rename_all = "lowercase")]
enum Status {
    Paid,
    Open,
}

#[derive(Extract, Deserialize, Debug, Clone, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Payment {
    Card { last4: String, amount: f64 },
    Transfer { reference: String },
    Cash,
}

fn invoice_json(name: &str, description: &str, lines: usize) -> Value {
    json!({
        "number": "INV-2026-001",
        "customer": {"name": name, "email": "ada@example.com"},
        "lines": (0..lines).map(|i| json!({
            "sku": format!("SKU-{i}"),
            "description": description,
            "quantity": i + 1,
            "tags": ["a", description],
        })).collect::<Vec<_>>(),
        "status": "paid",
        "total": 1234.5,
        "note": null,
        "iban": "DE89370400440532013000",
        "payment": {"type": "card", "last4": "4242", "amount": 1234.5},
    })
}

/// Every snapshot of `text` fed in `chunks` (split points), as JSON.
fn snapshots(text: &[u8], cuts: &[usize]) -> Vec<Value> {
    let mut reader = PartialReader::<Invoice>::new();
    let mut seen = Vec::new();
    let mut start = 0;
    for &cut in cuts.iter().chain(std::iter::once(&text.len())) {
        let cut = cut.clamp(start, text.len());
        if reader.feed(&text[start..cut]) {
            seen.push(serde_json::to_value(reader.partial().unwrap()).unwrap());
        }
        start = cut;
    }
    seen
}

fn check_sequence(seen: &[Value], whole: &Value) {
    for pair in seen.windows(2) {
        assert!(grows(&pair[0], &pair[1]), "{} -> {}", pair[0], pair[1]);
    }
    for snapshot in seen {
        // `stream = "required"`: no invoice without its number, no line without its sku.
        assert!(snapshot.get("number").is_some(), "{snapshot}");
        for line in snapshot["lines"].as_array().into_iter().flatten() {
            assert!(line.get("sku").is_some(), "{snapshot}");
        }
        // `stream = "done"`: the IBAN only whole.
        if let Some(iban) = snapshot.get("iban") {
            assert_eq!(iban, &whole["iban"]);
        }
        // Numbers only whole.
        if let Some(total) = snapshot.get("total") {
            assert_eq!(total, &whole["total"]);
        }
    }
    let mut last = seen.last().cloned().unwrap();
    // Fields not yet shown are left out of the JSON; `note` is null in the answer.
    last.as_object_mut()
        .unwrap()
        .insert("note".into(), Value::Null);
    assert_eq!(&last, whole);
}

#[test]
fn the_partial_form_is_what_the_derive_promises() {
    let partial = Partial::<Invoice>::default();
    assert_eq!(partial.number, None);
    assert_eq!(serde_json::to_value(&partial).unwrap(), json!({}));
    let line: Partial<Line> = <Partial<Line> as Default>::default();
    let lines: Option<Vec<Partial<Line>>> = Some(vec![line.clone()]);
    let filled = InvoicePartial {
        number: Some("X".into()),
        lines,
        status: Some(StatusPartial::Paid),
        payment: Some(PaymentPartial::Card {
            last4: Some("42".into()),
            amount: None,
        }),
        ..InvoicePartial::default()
    };
    assert_eq!(
        serde_json::to_value(&filled).unwrap(),
        json!({"number": "X", "lines": [{}], "status": "paid", "payment": {"type": "card", "last4": "42"}})
    );
    assert_ne!(filled.clone(), partial);
}

#[test]
fn required_fields_hold_back_their_object() {
    let mut reader = PartialReader::<Invoice>::new();
    assert!(!reader
        .feed(br#"{"customer": {"name": "Ada"}, "lines": [{"description": "Tea", "sku": "T"#));
    assert!(reader.partial().is_none());
    assert!(reader.feed(br#"1"}], "number": "7"#));
    let invoice = reader.partial().unwrap();
    assert_eq!(invoice.number.as_deref(), Some("7"));
    assert_eq!(
        invoice.customer.as_ref().unwrap().name.as_deref(),
        Some("Ada")
    );
    let line = &invoice.lines.as_ref().unwrap()[0];
    assert_eq!(
        (line.sku.as_deref(), line.description.as_deref()),
        (Some("T1"), Some("Tea"))
    );
}

#[test]
fn done_fields_and_numbers_appear_whole() {
    let mut reader = PartialReader::<Invoice>::new();
    reader.feed(br#"{"number": "1", "total": 12"#);
    assert_eq!(reader.partial().unwrap().total, None);
    reader.feed(br#".5, "iban": "DE89"#);
    let invoice = reader.partial().unwrap();
    assert_eq!((invoice.iban.as_deref(), invoice.total), (None, Some(12.5)));
    reader.feed(br#"3700","#);
    assert_eq!(reader.partial().unwrap().iban.as_deref(), Some("DE893700"));
}

/// A chunk holding nothing but a string's closing quote (and the next key) ends the string: what shows
/// only once complete (a `stream = "done"` field, a fieldless enum, a tag) appears on that chunk, though
/// the reader skips its walk when the string only grew and ended.
#[test]
fn a_closing_quote_alone_completes_what_shows_only_whole() {
    let mut reader = PartialReader::<Invoice>::new();
    reader.feed(br#"{"number": "1", "iban": "DE89"#);
    assert_eq!(reader.partial().unwrap().iban, None);
    assert!(reader.feed(br#"", "sta"#));
    assert_eq!(reader.partial().unwrap().iban.as_deref(), Some("DE89"));
    assert!(!reader.feed(br#"tus": "pai"#));
    assert!(!reader.feed(b"d"));
    assert_eq!(reader.partial().unwrap().status, None);
    assert!(reader.feed(br#"", "payment": {"type": "transfer"#));
    assert_eq!(reader.partial().unwrap().status, Some(StatusPartial::Paid));
    assert_eq!(reader.partial().unwrap().payment, None);
    assert!(reader.feed(br#"""#));
    assert_eq!(
        reader.partial().unwrap().payment,
        Some(PaymentPartial::Transfer { reference: None })
    );
    // A string shown as it grows shows the same once ended: no change to report.
    reader.feed(br#", "reference": "R-1"#);
    assert!(!reader.feed(br#"""#));
}

#[test]
fn empty_objects_are_not_shown_as_values() {
    let mut reader = PartialReader::<Invoice>::new();
    reader.feed(br#"{"number": "1", "customer": {"#);
    assert_eq!(reader.partial().unwrap().customer, None);
    reader.feed(br#""mail": "a@"#);
    let customer = reader.partial().unwrap().customer.clone().unwrap();
    assert_eq!(customer.email.as_deref(), Some("a@"));
    assert_eq!(customer.name, None);
}

#[test]
fn enums_are_known_once_their_tag_is_read() {
    let mut reader = PartialReader::<Invoice>::new();
    reader.feed(br#"{"number": "1", "status": "pa"#);
    assert_eq!(reader.partial().unwrap().status, None);
    reader.feed(br#"id", "payment": {"amount": 3.5, "last4": "42", "type": "car"#);
    let invoice = reader.partial().unwrap();
    assert_eq!(invoice.status, Some(StatusPartial::Paid));
    // The tag comes after the other fields: nothing until it is whole.
    assert_eq!(invoice.payment, None);
    reader.feed(br#"d"}"#);
    assert_eq!(
        reader.partial().unwrap().payment,
        Some(PaymentPartial::Card {
            last4: Some("42".into()),
            amount: Some(3.5)
        })
    );
    let mut cash = PartialReader::<Payment>::new();
    cash.feed(br#"{"type": "cash"}"#);
    assert_eq!(cash.partial(), Some(&PaymentPartial::Cash));
    let mut unknown = PartialReader::<Payment>::new();
    unknown.feed(br#"{"type": "cheque", "reference": "x"}"#);
    assert_eq!(unknown.partial(), None);
}

/// A key written twice (the later value wins, as serde reads it) and an alias of the same field: the
/// string being written is always the last one, in chunks of every size from 1 to 6 bytes.
#[test]
fn duplicate_keys_and_aliases_while_a_string_grows() {
    let text = r#"{"number": "INV-1", "customer": {"name": "Ada", "email": "first@example.com", "mail": "second", "name": "Grace Hopper"}, "number": "INV-2"}"#;
    for size in 1..=6 {
        let mut reader = PartialReader::<Invoice>::new();
        for (i, piece) in text.as_bytes().chunks(size).enumerate() {
            reader.feed(piece);
            let mut fresh = PartialReader::<Invoice>::new();
            fresh.feed(&text.as_bytes()[..(i * size + piece.len())]);
            assert_eq!(
                reader.partial(),
                fresh.partial(),
                "{size}-byte chunks, chunk {i}"
            );
        }
        let invoice = reader.partial().unwrap();
        let customer = invoice.customer.as_ref().unwrap();
        assert_eq!(customer.name.as_deref(), Some("Grace Hopper"));
        assert_eq!(customer.email.as_deref(), Some("second"));
        assert_eq!(invoice.number.as_deref(), Some("INV-2"));
    }
}

#[test]
fn escapes_and_multibyte_characters_cut_across_chunks() {
    let whole = invoice_json("Zoë \"the\" Ünïcødé 😀\\", "line\nbreak \u{e9}\u{1F600}", 2);
    // Escaped non-ASCII too: `\u00eb` and a surrogate pair.
    let text = serde_json::to_string(&whole)
        .unwrap()
        .replace('ë', "\\u00eb")
        .replace("😀\\\\", "\\ud83d\\ude00\\\\");
    for size in 1..=6 {
        let cuts: Vec<usize> = (size..text.len()).step_by(size).collect();
        let seen = snapshots(text.as_bytes(), &cuts);
        check_sequence(&seen, &whole);
        for snapshot in &seen {
            assert!(!snapshot.to_string().contains('\u{FFFD}'), "{snapshot}");
        }
    }
}

/// A trip: strings grow under a tagged enum's variants, an `Option<Box<_>>` and lists in lists, so
/// the steps a reader remembers (and follows after a change lower down) pass through each of them.
#[derive(Extract, Deserialize, Debug, Clone, PartialEq)]
struct Trip {
    title: String,
    stops: Vec<Stop>,
}

#[derive(Extract, Deserialize, Debug, Clone, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Stop {
    Visit {
        place: String,
        notes: Vec<String>,
    },
    Transfer {
        from: String,
        to: Option<Box<Place>>,
    },
}

#[derive(Extract, Deserialize, Debug, Clone, PartialEq)]
struct Place {
    name: String,
    tags: Vec<Vec<String>>,
    nights: u32,
}

#[test]
fn every_chunking_of_nested_variants_shows_what_a_fresh_read_shows() {
    let whole = json!({
        "title": "Alps \"late\" é",
        "stops": [
            {"kind": "visit", "place": "Zürich HB", "notes": ["arrive 9:10", "", "lake"]},
            {"kind": "transfer", "from": "Chur", "to": {"name": "Arosa", "tags": [["ski", "snow"], [], ["spa"]], "nights": 3}},
            {"place": "Late tag", "kind": "visit", "notes": ["tag after a field"]},
            {"kind": "transfer", "from": "Arosa", "to": null},
            {"kind": "transfer", "from": "Bern", "to": {"tags": [["x"]], "name": "Thun", "nights": 1}}
        ]
    });
    let compact = serde_json::to_string(&whole).unwrap();
    let pretty = serde_json::to_string_pretty(&whole).unwrap();
    for text in [compact, pretty] {
        let bytes = text.as_bytes();
        for size in 1..10 {
            let mut reader = PartialReader::<Trip>::new();
            let mut end = 0;
            for piece in bytes.chunks(size) {
                end += piece.len();
                let before = reader.partial().cloned();
                let changed = reader.feed(piece);
                let mut fresh = PartialReader::<Trip>::new();
                fresh.feed(&bytes[..end]);
                assert_eq!(
                    reader.partial(),
                    fresh.partial(),
                    "{size}-byte chunks, {end} bytes"
                );
                assert_eq!(
                    changed,
                    reader.partial().cloned() != before,
                    "{size}, {end}"
                );
            }
            // Whole, but for the `null` (not shown, as a field not written).
            let mut shown = whole.clone();
            shown["stops"][3].as_object_mut().unwrap().remove("to");
            let last = serde_json::to_value(reader.partial().unwrap()).unwrap();
            assert_eq!(last, shown, "{size}-byte chunks");
        }
    }
}

/// Cut points anywhere in `text` (from its start to its end), in order.
fn cuts_within(cuts: &[prop::sample::Index], text: &str) -> Vec<usize> {
    let mut cuts: Vec<usize> = cuts.iter().map(|cut| cut.index(text.len() + 1)).collect();
    cuts.sort_unstable();
    cuts
}

prop_compose! {
    fn answers()(
        name in "[a-zA-Z \"\\\\é😀\n]{0,12}",
        description in "[a-z \"\\\\ü\t]{0,20}",
        lines in 0usize..4,
        pretty in any::<bool>(),
    ) -> (Value, String) {
        let whole = invoice_json(&name, &description, lines);
        let text = if pretty {
            serde_json::to_string_pretty(&whole).unwrap()
        } else {
            serde_json::to_string(&whole).unwrap()
        };
        (whole, format!("Here it is:\n```json\n{text}\n```"))
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// For every split of a valid answer into chunks, the snapshots only grow, required and done fields
    /// keep their promise, and the last snapshot is the whole value.
    #[test]
    fn snapshots_are_monotone_under_any_split(
        (whole, text) in answers(),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..40),
    ) {
        let cuts = cuts_within(&cuts, &text);
        let seen = snapshots(text.as_bytes(), &cuts);
        check_sequence(&seen, &whole);
        // The same as reading it whole.
        let mut reader = PartialReader::<Invoice>::new();
        reader.feed(text.as_bytes());
        prop_assert_eq!(
            serde_json::to_value(reader.partial().unwrap()).unwrap(),
            seen.last().cloned().unwrap()
        );
    }

    /// After every chunk of any split, the value shown is the one a reader given the same prefix in one
    /// piece builds, and `feed` reports a change exactly when the value changed: the incremental paths
    /// (a walk of what changed since the last chunk, an append to the string being written) never drift
    /// from reading from scratch.
    #[test]
    fn every_snapshot_is_what_the_prefix_read_whole_shows(
        (_, text) in answers(),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..60),
        hold in any::<bool>(),
    ) {
        let cuts = cuts_within(&cuts, &text);
        let text = text.as_bytes();
        let mut reader = PartialReader::<Invoice>::new();
        let mut held: Option<(Arc<Partial<Invoice>>, Partial<Invoice>)> = None;
        let mut start = 0;
        for &cut in cuts.iter().chain(std::iter::once(&text.len())) {
            let cut = cut.clamp(start, text.len());
            let before = reader.partial().cloned();
            let changed = reader.feed(&text[start..cut]);
            // A snapshot held by the caller must not change behind its back.
            if let Some((snapshot, value)) = &held {
                prop_assert_eq!(&**snapshot, value);
            }
            if hold {
                held = reader.snapshot().map(|s| {
                    let value = (*s).clone();
                    (s, value)
                });
            }
            let mut fresh = PartialReader::<Invoice>::new();
            fresh.feed(&text[..cut]);
            prop_assert_eq!(reader.partial(), fresh.partial(), "after {} bytes", cut);
            prop_assert_eq!(changed, reader.partial().cloned() != before, "after {} bytes", cut);
            start = cut;
        }
    }

    /// Any bytes, any split: no panic, and the same partial value as the bytes read in one piece.
    #[test]
    fn any_bytes_in_any_split_read_as_in_one_piece(
        bytes in prop::collection::vec(any::<u8>(), 0..300),
        cuts in prop::collection::vec(0usize..300, 0..20),
    ) {
        pieces_agree::<Invoice>(&bytes, cuts)?;
    }
}

fn collect_events<T: llm_extract::parse::PartialValue>(
    events: &[Result<PartialEvent<T>, llm_extract::ExtractError>],
) -> (Vec<Value>, Vec<String>, usize) {
    let mut snapshots = Vec::new();
    let mut completed = Vec::new();
    let mut retries = 0;
    for event in events.iter().flatten() {
        match event {
            PartialEvent::Snapshot(s) => snapshots.push(serde_json::to_value(&**s).unwrap()),
            PartialEvent::Completed { path, .. } => completed.push(path.to_string()),
            PartialEvent::Retry { .. } => retries += 1,
            _ => {}
        }
    }
    (snapshots, completed, retries)
}

/// A streamed answer whose every piece comes after a pause (a `Pending`), as from a server.
fn streamed(pieces: Vec<impl Into<String>>) -> ChatStream {
    let mut events: Vec<_> = pieces
        .into_iter()
        .map(|c| Ok(ChatEvent::Delta(c.into())))
        .collect();
    events.push(Ok(ChatEvent::Done(ChatResponse::new(""))));
    Box::pin(futures_util::stream::iter(events).then(|event| async move {
        tokio::task::yield_now().await;
        event
    }))
}

#[tokio::test]
async fn extract_partial_streams_snapshots_fields_and_the_final_value() {
    let whole = invoice_json("Ada", "Tea", 3);
    let text = serde_json::to_string(&whole).unwrap();
    assert!(text.is_ascii());
    // Pieces of 5 bytes, each after a pause, read as they come: no snapshot is coalesced away.
    let pieces: Vec<String> = text
        .as_bytes()
        .chunks(5)
        .map(|c| String::from_utf8(c.to_vec()).unwrap())
        .collect();
    let llm = from_stream_fn(move |_| {
        let pieces = pieces.clone();
        async move { Ok(streamed(pieces)) }
    });
    let events: Vec<_> = Invoice::extract_partial(&llm, "the invoice")
        .collect()
        .await;
    let (snapshots, completed, retries) = collect_events(&events);
    assert_eq!(retries, 0);
    // Many chunks change nothing visible (a key, a number not yet ended): no snapshot for them.
    assert!(snapshots.len() > text.len() / 20, "{}", snapshots.len());
    check_sequence(&snapshots, &whole);
    assert!(
        completed.contains(&"lines[2].tags[1]".to_string()),
        "{completed:?}"
    );
    assert!(completed.contains(&"customer.email".to_string()));
    let last = events.last().unwrap().as_ref().unwrap();
    let PartialEvent::Final {
        extraction,
        revised,
    } = last
    else {
        panic!("the last event is not the final value: {last:?}");
    };
    assert!(!revised);
    assert_eq!(
        extraction.value,
        serde_json::from_value::<Invoice>(whole).unwrap()
    );
    assert_eq!(extraction.report.attempts.len(), 1);
}

/// The blocking form, from a plain thread (no async runtime): the same events, as an iterator.
#[test]
fn blocking_extract_partial_iterates_the_events() {
    let whole = invoice_json("Ada", "Tea and biscuits", 2);
    let text = serde_json::to_string(&whole).unwrap();
    let pieces: Vec<String> = text
        .as_bytes()
        .chunks(7)
        .map(|c| String::from_utf8(c.to_vec()).unwrap())
        .collect();
    let llm = from_stream_fn(move |_| {
        let pieces = pieces.clone();
        async move { Ok(streamed(pieces)) }
    });
    let mut iter = llm_extract::blocking::extract_partial::<Invoice, _>(&llm, "the invoice");
    let events: Vec<_> = iter.by_ref().collect();
    assert!(iter.report().is_some());
    let (snapshots, completed, retries) = collect_events(&events);
    assert_eq!(retries, 0);
    assert!(snapshots.len() > 5, "{}", snapshots.len());
    check_sequence(&snapshots, &whole);
    assert!(completed.contains(&"lines[1].sku".to_string()));
    let Some(Ok(PartialEvent::Final { extraction, .. })) = events.last() else {
        panic!("{:?}", events.last());
    };
    assert_eq!(
        extraction.value,
        serde_json::from_value::<Invoice>(whole).unwrap()
    );

    // An answer that stays invalid: the iteration ends with the error, which carries the ledger.
    let llm = from_fn(|_| async { Ok(ChatResponse::new(r#"{"email": "a@b.c"}"#)) });
    let events: Vec<_> = llm_extract::blocking::extract_partial::<Customer, _>(&llm, "x").collect();
    let Some(Err(err)) = events.last() else {
        panic!("{:?}", events.last());
    };
    assert!(!err.report().attempts.is_empty());
    assert!(events.iter().rev().skip(1).all(Result::is_ok));
}

#[tokio::test]
async fn a_fixed_answer_ends_with_a_revised_snapshot() {
    // `quantity` written as a string: coerced by the parser, so the final value differs from what
    // streamed.
    let mut whole = invoice_json("Ada", "Tea", 1);
    whole["lines"][0]["quantity"] = json!("1");
    let text = serde_json::to_string(&whole).unwrap();
    let llm = from_fn(move |_| {
        let text = text.clone();
        async move { Ok(ChatResponse::new(text)) }
    });
    let events: Vec<_> = Invoice::extract_partial(&llm, "the invoice")
        .collect()
        .await;
    let (snapshots, _, _) = collect_events(&events);
    let Some(Ok(PartialEvent::Final { revised, .. })) = events.last() else {
        panic!("{:?}", events.last());
    };
    assert!(revised);
    assert_eq!(snapshots.last().unwrap()["lines"][0]["quantity"], json!(1));
}

#[tokio::test]
async fn an_invalid_answer_is_repaired_and_the_snapshots_start_over() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    let llm = from_stream_fn(move |_| {
        let call = counter.fetch_add(1, Ordering::SeqCst);
        async move {
            Ok(match call {
                // No name: invalid, and nothing to fix.
                0 => streamed(vec![r#"{"email": "a@"#, r#"b.c"}"#]),
                _ => streamed(vec![r#"{"name": "Ada", "#, r#""email": "a@b.c"}"#]),
            })
        }
    });
    let events: Vec<_> = Customer::extract_partial(&llm, "Ada").collect().await;
    let kinds: Vec<String> = events
        .iter()
        .map(|e| match e {
            Ok(PartialEvent::Snapshot(s)) => {
                format!("snapshot {}", serde_json::to_string(&**s).unwrap())
            }
            Ok(PartialEvent::Completed { path, .. }) => format!("completed {path}"),
            Ok(PartialEvent::Retry { attempt, kind }) => format!("retry {attempt} {kind:?}"),
            Ok(PartialEvent::Final { revised, .. }) => format!("final {revised}"),
            Ok(_) => "other".into(),
            Err(e) => format!("error {e}"),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            r#"snapshot {"email":"a@"}"#,
            "completed email",
            r#"snapshot {"email":"a@b.c"}"#,
            "retry 2 Repair",
            "completed name",
            r#"snapshot {"name":"Ada"}"#,
            "completed email",
            r#"snapshot {"name":"Ada","email":"a@b.c"}"#,
            "final false",
        ]
    );
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn an_answer_that_stays_invalid_ends_with_the_error_and_the_ledger() {
    let llm = from_fn(|_| async { Ok(ChatResponse::new(r#"{"email": null}"#)) });
    let extractor = Extractor::new(&llm).max_attempts(2);
    let events: Vec<_> = extractor.extract_partial::<Customer>("x").collect().await;
    let (snapshots, _, retries) = collect_events(&events);
    // A complete empty object is a value: shown as such.
    assert_eq!(snapshots.last(), Some(&json!({})));
    assert_eq!(retries, 1);
    let Some(Err(error)) = events.last() else {
        panic!("{:?}", events.last());
    };
    assert!(
        matches!(error.kind(), ExtractErrorKind::Invalid(_)),
        "{error}"
    );
    assert_eq!(error.report().attempts.len(), 2);
    assert_eq!(error.report().attempts[1].kind, AttemptKind::Repair);
}

#[tokio::test]
async fn a_truncated_answer_ends_with_the_truncation_after_its_snapshots() {
    let server = TestServer::script(vec![openai(
        Answer::new(r#"{"email": "ada@ex.org", "name": "Ada Lov"#)
            .cut()
            .pieces_of(3),
    )]);
    let llm = OpenAiCompatible::builder(server.url(), "test-model")
        .build()
        .unwrap();
    let events: Vec<_> = Extractor::new(&llm)
        .extract_partial::<Customer>("Ada")
        .collect()
        .await;
    let (snapshots, completed, _) = collect_events(&events);
    // The cut string was shown as it grew; the salvaged value keeps the free text as far as it
    // was written, and its fixes say it was cut.
    assert_eq!(
        snapshots.last().unwrap(),
        &json!({"name": "Ada Lov", "email": "ada@ex.org"})
    );
    assert_eq!(completed, ["email"]);
    let Some(Ok(PartialEvent::Final { extraction, .. })) = events.last() else {
        panic!("{:?}", events.last());
    };
    assert_eq!(extraction.value.name, "Ada Lov");
    assert_eq!(
        extraction.report.finish,
        Some(llm_extract::llm::Finish::Length)
    );
    assert!(extraction.report.fixes.iter().any(|f| f.kind
        == llm_extract::parse::FixKind::CutString
        && f.description.contains("/name")));
    assert_eq!(extraction.report.attempts.len(), 1);
    assert!(extraction.report.attempts[0].raw.ends_with("Ada Lov"));
}

#[tokio::test]
async fn an_openai_compatible_server_streams_snapshots() {
    let whole = invoice_json("Grace", "Coffee ☕", 2);
    let server = TestServer::script(vec![openai(
        Answer::new(serde_json::to_string_pretty(&whole).unwrap()).pieces_of(4),
    )]);
    let llm = OpenAiCompatible::builder(server.url(), "test-model")
        .build()
        .unwrap();
    let events: Vec<_> = Invoice::extract_partial(&llm, "the invoice")
        .collect()
        .await;
    let (snapshots, _, _) = collect_events(&events);
    check_sequence(&snapshots, &whole);
    assert!(server.requests()[0].wants_stream());
    assert!(matches!(
        events.last(),
        Some(Ok(PartialEvent::Final { revised: false, .. }))
    ));
}

#[tokio::test]
async fn an_ollama_server_streams_snapshots_in_two_byte_pieces() {
    let whole = invoice_json("Zoë", "Thé vert 🍵", 2);
    let server = TestServer::script(vec![support::ollama(
        Answer::new(serde_json::to_string(&whole).unwrap()).pieces_of(2),
    )]);
    let llm = llm_extract::Ollama::builder("test-model")
        .host(server.url())
        .build()
        .unwrap();
    let events: Vec<_> = Invoice::extract_partial(&llm, "the invoice")
        .collect()
        .await;
    let (snapshots, completed, _) = collect_events(&events);
    check_sequence(&snapshots, &whole);
    assert!(
        completed.contains(&"payment.last4".to_string()),
        "{completed:?}"
    );
    let Some(Ok(PartialEvent::Final {
        extraction,
        revised,
    })) = events.last()
    else {
        panic!("{:?}", events.last());
    };
    assert!(!revised);
    assert_eq!(
        extraction.value,
        serde_json::from_value::<Invoice>(whole).unwrap()
    );
}

/// A field type that counts how often its partial form is asked whether it is shown (never: it
/// stays hidden), to measure the work a hidden object costs per chunk.
#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(transparent)]
struct Probe(u32);

static PROBED: AtomicUsize = AtomicUsize::new(0);

impl llm_extract::__private::FieldSchema for Probe {
    fn field_schema() -> Value {
        json!({"type": "integer"})
    }
}

impl llm_extract::parse::PartialValue for Probe {
    type Partial = u32;

    fn shown(_: llm_extract::parse::Node<'_>) -> bool {
        PROBED.fetch_add(1, Ordering::Relaxed);
        false
    }

    fn build(node: llm_extract::parse::Node<'_>) -> Option<u32> {
        Self::shown(node).then_some(0)
    }

    fn update(_: &mut u32, _: llm_extract::parse::Node<'_>, _: u64) -> bool {
        false
    }
}

impl llm_extract::__private::PartialField for Probe {}

#[derive(Extract, Deserialize, Debug)]
#[allow(dead_code)]
struct Flooded {
    probe: Probe,
    name: String,
}

#[test]
fn a_hidden_object_costs_its_fields_per_chunk_not_its_members() {
    // While `Flooded` is hidden (nothing of it shown yet), each chunk asks whether it is shown: by
    // looking up each of its fields once, not by going over every member written so far (which made
    // a flood of members quadratic in the answer's length).
    let mut reader = PartialReader::<Flooded>::new();
    reader.feed(b"{");
    let mut chunks = 0;
    for _ in 0..2_000 {
        for piece in br#""probe": 1, "#.chunks(4) {
            reader.feed(piece);
            chunks += 1;
        }
    }
    assert!(reader.partial().is_none());
    let probed = PROBED.load(Ordering::Relaxed);
    assert!(
        probed <= 2 * chunks,
        "{probed} look-ups for {chunks} chunks"
    );
    reader.feed(br#""name": "x"}"#);
    assert_eq!(reader.partial().and_then(|f| f.name.as_deref()), Some("x"));
}
