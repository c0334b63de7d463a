//! The evaluation set: 41 short real-world-style texts (invoices, contacts, events, reviews) with the
//! answers written down by careful reading, run through a model; reports per kind and overall the share
//! of documents with a valid value, field accuracy (defined in `score.rs`), completion tokens per
//! document and wall time.
//!
//! ```sh
//! cargo run --release --features llama-cpp --example eval                # without examples
//! cargo run --release --features llama-cpp --example eval -- --examples  # with 2 examples per kind
//! ```
//!
//! Options: `--examples` shows the model the worked examples in `examples/data/eval/examples/` (texts not
//! in the set); `--max-tokens N` caps each answer (default: the library's, derived from the schema); `--kind NAME`
//! runs one kind (invoices, contacts, events, reviews; repeatable); `--verbose` prints every document;
//! `--no-guard` turns the loop guard off (`LoopGuard::off()`). Decoding is greedy (`temperature 0`). The backend is chosen as in the other examples
//! (`support/backend.rs`): the embedded default model unless `--ollama` or `OLLAMA_HOST`.

#[path = "../support/backend.rs"]
mod backend;
mod kinds;
mod score;

use kinds::{Contact, Event, Invoice, Review};
use llm_extract::extract::Extractor;
use llm_extract::parse::LoopGuard;
use llm_extract::{Extract, Finish, Llm};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::error::Error;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// One line of an evaluation file.
#[derive(Deserialize)]
struct Case {
    id: String,
    text: String,
    expected: Value,
    /// Other answers a careful reader would also accept, per field.
    #[serde(default)]
    accept: Option<Value>,
}

/// One line of an examples file.
#[derive(Deserialize)]
struct ExampleLine<T> {
    text: String,
    value: T,
}

struct Options {
    examples: bool,
    guard: bool,
    /// `None`: the library's default (derived from the schema).
    max_tokens: Option<u32>,
    kinds: Vec<String>,
    verbose: bool,
    data: PathBuf,
}

/// What one kind (or the whole set) scored.
#[derive(Default)]
struct Tally {
    documents: usize,
    valid: usize,
    matched: usize,
    fields: usize,
    tokens: Vec<u64>,
    capped: usize,
    copied: usize,
    elapsed: Duration,
}

impl Tally {
    fn add(&mut self, other: &Tally) {
        self.documents += other.documents;
        self.valid += other.valid;
        self.matched += other.matched;
        self.fields += other.fields;
        self.tokens.extend(&other.tokens);
        self.capped += other.capped;
        self.copied += other.copied;
        self.elapsed += other.elapsed;
    }

    fn row(&self, name: &str) -> String {
        let mut sorted = self.tokens.clone();
        sorted.sort_unstable();
        let n = sorted.len();
        let at = |q: f64| -> u64 {
            if n == 0 {
                return 0;
            }
            // Nearest rank.
            let rank = ((q * n as f64).ceil() as usize).clamp(1, n);
            sorted[rank - 1]
        };
        let mean = if n == 0 {
            0.0
        } else {
            sorted.iter().sum::<u64>() as f64 / n as f64
        };
        let share = |a: usize, b: usize| {
            if b == 0 {
                0.0
            } else {
                100.0 * a as f64 / b as f64
            }
        };
        format!(
            "| {name} | {} | {}/{} ({:.0}%) | {}/{} ({:.1}%) | {:.0} | {} | {} | {} | {} | {} | {:.1} s |",
            self.documents,
            self.valid,
            self.documents,
            share(self.valid, self.documents),
            self.matched,
            self.fields,
            share(self.matched, self.fields),
            mean,
            at(0.5),
            at(0.95),
            sorted.last().copied().unwrap_or(0),
            self.capped,
            self.copied,
            self.elapsed.as_secs_f64(),
        )
    }
}

fn options() -> Result<Options, Box<dyn Error>> {
    let mut options = Options {
        examples: false,
        guard: true,
        max_tokens: None,
        kinds: Vec::new(),
        verbose: false,
        data: Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/data/eval"),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--examples" => options.examples = true,
            "--no-guard" => options.guard = false,
            "--verbose" => options.verbose = true,
            "--ollama" => {}
            "--max-tokens" => {
                options.max_tokens =
                    Some(args.next().ok_or("--max-tokens needs a number")?.parse()?)
            }
            "--kind" => options
                .kinds
                .push(args.next().ok_or("--kind needs a name")?),
            "--data" => options.data = args.next().ok_or("--data needs a directory")?.into(),
            other => return Err(format!("unknown option `{other}`").into()),
        }
    }
    Ok(options)
}

