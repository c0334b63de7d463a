//! Local servers speaking the providers' batch APIs as their public documentation describes them,
//! for tests: OpenAI's Files API and Batch API (`POST /v1/files` multipart with `purpose=batch`,
//! `POST /v1/batches`, `GET /v1/batches/{id}` moving from `validating` through `in_progress` and
//! `finalizing` to `completed`, output and error files in no particular order), Anthropic's Message
//! Batches (`POST /v1/messages/batches`, `processing_status` to `ended`, a JSON Lines results file in
//! no particular order) and Gemini's batch mode (`models/{model}:batchGenerateContent` with inline
//! requests, a `batches/...` operation polled until `done`, inline responses in input order). Each
//! also answers the online chat endpoint of its provider.
//!
//! What the "model" answers is a function of the request ([`Ask`]): a test scripts failures
//! (errored, expired, invalid JSON) by document and by how many times a request was submitted. Every
//! request line and every submission is recorded, to check what was sent and that nothing was paid
//! for twice. Token counts come from the tokenizer the test gives.
#![allow(dead_code)]

use crate::support::{Reply, Request, TestServer};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Which provider a server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    OpenAi,
    Anthropic,
    Gemini,
}

/// One request as the model sees it.
#[derive(Debug, Clone)]
pub struct Ask {
    /// The request's `custom_id` (`metadata.key` on Gemini; empty online).
    pub custom_id: String,
    /// The first user message's text (the document).
    pub document: String,
    /// How many user turns the conversation has (2 or more: a repair).
    pub user_turns: usize,
    /// How many times this `custom_id` was submitted before this submission.
    pub earlier_submissions: usize,
}

/// What becomes of a request.
#[derive(Debug, Clone)]
pub enum Fate {
    /// The model answers this text.
    Answer(String),
    /// The provider reports the request failed with this HTTP status.
    Errored(u16),
    /// The job ends before the request is answered.
    Expired,
}

type Model = dyn Fn(&Ask) -> Fate + Send + Sync;

/// The document number a text names (`document 17: ...`).
pub fn number(text: &str) -> Option<u64> {
    text.split("document ")
        .nth(1)?
        .split(':')
        .next()?
        .trim()
        .parse()
        .ok()
}

/// The scripted model of the tests: `{"n": i}` for document i, except that i % 10 == 3 fail with a
/// 500 on their first submission, i % 10 == 5 expire on their first, i % 10 == 7 answer invalid JSON
/// until repaired, i % 50 == 9 always answer prose, and i % 50 == 19 are always refused (400).
pub fn scripted(ask: &Ask) -> Fate {
    let Some(i) = number(&ask.document) else {
        return Fate::Answer("no document number".into());
    };
    let first = ask.earlier_submissions == 0;
    match (i % 10, i % 50) {
        (_, 9) => Fate::Answer("I cannot find a number, sorry.".into()),
        (_, 19) => Fate::Errored(400),
        (3, _) if first => Fate::Errored(500),
        (5, _) if first => Fate::Expired,
        (7, _) if ask.user_turns == 1 => Fate::Answer(format!("{{\"n\": {i},")),
        _ => Fate::Answer(format!("{{\"n\": {i}}}")),
    }
}
type Tokenizer = dyn Fn(&str) -> usize + Send + Sync;

/// A job as the server holds it.
struct Job {
    lines: Vec<(String, Value, usize)>,
    polls: u32,
    results: Option<Vec<(String, Result<Value, Fate>)>>,
    output_file: Option<String>,
    error_file: Option<String>,
}

#[derive(Default)]
struct State {
    files: HashMap<String, String>,
    jobs: HashMap<String, Job>,
    next: usize,
    submissions: HashMap<String, usize>,
    /// Every request body submitted (in a job or online), in order.
    bodies: Vec<Value>,
    /// The custom ids of every job line, in order of submission.
    submitted: Vec<String>,
    /// Tokens counted, in jobs and online.
    batch_tokens: (u64, u64),
    online_tokens: (u64, u64),
    online_requests: usize,
    /// The `anthropic-version` and `anthropic-beta` headers of each batch created.
    batch_headers: Vec<(Option<String>, Option<String>)>,
}

