//! Tool mode ([`Mode::Tool`]) end to end on tokens a real model produced: `OpenAiCompatible` sends the
//! schema as one forced function (`tools` with `strict: true`, a `tool_choice` naming it) to a local
//! OpenAI-compatible server that runs the embedded engine under that function's `parameters` schema and
//! answers with a tool call (`message.tool_calls`, or `delta.tool_calls` argument pieces when streamed),
//! as llama-server and OpenAI do. `extract`, `extract_all`, `extract_stream` and `extract_partial` read
//! the call's arguments; a server that ignores tools and answers in text still yields the value through
//! the lenient parser and the repair loop.
//!
//! The 135M model is weak: the inputs are easy sentences, and the values checked are the ones it gets
//! right under greedy decoding (the same on every run with this model file).
#![cfg(feature = "llama-cpp")]

use crate::llama_common;
use crate::support;

use futures_util::StreamExt;
use llama_common::{model, Observed};
use llm_extract::{
    extract::{LoopGuard, Mode, PartialEvent},
    llm::Finish,
    schema::{Dialect, Shape},
    Extract, Extractor, OpenAiCompatible, Schema,
};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use support::engine::{EngineServer, Served};
use support::Request;

/// A person as one sentence states them.
#[derive(Extract, Deserialize, Serialize, Debug, Clone, PartialEq)]
struct Person {
    /// The person's first name.
    name: String,
    /// Their age in years.
    age: u32,
}

/// A city a text names.
#[derive(Extract, Deserialize, Serialize, Debug, Clone, PartialEq)]
struct City {
    /// The city's name.
    name: String,
    /// The country it is in.
    country: String,
}

const TOM: &str = "My neighbour Tom is forty years old and lives in Leeds.";
const TOUR: &str = "The cities on the tour: Paris (France), Rome (Italy), Madrid (Spain).";

fn assert_valid<T: Extract + Serialize>(value: &T) {
    let json = serde_json::to_value(value).unwrap();
    let validator = T::schema().validator().unwrap();
    assert!(
        validator.is_valid(&json),
        "{json} is not a valid {}",
        T::schema().name()
    );
}

/// The request carried `T`'s schema (in the strict dialect, of `shape`) as one function with
/// `strict: true`, a `tool_choice` forcing it, and no `response_format`.
fn assert_forced_tool<T: Extract>(request: &Request, shape: Shape) {
    let body = &request.json;
    let name = T::schema().name().to_owned();
    assert!(body.get("response_format").is_none(), "{body}");
    let tools = body["tools"].as_array().expect("tools");
    assert_eq!(tools.len(), 1, "{body}");
    assert_eq!(tools[0]["type"], "function");
    let function = &tools[0]["function"];
    assert_eq!(function["name"], json!(name));
    assert_eq!(function["strict"], true);
    assert_eq!(
        function["parameters"],
        *T::schema()
            .for_dialect(Dialect::OpenAiStrict, shape)
            .unwrap()
    );
    assert_eq!(
        body["tool_choice"],
        json!({"type": "function", "function": {"name": name}})
    );
}

/// The server decoded under the function's parameters and sent the answer as a call to it.
fn assert_answered_as_call(served: &Served, name: &str) {
    assert_eq!(served.tool_call.as_deref(), Some(name), "{served:?}");
    assert!(served.request.tool_call, "{served:?}");
    assert!(served.request.schema.is_some(), "{served:?}");
}

fn city(name: &str, country: &str) -> City {
    City {
        name: name.into(),
        country: country.into(),
    }
}

fn tom() -> Person {
    Person {
        name: "Tom".into(),
        age: 40,
    }
}

fn client(server: &EngineServer) -> OpenAiCompatible {
    OpenAiCompatible::new(server.url(), "smollm2").unwrap()
}

