//! Prompt caching against a local server that keeps Anthropic's documented cache accounting: the
//! prompt is read as blocks in the order tools, system, messages; a `cache_control` breakpoint caches
//! the prefix up to and including its block, if that prefix reaches the model's minimum length; at
//! most 4 breakpoints, and a longer TTL never after a shorter one (else 400); a request reads the
//! longest cached prefix ending at one of its breakpoints, writes the longer ones, and is billed
//! `input_tokens` for what follows the last breakpoint, `cache_read_input_tokens` and
//! `cache_creation_input_tokens` for the rest. Tokens are counted as one per four bytes of each block's
//! JSON (the server's stand-in for a tokenizer). Simplified: no time passes, so no entry expires, and
//! a hit is looked for at breakpoints only (the API also looks up to 20 blocks before each).
//!
//! Checked: breakpoints in every request of a batch with the same prefix, the reads and writes in the
//! report, and a breakpoint after the input that its repair reads.
//!
//! Also measured here: the billed prompt tokens of a 100-document batch with caching off and on
//! (`billed_prompt_tokens_of_a_100_document_batch`), and of a long document whose every chunk is sent
//! with the same long context before it, with and without the breakpoint after that context
//! (`billed_prompt_tokens_of_a_document_with_a_shared_context`); run with `--nocapture` to see the
//! figures.

use crate::support;

use llm_extract::batch::{Batch, Record};
use llm_extract::extract::{Example, Extractor};
use llm_extract::llm::{Anthropic, PromptCache, Usage};
use llm_extract::Schema;
use serde_json::{json, Value};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use support::types::Person;
use support::{wire, Reply, Request, TestServer};

/// Claude Sonnet's documented minimum cacheable prompt, in tokens.
const MIN_TOKENS: u64 = 1024;

/// The tokens of a block, as this server counts them.
fn tokens(block: &Value) -> u64 {
    (block.to_string().len() as u64).div_ceil(4)
}

/// One block of the prompt: its content without its breakpoint, its tokens, and its breakpoint's
/// TTL (`"5m"` or `"1h"`) if it has one.
struct Block {
    content: String,
    tokens: u64,
    ttl: Option<String>,
}

/// The prompt of a Messages request as blocks, in the order the cache reads them.
fn blocks(body: &Value) -> Vec<Block> {
    let mut all = Vec::new();
    let mut push = |block: &Value, role: &str| {
        let mut bare = block.clone();
        let ttl = bare
            .as_object_mut()
            .and_then(|o| o.remove("cache_control"))
            .map(|c| c["ttl"].as_str().unwrap_or("5m").to_owned());
        let content = format!("{role}:{bare}");
        all.push(Block {
            tokens: tokens(&bare),
            content,
            ttl,
        });
    };
    for tool in body["tools"].as_array().into_iter().flatten() {
        push(tool, "tool");
    }
    match &body["system"] {
        Value::String(text) => push(&json!({"type": "text", "text": text}), "system"),
        Value::Array(parts) => parts.iter().for_each(|p| push(p, "system")),
        _ => {}
    }
    for message in body["messages"].as_array().into_iter().flatten() {
        let role = message["role"].as_str().unwrap_or_default();
        match &message["content"] {
            Value::String(text) => push(&json!({"type": "text", "text": text}), role),
            Value::Array(parts) => parts.iter().for_each(|p| push(p, role)),
            _ => {}
        }
    }
    all
}

/// The cache of a server: the prefixes written, by their content.
#[derive(Default)]
struct PromptCacheServer {
    written: Mutex<HashSet<String>>,
    /// Every request's usage as the server billed it.
    billed: Mutex<Vec<Value>>,
}