/// A running batch server.
pub struct BatchServer {
    pub api: Api,
    pub server: TestServer,
    state: Arc<Mutex<State>>,
}

impl BatchServer {
    /// A server for `api`: jobs end after `polls` polls, the model answers as `model` says, tokens are
    /// counted with `tokens`.
    pub fn start(
        api: Api,
        polls: u32,
        model: impl Fn(&Ask) -> Fate + Send + Sync + 'static,
        tokens: impl Fn(&str) -> usize + Send + Sync + 'static,
    ) -> BatchServer {
        let state = Arc::new(Mutex::new(State::default()));
        let model: Arc<Model> = Arc::new(model);
        let tokens: Arc<Tokenizer> = Arc::new(tokens);
        let shared = Arc::clone(&state);
        let server = TestServer::start(move |request| {
            let mut state = shared.lock().unwrap();
            handle(api, polls, &mut state, &*model, &*tokens, request)
        });
        BatchServer { api, server, state }
    }

    pub fn url(&self) -> String {
        self.server.url()
    }

    /// How many times each custom id was submitted in a job.
    pub fn submissions(&self) -> HashMap<String, usize> {
        self.state.lock().unwrap().submissions.clone()
    }

    /// Every request body submitted, in jobs and online.
    pub fn bodies(&self) -> Vec<Value> {
        self.state.lock().unwrap().bodies.clone()
    }

    /// The `anthropic-version` and `anthropic-beta` headers of each batch created.
    pub fn batch_headers(&self) -> Vec<(Option<String>, Option<String>)> {
        self.state.lock().unwrap().batch_headers.clone()
    }

    /// How many polls the jobs had, all together.
    pub fn polls(&self) -> u32 {
        self.state
            .lock()
            .unwrap()
            .jobs
            .values()
            .map(|job| job.polls)
            .sum()
    }

    /// How many jobs were created.
    pub fn jobs(&self) -> usize {
        self.state.lock().unwrap().jobs.len()
    }

    /// The sizes of the jobs created, in requests.
    pub fn job_sizes(&self) -> Vec<usize> {
        let state = self.state.lock().unwrap();
        let mut sizes: Vec<(usize, usize)> = state
            .jobs
            .iter()
            .map(|(id, job)| (job_number(id), job.lines.len()))
            .collect();
        sizes.sort();
        sizes.into_iter().map(|(_, n)| n).collect()
    }

    /// Every job line: the job's id, the line's custom id and the document its request carries, in
    /// the order the jobs were created.
    pub fn job_lines(&self) -> Vec<(String, String, String)> {
        let api = self.api;
        let state = self.state.lock().unwrap();
        let mut jobs: Vec<(&String, &Job)> = state.jobs.iter().collect();
        jobs.sort_by_key(|(id, _)| job_number(id));
        jobs.into_iter()
            .flat_map(|(id, job)| {
                job.lines.iter().map(move |(custom_id, body, _)| {
                    let texts = user_texts(api, body);
                    let document = texts.first().cloned().unwrap_or_default();
                    (id.clone(), custom_id.clone(), document)
                })
            })
            .collect()
    }

    /// Prompt and completion tokens answered in jobs.
    pub fn batch_tokens(&self) -> (u64, u64) {
        self.state.lock().unwrap().batch_tokens
    }

    /// Prompt and completion tokens answered online, and how many online requests.
    pub fn online(&self) -> ((u64, u64), usize) {
        let state = self.state.lock().unwrap();
        (state.online_tokens, state.online_requests)
    }
}

