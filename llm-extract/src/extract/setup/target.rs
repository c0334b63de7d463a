//! What an extraction produces: a Rust type ([`Derived`]) or validated JSON for a runtime schema
//! ([`Runtime`]). The loop in [`crate::extract::engine`] is written once against [`Target`] and serves both;
//! both decode their items through the one generic [`LineDecoder`].

use crate::check::{self, CheckError, Checks, Issue, Issues};
use crate::extract::setup::example::{Example, ExampleError};
use crate::extract::Extract;
use crate::parse::{
    self, Item, LineDecoder, LineEvent, ParseError, ParseOptions, Parsed, SkipReason, Skipped,
    WithJson,
};
use crate::schema::SchemaSet;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::marker::PhantomData;

/// An item the loop decoded, with the validated JSON it came from (to drop duplicates, to see a model
/// looping and to quote kept items back).
pub(crate) type Found<O> = Item<WithJson<O>>;

/// The schema, worked examples and grounding of a target that wraps another (a tuple struct whose
/// field `0` is the wrapped target) and changes only what it makes of the answers.
macro_rules! as_inner {
    () => {
        fn schema(&self) -> &crate::schema::SchemaSet {
            self.0.schema()
        }

        fn examples(
            &self,
        ) -> Result<
            Vec<crate::extract::setup::example::Example>,
            crate::extract::setup::example::ExampleError,
        > {
            self.0.examples()
        }

        fn grounding(&self) -> Option<&str> {
            self.0.grounding()
        }
    };
}
pub(crate) use as_inner;

/// What the loop needs from the thing being extracted.
pub(crate) trait Target: Sync {
    /// What one value or item becomes.
    type Output: DeserializeOwned + Send;

    /// The schemas and instructions.
    fn schema(&self) -> &SchemaSet;

    /// The target's own worked examples (a derived type's `#[extract(example(...))]`).
    fn examples(&self) -> Result<Vec<Example>, ExampleError> {
        Ok(Vec::new())
    }

    /// The source text the target's grounded strings must come from, if it grounds any: a backend that
    /// [constrains grounding](crate::llm::Llm::constrains_grounding) decodes them as spans of it.
    fn grounding(&self) -> Option<&str> {
        None
    }

    /// Parses and validates one value.
    fn parse_one(
        &self,
        text: &str,
        options: &ParseOptions,
    ) -> Result<Parsed<Self::Output>, ParseError>;

    /// An incremental decoder of many items, each with its validated JSON.
    fn decoder(&self, options: ParseOptions) -> LineDecoder<'_, WithJson<Self::Output>> {
        LineDecoder::with_json(self.schema(), options)
    }

    /// Checks what the decoder completed before the loop takes it: a target may complete an item
    /// (e.g. with the spans of its grounded values) or turn it into a skipped line the loop re-asks.
    /// Default: as decoded.
    fn vet(
        &self,
        events: Vec<LineEvent<WithJson<Self::Output>>>,
    ) -> Vec<LineEvent<WithJson<Self::Output>>> {
        events
    }

    /// What its checks found and kept, the four methods below read. Default: none (no checks).
    fn checking(&self) -> Option<&Checking<Self::Output>> {
        None
    }

    /// The soft issues its checks found on the value returned (or the items kept), taken once the
    /// loop ends.
    fn issues(&self) -> Vec<Issue> {
        self.checking()
            .map(|checking| checking.kept.take())
            .unwrap_or_default()
    }

    /// The checks the loop runs itself, because some are asynchronous (see [`settle`] and
    /// [`settle_items`]): then `parse_one` and `vet` leave all checks to the loop.
    fn deferred(&self) -> Option<Deferred<'_>> {
        let checking = self.checking()?;
        checking.awaited().map(|checks| Deferred {
            checks,
            kept: &checking.kept,
        })
    }

    /// Keeps the last value its checks rejected, with every issue they found as a soft one, for
    /// [`Target::take_doubtful`] (dropped when it has no checks).
    fn keep_doubtful(&self, parsed: Parsed<Self::Output>, doubts: Vec<Issue>) {
        if let Some(checking) = self.checking() {
            checking.doubtful.keep(parsed, doubts);
        }
    }

    /// The value [`Target::keep_doubtful`] kept last, with its doubts.
    fn take_doubtful(&self) -> Option<(Parsed<Self::Output>, Vec<Issue>)> {
        self.checking()?.doubtful.take()
    }
}