#[tokio::test]
async fn extract_reads_the_arguments_of_a_forced_call_streamed_and_not() {
    let server = EngineServer::start(model().clone());
    let llm = client(&server);
    let streamed = Extractor::new(&llm)
        .mode(Mode::Tool)
        .max_tokens(64)
        .extract::<Person>(TOM)
        .await
        .unwrap();
    // Without the loop guard the answer is not streamed: the call comes whole in `message.tool_calls`.
    let whole = Extractor::new(&llm)
        .mode(Mode::Tool)
        .max_tokens(64)
        .loop_guard(LoopGuard::off())
        .extract::<Person>(TOM)
        .await
        .unwrap();
    for out in [&streamed, &whole] {
        assert_eq!(out.value, tom(), "{:?}", out.report.attempts);
        assert_valid(&out.value);
        assert_eq!(out.report.attempts.len(), 1, "{:?}", out.report.attempts);
        assert_eq!(out.report.finish, Some(Finish::Stop));
        assert!(out.report.usage.completion_tokens > 0, "{:?}", out.report);
        // The answer is the call's arguments: JSON, nothing around it.
        let raw = out.report.attempts[0].raw.trim();
        assert!(raw.starts_with('{') && raw.ends_with('}'), "{raw:?}");
    }

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[0].wants_stream() && !requests[1].wants_stream());
    for request in &requests {
        assert_forced_tool::<Person>(request, Shape::One);
    }
    for served in server.served(2) {
        assert_answered_as_call(&served, "Person");
        assert_eq!(served.finish, Finish::Stop);
    }
}

#[tokio::test]
async fn extract_all_reads_a_list_from_the_call() {
    let server = EngineServer::start(model().clone());
    let llm = client(&server);
    let cities = Extractor::new(&llm)
        .mode(Mode::Tool)
        .max_tokens(160)
        .max_continuations(0)
        .extract_all::<City>(TOUR)
        .await
        .unwrap();
    assert_eq!(
        cities.value,
        [
            city("Paris", "France"),
            city("Rome", "Italy"),
            city("Madrid", "Spain")
        ],
        "{:?}",
        cities.report.attempts
    );
    let raw = &cities.report.attempts[0].raw;
    assert!(raw.trim_start().starts_with("{\"items\": ["), "{raw:?}");
    assert_forced_tool::<City>(&server.requests()[0], Shape::List);
    assert_answered_as_call(&server.served(1)[0], "City");
}

#[tokio::test]
async fn extract_stream_yields_each_item_as_its_argument_deltas_complete_it() {
    let server = EngineServer::start(model().clone());
    let done = Arc::new(AtomicBool::new(false));
    let llm = Observed {
        inner: client(&server),
        done: Arc::clone(&done),
    };
    let extractor = Extractor::new(llm)
        .mode(Mode::Tool)
        .max_tokens(160)
        .max_continuations(0);
    let mut stream = extractor.extract_stream::<City>(TOUR);
    let first = stream.next().await.expect("an item").unwrap();
    assert!(
        !done.load(Ordering::SeqCst),
        "the call had already ended when {first:?} arrived"
    );
    let mut items = vec![first];
    while let Some(item) = stream.next().await {
        items.push(item.unwrap());
    }
    assert_eq!(
        items,
        [
            city("Paris", "France"),
            city("Rome", "Italy"),
            city("Madrid", "Spain")
        ]
    );
    assert!(done.load(Ordering::SeqCst));
    let request = &server.requests()[0];
    assert!(request.wants_stream());
    assert_forced_tool::<City>(request, Shape::List);
    assert_answered_as_call(&server.served(1)[0], "City");
}

