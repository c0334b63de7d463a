//! Checks of a stream of partial values (`extract_partial`), shared by the tests against scripted
//! answers and against the real model.

use futures_util::{Stream, StreamExt};
use llm_extract::extract::PartialEvent;
use llm_extract::parse::{PartialReader, PartialValue};
use llm_extract::{Extract, ExtractError, Extraction};
use serde::Serialize;
use serde_json::Value;

/// Whether `next` only adds to `prev`: no key disappears, strings only grow, lists only grow (every
/// item but the last unchanged), anything else unchanged.
pub fn grows(prev: &Value, next: &Value) -> bool {
    match (prev, next) {
        (Value::Object(a), Value::Object(b)) => {
            a.iter().all(|(k, v)| b.get(k).is_some_and(|w| grows(v, w)))
        }
        (Value::Array(a), Value::Array(b)) => {
            b.len() >= a.len()
                && a.iter().zip(b).enumerate().all(|(i, (v, w))| {
                    if i + 1 == a.len() {
                        grows(v, w)
                    } else {
                        v == w
                    }
                })
        }
        (Value::String(a), Value::String(b)) => b.starts_with(a.as_str()),
        (a, b) => a == b,
    }
}

/// Within one attempt every snapshot only adds to the one before, but for the last when the final
/// value was `revised` (a fix changed it after it was shown).
fn check_growth(snapshots: &[Value], revised: bool) {
    let growing = if revised {
        snapshots.len().saturating_sub(1)
    } else {
        snapshots.len()
    };
    for pair in snapshots[..growing].windows(2) {
        assert!(
            grows(&pair[0], &pair[1]),
            "a snapshot shrank: {} -> {}",
            pair[0],
            pair[1]
        );
    }
}

/// What a stream of partial events held: the snapshots of the last attempt (as JSON), how many
/// retries started the snapshots over, and the final extraction with whether it was revised.
pub struct Streamed<T: Extract> {
    /// The last attempt's snapshots, in order.
    pub snapshots: Vec<Value>,
    /// Every completed value of the last attempt: its path and JSON.
    pub completed: Vec<(String, Value)>,
    /// `Retry` events.
    pub retries: usize,
    /// The final value and ledger.
    pub extraction: Extraction<T>,
    /// Whether the final event said the last snapshot differed from the value.
    pub revised: bool,
}

/// Collects an `extract_partial` stream, checking what every stream must keep, whatever the model
/// wrote: within an attempt the snapshots only grow; the final event comes last, once; and the last
/// snapshot is the final value read as a partial value (the promise of `PartialEvent::Final`).
pub async fn collect_checked<T>(
    events: impl Stream<Item = Result<PartialEvent<T>, ExtractError>>,
) -> Streamed<T>
where
    T: Extract + PartialValue + Serialize + std::fmt::Debug,
{
    // Each event is read as it comes and its snapshot let go at once, as a UI would: the reader then
    // updates the value in place (with snapshots held it copies them first).
    let mut events = std::pin::pin!(events);
    let mut snapshots: Vec<Value> = Vec::new();
    let mut completed = Vec::new();
    let mut retries = 0;
    let mut last = None;
    let mut i = 0;
    while let Some(event) = events.next().await {
        i += 1;
        let event = event.unwrap_or_else(|e| panic!("event {i} is an error: {e}"));
        assert!(last.is_none(), "an event after the final value: {event:?}");
        match event {
            PartialEvent::Snapshot(snapshot) => {
                snapshots.push(serde_json::to_value(&*snapshot).unwrap());
            }
            PartialEvent::Completed { path, value } => completed.push((path.to_string(), value)),
            PartialEvent::Retry { .. } => {
                check_growth(&snapshots, false);
                retries += 1;
                snapshots.clear();
                completed.clear();
            }
            PartialEvent::Final {
                extraction,
                revised,
            } => last = Some((extraction, revised)),
            other => panic!("an event these checks do not know: {other:?}"),
        }
    }
    let (extraction, revised) = last.expect("the stream ended without the final value");
    check_growth(&snapshots, revised);
    let mut reader = PartialReader::<T>::new();
    reader.feed(serde_json::to_string(&extraction.value).unwrap().as_bytes());
    let expected = serde_json::to_value(reader.partial().expect("the final value shows")).unwrap();
    assert_eq!(
        snapshots.last(),
        Some(&expected),
        "the last snapshot is not the final value"
    );
    Streamed {
        snapshots,
        completed,
        retries,
        extraction,
        revised,
    }
}

/// An order with a nested list and a `stream = "done"` field, for `extract_partial`.
#[derive(llm_extract::Extract, serde::Deserialize, serde::Serialize, Debug, Clone, PartialEq)]
struct Order {
    #[extract(stream = "done")]
    number: String,
    customer: String,
    lines: Vec<OrderLine>,
}

/// A line of an [`Order`].
#[derive(llm_extract::Extract, serde::Deserialize, serde::Serialize, Debug, Clone, PartialEq)]
struct OrderLine {
    product: String,
    quantity: u32,
}

pub const ORDER: &str = r#"{"number": "A-17", "customer": "Ada Lovelace", "lines": [{"product": "Earl Grey tea", "quantity": 2}, {"product": "Scones", "quantity": 6}]}"#;

/// The order streamed as partial values: snapshots grow, the number only shows whole, the last one is
/// the value.
pub async fn check_order_partial(llm: &impl llm_extract::Llm, mode: llm_extract::extract::Mode) {
    let extractor = llm_extract::Extractor::new(llm).mode(mode);
    let streamed = collect_checked(extractor.extract_partial::<Order>("x")).await;
    let expected: Order = serde_json::from_str(ORDER).unwrap();
    assert_eq!(streamed.extraction.value, expected);
    assert!(!streamed.revised);
    assert!(
        streamed.snapshots.len() > 10,
        "{}",
        streamed.snapshots.len()
    );
    for snapshot in &streamed.snapshots {
        if let Some(number) = snapshot.get("number") {
            assert_eq!(number, "A-17", "{snapshot}");
        }
    }
    // The customer's name was shown as it grew.
    assert!(streamed.snapshots.iter().any(|s| s["customer"]
        .as_str()
        .is_some_and(|c| c.len() < "Ada Lovelace".len())));
    let paths: Vec<&str> = streamed.completed.iter().map(|(p, _)| p.as_str()).collect();
    assert!(paths.contains(&"lines[1].quantity"), "{paths:?}");
}

/// `bytes` read in one piece and read in the pieces `cuts` cut them into (each cut clamped to the
/// bytes, in order): both show the same partial value, and neither panics.
pub fn pieces_agree<T: PartialValue + llm_extract::Schema>(
    bytes: &[u8],
    mut cuts: Vec<usize>,
) -> Result<(), proptest::test_runner::TestCaseError> {
    cuts.sort_unstable();
    let mut whole = PartialReader::<T>::new();
    whole.feed(bytes);
    let mut split = PartialReader::<T>::new();
    let mut start = 0;
    for cut in cuts.into_iter().chain(std::iter::once(bytes.len())) {
        let cut = cut.clamp(start, bytes.len());
        split.feed(&bytes[start..cut]);
        start = cut;
    }
    proptest::prop_assert_eq!(whole.partial(), split.partial());
    Ok(())
}
