//! A local model server backed by the embedded engine: Ollama's `/api/chat` (NDJSON) and OpenAI's
//! `/v1/chat/completions` (SSE), each answered by running a real [`LlamaCpp`] on the request.
//!
//! What a wire request asks is honoured as a server would: the messages, the schema (`format` /
//! `response_format.json_schema.schema`, constraining the real decoding), `temperature`, `seed`, the token
//! limit (`num_predict` / `max_tokens` / `max_completion_tokens`), `stop`, and the repeat penalty
//! (Ollama's `options.repeat_penalty`; llama-server's `repeat_penalty`, else OpenAI's `frequency_penalty`
//! `f` read as the multiplicative penalty `1 + f`, the inverse of what `OpenAiCompatible` sends). A
//! streamed generation ends at the next token once the client has gone: the connection's writer drops
//! the channel, the next piece cannot be sent, and the engine is told to stop.
//!
//! Tool calls are answered as llama-server and OpenAI answer them. A request whose `tool_choice` forces a
//! function (`{"type": "function", "function": {"name"}}` naming one of its `tools`, or `"required"` with
//! exactly one tool) is decoded under that function's `parameters` schema, and the answer comes back as
//! the call: `message.tool_calls[0]` = `{id, type: "function", function: {name, arguments}}` with
//! `content: null` and `finish_reason: "tool_calls"` (`"length"` when cut off); streamed, the first chunk's
//! `delta.tool_calls[0]` carries `index`, `id`, `type` and the name with empty arguments, and each later
//! chunk a piece of `function.arguments`. With `tool_choice` `"auto"`, `"none"` or absent the answer is
//! text, as without tools (this engine cannot choose between a call and a reply). A `tool_choice` naming
//! no tool of the request is a 400. [`EngineServer::start_without_tools`] starts a server that ignores
//! `tools` and `tool_choice` altogether and always answers in text, as a server without tool support does.
//!
//! Every generation's outcome (tokens generated, finish, whether the client left first, the function it
//! was sent as a call of) is recorded in [`EngineServer::served`], so a test can check the model stopped,
//! not only the client, and how the answer went out.
//!
//! ```ignore
//! let server = EngineServer::start(model().clone());
//! let llm = llm_extract::OpenAiCompatible::new(server.url(), "smollm2")?;
//! ```

use super::providers::{openai_tool_delta, openai_tool_start};
use super::{wire, Reply, Request, Step, TestServer};
use llm_extract::llm::llama_cpp::LlamaCpp;
use llm_extract::llm::Message;
use llm_extract::llm::{ChatRequest, Finish};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};

/// What one generation cost and how it ended, as the server saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct Served {
    /// The request's number in order of arrival, from 0.
    pub index: usize,
    /// The endpoint, `/api/chat` or `/v1/chat/completions`.
    pub path: String,
    /// The request as the engine ran it (penalty, temperature, seed, token limit).
    pub request: ChatRequest,
    /// Tokens the engine generated.
    pub completion_tokens: u64,
    /// Why the engine stopped (`Stop` also when the client left).
    pub finish: Finish,
    /// Whether the client closed the connection before the answer ended.
    pub client_left: bool,
    /// The function the answer was sent as a call of (its `parameters` constrained the decoding, and
    /// `request.tool_call` is set); `None` when it was sent as text content.
    pub tool_call: Option<String>,
}

type Log = Arc<(Mutex<Vec<Served>>, Condvar)>;

/// A running engine-backed server; dropping it stops the server.
pub struct EngineServer {
    server: TestServer,
    log: Log,
}

impl EngineServer {
    /// Starts a server answering both chat endpoints with `llm`, honouring forced tool calls.
    pub fn start(llm: LlamaCpp) -> EngineServer {
        Self::start_with(llm, true)
    }