/// A target's checks and what they found: the soft issues kept, and the last value they rejected.
pub(crate) struct Checking<T> {
    /// The checks run on the value's JSON, if any.
    checks: Option<Checks>,
    kept: check::Kept,
    doubtful: Doubtful<T>,
}

impl<T> Checking<T> {
    fn new(checks: Option<Checks>) -> Self {
        Checking {
            checks,
            kept: check::Kept::default(),
            doubtful: Doubtful::default(),
        }
    }

    /// The checks, when the loop runs them (some are asynchronous).
    fn awaited(&self) -> Option<&Checks> {
        self.checks.as_ref().filter(|checks| checks.any_async())
    }
}

/// The last value a target's checks rejected, with its issues as soft ones: what
/// `Extractor::keep_doubtful` returns once the attempts are spent.
pub(crate) struct Doubtful<T>(std::sync::Mutex<Option<(Parsed<T>, Vec<Issue>)>>);

impl<T> Default for Doubtful<T> {
    fn default() -> Self {
        Doubtful(std::sync::Mutex::new(None))
    }
}

impl<T> Doubtful<T> {
    fn keep(&self, parsed: Parsed<T>, doubts: Vec<Issue>) {
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some((parsed, doubts));
    }

    fn take(&self) -> Option<(Parsed<T>, Vec<Issue>)> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    }
}

/// A target's checks the loop awaits, and where their findings go.
pub(crate) struct Deferred<'a> {
    checks: &'a Checks,
    kept: &'a check::Kept,
}

/// Runs the deferred checks of `target` on the value `parse_one` just returned: hard issues turn it
/// into [`ParseError::Check`] (the loop repairs it), soft ones are kept.
///
/// # Errors
/// A check that could not run.
pub(crate) async fn settle<G: Target>(
    target: &G,
    parsed: Parsed<G::Output>,
    raw: &str,
) -> Result<Result<Parsed<G::Output>, ParseError>, CheckError> {
    let Some(deferred) = target.deferred() else {
        return Ok(Ok(parsed));
    };
    let Some(json) = deferred.kept.take_parsed() else {
        return Ok(Ok(parsed));
    };
    let issues = deferred.checks.run_all(&json).await?;
    Ok(verdict(
        parsed,
        issues,
        raw,
        deferred.kept,
        |parsed, doubts| target.keep_doubtful(parsed, doubts),
    ))
}

/// Runs the deferred checks of `target` on each item the decoder completed, before
/// [`Target::vet`]: an item with hard issues becomes a skipped line the loop re-asks, an item without
/// keeps its soft issues.
///
/// # Errors
/// A check that could not run.
pub(crate) async fn settle_items<G: Target>(
    target: &G,
    events: Vec<LineEvent<WithJson<G::Output>>>,
) -> Result<Vec<LineEvent<WithJson<G::Output>>>, CheckError> {
    let Some(deferred) = target.deferred() else {
        return Ok(events);
    };
    let mut out = Vec::with_capacity(events.len());
    for event in events {
        out.push(match event {
            LineEvent::Item(found) => {
                let issues = deferred.checks.run_all(&found.value.json).await?;
                judged(found, issues, deferred.kept)
            }
            skipped => skipped,
        });
    }
    Ok(out)
}

/// `events` with each item's value mapped by `f` (which also sees the item's JSON): how a target that
/// wraps another hands its items to the inner one's [`Target::vet`] and takes them back.
pub(crate) fn map_items<O, I>(
    events: Vec<LineEvent<WithJson<O>>>,
    mut f: impl FnMut(O, &Value) -> I,
) -> Vec<LineEvent<WithJson<I>>> {
    events
        .into_iter()
        .map(|event| match event {
            LineEvent::Item(item) => {
                let value = f(item.value.value, &item.value.json);
                LineEvent::Item(Item {
                    value: WithJson {
                        value,
                        json: item.value.json,
                    },
                    line: item.line,
                    fixes: item.fixes,
                })
            }
            LineEvent::Skipped(skipped) => LineEvent::Skipped(skipped),
        })
        .collect()
}

