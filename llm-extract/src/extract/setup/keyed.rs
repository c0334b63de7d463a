//! The items of `extract_all` and `extract_stream` merged on their keys, and, under
//! [`Extractor::require_grounding`](crate::extract::Extractor::require_grounding), only the grounded ones.
//!
//! A type with key fields (`#[extract(key)]`, `"x-key": true`) names an item by them: copies of one
//! item the model lists several times become one, as in a document ([`Merger`]: the first non-empty
//! value of each property wins, a later different one is a [`Conflict`](crate::ground::Conflict) in
//! [`Report::conflicts`]). A type without key fields keeps every item the loop keeps.
//!
//! - `extract_all`: the items are merged once the loop ends, in the order their first copy arrived; a
//!   merged item is read again from its merged JSON (an item the type then refuses is a skipped line),
//!   each property with the confidence of the copy it was kept from.
//! - `extract_stream`: an item is handed on when its key is new; a later copy is not handed on again.
//!   Where it contradicts the copy handed on, the difference is a conflict in the stream's report;
//!   a value it only adds (where the first copy was empty) is not delivered.
//!
//! Grounding: when grounding is required and the schema has grounded strings, the items are grounded
//! against the input's `text` variable ([`GroundedTarget`], as a document's chunks are): an item whose
//! grounded value is nowhere in it is re-asked within the attempt cap, then dropped and left in
//! [`Report::skipped`].

use crate::extract::confidence::logprobs::{self as confidence, Copied};
use crate::extract::document::grounded_target::GroundedTarget;
use crate::extract::engine::Engine;
use crate::extract::error::ExtractError;
use crate::extract::setup::config::Input;
use crate::extract::setup::target::{map_items, Target};
use crate::ground::{has_grounded, Grounded, Merger, Source};
use crate::parse::{self, LineEvent, ParseError, ParseOptions, Parsed, WithJson};
use crate::report::Report;
use crate::schema::SchemaSet;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::HashMap;

/// An item with its validated JSON, what the merge reads.
pub(crate) struct Keep<O> {
    value: O,
    json: Value,
}

/// Reads the item alone (its JSON is added when the decoder hands it on, in [`Keyed::vet`]).
impl<'de, O: serde::Deserialize<'de>> serde::Deserialize<'de> for Keep<O> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        O::deserialize(deserializer).map(|value| Keep {
            value,
            json: Value::Null,
        })
    }
}

/// A target whose items carry their JSON.
struct Keyed<G>(G);

impl<G: Target> Target for Keyed<G> {
    type Output = Keep<G::Output>;

    crate::extract::setup::target::as_inner!();

    fn parse_one(
        &self,
        text: &str,
        options: &ParseOptions,
    ) -> Result<Parsed<Self::Output>, ParseError> {
        let json = parse::from_str_value(text, self.0.schema(), options)?.value;
        let parsed = self.0.parse_one(text, options)?;
        Ok(Parsed {
            value: Keep {
                value: parsed.value,
                json,
            },
            fixes: parsed.fixes,
        })
    }

    fn vet(
        &self,
        events: Vec<LineEvent<WithJson<Self::Output>>>,
    ) -> Vec<LineEvent<WithJson<Self::Output>>> {
        let inner = map_items(events, |keep, _| keep.value);
        map_items(self.0.vet(inner), |value, json| Keep {
            value,
            json: json.clone(),
        })
    }

    fn issues(&self) -> Vec<crate::check::Issue> {
        self.0.issues()
    }

    fn deferred(&self) -> Option<crate::extract::setup::target::Deferred<'_>> {
        self.0.deferred()
    }
}

/// How the items reach the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Handing {
    /// All at once when the loop ends, merged (`extract_all`).
    Merged,
    /// Each as soon as it is complete, the first copy of each key (`extract_stream`).
    FirstCopies,
}

