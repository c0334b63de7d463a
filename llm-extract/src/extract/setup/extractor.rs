//! The [`Extractor`] builder and its typed extractions; the internal generic forms that the typed
//! methods and the runtime-schema view ([`SchemaExtractor`](crate::extract::SchemaExtractor)) both call.

use crate::check::Checks;
use crate::extract::confidence::samples;
use crate::extract::engine::partial_events::{self as partial, PartialEvent};
use crate::extract::engine::stream::ExtractStream;
use crate::extract::engine::Engine;
use crate::extract::error::ExtractError;
use crate::extract::setup::config::Config;
use crate::extract::setup::config::Input;
use crate::extract::setup::keyed::{
    self,
    Handing::{FirstCopies, Merged},
};
use crate::extract::setup::target::{Derived, Target};
use crate::extract::Extract;
use crate::llm::Llm;
use crate::parse::PartialValue;
use crate::report::Extraction;

/// Extraction with every setting spelled out. The `T::extract*` shortcuts of [`Extract`] use the
/// defaults.
///
/// `L` is any [`Llm`]: a backend by value (they are cheap to clone), a reference, or an `Arc<dyn Llm>`.
///
/// ```
/// use llm_extract::extract::{Extractor, Input, Mode};
/// use llm_extract::llm::{from_fn, ChatResponse};
/// use llm_extract::schema::SchemaSet;
/// use serde_json::json;
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let llm = from_fn(|_request| async { Ok(ChatResponse::new(r#"{"city": "Lyon"}"#).with_usage(20, 6)) });
/// let schema = SchemaSet::new("Place", json!({
///     "type": "object",
///     "properties": {"city": {"type": "string"}},
///     "required": ["city"],
///     "additionalProperties": false
/// }));
/// let extractor = Extractor::new(llm)
///     .instructions("You find places.")
///     .template("Where does this happen? {{text}} (answer in {{language}})")
///     .max_attempts(2)
///     .temperature(0.0)
///     .mode(Mode::Prompted);
/// let out = extractor
///     .with_schema(&schema)
///     .extract(Input::text("A walk along the Saône.").var("language", "English"))
///     .await?;
/// assert_eq!(out.value, json!({"city": "Lyon"}));
/// assert_eq!(out.report.usage.total(), 26);
/// # Ok::<(), llm_extract::extract::ExtractError>(())
/// # }).unwrap();
/// ```
///
/// # What it extracts
///
/// | method | what | returns |
/// |---|---|---|
/// | [`extract`](Extractor::extract) | one value of `T` | [`Extraction<T>`] |
/// | [`extract_all`](Extractor::extract_all) | every item of `T`, merged on its keys | [`Extraction<Vec<T>>`] |
/// | [`extract_stream`](Extractor::extract_stream) | the items, each as soon as it is complete | [`ExtractStream`] of `T` |
/// | [`extract_partial`](Extractor::extract_partial) | one value as it is written | [`ExtractStream`] of [`PartialEvent<T>`] |
/// | [`extract_grounded`](Extractor::extract_grounded) | the items with the spans of their grounded values | [`Extraction<Vec<Grounded<T>>>`](crate::ground::Grounded) |
/// | [`extract_document`](Extractor::extract_document) | the items of a document of any length, chunked | [`Document<T>`](crate::extract::Document) |
/// | [`extract_document_stream`](Extractor::extract_document_stream) | the same, an event per chunk | [`DocumentEvent<T>`](crate::extract::DocumentEvent)s |
///
/// [`Extractor::with_schema`] gives the same methods for a runtime schema, returning JSON. A document
/// comes from a [`DocumentSource`](crate::extract::DocumentSource): a string, or a reader, with the chunks an
/// earlier run finished and a callback per chunk.
///
/// # Settings
///
/// Every setting is a setter that takes and returns the extractor (`Extractor::new(llm).max_tokens(512)`).
///
/// | setting | default | read by |
/// |---|---|---|
/// | [`instructions`](Extractor::instructions) | [`DEFAULT_INSTRUCTIONS`](crate::extract::DEFAULT_INSTRUCTIONS) | every request (the system message) |
/// | [`template`](Extractor::template) | `{{text}}` | every request (the user message, filled from the [`Input`]) |
/// | [`example`](Extractor::example), [`with_example`](Extractor::with_example) | none | every request (worked examples for their type) |
/// | [`default_examples`](Extractor::default_examples) | `true` | every request of a type with `#[extract(example(...))]` |
/// | [`mode`](Extractor::mode) | [`Mode::Constrained`](crate::extract::Mode::Constrained) | every request (how the schema travels) |
/// | [`max_attempts`](Extractor::max_attempts) | 3 | the repair loop |
/// | [`max_continuations`](Extractor::max_continuations) | 2 | lists, streams, document chunks (a cut-off answer) |
/// | [`max_tokens`](Extractor::max_tokens) | from the schema, else 1024 (one value) or 4096 (a list) | every request |
/// | [`temperature`](Extractor::temperature) | 0 | every request |
/// | [`seed`](Extractor::seed) | 0 | every request |
/// | [`samples`](Extractor::samples) | 1 | one value and lists (answers voted per field) |
/// | [`max_items`](Extractor::max_items) | no limit | lists and streams |
/// | [`token_budget`](Extractor::token_budget) | no budget | every extraction (summed over its requests) |
/// | [`strict`](Extractor::strict), [`parse_options`](Extractor::parse_options) | lenient ([`ParseOptions::default`](crate::parse::ParseOptions::default)) | the parser |
/// | [`loop_guard`](Extractor::loop_guard) | [`LoopGuard::default`](crate::extract::LoopGuard::default) | every streamed answer |
/// | [`item_copies`](Extractor::item_copies) | 2 | lists and streams (items copying recent ones) |
/// | [`recovery`](Extractor::recovery) | [`Recovery::default`](crate::extract::Recovery::default) | the attempt after a loop |
/// | [`max_echo_chars`](Extractor::max_echo_chars) | 8000 | repair requests (the bad answer quoted) |
/// | [`check`](Extractor::check), [`check_async`](Extractor::check_async) | none | every value and item, as JSON (of documents too) |
/// | [`confidence`](Extractor::confidence) | off | every extraction: one value, partial values, lists, streams, documents (per-leaf confidence from log-probabilities) |
/// | [`min_confidence`](Extractor::min_confidence) | none | every extraction (turns leaves under it into soft issues) |
/// | [`keep_doubtful`](Extractor::keep_doubtful) | `false` | one value (returned with its unmended hard issues as soft ones) |
/// | [`strategy`](Extractor::strategy), [`question`](Extractor::question) | [`Strategy::OneAnswer`](crate::extract::Strategy::OneAnswer) | one value (one answer, or a question per field) |
/// | [`require_grounding`](Extractor::require_grounding) | `false` | grounded extractions, documents; lists and streams when `true` |
/// | [`chunk_bytes`](Extractor::chunk_bytes) | [`DEFAULT_CHUNK_BYTES`](crate::extract::DEFAULT_CHUNK_BYTES) (6000) | documents |
/// | [`chunk_tokens`](Extractor::chunk_tokens) | unset (`chunk_bytes` rules) | documents |
/// | [`chunk_overlap`](Extractor::chunk_overlap) | a tenth of the chunk size | documents |
/// | [`passes`](Extractor::passes) | 1 | documents |
/// | [`concurrency`](Extractor::concurrency) | 1 | documents (chunks at once) |
/// | [`trace_content`](Extractor::trace_content) | `false` | every attempt's span (the messages sent and the answer) |
#[derive(Debug, Clone)]
pub struct Extractor<L> {
    llm: L,
    pub(crate) config: Config,
    /// What [`Extractor::check`] added, run on every value and item extracted.
    pub(crate) checks: Checks,
}

impl<L: Llm> Extractor<L> {
    /// An extractor with the default settings.
    pub fn new(llm: L) -> Self {
        Extractor {
            llm,
            config: Config::default(),
            checks: Checks::default(),
        }
    }

    /// The backend.
    pub fn llm(&self) -> &L {
        &self.llm
    }

    /// The same settings and checks over another backend.
    pub(crate) fn with_llm<M: Llm>(&self, llm: M) -> Extractor<M> {
        Extractor {
            llm,
            config: self.config.clone(),
            checks: self.checks.clone(),
        }
    }

    pub(crate) fn engine(&self) -> Engine<'_> {
        Engine {
            llm: &self.llm,
            config: &self.config,
            spent: None,
        }
    }

    /// One value of `T`.
    pub async fn extract<T: Extract>(
        &self,
        input: impl Into<Input>,
    ) -> Result<Extraction<T>, ExtractError> {
        let input = input.into();
        let checks = self.checks_for(&input);
        self.one(|| Derived::<T>::checked(&checks), input).await
    }

    /// Every item of `T` the model lists, in order.
    ///
    /// Copies of one item are merged on `T`'s key fields (`#[extract(key)]`): the model listing "Lisa
    /// Su" three times gives one item, each property the first non-empty value of the copies, a copy
    /// that disagrees reported in [`Report::conflicts`](crate::report::Report::conflicts); items come
    /// in the order their first copy arrived. A type without key fields is not merged: every item the
    /// model lists is kept (only a follow-up answer's exact repeats of kept items are dropped).
    ///
    /// With [`Extractor::require_grounding`], a type with grounded fields (`#[extract(grounded)]`) has
    /// them found in the input's `text`: an item whose grounded value is nowhere in it is re-asked
    /// within the attempt cap, then dropped and left in [`Report::skipped`](crate::report::Report::skipped).
    ///
    /// ```
    /// use llm_extract::extract::Extractor;
    /// use llm_extract::llm::{from_fn, ChatResponse};
    /// use llm_extract::Extract;
    ///
    /// #[derive(Extract, serde::Deserialize, Debug)]
    /// struct Leader {
    ///     #[extract(key)]
    ///     name: String,
    ///     company: Option<String>,
    /// }
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let llm = from_fn(|_| async {
    ///     Ok(ChatResponse::new(r#"{"items": [
    ///         {"name": "Lisa Su", "company": null},
    ///         {"name": "Tim Cook", "company": "Apple"},
    ///         {"name": "Lisa Su", "company": "AMD"}
    ///     ]}"#))
    /// });
    /// let out = Extractor::new(llm).extract_all::<Leader>("Tim Cook runs Apple. Lisa Su leads AMD.").await?;
    /// let names: Vec<&str> = out.value.iter().map(|l| l.name.as_str()).collect();
    /// assert_eq!(names, ["Lisa Su", "Tim Cook"]);
    /// assert_eq!(out.value[0].company.as_deref(), Some("AMD"));
    /// assert!(out.report.conflicts.is_empty());
    /// # Ok::<(), llm_extract::extract::ExtractError<Leader>>(())
    /// # }).unwrap();
    /// ```
    pub async fn extract_all<T: Extract>(
        &self,
        input: impl Into<Input>,
    ) -> Result<Extraction<Vec<T>>, ExtractError<T>> {
        let input = input.into();
        let checks = self.checks_for(&input);
        self.all(|| Derived::<T>::checked(&checks), input).await
    }

    /// The items of `T` as a stream, each as soon as it is complete.
    ///
    /// Merged on `T`'s key fields as [`Extractor::extract_all`] merges them, as far as a stream can: an
    /// item whose key was already handed on is not handed on again. Where that later copy contradicts
    /// the one handed on, the difference is in the stream's [`Report::conflicts`](crate::report::Report::conflicts)
    /// (once the stream has ended); a value it only adds (where the first copy was empty) is not
    /// delivered. Grounding as in [`Extractor::extract_all`].
    ///
    /// With [`Extractor::confidence`], the stream's report (or its error's) holds each yielded item's
    /// confidence by its position in the order the items were yielded (`/0/name`), the first copy's
    /// for a merged key; [`Extractor::min_confidence`] adds the soft issues there.
    pub fn extract_stream<T: Extract>(&self, input: impl Into<Input>) -> ExtractStream<'_, T> {
        let input = input.into();
        self.stream(Derived::<T>::checked(&self.checks_for(&input)), input)
    }

    /// One value of `T` as it is written: a stream of [`PartialEvent`]s, snapshots of `T`'s partial form
    /// ([`Partial<T>`](crate::parse::Partial), at most one per chunk received and none when nothing
    /// visible changed), each value inside it as soon as it is closed, and last the validated value with
    /// the same ledger as [`Extractor::extract`] (the same attempts, repairs and errors: a failed
    /// extraction ends the stream with its error). The answer is read once, incrementally: linear in its
    /// length however it is chunked. Any backend works; one that does not stream gives one snapshot.
    /// Confidence ([`Extractor::confidence`]) is that of the final value, in the final report: the
    /// tokens' log-probabilities arrive with the end of the answer, so snapshots carry none.
    ///
    /// ```
    /// use futures_util::StreamExt;
    /// use llm_extract::extract::{Extractor, PartialEvent};
    /// use llm_extract::llm::{from_fn, ChatResponse};
    /// use llm_extract::Extract;
    ///
    /// #[derive(Extract, serde::Deserialize, Debug, PartialEq)]
    /// struct Person {
    ///     name: String,
    ///     age: u32,
    /// }
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let llm = from_fn(|_| async { Ok(ChatResponse::new(r#"{"name": "Ada", "age": 36}"#)) });
    /// let extractor = Extractor::new(llm);
    /// let mut events = extractor.extract_partial::<Person>("Ada, 36.");
    /// let mut last = None;
    /// while let Some(event) = events.next().await {
    ///     match event? {
    ///         PartialEvent::Snapshot(person) => println!("{person:?}"),
    ///         PartialEvent::Final { extraction, .. } => last = Some(extraction.value),
    ///         _ => {}
    ///     }
    /// }
    /// assert_eq!(last, Some(Person { name: "Ada".into(), age: 36 }));
    /// # Ok::<(), llm_extract::extract::ExtractError>(())
    /// # }).unwrap();
    /// ```
    pub fn extract_partial<T: Extract + PartialValue>(
        &self,
        input: impl Into<Input>,
    ) -> ExtractStream<'_, PartialEvent<T>> {
        let input = input.into();
        self.partial(Derived::<T>::checked(&self.checks_for(&input)), input)
    }

    /// One value of the target `make` builds (once, or once per answer with [`Extractor::samples`]).
    /// The checks, for values extracted from `input` (an asynchronous check in context reads its
    /// variables).
    pub(crate) fn checks_for(&self, input: &Input) -> Checks {
        self.checks.clone().in_context(|| input.vars().cloned())
    }

    pub(crate) async fn one<G: Target>(
        &self,
        make: impl Fn() -> G,
        input: Input,
    ) -> Result<Extraction<G::Output>, ExtractError> {
        if self.config.strategy == crate::extract::Strategy::PerField {
            return crate::extract::per_field::one(self.engine(), &make(), input).await;
        }
        if self.config.samples > 1 {
            return samples::one(self.engine(), make, input).await;
        }
        self.engine().one(&make(), input).await
    }

    /// Every item of the target `make` builds, merged on its keys (and voted across answers with
    /// [`Extractor::samples`]).
    pub(crate) async fn all<G: Target>(
        &self,
        make: impl Fn() -> G,
        input: Input,
    ) -> Result<Extraction<Vec<G::Output>>, ExtractError<G::Output>> {
        let mut items = Vec::new();
        let mut push = |item: G::Output| items.push(item);
        let result = if self.config.samples > 1 {
            samples::items(self.engine(), make, input, &mut push).await
        } else {
            keyed::items(self.engine(), make(), input, Merged, &mut push).await
        };
        match result {
            Ok(report) => Ok(Extraction::new(items, report)),
            // The engine keeps the items' JSON where the failure leaves them standing: hand back
            // the same items, as the target's output.
            Err(err) if err.kept().is_empty() => Err(err.with_kept(Vec::new())),
            Err(err) => Err(err.with_kept(items)),
        }
    }

    /// The items of `target` as a stream, the first copy of each key.
    pub(crate) fn stream<'a, G: Target + Send + 'a>(
        &'a self,
        target: G,
        input: Input,
    ) -> ExtractStream<'a, G::Output> {
        let engine = self.engine();
        ExtractStream::start(move |mut sink, spent| async move {
            let engine = engine.with_spent(&spent);
            keyed::items(engine, target, input, FirstCopies, &mut *sink).await
        })
    }

    /// One value of `target` as it is written.
    pub(crate) fn partial<'a, G: Target + Send + 'a>(
        &'a self,
        target: G,
        input: Input,
    ) -> ExtractStream<'a, PartialEvent<G::Output>>
    where
        G::Output: PartialValue,
    {
        let engine = self.engine();
        ExtractStream::start_with_sink(move |sink, spent| async move {
            partial::run(engine.with_spent(&spent), &target, input, sink).await
        })
    }
}