/// Runs `check` on a parsed value: its hard issues turn it into [`ParseError::Check`] (the value
/// kept in `doubtful`), its soft ones are kept in `kept`.
fn checked<T>(
    parsed: Parsed<T>,
    text: &str,
    (kept, doubtful): (&check::Kept, &Doubtful<T>),
    check: impl FnOnce(&T) -> Issues,
) -> Result<Parsed<T>, ParseError> {
    let issues = check(&parsed.value);
    verdict(parsed, issues, text, kept, |parsed, doubts| {
        doubtful.keep(parsed, doubts)
    })
}

/// A parsed value judged by its checks' `issues`: hard ones turn it into [`ParseError::Check`] on
/// `raw` (the value handed to `doubtful` with its doubts, for when every attempt fails), soft
/// ones are kept in `kept`.
fn verdict<T>(
    parsed: Parsed<T>,
    issues: Issues,
    raw: &str,
    kept: &check::Kept,
    doubtful: impl FnOnce(Parsed<T>, Vec<Issue>),
) -> Result<Parsed<T>, ParseError> {
    match issues.verdict_with_doubts() {
        Ok(soft) => {
            kept.value(soft);
            Ok(parsed)
        }
        Err((issues, doubts)) => {
            doubtful(parsed, doubts);
            Err(ParseError::Check {
                issues,
                raw: raw.to_owned(),
            })
        }
    }
}

/// Runs `check` on each item: an item with hard issues becomes a skipped line the loop re-asks, an
/// item without keeps its soft issues in `kept`.
fn vetted<T>(
    events: Vec<LineEvent<WithJson<T>>>,
    kept: &check::Kept,
    check: impl Fn(&WithJson<T>) -> Issues,
) -> Vec<LineEvent<WithJson<T>>> {
    events
        .into_iter()
        .map(|event| match event {
            LineEvent::Item(found) => {
                let issues = check(&found.value);
                judged(found, issues, kept)
            }
            skipped => skipped,
        })
        .collect()
}

/// An item its checks found `issues` on: with hard ones, a skipped line the loop re-asks; else the item,
/// its soft issues kept in `kept`.
fn judged<T>(found: Found<T>, issues: Issues, kept: &check::Kept) -> LineEvent<WithJson<T>> {
    match issues.verdict() {
        Ok(soft) => {
            kept.item(soft);
            LineEvent::Item(found)
        }
        Err(issues) => LineEvent::Skipped(Skipped {
            line: found.line,
            raw: found.value.json.to_string(),
            reason: SkipReason::Check(issues),
        }),
    }
}

/// A Rust type implementing [`Extract`], with its own check ([`Extract::check`]) and, when an
/// extractor has any, the extractor's closures on the value's JSON.
pub(crate) struct Derived<T> {
    /// The extractor's closures with the type's own check, when there are closures: then the value
    /// is checked as JSON, as a runtime schema's is. `None`: the type's own check on the typed value.
    checking: Checking<T>,
    ty: PhantomData<fn() -> T>,
}

impl<T: Extract> Derived<T> {
    /// Values of `T`, checked by `T`'s own check.
    pub fn new() -> Self {
        Derived {
            checking: Checking::new(None),
            ty: PhantomData,
        }
    }

    /// Values of `T`, checked by `T`'s own check and by the extractor's `checks`.
    pub fn checked(checks: &Checks) -> Self {
        Derived {
            checking: Checking::new((!checks.is_empty()).then(|| with_typed::<T>(checks.clone()))),
            ty: PhantomData,
        }
    }
}

/// What [`Extract::check`] finds on `value`.
fn check_of<T: Extract>(value: &T) -> Issues {
    let mut issues = Issues::new();
    value.check(&mut issues);
    issues
}