fn read_lines<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>, Box<dyn Error>> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            serde_json::from_str(line)
                .map_err(|e| format!("{}:{}: {e}", path.display(), i + 1).into())
        })
        .collect()
}

async fn run_kind<T: Extract + Serialize>(
    llm: &dyn Llm,
    kind: &str,
    options: &Options,
) -> Result<Tally, Box<dyn Error>> {
    let cases: Vec<Case> = read_lines(&options.data.join(format!("{kind}.jsonl")))?;
    let mut extractor = Extractor::new(llm).temperature(0.0);
    if let Some(max_tokens) = options.max_tokens {
        extractor = extractor.max_tokens(max_tokens);
    }
    if !options.guard {
        extractor = extractor.loop_guard(LoopGuard::off());
    }
    let mut shown: Vec<Value> = Vec::new();
    if options.examples {
        let path = options.data.join(format!("examples/{kind}.jsonl"));
        for example in read_lines::<ExampleLine<T>>(&path)? {
            shown.push(serde_json::to_value(&example.value)?);
            extractor = extractor.example(example.text, example.value)?;
        }
    }
    let mut tally = Tally::default();
    let started = Instant::now();
    for case in &cases {
        let outcome = extractor.extract::<T>(case.text.as_str()).await;
        let (answer, attempts, usage) = match &outcome {
            Ok(done) => (
                Some(serde_json::to_value(&done.value)?),
                done.report.attempts.as_slice(),
                done.report.usage,
            ),
            Err(err) => (None, err.attempts(), err.usage()),
        };
        let (matched, fields) =
            score::fields(&case.expected, case.accept.as_ref(), answer.as_ref());
        let capped = attempts
            .iter()
            .filter(|a| a.finish == Some(Finish::Length))
            .count();
        tally.documents += 1;
        tally.valid += usize::from(answer.is_some());
        tally.matched += matched;
        tally.fields += fields;
        tally.tokens.push(usage.completion_tokens);
        tally.capped += capped;
        tally.copied += usize::from(answer.as_ref().is_some_and(|a| shown.contains(a)));
        if options.verbose {
            let shown_answer = match (&answer, &outcome) {
                (Some(answer), _) => answer.to_string(),
                (None, Err(err)) => format!("error: {err}"),
                (None, Ok(_)) => String::new(),
            };
            eprintln!(
                "{} {matched}/{fields} fields, {} completion tokens, {} attempt(s), {capped} capped: {shown_answer}",
                case.id,
                usage.completion_tokens,
                attempts.len()
            );
            for (i, attempt) in attempts.iter().enumerate() {
                eprintln!(
                    "  attempt {}: {:?}, {} tokens, finish {:?}, loop {:?}: {}",
                    i + 1,
                    attempt.kind,
                    attempt.usage.completion_tokens,
                    attempt.finish,
                    attempt.repetition.map(|r| (r.kind, r.start)),
                    attempt.raw
                );
            }
        }
    }
    tally.elapsed = started.elapsed();
    Ok(tally)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let options = options()?;
    let llm = backend::from_env_and_args()?;
    println!(
        "examples: {}; loop guard: {}; max_tokens {}; temperature 0",
        if options.examples {
            "2 per kind"
        } else {
            "none"
        },
        if options.guard { "on" } else { "off" },
        options
            .max_tokens
            .map_or_else(|| "from the schema".to_owned(), |n| n.to_string())
    );
    println!();
    println!("| kind | docs | valid | field accuracy | mean tokens | median | p95 | max | capped answers | copied an example | wall time |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    let wanted = |kind: &str| options.kinds.is_empty() || options.kinds.iter().any(|k| k == kind);
    let mut overall = Tally::default();
    let started = Instant::now();
    for kind in ["invoices", "contacts", "events", "reviews"] {
        if !wanted(kind) {
            continue;
        }
        let tally = match kind {
            "invoices" => run_kind::<Invoice>(&*llm, kind, &options).await?,
            "contacts" => run_kind::<Contact>(&*llm, kind, &options).await?,
            "events" => run_kind::<Event>(&*llm, kind, &options).await?,
            _ => run_kind::<Review>(&*llm, kind, &options).await?,
        };
        println!("{}", tally.row(kind));
        overall.add(&tally);
    }
    overall.elapsed = started.elapsed();
    println!("{}", overall.row("**all**"));
    Ok(())
}
