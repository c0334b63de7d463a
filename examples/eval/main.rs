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
//! `--data DIR` reads another set of the same shape (e.g. `examples/data/heldout`); `--openai URL`
//! (with `--model NAME`, default `local`) talks to an OpenAI-compatible server such as llama-server;
//! `--server-repeat-penalty` also sends llama-server's own `repeat_penalty` in a recovery;
//! `--score DIR` runs no model but scores the results `llm-extract batch` wrote to `DIR/KIND.jsonl`.
//!
//! Options: `--examples` shows the model the worked examples in `examples/data/eval/examples/` (texts not
//! in the set); `--max-tokens N` caps each answer (default: the library's, derived from the schema); `--kind NAME`
//! runs one kind (invoices, contacts, events, reviews; repeatable); `--verbose` prints every document;
//! `--no-guard` turns the loop guard off (`LoopGuard::off()`); `--interleave` runs every document with
//! the guard off and on, one right after the other in one process on the same loaded model (the order
//! alternating from one document to the next), so both see the same machine load, and reports both
//! tallies, their wall times, the ratio and how much of each came from the documents the guard did not
//! change; `--string-margin N|off` and `--min-span N` change the guard's `LoopGuard::string_margin` and
//! `LoopGuard::min_span`, `--recovery-penalty P` the extractor's `Recovery::penalty`. Decoding is
//! greedy (`temperature 0`). The backend is chosen as in the other examples (`support/backend.rs`): the
//! embedded default model unless `--ollama` or `OLLAMA_HOST`.

#[path = "../support/backend.rs"]
mod backend;
mod kinds;
mod score;

use kinds::{Contact, Event, Invoice, Review};
use llm_extract::extract::LoopGuard;
use llm_extract::extract::{Extractor, Recovery};
use llm_extract::{
    extract::ExtractErrorKind, llm::Finish, Extract, ExtractError, Llm, OpenAiCompatible, Schema,
};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
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
    /// Run every document guard off and guard on, interleaved.
    interleave: bool,
    /// The guard to use when on (the defaults unless `--string-margin` or `--min-span`).
    on: LoopGuard,
    /// What the attempt after a loop changes (the defaults unless `--recovery-penalty`).
    recovery: Recovery,
    /// `None`: the library's default (derived from the schema).
    max_tokens: Option<u32>,
    kinds: Vec<String>,
    verbose: bool,
    data: PathBuf,
    /// Score the result files of `llm-extract batch` in this directory (`KIND.jsonl`) instead of running
    /// a model.
    score: Option<PathBuf>,
    /// An OpenAI-compatible server (e.g. llama-server) instead of the embedded model.
    openai: Option<String>,
    /// The model name sent to `openai`.
    model: String,
    /// Send llama-server's own `repeat_penalty` too (`OpenAiCompatible::repeat_penalty`).
    server_penalty: bool,
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
    /// Failed documents by the kind of error.
    failures: BTreeMap<String, usize>,
    /// Each document's wall time, in the order of `tokens`.
    times: Vec<Duration>,
}