impl<T: Extract> Target for Derived<T> {
    type Output = T;

    fn schema(&self) -> &SchemaSet {
        T::schema()
    }

    fn examples(&self) -> Result<Vec<Example>, ExampleError> {
        T::examples()
    }

    fn parse_one(&self, text: &str, options: &ParseOptions) -> Result<Parsed<T>, ParseError> {
        let Some(checks) = &self.checking.checks else {
            let parsed = parse::from_str_with::<T>(text, options)?;
            return checked(
                parsed,
                text,
                (&self.checking.kept, &self.checking.doubtful),
                check_of,
            );
        };
        let (parsed, json) = parse::from_str_with_json::<T>(text, options)?;
        if self.checking.awaited().is_some() {
            self.checking.kept.parsed(json);
            return Ok(parsed);
        }
        checked(
            parsed,
            text,
            (&self.checking.kept, &self.checking.doubtful),
            |_| checks.run(&json),
        )
    }

    fn vet(&self, events: Vec<LineEvent<WithJson<T>>>) -> Vec<LineEvent<WithJson<T>>> {
        match &self.checking.checks {
            None => vetted(events, &self.checking.kept, |item| check_of(&item.value)),
            Some(checks) if self.checking.awaited().is_none() => {
                vetted(events, &self.checking.kept, |item| checks.run(&item.json))
            }
            Some(_) => events,
        }
    }

    fn checking(&self) -> Option<&Checking<Self::Output>> {
        Some(&self.checking)
    }
}

/// Validated JSON for a runtime schema.
pub(crate) struct Runtime<'s> {
    schema: &'s SchemaSet,
    checking: Checking<Value>,
}

impl<'s> Runtime<'s> {
    /// Values of `schema`, unchecked.
    pub fn new(schema: &'s SchemaSet) -> Self {
        Runtime {
            schema,
            checking: Checking::new(None),
        }
    }

    /// Values of `schema` that `checks` run on.
    pub fn checked(schema: &'s SchemaSet, checks: Checks) -> Self {
        Runtime {
            schema,
            checking: Checking::new(Some(checks)),
        }
    }

    fn check(&self, value: &Value) -> Issues {
        self.checking
            .checks
            .as_ref()
            .map(|checks| checks.run(value))
            .unwrap_or_default()
    }
}

impl Target for Runtime<'_> {
    type Output = Value;

    fn schema(&self) -> &SchemaSet {
        self.schema
    }

    fn parse_one(&self, text: &str, options: &ParseOptions) -> Result<Parsed<Value>, ParseError> {
        let parsed = parse::from_str_value(text, self.schema, options)?;
        if self.checking.awaited().is_some() {
            self.checking.kept.parsed(parsed.value.clone());
            return Ok(parsed);
        }
        checked(
            parsed,
            text,
            (&self.checking.kept, &self.checking.doubtful),
            |value| self.check(value),
        )
    }

    fn vet(&self, events: Vec<LineEvent<WithJson<Value>>>) -> Vec<LineEvent<WithJson<Value>>> {
        match &self.checking.checks {
            Some(_) if self.checking.awaited().is_none() => {
                vetted(events, &self.checking.kept, |item| self.check(&item.json))
            }
            _ => events,
        }
    }

    fn checking(&self) -> Option<&Checking<Self::Output>> {
        Some(&self.checking)
    }
}

/// `checks`, and a derived type's own ([`Extract::check`]) on the values of its schema that
/// deserialize (for documents, extracted as JSON and typed at the end).
pub(crate) fn with_typed<T: Extract>(mut checks: Checks) -> Checks {
    checks.push(std::sync::Arc::new(
        typed_check::<T> as fn(&Value, &mut Issues),
    ));
    checks
}

/// [`Extract::check`] on the value `json` deserializes to; a value that does not deserialize is the
/// schema's to reject, not the check's.
fn typed_check<T: Extract>(json: &Value, issues: &mut Issues) {
    if let Ok(value) = T::deserialize(json) {
        value.check(issues);
    }
}