#[tokio::test]
async fn extract_partial_snapshots_grow_with_the_arguments() {
    let server = EngineServer::start(model().clone());
    let llm = client(&server);
    let extractor = Extractor::new(&llm).mode(Mode::Tool).max_tokens(64);
    let mut events = extractor.extract_partial::<Person>(TOM);
    let (mut snapshots, mut completed, mut last) = (0, Vec::new(), None);
    while let Some(event) = events.next().await {
        match event.unwrap() {
            PartialEvent::Snapshot(_) => snapshots += 1,
            PartialEvent::Completed { path, value } => completed.push((path.to_string(), value)),
            PartialEvent::Final { extraction, .. } => last = Some(extraction),
            other => panic!("no retry was needed: {other:?}"),
        }
    }
    let last = last.expect("a final value");
    assert_eq!(last.value, tom(), "{:?}", last.report.attempts);
    // The value was seen as it was written: several snapshots, each field as it closed.
    assert!(snapshots >= 2, "{snapshots} snapshot(s)");
    assert!(
        completed.contains(&("name".to_owned(), json!("Tom"))),
        "{completed:?}"
    );
    assert!(
        completed.contains(&("age".to_owned(), json!(40))),
        "{completed:?}"
    );
    let request = &server.requests()[0];
    assert!(request.wants_stream());
    assert_forced_tool::<Person>(request, Shape::One);
    assert_answered_as_call(&server.served(1)[0], "Person");
}

#[tokio::test]
async fn a_call_cut_off_by_the_token_limit_keeps_its_complete_items_and_reports_length() {
    let server = EngineServer::start(model().clone());
    let llm = client(&server);
    let cities = Extractor::new(&llm)
        .mode(Mode::Tool)
        .max_tokens(24)
        .max_continuations(0)
        .extract_all::<City>(TOUR)
        .await
        .unwrap();
    assert_eq!(
        cities.report.finish,
        Some(Finish::Length),
        "{:?}",
        cities.report
    );
    assert_eq!(
        cities.value,
        [city("Paris", "France")],
        "{:?}",
        cities.report.attempts
    );
    let served = &server.served(1)[0];
    assert_answered_as_call(served, "City");
    assert_eq!(served.finish, Finish::Length);
}

/// A person as the prompted-mode test reads one.
#[derive(Extract, Deserialize, Serialize, Debug, Clone, PartialEq)]
struct Neighbour {
    name: String,
    age: u32,
    city: String,
}

#[tokio::test]
async fn a_server_that_answers_in_text_instead_of_calling_still_yields_the_value() {
    // This server ignores `tools` and `tool_choice`: the model writes freely, wrapping its JSON in a
    // sentence ("Here's a JSON-formatted version..."), and the lenient parser takes the value out.
    let server = EngineServer::start_without_tools(model().clone());
    let llm = client(&server);
    let out = Extractor::new(&llm)
        .mode(Mode::Tool)
        .max_attempts(3)
        .max_tokens(96)
        .extract::<Neighbour>(TOM)
        .await
        .unwrap();
    assert_eq!(
        (out.value.name.as_str(), out.value.age),
        ("Tom", 40),
        "{:?}",
        out.value
    );
    assert!(out.value.city.contains("Leeds"), "{:?}", out.value);
    let raw = &out.report.attempts[0].raw;
    assert!(raw.trim_start().starts_with("Here"), "{raw:?}");
    assert_forced_tool::<Neighbour>(&server.requests()[0], Shape::One);
    let served = &server.served(1)[0];
    assert_eq!(served.tool_call, None);
    assert_eq!(served.request.schema, None, "decoded without a schema");
}

#[tokio::test]
async fn a_required_tool_choice_forces_the_one_tool() {
    // llama-server takes only the string forms of `tool_choice`; "required" with the one tool sent
    // forces the same call a named choice does.
    let server = EngineServer::start(model().clone());
    let llm = OpenAiCompatible::builder(server.url(), "smollm2")
        .tool_choice_required(true)
        .build()
        .unwrap();
    let out = Extractor::new(&llm)
        .mode(Mode::Tool)
        .max_tokens(64)
        .extract::<Person>(TOM)
        .await
        .unwrap();
    assert_eq!(out.value, tom(), "{:?}", out.report.attempts);
    let body = &server.requests()[0].json;
    assert_eq!(body["tool_choice"], "required");
    assert_eq!(body["parallel_tool_calls"], false);
    assert_eq!(body["tools"][0]["function"]["strict"], true);
    assert!(body.get("response_format").is_none(), "{body}");
    assert_answered_as_call(&server.served(1)[0], "Person");
}

