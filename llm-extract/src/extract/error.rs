//! [`ExtractError`]: why an extraction failed, with the whole ledger of what it tried and what it cost.

use super::prompts::template::TemplateError;
use super::setup::example::ExampleError;
use crate::check::CheckError;
use crate::error::SchemaError;
use crate::llm::{LlmError, Usage};
use crate::parse::ParseError;
use crate::report::Loop;
use crate::report::{Attempt, Report};
use serde_json::Value;

/// An extraction failed.
///
/// Match on [`ExtractError::kind`] for what went wrong; [`ExtractError::report`] holds every attempt (with
/// the model's raw answers) and the summed usage, so nothing a failure cost is lost. The error itself is
/// one pointer wide.
///
/// ```
/// use llm_extract::extract::ExtractErrorKind;
/// # fn handle(err: llm_extract::extract::ExtractError) {
/// match err.kind() {
///     ExtractErrorKind::Invalid(last) => eprintln!("never valid; last problem: {last}"),
///     ExtractErrorKind::Llm(backend) => eprintln!("backend failed: {backend}"),
///     _ => eprintln!("{err}"),
/// }
/// eprintln!("{} attempts, {} tokens", err.attempts().len(), err.usage().total());
/// # }
/// ```
///
/// `T` is what the items kept before a failure are ([`ExtractError::kept`]), as in std's
/// `SendError<T>`: `extract_all::<T>` fails with an `ExtractError<T>` that hands back the `T`s it
/// had decoded; every other call, and a runtime schema's, fails with an `ExtractError` (of `Value`:
/// the validated JSON, for a stream the items it already yielded).
pub struct ExtractError<T = Value> {
    inner: Box<Inner<T>>,
}

struct Inner<T> {
    kind: ExtractErrorKind,
    report: Report,
    kept: Vec<T>,
}

/// What went wrong in an extraction.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ExtractErrorKind {
    /// The backend failed (after its own retries of transient failures). For `extract_all`, the items
    /// decoded before the failure are in [`ExtractError::kept`].
    Llm(LlmError),
    /// No answer validated within `max_attempts`; this is the last answer's problem.
    Invalid(ParseError),
    /// The answer was cut off by the token limit and what arrived does not validate: raise `max_tokens`.
    Truncated(ParseError),
    /// The model looped on every attempt (each was stopped early, see [`Attempt::looped`]); this is
    /// the last loop. Raise the recovery penalty or temperature ([`LoopGuard`](crate::extract::LoopGuard)),
    /// or try a larger model.
    Loop(Loop),
    /// The token budget was spent before a valid answer.
    Budget {
        /// The budget.
        budget: u64,
        /// What was spent.
        spent: u64,
    },
    /// The prompt template could not be filled.
    Template(TemplateError),
    /// One of the target type's own examples (`#[extract(example(...))]`) does not satisfy its schema.
    Example(ExampleError),
    /// The schema cannot be sent to this backend in constrained mode.
    Schema(SchemaError),
    /// A check could not run (e.g. the service an asynchronous check asks was down), so the answer is
    /// not known to pass it: nothing unchecked is returned. Retry when the check can run.
    Check {
        /// The check's own error.
        error: CheckError,
        /// The model's answer that was being checked (a list's: the whole answer so far).
        raw: String,
    },
    /// The blocking facade could not run (no runtime, or called from inside an async runtime).
    Runtime {
        /// What happened.
        message: String,
    },
}

impl ExtractError {
    pub(crate) fn new(kind: ExtractErrorKind, report: Report) -> Self {
        ExtractError {
            inner: Box::new(Inner {
                kind,
                report,
                kept: Vec::new(),
            }),
        }
    }
}

impl<T> ExtractError<T> {
    /// The ledger, to add what the steps after the loop found (merge conflicts, refused items).
    pub(crate) fn report_mut(&mut self) -> &mut Report {
        &mut self.inner.report
    }

    /// The same error with `kept` as the items kept.
    pub(crate) fn with_kept<U>(self, kept: Vec<U>) -> ExtractError<U> {
        let Inner { kind, report, .. } = *self.inner;
        ExtractError {
            inner: Box::new(Inner { kind, report, kept }),
        }
    }

    /// What went wrong.
    pub fn kind(&self) -> &ExtractErrorKind {
        &self.inner.kind
    }

    /// Every attempt, the summed usage and what was skipped.
    pub fn report(&self) -> &Report {
        &self.inner.report
    }

    /// Every request made, with the model's raw answers.
    pub fn attempts(&self) -> &[Attempt] {
        &self.inner.report.attempts
    }

    /// The tokens all attempts used together.
    pub fn usage(&self) -> Usage {
        self.inner.report.usage
    }

    /// The model's last raw answer, if there was one.
    pub fn raw(&self) -> Option<&str> {
        self.inner.report.last_raw()
    }

    /// The items decoded before an `extract_all` failed: the `T`s of `extract_all::<T>`, the
    /// validated JSON of a runtime schema's (a stream has already yielded them: its error holds
    /// their JSON).
    pub fn kept(&self) -> &[T] {
        &self.inner.kept
    }

    /// The items decoded before the failure, by value.
    pub fn into_kept(self) -> Vec<T> {
        self.inner.kept
    }

