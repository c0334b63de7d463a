//! The embedded llama.cpp engine at server speed: side by side with llama.cpp's own
//! `llama-server`, prompt-prefix reuse on and off, one sequence vs four batched. Every ratio compares two
//! figures of the same run on the same machine.
//!
//! ```text
//! scripts/fetch-model.sh           # once: the default model
//! scripts/build-llama-server.sh    # once: llama-server from the llama-cpp-python sdist (benchmark only)
//! cargo bench --features llama-cpp --bench engine                 # everything
//! cargo bench --features llama-cpp --bench engine -- server       # one part: server, prefix, batched, threads
//! ```
//!
//! It is not a criterion benchmark: one sample is a batch of real generations lasting tens of seconds, so
//! each figure is one timed run after a warm-up (criterion's statistics need many samples), but for
//! **batched**, whose rounds are short enough to repeat and interleave. Set
//! `LLAMA_SERVER` to a llama-server binary to skip the build script; `LLM_EXTRACT_MODEL` picks another GGUF;
//! `BENCH_REUSE_PREFIX=0` turns the embedded engine's prompt-prefix reuse (on by default, as llama-server's
//! `cache_prompt`) off in the **server** and **threads** parts, to see what it is worth there.
//!
//! - **server**: a batch of 24 short invoices through [`Batch`] and one [`Extractor`] (the same prompt,
//!   schema, greedy decoding and 200-token limit on both sides), at concurrency 1 and 4: the embedded
//!   engine at its defaults vs llama-server at its defaults (`-np 4`), then both at one thread with
//!   `-np 1`/`-np 4` vs `parallel(1)`/`parallel(4)`. llama-server is reached through [`OpenAiCompatible`].
//! - **prefix**: 8 documents sharing a system prompt of about 600 tokens, one at a time: prompt reading
//!   time per document with `reuse_prefix(false)` vs `reuse_prefix(true)` (and the same answers).
//! - **batched**: aggregate generation tokens/s (prompt reading excluded) of one free-text sequence vs
//!   four at once (`parallel(4)`, end-of-generation masked so every sequence generates exactly
//!   `BENCH_TOKENS`, default 128), in `BENCH_ROUNDS` interleaved rounds (default 5): each round's ratio
//!   and their median.
//! - **threads**: the same batch as **server**, one at a time, with 1 thread vs all logical CPUs.

use llm_extract::batch::{Batch, Record};
use llm_extract::extract::Extractor;
use llm_extract::llm::llama_cpp::{model_path_from_env, LlamaCpp};
use llm_extract::{
    llm::ChatRequest,
    schema::{Dialect, Shape},
    Extract, Llm, OpenAiCompatible, Schema,
};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// An invoice, as the batch extracts it.
#[derive(Extract, Deserialize, Debug)]
#[allow(dead_code)]
struct Invoice {
    /// The invoice number, as printed.
    number: String,
    /// Who sent the invoice.
    vendor: String,
    /// The invoice date, as printed.
    date: String,
    /// The amount due.
    total: f64,
    /// The currency code of the total.
    currency: String,
}

const VENDORS: &[&str] = &[
    "Acme Tools Ltd",
    "Nordlicht GmbH",
    "Blue Harbor Supplies",
    "Café Lumière SARL",
    "Tanaka Precision Co.",
    "Green Valley Farms",
    "Orbital Parts Inc.",
    "Hollis & Sons",
];
const CURRENCIES: &[&str] = &["EUR", "USD", "GBP", "JPY"];

/// 24 short invoices, different enough that no two answers are alike.
fn invoices() -> Vec<Record> {
    invoice_texts()
        .into_iter()
        .enumerate()
        .map(|(i, text)| Record::new(format!("invoice-{i:02}"), text))
        .collect()
}

fn invoice_texts() -> Vec<String> {
    (0..24)
        .map(|i| {
            let vendor = VENDORS[i % VENDORS.len()];
            let currency = CURRENCIES[(i / 2) % CURRENCIES.len()];
            let text = format!(
                "INVOICE {n}\nFrom: {vendor}\nDate: 2024-{m:02}-{d:02}\n{qty} x service units at {unit}.00 \
                 each.\nTotal due: {total}.{c:02} {currency}. Payment within 30 days.",
                n = format_args!("INV-{:05}", 31_000 + i * 37),
                m = i % 12 + 1,
                d = (i * 7) % 28 + 1,
                qty = i % 5 + 1,
                unit = 40 + i * 3,
                total = (i % 5 + 1) * (40 + i * 3),
                c = (i * 13) % 100,
            );
            text
        })
        .collect()
}