impl PromptCacheServer {
    /// The usage of a request with these `blocks`, reading and writing the cache; or why the API
    /// refuses it.
    fn account(&self, blocks: &[Block]) -> Result<Value, String> {
        let breakpoints: Vec<usize> = (0..blocks.len())
            .filter(|&i| blocks[i].ttl.is_some())
            .collect();
        if breakpoints.len() > 4 {
            return Err(format!(
                "A maximum of 4 blocks with cache_control may be provided. Found {}.",
                breakpoints.len()
            ));
        }
        let ttls: Vec<&str> = breakpoints
            .iter()
            .filter_map(|&i| blocks[i].ttl.as_deref())
            .collect();
        if ttls
            .windows(2)
            .any(|pair| pair[0] == "5m" && pair[1] == "1h")
        {
            return Err("a ttl='1h' cache_control block must not come after a ttl='5m' one".into());
        }
        let total: u64 = blocks.iter().map(|b| b.tokens).sum();
        let prefix = |end: usize| -> (String, u64) {
            let text: Vec<&str> = blocks[..=end].iter().map(|b| b.content.as_str()).collect();
            (
                text.join("\u{1}"),
                blocks[..=end].iter().map(|b| b.tokens).sum(),
            )
        };
        let mut written = self.written.lock().unwrap();
        let cacheable: Vec<(String, u64)> = breakpoints
            .iter()
            .map(|&end| prefix(end))
            .filter(|(_, tokens)| *tokens >= MIN_TOKENS)
            .collect();
        let read = cacheable
            .iter()
            .filter(|(key, _)| written.contains(key))
            .map(|(_, tokens)| *tokens)
            .max()
            .unwrap_or(0);
        let longest = cacheable
            .iter()
            .map(|(_, tokens)| *tokens)
            .max()
            .unwrap_or(0);
        let created = longest.saturating_sub(read);
        for (key, _) in cacheable {
            written.insert(key);
        }
        let usage = json!({
            "input_tokens": total - read - created,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": created,
            "output_tokens": 9,
        });
        self.billed.lock().unwrap().push(usage.clone());
        Ok(usage)
    }

    /// The answer to `request`: the person its last message names, at the age it states.
    fn reply(&self, request: &Request) -> Reply {
        let last = request.json["messages"]
            .as_array()
            .and_then(|m| m.last())
            .cloned()
            .unwrap_or_default();
        let text = match &last["content"] {
            Value::String(text) => text.clone(),
            Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
            _ => String::new(),
        };
        let age: String = text.chars().filter(char::is_ascii_digit).collect();
        let answer = json!({"name": "Ada", "age": age.parse::<u64>().unwrap_or(0)}).to_string();
        self.reply_with(request, &answer)
    }

    /// `answer` to `request`, streamed as the Messages API streams, with the usage of its prompt.
    fn reply_with(&self, request: &Request, answer: &str) -> Reply {
        let usage = match self.account(&blocks(&request.json)) {
            Ok(usage) => usage,
            Err(message) => {
                return Reply::json(
                    400,
                    json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}}),
                )
            }
        };
        let event = |data: Value| {
            format!(
                "event: {}\ndata: {data}\n\n",
                data["type"].as_str().unwrap_or_default()
            )
        };
        let body = [
            event(json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                "model": request.json["model"], "content": [], "stop_reason": null, "usage": usage}})),
            event(json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})),
            event(json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": answer}})),
            event(json!({"type": "content_block_stop", "index": 0})),
            event(json!({"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": null},
                "usage": {"output_tokens": 9}})),
            event(json!({"type": "message_stop"})),
        ]
        .concat();
        Reply::Full {
            status: 200,
            headers: Vec::new(),
            content_type: wire::SSE.into(),
            body: body.into_bytes(),
        }
    }
}

/// A server keeping the cache accounting, and its state.
fn serve() -> (TestServer, Arc<PromptCacheServer>) {
    let state = Arc::new(PromptCacheServer::default());
    let served = Arc::clone(&state);
    (
        TestServer::start(move |request| served.reply(request)),
        state,
    )
}