    /// Starts a server like [`EngineServer::start`] that knows nothing of tools: `tools` and
    /// `tool_choice` are ignored and every answer is text content, as from a server without tool support.
    pub fn start_without_tools(llm: LlamaCpp) -> EngineServer {
        Self::start_with(llm, false)
    }

    fn start_with(llm: LlamaCpp, tools: bool) -> EngineServer {
        let log: Log = Arc::new((Mutex::new(Vec::new()), Condvar::new()));
        let recorded = Arc::clone(&log);
        let arrived = AtomicUsize::new(0);
        let server = TestServer::start(move |http| {
            let index = arrived.fetch_add(1, Ordering::SeqCst);
            answer(&llm, http, index, &recorded, tools)
        });
        EngineServer { server, log }
    }

    /// `http://127.0.0.1:port`.
    pub fn url(&self) -> String {
        self.server.url()
    }

    /// Every request received so far, as sent.
    pub fn requests(&self) -> Vec<Request> {
        self.server.requests()
    }

    /// The generations that have ended, in order of their requests' arrival, once there are at least
    /// `count` (blocks the calling thread until then: a streamed generation finishes on its own thread,
    /// possibly just after its client has moved on).
    pub fn served(&self, count: usize) -> Vec<Served> {
        let (lock, ended) = &*self.log;
        let mut served = lock.lock().unwrap();
        while served.len() < count {
            served = ended.wait(served).unwrap();
        }
        let mut served = served.clone();
        served.sort_by_key(|s| s.index);
        served
    }
}

fn record(log: &Log, served: Served) {
    let (lock, ended) = &**log;
    lock.lock().unwrap().push(served);
    ended.notify_all();
}

/// What a wire request asks of the engine.
struct Wanted {
    request: ChatRequest,
    stream: bool,
    usage_chunk: bool,
    /// The function the answer is to be a call of; `None`: the answer is text.
    tool: Option<String>,
}

fn messages_of(json: &Value) -> ChatRequest {
    let mut request = ChatRequest::default();
    for message in json["messages"].as_array().into_iter().flatten() {
        let mut content = message["content"].as_str().unwrap_or_default().to_owned();
        // An assistant turn that was a tool call is shown to the model as the call's arguments.
        for call in message["tool_calls"].as_array().into_iter().flatten() {
            content.push_str(call["function"]["arguments"].as_str().unwrap_or_default());
        }
        match message["role"].as_str() {
            Some("system") => request.system = Some(content),
            Some("assistant") => request.messages.push(Message::assistant(content)),
            _ => request.messages.push(Message::user(content)),
        }
    }
    request
}

