//! The whole pipeline on tokens a real model produced: `extract`, `extract_all` (JSON Lines under a
//! grammar), truncation, streaming, prompted mode with repairs, and the HTTP backends (`Ollama`,
//! `OpenAiCompatible`) against a local server that answers both wire formats by running the embedded engine.
//!
//! The 135M model is weak: these tests assert validity, types and the ledger, plus sanity checks that hold
//! for this model on these texts, never exact content. The model is loaded once for the binary.
#![cfg(feature = "llama-cpp")]

mod common;
mod llama_common;
mod support;

use common::types::{Extracted, OntologyItem};
use futures_util::StreamExt;
use llama_common::{model, ONTOLOGY_TEXT, PERSON_AND_COMPANY};
use llm_extract::llm::llama_cpp::LlamaCpp;
use llm_extract::llm::{BoxFuture, ChatEvent, ChatStream, Message};
use llm_extract::{
    ChatRequest, Dialect, Extract, Extractor, Finish, Llm, LlmError, Mode, Ollama, OpenAiCompatible,
};
use serde::Serialize;
use serde_json::Value;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use support::{providers, wire, Reply, Request, Step, TestServer};

fn assert_valid<T: Extract + Serialize>(value: &T) {
    let json = serde_json::to_value(value).unwrap();
    let validator = T::schema().validator().unwrap();
    assert!(
        validator.is_valid(&json),
        "{json} does not validate against {}",
        T::schema().name()
    );
}

fn names_nadella_or_microsoft(extracted: &Extracted) -> bool {
    [&extracted.person, &extracted.company]
        .into_iter()
        .flatten()
        .any(|n| n.contains("Nadella") || n.contains("Microsoft"))
}

#[tokio::test]
async fn one_value_from_a_short_sentence() {
    let extracted = Extractor::new(model())
        .max_tokens(64)
        .extract::<Extracted>(PERSON_AND_COMPANY)
        .await
        .unwrap();
    assert_valid(&extracted.value);
    assert!(
        names_nadella_or_microsoft(&extracted.value),
        "{:?}",
        extracted.value
    );
    assert_eq!(
        extracted.attempts.len(),
        1,
        "a constrained answer needs no repair"
    );
    assert!(extracted.usage.completion_tokens > 0);
}

#[tokio::test]
async fn json_lines_of_a_tagged_enum_are_typed_and_valid() {
    let items = Extractor::new(model())
        .max_tokens(160)
        .max_continuations(0)
        .extract_all::<OntologyItem>(ONTOLOGY_TEXT)
        .await
        .unwrap();
    assert!(
        !items.value.is_empty(),
        "no item; raw: {:?}",
        items.attempts.last().map(|a| &a.raw)
    );
    for item in &items.value {
        assert_valid(item);
    }
    // The engine constrains line by line, so the answer was JSON Lines, not a list object.
    let raw = &items.attempts[0].raw;
    assert!(raw.starts_with("{\"type\": "), "{raw:?}");
}

/// The complete lines of a JSON Lines answer (a last line without its newline was cut off).
fn complete_lines(raw: &str) -> usize {
    raw.matches('\n').count()
}

#[tokio::test]
async fn a_small_token_limit_keeps_every_complete_item_and_reports_length() {
    let items = Extractor::new(model())
        .max_tokens(70)
        .max_continuations(0)
        .repeat_limit(0)
        .extract_all::<OntologyItem>(ONTOLOGY_TEXT)
        .await
        .unwrap();
    assert_eq!(items.finish, Finish::Length, "{:?}", items.attempts);
    // Every complete line became an item (the grammar makes each one valid); a cut-off last line did not.
    let raw = &items.attempts[0].raw;
    assert_eq!(items.value.len(), complete_lines(raw), "{raw:?}");
    assert!(!items.value.is_empty(), "{raw:?}");
    for item in &items.value {
        assert_valid(item);
    }
}

/// An `Llm` that passes everything through and records when the answer's end went by.
struct Observed<L> {
    inner: L,
    done: Arc<AtomicBool>,
}

