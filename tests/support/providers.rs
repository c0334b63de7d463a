//! The hosted providers' wire formats for the test server: Anthropic's Messages API, Gemini's
//! `generateContent`, and OpenAI tool calls. Streamed replies are cut into chunks of a few bytes, so
//! events, JSON strings and UTF-8 characters are split across TCP reads as a real network may split them.

use super::{Answer, Ending, Reply, Request, Step};
use serde_json::{json, Value};

/// Bytes per chunk of a streamed reply: small and odd, so every boundary falls somewhere awkward.
pub const CHUNK_BYTES: usize = 5;

/// `bytes` cut into chunks of [`CHUNK_BYTES`], then `ending`.
fn chunked(bytes: Vec<u8>, ending: &Ending, tail: Option<Vec<u8>>) -> Vec<Step> {
    let mut steps: Vec<Step> = bytes
        .chunks(CHUNK_BYTES)
        .map(|c| Step::Send(c.to_vec()))
        .collect();
    match ending {
        Ending::Complete => {
            if let Some(tail) = tail {
                steps.extend(tail.chunks(CHUNK_BYTES).map(|c| Step::Send(c.to_vec())));
            }
        }
        Ending::ErrorLine(_) => {
            if let Some(tail) = tail {
                steps.push(Step::Send(tail));
            }
        }
        Ending::Drop => steps.push(Step::Drop),
        Ending::Stall => steps.push(Step::Stall),
        Ending::Nothing => {}
    }
    steps
}

/// One server-sent event as Anthropic frames it: `event:` then `data:`, then a blank line.
fn anthropic_event(data: Value) -> String {
    let name = data["type"].as_str().unwrap_or("message").to_owned();
    format!("event: {name}\ndata: {data}\n\n")
}

/// Anthropic's error body.
pub fn anthropic_error(status: u16, kind: &str, message: &str) -> Reply {
    Reply::json(
        status,
        json!({"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_1"}),
    )
}

