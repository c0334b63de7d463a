//! [`GroundedTarget`] wraps any [`Target`]: each item its decoder completes is grounded in the source
//! ([`Source::ground`]). An item with a value that is nowhere in the text becomes a skipped line whose
//! reason is `at /name: "Jon Smith" does not occur in the text ...`, so the loop re-asks it like any
//! broken line, within the attempt cap. What is still ungrounded when the loop ends is set aside and
//! handed back with [`MatchKind::NotFound`] spans, or dropped.

use crate::extract::setup::example::{Example, ExampleError};
use crate::extract::setup::target::{map_items, Found, Target};
use crate::ground::{has_grounded, Grounded, MatchKind, Source, Span};
use crate::parse::{
    self, work, LineEvent, ParseError, ParseOptions, Parsed, SkipReason, Skipped, WithJson,
};
use crate::schema::SchemaSet;
use crate::validate::Violation;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// A target whose items are grounded in a source text.
pub(crate) struct GroundedTarget<'s, G: Target> {
    inner: G,
    source: &'s Source<'s>,
    /// Whether an ungrounded item is re-asked (skipped) rather than kept as it is.
    check: bool,
    /// Ungrounded items turned into skipped lines, by their JSON text.
    set_aside: Mutex<Vec<(String, Grounded<G::Output>)>>,
}

impl<'s, G: Target> GroundedTarget<'s, G> {
    pub fn new(inner: G, source: &'s Source<'s>) -> Self {
        let check = has_grounded(inner.schema().generic());
        GroundedTarget {
            inner,
            source,
            check,
            set_aside: Mutex::new(Vec::new()),
        }
    }

    fn spans(&self, json: &Value) -> Vec<Span> {
        self.source.ground(self.inner.schema().generic(), json)
    }

    /// Takes back the set-aside items the loop left unresolved (still in `skipped`): removed from
    /// `skipped` and returned, unless `drop` (then they stay in `skipped`). Each set-aside item claims
    /// one ungrounded skipped line with its JSON text, found by hash: linear in the two lists.
    pub(crate) fn unresolved(
        &self,
        skipped: &mut Vec<Skipped>,
        drop: bool,
    ) -> Vec<Grounded<G::Output>> {
        let set_aside = std::mem::take(&mut *self.set_aside_items());
        if drop || set_aside.is_empty() {
            return Vec::new();
        }
        let mut unclaimed: HashMap<&str, usize> = HashMap::new();
        for line in skipped.iter().filter(|line| is_ungrounded(&line.reason)) {
            work::count(1);
            *unclaimed.entry(line.raw.as_str()).or_default() += 1;
        }
        let mut claimed: HashMap<String, usize> = HashMap::new();
        let mut kept = Vec::new();
        for (raw, item) in set_aside {
            work::count(1);
            if let Some(count) = unclaimed.get_mut(raw.as_str()).filter(|count| **count > 0) {
                *count -= 1;
                kept.push(item);
                *claimed.entry(raw).or_default() += 1;
            }
        }
        skipped.retain(|line| {
            if !is_ungrounded(&line.reason) {
                return true;
            }
            work::count(1);
            match claimed.get_mut(&line.raw) {
                Some(count) if *count > 0 => {
                    *count -= 1;
                    false
                }
                _ => true,
            }
        });
        kept
    }

    /// The set-aside items, also after a thread panicked while holding them: the list is never left
    /// half-written (each change is one push or one take), so nothing in it is lost.
    fn set_aside_items(&self) -> MutexGuard<'_, Vec<(String, Grounded<G::Output>)>> {
        self.set_aside
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// The words of the violation an ungrounded value makes (see [`not_found`]).
const NOT_FOUND: &str = "does not occur in the text";

pub(crate) fn is_ungrounded(reason: &SkipReason) -> bool {
    matches!(reason, SkipReason::Schema(violations)
        if !violations.is_empty() && violations.iter().all(|v| v.message.contains(NOT_FOUND)))
}

/// One violation per value not found.
fn not_found(spans: &[Span]) -> Vec<Violation> {
    spans
        .iter()
        .filter(|span| span.kind == MatchKind::NotFound)
        .map(|span| Violation {
            path: span.path.clone(),
            message: format!(
                "{} {NOT_FOUND}; quote the words exactly as the text writes them, or leave the item out",
                Value::String(span.value.clone())
            ),
        })
        .collect()
}

impl<G: Target> Target for GroundedTarget<'_, G> {
    type Output = Grounded<G::Output>;

    fn schema(&self) -> &SchemaSet {
        self.inner.schema()
    }

    fn examples(&self) -> Result<Vec<Example>, ExampleError> {
        self.inner.examples()
    }

    fn grounding(&self) -> Option<&str> {
        self.check.then(|| self.source.text())
    }

    fn parse_one(
        &self,
        text: &str,
        options: &ParseOptions,
    ) -> Result<Parsed<Self::Output>, ParseError> {
        let json = parse::from_str_value(text, self.inner.schema(), options)?;
        let spans = self.spans(&json.value);
        let missing = not_found(&spans);
        if self.check && !missing.is_empty() {
            return Err(ParseError::Schema {
                violations: missing,
                raw: text.to_owned(),
            });
        }
        let parsed = self.inner.parse_one(text, options)?;
        Ok(Parsed {
            value: Grounded::new(parsed.value, spans),
            fixes: parsed.fixes,
        })
    }