impl<L: Llm> Llm for Observed<L> {
    fn dialect(&self) -> Dialect {
        self.inner.dialect()
    }
    fn constrains_json_lines(&self) -> bool {
        self.inner.constrains_json_lines()
    }
    fn chat_stream(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatStream, LlmError>> {
        let done = Arc::clone(&self.done);
        Box::pin(async move {
            let stream = self.inner.chat_stream(request).await?;
            let observed = stream.inspect(move |event| {
                if matches!(event, Ok(ChatEvent::Done(_))) {
                    done.store(true, Ordering::SeqCst);
                }
            });
            Ok(Box::pin(observed) as ChatStream)
        })
    }
}

#[tokio::test]
async fn the_first_item_arrives_while_the_model_is_still_generating() {
    let done = Arc::new(AtomicBool::new(false));
    let llm = Observed {
        inner: model().clone(),
        done: Arc::clone(&done),
    };
    let extractor = Extractor::new(llm).max_tokens(120).max_continuations(0);
    let mut stream = extractor.extract_stream::<OntologyItem>(ONTOLOGY_TEXT);
    let first = stream.next().await.expect("at least one item").unwrap();
    assert!(
        !done.load(Ordering::SeqCst),
        "the answer had already ended when {first:?} arrived"
    );
    assert_valid(&first);
    let mut rest = 0;
    while let Some(item) = stream.next().await {
        assert_valid(&item.unwrap());
        rest += 1;
    }
    let report = stream.report().expect("a report once the stream ended");
    // The ledger holds the answer the items came from (when the extractor stops a looping model early,
    // the cancelled request reports no usage, so only the text is checked).
    let raw = report.last_raw().unwrap_or_default();
    assert!(
        raw.matches('\n').count() > rest,
        "{report:?} ({rest} more items)"
    );
}

#[tokio::test]
async fn prompted_mode_with_repairs_is_valid_or_an_error_with_every_attempt() {
    let result = Extractor::new(model())
        .mode(Mode::Prompted)
        .max_attempts(2)
        .max_tokens(64)
        .extract::<Extracted>(PERSON_AND_COMPANY)
        .await;
    match result {
        Ok(extracted) => {
            assert_valid(&extracted.value);
            assert!(!extracted.attempts.is_empty() && extracted.attempts.len() <= 2);
        }
        Err(err) => {
            let attempts = err.attempts();
            assert_eq!(
                attempts.len(),
                2,
                "every allowed attempt is in the ledger: {err}"
            );
            assert!(attempts.iter().all(|a| a.error.is_some()), "{attempts:?}");
            assert!(
                attempts.iter().all(|a| a.usage.completion_tokens > 0),
                "{attempts:?}"
            );
            assert_eq!(err.usage(), attempts[0].usage + attempts[1].usage);
        }
    }
}

// ---- The HTTP backends, served by the embedded engine ----

/// What a wire request asks of the engine.
struct Wanted {
    request: ChatRequest,
    stream: bool,
    usage_chunk: bool,
    /// The forced tool's name, when the schema came as one (the answer is then its arguments).
    tool: Option<String>,
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

/// OpenAI's `/v1/chat/completions` body: `response_format.json_schema.schema` is the schema.
fn from_openai(http: &Request) -> Wanted {
    let json = &http.json;
    let mut request = messages_of(json);
    common_options(&mut request, json);
    request.max_tokens = json["max_tokens"]
        .as_u64()
        .or(json["max_completion_tokens"].as_u64())
        .map(|n| n as u32);
    let schema = &json["response_format"]["json_schema"]["schema"];
    if schema.is_object() {
        request.schema = Some(schema.clone());
    }
    // A forced function call: its parameters constrain the decoding, its arguments are the answer.
    let tool = json["tool_choice"]["function"]["name"]
        .as_str()
        .map(str::to_owned);
    let parameters = json["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|t| t["function"]["name"].as_str() == tool.as_deref())
        .map(|t| t["function"]["parameters"].clone());
    if let Some(parameters) = parameters.filter(Value::is_object) {
        request.schema = Some(parameters);
    }
    Wanted {
        request,
        stream: http.wants_stream(),
        usage_chunk: json["stream_options"]["include_usage"] == Value::Bool(true),
        tool,
    }
}

fn reason(finish: &Finish) -> &'static str {
    if *finish == Finish::Length {
        "length"
    } else {
        "stop"
    }
}

/// A server on 127.0.0.1 that answers Ollama's and OpenAI's chat endpoints by running `llm`.
fn engine_server(llm: LlamaCpp) -> TestServer {
    TestServer::start(move |http| {
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
        if !wanted.stream {
            return match llm.generate(&wanted.request, |_| true) {
                Ok(g) => {
                    let r = &g.response;
                    if ollama {
                        Reply::json(
                            200,
                            serde_json::json!({
                            "model": model_name, "message": {"role": "assistant", "content": r.text},
                            "done": true, "done_reason": reason(&r.finish),
                            "prompt_eval_count": r.usage.prompt_tokens, "eval_count": r.usage.completion_tokens}),
                        )
                    } else {
                        let message = match &wanted.tool {
                            Some(name) => serde_json::json!({"role": "assistant", "content": null,
                                "tool_calls": [{"id": "call_1", "type": "function",
                                                "function": {"name": name, "arguments": r.text}}]}),
                            None => serde_json::json!({"role": "assistant", "content": r.text}),
                        };
                        Reply::json(
                            200,
                            serde_json::json!({
                            "id": "c", "object": "chat.completion", "model": model_name,
                            "choices": [{"index": 0, "message": message,
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
        std::thread::spawn(move || {
            let send = |bytes: Vec<u8>| steps.send(Step::Send(bytes)).is_ok();
            let tool = wanted.tool.as_deref();
            match tool {
                _ if ollama => {}
                Some(name) => {
                    send(providers::openai_tool_start(&model_name, name));
                }
                None => {
                    send(wire::openai_delta(&model_name, ""));
                }
            }
            let result = llm.generate(&wanted.request, |text| {
                text.is_empty()
                    || send(match tool {
                        _ if ollama => wire::ollama_delta(&model_name, text),
                        Some(_) => providers::openai_tool_delta(&model_name, text),
                        None => wire::openai_delta(&model_name, text),
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
                        send(match (tool, &r.finish) {
                            (Some(_), Finish::Stop) => {
                                providers::openai_tool_finish(&model_name, "tool_calls")
                            }
                            _ => wire::openai_finish(&model_name, reason(&r.finish)),
                        });
                        if wanted.usage_chunk {
                            send(wire::openai_usage(
                                &model_name,
                                u.prompt_tokens,
                                u.completion_tokens,
                            ));
                        }
                        send(wire::openai_done());
                    }
                }
                Err(e) if ollama => {
                    send(wire::ollama_error(&e.to_string()));
                }
                Err(e) => {
                    send(wire::openai_error(&e.to_string()));
                }
            }
        });
        reply
    })
}

#[tokio::test]
async fn ollama_and_openai_backends_extract_from_real_generation() {
    let server = engine_server(model().clone());

    let ollama = Ollama::builder("smollm2")
        .host(server.url())
        .build()
        .unwrap();
    let one = Extractor::new(&ollama)
        .max_tokens(64)
        .extract::<Extracted>(PERSON_AND_COMPANY)
        .await
        .unwrap();
    assert_valid(&one.value);
    assert!(names_nadella_or_microsoft(&one.value), "{:?}", one.value);
    assert!(
        one.usage.prompt_tokens > 0 && one.usage.completion_tokens > 0,
        "{:?}",
        one.usage
    );

    let openai = OpenAiCompatible::new(server.url(), "smollm2").unwrap();
    let many = Extractor::new(&openai)
        .max_tokens(160)
        .max_continuations(0)
        .extract_all::<OntologyItem>(ONTOLOGY_TEXT)
        .await
        .unwrap();
    assert!(!many.value.is_empty(), "{:?}", many.attempts);
    for item in &many.value {
        assert_valid(item);
    }

    // The schemas went over the wire and constrained the real decoding.
    let requests = server.requests();
    let chat = requests.iter().find(|r| r.path == "/api/chat").unwrap();
    assert!(
        chat.json["format"]["properties"]["person"].is_object(),
        "{}",
        chat.json
    );
    let completions = requests
        .iter()
        .find(|r| r.path == "/v1/chat/completions")
        .unwrap();
    let sent = &completions.json["response_format"]["json_schema"]["schema"];
    assert!(
        sent["properties"]["items"]["items"].is_object(),
        "the list schema: {sent}"
    );
    assert!(
        many.attempts[0]
            .raw
            .trim_start()
            .starts_with("{\"items\": ["),
        "{:?}",
        many.attempts[0].raw
    );
}

#[tokio::test]
async fn tool_mode_extracts_from_real_generation_behind_an_openai_compatible_server() {
    let server = engine_server(model().clone());
    let openai = OpenAiCompatible::new(server.url(), "smollm2").unwrap();
    let extractor = Extractor::new(&openai)
        .mode(Mode::Tool)
        .max_tokens(160)
        .max_continuations(0);
    let many = extractor
        .extract_all::<OntologyItem>(ONTOLOGY_TEXT)
        .await
        .unwrap();
    assert!(!many.value.is_empty(), "{:?}", many.attempts);
    for item in &many.value {
        assert_valid(item);
    }
    // Streamed too: the items come out of the streamed arguments as each completes.
    let mut stream = extractor.extract_stream::<OntologyItem>(ONTOLOGY_TEXT);
    let first = stream.next().await.expect("an item").unwrap();
    assert_valid(&first);
    drop(stream);
    let one = Extractor::new(&openai)
        .mode(Mode::Tool)
        .max_tokens(64)
        .extract::<Extracted>(PERSON_AND_COMPANY)
        .await
        .unwrap();
    assert_valid(&one.value);

    // The schema went out as one forced function and constrained the real decoding of its arguments.
    let request = &server.requests()[0];
    assert!(request.json.get("response_format").is_none());
    let function = &request.json["tools"][0]["function"];
    assert_eq!(
        request.json["tool_choice"]["function"]["name"],
        function["name"]
    );
    assert!(
        function["parameters"]["properties"]["items"]["items"].is_object(),
        "the list schema: {function}"
    );
    assert!(
        many.attempts[0]
            .raw
            .trim_start()
            .starts_with("{\"items\": ["),
        "{:?}",
        many.attempts[0].raw
    );
}
