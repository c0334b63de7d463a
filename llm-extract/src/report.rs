//! What an extraction returns besides its value: every attempt with the model's raw answer, what went
//! wrong with it, what it cost and how it ended. Errors carry the same [`Report`], so cost is never lost.
//!
//! This is the end of one extraction's flow. Built on top of it: [`batch`](crate::batch) for many
//! documents, [`prompts`](crate::prompts) for named prompts, [`blocking`](crate::blocking) for code
//! without an async runtime.

use crate::ground::Conflict;
use crate::llm::{Finish, LlmError, Usage};
use crate::parse::{Fix, ParseError, Skipped};
use std::collections::BTreeMap;
use std::time::Duration;

/// A successful extraction: the value and its ledger.
///
/// [`Extract::extract`](crate::Extract::extract) and friends return only the value; the
/// [`Extractor`](crate::extract::Extractor) returns this. The ledger is the same [`Report`] a stream
/// ends with and every [`ExtractError`](crate::extract::ExtractError) carries.
///
/// ```
/// # fn show(out: llm_extract::Extraction<Vec<String>>) {
/// let llm_extract::Extraction { value, report } = out;
/// println!("{} items, {} attempts, {} tokens", value.len(), report.attempts.len(), report.usage.total());
/// # }
/// ```
///
/// It is only ever these two: whatever else an extraction reports goes into [`Report`].
#[derive(Debug, Clone)]
pub struct Extraction<T> {
    /// The validated value (for `extract_all`, every item kept).
    pub value: T,
    /// Every attempt, what it cost, how it ended, what was skipped and what the parser fixed.
    pub report: Report,
}

impl<T> Extraction<T> {
    pub(crate) fn new(value: T, report: Report) -> Self {
        Extraction { value, report }
    }

    /// Applies `f` to the value, keeping the ledger.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Extraction<U> {
        Extraction {
            value: f(self.value),
            report: self.report,
        }
    }

    /// The value alone.
    pub fn into_value(self) -> T {
        self.value
    }
}

/// The ledger of an extraction: what a stream reports when it ends, and what every
/// [`ExtractError`](crate::extract::ExtractError) carries.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Report {
    /// Every request made, in order.
    pub attempts: Vec<Attempt>,
    /// The tokens all attempts used together.
    pub usage: Usage,
    /// How the last answer ended, if one did ([`Finish::Length`] when the items are incomplete
    /// because the continuation cap or the token budget was reached; [`Finish::Loop`] when the
    /// model looped).
    pub finish: Option<Finish>,
    /// Lines that never produced an item (`extract_all`): still invalid after the repair cap, or cut off.
    pub skipped: Vec<Skipped>,
    /// What the parser fixed to get the value (or the items kept).
    pub fixes: Vec<Fix>,
    /// Copies of one item (`extract_all` and `extract_stream` of a type with key fields) that
    /// disagreed on a property: the value kept and the one set aside.
    pub conflicts: Vec<Conflict>,
    /// What the backend does not enforce of the schema it was sent, as one sentence (see
    /// [`Lowering::notice`](crate::schema::dialect::Lowering::notice)): keywords its dialect drops, or
    /// a schema sent without strict mode. Every answer was validated against the whole schema either
    /// way. `None` when the backend enforces all of it, or no schema was sent.
    pub unenforced: Option<String>,
    /// The soft issues the [checks](crate::check) found on the value (or on each item kept, with its
    /// position): kept without a re-ask.
    pub issues: Vec<crate::check::Issue>,
    /// The confidence of each leaf value of the answer, by JSON pointer (`/name`; for `extract_all` and
    /// `extract_stream`, from each item's position: `/0/name`), in `[0, 1]`, from the log-probabilities
    /// of the tokens that wrote it (see [`Extractor::confidence`](crate::extract::Extractor::confidence)).
    /// A stream's items have theirs by the order they were yielded (also in the report of an error
    /// that ended the stream); an item merged from copies on its keys (`extract_all`) takes each
    /// property's from the copy the merge kept it from; a partial extraction has the final value's.
    /// Empty unless confidence was asked for; a leaf the parser had to repair, or whose tokens the
    /// backend did not send (an answer stopped before its end, at `max_items` or a loop, gets none),
    /// has none. A document's is [`Document::confidence`](crate::extract::Document::confidence).
    pub confidence: std::collections::BTreeMap<String, f32>,
    /// Confidence was asked for and the backend gave no token log-probabilities (Anthropic and Ollama
    /// have none; a server may ignore the request): [`Report::confidence`] is empty for that reason.
    pub no_logprobs: bool,
    /// With [`Extractor::samples`](crate::extract::Extractor::samples) above 1: for each leaf of the
    /// value (a JSON pointer; for `extract_all`, from the item's position, `/0/name`), the share of the
    /// valid answers that gave that value there (an answer that failed has no vote). A second signal of doubt: a leaf few answers
    /// agree on is more often wrong. Empty with one answer.
    pub agreement: BTreeMap<String, f32>,
    /// With [`Strategy::PerField`](crate::extract::Strategy::PerField): what each field's questions
    /// cost, by the field's JSON pointer (`/customer`, `/lines/0/price`). Empty with one answer.
    pub fields: BTreeMap<String, FieldCost>,
}

