//! Telemetry: the `tracing` spans of an extraction and of each of its attempts, with the attributes of
//! the OpenTelemetry GenAI semantic conventions as fields (plus ours), and the one place the loop asks
//! the backend ([`chat`], [`chat_stream`]) that fills them in.
//!
//! The attempt span (`extract_attempt`) carries `otel.name` = `{gen_ai.operation.name}
//! {gen_ai.request.model}` (an OpenTelemetry bridge names the span by it), `otel.kind` = `client`,
//! `gen_ai.operation.name` (`chat`), `gen_ai.provider.name`, `server.address`,
//! `gen_ai.request.model`, `.temperature`, `.max_tokens`, `.seed`, `gen_ai.response.model`,
//! `.finish_reasons`, `gen_ai.usage.input_tokens`, `.output_tokens`, `.cache_read.input_tokens`,
//! `.cache_creation.input_tokens` (when the provider counted its prompt cache), `error.type`, and ours: `schema`,
//! `number`, `kind` (the attempt kind), `items`, `finish`, `prompt_tokens`, `completion_tokens`,
//! `llm_extract.cache_hit` (`true` when a response cache answered), and for an answer that came
//! through a provider's batch API (`batch`), `llm_extract.batch_id` (the job's id) and
//! `llm_extract.batch_request` (the request's `custom_id`).
//! The extraction span (`extract`) carries the schema, the backend's provider, address and model, and
//! once it ends `llm_extract.attempts`, `llm_extract.repairs`, `llm_extract.validation_errors`, the
//! usage in total (prompt cache tokens included) and `error.type`.
//!
//! No message content is recorded unless the extractor was asked to
//! ([`Extractor::trace_content`](crate::extract::Extractor::trace_content)): then the attempt span also carries
//! the opt-in attributes of the conventions, as JSON text in their shape: `gen_ai.system_instructions`
//! (the system prompt's parts), `gen_ai.input.messages` (each message sent, its role and parts) and
//! `gen_ai.output.messages` (the answer, its reasoning, and its finish reason). A text is a
//! `{"type": "text", "content": ...}` part; an image or PDF sent as bytes is summarised, never sent
//! on: `{"type": "media", "modality": "image"|"document", "mime_type", "size", "sha256"}`, one sent by
//! URL is a `{"type": "uri", ...}` part with the URL's credentials redacted. The answer is recorded
//! when it ends; one the extraction stopped reading (a loop, `max_items`) has none.
//!
//! No key is recorded: the address is the backend's [`describe`](crate::llm::Llm::describe),
//! credentials redacted, and a message holds what the prompt says, not how the backend signs in.

use crate::extract::error::{ExtractError, ExtractErrorKind};
use crate::llm::{
    ChatEvent, ChatRequest, ChatResponse, ChatStream, Llm, LlmError, Media, MediaSource, Message,
    Role,
};
use crate::parse::{ParseError, SkipReason};
use crate::report::{AttemptError, AttemptKind, Report};
use futures_util::StreamExt;
use serde_json::{json, Value};
use tracing::field::Empty;
use tracing::Span;

/// The span of one attempt: request `number` of the extraction of `schema` by `llm`, of `kind`. Its
/// `otel.name` is set here, from the model `llm` describes, because an OpenTelemetry bridge names a
/// span when it is first entered (a fallback's backend that answers is recorded later, in the
/// attributes).
pub(crate) fn attempt_span(llm: &dyn Llm, schema: &str, number: u32, kind: AttemptKind) -> Span {
    let name = match llm.describe().and_then(|d| d.model) {
        Some(model) => format!("chat {model}"),
        None => "chat".to_owned(),
    };
    tracing::info_span!(
        "extract_attempt",
        schema,
        number,
        kind = %kind,
        items = Empty,
        finish = Empty,
        prompt_tokens = Empty,
        completion_tokens = Empty,
        llm_extract.cache_hit = Empty,
        otel.name = name.as_str(),
        otel.kind = "client",
        gen_ai.operation.name = "chat",
        gen_ai.provider.name = Empty,
        server.address = Empty,
        gen_ai.request.model = Empty,
        gen_ai.request.temperature = Empty,
        gen_ai.request.max_tokens = Empty,
        gen_ai.request.seed = Empty,
        gen_ai.response.model = Empty,
        gen_ai.response.finish_reasons = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.usage.cache_read.input_tokens = Empty,
        gen_ai.usage.cache_creation.input_tokens = Empty,
        gen_ai.system_instructions = Empty,
        gen_ai.input.messages = Empty,
        gen_ai.output.messages = Empty,
        llm_extract.batch_id = Empty,
        llm_extract.batch_request = Empty,
        error.type = Empty,
    )
}

/// The span of one extraction of `schema` by `llm`.
pub(crate) fn extraction_span(llm: &dyn Llm, schema: &str) -> Span {
    let described = llm.describe();
    let span = tracing::info_span!(
        "extract",
        schema,
        otel.name = %format_args!("extract {schema}"),
        gen_ai.provider.name = Empty,
        server.address = Empty,
        gen_ai.request.model = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.usage.cache_read.input_tokens = Empty,
        gen_ai.usage.cache_creation.input_tokens = Empty,
        llm_extract.attempts = Empty,
        llm_extract.repairs = Empty,
        llm_extract.validation_errors = Empty,
        error.type = Empty,
    );
    if let Some(described) = described {
        described.record_backend(&span);
    }
    span
}

