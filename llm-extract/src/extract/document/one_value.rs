//! One value from a long document ("the effective date and the parties of this agreement"): the
//! document is read as for its items (`items.rs`: chunks, passes, grounding in each chunk), then
//! what every chunk found is folded into one value rather than merged into a list.
//!
//! Each copy (an item a chunk returned, spans at document offsets) offers a value for each top-level
//! property. For each property the value is taken from the copy that grounds it best:
//!
//! 1. a non-empty value (not `null`, blank, `[]` or `{}`) over an empty one;
//! 2. the better grounding: the mean, over the property's grounded values, of 1 for an exact match,
//!    0.9 normalized, 0.8 × the score fuzzy, 0 not found (a property without grounded values ranks
//!    level here);
//! 3. the value more copies gave (strings compared as the merge compares them: case, whitespace runs
//!    and typographic quotes ignored);
//! 4. the higher confidence (its least confident leaf), when confidence was asked for;
//! 5. the earlier copy (pass, then chunk, then line order).
//!
//! Every other non-empty value a copy gave that differs from the one kept is a [`Conflict`]; the
//! value keeps the spans and the confidence it had in the copy it was taken from, and
//! [`DocumentValue::sources`] says which copy that was. Should the folded value not validate (a schema
//! whose properties constrain each other, a tagged enum whose copies are different variants), or a
//! copy not be an object, the best whole copy is the value instead. Everything is linear in the
//! copies' size.

use crate::check::{Checks, Issue};
use crate::document::ReadError;
use crate::document::{PageSpan, Pages};
use crate::extract::confidence::logprobs as confidence;
use crate::extract::document::chunk_report::ChunkReport;
use crate::extract::document::document_source::DocumentSource;
use crate::extract::document::items::{assemble, Finished, PassReport};
use crate::extract::setup::target::with_typed;
use crate::extract::Extract;
use crate::extract::Extractor;
use crate::ground::merge::{is_empty, normalized};
use crate::ground::{Conflict, Grounded, MatchKind, Span};
use crate::llm::{Llm, Usage};
use crate::parse::{self, Skipped};
use crate::schema::node::escape_token;
use crate::schema::SchemaSet;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap, HashSet};

/// One value of a long document, folded from what every chunk found, with the chunks' reports.
#[derive(Debug)]
#[non_exhaustive]
pub struct DocumentValue<T> {
    /// The value, with the spans (at document offsets) of its grounded values in the copies they were
    /// taken from. `None` when no chunk found anything, or when `T`'s `Deserialize` refused the folded
    /// value (then it is in [`DocumentValue::rejected`]).
    pub value: Option<Grounded<T>>,
    /// Where each top-level property of the value was taken from, by JSON pointer (`/effective_date`).
    pub sources: BTreeMap<String, Taken>,
    /// Each non-empty value a copy gave a property that differs from the one kept; `key` is the
    /// schema's name.
    pub conflicts: Vec<Conflict>,
    /// The confidence of each leaf value, by JSON pointer into the value (`/parties/0`), in `[0, 1]`,
    /// as the copy it was taken from had it. Empty unless confidence was asked for.
    pub confidence: BTreeMap<String, f32>,
    /// Confidence was asked for and a chunk's backend gave no token log-probabilities.
    pub no_logprobs: bool,
    /// With [`Extractor::min_confidence`], each value under it (soft issues, at paths into the value).
    pub issues: Vec<Issue>,
    /// The folded value, when `T`'s `Deserialize` refused it (typed extraction only).
    pub rejected: Option<Skipped>,
    /// How many copies the chunks returned (items, before the fold).
    pub found: usize,
    /// Every chunk of every pass, in pass then chunk order.
    pub chunks: Vec<ChunkReport>,
    /// Per pass: chunks, failures, items.
    pub passes: Vec<PassReport>,
    /// The tokens every request of every chunk used together.
    pub usage: Usage,
}

impl<T> DocumentValue<T> {
    /// The chunks that failed.
    pub fn failed(&self) -> impl Iterator<Item = &ChunkReport> {
        self.chunks.iter().filter(|chunk| chunk.error.is_some())
    }
}

