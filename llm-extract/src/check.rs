//! Checks a schema cannot say: "the total equals the sum of the lines", "the end date is after the
//! start date". A check reads a whole value and reports [`Issue`]s at JSON pointer paths.
//!
//! - A **hard** issue ([`Issues::hard`]) rejects the value: the loop asks the model again, within the
//!   attempt cap, with the path and the message in the repair turn, exactly as for a schema
//!   violation. An item of a list that fails is re-asked, then left out, like an item that breaks the
//!   schema. A value that never passes ends in [`ParseError::Check`](crate::parse::ParseError::Check).
//! - A **soft** issue ([`Issues::soft`]) keeps the value and is returned with it in
//!   `Report::issues`, without a re-ask.
//!
//! A derived type opts in with `#[extract(check)]` and implements [`Check`]. Any extraction, of a
//! derived type or a runtime schema, also takes closures on the value's JSON with `Extractor::check`
//! (which can hold what the type cannot know), asynchronous ones (a lookup: "this customer id
//! exists") with `Extractor::check_async`, and asynchronous ones that also read the input's variables
//! ("the name is copied from the text", an outside checker) with `Extractor::check_async_in_context`.
//! Checks run on every complete value and item (of documents too), never on
//! a partial one.
//!
//! An asynchronous check that cannot run (the database it asks is down) says so with a
//! [`CheckError`]: the value is then neither returned nor re-asked, and the extraction fails with
//! `ExtractErrorKind::Check`, carrying the error and the model's answer. A value that could not be
//! checked is never passed as a checked one.
//!
//! ```
//! use llm_extract::check::{Check, Issues, Severity};
//! use llm_extract::llm::{from_fn, ChatResponse};
//! use llm_extract::{Extract, Extractor};
//! use serde::Deserialize;
//!
//! #[derive(Debug, Deserialize, Extract)]
//! #[extract(check)]
//! struct Invoice {
//!     lines: Vec<u32>,
//!     total: u32,
//! }
//!
//! impl Check for Invoice {
//!     fn check(&self, issues: &mut Issues) {
//!         let sum: u32 = self.lines.iter().sum();
//!         if sum != self.total {
//!             issues.hard("/total", format!("the total must equal the sum of the lines, {sum}"));
//!         }
//!         if self.lines.is_empty() {
//!             issues.soft("/lines", "no lines");
//!         }
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let answers = std::sync::Mutex::new(vec![r#"{"lines": [2, 3], "total": 5}"#, r#"{"lines": [2, 3], "total": 6}"#]);
//! let llm = from_fn(move |_request| {
//!     let answer = answers.lock().unwrap().pop().unwrap_or("{}");
//!     async move { Ok(ChatResponse::new(answer)) }
//! });
//! let out = Extractor::new(llm).extract::<Invoice>("Two lines: 2 and 3.").await?;
//! assert_eq!(out.value.total, 5);
//! assert_eq!(out.report.attempts.len(), 2); // the first answer said 6
//! assert!(out.report.issues.is_empty());
//! # Ok::<(), llm_extract::ExtractError>(())
//! # }).unwrap();
//! ```

use crate::validate::Violation;
use futures_util::future::BoxFuture;
use serde_json::{Map, Value};
use std::fmt;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// A check could not run, so the value is not known to pass it (a lookup whose service is down, a
/// timeout): the extraction fails with `ExtractErrorKind::Check` rather than pass the value unchecked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a check could not run: {message}")]
#[non_exhaustive]
pub struct CheckError {
    /// Why, for a person (e.g. `"the customer database did not answer: connection refused"`).
    pub message: String,
}

impl CheckError {
    /// A check that could not run, and why.
    pub fn new(message: impl Into<String>) -> Self {
        CheckError {
            message: message.into(),
        }
    }
}

/// Whether an issue rejects the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Severity {
    /// The value is rejected and the model asked again.
    Hard,
    /// The value is kept; the issue is returned with it.
    Soft,
}

/// What a check found wrong with a value.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Issue {
    /// JSON pointer into the value (e.g. `/total`); `""` is the root. For an item of a list, into the
    /// item, and [`Issue::item`] says which.
    pub path: String,
    /// What is wrong, for a person (and for the model, when the issue is hard).
    pub message: String,
    /// Whether it rejects the value.
    pub severity: Severity,
    /// For an item of a list, its position among the items the checks passed (0 for the first).
    pub item: Option<usize>,
}