/// The outcome of one timed batch.
struct Run {
    seconds: f64,
    ok: usize,
    completion_tokens: u64,
}

impl Run {
    fn docs_per_second(&self) -> f64 {
        24.0 / self.seconds
    }
}

async fn batch<L: Llm + 'static>(llm: L, concurrency: usize) -> Run {
    let extractor = Extractor::new(llm).max_tokens(200).temperature(0.0);
    let batch = Batch::new(extractor).concurrency(concurrency);
    let started = Instant::now();
    let results = batch
        .extract_many(Invoice::schema(), invoices(), |_| {})
        .await;
    Run {
        seconds: started.elapsed().as_secs_f64(),
        ok: results.iter().filter(|r| r.is_ok()).count(),
        completion_tokens: results.iter().map(|r| r.usage().completion_tokens).sum(),
    }
}

/// A warm-up batch, then the timed one.
async fn timed<L: Llm + Clone + 'static>(llm: &L, concurrency: usize) -> Run {
    let _ = batch(llm.clone(), concurrency).await;
    batch(llm.clone(), concurrency).await
}

fn logical_cpus() -> usize {
    std::thread::available_parallelism().map_or(2, usize::from)
}

fn embedded(model: &Path, parallel: Option<usize>, threads: Option<usize>) -> LlamaCpp {
    let mut builder = LlamaCpp::builder(model);
    if let Some(p) = parallel {
        builder = builder.parallel(p);
    }
    if let Some(t) = threads {
        builder = builder.threads(t);
    }
    if std::env::var("BENCH_REUSE_PREFIX").is_ok_and(|v| v == "0") {
        builder = builder.reuse_prefix(false);
    }
    builder.build().unwrap_or_else(|e| fail(&e))
}

