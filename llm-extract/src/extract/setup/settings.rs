//! Every setting of an [`Extractor`], each a self-consuming setter (`Extractor::new(llm).max_tokens(..)`).
//! The table of them, with their defaults and what reads each, is on [`Extractor`]; the values live in
//! [`Config`](crate::extract::setup::config::Config).

use crate::check::{CheckError, Context, Issues};
use crate::extract::confidence::logprobs::ConfidenceRule;
use crate::extract::loops::LoopGuard;
use crate::extract::loops::Recovery;
use crate::extract::setup::example::{Example, ExampleError};
use crate::extract::Extract;
use crate::extract::Extractor;
use crate::extract::Mode;
use crate::llm::Llm;
use crate::parse::ParseOptions;
use serde::Serialize;
use serde_json::Value;

impl<L: Llm> Extractor<L> {
    /// The system instructions, placed before the format instructions (default
    /// [`DEFAULT_INSTRUCTIONS`](crate::extract::DEFAULT_INSTRUCTIONS): extract only what the text states).
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.config.instructions = instructions.into();
        self
    }

    /// The user prompt template, with `{{name}}` placeholders filled from the [`Input`](crate::extract::Input)
    /// (default `{{text}}`). A placeholder without a variable fails the extraction with a template error.
    pub fn template(mut self, template: impl Into<String>) -> Self {
        self.config.template = template.into();
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

    /// Constrained (the default), prompted or tool: how the schema travels (see [`Mode`]).
    pub fn mode(mut self, mode: Mode) -> Self {
        self.config.mode = mode;
        self
    }

    /// The most answers requested to get a valid result: the first plus fixes, so `max_attempts(3)`
    /// allows two repairs (default 3; at least 1). Continuations after a cut answer are capped separately
    /// ([`Extractor::max_continuations`]); transport retries are the backend's [`RetryPolicy`](crate::llm::RetryPolicy).
    pub fn max_attempts(mut self, attempts: u32) -> Self {
        self.config.max_attempts = attempts.max(1);
        self
    }

    /// How many times a list ([`Extractor::extract_all`], streams, document chunks) asks the model to
    /// continue after an answer cut off by the token limit (default 2).
    pub fn max_continuations(mut self, continuations: u32) -> Self {
        self.config.max_continuations = continuations;
        self
    }

    /// The most tokens one answer may have. By default it is derived from the schema where the schema
    /// bounds the value (string `maxLength`, `maxItems`, enums, numbers, booleans: their longest JSON
    /// text, one token per byte, plus a margin), and otherwise 1024 for one value and 4096 for a list;
    /// `max_tokens` overrides both.
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

    /// The most items a list keeps. Generation stops once that many arrived, the prompt says so,
    /// and in constrained mode the array sent to the server gets `maxItems` (default: no limit).
    pub fn max_items(mut self, items: usize) -> Self {
        self.config.max_items = Some(items);
        self
    }

    /// The most tokens (prompt plus completion, summed over attempts) an extraction may spend. No new
    /// request starts once it is spent, and each request's `max_tokens` is lowered to what is left. When it
    /// runs out, [`Extractor::extract`] fails with a budget error; a list returns the items it has
    /// (default: no budget).
    pub fn token_budget(mut self, tokens: u64) -> Self {
        self.config.token_budget = Some(tokens);
        self
    }

    /// Accepts only clean JSON: no fences, no fixes, no coercion (default `false`).
    pub fn strict(mut self, strict: bool) -> Self {
        self.config.parse = self.config.parse.with_strict(strict);
        self
    }

    /// The parser's options, in full (default [`ParseOptions::default`]).
    pub fn parse_options(mut self, options: ParseOptions) -> Self {
        self.config.parse = options;
        self
    }

    /// When a streamed answer counts as a loop (default [`LoopGuard::default`]; [`LoopGuard::off`]
    /// turns detection off). Every answer is streamed and checked as it arrives, one value or many; a
    /// loop stops the generation at once (the stream is dropped, which cancels it), the attempt ends
    /// with [`Finish::Loop`](crate::llm::Finish::Loop) and, within `max_attempts`, a recovery
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

    /// After this many items in a row that each copy one of the recent items (default 2: `A, A, A` or
    /// `A, B, A, B`), `extract_all` stops the generation (the model is looping), keeps the items before
    /// the copies and reports [`Finish::Loop`](crate::llm::Finish::Loop); 0 turns the item check off. Sets
    /// [`LoopGuard::item_copies`].
    pub fn item_copies(mut self, copies: usize) -> Self {
        self.config.loop_guard.item_copies = copies;
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
    /// at least 200; longer answers keep their head and tail).
    pub fn max_echo_chars(mut self, chars: usize) -> Self {
        self.config.max_echo_chars = chars.max(200);
        self
    }

    /// Adds a check a schema cannot say, run on the JSON of every value and item this extractor
    /// extracts (of a derived type, after the type's own `#[extract(check)]`; of a runtime schema,
    /// [`Extractor::with_schema`]; of a document), never on a partial one: hard issues are repaired
    /// like schema violations, soft ones returned in [`Report::issues`](crate::Report::issues). A
    /// closure can hold what the type cannot know, such as the input it was asked about.
    ///
    /// ```
    /// use llm_extract::llm::{from_fn, ChatResponse};
    /// use llm_extract::schema::SchemaSet;
    /// use llm_extract::Extractor;
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
    /// let out = extractor.with_schema(&schema).extract("From 3 to 9.").await?;
    /// assert_eq!(out.report.issues[0].path, "/end");
    /// # Ok::<(), llm_extract::ExtractError>(())
    /// # }).unwrap();
    /// ```
    pub fn check(mut self, check: impl Fn(&Value, &mut Issues) + Send + Sync + 'static) -> Self {
        self.checks.push(std::sync::Arc::new(check));
        self
    }

    /// Adds an asynchronous check (a lookup: "this customer id exists"), run like [`Extractor::check`]
    /// on every complete value and item, after the synchronous checks, with its own
    /// copy of the value. A check that cannot run returns a [`CheckError`]: the extraction then fails
    /// with [`ExtractErrorKind::Check`](crate::extract::ExtractErrorKind::Check), carrying the error
    /// and the model's answer, rather than return a value that was not checked.
    ///
    /// ```
    /// use llm_extract::check::{CheckError, Issues};
    /// use llm_extract::extract::ExtractErrorKind;
    /// use llm_extract::llm::{from_fn, ChatResponse};
    /// use llm_extract::schema::SchemaSet;
    /// use llm_extract::Extractor;
    /// use serde_json::{json, Value};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let schema = SchemaSet::new("Order", json!({
    ///     "type": "object",
    ///     "properties": {"customer": {"type": "string"}},
    ///     "required": ["customer"],
    ///     "additionalProperties": false
    /// }));
    /// let lookup = |up: bool| move |value: Value| async move {
    ///     if !up {
    ///         return Err(CheckError::new("the customer database did not answer"));
    ///     }
    ///     let mut issues = Issues::new();
    ///     if value["customer"] != "c-7" {
    ///         issues.hard("/customer", "no customer has this id; the text names c-7");
    ///     }
    ///     Ok(issues)
    /// };
    /// // The first answer names c-1, then every answer c-7.
    /// let answers = std::sync::Mutex::new(vec![r#"{"customer": "c-1"}"#]);
    /// let llm = from_fn(move |_request| {
    ///     let answer = answers.lock().unwrap().pop().unwrap_or(r#"{"customer": "c-7"}"#);
    ///     async move { Ok(ChatResponse::new(answer)) }
    /// });
    /// let out = Extractor::new(&llm).check_async(lookup(true)).with_schema(&schema).extract("Order for c-7.").await?;
    /// assert_eq!(out.value["customer"], "c-7");
    /// assert_eq!(out.report.attempts.len(), 2);
    ///
    /// let err = Extractor::new(&llm).check_async(lookup(false)).with_schema(&schema).extract("x").await.unwrap_err();
    /// assert!(matches!(err.kind(), ExtractErrorKind::Check { .. }));
    /// # Ok::<(), llm_extract::ExtractError>(())
    /// # }).unwrap();
    /// ```
    pub fn check_async<F, Fut>(mut self, check: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<Issues, CheckError>> + Send + 'static,
    {
        self.checks.push_async(check);
        self
    }

    /// Adds an asynchronous check, as [`Extractor::check_async`], that also reads the variables of
    /// the input the value was extracted from ([`Context`]: `text` among them; for a chunk of a
    /// document, `text` is the chunk's): "this value is copied from the text", or an outside checker
    /// given the text.
    ///
    /// ```
    /// use llm_extract::check::Issues;
    /// use llm_extract::llm::{from_fn, ChatResponse};
    /// use llm_extract::schema::SchemaSet;
    /// use llm_extract::Extractor;
    /// use serde_json::json;
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let schema = SchemaSet::new("Person", json!({
    ///     "type": "object",
    ///     "properties": {"name": {"type": "string"}},
    ///     "required": ["name"],
    ///     "additionalProperties": false
    /// }));
    /// let answers = std::sync::Mutex::new(vec![r#"{"name": "[Your Name]"}"#]);
    /// let llm = from_fn(move |_request| {
    ///     let answer = answers.lock().unwrap().pop().unwrap_or(r#"{"name": "Ada"}"#);
    ///     async move { Ok(ChatResponse::new(answer)) }
    /// });
    /// let out = Extractor::new(llm)
    ///     .check_async_in_context(|value, context| async move {
    ///         let mut issues = Issues::new();
    ///         let text = context["text"].as_str().unwrap_or_default();
    ///         if !text.contains(value["name"].as_str().unwrap_or_default()) {
    ///             issues.hard("/name", "copy the name from the text");
    ///         }
    ///         Ok(issues)
    ///     })
    ///     .with_schema(&schema)
    ///     .extract("Ada wrote the first program.")
    ///     .await?;
    /// assert_eq!(out.value["name"], "Ada");
    /// assert_eq!(out.report.attempts.len(), 2);
    /// # Ok::<(), llm_extract::ExtractError>(())
    /// # }).unwrap();
    /// ```
    pub fn check_async_in_context<F, Fut>(mut self, check: F) -> Self
    where
        F: Fn(Value, std::sync::Arc<Context>) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<Issues, CheckError>> + Send + 'static,
    {
        self.checks.push_async_in_context(check);
        self
    }

    /// How many answers each request gets, merged by vote (self-consistency; default 1, one answer).
    ///
    /// Answer 0 has this extractor's own temperature and seed (greedy by default); answer `i` is
    /// sampled at the extractor's temperature when one above 0 is set, else at
    /// [`SAMPLE_TEMPERATURE`](crate::extract::SAMPLE_TEMPERATURE) (0.3), with seed `seed + i`. The answers are
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
    /// [`Report::agreement`](crate::report::Report::agreement) gives, for each leaf, the share of the valid
    /// answers that agree with it; [`Report::usage`](crate::report::Report::usage) sums every answer's tokens, and
    /// [`Report::attempts`](crate::report::Report::attempts) lists every answer's attempts in answer order.
    ///
    /// Applies to `extract` and `extract_all` (and their [`with_schema`](Extractor::with_schema) forms) (the items of
    /// each answer merged on keys first, then the lists voted). Streams, partial values and documents
    /// take one answer per request: they hand values on as they arrive, before the others exist.
    ///
    /// ```
    /// use llm_extract::llm::{from_fn, ChatResponse};
    /// use llm_extract::schema::SchemaSet;
    /// use llm_extract::Extractor;
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
    /// let out = Extractor::new(llm).samples(3).with_schema(&schema).extract("Ada, born 1815.").await?;
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

    /// Asks the backend for token log-probabilities and gives each leaf value of the answer a
    /// confidence in [`Report::confidence`](crate::Report::confidence), by JSON pointer, computed by
    /// `rule` ([`ConfidenceRule::default`] is the best calibrated on the project's evaluation set). The
    /// embedded engine, OpenAI-compatible servers and Gemini give log-probabilities; Anthropic and
    /// Ollama do not, and then the map stays empty and [`Report::no_logprobs`](crate::Report::no_logprobs)
    /// is set. Default: off.
    ///
    /// Every extraction reports it: [`extract`](Extractor::extract) and
    /// [`extract_partial`](Extractor::extract_partial) for the final value (in the report of
    /// [`PartialEvent::Final`](crate::extract::PartialEvent::Final); snapshots carry none);
    /// [`extract_all`](Extractor::extract_all) and [`extract_stream`](Extractor::extract_stream) for
    /// each item, from its position (`/0/name`; a stream's items are `T` and carry none: the
    /// stream's report, or its error's, has theirs in the order they were yielded); documents in
    /// [`Document::confidence`](crate::extract::Document::confidence), by merged item, and in each
    /// [`DocumentEvent::Chunk`](crate::extract::DocumentEvent::Chunk) for its new items. The tokens come with
    /// the end of an answer: an answer stopped before it (at [`max_items`](Extractor::max_items), at a
    /// loop) gives its values none.
    pub fn confidence(mut self, rule: ConfidenceRule) -> Self {
        self.config.confidence = Some(rule);
        self
    }

    /// Returns one value whose hard issues (from checks) outlast the attempts instead of failing:
    /// every issue its checks found is in [`Report::issues`](crate::Report::issues) as a soft one, so
    /// the value arrives marked doubtful rather than lost (default `false`: such a value is
    /// [`ExtractErrorKind::Invalid`](crate::extract::ExtractErrorKind::Invalid), carrying
    /// [`ParseError::Check`](crate::ParseError)). For one value ([`Extractor::extract`] and its
    /// runtime-schema twin), without [`Extractor::samples`]; a value that breaks its schema is never
    /// returned. A small model often cannot mend what a check finds: this keeps its answer, flagged.
    pub fn keep_doubtful(mut self, keep: bool) -> Self {
        self.config.keep_doubtful = keep;
        self
    }

    /// How one value ([`Extractor::extract`] and its runtime-schema twin) is asked for: in one answer
    /// ([`Strategy::OneAnswer`](crate::extract::Strategy::OneAnswer), the default), or one short question per
    /// field ([`Strategy::PerField`](crate::extract::Strategy::PerField)): strings copied from the text, enums
    /// and booleans chosen by likelihood, numbers and dates copied and read by code. What each field
    /// cost is in [`Report::fields`](crate::Report::fields), a choice's probability in
    /// [`Report::confidence`](crate::Report::confidence). Lists, streams and documents take one answer
    /// either way; [`Extractor::samples`] does not apply to the per-field strategy.
    ///
    /// ```
    /// use llm_extract::extract::{Extractor, Strategy};
    /// use llm_extract::llm::{from_fn, ChatResponse};
    /// use llm_extract::Extract;
    ///
    /// #[derive(Extract, serde::Deserialize, Debug)]
    /// struct Invoice {
    ///     /// The invoice's number.
    ///     number: String,
    ///     /// The total amount.
    ///     total: f64,
    /// }
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// // A stand-in model that copies the span each question asks for.
    /// let llm = from_fn(|request| async move {
    ///     let question = &request.messages.last().unwrap().content;
    ///     let answer = if question.contains("number") { "INV-7" } else { "1,250.00 EUR" };
    ///     Ok(ChatResponse::new(format!(r#"{{"answer": "{answer}"}}"#)))
    /// });
    /// let text = "Invoice INV-7: 1,250.00 EUR.";
    /// let out = Extractor::new(llm).strategy(Strategy::PerField).extract::<Invoice>(text).await?;
    /// assert_eq!(out.value.number, "INV-7");
    /// assert_eq!(out.value.total, 1250.0);
    /// assert_eq!(out.report.fields.len(), 2);
    /// # Ok::<(), llm_extract::extract::ExtractError>(())
    /// # }).unwrap();
    /// ```
    pub fn strategy(mut self, strategy: crate::extract::Strategy) -> Self {
        self.config.strategy = strategy;
        self
    }

    /// The per-field strategy's question for the field at `path` (a JSON pointer: `/customer`; an item's
    /// field without its position: `/lines/price`), instead of the one made from its name, description
    /// and examples (`x-question` in a schema does the same from the schema).
    pub fn question(mut self, path: impl Into<String>, question: impl Into<String>) -> Self {
        self.config.questions.insert(path.into(), question.into());
        self
    }

    /// Every leaf value whose confidence is under `threshold` (in `[0, 1]`) becomes a soft issue at its
    /// path in [`Report::issues`](crate::Report::issues) (for items, with the item's position; for a
    /// document, in [`Document::issues`](crate::extract::Document::issues), by merged item). Turns confidence on
    /// with the default rule unless [`Extractor::confidence`] chose one.
    pub fn min_confidence(mut self, threshold: f32) -> Self {
        self.config
            .confidence
            .get_or_insert_with(ConfidenceRule::default);
        self.config.min_confidence = Some(threshold);
        self
    }

    /// Whether an item whose grounded value is still nowhere in the text after the repairs is dropped
    /// (`true`; it stays in [`Report::skipped`](crate::report::Report::skipped)) or kept with a
    /// [`MatchKind::NotFound`](crate::ground::MatchKind::NotFound) span (`false`, the default).
    ///
    /// With `true`, [`Extractor::extract_all`] and [`Extractor::extract_stream`] (typed or through
    /// [`Extractor::with_schema`]) ground too: a type's grounded values are found in the input's `text`
    /// variable and the items whose values are not are re-asked, then dropped (without a `text` variable
    /// nothing is grounded).
    pub fn require_grounding(mut self, require: bool) -> Self {
        self.config.require_grounding = require;
        self
    }

    /// The largest chunk of a document, in bytes (default
    /// [`DEFAULT_CHUNK_BYTES`](crate::extract::DEFAULT_CHUNK_BYTES); at least 64). Choose it so that the
    /// instructions, the chunk and the answer fit the model's context.
    pub fn chunk_bytes(mut self, bytes: usize) -> Self {
        self.config.document.chunk_bytes = bytes;
        self
    }

    /// The largest chunk of a document, in tokens of the backend's model: with a backend that counts
    /// tokens with the model's own tokenizer ([`Llm::count_tokens`], the embedded engine), every chunk
    /// is at most this many tokens; with another, chunks are [`BYTES_PER_TOKEN`](crate::extract::BYTES_PER_TOKEN)
    /// bytes per token. It replaces [`Extractor::chunk_bytes`] (default: unset).
    pub fn chunk_tokens(mut self, tokens: usize) -> Self {
        self.config.document.chunk_tokens = Some(tokens.max(1));
        self
    }

    /// How many bytes each chunk repeats of the one before (default a tenth of the chunk size; at most
    /// a quarter).
    pub fn chunk_overlap(mut self, bytes: usize) -> Self {
        self.config.document.overlap = Some(bytes);
        self
    }

    /// How many times a document is read (default 1). Each later pass moves the chunk boundaries and
    /// adds only items with new identities; copies merge into the items already found.
    pub fn passes(mut self, passes: u32) -> Self {
        self.config.document.passes = passes.max(1);
        self
    }

    /// How many chunks of a document are extracted at once (default 1).
    pub fn concurrency(mut self, chunks: usize) -> Self {
        self.config.document.concurrency = chunks.max(1);
        self
    }

    /// Whether each attempt's span (`extract_attempt`) carries what was said, as the OpenTelemetry
    /// GenAI conventions' opt-in attributes (default `false`: no message content is ever recorded):
    /// `gen_ai.system_instructions`, `gen_ai.input.messages` and `gen_ai.output.messages`, JSON text
    /// of parts by role, an image or PDF summarised by its kind, MIME type, size and SHA-256 (never
    /// its bytes), no key anywhere. The prompt holds the document, so a trace then holds it too:
    /// turn it on where the traces may keep what the documents say.
    ///
    /// ```
    /// use llm_extract::extract::Extractor;
    /// use llm_extract::llm::{from_fn, ChatResponse};
    ///
    /// let llm = from_fn(|_| async { Ok(ChatResponse::new("{}")) });
    /// let extractor = Extractor::new(llm).trace_content(true);
    /// # let _ = extractor;
    /// ```
    pub fn trace_content(mut self, on: bool) -> Self {
        self.config.trace_content = on;
        self
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