/// Items of one extraction merged on their keys. See the [module](self) docs.
struct Items<O> {
    merger: Merger,
    /// Whether the schema names key fields (else nothing is merged).
    keyed: bool,
    /// The first copy of each item, by position; `None` once handed on.
    first: Vec<Option<O>>,
    /// Whether a later copy merged into the item at the same position.
    merged: Vec<bool>,
    /// The position of each identity.
    at: HashMap<String, usize>,
    /// For each item taken, in order, the position of its first copy when it was one (`None` for a
    /// later copy): how the loop's items map onto the merged ones.
    order: Vec<Option<usize>>,
    /// Every item taken, in order, with the position of its first copy, when the confidence of
    /// merged items is wanted (`extract_all` with confidence on).
    copies: Option<Vec<Copied>>,
}

impl<O: DeserializeOwned> Items<O> {
    /// Items of `schema`; `copies` keeps what the confidence of merged items is found from.
    fn new(schema: &SchemaSet, copies: bool) -> Self {
        let merger = Merger::new(schema.generic());
        let keyed = merger.keys().next().is_some();
        Items {
            merger,
            keyed,
            first: Vec::new(),
            merged: Vec::new(),
            at: HashMap::new(),
            order: Vec::new(),
            copies: copies.then(Vec::new),
        }
    }

    /// Takes an item; gives it back when it is the first copy of its key (or there are no keys) and
    /// `handing` hands items on at once.
    fn add(&mut self, item: Keep<O>, handing: Handing) -> Option<O> {
        if !self.keyed {
            self.order.push(Some(self.first.len()));
            self.first.push(Some(item.value));
            return self.hand_last(handing);
        }
        let identity = self.merger.identity(&item.json);
        if let Some(copies) = &mut self.copies {
            let at = self.at.get(&identity).copied().unwrap_or(self.first.len());
            copies.push(Copied {
                at,
                json: item.json.clone(),
                leaves: Vec::new(),
            });
        }
        if self.merger.add(item.json, Vec::new()) {
            self.order.push(Some(self.first.len()));
            self.at.insert(identity, self.first.len());
            self.first.push(Some(item.value));
            self.merged.push(false);
            return self.hand_last(handing);
        }
        self.order.push(None);
        if let Some(slot) = self.at.get(&identity).and_then(|&i| self.merged.get_mut(i)) {
            *slot = true;
        }
        None
    }

    fn hand_last(&mut self, handing: Handing) -> Option<O> {
        match handing {
            Handing::FirstCopies => self.first.last_mut().and_then(Option::take),
            Handing::Merged => None,
        }
    }

    /// The items not yet handed on, merged, in the order their first copy arrived; the conflicts go to
    /// `report`, as do merged items `O` refuses (skipped lines). The confidence of the items taken moves
    /// to the items returned: handed on as they came (`extract_stream`), each item keeps its first
    /// copy's; merged (`extract_all`), each property of an item keeps the confidence of the copy it
    /// was kept from ([`confidence::merged`]).
    fn finish(self, report: &mut Report) -> Vec<O> {
        let (merged_json, conflicts) = self.merger.finish();
        report.conflicts.extend(conflicts);
        if !self.keyed {
            return self.first.into_iter().flatten().collect();
        }
        let merged_confidence = self.copies.map(|mut copies| {
            let mut leaves = confidence::by_item(&report.confidence);
            for (position, copy) in copies.iter_mut().enumerate() {
                copy.leaves = leaves.remove(&position).unwrap_or_default();
            }
            let kept: Vec<&Value> = merged_json.iter().map(|(json, _)| json).collect();
            confidence::merged(copies, &kept)
        });
        let handed = self.first.iter().all(Option::is_none);
        let mut items = Vec::with_capacity(self.first.len());
        // Where each first copy's item ends up among those returned.
        let mut placed = vec![None; self.first.len()];
        let copies = self.first.into_iter().zip(self.merged).zip(merged_json);
        for (line, ((first, merged), (json, _))) in copies.enumerate() {
            let at = items.len();
            match (first, merged) {
                (Some(first), false) => items.push(first),
                (Some(_), true) => match parse::typed_item::<O>(&json, line + 1) {
                    Ok(value) => items.push(value),
                    Err(skipped) => report.skipped.push(skipped),
                },
                (None, _) => {}
            }
            if items.len() > at {
                placed[line] = Some(at);
            } else if handed {
                // Handed on as it came (`extract_stream`): first copies, in order.
                placed[line] = Some(line);
            }
        }
        match merged_confidence {
            Some(mut merged) => {
                confidence::renumber(&mut merged, &placed);
                report.confidence = merged;
            }
            None => {
                let taken: Vec<Option<usize>> = self
                    .order
                    .iter()
                    .map(|first| first.and_then(|i| placed.get(i).copied().flatten()))
                    .collect();
                confidence::renumber(&mut report.confidence, &taken);
            }
        }
        items
    }
}