fn common_options(request: &mut ChatRequest, options: &Value) {
    request.temperature = options["temperature"].as_f64().map(|t| t as f32);
    request.seed = options["seed"].as_u64();
    request.repeat_penalty = options["repeat_penalty"].as_f64().map(|p| p as f32);
    request.stop = options["stop"]
        .as_array()
        .map(|s| {
            s.iter()
                .filter_map(|s| s.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
}

/// Ollama's `/api/chat` body: `format` is the schema, `options.num_predict` the token limit.
fn from_ollama(http: &Request) -> Wanted {
    let mut request = messages_of(&http.json);
    common_options(&mut request, &http.json["options"]);
    request.max_tokens = http.json["options"]["num_predict"]
        .as_u64()
        .map(|n| n as u32);
    if http.json["format"].is_object() {
        request.schema = Some(http.json["format"].clone());
    }
    Wanted {
        request,
        stream: http.wants_stream(),
        usage_chunk: false,
        tool: None,
    }
}

/// The function a request forces its answer into, with its `parameters` schema: `tool_choice` naming one
/// of `tools`, or `"required"` with exactly one tool. `Ok(None)` for `"auto"`, `"none"` or no choice (the
/// answer is text); an error message for a choice the server cannot honour.
fn forced_tool(json: &Value) -> Result<Option<(String, Value)>, String> {
    let tools = json["tools"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let chosen = match &json["tool_choice"] {
        Value::String(choice) if choice == "required" => match tools {
            [one] => &one["function"],
            _ => {
                return Err(format!(
                    "tool_choice \"required\" with {} tools: this server forces exactly one",
                    tools.len()
                ))
            }
        },
        Value::Object(choice) => {
            let name = choice
                .get("function")
                .and_then(|f| f["name"].as_str())
                .ok_or("tool_choice names no function (expected {\"type\": \"function\", \"function\": {\"name\": ...}})")?;
            tools
                .iter()
                .map(|tool| &tool["function"])
                .find(|function| function["name"] == name)
                .ok_or_else(|| {
                    format!("tool_choice names {name:?}, which is not one of the request's tools")
                })?
        }
        _ => return Ok(None),
    };
    let name = chosen["name"]
        .as_str()
        .ok_or("the chosen tool has no function name")?;
    let parameters = match &chosen["parameters"] {
        Value::Null => json!({"type": "object"}),
        parameters => parameters.clone(),
    };
    Ok(Some((name.to_owned(), parameters)))
}

/// OpenAI's `/v1/chat/completions` body: `response_format.json_schema.schema` is the schema, or a forced
/// tool's `parameters` when `tools` are honoured (an error message for a tool choice it cannot honour).
fn from_openai(http: &Request, tools: bool) -> Result<Wanted, String> {
    let json = &http.json;
    let mut request = messages_of(json);
    common_options(&mut request, json);
    if request.repeat_penalty.is_none() {
        request.repeat_penalty = json["frequency_penalty"]
            .as_f64()
            .filter(|f| *f != 0.0)
            .map(|f| (1.0 + f) as f32);
    }
    request.max_tokens = json["max_tokens"]
        .as_u64()
        .or(json["max_completion_tokens"].as_u64())
        .map(|n| n as u32);
    let schema = &json["response_format"]["json_schema"]["schema"];
    if schema.is_object() {
        request.schema = Some(schema.clone());
    }
    let tool = if tools { forced_tool(json)? } else { None };
    let tool = tool.map(|(name, parameters)| {
        request = std::mem::take(&mut request).with_schema(name.clone(), parameters);
        request.tool_call = true;
        name
    });
    Ok(Wanted {
        request,
        stream: http.wants_stream(),
        usage_chunk: json["stream_options"]["include_usage"] == Value::Bool(true),
        tool,
    })
}

/// The finish reason on the wire: `length` when cut off, else `tool_calls` after a call, `stop` after text.
fn reason(finish: &Finish, tool: bool) -> &'static str {
    match (finish, tool) {
        (Finish::Length, _) => "length",
        (_, true) => "tool_calls",
        (_, false) => "stop",
    }
}

/// A non-streamed OpenAI message: the text as content, or as the arguments of a call to `tool`.
fn openai_message(text: &str, tool: Option<&str>) -> Value {
    match tool {
        Some(name) => json!({"role": "assistant", "content": null, "tool_calls": [{
            "id": "call_1", "type": "function", "function": {"name": name, "arguments": text}}]}),
        None => json!({"role": "assistant", "content": text}),
    }
}

fn answer(llm: &LlamaCpp, http: &Request, index: usize, log: &Log, tools: bool) -> Reply {
    let ollama = match http.path.as_str() {
        "/api/chat" => true,
        "/v1/chat/completions" => false,
        other => return Reply::text(404, format!("no route {other}")),
    };
    let wanted = if ollama {
        from_ollama(http)
    } else {
        match from_openai(http, tools) {
            Ok(wanted) => wanted,
            Err(message) => return Reply::openai_error(400, &message),
        }
    };
    let tool = wanted.tool.clone();
    let model_name = http.json["model"].as_str().unwrap_or("local").to_owned();
    let path = http.path.clone();
    if !wanted.stream {
        let result = llm.generate(&wanted.request, |_| true);
        let (completion_tokens, finish) = match &result {
            Ok(g) => (
                g.response.usage.completion_tokens,
                g.response.finish.clone(),
            ),
            Err(e) => (0, Finish::Other(e.to_string())),
        };
        record(
            log,
            Served {
                index,
                path,
                request: wanted.request.clone(),
                completion_tokens,
                finish,
                client_left: false,
                tool_call: tool.clone(),
            },
        );
        return match result {
            Ok(g) => {
                let r = &g.response;
                if ollama {
                    Reply::json(
                        200,
                        json!({
                        "model": model_name, "message": {"role": "assistant", "content": r.text},
                        "done": true, "done_reason": reason(&r.finish, false),
                        "prompt_eval_count": r.usage.prompt_tokens, "eval_count": r.usage.completion_tokens}),
                    )
                } else {
                    Reply::json(
                        200,
                        json!({
                        "id": "c", "object": "chat.completion", "model": model_name,
                        "choices": [{"index": 0, "message": openai_message(&r.text, tool.as_deref()),
                                     "finish_reason": reason(&r.finish, tool.is_some())}],
                        "usage": {"prompt_tokens": r.usage.prompt_tokens,
                                  "completion_tokens": r.usage.completion_tokens}}),
                    )
                }
            }
            Err(e) if ollama => Reply::ollama_error(500, &e.to_string()),
            Err(e) => Reply::openai_error(500, &e.to_string()),
        };
    }
    let (steps, reply) = Reply::live(if ollama { wire::NDJSON } else { wire::SSE });
    let llm = llm.clone();
    let log = Arc::clone(log);
    std::thread::spawn(move || {
        let mut client_left = false;
        let mut send = |bytes: Vec<u8>| {
            let sent = steps.send(Step::Send(bytes)).is_ok();
            client_left |= !sent;
            sent
        };
        // OpenAI's first chunk opens the message: the role, or the call with its id and name.
        match (ollama, &tool) {
            (true, _) => {}
            (false, None) => {
                send(wire::openai_delta(&model_name, ""));
            }
            (false, Some(name)) => {
                send(openai_tool_start(&model_name, name));
            }
        }
        // Returning `false` stops the engine at the next token: the client has gone.
        let result = llm.generate(&wanted.request, |text| {
            text.is_empty()
                || send(match (ollama, &tool) {
                    (true, _) => wire::ollama_delta(&model_name, text),
                    (false, None) => wire::openai_delta(&model_name, text),
                    (false, Some(_)) => openai_tool_delta(&model_name, text),
                })
        });
        match result {
            Ok(g) => {
                let (r, u) = (&g.response, g.response.usage);
                if ollama {
                    send(wire::ollama_done(
                        &model_name,
                        reason(&r.finish, false),
                        u.prompt_tokens,
                        u.completion_tokens,
                    ));
                } else {
                    send(wire::openai_finish(
                        &model_name,
                        reason(&r.finish, tool.is_some()),
                    ));
                    if wanted.usage_chunk {
                        send(wire::openai_usage(
                            &model_name,
                            u.prompt_tokens,
                            u.completion_tokens,
                        ));
                    }
                    send(wire::openai_done());
                }
                record(
                    &log,
                    Served {
                        index,
                        path,
                        request: wanted.request,
                        completion_tokens: u.completion_tokens,
                        finish: r.finish.clone(),
                        client_left,
                        tool_call: tool,
                    },
                );
            }
            Err(e) => {
                send(if ollama {
                    wire::ollama_error(&e.to_string())
                } else {
                    wire::openai_error(&e.to_string())
                });
                record(
                    &log,
                    Served {
                        index,
                        path,
                        request: wanted.request,
                        completion_tokens: 0,
                        finish: Finish::Other(e.to_string()),
                        client_left,
                        tool_call: tool,
                    },
                );
            }
        }
    });
    reply
}