/// The copy a property of a [`DocumentValue`] was taken from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Taken {
    /// The copy's pass, from 0.
    pub pass: u32,
    /// The copy's chunk in its pass, from 0.
    pub chunk: usize,
    /// How well the property's grounded values were found in that chunk, in `[0, 1]` (1: every one
    /// verbatim); `None` for a property without grounded values.
    pub grounding: Option<f32>,
    /// How many copies gave this value (the same once normalized).
    pub agreeing: usize,
    /// How many copies gave the property a non-empty value.
    pub offered: usize,
}

/// A [`DocumentValue`] of a paged text, with the page of each span.
#[derive(Debug)]
#[non_exhaustive]
pub struct PagedValue<T> {
    /// The value and the reports, with spans at offsets into [`Pages::text`].
    pub document: DocumentValue<T>,
    /// Where each of the value's spans is on the pages (`None` for a value that was not found):
    /// `pages[j]` locates `document.value.spans[j]`.
    pub pages: Vec<Option<PageSpan>>,
}

/// The one-value reading of documents, from [`Extractor::one_value`]: one value of a type from a
/// document of any length, where [`Extractor::extract_document`] lists items.
#[derive(Debug, Clone, Copy)]
pub struct OneValue<'a, L> {
    extractor: &'a Extractor<L>,
}

impl<'a, L: Llm> OneValue<'a, L> {
    /// One value of `T` from a document of any length: the document is chunked and read as
    /// [`Extractor::extract_document`] reads it, then each top-level property is taken from the chunk
    /// that grounds it best, the copies that disagree reported as conflicts and the confidence of the
    /// copy kept (see [`DocumentValue`]). For a contract's parties and dates, a report's totals.
    ///
    /// ```
    /// use llm_extract::extract::Extractor;
    /// use llm_extract::llm::{from_fn, ChatRequest, ChatResponse};
    /// use llm_extract::Extract;
    ///
    /// #[derive(Extract, serde::Deserialize, Debug)]
    /// struct Agreement {
    ///     #[extract(grounded)]
    ///     effective_date: Option<String>,
    ///     #[extract(grounded)]
    ///     governing_law: Option<String>,
    /// }
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// // A stand-in model that gives what its chunk says, and null for the rest.
    /// let llm = from_fn(|request: ChatRequest| {
    ///     let text = request.messages.last().map(|m| m.content.clone()).unwrap_or_default();
    ///     let date = text.contains("1 March 2026").then_some("1 March 2026");
    ///     let law = text.contains("laws of Ireland").then_some("laws of Ireland");
    ///     let item = serde_json::json!({"effective_date": date, "governing_law": law});
    ///     async move { Ok(ChatResponse::new(format!(r#"{{"items": [{item}]}}"#))) }
    /// });
    /// let contract = format!(
    ///     "This agreement is effective 1 March 2026.\n\n{}It is governed by the laws of Ireland.",
    ///     "The parties agree to many things.\n\n".repeat(60)
    /// );
    /// let extractor = Extractor::new(llm).chunk_bytes(600);
    /// let doc = extractor.one_value().extract_document::<Agreement>(&contract).await?;
    /// let agreement = doc.value.unwrap().value;
    /// assert_eq!(agreement.effective_date.as_deref(), Some("1 March 2026"));
    /// assert_eq!(agreement.governing_law.as_deref(), Some("laws of Ireland"));
    /// assert!(doc.sources["/governing_law"].chunk > doc.sources["/effective_date"].chunk);
    /// # Ok::<(), llm_extract::document::ReadError>(())
    /// # }).unwrap();
    /// ```
    pub async fn extract_document<'d, T: Extract>(
        &self,
        source: impl Into<DocumentSource<'d>>,
    ) -> Result<DocumentValue<T>, ReadError> {
        let checks = with_typed::<T>(self.extractor.checks.clone());
        self.extractor
            .document_one(T::schema(), checks, source.into())
            .await
    }

    /// [`OneValue::extract_document`] on a document read page by page, with the page of each span
    /// and its offsets within that page's text.
    pub async fn extract_pages<T: Extract>(
        &self,
        pages: &Pages,
    ) -> Result<PagedValue<T>, ReadError> {
        let document = self.extract_document::<T>(pages.text()).await?;
        let located = document
            .value
            .as_ref()
            .map(|value| value.spans.iter().map(|span| pages.locate(span)).collect())
            .unwrap_or_default();
        Ok(PagedValue {
            document,
            pages: located,
        })
    }
}

