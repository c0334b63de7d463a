//! Grounded extraction: every item comes with the [`Span`]s of its grounded values, and a value that
//! does not occur in the text is an error the repair loop shows the model.
//!
//! [`Anchored`] wraps any [`Target`]: each item its decoder completes is aligned against the source
//! ([`Source::ground`]). An item with a value that is nowhere in the text becomes a skipped line whose
//! reason is `at /name: "Jon Smith" does not occur in the text ...`, so the loop re-asks it like any
//! broken line, within the attempt cap. What is still ungrounded when the loop ends is set aside here
//! and handed back with [`MatchKind::NotFound`] spans, or left in [`Report::skipped`](crate::report::Report::skipped) (dropped)
//! under [`Extractor::require_grounding`].

use super::config::Input;
use super::error::ExtractError;
use super::example::{Example, ExampleError};
use super::target::{Derived, Found, Runtime, Target};
use super::Extractor;
use crate::ground::{has_grounded, Grounded, MatchKind, Source, Span};
use crate::llm::Llm;
use crate::parse::{
    self, work, LineEvent, ParseError, ParseOptions, Parsed, SkipReason, Skipped, WithJson,
};
use crate::report::Extraction;
use crate::schema::SchemaSet;
use crate::validate::Violation;
use crate::Extract;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// A target whose items are aligned against a source text.
pub(crate) struct Anchored<'s, G: Target> {
    inner: G,
    source: &'s Source<'s>,
    /// Whether an ungrounded item is re-asked (skipped) rather than kept as it is.
    check: bool,
    /// Ungrounded items turned into skipped lines, by their JSON text.
    set_aside: Mutex<Vec<(String, Grounded<G::Output>)>>,
}