    /// Applies `f` to each item kept, keeping the rest: e.g. to return a typed call's error where
    /// an `ExtractError` (of `Value`) is expected.
    ///
    /// ```
    /// # fn as_json<T: serde::Serialize>(err: llm_extract::ExtractError<T>) -> llm_extract::ExtractError {
    /// err.map_kept(|item| serde_json::to_value(item).unwrap_or_default())
    /// # }
    /// ```
    pub fn map_kept<U>(self, f: impl FnMut(T) -> U) -> ExtractError<U> {
        let Inner { kind, report, kept } = *self.inner;
        ExtractError {
            inner: Box::new(Inner {
                kind,
                report,
                kept: kept.into_iter().map(f).collect(),
            }),
        }
    }

    /// The ledger, by value.
    pub fn into_report(self) -> Report {
        self.inner.report
    }
}

impl std::fmt::Display for ExtractErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExtractErrorKind::Llm(err) => write!(f, "the backend failed: {err}"),
            ExtractErrorKind::Invalid(err) => write!(f, "no answer was valid: {err}"),
            ExtractErrorKind::Truncated(err) => write!(
                f,
                "the answer was cut off by the token limit and is not valid as it stands ({err}); \
                 raise max_tokens"
            ),
            ExtractErrorKind::Loop(found) => write!(
                f,
                "the model looped on every attempt ({found}); raise the recovery penalty or \
                 temperature of the loop guard, or use a larger model"
            ),
            ExtractErrorKind::Budget { budget, spent } => write!(
                f,
                "the token budget of {budget} was spent ({spent} tokens) before a valid answer"
            ),
            ExtractErrorKind::Template(err) => err.fmt(f),
            ExtractErrorKind::Example(err) => err.fmt(f),
            ExtractErrorKind::Schema(err) => write!(
                f,
                "the schema cannot be sent to this backend ({err}); use Mode::Prompted to describe \
                 it in the prompt instead"
            ),
            ExtractErrorKind::Check { error, .. } => write!(
                f,
                "{error}; the answer was not checked, so it is not returned (retry once the check \
                 can run; the answer is in the error's report)"
            ),
            ExtractErrorKind::Runtime { message } => f.write_str(message),
        }
    }
}

impl<T> std::fmt::Display for ExtractError<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let report = &self.inner.report;
        write!(f, "{}", self.inner.kind)?;
        if report.attempts.is_empty() {
            return Ok(());
        }
        write!(
            f,
            " [{} attempt(s), {} tokens",
            report.attempts.len(),
            report.usage.total()
        )?;
        if !self.inner.kept.is_empty() {
            write!(
                f,
                ", {} item(s) kept before the failure",
                self.inner.kept.len()
            )?;
        }
        f.write_str("]")?;
        if matches!(
            self.inner.kind,
            ExtractErrorKind::Invalid(_) | ExtractErrorKind::Truncated(_)
        ) {
            if let Some(raw) = report.last_raw() {
                write!(
                    f,
                    "; the last answer began: {:?}",
                    crate::llm::http_excerpt(raw)
                )?;
            }
        }
        Ok(())
    }
}

/// The items kept are counted, not shown: `T` need not be `Debug` (as std's `SendError<T>`).
impl<T> std::fmt::Debug for ExtractError<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExtractError")
            .field("kind", &self.inner.kind)
            .field("report", &self.inner.report)
            .field("kept", &self.inner.kept.len())
            .finish()
    }
}

impl<T> std::error::Error for ExtractError<T> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.inner.kind {
            ExtractErrorKind::Llm(err) => Some(err),
            ExtractErrorKind::Invalid(err) | ExtractErrorKind::Truncated(err) => Some(err),
            ExtractErrorKind::Template(err) => Some(err),
            ExtractErrorKind::Example(err) => Some(err),
            ExtractErrorKind::Schema(err) => Some(err),
            ExtractErrorKind::Check { error, .. } => Some(error),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_is_small() {
        assert_eq!(
            std::mem::size_of::<ExtractError>(),
            std::mem::size_of::<usize>()
        );
        assert_eq!(
            std::mem::size_of::<ExtractError<String>>(),
            std::mem::size_of::<usize>()
        );
    }

    #[test]
    fn display_says_what_it_cost() {
        let mut report = Report::default();
        report.push(crate::report::Attempt {
            kind: crate::report::AttemptKind::First,
            raw: "not json".into(),
            thinking: None,
            error: None,
            usage: Usage {
                prompt_tokens: 10,
                completion_tokens: 5,
                estimated: false,
                ..Usage::default()
            },
            finish: Some(crate::llm::Finish::Stop),
            looped: None,
            sampling: crate::report::Sampling::default(),
            items: 0,
            elapsed: std::time::Duration::ZERO,
            backend: None,
            cached: false,
        });
        let err: ExtractError = ExtractError::new(
            ExtractErrorKind::Invalid(ParseError::NoJson {
                raw: "not json".into(),
            }),
            report,
        );
        let text = err.to_string();
        assert!(text.contains("1 attempt(s), 15 tokens"), "{text}");
        assert!(text.contains("not json"), "{text}");
        assert_eq!(err.raw(), Some("not json"));
    }
}