    fn vet(
        &self,
        events: Vec<LineEvent<WithJson<Self::Output>>>,
    ) -> Vec<LineEvent<WithJson<Self::Output>>> {
        // The inner target's vetting (its checks) first, on the items without their spans.
        let inner = map_items(events, |grounded, _| grounded.value);
        map_items(self.inner.vet(inner), |value, _| {
            Grounded::new(value, Vec::new())
        })
        .into_iter()
        .map(|event| self.vet_one(event))
        .collect()
    }

    fn issues(&self) -> Vec<crate::check::Issue> {
        self.inner.issues()
    }

    fn deferred(&self) -> Option<crate::extract::setup::target::Deferred<'_>> {
        self.inner.deferred()
    }
}

impl<G: Target> GroundedTarget<'_, G> {
    /// Adds the spans to an item, or sets it aside as a skipped line when a grounded value is
    /// nowhere in the text.
    fn vet_one(
        &self,
        event: LineEvent<WithJson<Grounded<G::Output>>>,
    ) -> LineEvent<WithJson<Grounded<G::Output>>> {
        let found: Found<Grounded<G::Output>> = match event {
            LineEvent::Skipped(skipped) => return LineEvent::Skipped(skipped),
            LineEvent::Item(found) => found,
        };
        let spans = self.spans(&found.value.json);
        let missing = not_found(&spans);
        let mut found = found;
        if self.check && !missing.is_empty() {
            let raw = found.value.json.to_string();
            self.set_aside_items()
                .push((raw.clone(), Grounded::new(found.value.value.value, spans)));
            return LineEvent::Skipped(Skipped {
                line: found.line,
                raw,
                reason: SkipReason::Schema(missing),
            });
        }
        found.value.value.spans = spans;
        LineEvent::Item(found)
    }
}

/// A person whose one property, `name`, is grounded: the schema the grounding tests of this folder
/// share.
#[cfg(test)]
pub(super) fn grounded_person() -> SchemaSet {
    SchemaSet::new(
        "Person",
        serde_json::json!({
            "type": "object",
            "properties": {"name": {"type": "string", "x-grounded": true}},
            "required": ["name"],
            "additionalProperties": false
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::setup::target::Runtime;
    use crate::parse::{work, LineEvent, Skipped, WithJson};
    use serde_json::json;

    /// An item whose name is not in the text, as the decoder hands it to [`GroundedTarget::vet_one`].
    fn ungrounded_item(name: &str, line: usize) -> LineEvent<WithJson<Grounded<Value>>> {
        let json = json!({ "name": name });
        LineEvent::Item(crate::parse::Item {
            value: WithJson {
                value: Grounded::new(json.clone(), Vec::new()),
                json,
            },
            line,
            fixes: Vec::new(),
        })
    }

    /// What [`GroundedTarget::vet_one`] made of an item it set aside.
    fn skipped_line(event: LineEvent<WithJson<Grounded<Value>>>) -> Skipped {
        match event {
            LineEvent::Skipped(skipped) => skipped,
            LineEvent::Item(item) => panic!("kept: {}", item.value.json),
        }
    }

    #[test]
    fn an_item_set_aside_after_a_panic_elsewhere_is_not_lost() {
        let set = grounded_person();
        let source = Source::new("Holmes alone.");
        let grounded = GroundedTarget::new(Runtime::new(&set), &source);
        // Another thread panics while it holds the set-aside list.
        std::thread::scope(|scope| {
            let held = scope.spawn(|| {
                let _guard = grounded.set_aside_items();
                panic!("a panic while the list is held");
            });
            assert!(held.join().is_err());
        });
        assert!(grounded.set_aside.is_poisoned());
        let mut skipped = vec![skipped_line(grounded.vet_one(ungrounded_item("Watson", 1)))];
        assert!(is_ungrounded(&skipped[0].reason));
        let back = grounded.unresolved(&mut skipped, false);
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].value, json!({"name": "Watson"}));
        assert_eq!(back[0].spans[0].kind, MatchKind::NotFound);
        assert!(skipped.is_empty(), "{skipped:?}");
    }

    #[test]
    fn each_set_aside_item_takes_back_one_skipped_line() {
        let set = grounded_person();
        let source = Source::new("Holmes alone.");
        let grounded = GroundedTarget::new(Runtime::new(&set), &source);
        // The same ungrounded answer skipped twice but set aside once (the second time by a path that
        // sets nothing aside): one item comes back, one line stays skipped.
        let first = skipped_line(grounded.vet_one(ungrounded_item("Watson", 1)));
        let again = Skipped {
            line: 2,
            ..first.clone()
        };
        let broken = Skipped {
            line: 3,
            raw: "{\"name\": ".into(),
            reason: SkipReason::Truncated,
        };
        let mut skipped = vec![first, again, broken];
        let back = grounded.unresolved(&mut skipped, false);
        assert_eq!(back.len(), 1);
        let left: Vec<usize> = skipped.iter().map(|line| line.line).collect();
        assert_eq!(left, [2, 3]);
    }

    #[test]
    fn taking_back_unresolved_items_is_linear() {
        let set = grounded_person();
        let source = Source::new("Holmes alone.");
        for n in [500, 2_000] {
            let grounded = GroundedTarget::new(Runtime::new(&set), &source);
            let mut skipped: Vec<Skipped> = (0..n)
                .map(|i| skipped_line(grounded.vet_one(ungrounded_item(&format!("Watson {i}"), i))))
                .collect();
            let mut back = Vec::new();
            let steps = work::of(|| back = grounded.unresolved(&mut skipped, false));
            assert_eq!(back.len(), n);
            assert!(skipped.is_empty());
            // One step per skipped line counted, one per item, one per line taken out.
            assert!(steps <= 3 * n, "{steps} steps for {n} items");
        }
    }
}