/// The extraction setup of a run: instructions long enough to be cached, and two worked examples.
fn extractor(server: &TestServer, cache: PromptCache) -> Extractor<Anthropic> {
    let llm = Anthropic::builder("claude-sonnet-4-5")
        .base_url(server.url())
        .api_key("sk-ant-test-0123456789")
        .prompt_cache(cache)
        .build()
        .unwrap();
    let rules: String = (1..=60)
        .map(|n| format!("Rule {n}: a person's age is the number of whole years stated in the text, never guessed.\n"))
        .collect();
    Extractor::new(llm)
        .instructions(rules)
        .with_example(
            Example::new(
                "Grace, aged 85, wrote compilers.",
                Person {
                    name: "Grace".into(),
                    age: 85,
                },
            )
            .unwrap(),
        )
        .with_example(
            Example::new(
                "Alan was 41.",
                Person {
                    name: "Alan".into(),
                    age: 41,
                },
            )
            .unwrap(),
        )
}

/// Runs `documents` documents through a batch, one at a time; the usage each reported.
async fn run(extractor: Extractor<Anthropic>, documents: usize) -> Vec<Usage> {
    let records = (0..documents).map(|i| {
        Record::new(
            format!("d{i}"),
            format!("Ada is {} years old.", 20 + i % 70),
        )
    });
    let results = Batch::new(extractor)
        .concurrency(1)
        .extract_many(Person::schema(), records, |_| {})
        .await;
    results
        .iter()
        .map(|result| match &result.outcome {
            Ok(done) => done.report.usage,
            Err(e) => panic!("{}: {e}", result.id),
        })
        .collect()
}

/// The part of a request's prompt before its last breakpoint, as the server read it.
fn cached_prefix(request: &Request) -> String {
    let all = blocks(&request.json);
    let end = all
        .iter()
        .rposition(|b| b.ttl.is_some())
        .expect("a breakpoint");
    all[..=end]
        .iter()
        .map(|b| b.content.as_str())
        .collect::<Vec<_>>()
        .join("\u{1}")
}

#[tokio::test]
async fn breakpoints_are_stable_across_a_batch_and_cache_reads_are_counted() {
    let (server, _) = serve();
    let usages = run(extractor(&server, PromptCache::new()), 12).await;
    let requests = server.requests();
    assert_eq!(requests.len(), 12);
    for request in &requests {
        // The system prompt and the last worked example carry the breakpoints; the document does not.
        assert_eq!(
            request.json["system"][0]["cache_control"],
            json!({"type": "ephemeral"})
        );
        let messages = request.json["messages"].as_array().unwrap();
        assert_eq!(
            messages.len(),
            5,
            "two examples of two turns, then the document"
        );
        assert_eq!(
            messages[3]["content"][0]["cache_control"],
            json!({"type": "ephemeral"})
        );
        assert!(messages[4]["content"].is_string(), "{}", messages[4]);
        assert_eq!(
            cached_prefix(request),
            cached_prefix(&requests[0]),
            "the prefix changed"
        );
    }
    // The first request writes the prefix, every later one reads it; the report counts both.
    assert!(usages[0].cache_write_tokens >= MIN_TOKENS && usages[0].cache_read_tokens == 0);
    for usage in &usages[1..] {
        assert_eq!(usage.cache_read_tokens, usages[0].cache_write_tokens);
        assert_eq!(usage.cache_write_tokens, 0);
        assert!(
            usage.prompt_tokens > usage.cache_read_tokens,
            "the document is billed as input"
        );
    }
}

/// Prompt tokens as billed at Anthropic's prices relative to fresh input: a read 0.1, a five-minute
/// write 1.25.
fn billed(u: &Usage) -> f64 {
    let fresh = u.prompt_tokens - u.cache_read_tokens - u.cache_write_tokens;
    fresh as f64 + 0.1 * u.cache_read_tokens as f64 + 1.25 * u.cache_write_tokens as f64
}