/// Records how an extraction ended on its span: from its report, and what failed if it did.
pub(crate) fn ended(span: &Span, result: Result<&Report, &ExtractError>) {
    match result {
        Ok(report) => extraction_ended(span, report, None),
        Err(err) => extraction_ended(span, err.report(), Some(error_type(err.kind()))),
    }
}

/// A failed extraction's `error.type`: a backend's failure by its class, the others by their kind.
fn error_type(kind: &ExtractErrorKind) -> &'static str {
    match kind {
        ExtractErrorKind::Llm(err) => err.class().name(),
        ExtractErrorKind::Invalid(_) => "invalid",
        ExtractErrorKind::Truncated(_) => "truncated",
        ExtractErrorKind::Loop(_) => "loop",
        ExtractErrorKind::Budget { .. } => "budget",
        ExtractErrorKind::Check { .. } => "check",
        _ => "other",
    }
}

fn extraction_ended(span: &Span, report: &Report, error: Option<&str>) {
    let repairs = report
        .attempts
        .iter()
        .filter(|a| a.kind == AttemptKind::Repair)
        .count();
    let violations: usize = report
        .attempts
        .iter()
        .map(|a| a.error.as_ref().map_or(0, violations))
        .sum();
    span.record("llm_extract.attempts", report.attempts.len());
    span.record("llm_extract.repairs", repairs);
    span.record("llm_extract.validation_errors", violations);
    span.record("gen_ai.usage.input_tokens", report.usage.prompt_tokens);
    span.record("gen_ai.usage.output_tokens", report.usage.completion_tokens);
    cache_usage(span, &report.usage);
    if let Some(error) = error {
        span.record("error.type", error);
    }
}

/// How many problems the validation of an answer found (schema violations, or lines without an item).
fn violations(error: &AttemptError) -> usize {
    match error {
        AttemptError::Parse(ParseError::Schema { violations, .. }) => violations.len(),
        AttemptError::Parse(_) => 1,
        AttemptError::Lines(skipped) => skipped
            .iter()
            .map(|s| match &s.reason {
                SkipReason::Schema(v) | SkipReason::Check(v) => v.len().max(1),
                _ => 1,
            })
            .sum(),
        AttemptError::Llm(_) | AttemptError::Loop(_) => 0,
    }
}

/// Writes what `request` asks for, and who `llm` is, on the current (attempt) span; with `content`,
/// the messages too.
fn requested(llm: &dyn Llm, request: &ChatRequest, content: Content) -> Span {
    let span = Span::current();
    let described = llm.describe();
    if let Some(described) = &described {
        described.record(&span);
    }
    crate::llm::answered(described);
    if let Some(temperature) = request.temperature {
        span.record("gen_ai.request.temperature", f64::from(temperature));
    }
    if let Some(max_tokens) = request.max_tokens {
        span.record("gen_ai.request.max_tokens", max_tokens);
    }
    if let Some(seed) = request.seed {
        span.record("gen_ai.request.seed", seed);
    }
    if content == Content::Recorded {
        if let Some(system) = &request.system {
            let parts = Value::Array(vec![text_part(system)]);
            span.record("gen_ai.system_instructions", parts.to_string().as_str());
        }
        let messages = input_messages(&request.messages);
        span.record("gen_ai.input.messages", messages.to_string().as_str());
    }
    span
}