/// A running llama-server, stopped when dropped.
struct Server {
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn server_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("LLAMA_SERVER").filter(|p| !p.is_empty()) {
        return PathBuf::from(path);
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/build-llama-server.sh");
    eprintln!("building llama-server with {} (once) ...", script.display());
    let out = Command::new("bash")
        .arg(&script)
        .stderr(Stdio::inherit())
        .output()
        .unwrap_or_else(|e| fail(&e));
    if !out.status.success() {
        fail(&"scripts/build-llama-server.sh failed");
    }
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// Starts llama-server on `model` with `slots` slots and `threads` threads (llama-server's own default
/// when `None`), and waits until it is ready.
async fn start_server(binary: &Path, model: &Path, slots: usize, threads: Option<usize>) -> Server {
    let port = 18_000 + (std::process::id() % 1000) as u16 + slots as u16 * 7;
    let mut command = Command::new(binary);
    command
        .arg("-m")
        .arg(model)
        .args(["--port", &port.to_string(), "--host", "127.0.0.1"])
        .args(["-np", &slots.to_string()])
        .args(["-c", &(4096 * slots).to_string()])
        .arg("--jinja")
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    if let Some(t) = threads {
        command.args(["-t", &t.to_string(), "-tb", &t.to_string()]);
    }
    let child = command.spawn().unwrap_or_else(|e| fail(&e));
    let server = Server {
        child,
        url: format!("http://127.0.0.1:{port}"),
    };
    for _ in 0..600 {
        if healthy(port) {
            return server;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    fail(&"llama-server did not become ready in 60 s");
}

/// `GET /health` answers 200 (llama-server answers 503 while it loads the model).
fn healthy(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let request = format!("GET /health HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n");
    let mut answer = String::new();
    stream.write_all(request.as_bytes()).is_ok()
        && stream.read_to_string(&mut answer).is_ok()
        && answer.split_whitespace().nth(1) == Some("200")
}

fn openai(server: &Server) -> OpenAiCompatible {
    OpenAiCompatible::new(format!("{}/v1", server.url), "local").unwrap_or_else(|e| fail(&e))
}

fn report(label: &str, ours: &Run, theirs: &Run) {
    println!(
        "{label:<58} embedded {:>6.2} s ({:>4.2} docs/s, {} ok, {} tokens) | llama-server {:>6.2} s ({:>4.2} docs/s, {} ok, {} tokens) | embedded time / server time {:.2}x",
        ours.seconds,
        ours.docs_per_second(),
        ours.ok,
        ours.completion_tokens,
        theirs.seconds,
        theirs.docs_per_second(),
        theirs.ok,
        theirs.completion_tokens,
        ours.seconds / theirs.seconds
    );
}

async fn server_part(model: &Path) {
    let binary = server_binary();
    println!("== embedded vs llama-server: 24 invoices, greedy, at most 200 tokens each");
    // Both at their defaults.
    let ours = embedded(model, None, None);
    let server = start_server(&binary, model, 4, None).await;
    let theirs = openai(&server);
    for concurrency in [1, 4] {
        let a = timed(&ours, concurrency).await;
        let b = timed(&theirs, concurrency).await;
        report(
            &format!("concurrency {concurrency}, both at their defaults (server -np 4)"),
            &a,
            &b,
        );
    }
    drop(server);
    drop(ours);
    // Both at one thread, slots equal to the concurrency.
    for concurrency in [1, 4] {
        let ours = embedded(model, Some(concurrency), Some(1));
        let server = start_server(&binary, model, concurrency, Some(1)).await;
        let theirs = openai(&server);
        let a = timed(&ours, concurrency).await;
        let b = timed(&theirs, concurrency).await;
        report(
            &format!("concurrency {concurrency}, 1 thread each, parallel = -np = {concurrency}"),
            &a,
            &b,
        );
    }
}

async fn threads_part(model: &Path) {
    let all = logical_cpus();
    println!("== threads: 24 invoices, one at a time and four at a time, 1 vs {all} threads");
    for concurrency in [1, 4] {
        let one = timed(&embedded(model, Some(4), Some(1)), concurrency).await;
        let every = timed(&embedded(model, Some(4), Some(all)), concurrency).await;
        println!(
            "concurrency {concurrency}: 1 thread {:.2} s, {all} threads {:.2} s: {all} threads / 1 thread time {:.2}x",
            one.seconds,
            every.seconds,
            every.seconds / one.seconds
        );
    }
}

/// A system prompt of about 600 tokens: instructions and worked examples.
fn long_system_prompt() -> String {
    let mut text = String::from(
        "You extract invoice data for an accounting system. Read the document and answer with one JSON \
         object. Copy numbers exactly as printed, keep the currency code, and never invent a value.\n",
    );
    for i in 0..14 {
        text.push_str(&format!(
            "Example {i}: \"Invoice INV-{:05} from {} dated 2023-0{}-1{} for {}.00 {}\" gives number \
             INV-{:05}, vendor {}, total {}.00, currency {}.\n",
            20_000 + i * 11,
            VENDORS[i % VENDORS.len()],
            i % 9 + 1,
            i % 9,
            100 + i * 17,
            CURRENCIES[i % CURRENCIES.len()],
            20_000 + i * 11,
            VENDORS[i % VENDORS.len()],
            100 + i * 17,
            CURRENCIES[i % CURRENCIES.len()],
        ));
    }
    text
}

fn prefix_part(model: &Path) {
    let system = long_system_prompt();
    let schema = Invoice::schema()
        .for_dialect(Dialect::Gbnf, Shape::One)
        .unwrap_or_else(|e| fail(&e))
        .clone();
    let requests: Vec<ChatRequest> = invoice_texts()
        .into_iter()
        .take(8)
        .map(|text| {
            ChatRequest::new(text)
                .with_system(system.clone())
                .with_schema("Invoice", schema.clone())
                .with_max_tokens(64)
        })
        .collect();
    let run = |reuse: bool| {
        let llm = LlamaCpp::builder(model)
            .reuse_prefix(reuse)
            .build()
            .unwrap_or_else(|e| fail(&e));
        // Warm-up: the context exists and the first prefix is cached before timing.
        let _ = llm.generate(&requests[0], |_| true);
        let mut prompt = Duration::ZERO;
        let mut prompt_tokens = 0;
        let mut reused = 0;
        let mut answers = Vec::new();
        for request in &requests[1..] {
            let g = llm.generate(request, |_| true).unwrap_or_else(|e| fail(&e));
            prompt += g.prompt_time;
            prompt_tokens += g.response.usage.prompt_tokens;
            reused += g.reused_prompt_tokens;
            answers.push(g.response.text);
        }
        let n = (requests.len() - 1) as u32;
        (
            prompt / n,
            prompt_tokens / u64::from(n),
            reused / u64::from(n),
            answers,
        )
    };
    let (off, tokens, _, answers_off) = run(false);
    let (on, _, reused, answers_on) = run(true);
    println!("== prompt-prefix reuse: 7 documents after a warm-up, {tokens} prompt tokens each on average");
    println!(
        "prompt reading per document: reuse off {off:.1?}, reuse on {on:.1?} ({reused} tokens reused per document): on / off time {:.2}x; same answers: {}",
        on.as_secs_f64() / off.as_secs_f64(),
        answers_off == answers_on
    );
}

fn batched_part(model: &Path) {
    let tokens = std::env::var("BENCH_TOKENS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(128u32);
    let rounds = std::env::var("BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5usize)
        .max(1);
    let llm = LlamaCpp::builder(model)
        .parallel(4)
        .ignore_eos(true)
        .build()
        .unwrap_or_else(|e| fail(&e));
    let request = |i: usize| {
        ChatRequest::new(format!(
            "Write a long story about a lighthouse keeper, number {i}."
        ))
        .with_max_tokens(tokens)
    };
    let _ = llm.generate(&request(99), |_| true);
    // Generation only, as llama-batched-bench's S_TG: tokens over the time from the first answer
    // token's scores to the last token (prompt reading excluded); four sequences admitted together
    // generate side by side, so their aggregate rate is all their tokens over the longest of their
    // generation times.
    let one = || {
        let g = llm
            .generate(&request(0), |_| true)
            .unwrap_or_else(|e| fail(&e));
        g.response.usage.completion_tokens as f64 / g.generation_time.as_secs_f64()
    };
    let four = || {
        let generations: Vec<_> = std::thread::scope(|scope| {
            let handles: Vec<_> = (1..=4)
                .map(|i| {
                    let llm = &llm;
                    let request = request(i);
                    scope.spawn(move || llm.generate(&request, |_| true))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| match h.join() {
                    Ok(Ok(g)) => g,
                    _ => fail(&"a batched generation failed"),
                })
                .collect()
        });
        let total: u64 = generations
            .iter()
            .map(|g| g.response.usage.completion_tokens)
            .sum();
        let longest = generations
            .iter()
            .map(|g| g.generation_time)
            .max()
            .unwrap_or_default();
        total as f64 / longest.as_secs_f64()
    };
    println!(
        "== one sequence vs four batched: {tokens} tokens each, free text, greedy, {rounds} interleaved rounds"
    );
    let mut ratios = Vec::new();
    for round in 1..=rounds {
        let (one_rate, four_rate) = (one(), four());
        ratios.push(four_rate / one_rate);
        println!(
            "round {round}: one {one_rate:.1} tokens/s; four batched {four_rate:.1} tokens/s aggregate: four / one {:.2}x",
            four_rate / one_rate
        );
    }
    ratios.sort_by(f64::total_cmp);
    let median = ratios.get(ratios.len() / 2).copied().unwrap_or_default();
    println!("four / one, median of {rounds} rounds: {median:.2}x");
}

fn fail(e: &dyn std::fmt::Display) -> ! {
    eprintln!("engine bench: {e}");
    std::process::exit(1)
}

#[tokio::main]
async fn main() {
    let model = model_path_from_env().unwrap_or_else(|e| fail(&e));
    let parts: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let wants = |part: &str| parts.is_empty() || parts.iter().any(|p| p == part);
    println!("model {}, {} logical CPUs", model.display(), logical_cpus());
    if wants("batched") {
        batched_part(&model);
    }
    if wants("prefix") {
        prefix_part(&model);
    }
    if wants("threads") {
        threads_part(&model).await;
    }
    if wants("server") {
        server_part(&model).await;
    }
}
