//! The [`Extractor`] builder: everything the `T::extract*` shortcuts default, and the untyped twins for
//! runtime schemas.

use super::config::Config;
use super::config::{Input, Mode};
use super::engine::Engine;
use super::error::ExtractError;
use super::example::{Example, ExampleError};
use super::keyed::{
    self,
    Handing::{FirstCopies, Merged},
};
use super::loops::Recovery;
use super::partial::{self, PartialEvent};
use super::samples;
use super::stream::ExtractStream;
use super::target::{Derived, Runtime};
use crate::check::{Checks, Issues};
use crate::llm::Llm;
use crate::parse::{LoopGuard, ParseOptions, PartialValue};
use crate::report::Extraction;
use crate::schema::SchemaSet;
use crate::Extract;
use serde::Serialize;
use serde_json::Value;

/// Extraction with every setting spelled out. The `T::extract*` shortcuts use the defaults.
///
/// `L` is any [`Llm`]: a backend by value (they are cheap to clone), a reference, or an `Arc<dyn Llm>`.
///
/// ```
/// use llm_extract::extract::{Extractor, Input, Mode};
/// use llm_extract::llm::{from_fn, ChatResponse};
/// use llm_extract::SchemaSet;
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
///     .extract_value(&schema, Input::text("A walk along the Saône.").var("language", "English"))
///     .await?;
/// assert_eq!(out.value, json!({"city": "Lyon"}));
/// assert_eq!(out.report.usage.total(), 26);
/// # Ok::<(), llm_extract::extract::ExtractError>(())
/// # }).unwrap();
/// ```
#[derive(Debug, Clone)]
pub struct Extractor<L> {
    llm: L,
    pub(super) config: Config,
    /// What [`Extractor::check`] added, run on every value of a runtime schema.
    pub(super) checks: Checks,
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

    /// Adds a check a schema cannot say, run on every value and item of a runtime schema
    /// (`extract_value`, `extract_all_values`, streams, documents), never on a partial one: hard
    /// issues are repaired like schema violations, soft ones returned in
    /// [`Report::issues`](crate::Report::issues). A derived type's checks are its own
    /// (`#[extract(check)]`, see [`crate::check`]).
    ///
    /// ```
    /// use llm_extract::llm::{from_fn, ChatResponse};
    /// use llm_extract::{Extractor, SchemaSet};
    /// use serde_json::json;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let llm = from_fn(|_request| async { Ok(ChatResponse::new(r#"{"start": 3, "end": 9}"#)) });
    /// let schema = SchemaSet::new("Span", json!({
    ///     "type": "object",
    ///     "properties": {"start": {"type": "integer"}, "end": {"type": "integer"}},
    ///     "required": ["start", "end"],
    ///     "additionalProperties": false
    /// }));
    /// let extractor = Extractor::new(llm).check(|value, issues| {
    ///     if value["end"].as_i64() < value["start"].as_i64() {
    ///         issues.hard("/end", "the end comes after the start");
    ///     }
    ///     if value["end"].as_i64() > Some(5) {
    ///         issues.soft("/end", "later than usual");
    ///     }
    /// });
    /// let out = extractor.extract_value(&schema, "From 3 to 9.").await?;
    /// assert_eq!(out.report.issues[0].path, "/end");
    /// # Ok::<(), llm_extract::ExtractError>(())
    /// # }).unwrap();
    /// ```
    pub fn check(mut self, check: impl Fn(&Value, &mut Issues) + Send + Sync + 'static) -> Self {
        self.checks.push(std::sync::Arc::new(check));
        self
    }

    /// The backend.
    pub fn llm(&self) -> &L {
        &self.llm
    }