#[tokio::test]
async fn billed_prompt_tokens_of_a_100_document_batch() {
    let (off_server, off) = serve();
    let (on_server, on) = serve();
    let without = run(extractor(&off_server, PromptCache::off()), 100).await;
    let with = run(extractor(&on_server, PromptCache::new()), 100).await;
    let sum = |usages: &[Usage]| usages.iter().fold(Usage::default(), |a, b| a + *b);
    let (without, with) = (sum(&without), sum(&with));
    println!(
        "caching off: {} prompt tokens, billed as {:.0}\ncaching on: {} prompt tokens ({} read from the cache, {} written), billed as {:.0} ({:.1}% of off)",
        without.prompt_tokens,
        billed(&without),
        with.prompt_tokens,
        with.cache_read_tokens,
        with.cache_write_tokens,
        billed(&with),
        100.0 * billed(&with) / billed(&without)
    );
    assert_eq!(
        without.prompt_tokens, with.prompt_tokens,
        "the same prompts either way"
    );
    assert_eq!(
        (without.cache_read_tokens, without.cache_write_tokens),
        (0, 0)
    );
    assert!(billed(&with) < 0.3 * billed(&without));
    // The server billed what the reports say.
    let server_total = |state: &PromptCacheServer, field: &str| -> u64 {
        state
            .billed
            .lock()
            .unwrap()
            .iter()
            .map(|u| u[field].as_u64().unwrap())
            .sum()
    };
    assert_eq!(
        server_total(&on, "cache_read_input_tokens"),
        with.cache_read_tokens
    );
    assert_eq!(server_total(&off, "input_tokens"), without.prompt_tokens);
}

#[tokio::test]
async fn a_breakpoint_after_the_input_lets_its_repair_read_the_document() {
    let state = Arc::new(PromptCacheServer::default());
    let served = Arc::clone(&state);
    // The first answer is invalid (an age in words); the repair, which comes with two more turns, is not.
    let server = TestServer::start(move |request| {
        let turns = request.json["messages"].as_array().map_or(0, Vec::len);
        let answer = match turns {
            5 => r#"{"name": "Ada", "age": "thirty"}"#,
            _ => r#"{"name": "Ada", "age": 30}"#,
        };
        served.reply_with(request, answer)
    });
    let document = format!(
        "Ada is 30 years old. {}",
        "She keeps the ledger. ".repeat(40)
    );
    let cache = PromptCache::new().input(Some(llm_extract::llm::CacheTtl::FiveMinutes));
    let done = extractor(&server, cache)
        .max_attempts(2)
        .extract::<Person>(document.as_str())
        .await
        .unwrap();
    assert_eq!(done.value.age, 30);
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    // The document carries the third breakpoint, in both requests.
    for request in &requests {
        assert_eq!(
            request.json["messages"][4]["content"][0]["cache_control"],
            json!({"type": "ephemeral"})
        );
    }
    let (first, repair) = (done.report.attempts[0].usage, done.report.attempts[1].usage);
    assert_eq!(first.cache_read_tokens, 0);
    // The repair reads everything up to and including the document, written by the first request.
    assert_eq!(repair.cache_read_tokens, first.cache_write_tokens);
    assert!(repair.cache_read_tokens > 0 && repair.cache_write_tokens == 0);
}

/// A glossary of about 1,300 tokens that a template sends before every chunk of a document.
fn glossary() -> String {
    (1..=60)
        .map(|n| {
            format!(
                "Term {n}: a party of clause {n} is a person who signs this agreement in person.\n"
            )
        })
        .collect()
}

/// A document of 12 paragraphs of about 700 bytes, each naming a person.
fn contract() -> String {
    (1..=12)
        .map(|n| {
            let filler = "The party agrees to the terms of the schedule. ".repeat(14);
            format!("Clause {n}. Ada is {} years old. {filler}\n\n", 20 + n)
        })
        .collect()
}