fn job_number(id: &str) -> usize {
    id.rsplit(['_', '/', '-'])
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

fn handle(
    api: Api,
    polls: u32,
    state: &mut State,
    model: &Model,
    tokens: &Tokenizer,
    request: &Request,
) -> Reply {
    let path = request
        .path
        .split('?')
        .next()
        .unwrap_or_default()
        .to_owned();
    let post = request.method == "POST";
    match (api, post, path.as_str()) {
        (Api::OpenAi, true, "/v1/files") => openai_upload(state, request),
        (Api::OpenAi, true, "/v1/batches") => {
            let Some(file) = request.json["input_file_id"].as_str() else {
                return Reply::openai_error(400, "input_file_id is required");
            };
            if request.json["endpoint"] != "/v1/chat/completions"
                || request.json["completion_window"] != "24h"
            {
                return Reply::openai_error(400, "unsupported endpoint or completion window");
            }
            let Some(text) = state.files.get(file).cloned() else {
                return Reply::openai_error(404, "no such file");
            };
            let mut lines = Vec::new();
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                let Ok(line) = serde_json::from_str::<Value>(line) else {
                    return Reply::openai_error(400, "a line of the input file is not JSON");
                };
                if line["method"] != "POST" || line["url"] != "/v1/chat/completions" {
                    return Reply::openai_error(400, "a line has the wrong method or url");
                }
                let id = line["custom_id"].as_str().unwrap_or_default().to_owned();
                lines.push((id, line["body"].clone()));
            }
            let id = create(state, "batch_", lines);
            Reply::json(200, openai_batch(state, &id))
        }
        (Api::OpenAi, false, p) if p.starts_with("/v1/batches/") => {
            let id = p.trim_start_matches("/v1/batches/").to_owned();
            if !state.jobs.contains_key(&id) {
                return Reply::openai_error(404, "no such batch");
            }
            poll(api, polls, state, &id, model, tokens);
            Reply::json(200, openai_batch(state, &id))
        }
        (Api::OpenAi, false, p) if p.starts_with("/v1/files/") && p.ends_with("/content") => {
            let id = p
                .trim_start_matches("/v1/files/")
                .trim_end_matches("/content");
            match state.files.get(id) {
                Some(text) => Reply::Full {
                    status: 200,
                    headers: Vec::new(),
                    content_type: "application/octet-stream".into(),
                    body: text.clone().into_bytes(),
                },
                None => Reply::openai_error(404, "no such file"),
            }
        }
        (Api::Anthropic, true, "/v1/messages/batches") => {
            let Some(requests) = request.json["requests"].as_array() else {
                return Reply::json(
                    400,
                    json!({"type": "error", "error": {"type": "invalid_request_error", "message": "requests"}}),
                );
            };
            let lines = requests
                .iter()
                .map(|r| {
                    let id = r["custom_id"].as_str().unwrap_or_default().to_owned();
                    (id, r["params"].clone())
                })
                .collect();
            state.batch_headers.push((
                request.header("anthropic-version").map(str::to_owned),
                request.header("anthropic-beta").map(str::to_owned),
            ));
            let id = create(state, "msgbatch_", lines);
            Reply::json(200, anthropic_batch(state, &id))
        }
        (Api::Anthropic, false, p) if p.starts_with("/v1/messages/batches/") => {
            let rest = p.trim_start_matches("/v1/messages/batches/");
            let (id, results) = match rest.strip_suffix("/results") {
                Some(id) => (id.to_owned(), true),
                None => (rest.to_owned(), false),
            };
            if !state.jobs.contains_key(&id) {
                return Reply::json(
                    404,
                    json!({"type": "error", "error": {"type": "not_found_error", "message": "no such batch"}}),
                );
            }
            if results {
                return anthropic_results(state, &id);
            }
            poll(api, polls, state, &id, model, tokens);
            Reply::json(200, anthropic_batch(state, &id))
        }
        (Api::Gemini, true, p) if p.ends_with(":batchGenerateContent") => {
            let Some(requests) =
                request.json["batch"]["input_config"]["requests"]["requests"].as_array()
            else {
                return Reply::json(
                    400,
                    json!({"error": {"code": 400, "message": "no inline requests", "status": "INVALID_ARGUMENT"}}),
                );
            };
            let lines = requests
                .iter()
                .map(|r| {
                    let id = r["metadata"]["key"].as_str().unwrap_or_default().to_owned();
                    (id, r["request"].clone())
                })
                .collect();
            let id = create(state, "batches/", lines);
            Reply::json(200, gemini_operation(state, &id))
        }
        (Api::Gemini, false, p) if p.starts_with("/v1beta/batches/") => {
            let id = p.trim_start_matches("/v1beta/").to_owned();
            if !state.jobs.contains_key(&id) {
                return Reply::json(
                    404,
                    json!({"error": {"code": 404, "message": "no such batch", "status": "NOT_FOUND"}}),
                );
            }
            poll(api, polls, state, &id, model, tokens);
            Reply::json(200, gemini_operation(state, &id))
        }
        (_, true, p) if online_path(api, p) => {
            state.bodies.push(request.json.clone());
            state.online_requests += 1;
            let ask = ask(api, "", &request.json, 0);
            match model(&ask) {
                Fate::Answer(text) => {
                    let (prompt, completion) = count(api, &request.json, &text, tokens);
                    state.online_tokens.0 += prompt;
                    state.online_tokens.1 += completion;
                    // Streamed when the request asks, as the online API does.
                    let answer = crate::support::Answer::new(text).usage(prompt, completion);
                    match api {
                        Api::OpenAi => Reply::openai(request, &answer),
                        Api::Anthropic => crate::support::providers::anthropic(request, &answer),
                        Api::Gemini => crate::support::providers::gemini(request, &answer),
                    }
                }
                _ => Reply::openai_error(500, "the model failed"),
            }
        }
        _ => Reply::text(
            404,
            format!("no route for {} {}", request.method, request.path),
        ),
    }
}