    /// The system instructions, placed before the format instructions (default: a short instruction to
    /// extract only what the text states).
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.config.instructions = instructions.into();
        self
    }

    /// The user prompt template, with `{{name}}` placeholders filled from the [`Input`] (default
    /// `{{text}}`). A placeholder without a variable fails the extraction with a template error.
    pub fn template(mut self, template: impl Into<String>) -> Self {
        self.config.template = template.into();
        self
    }

    /// The most answers requested to get a valid result: the first plus fixes, so `max_attempts(3)`
    /// allows two repairs (default 3; at least 1). Continuations after a cut answer are capped separately
    /// ([`Extractor::max_continuations`]); transport retries are the backend's [`RetryPolicy`](crate::llm::RetryPolicy).
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.config.max_attempts = attempts.max(1);
        self
    }

    /// How many times `extract_all` asks the model to continue after an answer cut off by the token
    /// limit (default 2).
    pub fn max_continuations(mut self, continuations: u32) -> Self {
        self.config.max_continuations = continuations;
        self
    }

    /// The most tokens one answer may have. By default it is derived from the schema where the schema
    /// bounds the value (string `maxLength`, `maxItems`, enums, numbers, booleans: their longest JSON
    /// text, one token per byte, plus a margin), and otherwise 1024 for one value and 4096 for a list
    /// (see the crate README); `max_tokens` overrides both.
    pub fn max_tokens(mut self, tokens: u32) -> Self {
        self.config.max_tokens = Some(tokens);
        self
    }

    /// The sampling temperature (default 0: greedy, the same answer for the same request on every
    /// backend; a loop is then recovered by the [`LoopGuard`] instead of by chance).
    pub fn temperature(mut self, temperature: f32) -> Self {
        self.config.temperature = Some(temperature);
        self
    }

    /// The sampling seed (default 0, sent to every backend that takes one).
    pub fn seed(mut self, seed: u64) -> Self {
        self.config.seed = Some(seed);
        self
    }

    /// How many answers each request gets, merged by vote (self-consistency; default 1, one answer).
    ///
    /// Answer 0 has this extractor's own temperature and seed (greedy by default); answer `i` is
    /// sampled at the extractor's temperature when one above 0 is set, else at
    /// [`SAMPLE_TEMPERATURE`](super::SAMPLE_TEMPERATURE) (0.3), with seed `seed + i`. The answers are
    /// asked for at once: the embedded engine decodes them in one batch when it has a sequence for
    /// each (`LlamaCppBuilder::parallel`, feature `llama-cpp`; the CLI's `--samples` sets it), an HTTP
    /// backend gets `n` requests. Each goes through the whole loop (repairs, loop recovery, checks,
    /// grounding) within the attempt cap and the token budget, which apply to each answer; an answer
    /// that fails has no vote (the extraction fails only when every answer does).
    ///
    /// The merge, per field: a scalar is the value most answers gave (a tie goes to the earliest
    /// answer, so the greedy one); an object is voted property by property, a property kept when more
    /// answers have it than lack it; a list's items are matched across answers by their key fields
    /// (`#[extract(key)]`) or, without keys, by the pairing that matches the most equal fields, and an
    /// item is kept when more answers hold it than not. Every value in the result is one an answer
    /// gave. The merged value is read again through the schema, the checks and the type; if it does
    /// not pass, the answer sharing the most fields with it is returned instead.
    ///
    /// [`Report::agreement`](crate::Report::agreement) gives, for each leaf, the share of the valid
    /// answers that agree with it; [`Report::usage`](crate::Report::usage) sums every answer's tokens, and
    /// [`Report::attempts`](crate::Report::attempts) lists every answer's attempts in answer order.
    ///
    /// Applies to `extract`, `extract_value`, `extract_all` and `extract_all_values` (the items of
    /// each answer merged on keys first, then the lists voted). Streams, partial values and documents
    /// take one answer per request: they hand values on as they arrive, before the others exist.
    ///
    /// ```
    /// use llm_extract::llm::{from_fn, ChatResponse};
    /// use llm_extract::{Extractor, SchemaSet};
    /// use serde_json::json;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// // A backend that answers by seed: seed 2 disagrees on the year.
    /// let llm = from_fn(|request| async move {
    ///     let year = if request.seed == Some(2) { 1816 } else { 1815 };
    ///     Ok(ChatResponse::new(format!(r#"{{"name": "Ada", "born": {year}}}"#)).with_usage(10, 5))
    /// });
    /// let schema = SchemaSet::new("Person", json!({
    ///     "type": "object",
    ///     "properties": {"name": {"type": "string"}, "born": {"type": "integer"}},
    ///     "required": ["name", "born"],
    ///     "additionalProperties": false
    /// }));
    /// let out = Extractor::new(llm).samples(3).extract_value(&schema, "Ada, born 1815.").await?;
    /// assert_eq!(out.value, json!({"name": "Ada", "born": 1815}));
    /// assert_eq!(out.report.agreement["/name"], 1.0);
    /// assert!((out.report.agreement["/born"] - 2.0 / 3.0).abs() < 1e-6);
    /// assert_eq!(out.report.usage.total(), 45);
    /// # Ok::<(), llm_extract::ExtractError>(())
    /// # }).unwrap();
    /// ```
    pub fn samples(mut self, n: usize) -> Self {
        self.config.samples = n.max(1);
        self
    }

    /// Constrained (the default) or prompted.
    pub fn mode(mut self, mode: Mode) -> Self {
        self.config.mode = mode;
        self
    }

    /// The most items `extract_all` keeps. Generation stops once that many arrived, the prompt says so,
    /// and in constrained mode the array sent to the server gets `maxItems`.
    pub fn max_items(mut self, items: usize) -> Self {
        self.config.max_items = Some(items);
        self
    }

    /// The most tokens (prompt plus completion, summed over attempts) an extraction may spend. No new
    /// request starts once it is spent, and each request's `max_tokens` is lowered to what is left. When it
    /// runs out, `extract` fails with a budget error; `extract_all` returns the items it has.
    pub fn token_budget(mut self, tokens: u64) -> Self {
        self.config.token_budget = Some(tokens);
        self
    }

    /// Accepts only clean JSON: no fences, no fixes, no coercion (default `false`).
    pub fn strict(mut self, strict: bool) -> Self {
        self.config.parse = self.config.parse.with_strict(strict);
        self
    }

    /// The parser's options, in full.
    pub fn parse_options(mut self, options: ParseOptions) -> Self {
        self.config.parse = options;
        self
    }

    /// After this many items in a row that each repeat one of the recent items (`A, A, A` or
    /// `A, B, A, B`), `extract_all` stops the generation (the model is looping), keeps the first copies and
    /// reports [`Finish::Repetition`](crate::Finish::Repetition) (default 3; below 2 turns the item check
    /// off). Shorthand for [`LoopGuard::max_recurring_items`] (this minus one).
    pub fn repeat_limit(mut self, items: usize) -> Self {
        self.config.loop_guard.max_recurring_items = items.saturating_sub(1);
        self
    }

    /// When a streamed answer counts as a loop (default [`LoopGuard::default`]; [`LoopGuard::off`]
    /// turns detection off). Every answer is streamed and checked as it arrives, one value or many; a
    /// loop stops the generation at once (the stream is dropped, which cancels it), the attempt ends
    /// with [`Finish::Repetition`](crate::Finish::Repetition) and, within `max_attempts`, a recovery
    /// attempt follows (see [`Extractor::recovery`]); for a list it continues after the last good item.
    pub fn loop_guard(mut self, guard: LoopGuard) -> Self {
        if let Some((penalty, temperature, seed)) = guard.recovery_settings() {
            self.config.recovery = Recovery {
                penalty,
                temperature,
                seed,
            };
        }
        self.config.loop_guard = guard;
        self
    }

    /// What the attempt after a loop changes (default [`Recovery::default`]): a repeat penalty, then
    /// also a small temperature with a fixed seed; the same temperature and seed for a repair that got
    /// back the answer it rejected.
    pub fn recovery(mut self, recovery: Recovery) -> Self {
        self.config.recovery = recovery;
        self
    }

    /// The most characters of a bad answer quoted back to the model in a repair request (default 8000;
    /// longer answers keep their head and tail).
    pub fn max_echo_chars(mut self, chars: usize) -> Self {
        self.config.max_echo_chars = chars.max(200);
        self
    }

    /// Adds a worked example for `T`: `value` is what `text` holds. It is serialized through `T`'s
    /// `Serialize`, validated against `T`'s schema and read back through its `Deserialize`; a value that
    /// fails is an error here, not at extraction time. See [`Example`] for how examples are shown.
    ///
    /// Examples apply to the type (the schema) they were made for; an extractor's examples for a type
    /// replace that type's own `#[extract(example(...))]` ones.
    pub fn example<T: Extract + Serialize>(
        self,
        text: impl Into<String>,
        value: T,
    ) -> Result<Self, ExampleError> {
        Ok(self.with_example(Example::new(text, value)?))
    }

    /// Adds an example made beforehand: [`Example::items`] for item lists, [`Example::value`] for a
    /// runtime schema.
    pub fn with_example(mut self, example: Example) -> Self {
        self.config.examples.push(example);
        self
    }

    /// Whether a type's own examples (`#[extract(example(...))]`) are shown when this extractor has none
    /// for it (default `true`).
    pub fn default_examples(mut self, on: bool) -> Self {
        self.config.default_examples = on;
        self
    }

    pub(super) fn engine(&self) -> Engine<'_> {
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
        if self.config.samples > 1 {
            return samples::one(self.engine(), Derived::<T>::new, input.into()).await;
        }
        self.engine().one(&Derived::<T>::new(), input.into()).await
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
        let mut items = Vec::new();
        let mut push = |item: T| items.push(item);
        let result = if self.config.samples > 1 {
            samples::items(self.engine(), Derived::<T>::new, input.into(), &mut push).await
        } else {
            let target = Derived::<T>::new();
            keyed::items(self.engine(), target, input.into(), Merged, &mut push).await
        };
        match result {
            Ok(report) => Ok(Extraction::new(items, report)),
            // The engine keeps the items' JSON where the failure leaves them standing: hand back
            // the same items, typed.
            Err(err) if err.partial().is_empty() => Err(err.with_partial(Vec::new())),
            Err(err) => Err(err.with_partial(items)),
        }
    }

    /// The items of `T` as a stream, each as soon as it is complete.
    ///
    /// Merged on `T`'s key fields as [`Extractor::extract_all`] merges them, as far as a stream can: an
    /// item whose key was already handed on is not handed on again. Where that later copy contradicts
    /// the one handed on, the difference is in the stream's [`Report::conflicts`](crate::report::Report::conflicts)
    /// (once the stream has ended); a value it only adds (where the first copy was empty) is not
    /// delivered. Grounding as in [`Extractor::extract_all`].
    pub fn extract_stream<T: Extract>(&self, input: impl Into<Input>) -> ExtractStream<'_, T> {
        let input = input.into();
        let engine = self.engine();
        ExtractStream::start(move |mut sink, spent| async move {
            let engine = engine.with_spent(&spent);
            let target = Derived::<T>::new();
            keyed::items(engine, target, input, FirstCopies, &mut *sink).await
        })
    }

    /// One value of `T` as it is written: a stream of [`PartialEvent`]s, snapshots of `T`'s partial form
    /// ([`Partial<T>`](crate::parse::Partial), at most one per chunk received and none when nothing
    /// visible changed), each value inside it as soon as it is closed, and last the validated value with
    /// the same ledger as [`Extractor::extract`] (the same attempts, repairs and errors: a failed
    /// extraction ends the stream with its error). The answer is read once, incrementally: linear in its
    /// length however it is chunked. Any backend works; one that does not stream gives one snapshot.
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
        let engine = self.engine();
        ExtractStream::start_with_sink(move |sink, spent| async move {
            let target = Derived::<T>::new();
            partial::run(engine.with_spent(&spent), &target, input, sink).await
        })
    }

    /// One value of a runtime schema as it is written: like [`Extractor::extract_partial`], the
    /// snapshots being the JSON written so far (strings as far as written, numbers and literals once
    /// complete), the final value the validated JSON.
    pub fn extract_value_partial<'s>(
        &'s self,
        schema: &'s SchemaSet,
        input: impl Into<Input>,
    ) -> ExtractStream<'s, PartialEvent<Value>> {
        let input = input.into();
        let engine = self.engine();
        ExtractStream::start_with_sink(move |sink, spent| async move {
            partial::run(
                engine.with_spent(&spent),
                &Runtime::checked(schema, self.checks.clone()),
                input,
                sink,
            )
            .await
        })
    }

    /// One value of a runtime schema, as validated JSON.
    pub async fn extract_value(
        &self,
        schema: &SchemaSet,
        input: impl Into<Input>,
    ) -> Result<Extraction<Value>, ExtractError> {
        let target = || Runtime::checked(schema, self.checks.clone());
        if self.config.samples > 1 {
            return samples::one(self.engine(), target, input.into()).await;
        }
        self.engine().one(&target(), input.into()).await
    }

    /// Every item of a runtime schema (the schema of one item), as validated JSON: merged on the
    /// properties marked `"x-key": true`, grounded under [`Extractor::require_grounding`], as
    /// [`Extractor::extract_all`] says. A schema without key properties is not merged.
    pub async fn extract_all_values(
        &self,
        schema: &SchemaSet,
        input: impl Into<Input>,
    ) -> Result<Extraction<Vec<Value>>, ExtractError> {
        let mut items = Vec::new();
        let mut push = |item: Value| items.push(item);
        let target = || Runtime::checked(schema, self.checks.clone());
        let report = if self.config.samples > 1 {
            samples::items(self.engine(), target, input.into(), &mut push).await?
        } else {
            keyed::items(self.engine(), target(), input.into(), Merged, &mut push).await?
        };
        Ok(Extraction::new(items, report))
    }

    /// The items of a runtime schema as a stream of validated JSON: an item whose key properties
    /// (`"x-key": true`) were already handed on is not handed on again, as [`Extractor::extract_stream`]
    /// says.
    pub fn extract_value_stream<'a>(
        &'a self,
        schema: &'a SchemaSet,
        input: impl Into<Input>,
    ) -> ExtractStream<'a, Value> {
        let input = input.into();
        let engine = self.engine();
        ExtractStream::start(move |mut sink, spent| async move {
            let engine = engine.with_spent(&spent);
            keyed::items(
                engine,
                Runtime::checked(schema, self.checks.clone()),
                input,
                FirstCopies,
                &mut *sink,
            )
            .await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{from_fn, ChatResponse};

    fn extractor() -> Extractor<impl Llm> {
        Extractor::new(from_fn(|_| async { Ok(ChatResponse::new("{}")) }))
    }

    #[test]
    fn recovery_is_set_on_its_own_and_a_guard_leaves_it() {
        let recovery = Recovery::default().penalty(1.5).temperature(0.2).seed(3);
        let set = extractor()
            .recovery(recovery)
            .loop_guard(LoopGuard::default().max_run(8));
        assert_eq!(set.config.recovery, recovery);
        assert_eq!(set.config.loop_guard.max_run, 8);
        assert_eq!(extractor().config.recovery, Recovery::default());
    }

    #[test]
    #[allow(deprecated)]
    fn a_guard_given_recovery_settings_carries_them_over() {
        let guard = LoopGuard::default().recovery(1.5, 0.2, 3);
        let set = extractor().loop_guard(guard);
        assert_eq!(
            set.config.recovery,
            Recovery::default().penalty(1.5).temperature(0.2).seed(3)
        );
    }
}