impl<L: Llm> Extractor<L> {
    /// Reads documents for one value of a type rather than a list of items: [`OneValue`]
    /// (`extractor.one_value().extract_document::<T>(text)`); a runtime schema's is
    /// [`SchemaExtractor::extract_document_one`](crate::extract::SchemaExtractor::extract_document_one).
    pub fn one_value(&self) -> OneValue<'_, L> {
        OneValue { extractor: self }
    }

    /// One value of `schema` from the document of `source`, `checks` run on each chunk's items, as `O`.
    pub(crate) async fn document_one<O: DeserializeOwned>(
        &self,
        schema: &SchemaSet,
        checks: Checks,
        source: DocumentSource<'_>,
    ) -> Result<DocumentValue<O>, ReadError> {
        let finished = self.finished(schema, checks, source).await?;
        let mut one = fold(schema, finished, self.config.document.passes.max(1));
        if let Some(threshold) = self.config.min_confidence {
            one.issues = confidence::doubts(&one.confidence, threshold, false);
        }
        Ok(typed(one))
    }
}

/// One item a chunk returned, with where it came from and the confidence of its leaves.
struct Copy {
    pass: u32,
    chunk: usize,
    value: Value,
    spans: Vec<Span>,
    /// Confidence by JSON pointer into the item.
    leaves: Vec<(String, f32)>,
}

/// How well a span was found, in `[0, 1]`.
fn found_score(kind: MatchKind) -> f32 {
    match kind {
        MatchKind::Exact => 1.0,
        MatchKind::Normalized => 0.9,
        MatchKind::Fuzzy { score } => 0.8 * score,
        _ => 0.0,
    }
}