/// What the questions about one field cost ([`Report::fields`]).
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct FieldCost {
    /// The tokens its questions used. A choice scored by likelihood writes no token: its prompt tokens
    /// are counted with the backend's tokenizer, marked [`Usage::estimated`].
    pub usage: Usage,
    /// How long its questions took.
    pub elapsed: Duration,
    /// How many requests it took (answers and scorings).
    pub requests: u32,
    /// How the value was found.
    pub how: FoundBy,
}

/// How the per-field strategy found a field's value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum FoundBy {
    /// Copied from the text (a span of it), read as the field's type where it is not a string.
    #[default]
    Copied,
    /// The most likely of the options, scored.
    Chosen,
    /// Written by the model (free text, or an option or a value where the backend cannot score).
    Written,
    /// Nothing answered: the text does not say, or the copy did not read as the field's type.
    Null,
}

impl Report {
    pub(crate) fn push(&mut self, attempt: Attempt) {
        self.usage += attempt.usage;
        if let Some(finish) = &attempt.finish {
            self.finish = Some(finish.clone());
        }
        self.attempts.push(attempt);
    }

    /// Whether every answer came from a response [`Cache`](crate::llm::Cache) (and at least one did):
    /// the extraction asked the model nothing.
    pub fn from_cache(&self) -> bool {
        !self.attempts.is_empty() && self.attempts.iter().all(|a| a.cached)
    }

    /// The raw text of the last answer, if any request got one.
    pub fn last_raw(&self) -> Option<&str> {
        self.attempts.last().map(|a| a.raw.as_str())
    }
}

/// One request to the model and what came of it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Attempt {
    /// Why the request was made.
    pub kind: AttemptKind,
    /// The answer as the model wrote it (what arrived, if the backend failed midway).
    pub raw: String,
    /// Reasoning a thinking model produced apart from its answer.
    pub thinking: Option<String>,
    /// What was wrong with the answer; `None` when it was fully used.
    pub error: Option<AttemptError>,
    /// The tokens it used: the backend's counts, or an estimate ([`Usage::estimated`]) when the stream
    /// was stopped early or the backend sent none.
    pub usage: Usage,
    /// How the answer ended; `None` when the backend failed before the end.
    pub finish: Option<Finish>,
    /// The loop that stopped it, when [`Finish::Loop`]: what repeated and from which byte.
    pub looped: Option<Loop>,
    /// The sampling it asked for: what a recovery after a loop changed.
    pub sampling: Sampling,
    /// How many items (or values) it contributed.
    pub items: usize,
    /// How long it took.
    pub elapsed: Duration,
    /// The backend that answered, as it [describes](crate::llm::Llm::describe) itself (provider,
    /// address with credentials redacted, model): behind a [`Fallback`](crate::llm::Fallback), the one
    /// it chose. `None` when the backend does not say.
    pub backend: Option<crate::llm::Description>,
    /// The answer came from a response [`Cache`](crate::llm::Cache), not from the model (its usage
    /// is zero).
    pub cached: bool,
}

/// The sampling settings one request carried (`None`: not sent, the backend's default).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[non_exhaustive]
pub struct Sampling {
    /// The temperature.
    pub temperature: Option<f32>,
    /// The seed.
    pub seed: Option<u64>,
    /// The repeat penalty.
    pub repeat_penalty: Option<f32>,
}

impl Sampling {
    pub(crate) fn of(request: &crate::llm::ChatRequest) -> Self {
        Sampling {
            temperature: request.temperature,
            seed: request.seed,
            repeat_penalty: request.repeat_penalty,
        }
    }
}

impl std::fmt::Display for Sampling {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        if let Some(t) = self.temperature {
            parts.push(format!("temperature {t}"));
        }
        if let Some(seed) = self.seed {
            parts.push(format!("seed {seed}"));
        }
        if let Some(p) = self.repeat_penalty {
            parts.push(format!("repeat penalty {p}"));
        }
        if parts.is_empty() {
            f.write_str("backend defaults")
        } else {
            f.write_str(&parts.join(", "))
        }
    }
}