impl Issue {
    /// An issue at `path` (a JSON pointer).
    pub fn new(path: impl Into<String>, message: impl Into<String>, severity: Severity) -> Self {
        Issue {
            path: path.into(),
            message: message.into(),
            severity,
            item: None,
        }
    }
}

impl fmt::Display for Issue {
    /// `item 2, at /total: the total ...`, or `at the root: ...`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(item) = self.item {
            write!(f, "item {item}, ")?;
        }
        match self.path.as_str() {
            "" => write!(f, "at the root: {}", self.message),
            path => write!(f, "at {path}: {}", self.message),
        }
    }
}

/// Where a check writes what it found.
#[derive(Debug, Default, Clone)]
pub struct Issues {
    found: Vec<Issue>,
}

impl Issues {
    /// No issues yet.
    pub fn new() -> Self {
        Issues::default()
    }

    /// A problem that rejects the value: the model is asked again with `path` and `message`.
    pub fn hard(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.push(Issue::new(path, message, Severity::Hard));
    }

    /// A doubt that keeps the value: returned with it in the report.
    pub fn soft(&mut self, path: impl Into<String>, message: impl Into<String>) {
        self.push(Issue::new(path, message, Severity::Soft));
    }

    /// Adds an issue.
    pub fn push(&mut self, issue: Issue) {
        self.found.push(issue);
    }

    /// Every issue, in the order found.
    pub fn as_slice(&self) -> &[Issue] {
        &self.found
    }

    /// Whether nothing was found.
    pub fn is_empty(&self) -> bool {
        self.found.is_empty()
    }

    /// [`Issues::verdict`], and with the violations every issue as a soft one: the doubts a value
    /// carries if it is kept although it failed (built only when it failed).
    pub(crate) fn verdict_with_doubts(self) -> Result<Vec<Issue>, (Vec<Violation>, Vec<Issue>)> {
        if self
            .found
            .iter()
            .all(|issue| issue.severity == Severity::Soft)
        {
            return Ok(self.found);
        }
        let doubts: Vec<Issue> = self
            .found
            .iter()
            .map(|issue| Issue {
                severity: Severity::Soft,
                ..issue.clone()
            })
            .collect();
        self.verdict().map_err(|violations| (violations, doubts))
    }

    /// The hard issues as violations for the repair turn, or the soft issues to keep.
    pub(crate) fn verdict(self) -> Result<Vec<Issue>, Vec<Violation>> {
        let (hard, soft): (Vec<Issue>, Vec<Issue>) = self
            .found
            .into_iter()
            .partition(|issue| issue.severity == Severity::Hard);
        if hard.is_empty() {
            return Ok(soft);
        }
        Err(hard
            .into_iter()
            .map(|issue| Violation {
                path: issue.path,
                message: issue.message,
            })
            .collect())
    }
}

/// A check a type runs on each of its values. `#[extract(check)]` on a derived type makes
/// `Extract::check` call it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` asks for its checks with `#[extract(check)]` but does not implement `Check`",
    label = "`Check` is not implemented for `{Self}`",
    note = "implement `llm_extract::check::Check` for `{Self}`, or remove `#[extract(check)]`"
)]
pub trait Check {
    /// Reports what is wrong with `self` into `issues`.
    fn check(&self, issues: &mut Issues);
}

/// A check on the JSON of a value.
type CheckFn = dyn Fn(&Value, &mut Issues) + Send + Sync;

/// An asynchronous check on the JSON of a value (its own copy), given the variables of the
/// input the value was extracted from.
type AsyncCheckFn =
    dyn Fn(Value, Arc<Context>) -> BoxFuture<'static, Result<Issues, CheckError>> + Send + Sync;

