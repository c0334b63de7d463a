//! Partial values while they stream ([`Extractor::extract_partial`](crate::extract::Extractor::extract_partial)):
//! the one-value loop of `engine/value.rs` (the same attempts, validation, repairs and ledger as
//! `extract`), watched chunk by chunk by a [`PartialReader`], whose snapshots and completed values
//! become [`PartialEvent`]s.
//!
//! Snapshots are coalesced: a snapshot the caller has not read yet when the next chunk arrives is
//! replaced by the newer one, so a slow caller sees the latest state, never a backlog; a chunk that
//! changes nothing visible yields none. A snapshot is an [`Arc`]: the reader copies the value only when
//! it changes while the caller still holds the previous one.

use crate::extract::engine::stream::Sink;
use crate::extract::engine::telemetry;
use crate::extract::engine::{Engine, Progress};
use crate::extract::error::ExtractError;
use crate::extract::setup::target::Target;
use crate::extract::Input;
use crate::parse::{from_str_value, JsonPath, Partial, PartialParser, PartialReader, PartialValue};
use crate::report::{AttemptKind, Extraction, Report};
use crate::schema::SchemaSet;
use serde_json::Value;
use std::sync::Arc;
use tracing::Instrument;

/// What [`Extractor::extract_partial`](crate::extract::Extractor::extract_partial) yields, in order: snapshots
/// and completed values while an answer streams, [`PartialEvent::Retry`] before each further attempt,
/// and [`PartialEvent::Final`] last. On failure the stream's last item is the error, which carries the
/// ledger.
#[derive(Debug)]
#[non_exhaustive]
// `Final` carries the whole ledger and comes once per stream; the snapshots are an `Arc` already.
#[allow(clippy::large_enum_variant)]
pub enum PartialEvent<T: PartialValue> {
    /// The value as written so far (at most one per chunk received, none when nothing visible
    /// changed). Within one attempt snapshots only grow: no field disappears, no string shrinks, no
    /// complete value changes; except that an untagged enum shows the first variant the JSON written
    /// so far fits, which may change as it grows.
    Snapshot(Arc<Partial<T>>),
    /// A value inside the answer was closed (a field, an item of a list, at any depth): its path
    /// (`lines[3].amount`) and its JSON as written. The final value may still differ where a repair or
    /// a fix changes it ([`PartialEvent::Final`] says so).
    Completed {
        /// Where the value sits.
        path: JsonPath,
        /// The value as written.
        value: Value,
    },
    /// The answer so far failed (see the ledger) and the model is asked again: the snapshots start
    /// over from nothing with this attempt's answer.
    Retry {
        /// The attempt's number (2 for the first retry), its position in the ledger.
        attempt: u32,
        /// Why: a repair of an invalid answer or a recovery from a loop; or the kind of the answer
        /// before when its stream broke and the backend sent the same request again.
        kind: AttemptKind,
    },
    /// The complete value, validated and repaired exactly as `extract` does, with the same ledger (and,
    /// with [`Extractor::confidence`](crate::extract::Extractor::confidence), the value's confidence and its
    /// doubts: snapshots and completed values carry none, the tokens' log-probabilities arriving with
    /// the end of the answer).
    Final {
        /// The value and its ledger.
        extraction: Extraction<T>,
        /// Whether the last snapshot differed from the value (a fix, a coercion or a dropped key
        /// changed it); a snapshot equal to the value was then sent just before this event. The last
        /// snapshot always equals the value's validated JSON read as a partial value.
        revised: bool,
    },
}

/// Runs the extraction of one value of `target`, sending events to `sink`.
pub(crate) async fn run<G: Target>(
    engine: Engine<'_>,
    target: &G,
    input: Input,
    sink: Sink<PartialEvent<G::Output>>,
) -> Result<Report, ExtractError>
where
    G::Output: PartialValue,
{
    let container = target.schema().wants_container();
    let fresh = || PartialReader::<G::Output>::with_parser(PartialParser::new(container));
    let mut reader = fresh();
    let mut progress = |event: Progress<'_>| match event {
        Progress::Attempt { number, kind } => {
            if number > 1 {
                sink.push(PartialEvent::Retry {
                    attempt: number,
                    kind,
                });
            }
            reader = fresh();
        }
        Progress::Delta(delta) => {
            // An unread snapshot is replaced by this chunk's (and, dropped first, lets the reader
            // update its value in place).
            let unread = sink
                .take_last_if(|event| matches!(event, PartialEvent::Snapshot(_)))
                .is_some();
            let changed = reader.feed(delta.as_bytes());
            for (path, value) in reader.take_completed() {
                sink.push(PartialEvent::Completed { path, value });
            }
            if changed || unread {
                if let Some(snapshot) = reader.snapshot() {
                    sink.push(PartialEvent::Snapshot(snapshot));
                }
            }
        }
    };
    // The same extraction span, and the same note of which backend answered each attempt, as
    // `extract` (`engine/value.rs`).
    let span = telemetry::extraction_span(engine.llm, target.schema().name());
    let watched = engine.one_watched(target, input, Some(&mut progress));
    let extraction = crate::llm::noting_who_answers(watched.instrument(span.clone())).await;
    telemetry::ended(&span, extraction.as_ref().map(|done| &done.report));
    let extraction = extraction?;
    let report = extraction.report.clone();
    let last = reader.snapshot();
    let settled = settled(engine, target.schema(), &report).map(|json| {
        let mut reader = fresh();
        reader.feed(json.to_string().as_bytes());
        reader.snapshot()
    });
    let settled = settled.flatten();
    let revised = settled.is_some() && settled.as_deref() != last.as_deref();
    if let (true, Some(settled)) = (revised, settled) {
        sink.push(PartialEvent::Snapshot(settled));
    }
    sink.push(PartialEvent::Final {
        extraction,
        revised,
    });
    Ok(report)
}

/// The accepted answer's validated JSON, whose partial form the last snapshot must be.
fn settled(engine: Engine<'_>, schema: &SchemaSet, report: &Report) -> Option<Value> {
    let raw = &report.attempts.last()?.raw;
    // The value was accepted: reading its answer again (salvage on, as for a cut answer that was
    // kept) gives the same JSON.
    let options = engine.config.parse.with_salvage(true);
    Some(from_str_value(raw, schema, &options).ok()?.value)
}
