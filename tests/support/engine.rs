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
//! Every generation's outcome (tokens generated, finish, whether the client left first) is recorded in
//! [`EngineServer::served`], so a test can check the model stopped, not only the client.
//!
//! ```ignore
//! let server = EngineServer::start(model().clone());
//! let llm = llm_extract::OpenAiCompatible::new(server.url(), "smollm2")?;
//! ```

use super::{wire, Reply, Request, Step, TestServer};
use llm_extract::llm::llama_cpp::LlamaCpp;
use llm_extract::llm::Message;
use llm_extract::{ChatRequest, Finish};
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
}

type Log = Arc<(Mutex<Vec<Served>>, Condvar)>;

/// A running engine-backed server; dropping it stops the server.
pub struct EngineServer {
    server: TestServer,
    log: Log,
}

impl EngineServer {
    /// Starts a server answering both chat endpoints with `llm`.
    pub fn start(llm: LlamaCpp) -> EngineServer {
        let log: Log = Arc::new((Mutex::new(Vec::new()), Condvar::new()));
        let recorded = Arc::clone(&log);
        let arrived = AtomicUsize::new(0);
        let server = TestServer::start(move |http| {
            let index = arrived.fetch_add(1, Ordering::SeqCst);
            answer(&llm, http, index, &recorded)
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
}

fn messages_of(json: &Value) -> ChatRequest {
    let mut request = ChatRequest::default();
    for message in json["messages"].as_array().into_iter().flatten() {
        let content = message["content"].as_str().unwrap_or_default().to_owned();
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
    }
}

/// OpenAI's `/v1/chat/completions` body: `response_format.json_schema.schema` is the schema.
fn from_openai(http: &Request) -> Wanted {
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
    Wanted {
        request,
        stream: http.wants_stream(),
        usage_chunk: json["stream_options"]["include_usage"] == Value::Bool(true),
    }
}

fn reason(finish: &Finish) -> &'static str {
    if *finish == Finish::Length {
        "length"
    } else {
        "stop"
    }
}

fn answer(llm: &LlamaCpp, http: &Request, index: usize, log: &Log) -> Reply {
    let ollama = match http.path.as_str() {
        "/api/chat" => true,
        "/v1/chat/completions" => false,
        other => return Reply::text(404, format!("no route {other}")),
    };
    let wanted = if ollama {
        from_ollama(http)
    } else {
        from_openai(http)
    };
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
                        "done": true, "done_reason": reason(&r.finish),
                        "prompt_eval_count": r.usage.prompt_tokens, "eval_count": r.usage.completion_tokens}),
                    )
                } else {
                    Reply::json(
                        200,
                        json!({
                        "id": "c", "object": "chat.completion", "model": model_name,
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": r.text},
                                     "finish_reason": reason(&r.finish)}],
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
        if !ollama {
            send(wire::openai_delta(&model_name, ""));
        }
        // Returning `false` stops the engine at the next token: the client has gone.
        let result = llm.generate(&wanted.request, |text| {
            text.is_empty()
                || send(if ollama {
                    wire::ollama_delta(&model_name, text)
                } else {
                    wire::openai_delta(&model_name, text)
                })
        });
        match result {
            Ok(g) => {
                let (r, u) = (&g.response, g.response.usage);
                if ollama {
                    send(wire::ollama_done(
                        &model_name,
                        reason(&r.finish),
                        u.prompt_tokens,
                        u.completion_tokens,
                    ));
                } else {
                    send(wire::openai_finish(&model_name, reason(&r.finish)));
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
                    },
                );
            }
        }
    });
    reply
}