impl Tally {
    fn add(&mut self, other: &Tally) {
        self.documents += other.documents;
        self.valid += other.valid;
        self.matched += other.matched;
        self.fields += other.fields;
        self.tokens.extend(&other.tokens);
        self.times.extend(&other.times);
        self.capped += other.capped;
        self.copied += other.copied;
        self.elapsed += other.elapsed;
        for (kind, n) in &other.failures {
            *self.failures.entry(kind.clone()).or_default() += n;
        }
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
            "| {name} | {} | {}/{} ({:.0}%) | {}/{} ({:.1}%) | {:.0} | {} | {} | {} | {} | {} | {} | {} |",
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
            if self.elapsed.is_zero() {
                "n/a".to_owned()
            } else {
                format!("{:.1} s", self.elapsed.as_secs_f64())
            },
            if self.failures.is_empty() {
                "none".to_owned()
            } else {
                self.failures
                    .iter()
                    .map(|(kind, n)| format!("{n} {kind}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            },
        )
    }
}

fn options() -> Result<Options, Box<dyn Error>> {
    let mut options = Options {
        examples: false,
        guard: true,
        interleave: false,
        on: LoopGuard::default(),
        recovery: Recovery::default(),
        max_tokens: None,
        kinds: Vec::new(),
        verbose: false,
        data: Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/data/eval"),
        score: None,
        openai: None,
        model: "local".to_owned(),
        server_penalty: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--examples" => options.examples = true,
            "--no-guard" => options.guard = false,
            "--interleave" => options.interleave = true,
            "--string-margin" => {
                let margin = args
                    .next()
                    .ok_or("--string-margin needs a number or `off`")?;
                let margin = if margin == "off" {
                    None
                } else {
                    Some(margin.parse()?)
                };
                options.on = options.on.string_margin(margin);
            }
            "--min-span" => {
                let span = args.next().ok_or("--min-span needs a number")?.parse()?;
                let on = options.on;
                options.on = on.period(on.max_period, on.min_times, span);
            }
            "--recovery-penalty" => {
                let penalty = args
                    .next()
                    .ok_or("--recovery-penalty needs a number")?
                    .parse()?;
                options.recovery = options.recovery.penalty(penalty);
            }
            "--verbose" => options.verbose = true,
            "--ollama" => {}
            "--max-tokens" => {
                options.max_tokens =
                    Some(args.next().ok_or("--max-tokens needs a number")?.parse()?)
            }
            "--kind" => options
                .kinds
                .push(args.next().ok_or("--kind needs a name")?),
            "--score" => {
                options.score = Some(args.next().ok_or("--score needs a directory")?.into())
            }
            "--openai" => options.openai = Some(args.next().ok_or("--openai needs a URL")?),
            "--server-repeat-penalty" => options.server_penalty = true,
            "--model" => options.model = args.next().ok_or("--model needs a name")?,
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

/// A failure's kind, named as `llm-extract batch` names it in its results.
fn kind_name<T>(error: &ExtractError<T>) -> &'static str {
    match error.kind() {
        ExtractErrorKind::Llm(_) => "backend",
        ExtractErrorKind::Invalid(_) => "invalid",
        ExtractErrorKind::Truncated(_) => "truncated",
        ExtractErrorKind::Loop(_) => "loop",
        ExtractErrorKind::Budget { .. } => "budget",
        _ => "other",
    }
}

/// Scores one kind's results of `llm-extract batch` (`DIR/KIND.jsonl`: `{"id", "ok", "value", "tokens"}`
/// or `{"id", "ok": false, "kind"}`); the tokens are the CLI's (prompt and completion together).
fn score_kind(
    dir: &Path,
    kind: &str,
    schema: &Value,
    options: &Options,
) -> Result<Tally, Box<dyn Error>> {
    let cases: Vec<Case> = read_lines(&options.data.join(format!("{kind}.jsonl")))?;
    let results: Vec<Value> = read_lines(&dir.join(format!("{kind}.jsonl")))?;
    let mut tally = Tally::default();
    for case in &cases {
        let result = results
            .iter()
            .find(|r| r.get("id").and_then(Value::as_str) == Some(case.id.as_str()));
        let ok = result.and_then(|r| r.get("ok")).and_then(Value::as_bool) == Some(true);
        let answer = result.filter(|_| ok).and_then(|r| r.get("value"));
        let (matched, fields) = score::fields(&case.expected, case.accept.as_ref(), answer, schema);
        tally.documents += 1;
        tally.valid += usize::from(answer.is_some());
        tally.matched += matched;
        tally.fields += fields;
        tally.tokens.push(
            result
                .and_then(|r| r.get("tokens"))
                .and_then(Value::as_u64)
                .unwrap_or(0),
        );
        if !ok {
            let failure = result
                .and_then(|r| r.get("kind"))
                .and_then(Value::as_str)
                .unwrap_or("missing");
            *tally.failures.entry(failure.to_owned()).or_default() += 1;
        }
        if options.verbose {
            eprintln!(
                "{} {matched}/{fields} fields: {}",
                case.id,
                result.map_or_else(String::new, Value::to_string)
            );
        }
    }
    Ok(tally)
}

/// The loop-guard settings to run: one, or both (off first) with `--interleave`.
fn guards(options: &Options) -> Vec<bool> {
    if options.interleave {
        vec![false, true]
    } else {
        vec![options.guard]
    }
}

fn guard_name(guard: bool) -> &'static str {
    if guard {
        "guard on"
    } else {
        "guard off"
    }
}

/// Runs one kind's documents under every setting of `guards(options)`, one tally per setting. With more
/// than one setting, each document runs under all of them before the next document, the order rotating
/// from one document to the next, and each setting's wall time sums its own extractions.
async fn run_kind<T: Extract + Serialize>(
    llm: &dyn Llm,
    kind: &str,
    options: &Options,
) -> Result<Vec<Tally>, Box<dyn Error>> {
    let cases: Vec<Case> = read_lines(&options.data.join(format!("{kind}.jsonl")))?;
    let guards = guards(options);
    let mut extractors = Vec::new();
    let mut shown: Vec<Value> = Vec::new();
    for &guard in &guards {
        let mut extractor = Extractor::new(llm).temperature(0.0);
        if let Some(max_tokens) = options.max_tokens {
            extractor = extractor.max_tokens(max_tokens);
        }
        extractor = extractor
            .loop_guard(if guard { options.on } else { LoopGuard::off() })
            .recovery(options.recovery);
        if options.examples {
            let path = options.data.join(format!("examples/{kind}.jsonl"));
            for example in read_lines::<ExampleLine<T>>(&path)? {
                shown.push(serde_json::to_value(&example.value)?);
                extractor = extractor.example(example.text, example.value)?;
            }
        }
        extractors.push(extractor);
    }
    let mut tallies: Vec<Tally> = guards.iter().map(|_| Tally::default()).collect();
    for (n, case) in cases.iter().enumerate() {
        for turn in 0..guards.len() {
            let which = (n + turn) % guards.len();
            let (Some(extractor), Some(tally)) = (extractors.get(which), tallies.get_mut(which))
            else {
                continue;
            };
            let started = Instant::now();
            let outcome = extractor.extract::<T>(case.text.as_str()).await;
            let elapsed = started.elapsed();
            tally.elapsed += elapsed;
            tally.times.push(elapsed);
            let (answer, attempts, usage) = match &outcome {
                Ok(done) => (
                    Some(serde_json::to_value(&done.value)?),
                    done.report.attempts.as_slice(),
                    done.report.usage,
                ),
                Err(err) => (None, err.attempts(), err.usage()),
            };
            let (matched, fields) = score::fields(
                &case.expected,
                case.accept.as_ref(),
                answer.as_ref(),
                T::schema().generic(),
            );
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
            if let Err(err) = &outcome {
                *tally.failures.entry(kind_name(err).to_owned()).or_default() += 1;
            }
            if options.verbose {
                let shown_answer = match (&answer, &outcome) {
                    (Some(answer), _) => answer.to_string(),
                    (None, Err(err)) => format!("error: {err}"),
                    (None, Ok(_)) => String::new(),
                };
                let setting = if guards.len() > 1 {
                    format!(
                        " [{}]",
                        guard_name(guards.get(which).copied().unwrap_or(true))
                    )
                } else {
                    String::new()
                };
                eprintln!(
                    "{}{setting} {matched}/{fields} fields, {} completion tokens, {} attempt(s), {capped} capped, {:.2} s: {shown_answer}",
                    case.id,
                    usage.completion_tokens,
                    attempts.len(),
                    elapsed.as_secs_f64()
                );
                for (i, attempt) in attempts.iter().enumerate() {
                    eprintln!(
                        "  attempt {}: {:?}, {} prompt + {} completion tokens, finish {:?}, loop {:?}: {}",
                        i + 1,
                        attempt.kind,
                        attempt.usage.prompt_tokens,
                        attempt.usage.completion_tokens,
                        attempt.finish,
                        attempt.looped.as_ref().map(|r| (r.kind, r.start)),
                        attempt.raw
                    );
                }
            }
        }
    }
    Ok(tallies)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let options = options()?;
    if let Some(dir) = &options.score {
        println!(
            "results of `llm-extract batch` in {} (tokens: prompt and completion)",
            dir.display()
        );
        println!();
        println!("| kind | docs | valid | field accuracy | mean tokens | median | p95 | max | capped answers | copied an example | wall time | failures |");
        println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
        let mut overall = Tally::default();
        for kind in ["invoices", "contacts", "events", "reviews"] {
            let schema = match kind {
                "invoices" => Invoice::schema(),
                "contacts" => Contact::schema(),
                "events" => Event::schema(),
                _ => Review::schema(),
            };
            let tally = score_kind(dir, kind, schema.generic(), &options)?;
            println!("{}", tally.row(kind));
            overall.add(&tally);
        }
        println!("{}", overall.row("**all**"));
        return Ok(());
    }
    let llm: Box<dyn Llm> = match &options.openai {
        Some(url) => Box::new(
            OpenAiCompatible::builder(url.as_str(), options.model.as_str())
                .repeat_penalty(options.server_penalty)
                .build()?,
        ),
        None => backend::from_env_and_args()?,
    };
    let guard = if options.interleave {
        "off and on, interleaved per document"
    } else if options.guard {
        "on"
    } else {
        "off"
    };
    println!(
        "examples: {}; loop guard: {guard}; max_tokens {}; temperature 0",
        if options.examples {
            "2 per kind"
        } else {
            "none"
        },
        options
            .max_tokens
            .map_or_else(|| "from the schema".to_owned(), |n| n.to_string())
    );
    println!();
    println!("| kind | docs | valid | field accuracy | mean tokens | median | p95 | max | capped answers | copied an example | wall time | failures |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    let wanted = |kind: &str| options.kinds.is_empty() || options.kinds.iter().any(|k| k == kind);
    let guards = guards(&options);
    let mut overall: Vec<Tally> = guards.iter().map(|_| Tally::default()).collect();
    let started = Instant::now();
    for kind in ["invoices", "contacts", "events", "reviews"] {
        if !wanted(kind) {
            continue;
        }
        let tallies = match kind {
            "invoices" => run_kind::<Invoice>(&*llm, kind, &options).await?,
            "contacts" => run_kind::<Contact>(&*llm, kind, &options).await?,
            "events" => run_kind::<Event>(&*llm, kind, &options).await?,
            _ => run_kind::<Review>(&*llm, kind, &options).await?,
        };
        for ((tally, total), &guard) in tallies.iter().zip(&mut overall).zip(&guards) {
            let name = if guards.len() > 1 {
                format!("{kind}, {}", guard_name(guard))
            } else {
                kind.to_owned()
            };
            println!("{}", tally.row(&name));
            total.add(tally);
        }
    }
    if let [only] = overall.as_mut_slice() {
        // One setting: the wall time of the whole run.
        only.elapsed = started.elapsed();
    }
    for (total, &guard) in overall.iter().zip(&guards) {
        let name = if guards.len() > 1 {
            format!("**all, {}**", guard_name(guard))
        } else {
            "**all**".to_owned()
        };
        println!("{}", total.row(&name));
    }
    if let [off, on] = overall.as_slice() {
        let tokens = |t: &Tally| t.tokens.iter().sum::<u64>();
        println!();
        println!(
            "guard on / guard off: wall time {:.1} s / {:.1} s = {:.2}x; completion tokens {} / {} = {:.2}x; whole run {:.1} s",
            on.elapsed.as_secs_f64(),
            off.elapsed.as_secs_f64(),
            on.elapsed.as_secs_f64() / off.elapsed.as_secs_f64().max(f64::MIN_POSITIVE),
            tokens(on),
            tokens(off),
            tokens(on) as f64 / (tokens(off) as f64).max(1.0),
            started.elapsed().as_secs_f64()
        );
        // Where the difference comes from: the documents on which both settings spent the same tokens
        // (the guard did not fire; the time should be the same) and the rest.
        let (mut same, mut same_off, mut same_on, mut rest_off, mut rest_on) = (
            0,
            Duration::ZERO,
            Duration::ZERO,
            Duration::ZERO,
            Duration::ZERO,
        );
        for ((t_off, d_off), (t_on, d_on)) in off
            .tokens
            .iter()
            .zip(&off.times)
            .zip(on.tokens.iter().zip(&on.times))
        {
            if t_off == t_on {
                same += 1;
                same_off += *d_off;
                same_on += *d_on;
            } else {
                rest_off += *d_off;
                rest_on += *d_on;
            }
        }
        println!(
            "documents with the same tokens both ways: {same}, guard off {:.1} s, guard on {:.1} s; the other {}: guard off {:.1} s, guard on {:.1} s; \
             the ratio if those {} cost nothing with the guard on: {:.2}x",
            same_off.as_secs_f64(),
            same_on.as_secs_f64(),
            off.tokens.len() - same,
            rest_off.as_secs_f64(),
            rest_on.as_secs_f64(),
            off.tokens.len() - same,
            same_on.as_secs_f64() / off.elapsed.as_secs_f64().max(f64::MIN_POSITIVE)
        );
    }
    Ok(())
}