fn online_path(api: Api, path: &str) -> bool {
    match api {
        Api::OpenAi => path == "/v1/chat/completions",
        Api::Anthropic => path == "/v1/messages",
        Api::Gemini => path.ends_with(":generateContent"),
    }
}

/// The Files API: a multipart form with `purpose=batch` and the file.
fn openai_upload(state: &mut State, request: &Request) -> Reply {
    let Some(kind) = request.header("content-type") else {
        return Reply::openai_error(400, "no content type");
    };
    let Some(boundary) = kind.split("boundary=").nth(1) else {
        return Reply::openai_error(400, "not multipart/form-data");
    };
    let mut purpose = None;
    let mut file = None;
    for part in request.body.split(&format!("--{boundary}")) {
        let Some((head, body)) = part.split_once("\r\n\r\n") else {
            continue;
        };
        let body = body.strip_suffix("\r\n").unwrap_or(body);
        if head.contains("name=\"purpose\"") {
            purpose = Some(body.to_owned());
        } else if head.contains("name=\"file\"") && head.contains("filename=") {
            file = Some(body.to_owned());
        }
    }
    if purpose.as_deref() != Some("batch") {
        return Reply::openai_error(400, "purpose must be batch");
    }
    let Some(file) = file else {
        return Reply::openai_error(400, "no file");
    };
    state.next += 1;
    let id = format!("file-{}", state.next);
    state.files.insert(id.clone(), file);
    Reply::json(200, json!({"id": id, "object": "file", "purpose": "batch"}))
}

/// Records a new job of `lines`: its id.
fn create(state: &mut State, prefix: &str, lines: Vec<(String, Value)>) -> String {
    state.next += 1;
    let id = format!("{prefix}{}", state.next);
    let lines = lines
        .into_iter()
        .map(|(custom_id, body)| {
            let earlier = state.submissions.entry(custom_id.clone()).or_insert(0);
            let before = *earlier;
            *earlier += 1;
            state.bodies.push(body.clone());
            state.submitted.push(custom_id.clone());
            (custom_id, body, before)
        })
        .collect();
    state.jobs.insert(
        id.clone(),
        Job {
            lines,
            polls: 0,
            results: None,
            output_file: None,
            error_file: None,
        },
    );
    id
}

/// One more poll of job `id`: after `polls` of them, the job runs its requests.
fn poll(api: Api, polls: u32, state: &mut State, id: &str, model: &Model, tokens: &Tokenizer) {
    let Some(job) = state.jobs.get_mut(id) else {
        return;
    };
    job.polls += 1;
    if job.polls < polls || job.results.is_some() {
        return;
    }
    let mut results = Vec::new();
    let mut counted = (0, 0);
    for (custom_id, body, before) in &job.lines {
        let fate = model(&ask(api, custom_id, body, *before));
        match fate {
            Fate::Answer(text) => {
                let (prompt, completion) = count(api, body, &text, tokens);
                counted.0 += prompt;
                counted.1 += completion;
                results.push((
                    custom_id.clone(),
                    Ok(answer_body(api, &text, prompt, completion)),
                ));
            }
            other => results.push((custom_id.clone(), Err(other))),
        }
    }
    job.results = Some(results);
    state.batch_tokens.0 += counted.0;
    state.batch_tokens.1 += counted.1;
    if api == Api::OpenAi {
        openai_files(state, id);
    }
}