/// Whether `path` (a JSON pointer) is `pointer` or lies under it.
fn under(path: &str, pointer: &str) -> bool {
    path.strip_prefix(pointer)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// The mean grounding score of the spans under `pointer`; `None` when there are none.
fn grounding(spans: &[Span], pointer: &str) -> Option<f32> {
    let (sum, count) = spans
        .iter()
        .filter(|span| under(&span.path, pointer))
        .fold((0.0, 0usize), |(sum, count), span| {
            (sum + found_score(span.kind), count + 1)
        });
    (count > 0).then(|| sum / count as f32)
}

/// The least confidence of the leaves under `pointer`; `None` when there are none.
fn least_confidence(leaves: &[(String, f32)], pointer: &str) -> Option<f32> {
    leaves
        .iter()
        .filter(|(path, _)| under(path, pointer))
        .map(|(_, value)| *value)
        .reduce(f32::min)
}

/// A candidate value of one property: its copy's position, and what ranks it.
struct Candidate {
    copy: usize,
    grounding: Option<f32>,
    agreeing: usize,
    confidence: Option<f32>,
    normalized: String,
}

impl Candidate {
    /// Whether this candidate ranks above `other` (steps 2 to 5 of the module docs).
    fn beats(&self, other: &Candidate) -> bool {
        let rank = |c: &Candidate| {
            (
                c.grounding.unwrap_or(0.0),
                c.agreeing,
                c.confidence.unwrap_or(0.0),
            )
        };
        let (a, b) = (rank(self), rank(other));
        match a.0.total_cmp(&b.0) {
            std::cmp::Ordering::Equal => {}
            ordering => return ordering.is_gt(),
        }
        match a.1.cmp(&b.1) {
            std::cmp::Ordering::Equal => {}
            ordering => return ordering.is_gt(),
        }
        match a.2.total_cmp(&b.2) {
            std::cmp::Ordering::Equal => self.copy < other.copy,
            ordering => ordering.is_gt(),
        }
    }
}

/// The fold of the finished chunks (see the module docs), as validated JSON.
fn fold(schema: &SchemaSet, done: Vec<Finished>, passes: u32) -> DocumentValue<Value> {
    let mut copies = Vec::new();
    for (report, items) in &done {
        let mut leaves = confidence::by_item(&report.report.confidence);
        for (line, item) in items.iter().enumerate() {
            copies.push(Copy {
                pass: report.pass,
                chunk: report.index,
                value: item.value.clone(),
                spans: item.spans.clone(),
                leaves: leaves.remove(&line).unwrap_or_default(),
            });
        }
    }
    // The totals are the list's: chunks, passes, tokens.
    let totals = assemble(schema, done, passes);
    let name = schema.name().to_owned();
    let (value, sources, conflicts, confidence) = if copies.is_empty() {
        (None, BTreeMap::new(), Vec::new(), BTreeMap::new())
    } else {
        let folded = by_property(&name, &copies).filter(|(value, ..)| {
            schema
                .validator()
                .is_ok_and(|validator| validator.violations(&value.value).is_empty())
        });
        let (value, sources, conflicts, confidence) =
            folded.unwrap_or_else(|| whole(&name, &copies));
        (Some(value), sources, conflicts, confidence)
    };
    DocumentValue {
        value,
        sources,
        conflicts,
        confidence,
        no_logprobs: totals.no_logprobs,
        issues: Vec::new(),
        rejected: None,
        found: totals.found,
        chunks: totals.chunks,
        passes: totals.passes,
        usage: totals.usage,
    }
}

/// What a fold gives: the value with its spans, the sources, the conflicts and the confidence.
type Folded = (
    Grounded<Value>,
    BTreeMap<String, Taken>,
    Vec<Conflict>,
    BTreeMap<String, f32>,
);

/// Every copy's properties folded, each from its best copy; `None` when a copy is not an object.
fn by_property(name: &str, copies: &[Copy]) -> Option<Folded> {
    // The properties in the order the copies first name them, each with the copies' values.
    let mut order: Vec<&str> = Vec::new();
    let mut by_key: HashMap<&str, Vec<(usize, &Value)>> = HashMap::new();
    for (at, copy) in copies.iter().enumerate() {
        for (key, value) in copy.value.as_object()? {
            let values = by_key.entry(key.as_str()).or_default();
            if values.is_empty() {
                order.push(key);
            }
            values.push((at, value));
        }
    }
    let mut object = Map::new();
    let mut spans = Vec::new();
    let mut sources = BTreeMap::new();
    let mut conflicts = Vec::new();
    let mut confidence = BTreeMap::new();
    for key in order {
        let pointer = format!("/{}", escape_token(key));
        let offered = by_key.remove(key).unwrap_or_default();
        let mut candidates: Vec<Candidate> = offered
            .iter()
            .filter(|(_, value)| !is_empty(value))
            .map(|&(at, value)| Candidate {
                copy: at,
                grounding: copies.get(at).and_then(|c| grounding(&c.spans, &pointer)),
                agreeing: 0,
                confidence: copies
                    .get(at)
                    .and_then(|c| least_confidence(&c.leaves, &pointer)),
                normalized: normalized(value),
            })
            .collect();
        let mut counts: HashMap<&str, usize> = HashMap::new();
        for candidate in &candidates {
            *counts.entry(candidate.normalized.as_str()).or_default() += 1;
        }
        let agreeing: Vec<usize> = candidates
            .iter()
            .map(|c| counts.get(c.normalized.as_str()).copied().unwrap_or(0))
            .collect();
        for (candidate, agreeing) in candidates.iter_mut().zip(agreeing) {
            candidate.agreeing = agreeing;
        }
        let best = candidates
            .iter()
            .reduce(|best, next| if next.beats(best) { next } else { best });
        let Some(best) = best else {
            // No copy gave it a value: the first copy's empty one.
            if let Some((_, value)) = offered.first() {
                object.insert(key.to_owned(), (*value).clone());
            }
            continue;
        };
        let Some(copy) = copies.get(best.copy) else {
            continue;
        };
        let kept = copy.value.get(key).cloned().unwrap_or(Value::Null);
        // Each differing value once, in copy order.
        let mut reported: HashSet<&str> = HashSet::from([best.normalized.as_str()]);
        for candidate in &candidates {
            if reported.insert(candidate.normalized.as_str()) {
                let other = copies
                    .get(candidate.copy)
                    .and_then(|c| c.value.get(key))
                    .cloned()
                    .unwrap_or(Value::Null);
                conflicts.push(Conflict {
                    key: name.to_owned(),
                    path: pointer.clone(),
                    kept: kept.clone(),
                    other,
                });
            }
        }
        spans.extend(
            copy.spans
                .iter()
                .filter(|span| under(&span.path, &pointer))
                .cloned(),
        );
        confidence.extend(
            copy.leaves
                .iter()
                .filter(|(path, _)| under(path, &pointer))
                .cloned(),
        );
        sources.insert(
            pointer,
            Taken {
                pass: copy.pass,
                chunk: copy.chunk,
                grounding: best.grounding,
                agreeing: best.agreeing,
                offered: candidates.len(),
            },
        );
        object.insert(key.to_owned(), kept);
    }
    Some((
        Grounded::new(Value::Object(object), spans),
        sources,
        conflicts,
        confidence,
    ))
}

/// The best whole copy: the most grounded values found, then the most non-empty properties, then the
/// earliest; every other copy that differs is a conflict at the root.
fn whole(name: &str, copies: &[Copy]) -> Folded {
    let score = |copy: &Copy| {
        let found = copy.spans.iter().map(|s| found_score(s.kind)).sum::<f32>();
        let filled = match &copy.value {
            Value::Object(map) => map.values().filter(|v| !is_empty(v)).count(),
            other => usize::from(!is_empty(other)),
        };
        (found, filled)
    };
    let mut best = 0;
    for (at, copy) in copies.iter().enumerate() {
        let (found, filled) = score(copy);
        let (best_found, best_filled) = copies.get(best).map_or((0.0, 0), score);
        if found > best_found || (found == best_found && filled > best_filled) {
            best = at;
        }
    }
    let Some(copy) = copies.get(best) else {
        return (
            Grounded::new(Value::Null, Vec::new()),
            BTreeMap::new(),
            Vec::new(),
            BTreeMap::new(),
        );
    };
    let kept = normalized(&copy.value);
    let mut agreeing = 0;
    let mut reported: HashSet<String> = HashSet::from([kept.clone()]);
    let mut conflicts = Vec::new();
    for other in copies {
        let text = normalized(&other.value);
        agreeing += usize::from(text == kept);
        if !is_empty(&other.value) && reported.insert(text) {
            conflicts.push(Conflict {
                key: name.to_owned(),
                path: String::new(),
                kept: copy.value.clone(),
                other: other.value.clone(),
            });
        }
    }
    let sources = BTreeMap::from([(
        String::new(),
        Taken {
            pass: copy.pass,
            chunk: copy.chunk,
            grounding: grounding(&copy.spans, ""),
            agreeing,
            offered: copies.len(),
        },
    )]);
    (
        Grounded::new(copy.value.clone(), copy.spans.clone()),
        sources,
        conflicts,
        copy.leaves.iter().cloned().collect(),
    )
}

/// The typed form of a folded value: refused by `T`'s `Deserialize`, it is set aside in
/// [`DocumentValue::rejected`].
fn typed<T: DeserializeOwned>(one: DocumentValue<Value>) -> DocumentValue<T> {
    let (value, rejected) = match one.value {
        Some(value) => match parse::typed_item::<T>(&value.value, 1) {
            Ok(typed) => (Some(Grounded::new(typed, value.spans)), None),
            Err(skipped) => (None, Some(skipped)),
        },
        None => (None, None),
    };
    DocumentValue {
        value,
        sources: one.sources,
        conflicts: one.conflicts,
        confidence: one.confidence,
        no_logprobs: one.no_logprobs,
        issues: one.issues,
        rejected,
        found: one.found,
        chunks: one.chunks,
        passes: one.passes,
        usage: one.usage,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{from_fn, ChatRequest, ChatResponse};
    use crate::report::Report;
    use serde_json::json;

    fn agreement() -> SchemaSet {
        SchemaSet::new(
            "Agreement",
            json!({
                "type": "object",
                "properties": {
                    "effective_date": {"type": ["string", "null"], "x-grounded": true},
                    "parties": {"type": "array", "items": {"type": "string", "x-grounded": true}},
                    "term_years": {"type": ["integer", "null"]}
                },
                "required": ["effective_date", "parties", "term_years"],
                "additionalProperties": false
            }),
        )
    }

    /// Eight "pages" of an agreement; the date on page 1, the parties on page 4, a second date on page
    /// 6 (a schedule's), the term on pages 2, 3 and 7 (misread on the first).
    fn contract() -> String {
        let filler = "Each party shall act in good faith under this agreement. ".repeat(8);
        let pages = [
            "MASTER SERVICES AGREEMENT. This agreement is effective as of 1 March 2026.",
            "The initial term is five years; renewal is automatic.",
            "The initial term is five years.",
            "This agreement is made between Acme Widgets Ltd and Borealis Shipping GmbH.",
            "Payment terms follow.",
            "Schedule B takes effect on 2 April 2026.",
            "The initial term is five years.",
            "Signed by both parties.",
        ];
        pages
            .iter()
            .map(|page| format!("{page} {filler}\n\n"))
            .collect()
    }

    /// A stand-in model reading its chunk: the first date it sees, the parties it sees, a term of 5
    /// (of 4 on the page that mentions renewal: a misreading), and a date that is in no text when
    /// the chunk mentions payment (on a repair too: the whole conversation is read).
    fn reader() -> impl Llm {
        from_fn(|request: ChatRequest| {
            let text: String = request
                .messages
                .iter()
                .filter(|m| m.role == crate::llm::Role::User)
                .map(|m| m.content.as_str())
                .collect();
            let mut items = Vec::new();
            for date in ["1 March 2026", "2 April 2026"] {
                if text.contains(date) {
                    items.push(json!({"effective_date": date, "parties": [], "term_years": null}));
                }
            }
            if text.contains("Payment terms") {
                items.push(
                    json!({"effective_date": "31 June 2026", "parties": [], "term_years": null}),
                );
            }
            let parties: Vec<&str> = ["Acme Widgets Ltd", "Borealis Shipping GmbH"]
                .into_iter()
                .filter(|party| text.contains(party))
                .collect();
            if !parties.is_empty() {
                items.push(json!({"effective_date": null, "parties": parties, "term_years": null}));
            }
            if text.contains("renewal is automatic") {
                items.push(json!({"effective_date": null, "parties": [], "term_years": 4}));
            } else if text.contains("term is five years") {
                items.push(json!({"effective_date": null, "parties": [], "term_years": 5}));
            }
            let answer = json!({ "items": items }).to_string();
            async move { Ok(ChatResponse::new(answer)) }
        })
    }

    #[tokio::test]
    async fn each_field_comes_from_the_chunk_that_grounds_it_best_and_conflicts_are_reported() {
        let text = contract();
        let set = agreement();
        let extractor = Extractor::new(reader())
            .chunk_bytes(600)
            .chunk_overlap(0)
            .max_attempts(2);
        let doc = extractor
            .with_schema(&set)
            .extract_document_one(text.as_str())
            .await
            .unwrap();
        assert!(doc.chunks.len() >= 6, "{} chunks", doc.chunks.len());
        assert_eq!(doc.failed().count(), 0);
        let value = doc.value.expect("a value");
        assert_eq!(
            value.value,
            json!({
                "effective_date": "1 March 2026",
                "parties": ["Acme Widgets Ltd", "Borealis Shipping GmbH"],
                "term_years": 5
            })
        );
        // Each span points at its words in the document.
        let quoted: Vec<(&str, &str)> = value
            .spans
            .iter()
            .map(|span| (span.path.as_str(), &text[span.bytes.clone()]))
            .collect();
        assert_eq!(
            quoted,
            [
                ("/effective_date", "1 March 2026"),
                ("/parties/0", "Acme Widgets Ltd"),
                ("/parties/1", "Borealis Shipping GmbH"),
            ]
        );
        // The date and the parties come from different chunks.
        let date = &doc.sources["/effective_date"];
        let parties = &doc.sources["/parties"];
        assert!(date.chunk < parties.chunk, "{date:?} {parties:?}");
        assert_eq!(date.grounding, Some(1.0));
        assert_eq!((date.offered, date.agreeing), (3, 1));
        // The term has no grounded value: the value two chunks agree on wins over the first one.
        let term = &doc.sources["/term_years"];
        assert_eq!((term.grounding, term.agreeing, term.offered), (None, 2, 3));
        // Every other value offered is a conflict: the amendment's date, the date in no text, the
        // misread term.
        let mut conflicts: Vec<(String, Value)> = doc
            .conflicts
            .iter()
            .map(|c| (c.path.clone(), c.other.clone()))
            .collect();
        conflicts.sort_by_key(|(path, other)| (path.clone(), other.to_string()));
        assert_eq!(
            conflicts,
            [
                ("/effective_date".to_owned(), json!("2 April 2026")),
                ("/effective_date".to_owned(), json!("31 June 2026")),
                ("/term_years".to_owned(), json!(4)),
            ]
        );
        assert!(doc.conflicts.iter().all(|c| c.key == "Agreement"));
        assert!(doc.found >= 6, "{}", doc.found);
    }

    fn report(pass: u32, index: usize, confidence: &[(&str, f32)]) -> ChunkReport {
        let report = Report {
            confidence: confidence
                .iter()
                .map(|(pointer, value)| ((*pointer).to_owned(), *value))
                .collect(),
            ..Report::default()
        };
        ChunkReport {
            pass,
            index,
            bytes: 0..0,
            chars: 0..0,
            items: 1,
            report,
            error: None,
            resumed: false,
        }
    }

    #[test]
    fn confidence_is_that_of_the_copy_kept_and_breaks_ties() {
        let set = SchemaSet::new(
            "Total",
            json!({"type": "object", "properties": {"total": {"type": "number"}, "currency": {"type": "string"}}}),
        );
        let done = vec![
            (
                report(0, 0, &[("/0/total", 0.4), ("/0/currency", 0.9)]),
                vec![Grounded::new(
                    json!({"total": 12.5, "currency": "EUR"}),
                    Vec::new(),
                )],
            ),
            (
                report(0, 1, &[("/0/total", 0.95)]),
                vec![Grounded::new(json!({"total": 125.0}), Vec::new())],
            ),
        ];
        let one = fold(&set, done, 1);
        assert_eq!(
            one.value.map(|v| v.value),
            Some(json!({"total": 125.0, "currency": "EUR"}))
        );
        assert_eq!(
            one.confidence,
            BTreeMap::from([("/currency".to_owned(), 0.9), ("/total".to_owned(), 0.95)])
        );
        assert_eq!(one.sources["/total"].chunk, 1);
        assert_eq!(one.sources["/currency"].chunk, 0);
        assert_eq!(one.conflicts.len(), 1);
        let issues = confidence::doubts(&one.confidence, 0.92, false);
        assert_eq!(issues.len(), 1);
        assert_eq!(issues[0].path, "/currency");
    }

    #[test]
    fn copies_that_cannot_be_folded_give_the_best_whole_copy() {
        let set = SchemaSet::new(
            "Party",
            json!({"oneOf": [
                {"type": "object", "properties": {"kind": {"const": "person"}, "name": {"type": "string", "x-grounded": true}},
                 "required": ["kind", "name"], "additionalProperties": false},
                {"type": "object", "properties": {"kind": {"const": "company"}, "registered": {"type": "string", "x-grounded": true}},
                 "required": ["kind", "registered"], "additionalProperties": false}
            ]}),
        );
        let exact = Span {
            path: "/registered".into(),
            value: "Acme Ltd".into(),
            bytes: 10..18,
            chars: 10..18,
            kind: MatchKind::Exact,
        };
        let missing = Span {
            path: "/name".into(),
            value: "Ann".into(),
            bytes: 0..0,
            chars: 0..0,
            kind: MatchKind::NotFound,
        };
        let done = vec![
            (
                report(0, 0, &[]),
                vec![Grounded::new(
                    json!({"kind": "person", "name": "Ann"}),
                    vec![missing],
                )],
            ),
            (
                report(0, 1, &[]),
                vec![Grounded::new(
                    json!({"kind": "company", "registered": "Acme Ltd"}),
                    vec![exact.clone()],
                )],
            ),
        ];
        let one = fold(&set, done, 1);
        let value = one.value.expect("a value");
        assert_eq!(
            value.value,
            json!({"kind": "company", "registered": "Acme Ltd"})
        );
        assert_eq!(value.spans, [exact]);
        assert_eq!(one.sources[""].chunk, 1);
        assert_eq!(one.conflicts.len(), 1);
        assert_eq!(one.conflicts[0].path, "");
    }

    #[test]
    fn no_copies_no_value() {
        let one = fold(&agreement(), vec![(report(0, 0, &[]), Vec::new())], 1);
        assert!(one.value.is_none() && one.conflicts.is_empty());
        assert_eq!(one.chunks.len(), 1);
        let typed: DocumentValue<serde_json::Value> = typed(one);
        assert!(typed.rejected.is_none());
    }
}