/// The messages of a request in the conventions' shape: each with its role and its parts (the media
/// first, as the wire forms send them, then the text).
fn input_messages(messages: &[Message]) -> Value {
    let messages = messages.iter().map(|message| {
        let role = match message.role {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        let mut parts: Vec<Value> = message.media.iter().map(media_part).collect();
        if !message.content.is_empty() || parts.is_empty() {
            parts.push(text_part(&message.content));
        }
        json!({"role": role, "parts": parts})
    });
    Value::Array(messages.collect())
}

/// The answer in the conventions' shape: one assistant message, its reasoning (if any) then its text,
/// with why it ended.
fn output_messages(response: &ChatResponse) -> Value {
    let mut parts = Vec::new();
    if let Some(thinking) = &response.thinking {
        parts.push(json!({"type": "reasoning", "content": thinking}));
    }
    parts.push(text_part(&response.text));
    json!([{
        "role": "assistant",
        "parts": parts,
        "finish_reason": response.finish.to_string(),
    }])
}

fn text_part(text: &str) -> Value {
    json!({"type": "text", "content": text})
}

/// An image or PDF as a part, without its bytes: their size and SHA-256, or its URL redacted.
fn media_part(media: &Media) -> Value {
    let kind = media.media_type();
    let modality = if kind.is_image() { "image" } else { "document" };
    let summary = media.summary();
    match media.source() {
        MediaSource::Bytes(_) => json!({
            "type": "media",
            "modality": modality,
            "mime_type": kind.as_str(),
            "size": summary.get("bytes"),
            "sha256": summary.get("sha256"),
        }),
        MediaSource::Url(_) => json!({
            "type": "uri",
            "modality": modality,
            "mime_type": kind.as_str(),
            "uri": summary.get("url"),
        }),
    }
}

/// Writes what the backend answered on `span`; with `content`, the answer too.
fn responded(span: &Span, response: &ChatResponse, content: Content) {
    if content == Content::Recorded {
        let messages = output_messages(response);
        span.record("gen_ai.output.messages", messages.to_string().as_str());
    }
    if let Some(model) = &response.model {
        span.record("gen_ai.response.model", model.as_str());
    }
    if response.cached {
        span.record("llm_extract.cache_hit", true);
    }
    span.record(
        "gen_ai.response.finish_reasons",
        response.finish.to_string().as_str(),
    );
    span.record("gen_ai.usage.input_tokens", response.usage.prompt_tokens);
    span.record(
        "gen_ai.usage.output_tokens",
        response.usage.completion_tokens,
    );
    cache_usage(span, &response.usage);
}

/// Writes the prompt tokens read from and written to the provider's prompt cache on `span`, when
/// the provider counted any.
fn cache_usage(span: &Span, usage: &crate::llm::Usage) {
    if usage.cache_read_tokens > 0 {
        span.record(
            "gen_ai.usage.cache_read.input_tokens",
            usage.cache_read_tokens,
        );
    }
    if usage.cache_write_tokens > 0 {
        span.record(
            "gen_ai.usage.cache_creation.input_tokens",
            usage.cache_write_tokens,
        );
    }
}

/// Writes the class of a backend's failure on `span` as `error.type`.
fn failed(span: &Span, err: &LlmError) {
    span.record("error.type", err.class().name());
}

/// Whether the messages of an attempt go on its span ([`Extractor::trace_content`](crate::extract::Extractor::trace_content)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Content {
    /// Nothing of what was said: the default.
    #[default]
    Omitted,
    /// The system instructions, the messages sent and the answer.
    Recorded,
}

impl Content {
    /// [`Content::Recorded`] when `on`.
    pub(crate) fn when(on: bool) -> Self {
        if on {
            Content::Recorded
        } else {
            Content::Omitted
        }
    }
}

/// Asks `llm` for the whole answer to `request`, recording it on the current span.
pub(crate) async fn chat(
    llm: &dyn Llm,
    request: ChatRequest,
    content: Content,
) -> Result<ChatResponse, LlmError> {
    let span = requested(llm, &request, content);
    let result = llm.chat(request).await;
    match &result {
        Ok(response) => responded(&span, response, content),
        Err(err) => failed(&span, err),
    }
    result
}

/// Asks `llm` to stream the answer to `request`, recording it on the current span as it arrives.
pub(crate) async fn chat_stream(
    llm: &dyn Llm,
    request: ChatRequest,
    content: Content,
) -> Result<ChatStream, LlmError> {
    let span = requested(llm, &request, content);
    match llm.chat_stream(request).await {
        Ok(stream) => Ok(Box::pin(stream.inspect(move |event| match event {
            Ok(ChatEvent::Done(done)) => responded(&span, done, content),
            Err(err) => failed(&span, err),
            Ok(_) => {}
        }))),
        Err(err) => {
            failed(&span, &err);
            Err(err)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{Finish, MediaType};

    #[test]
    fn media_are_summarised_and_urls_redacted() {
        let pdf = media_part(&Media::pdf(b"%PDF-1.7 body".to_vec()));
        assert_eq!(pdf["type"], "media");
        assert_eq!(pdf["modality"], "document");
        assert_eq!(pdf["mime_type"], "application/pdf");
        assert_eq!(pdf["size"], 13);
        assert_eq!(pdf["sha256"].as_str().map(str::len), Some(64));
        let url = "https://ada:pass-secret@example.com/scan.png?token=query-secret";
        let linked = media_part(&Media::image_url(MediaType::Png, url));
        assert_eq!(linked["type"], "uri");
        assert_eq!(linked["modality"], "image");
        let text = linked.to_string();
        assert!(text.contains("example.com/scan.png"), "{text}");
        assert!(!text.contains("secret"), "{text}");
    }

    #[test]
    fn messages_keep_their_roles_and_an_empty_answer_its_part() {
        let mut request = ChatRequest::new("the text");
        request.messages.push(Message::assistant("{}"));
        let sent = input_messages(&request.messages);
        assert_eq!(
            sent,
            json!([
                {"role": "user", "parts": [{"type": "text", "content": "the text"}]},
                {"role": "assistant", "parts": [{"type": "text", "content": "{}"}]},
            ])
        );
        let mut response = ChatResponse::new("");
        response.finish = Finish::Length;
        assert_eq!(
            output_messages(&response),
            json!([{
                "role": "assistant",
                "parts": [{"type": "text", "content": ""}],
                "finish_reason": "length",
            }])
        );
    }
}
