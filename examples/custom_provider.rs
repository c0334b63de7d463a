//! A provider of your own, without forking: a small wire form written as a [`Protocol`] and sent
//! through [`HttpBackend`], which brings what the built-in providers have (timeouts, retries, the key's
//! rules, redirects kept within the origin, keys redacted from errors and exchanges, media checked
//! before sending).
//!
//! The wire form here ("lines") is a `POST {base}/generate` with the conversation and the schema in
//! `format`; a whole answer is `{"output", "stop", "usage": {"in", "out"}}`, a streamed one NDJSON
//! lines `{"delta": "..."}` ending with `{"stop", "usage"}`. So that the example runs anywhere without
//! a key, it starts a local server of that form on 127.0.0.1, whose "model" is a few lines of rules
//! reading a name and an age from the text.
//!
//! ```text
//! cargo run --example custom_provider
//! ```

use llm_extract::extract::Extractor;
use llm_extract::llm::{
    Answer, ChatRequest, ChatResponse, Exchange, ExchangeHook, Finish, Framing, HttpBackend,
    LlmError, MediaLimits, MediaSupport, OfficialApi, Protocol, Site, StreamReader, Usage,
};
use llm_extract::schema::Dialect;
use llm_extract::Extract;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

/// The "lines" wire form.
#[derive(Debug, Clone, Default)]
struct Lines;

impl Protocol for Lines {
    const NAME: &'static str = "lines";
    const FRAMING: Framing = Framing::Ndjson;
    // Its own API would get `LINES_API_KEY` unasked; any other server only a key named for it.
    const API: Option<OfficialApi> = Some(OfficialApi::new(
        "api.lines.example",
        "LINES_API_KEY",
        false,
    ));
    const KEY_HEADER: Option<&'static str> = Some("x-lines-key");
    const CONNECT_HINT: &'static str = "is the lines server running? Check the base URL";
    type Stream = LinesStream;
    const MEDIA: MediaSupport = MediaSupport::none("lines", "the lines API reads text only");
    const MEDIA_LIMITS: MediaLimits = MediaLimits::none();
    const LOGPROBS: bool = false;
    const MODEL_HINT: &'static str = "check the model name at {base}";
    const ENDPOINT_HINT: &'static str = "is {base} the API root?";

    fn dialect(&self) -> Dialect {
        Dialect::Generic
    }

    fn endpoint(&self, site: &Site, _stream: bool) -> String {
        site.url("/generate")
    }

    fn body(&self, site: &Site, request: &ChatRequest, stream: bool) -> Result<Value, LlmError> {
        let messages: Vec<Value> = request
            .messages
            .iter()
            .map(|m| json!({"role": m.role, "text": m.content}))
            .collect();
        Ok(json!({
            "model": site.model,
            "system": request.system,
            "messages": messages,
            "format": request.schema,
            "max_tokens": request.max_tokens,
            "stream": stream,
        }))
    }

    fn read(&self, answer: &Value) -> Result<ChatResponse, LlmError> {
        let Some(text) = answer["output"].as_str() else {
            return Err(LlmError::InvalidResponse {
                message: "the answer has no \"output\"".into(),
                body: answer.to_string(),
            });
        };
        let mut response = ChatResponse::new(text).with_finish(finish(&answer["stop"]));
        response.usage = usage(answer);
        Ok(response)
    }
}

/// One streamed "lines" answer, line by line.
#[derive(Default)]
struct LinesStream;

impl StreamReader for LinesStream {
    const UNFINISHED: &'static str = "no line with \"stop\"";

    fn event(&mut self, data: &str, answer: &mut Answer) -> Result<(), LlmError> {
        let line: Value = serde_json::from_str(data).map_err(|e| LlmError::InvalidResponse {
            message: format!("a line of the stream is not JSON ({e})"),
            body: data.to_owned(),
        })?;
        if let Some(delta) = line["delta"].as_str() {
            answer.text(delta);
        }
        if !line["stop"].is_null() {
            answer.finish = Some(finish(&line["stop"]));
            answer.usage = usage(&line);
            answer.done();
        }
        Ok(())
    }
}

fn finish(stop: &Value) -> Finish {
    match stop.as_str() {
        Some("limit") => Finish::Length,
        _ => Finish::Stop,
    }
}

fn usage(value: &Value) -> Usage {
    Usage {
        prompt_tokens: value["usage"]["in"].as_u64().unwrap_or(0),
        completion_tokens: value["usage"]["out"].as_u64().unwrap_or(0),
        ..Usage::default()
    }
}

#[derive(Extract, Deserialize, Debug)]
struct Person {
    /// The person's full name.
    name: String,
    /// Age in years.
    age: u32,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let base = serve_lines().await?;
    let llm = HttpBackend::builder(Lines, base, "lines-small")
        .on_exchange(ExchangeHook::new(|exchange: &Exchange| {
            eprintln!(
                "exchange: {} {} -> {:?}",
                exchange.method, exchange.url, exchange.status
            );
        }))
        .build()?;
    let out = Extractor::new(&llm)
        .extract::<Person>("Ada Lovelace was 36 when she died in London.")
        .await?;
    println!("{} is {}", out.value.name, out.value.age);
    println!(
        "{} attempt(s), {} tokens, answered by {}",
        out.report.attempts.len(),
        out.report.usage.total(),
        out.report.attempts[0]
            .backend
            .as_ref()
            .map_or("?".to_owned(), ToString::to_string)
    );
    Ok(())
}

/// Starts the local "lines" server and returns its API root.
async fn serve_lines() -> std::io::Result<String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}/v1", listener.local_addr()?);
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let _ = answer(socket).await;
            });
        }
    });
    Ok(base)
}

/// Reads one HTTP/1.1 request and answers it in the "lines" form.
async fn answer(socket: tokio::net::TcpStream) -> std::io::Result<()> {
    let mut reader = BufReader::new(socket);
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).await? == 0 || line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut body = vec![0; length.min(1 << 20)];
    reader.read_exact(&mut body).await?;
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let text = request["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["text"].as_str())
        .unwrap_or_default();
    let output = model(text).to_string();
    let used = json!({"in": text.len() / 4, "out": output.len() / 4});
    let (content_type, payload) = if request["stream"] == json!(true) {
        let mut lines: String = output
            .as_bytes()
            .chunks(6)
            .map(|piece| format!("{}\n", json!({"delta": String::from_utf8_lossy(piece)})))
            .collect();
        lines.push_str(&format!("{}\n", json!({"stop": "end", "usage": used})));
        ("application/x-ndjson", lines)
    } else {
        let whole = json!({"output": output, "stop": "end", "usage": used});
        ("application/json", whole.to_string())
    };
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        payload.len()
    );
    let socket = reader.get_mut();
    socket.write_all(head.as_bytes()).await?;
    socket.write_all(payload.as_bytes()).await?;
    socket.shutdown().await
}

/// The server's "model": the words that start with capitals before the first number, and the number.
fn model(text: &str) -> Value {
    let words: Vec<&str> = text.split_whitespace().collect();
    let age = words.iter().find_map(|w| {
        w.trim_matches(|c: char| !c.is_ascii_digit())
            .parse::<u32>()
            .ok()
    });
    let name: Vec<&str> = words
        .iter()
        .take_while(|w| !w.starts_with(|c: char| c.is_ascii_digit()))
        .filter(|w| w.starts_with(char::is_uppercase))
        .copied()
        .collect();
    json!({"name": name.join(" "), "age": age})
}