/// Reads the document through `cache`, the glossary before every chunk: the document's usage, and the
/// requests the server was sent.
async fn read_contract(cache: PromptCache) -> (Usage, Vec<Request>, Arc<PromptCacheServer>) {
    let state = Arc::new(PromptCacheServer::default());
    let served = Arc::clone(&state);
    let server = TestServer::start(move |request| {
        served.reply_with(request, r#"{"items": [{"name": "Ada", "age": 30}]}"#)
    });
    let llm = Anthropic::builder("claude-sonnet-4-5")
        .base_url(server.url())
        .api_key("sk-ant-test-0123456789")
        .prompt_cache(cache)
        .build()
        .unwrap();
    let document = contract();
    let done = Extractor::new(llm)
        .template(format!("{}\nText:\n{{{{text}}}}", glossary()))
        .chunk_bytes(800)
        .chunk_overlap(0)
        .extract_document::<Person>(document.as_str())
        .await
        .unwrap();
    assert_eq!(done.failed().count(), 0);
    assert!(done.chunks.len() >= 10, "{} chunks", done.chunks.len());
    (done.usage, server.requests(), state)
}

#[tokio::test]
async fn billed_prompt_tokens_of_a_document_with_a_shared_context() {
    let (off, _, _) = read_contract(PromptCache::off()).await;
    // The breakpoints there were before the shared context had one: the system prompt alone is too
    // short to be cached, and there are no worked examples, so nothing is.
    let (before, _, _) = read_contract(PromptCache::new().context(None)).await;
    let (with, requests, state) = read_contract(PromptCache::new()).await;
    println!(
        "a document of {} chunks, a {}-byte glossary before each:\ncaching off: {} prompt tokens, billed as {:.0}\nwithout the context's breakpoint: {} prompt tokens ({} read), billed as {:.0}\nwith it: {} prompt tokens ({} read from the cache, {} written), billed as {:.0} ({:.1}% of off)",
        requests.len(),
        glossary().len(),
        off.prompt_tokens,
        billed(&off),
        before.prompt_tokens,
        before.cache_read_tokens,
        billed(&before),
        with.prompt_tokens,
        with.cache_read_tokens,
        with.cache_write_tokens,
        billed(&with),
        100.0 * billed(&with) / billed(&off)
    );
    assert_eq!(before.cache_read_tokens + before.cache_write_tokens, 0);
    assert_eq!(off.prompt_tokens, before.prompt_tokens);
    // The context goes as a block of its own: a few tokens more of JSON, no more.
    assert!(with.prompt_tokens.abs_diff(off.prompt_tokens) <= 8 * requests.len() as u64);
    // Every request's input starts with the glossary, a block with its breakpoint, and the chunk
    // after it; the first request writes it, every later one reads it.
    for request in &requests {
        let input = &request.json["messages"][0]["content"];
        assert_eq!(input[0]["text"], glossary() + "\nText:\n", "{input}");
        assert_eq!(input[0]["cache_control"], json!({"type": "ephemeral"}));
        assert!(input[1]["text"].as_str().unwrap().contains("Ada is"));
        assert!(input[1].get("cache_control").is_none());
    }
    let billed_requests = state.billed.lock().unwrap().clone();
    let written = billed_requests[0]["cache_creation_input_tokens"]
        .as_u64()
        .unwrap();
    assert!(written >= MIN_TOKENS, "{written}");
    for usage in &billed_requests[1..] {
        assert_eq!(usage["cache_read_input_tokens"].as_u64(), Some(written));
        assert_eq!(usage["cache_creation_input_tokens"].as_u64(), Some(0));
    }
    assert!(billed(&with) < 0.5 * billed(&before));
}

#[test]
fn the_server_refuses_what_the_api_refuses() {
    let server = PromptCacheServer::default();
    let block = |ttl: Option<&str>| Block {
        content: "x".into(),
        tokens: 2000,
        ttl: ttl.map(str::to_owned),
    };
    assert!(server
        .account(&[block(Some("5m")), block(Some("1h"))])
        .is_err());
    assert!(server
        .account(&[block(Some("1h")), block(Some("5m"))])
        .is_ok());
    assert!(server
        .account(&(0..5).map(|_| block(Some("5m"))).collect::<Vec<_>>())
        .is_err());
}
