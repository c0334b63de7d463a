//! Grounded extraction: every item comes with the [`Span`](crate::ground::Span)s of its grounded values, and a value that
//! does not occur in the text is an error the repair loop shows the model.
//!
//! The items of a target wrapped in [`GroundedTarget`] (see `grounded_target.rs`): a value that is nowhere in the
//! text is re-asked within the attempt cap; what is still ungrounded when the loop ends is handed back
//! with [`MatchKind::NotFound`] spans, or left in [`Report::skipped`](crate::report::Report::skipped)
//! (dropped) under [`Extractor::require_grounding`].
//!
//! [`MatchKind::NotFound`]: crate::ground::MatchKind::NotFound

use crate::extract::document::grounded_target::GroundedTarget;
use crate::extract::error::ExtractError;
use crate::extract::setup::config::Input;
use crate::extract::setup::target::{Derived, Target};
use crate::extract::Extract;
use crate::extract::Extractor;
use crate::ground::{Grounded, Source};
use crate::llm::Llm;
use crate::report::Extraction;

impl<L: Llm> Extractor<L> {
    /// Every item of `T` in `text`, each with the [`Span`](crate::ground::Span)s of its grounded values
    /// (`#[extract(grounded)]` fields) in `text`.
    ///
    /// A value the model wrote that does not occur in `text` (exactly, normalized or fuzzily, see
    /// [`Source::align`](crate::ground::Source::align)) is shown to the model as an error (`at /name: "Jon Smith" does not occur in
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
    /// let out = Extractor::new(llm).extract_grounded::<Person>(text).await?;
    /// let span = &out.value[0].spans[0];
    /// assert_eq!((span.bytes.clone(), span.kind), (44..55, MatchKind::Exact));
    /// # Ok::<(), llm_extract::extract::ExtractError>(())
    /// # }).unwrap();
    /// ```
    pub async fn extract_grounded<T: Extract>(
        &self,
        text: &str,
    ) -> Result<Extraction<Vec<Grounded<T>>>, ExtractError> {
        self.grounded(Derived::<T>::checked(&self.checks), text)
            .await
    }

    /// The items of `target` in `text`, grounded in it.
    pub(crate) async fn grounded<G: Target>(
        &self,
        target: G,
        text: &str,
    ) -> Result<Extraction<Vec<Grounded<G::Output>>>, ExtractError> {
        let source = Source::new(text);
        self.grounded_in(target, &source, Input::text(text)).await
    }

    /// The items of `target` from `input`, grounded in `source`.
    pub(crate) async fn grounded_in<G: Target>(
        &self,
        target: G,
        source: &Source<'_>,
        input: Input,
    ) -> Result<Extraction<Vec<Grounded<G::Output>>>, ExtractError> {
        let target = GroundedTarget::new(target, source);
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
    use crate::extract::document::grounded_target::{grounded_person, is_ungrounded};
    use crate::ground::MatchKind;
    use crate::llm::{from_fn, ChatResponse};
    use crate::schema::Shape;
    use serde_json::{json, Value};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::sync::Mutex;

    /// A grounded extraction of a person from `text` by `llm`, asked in prompted mode.
    async fn prompted(
        llm: impl Llm,
        require_grounding: bool,
        text: &str,
    ) -> Extraction<Vec<Grounded<Value>>> {
        Extractor::new(llm)
            .mode(crate::extract::Mode::Prompted)
            .require_grounding(require_grounding)
            .with_schema(&grounded_person())
            .extract_grounded(text)
            .await
            .unwrap()
    }

    /// A backend that answers `answers` in turn and records the prompts it was sent.
    fn scripted(answers: Vec<&'static str>) -> (impl Llm, Arc<Mutex<Vec<String>>>) {
        let prompts = Arc::new(Mutex::new(Vec::new()));
        let seen = prompts.clone();
        let turn = Arc::new(AtomicUsize::new(0));
        let llm = from_fn(move |request: crate::llm::ChatRequest| {
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
        let out = prompted(llm, false, "A man called John Smith came in.").await;
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
        let out = prompted(llm, false, "Holmes alone.").await;
        assert_eq!(out.value.len(), 1);
        assert_eq!(out.value[0].spans[0].kind, MatchKind::NotFound);
        assert!(out.report.skipped.is_empty());
        assert_eq!(out.report.attempts.len(), 3);

        let (llm, _) = scripted(answers);
        let out = prompted(llm, true, "Holmes alone.").await;
        assert!(out.value.is_empty());
        assert_eq!(out.report.skipped.len(), 1);
        assert!(is_ungrounded(&out.report.skipped[0].reason));
    }

    /// A backend that grounds while decoding (as the embedded engine does), recording its requests.
    struct Grounding<L>(L, Arc<Mutex<Vec<crate::llm::ChatRequest>>>);

    impl<L: Llm> Llm for Grounding<L> {
        fn dialect(&self) -> crate::schema::Dialect {
            crate::schema::Dialect::Gbnf
        }
        fn constrains_json_lines(&self) -> bool {
            true
        }
        fn constrains_grounding(&self) -> bool {
            true
        }
        fn chat_stream(
            &self,
            request: crate::llm::ChatRequest,
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
            .with_schema(&grounded_person())
            .extract_grounded(text)
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
        let server = from_fn(move |request: crate::llm::ChatRequest| {
            if let Ok(mut seen) = recorded.lock() {
                seen.push(request);
            }
            async { Ok(ChatResponse::new("{\"name\": \"John Smith\"}")) }
        })
        .with_dialect(crate::schema::Dialect::Gbnf);
        Extractor::new(server)
            .with_schema(&grounded_person())
            .extract_grounded(text)
            .await
            .unwrap();
        let sent = seen_by_server.lock().unwrap()[0].clone();
        assert_eq!(sent.grounding, None);
        assert!(!sent.schema.unwrap().to_string().contains("x-grounded"));

        // Nor does it when the extraction is not a grounded one.
        let seen = Arc::new(Mutex::new(Vec::new()));
        Extractor::new(Grounding(answer(), seen.clone()))
            .with_schema(&grounded_person())
            .extract(text)
            .await
            .unwrap();
        assert_eq!(seen.lock().unwrap()[0].grounding, None);
    }

    #[test]
    fn only_the_grounding_renderings_the_embedded_engine_reads_keep_the_marks() {
        let set = grounded_person();
        let embedded = [
            crate::schema::Dialect::Generic,
            crate::schema::Dialect::Gbnf,
        ];
        for shape in [Shape::One, Shape::Line, Shape::List] {
            for dialect in embedded {
                let marked = set.for_dialect_grounded(dialect, shape).unwrap();
                assert!(
                    marked.to_string().contains("\"x-grounded\":true"),
                    "{marked}"
                );
            }
            for dialect in crate::schema::Dialect::ALL {
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
        let set = grounded_person();
        for dialect in [
            crate::schema::Dialect::Generic,
            crate::schema::Dialect::Gbnf,
            crate::schema::Dialect::OpenAiStrict,
        ] {
            let sent = set.for_dialect(dialect, Shape::Line).unwrap().to_string();
            assert!(!sent.contains("x-grounded"), "{dialect:?}: {sent}");
        }
    }
}