/// Extracts the items of `target`, merged on its key fields and, when grounding is required, grounded
/// in the input's `text`; each item goes to `sink` as `handing` says.
pub(crate) async fn items<G: Target>(
    engine: Engine<'_>,
    target: G,
    input: Input,
    handing: Handing,
    sink: &mut (dyn FnMut(G::Output) + Send + '_),
) -> Result<Report, ExtractError> {
    let grounded = engine.config.require_grounding && has_grounded(target.schema().generic());
    match input.text_var().filter(|_| grounded).map(str::to_owned) {
        Some(text) => {
            let source = Source::new(&text);
            let grounded = GroundedTarget::new(target, &source);
            run(engine, grounded, input, handing, &mut |item: Grounded<
                _,
            >| {
                sink(item.value)
            })
            .await
        }
        None => run(engine, target, input, handing, sink).await,
    }
}

async fn run<G: Target>(
    engine: Engine<'_>,
    target: G,
    input: Input,
    handing: Handing,
    sink: &mut (dyn FnMut(G::Output) + Send + '_),
) -> Result<Report, ExtractError> {
    let merged_confidence = handing == Handing::Merged && engine.config.confidence.is_some();
    let mut items = Items::new(target.schema(), merged_confidence);
    let keyed = Keyed(target);
    let mut take = |item: Keep<G::Output>| {
        if let Some(value) = items.add(item, handing) {
            sink(value);
        }
    };
    let result = engine.many(&keyed, input, &mut take).await;
    let (mut report, error) = match result {
        Ok(report) => (report, None),
        Err(mut error) => (std::mem::take(error.report_mut()), Some(error)),
    };
    for item in items.finish(&mut report) {
        sink(item);
    }
    if let Some(threshold) = engine.config.min_confidence {
        let doubts = confidence::doubts(&report.confidence, threshold, true);
        report.issues.extend(doubts);
    }
    match error {
        None => Ok(report),
        Some(mut error) => {
            *error.report_mut() = report;
            Err(error)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::BTreeMap;

    fn keyed_schema() -> SchemaSet {
        SchemaSet::new(
            "Person",
            json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string", "x-key": true},
                    "company": {"type": ["string", "null"]}
                },
                "required": ["name", "company"],
                "additionalProperties": false
            }),
        )
    }

    fn keep(json: Value) -> Keep<Value> {
        Keep {
            value: json.clone(),
            json,
        }
    }

    /// `people` of `keyed_schema` taken as `extract_all` takes items (merged, none handed on before
    /// the end), keeping what the confidence of merged items is found from when `copies`.
    fn merged(people: impl IntoIterator<Item = Value>, copies: bool) -> Items<Value> {
        let mut items = Items::<Value>::new(&keyed_schema(), copies);
        for person in people {
            assert!(items.add(keep(person), Handing::Merged).is_none());
        }
        items
    }

    /// Lisa Su without a company, then Tim Cook at Apple: how both merged lists begin.
    fn lisa_then_tim() -> [Value; 2] {
        [
            json!({"name": "Lisa Su", "company": null}),
            json!({"name": "Tim Cook", "company": "Apple"}),
        ]
    }

    /// Confidence by JSON pointer.
    fn confidence(of: &[(&str, f32)]) -> BTreeMap<String, f32> {
        of.iter().map(|&(path, c)| (path.to_owned(), c)).collect()
    }

    #[test]
    fn copies_merge_and_a_merged_item_is_read_from_its_merged_json() {
        let copies = [
            json!({"name": "lisa  su", "company": "AMD"}),
            json!({"name": "Lisa Su", "company": "Nvidia"}),
        ];
        let items = merged(lisa_then_tim().into_iter().chain(copies), false);
        let mut report = Report::default();
        let out = items.finish(&mut report);
        assert_eq!(
            out,
            [
                json!({"name": "Lisa Su", "company": "AMD"}),
                json!({"name": "Tim Cook", "company": "Apple"})
            ]
        );
        let conflicts = &report.conflicts;
        assert_eq!(conflicts.len(), 1);
        assert_eq!(conflicts[0].path, "/company");
        assert_eq!(conflicts[0].other, json!("Nvidia"));
        assert!(report.skipped.is_empty());
    }

    #[test]
    fn a_stream_hands_on_first_copies_only() {
        let schema = keyed_schema();
        let mut items = Items::<Value>::new(&schema, false);
        let first = json!({"name": "Lisa Su", "company": "AMD"});
        assert_eq!(
            items.add(keep(first.clone()), Handing::FirstCopies),
            Some(first)
        );
        let again = json!({"name": "Lisa Su", "company": "Nvidia"});
        assert_eq!(items.add(keep(again), Handing::FirstCopies), None);
        let mut report = Report::default();
        assert!(items.finish(&mut report).is_empty());
        assert_eq!(report.conflicts.len(), 1);
    }

    #[test]
    fn without_key_fields_every_item_is_kept() {
        let schema = SchemaSet::new(
            "Name",
            json!({"type": "object", "properties": {"name": {"type": "string"}}}),
        );
        let mut items = Items::<Value>::new(&schema, false);
        for _ in 0..2 {
            items.add(keep(json!({"name": "Lisa Su"})), Handing::Merged);
        }
        let mut report = Report::default();
        assert_eq!(items.finish(&mut report).len(), 2);
        assert!(report.conflicts.is_empty());
    }

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Short {
        name: String,
        company: Option<Tiny>,
    }

    #[derive(Debug, serde::Deserialize)]
    struct Tiny(#[allow(dead_code)] u8);

    #[test]
    fn a_merged_item_the_type_refuses_is_a_skipped_line() {
        let schema = keyed_schema();
        let mut items = Items::<Short>::new(&schema, false);
        let first = Keep {
            value: Short {
                name: "Lisa Su".into(),
                company: None,
            },
            json: json!({"name": "Lisa Su", "company": null}),
        };
        items.add(first, Handing::Merged);
        let copy = Keep {
            value: Short {
                name: "Lisa Su".into(),
                company: None,
            },
            json: json!({"name": "Lisa Su", "company": "AMD"}),
        };
        items.add(copy, Handing::Merged);
        let mut report = Report::default();
        assert!(items.finish(&mut report).is_empty());
        assert_eq!(report.skipped.len(), 1);
        assert!(report.skipped[0].raw.contains("AMD"));
    }

    #[test]
    fn a_merged_item_keeps_the_confidence_of_the_copy_each_property_came_from() {
        let copy = json!({"name": "Lisa Su", "company": "AMD"});
        let items = merged(lisa_then_tim().into_iter().chain([copy]), true);
        let mut report = Report {
            confidence: confidence(&[
                ("/0/name", 0.9),
                ("/0/company", 0.8),
                ("/1/name", 0.7),
                ("/1/company", 0.6),
                ("/2/name", 0.5),
                ("/2/company", 0.4),
            ]),
            ..Report::default()
        };
        items.finish(&mut report);
        // Lisa Su's name from her first copy, her company from the copy that gave it (not the null's).
        let expected = confidence(&[
            ("/0/name", 0.9),
            ("/0/company", 0.4),
            ("/1/name", 0.7),
            ("/1/company", 0.6),
        ]);
        assert_eq!(report.confidence, expected);
    }
}