/// POSTs `body` to the server's `/v1/chat/completions` over a plain connection (not streamed: the
/// answer has a `content-length`) and returns the status and the answer's JSON.
async fn post(server: &EngineServer, body: serde_json::Value) -> (u16, serde_json::Value) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = server.url().trim_start_matches("http://").to_owned();
    let mut socket = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let body = body.to_string();
    let head = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
         content-length: {}\r\n\r\n",
        body.len()
    );
    socket.write_all(head.as_bytes()).await.unwrap();
    socket.write_all(body.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        let n = socket.read(&mut buffer).await.unwrap();
        assert!(n > 0, "the connection closed mid-answer");
        answer.extend_from_slice(&buffer[..n]);
        let text = String::from_utf8_lossy(&answer).into_owned();
        let Some((head, body)) = text.split_once("\r\n\r\n") else {
            continue;
        };
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length: "))
            .expect("a content-length")
            .parse()
            .unwrap();
        if body.len() >= length {
            let status = head.split(' ').nth(1).unwrap().parse().unwrap();
            return (status, serde_json::from_str(body).unwrap());
        }
    }
}

#[tokio::test]
async fn the_server_sends_a_call_only_when_the_choice_forces_one() {
    let server = EngineServer::start(model().clone());
    let tools = json!([{"type": "function", "function": {
        "name": "Person", "strict": true,
        "parameters": *Person::schema().for_dialect(Dialect::OpenAiStrict, Shape::One).unwrap()}}]);
    let request = |choice: serde_json::Value| {
        json!({"model": "smollm2", "max_tokens": 32, "temperature": 0, "tools": tools, "tool_choice": choice,
               "messages": [{"role": "user", "content": TOM}]})
    };

    // "required" with the one tool: the answer is a call, as OpenAI sends one.
    let (status, called) = post(&server, request(json!("required"))).await;
    assert_eq!(status, 200, "{called}");
    let choice = &called["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls", "{called}");
    assert_eq!(choice["message"]["content"], serde_json::Value::Null);
    let call = &choice["message"]["tool_calls"][0];
    assert_eq!(
        (&call["type"], &call["function"]["name"]),
        (&json!("function"), &json!("Person"))
    );
    assert!(call["id"].is_string(), "{call}");
    let arguments: serde_json::Value =
        serde_json::from_str(call["function"]["arguments"].as_str().unwrap()).unwrap();
    assert!(
        Person::schema().validator().unwrap().is_valid(&arguments),
        "{arguments}"
    );

    // "auto": this engine cannot choose, so it answers in text, unconstrained.
    let (status, text) = post(&server, request(json!("auto"))).await;
    assert_eq!(status, 200, "{text}");
    let message = &text["choices"][0]["message"];
    assert!(
        message["content"].as_str().is_some_and(|c| !c.is_empty()),
        "{text}"
    );
    assert!(message.get("tool_calls").is_none(), "{text}");

    // A choice naming no tool of the request is refused, as OpenAI refuses it.
    let (status, refused) = post(
        &server,
        request(json!({"type": "function", "function": {"name": "Company"}})),
    )
    .await;
    assert_eq!(status, 400, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Company"),
        "{refused}"
    );

    let served = server.served(2);
    assert_answered_as_call(&served[0], "Person");
    assert_eq!(
        (
            served[1].tool_call.as_ref(),
            served[1].request.schema.as_ref()
        ),
        (None, None)
    );
    assert_eq!(server.requests().len(), 3);
}