/// What the model sees of a request body.
fn ask(api: Api, custom_id: &str, body: &Value, earlier_submissions: usize) -> Ask {
    let texts = user_texts(api, body);
    Ask {
        custom_id: custom_id.to_owned(),
        document: texts.first().cloned().unwrap_or_default(),
        user_turns: texts.len(),
        earlier_submissions,
    }
}

/// The texts of the user turns of a request body.
fn user_texts(api: Api, body: &Value) -> Vec<String> {
    let empty = Vec::new();
    let text_of = |content: &Value, key: &str| match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p[key].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    };
    match api {
        Api::OpenAi | Api::Anthropic => body["messages"]
            .as_array()
            .unwrap_or(&empty)
            .iter()
            .filter(|m| m["role"] == "user")
            .map(|m| text_of(&m["content"], "text"))
            .collect(),
        Api::Gemini => body["contents"]
            .as_array()
            .unwrap_or(&empty)
            .iter()
            .filter(|m| m["role"] == "user")
            .map(|m| text_of(&m["parts"], "text"))
            .collect(),
    }
}

/// Prompt tokens (every text of the request, system and schema included) and completion tokens.
fn count(api: Api, body: &Value, answer: &str, tokens: &Tokenizer) -> (u64, u64) {
    let mut prompt = 0;
    let mut strings = Vec::new();
    collect_strings(body, &mut strings);
    for text in strings {
        prompt += tokens(&text);
    }
    let schema = match api {
        Api::OpenAi => &body["response_format"],
        Api::Anthropic if body["output_format"].is_object() => &body["output_format"],
        Api::Anthropic => &body["output_config"],
        Api::Gemini => &body["generationConfig"],
    };
    prompt += tokens(&schema.to_string());
    (prompt as u64, tokens(answer) as u64)
}

/// The message texts of a body (not its schema, counted whole).
fn collect_strings(body: &Value, out: &mut Vec<String>) {
    for key in ["system", "messages", "contents", "systemInstruction"] {
        walk(&body[key], out);
    }
}

fn walk(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|v| walk(v, out)),
        Value::Object(map) => map
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "role" | "type"))
            .for_each(|(_, v)| walk(v, out)),
        _ => {}
    }
}

/// The online answer body of each provider.
fn answer_body(api: Api, text: &str, prompt: u64, completion: u64) -> Value {
    match api {
        Api::OpenAi => json!({
            "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-test",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
        }),
        Api::Anthropic => json!({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
            "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
            "usage": {"input_tokens": prompt, "output_tokens": completion},
        }),
        Api::Gemini => json!({
            "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": prompt, "candidatesTokenCount": completion, "totalTokenCount": prompt + completion},
            "modelVersion": "gemini-test",
        }),
    }
}

/// The batch object, with its status as the polls so far make it.
fn openai_batch(state: &State, id: &str) -> Value {
    let Some(job) = state.jobs.get(id) else {
        return json!({});
    };
    let total = job.lines.len();
    let status = match (&job.results, job.polls) {
        (Some(_), _) => "completed",
        (None, 0) => "validating",
        (None, 1) => "in_progress",
        (None, _) => "finalizing",
    };
    json!({
        "id": id, "object": "batch", "endpoint": "/v1/chat/completions", "status": status,
        "output_file_id": job.output_file, "error_file_id": job.error_file,
        "request_counts": {"total": total, "completed": if job.results.is_some() { total } else { 0 }, "failed": 0},
    })
}