/// `answer` as Anthropic's Messages API sends it: as a tool call's `input` when the request forces a
/// tool, as text otherwise; SSE when the request streams, one message otherwise.
pub fn anthropic(request: &Request, answer: &Answer) -> Reply {
    let model = request.json["model"].as_str().unwrap_or("test").to_owned();
    let tool = request.json["tool_choice"]["name"]
        .as_str()
        .map(str::to_owned);
    let stop_reason = match (answer.length, &tool) {
        (true, _) => "max_tokens",
        (false, Some(_)) => "tool_use",
        (false, None) => "end_turn",
    };
    let usage = json!({"input_tokens": answer.prompt_tokens, "output_tokens": answer.completion_tokens,
                       "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0});
    if !request.wants_stream() {
        let mut content = Vec::new();
        if let Some(thinking) = &answer.thinking {
            content.push(json!({"type": "thinking", "thinking": thinking, "signature": "sig"}));
        }
        content.push(match &tool {
            Some(name) => {
                let input: Value = serde_json::from_str(&answer.text).unwrap_or(Value::Null);
                json!({"type": "tool_use", "id": "toolu_1", "name": name, "input": input})
            }
            None => json!({"type": "text", "text": answer.text}),
        });
        return Reply::json(
            200,
            json!({"id": "msg_1", "type": "message", "role": "assistant", "model": model,
                   "content": content, "stop_reason": stop_reason, "stop_sequence": null, "usage": usage}),
        );
    }
    let mut body = String::new();
    body.push_str(&anthropic_event(
        json!({"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": null, "usage": {"input_tokens": answer.prompt_tokens, "output_tokens": 1,
        "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}}}),
    ));
    body.push_str(&anthropic_event(json!({"type": "ping"})));
    let mut index = 0;
    if let Some(thinking) = &answer.thinking {
        body.push_str(&anthropic_event(
            json!({"type": "content_block_start", "index": 0,
            "content_block": {"type": "thinking", "thinking": ""}}),
        ));
        body.push_str(&anthropic_event(
            json!({"type": "content_block_delta", "index": 0,
            "delta": {"type": "thinking_delta", "thinking": thinking}}),
        ));
        body.push_str(&anthropic_event(
            json!({"type": "content_block_stop", "index": 0}),
        ));
        index = 1;
    }
    let start = match &tool {
        Some(name) => {
            json!({"type": "tool_use", "id": "toolu_1", "name": name, "input": {}})
        }
        None => json!({"type": "text", "text": ""}),
    };
    body.push_str(&anthropic_event(
        json!({"type": "content_block_start", "index": index, "content_block": start}),
    ));
    for (i, piece) in answer.pieces().iter().enumerate() {
        let delta = match tool {
            Some(_) => json!({"type": "input_json_delta", "partial_json": piece}),
            None => json!({"type": "text_delta", "text": piece}),
        };
        body.push_str(&anthropic_event(
            json!({"type": "content_block_delta", "index": index, "delta": delta}),
        ));
        if i == 0 {
            // An event type this client has never heard of, and a keep-alive comment.
            body.push_str("event: brand_new_event\ndata: {\"type\": \"brand_new_event\"}\n\n");
            body.push_str(": keep-alive\n\n");
        }
    }
    let tail = format!(
        "{}{}{}",
        anthropic_event(json!({"type": "content_block_stop", "index": index})),
        anthropic_event(json!({"type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": null},
            "usage": {"output_tokens": answer.completion_tokens}})),
        anthropic_event(json!({"type": "message_stop"})),
    );
    let tail = match &answer.ending {
        Ending::ErrorLine(message) => anthropic_event(
            json!({"type": "error", "error": {"type": "overloaded_error", "message": message}}),
        ),
        _ => tail,
    };
    Reply::Chunked {
        status: 200,
        content_type: super::wire::SSE.into(),
        steps: chunked(body.into_bytes(), &answer.ending, Some(tail.into_bytes())),
    }
}

/// Gemini's error body.
pub fn gemini_error(status: u16, code: &str, message: &str) -> Reply {
    Reply::json(
        status,
        json!({"error": {"code": status, "message": message, "status": code}}),
    )
}

/// Gemini's answer to a bad key: 400 `INVALID_ARGUMENT`, the reason `API_KEY_INVALID` in its details.
pub fn gemini_key_error(message: &str) -> Reply {
    Reply::json(
        400,
        json!({"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT", "details": [
            {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID",
             "domain": "googleapis.com", "metadata": {"service": "generativelanguage.googleapis.com"}}
        ]}}),
    )
}

/// One `GenerateContentResponse`.
fn gemini_response(text: &str, finish: Option<&str>, answer: &Answer) -> Value {
    let mut candidate =
        json!({"content": {"role": "model", "parts": [{"text": text}]}, "index": 0});
    let mut response = json!({"modelVersion": "gemini-test-001", "responseId": "r1"});
    if let Some(reason) = finish {
        candidate["finishReason"] = json!(reason);
        response["usageMetadata"] = json!({
            "promptTokenCount": answer.prompt_tokens,
            "candidatesTokenCount": answer.completion_tokens,
            "totalTokenCount": answer.prompt_tokens + answer.completion_tokens,
        });
    }
    response["candidates"] = json!([candidate]);
    response
}

/// `answer` as Gemini sends it: SSE events separated by CRLF pairs for `streamGenerateContent?alt=sse`,
/// one response for `generateContent`. `finish` overrides the finish reason (`SAFETY`, ...).
pub fn gemini_with(request: &Request, answer: &Answer, finish: Option<&str>) -> Reply {
    let finish = finish.unwrap_or(if answer.length { "MAX_TOKENS" } else { "STOP" });
    if request.path.contains(":generateContent") {
        return Reply::json(200, gemini_response(&answer.text, Some(finish), answer));
    }
    let mut body = String::new();
    let pieces = answer.pieces();
    let last = pieces.len().saturating_sub(1);
    if let Some(thinking) = &answer.thinking {
        let mut thought = gemini_response(thinking, None, answer);
        thought["candidates"][0]["content"]["parts"][0]["thought"] = json!(true);
        body.push_str(&format!("data: {thought}\r\n\r\n"));
    }
    let mut tail = String::new();
    for (i, piece) in pieces.iter().enumerate() {
        if i == last {
            tail = format!(
                "data: {}\r\n\r\n",
                gemini_response(piece, Some(finish), answer)
            );
        } else {
            body.push_str(&format!(
                "data: {}\r\n\r\n",
                gemini_response(piece, None, answer)
            ));
        }
    }
    if let Ending::ErrorLine(message) = &answer.ending {
        tail = format!(
            "data: {}\r\n\r\n",
            json!({"error": {"code": 503, "message": message, "status": "UNAVAILABLE"}})
        );
    }
    Reply::Chunked {
        status: 200,
        content_type: super::wire::SSE.into(),
        steps: chunked(body.into_bytes(), &answer.ending, Some(tail.into_bytes())),
    }
}

/// `answer` as Gemini sends it, finishing as the answer says.
pub fn gemini(request: &Request, answer: &Answer) -> Reply {
    gemini_with(request, answer, None)
}

/// An OpenAI SSE chunk opening a tool call to `name` (no arguments yet).
pub fn openai_tool_start(model: &str, name: &str) -> Vec<u8> {
    openai_chunk(
        model,
        json!({"role": "assistant", "content": null, "tool_calls": [{"index": 0, "id": "call_1",
               "type": "function", "function": {"name": name, "arguments": ""}}]}),
        Value::Null,
    )
}

/// An OpenAI SSE chunk carrying the next piece of a tool call's arguments.
pub fn openai_tool_delta(model: &str, arguments: &str) -> Vec<u8> {
    openai_chunk(
        model,
        json!({"tool_calls": [{"index": 0, "function": {"arguments": arguments}}]}),
        Value::Null,
    )
}

/// An OpenAI SSE chunk with a finish reason only (`tool_calls` after a forced call).
pub fn openai_tool_finish(model: &str, reason: &str) -> Vec<u8> {
    openai_chunk(model, json!({}), json!(reason))
}

fn openai_chunk(model: &str, delta: Value, finish: Value) -> Vec<u8> {
    format!(
        "data: {}\n\n",
        json!({"id": "c", "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    )
    .into_bytes()
}

/// `answer` as an OpenAI-compatible server sends a forced tool call: the arguments stream as
/// `tool_calls[0].function.arguments` pieces, then `finish_reason: "tool_calls"` and `[DONE]`.
pub fn openai_tool(request: &Request, answer: &Answer) -> Reply {
    let name = request.json["tool_choice"]["function"]["name"]
        .as_str()
        .unwrap_or("output");
    let mut body = openai_tool_start("m", name);
    for piece in answer.pieces() {
        body.extend(openai_tool_delta("m", &piece));
    }
    let finish = if answer.length {
        "length"
    } else {
        "tool_calls"
    };
    let mut tail = openai_tool_finish("m", finish);
    tail.extend(super::wire::openai_done());
    Reply::Chunked {
        status: 200,
        content_type: super::wire::SSE.into(),
        steps: chunked(body, &answer.ending, Some(tail)),
    }
}

impl Request {
    /// The text of the last part of a Gemini request's last content.
    pub fn contents_text(&self) -> String {
        self.json["contents"]
            .as_array()
            .and_then(|contents| contents.last())
            .and_then(|content| content["parts"].as_array())
            .and_then(|parts| parts.last())
            .and_then(|part| part["text"].as_str())
            .unwrap_or_default()
            .to_owned()
    }
}

/// The answer `{"name": "Ada", "age": 36}` as tokens with log-probabilities: "Ada" from two tokens
/// (-0.1 and -0.3), 36 from one (-2.0), the rest certain.
pub const ADA_TOKENS: &[(&str, f64)] = &[
    ("{\"name\": \"", 0.0),
    ("A", -0.1),
    ("da", -0.3),
    ("\", \"age\": ", 0.0),
    ("36", -2.0),
    ("}", 0.0),
];

/// `tokens` (each with its log-probability) streamed as OpenAI-compatible chunks.
pub fn openai_tokens(tokens: &[(&str, f64)]) -> Reply {
    let mut steps = Vec::new();
    for (token, logprob) in tokens {
        let chunk = json!({"id": "c", "model": "m", "choices": [{"index": 0,
            "delta": {"content": token}, "finish_reason": null,
            "logprobs": {"content": [{"token": token, "logprob": logprob, "bytes": token.as_bytes()}]}}]});
        steps.push(Step::Send(format!("data: {chunk}\n\n").into_bytes()));
    }
    let finish = json!({"id": "c", "model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]});
    steps.push(Step::Send(format!("data: {finish}\n\n").into_bytes()));
    steps.push(Step::Send(b"data: [DONE]\n\n".to_vec()));
    Reply::Chunked {
        status: 200,
        content_type: super::wire::SSE.into(),
        steps,
    }
}