/// The variables of the input a value was extracted from (`text` among them), by name.
pub type Context = Map<String, Value>;

/// The closures an `Extractor` runs on each value and item it extracts, and the variables of the input
/// of the extraction they run in.
#[derive(Clone, Default)]
pub(crate) struct Checks {
    plain: Vec<Arc<CheckFn>>,
    deferred: Vec<Arc<AsyncCheckFn>>,
    context: Arc<Context>,
}

impl fmt::Debug for Checks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Checks({} + {} asynchronous)",
            self.plain.len(),
            self.deferred.len()
        )
    }
}

impl Checks {
    pub fn push(&mut self, check: Arc<CheckFn>) {
        self.plain.push(check);
    }

    /// Adds an asynchronous check.
    pub fn push_async<F, Fut>(&mut self, check: F)
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Issues, CheckError>> + Send + 'static,
    {
        self.deferred
            .push(Arc::new(move |value, _| Box::pin(check(value))));
    }

    /// Adds an asynchronous check that also reads the variables of the input.
    pub fn push_async_in_context<F, Fut>(&mut self, check: F)
    where
        F: Fn(Value, Arc<Context>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Issues, CheckError>> + Send + 'static,
    {
        self.deferred.push(Arc::new(move |value, context| {
            Box::pin(check(value, context))
        }));
    }

    /// These checks, for values extracted from an input of the variables `context` (kept only when an
    /// asynchronous check may read them).
    pub fn in_context(mut self, context: impl FnOnce() -> Option<Context>) -> Self {
        if self.any_async() {
            self.context = Arc::new(context().unwrap_or_default());
        }
        self
    }

    /// Whether there is no check at all.
    pub fn is_empty(&self) -> bool {
        self.plain.is_empty() && self.deferred.is_empty()
    }

    /// Whether any check is asynchronous.
    pub fn any_async(&self) -> bool {
        !self.deferred.is_empty()
    }

    /// Runs every synchronous check on `value`.
    pub fn run(&self, value: &Value) -> Issues {
        let mut issues = Issues::new();
        for check in &self.plain {
            check(value, &mut issues);
        }
        issues
    }

    /// Runs every check on `value`: the synchronous ones, then the asynchronous ones one after the
    /// other, each with its issues added in that order.
    ///
    /// # Errors
    /// The first asynchronous check that could not run.
    pub async fn run_all(&self, value: &Value) -> Result<Issues, CheckError> {
        let mut issues = self.run(value);
        for check in &self.deferred {
            issues
                .found
                .extend(check(value.clone(), Arc::clone(&self.context)).await?.found);
        }
        Ok(issues)
    }
}

/// The soft issues a target kept while the loop ran, taken by the loop when it ends; and the JSON of
/// the last value parsed, for the asynchronous checks the loop runs on it.
#[derive(Debug, Default)]
pub(crate) struct Kept {
    issues: Mutex<Vec<Issue>>,
    items: Mutex<usize>,
    parsed: Mutex<Option<Value>>,
}

impl Kept {
    /// Keeps the JSON of the value just parsed, for the asynchronous checks.
    pub fn parsed(&self, value: Value) {
        *lock(&self.parsed) = Some(value);
    }

    /// Takes the JSON of the value last parsed.
    pub fn take_parsed(&self) -> Option<Value> {
        lock(&self.parsed).take()
    }

    /// Keeps the soft issues of the one value.
    pub fn value(&self, soft: Vec<Issue>) {
        *lock(&self.issues) = soft;
    }

    /// Keeps the soft issues of the next item that passed.
    pub fn item(&self, soft: Vec<Issue>) {
        let mut items = lock(&self.items);
        let item = *items;
        *items += 1;
        lock(&self.issues).extend(soft.into_iter().map(|issue| Issue {
            item: Some(item),
            ..issue
        }));
    }