/// Writes the output and error files of an ended OpenAI job, lines in reverse order (the API keeps
/// no order).
fn openai_files(state: &mut State, id: &str) {
    let Some(job) = state.jobs.get(id) else {
        return;
    };
    let mut output = String::new();
    let mut errors = String::new();
    for (custom_id, result) in job.results.iter().flatten().rev() {
        match result {
            Ok(body) => output.push_str(&format!(
                "{}\n",
                json!({"id": "batch_req", "custom_id": custom_id, "response": {"status_code": 200, "request_id": "req", "body": body}, "error": null})
            )),
            Err(Fate::Errored(status)) => output.push_str(&format!(
                "{}\n",
                json!({"id": "batch_req", "custom_id": custom_id, "response": {"status_code": status, "request_id": "req", "body": {"error": {"message": "the server had an error", "type": "server_error"}}}, "error": null})
            )),
            Err(_) => errors.push_str(&format!(
                "{}\n",
                json!({"id": "batch_req", "custom_id": custom_id, "response": null, "error": {"code": "batch_expired", "message": "This request could not be executed before the completion window expired."}})
            )),
        }
    }
    state.next += 1;
    let out_id = format!("file-{}", state.next);
    state.files.insert(out_id.clone(), output);
    let err_id = (!errors.is_empty()).then(|| {
        state.next += 1;
        format!("file-{}", state.next)
    });
    if let Some(err_id) = &err_id {
        state.files.insert(err_id.clone(), errors);
    }
    if let Some(job) = state.jobs.get_mut(id) {
        job.output_file = Some(out_id);
        job.error_file = err_id;
    }
}

fn anthropic_batch(state: &State, id: &str) -> Value {
    let Some(job) = state.jobs.get(id) else {
        return json!({});
    };
    let ended = job.results.is_some();
    let total = job.lines.len();
    json!({
        "id": id, "type": "message_batch",
        "processing_status": if ended { "ended" } else { "in_progress" },
        "request_counts": {"processing": if ended { 0 } else { total }, "succeeded": if ended { total } else { 0 }, "errored": 0, "canceled": 0, "expired": 0},
        "results_url": if ended { Value::String(format!("https://elsewhere.example/v1/messages/batches/{id}/results")) } else { Value::Null },
    })
}

fn anthropic_results(state: &State, id: &str) -> Reply {
    let Some(results) = state.jobs.get(id).and_then(|job| job.results.as_ref()) else {
        return Reply::json(
            409,
            json!({"type": "error", "error": {"type": "invalid_request_error", "message": "the batch has not ended"}}),
        );
    };
    let mut text = String::new();
    for (custom_id, result) in results.iter().rev() {
        let result = match result {
            Ok(message) => json!({"type": "succeeded", "message": message}),
            Err(Fate::Errored(status)) => {
                let kind = if *status == 400 {
                    "invalid_request_error"
                } else {
                    "api_error"
                };
                json!({"type": "errored", "error": {"type": "error", "error": {"type": kind, "message": "the request failed"}}})
            }
            Err(_) => json!({"type": "expired"}),
        };
        text.push_str(&format!(
            "{}\n",
            json!({"custom_id": custom_id, "result": result})
        ));
    }
    Reply::Full {
        status: 200,
        headers: Vec::new(),
        content_type: "application/binary".into(),
        body: text.into_bytes(),
    }
}

fn gemini_operation(state: &State, id: &str) -> Value {
    let Some(job) = state.jobs.get(id) else {
        return json!({});
    };
    let total = job.lines.len().to_string();
    let mut operation = json!({
        "name": id,
        "metadata": {
            "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch",
            "model": "models/gemini-test",
            "state": if job.results.is_some() { "BATCH_STATE_SUCCEEDED" } else if job.polls == 0 { "BATCH_STATE_PENDING" } else { "BATCH_STATE_RUNNING" },
            "batchStats": {"requestCount": total},
        },
        "done": job.results.is_some(),
    });
    if let Some(results) = &job.results {
        // In input order, without the keys: joined by order.
        let inlined: Vec<Value> = results
            .iter()
            .map(|(_, result)| match result {
                Ok(response) => json!({"response": response}),
                Err(Fate::Errored(status)) => {
                    let code = if *status == 400 { 3 } else { 14 };
                    json!({"error": {"code": code, "message": "the request failed"}})
                }
                Err(_) => json!({"error": {"code": 4, "message": "deadline exceeded"}}),
            })
            .collect();
        operation["response"] = json!({
            "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatchOutput",
            "inlinedResponses": {"inlinedResponses": inlined},
        });
    }
    operation
}