impl<'s, G: Target> Anchored<'s, G> {
    pub fn new(inner: G, source: &'s Source<'s>) -> Self {
        let check = has_grounded(inner.schema().generic());
        Anchored {
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
    fn unresolved(&self, skipped: &mut Vec<Skipped>, drop: bool) -> Vec<Grounded<G::Output>> {
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

fn is_ungrounded(reason: &SkipReason) -> bool {
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

impl<G: Target> Target for Anchored<'_, G> {
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
        events
            .into_iter()
            .map(|event| self.vet_one(event))
            .collect()
    }
}

impl<G: Target> Anchored<'_, G> {
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

impl<L: Llm> Extractor<L> {
    /// Whether an item whose grounded value is still nowhere in the text after the repairs is dropped
    /// (`true`; it stays in [`Report::skipped`](crate::report::Report::skipped)) or kept with a [`MatchKind::NotFound`] span
    /// (`false`, the default).
    ///
    /// With `true`, [`Extractor::extract_all`], [`Extractor::extract_stream`] and their runtime-schema
    /// twins ground too: a type's grounded values are found in the input's `text` variable and the items
    /// whose values are not are re-asked, then dropped (without a `text` variable nothing is grounded).
    pub fn require_grounding(mut self, require: bool) -> Self {
        self.config.require_grounding = require;
        self
    }

    /// Every item of `T` in `text`, each with the [`Span`]s of its grounded values
    /// (`#[extract(grounded)]` fields) in `text`.
    ///
    /// A value the model wrote that does not occur in `text` (exactly, normalized or fuzzily, see
    /// [`Source::align`]) is shown to the model as an error (`at /name: "Jon Smith" does not occur in
    /// the text`) and re-asked within the attempt cap, like a broken line.
    ///
    /// ```
    /// use llm_extract::llm::{from_fn, ChatResponse};
    /// use llm_extract::extract::Extractor;
    /// use llm_extract::ground::MatchKind;
    /// use llm_extract::Extract;
    ///
    /// #[derive(Extract, serde::Deserialize, Debug)]
    /// struct Person {
    ///     #[extract(grounded)]
    ///     name: String,
    /// }
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let llm = from_fn(|_| async { Ok(ChatResponse::new(r#"{"items": [{"name": "Irene Adler"}]}"#)) });
    /// let text = "To Sherlock Holmes she is always the woman: Irene Adler.";
    /// let out = Extractor::new(llm).extract_grounded_all::<Person>(text).await?;
    /// let span = &out.value[0].spans[0];
    /// assert_eq!((span.bytes.clone(), span.kind), (44..55, MatchKind::Exact));
    /// # Ok::<(), llm_extract::extract::ExtractError>(())
    /// # }).unwrap();
    /// ```
    pub async fn extract_grounded_all<T: Extract>(
        &self,
        text: &str,
    ) -> Result<Extraction<Vec<Grounded<T>>>, ExtractError> {
        let source = Source::new(text);
        self.grounded_many(Derived::<T>::new(), &source, Input::text(text))
            .await
    }

    /// Every item of a runtime schema in `text`, as validated JSON with its spans (strings marked
    /// `"x-grounded": true` in the schema are grounded).
    pub async fn extract_grounded_values(
        &self,
        schema: &SchemaSet,
        text: &str,
    ) -> Result<Extraction<Vec<Grounded<Value>>>, ExtractError> {
        let source = Source::new(text);
        self.grounded_many(Runtime(schema), &source, Input::text(text))
            .await
    }

    /// The items of `target` from `input`, grounded in `source`.
    pub(crate) async fn grounded_many<G: Target>(
        &self,
        target: G,
        source: &Source<'_>,
        input: Input,
    ) -> Result<Extraction<Vec<Grounded<G::Output>>>, ExtractError> {
        let target = Anchored::new(target, source);
        let mut items = Vec::new();
        let mut push = |item: Grounded<G::Output>| items.push(item);
        let mut report = self.engine().many(&target, input, &mut push).await?;
        let drop = self.config.require_grounding;
        items.extend(target.unresolved(&mut report.skipped, drop));
        Ok(Extraction::new(items, report))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{from_fn, ChatResponse};
    use crate::schema::Shape;
    use serde_json::json;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    fn schema() -> SchemaSet {
        SchemaSet::new(
            "Person",
            json!({
                "type": "object",
                "properties": {"name": {"type": "string", "x-grounded": true}},
                "required": ["name"],
                "additionalProperties": false
            }),
        )
    }

    /// A backend that answers `answers` in turn and records the prompts it was sent.
    fn scripted(answers: Vec<&'static str>) -> (impl Llm, Arc<Mutex<Vec<String>>>) {
        let prompts = Arc::new(Mutex::new(Vec::new()));
        let seen = prompts.clone();
        let turn = Arc::new(AtomicUsize::new(0));
        let llm = from_fn(move |request: crate::ChatRequest| {
            let i = turn.fetch_add(1, Ordering::SeqCst);
            let last = request
                .messages
                .last()
                .map(|m| m.content.clone())
                .unwrap_or_default();
            if let Ok(mut p) = seen.lock() {
                p.push(last);
            }
            let answer = answers.get(i).copied().unwrap_or("");
            async move { Ok(ChatResponse::new(answer)) }
        });
        (llm, prompts)
    }

    #[tokio::test]
    async fn an_ungrounded_value_is_repaired_with_the_words_shown() {
        let (llm, prompts) = scripted(vec![
            r#"{"name": "Jon Smith"}"#,
            r#"{"name": "John Smith"}"#,
        ]);
        let out = Extractor::new(llm)
            .mode(crate::Mode::Prompted)
            .extract_grounded_values(&schema(), "A man called John Smith came in.")
            .await
            .unwrap();
        assert_eq!(out.value.len(), 1);
        assert_eq!(out.value[0].value, json!({"name": "John Smith"}));
        assert_eq!(out.value[0].spans[0].bytes, 13..23);
        assert_eq!(out.report.attempts.len(), 2);
        let prompts = prompts.lock().unwrap();
        assert!(
            prompts[1].contains(r#"at /name: "Jon Smith" does not occur in the text"#),
            "{}",
            prompts[1]
        );
    }

    #[tokio::test]
    async fn what_stays_ungrounded_is_kept_as_not_found_or_dropped() {
        let answers = vec![r#"{"name": "Watson"}"#; 3];
        let (llm, _) = scripted(answers.clone());
        let out = Extractor::new(llm)
            .mode(crate::Mode::Prompted)
            .extract_grounded_values(&schema(), "Holmes alone.")
            .await
            .unwrap();
        assert_eq!(out.value.len(), 1);
        assert_eq!(out.value[0].spans[0].kind, MatchKind::NotFound);
        assert!(out.report.skipped.is_empty());
        assert_eq!(out.report.attempts.len(), 3);

        let (llm, _) = scripted(answers);
        let out = Extractor::new(llm)
            .mode(crate::Mode::Prompted)
            .require_grounding(true)
            .extract_grounded_values(&schema(), "Holmes alone.")
            .await
            .unwrap();
        assert!(out.value.is_empty());
        assert_eq!(out.report.skipped.len(), 1);
        assert!(is_ungrounded(&out.report.skipped[0].reason));
    }

    /// A backend that grounds while decoding (as the embedded engine does), recording its requests.
    struct Grounding<L>(L, Arc<Mutex<Vec<crate::ChatRequest>>>);

    impl<L: Llm> Llm for Grounding<L> {
        fn dialect(&self) -> crate::Dialect {
            crate::Dialect::Ollama
        }
        fn constrains_json_lines(&self) -> bool {
            true
        }
        fn constrains_grounding(&self) -> bool {
            true
        }
        fn chat_stream(
            &self,
            request: crate::ChatRequest,
        ) -> crate::llm::BoxFuture<'_, Result<crate::llm::ChatStream, crate::LlmError>> {
            if let Ok(mut seen) = self.1.lock() {
                seen.push(request.clone());
            }
            self.0.chat_stream(request)
        }
    }

    #[tokio::test]
    async fn a_backend_that_grounds_while_decoding_gets_the_source_and_the_marks() {
        let text = "A man called John Smith came in.";
        let answer =
            || from_fn(|_| async { Ok(ChatResponse::new("{\"name\": \"John Smith\"}\n")) });
        let seen = Arc::new(Mutex::new(Vec::new()));
        let out = Extractor::new(Grounding(answer(), seen.clone()))
            .extract_grounded_values(&schema(), text)
            .await
            .unwrap();
        assert_eq!(out.value[0].spans[0].kind, MatchKind::Exact);
        let sent = seen.lock().unwrap()[0].clone();
        assert_eq!(sent.grounding.as_deref(), Some(text));
        assert_eq!(
            sent.schema.unwrap().pointer("/properties/name/x-grounded"),
            Some(&json!(true))
        );

        // A server gets neither; nor does the grounding backend for an ungrounded extraction.
        let seen_by_server = Arc::new(Mutex::new(Vec::new()));
        let recorded = seen_by_server.clone();
        let server = from_fn(move |request: crate::ChatRequest| {
            if let Ok(mut seen) = recorded.lock() {
                seen.push(request);
            }
            async { Ok(ChatResponse::new("{\"name\": \"John Smith\"}")) }
        })
        .with_dialect(crate::Dialect::Ollama);
        Extractor::new(server)
            .extract_grounded_values(&schema(), text)
            .await
            .unwrap();
        let sent = seen_by_server.lock().unwrap()[0].clone();
        assert_eq!(sent.grounding, None);
        assert!(!sent.schema.unwrap().to_string().contains("x-grounded"));

        // Nor does it when the extraction is not a grounded one.
        let seen = Arc::new(Mutex::new(Vec::new()));
        Extractor::new(Grounding(answer(), seen.clone()))
            .extract_value(&schema(), text)
            .await
            .unwrap();
        assert_eq!(seen.lock().unwrap()[0].grounding, None);
    }

    /// An item whose name is not in the text, as the decoder hands it to [`Anchored::vet_one`].
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

    /// What [`Anchored::vet_one`] made of an item it set aside.
    fn skipped_line(event: LineEvent<WithJson<Grounded<Value>>>) -> Skipped {
        match event {
            LineEvent::Skipped(skipped) => skipped,
            LineEvent::Item(item) => panic!("kept: {}", item.value.json),
        }
    }

    #[test]
    fn an_item_set_aside_after_a_panic_elsewhere_is_not_lost() {
        let set = schema();
        let source = Source::new("Holmes alone.");
        let anchored = Anchored::new(Runtime(&set), &source);
        // Another thread panics while it holds the set-aside list.
        std::thread::scope(|scope| {
            let held = scope.spawn(|| {
                let _guard = anchored.set_aside_items();
                panic!("a panic while the list is held");
            });
            assert!(held.join().is_err());
        });
        assert!(anchored.set_aside.is_poisoned());
        let mut skipped = vec![skipped_line(anchored.vet_one(ungrounded_item("Watson", 1)))];
        assert!(is_ungrounded(&skipped[0].reason));
        let back = anchored.unresolved(&mut skipped, false);
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].value, json!({"name": "Watson"}));
        assert_eq!(back[0].spans[0].kind, MatchKind::NotFound);
        assert!(skipped.is_empty(), "{skipped:?}");
    }

    #[test]
    fn each_set_aside_item_takes_back_one_skipped_line() {
        let set = schema();
        let source = Source::new("Holmes alone.");
        let anchored = Anchored::new(Runtime(&set), &source);
        // The same ungrounded answer skipped twice but set aside once (the second time by a path that
        // sets nothing aside): one item comes back, one line stays skipped.
        let first = skipped_line(anchored.vet_one(ungrounded_item("Watson", 1)));
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
        let back = anchored.unresolved(&mut skipped, false);
        assert_eq!(back.len(), 1);
        let left: Vec<usize> = skipped.iter().map(|line| line.line).collect();
        assert_eq!(left, [2, 3]);
    }

    #[test]
    fn taking_back_unresolved_items_is_linear() {
        let set = schema();
        let source = Source::new("Holmes alone.");
        for n in [500, 2_000] {
            let anchored = Anchored::new(Runtime(&set), &source);
            let mut skipped: Vec<Skipped> = (0..n)
                .map(|i| skipped_line(anchored.vet_one(ungrounded_item(&format!("Watson {i}"), i))))
                .collect();
            let mut back = Vec::new();
            let steps = work::of(|| back = anchored.unresolved(&mut skipped, false));
            assert_eq!(back.len(), n);
            assert!(skipped.is_empty());
            // One step per skipped line counted, one per item, one per line taken out.
            assert!(steps <= 3 * n, "{steps} steps for {n} items");
        }
    }

    #[test]
    fn only_the_grounding_renderings_the_embedded_engine_reads_keep_the_marks() {
        let set = schema();
        let embedded = [crate::Dialect::Generic, crate::Dialect::Ollama];
        for shape in [Shape::One, Shape::Line, Shape::List] {
            for dialect in embedded {
                let marked = set.for_dialect_grounded(dialect, shape).unwrap();
                assert!(
                    marked.to_string().contains("\"x-grounded\":true"),
                    "{marked}"
                );
            }
            for dialect in crate::Dialect::ALL {
                if !embedded.contains(&dialect) {
                    assert_eq!(
                        set.for_dialect_grounded(dialect, shape).ok(),
                        set.for_dialect(dialect, shape).ok()
                    );
                }
            }
        }
    }

    #[test]
    fn the_schema_sent_has_no_grounding_keyword() {
        let set = schema();
        for dialect in [
            crate::Dialect::Generic,
            crate::Dialect::Ollama,
            crate::Dialect::OpenAiStrict,
        ] {
            let sent = set.for_dialect(dialect, Shape::Line).unwrap().to_string();
            assert!(!sent.contains("x-grounded"), "{dialect:?}: {sent}");
        }
    }
}