    /// Takes what was kept.
    pub fn take(&self) -> Vec<Issue> {
        std::mem::take(&mut *lock(&self.issues))
    }
}

/// The lock, also after a panic elsewhere: each change is one assignment or one extend.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hard_issues_become_violations_and_soft_ones_are_kept() {
        let mut issues = Issues::new();
        issues.soft("/a", "doubtful");
        assert_eq!(issues.clone().verdict().unwrap().len(), 1);
        issues.hard("/b", "wrong");
        let violations = issues.verdict().unwrap_err();
        assert_eq!(violations.len(), 1);
        assert_eq!(violations[0].path, "/b");
        assert_eq!(violations[0].message, "wrong");
    }

    #[test]
    fn closures_run_in_order() {
        let mut checks = Checks::default();
        checks.push(Arc::new(|v: &Value, issues: &mut Issues| {
            if v["n"] != 1 {
                issues.hard("/n", "must be 1");
            }
        }));
        checks.push(Arc::new(|_: &Value, issues: &mut Issues| {
            issues.soft("", "always")
        }));
        let found = checks.run(&json!({"n": 2}));
        let paths: Vec<&str> = found.as_slice().iter().map(|i| i.path.as_str()).collect();
        assert_eq!(paths, ["/n", ""]);
        assert_eq!(checks.run(&json!({"n": 1})).as_slice().len(), 1);
    }

    #[tokio::test]
    async fn asynchronous_checks_run_after_the_others_and_may_fail_to_run() {
        let mut checks = Checks::default();
        checks.push(Arc::new(|_: &Value, issues: &mut Issues| {
            issues.soft("/a", "first")
        }));
        checks.push_async(|value: Value| async move {
            let mut issues = Issues::new();
            match value["id"].as_str() {
                Some("down") => {
                    return Err(CheckError::new("the customer database did not answer"))
                }
                Some("c-1") => {}
                _ => issues.hard("/id", "no such customer"),
            }
            Ok(issues)
        });
        assert!(checks.any_async());
        let found = checks.run_all(&json!({"id": "c-2"})).await.unwrap();
        let paths: Vec<&str> = found.as_slice().iter().map(|i| i.path.as_str()).collect();
        assert_eq!(paths, ["/a", "/id"]);
        assert_eq!(
            checks
                .run_all(&json!({"id": "c-1"}))
                .await
                .unwrap()
                .as_slice()
                .len(),
            1
        );
        let error = checks.run_all(&json!({"id": "down"})).await.unwrap_err();
        assert_eq!(
            error.to_string(),
            "a check could not run: the customer database did not answer"
        );
        // The synchronous run leaves the asynchronous checks out.
        assert_eq!(checks.run(&json!({"id": "down"})).as_slice().len(), 1);
    }

    #[tokio::test]
    async fn a_check_in_context_reads_the_variables_of_the_input() {
        let mut checks = Checks::default();
        checks.push_async_in_context(|value: Value, context: Arc<Context>| async move {
            let mut issues = Issues::new();
            let text = context.get("text").and_then(Value::as_str).unwrap_or("");
            if !text.contains(value["name"].as_str().unwrap_or("?")) {
                issues.hard("/name", "not in the text");
            }
            Ok(issues)
        });
        let value = json!({"name": "Ada"});
        // Without a context the text is empty.
        assert_eq!(checks.run_all(&value).await.unwrap().as_slice().len(), 1);
        let vars = json!({"text": "Ada wrote it"}).as_object().cloned();
        let within = checks.clone().in_context(|| vars);
        assert!(within.run_all(&value).await.unwrap().is_empty());
        // Only checks that may read it keep it.
        let plain = Checks::default().in_context(|| panic!("not read"));
        assert!(plain.context.is_empty());
    }

    #[test]
    fn items_are_numbered_in_the_order_they_pass() {
        let kept = Kept::default();
        kept.item(vec![Issue::new("/x", "a", Severity::Soft)]);
        kept.item(Vec::new());
        kept.item(vec![Issue::new("/y", "b", Severity::Soft)]);
        let issues = kept.take();
        assert_eq!(issues[0].item, Some(0));
        assert_eq!(issues[1].item, Some(2));
        assert_eq!(issues[1].to_string(), "item 2, at /y: b");
        assert!(kept.take().is_empty());
    }
}