/// Why a request was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum AttemptKind {
    /// The original request.
    First,
    /// A new request after an unusable answer, listing what was wrong.
    Repair,
    /// A request to continue after an answer cut off by the token limit.
    Continuation,
    /// A new request after the model looped, with a repeat penalty (and later a small temperature); for
    /// a list, it continues after the last good item.
    Recovery,
}

impl std::fmt::Display for AttemptKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            AttemptKind::First => "first",
            AttemptKind::Repair => "repair",
            AttemptKind::Continuation => "continuation",
            AttemptKind::Recovery => "recovery",
        })
    }
}

/// What was wrong with one answer.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum AttemptError {
    /// The one value could not be parsed or validated.
    #[error(transparent)]
    Parse(ParseError),
    /// Some lines (or list elements) produced no item.
    #[error("{} line(s) produced no item: {}", .0.len(), describe_skipped(.0))]
    Lines(Vec<Skipped>),
    /// The backend failed.
    #[error(transparent)]
    Llm(LlmError),
    /// The model looped and was stopped before a usable answer.
    #[error("the model looped: {0}")]
    Loop(Loop),
}

/// What kind of loop was seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum LoopKind {
    /// One byte repeated inside a string or a number (`"1250000000…`).
    Run,
    /// A substring of this many bytes repeated back to back.
    Period(usize),
    /// Whitespace between tokens that does not end.
    Whitespace,
    /// A string value longer than the input it is extracted from could hold
    /// ([`LoopGuard::string_margin`](crate::extract::LoopGuard::string_margin)): the model writing on inside one value.
    LongString,
    /// Completed items that each repeat a recent one (one item again and again, or a cycle).
    Items,
    /// Elements of one array (or member values of one object) inside the answer that each repeat a
    /// recent one: [`Loop::path`] says which array.
    Elements,
}

/// A loop in an answer: what kind, and where it started.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Loop {
    /// What the model looped on.
    pub kind: LoopKind,
    /// The byte offset in the answer where the loop began (for [`LoopKind::Items`], the end of
    /// the last item that was not a repeat).
    pub start: usize,
    /// The byte offset at which it was detected (how much of the answer had arrived).
    pub detected_at: usize,
    /// For [`LoopKind::Elements`], the JSON pointer (RFC 6901) of the array or object whose elements
    /// repeat (`/attendees`, `/lines/0/notes`; `""` for the answer itself); `None` for the others.
    pub path: Option<String>,
}

impl std::fmt::Display for Loop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.kind {
            LoopKind::Run => f.write_str("one character repeated")?,
            LoopKind::Period(p) => write!(f, "a {p}-byte sequence repeated")?,
            LoopKind::Whitespace => f.write_str("whitespace without end")?,
            LoopKind::LongString => f.write_str("a string longer than the input")?,
            LoopKind::Items => f.write_str("items repeating")?,
            LoopKind::Elements => f.write_str("elements repeating")?,
        }
        if let Some(path) = &self.path {
            write!(f, " in `{path}`")?;
        }
        write!(
            f,
            " from byte {} (seen at byte {})",
            self.start, self.detected_at
        )
    }
}

fn describe_skipped(skipped: &[Skipped]) -> String {
    let mut out = String::new();
    for (i, s) in skipped.iter().take(5).enumerate() {
        if i > 0 {
            out.push_str("; ");
        }
        out.push_str(&format!("line {}: {}", s.line, s.reason));
    }
    if skipped.len() > 5 {
        out.push_str(&format!("; and {} more", skipped.len() - 5));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attempt(tokens: u64, finish: Option<Finish>) -> Attempt {
        Attempt {
            kind: AttemptKind::First,
            raw: "x".into(),
            thinking: None,
            error: None,
            usage: Usage {
                prompt_tokens: tokens,
                completion_tokens: 1,
                estimated: false,
                ..Usage::default()
            },
            finish,
            looped: None,
            sampling: Sampling::default(),
            items: 0,
            elapsed: Duration::ZERO,
            backend: None,
            cached: false,
        }
    }

    #[test]
    fn report_sums_usage_and_keeps_the_last_finish() {
        let mut report = Report::default();
        report.push(attempt(3, Some(Finish::Length)));
        report.push(attempt(4, None));
        assert_eq!(report.usage.total(), 9);
        assert_eq!(report.finish, Some(Finish::Length));
        assert_eq!(report.last_raw(), Some("x"));
        let extraction = Extraction::new(1, report).map(|v| v + 1);
        assert_eq!(extraction.value, 2);
        assert_eq!(extraction.report.attempts.len(), 2);
    }
}
