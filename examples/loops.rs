//! Loops of a small model under greedy decoding, with the loop guard off and on: tokens, time and
//! outcome per document. The figures in BENCHMARKS.md ("Loops") come from this program.
//!
//! ```text
//! cargo run --features llama-cpp --example loops             # guard off vs on, every case
//! cargo run --features llama-cpp --example loops -- on       # the guard on only
//! cargo run --features llama-cpp --example loops -- probe    # more invoices, guard on, to find loops
//! ```
//!
//! "off" is no loop detection with its cost capped: greedy, `max_tokens` 512, no continuation (uncapped,
//! a loop runs to the whole context, 4096 tokens, and a cut list is continued twice: 8 to 24 times this
//! cap). "on" is the default settings.

#[path = "support/loop_cases.rs"]
mod cases;

use cases::{Fact, Invoice, CALM_INVOICES, FACT_TEXTS, INVOICES, OFF_MAX_TOKENS, PROBE_INVOICES};
use llm_extract::extract::ExtractError;
use llm_extract::extract::LoopGuard;
use llm_extract::llm::llama_cpp::LlamaCpp;
use llm_extract::report::{Attempt, Extraction};
use llm_extract::Extractor;
use std::fmt::Debug;
use std::time::Instant;

struct Run {
    name: String,
    valid: bool,
    items: usize,
    attempts: Vec<Attempt>,
    millis: u128,
}

impl Run {
    fn tokens(&self) -> u64 {
        self.attempts
            .iter()
            .map(|a| a.usage.completion_tokens)
            .sum()
    }

    fn finishes(&self) -> String {
        self.attempts
            .iter()
            .map(|a| {
                let finish = a
                    .finish
                    .as_ref()
                    .map_or("error".to_owned(), ToString::to_string);
                format!("{}:{finish}({})", a.kind, a.usage.completion_tokens)
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn extractor(llm: &LlamaCpp, guard: bool) -> Extractor<&LlamaCpp> {
    let extractor = Extractor::new(llm);
    if guard {
        extractor
    } else {
        // One answer capped at OFF_MAX_TOKENS and no continuation: uncapped, a loop runs to the whole
        // context and a cut list is continued twice, so for lists this is a lower bound of that cost.
        extractor
            .loop_guard(LoopGuard::off())
            .max_tokens(OFF_MAX_TOKENS)
            .max_continuations(0)
    }
}

/// Times one extraction and keeps its ledger; `count` says how many items its value holds.
async fn measure<T: Debug, P>(
    extraction: impl std::future::Future<Output = Result<Extraction<T>, ExtractError<P>>>,
    count: impl Fn(&T) -> usize,
) -> Run {
    let started = Instant::now();
    let out = extraction.await;
    let millis = started.elapsed().as_millis();
    match out {
        Ok(out) => Run {
            name: format!("{:?}", out.value),
            valid: true,
            items: count(&out.value),
            attempts: out.report.attempts,
            millis,
        },
        Err(e) => Run {
            name: format!("error: {}", e.kind()),
            valid: false,
            items: 0,
            attempts: e.attempts().to_vec(),
            millis,
        },
    }
}

async fn invoice(llm: &LlamaCpp, text: &str, guard: bool) -> Run {
    measure(extractor(llm, guard).extract::<Invoice>(text), |_| 1).await
}

async fn facts(llm: &LlamaCpp, text: &str, guard: bool) -> Run {
    measure(extractor(llm, guard).extract_all::<Fact>(text), Vec::len).await
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let llm = LlamaCpp::from_env()?;
    if std::env::args().nth(1).as_deref() == Some("probe") {
        for (i, text) in PROBE_INVOICES.iter().chain(CALM_INVOICES).enumerate() {
            report(
                "on",
                &format!("probe {i}"),
                &invoice(&llm, text, true).await,
            );
        }
        return Ok(());
    }
    let only_on = std::env::args().nth(1).as_deref() == Some("on");
    let modes: &[bool] = if only_on { &[true] } else { &[false, true] };
    for &guard in modes {
        let label = if guard { "on" } else { "off" };
        let mut total_tokens = 0;
        let mut total_millis = 0;
        let mut valid = 0;
        let mut runs = 0;
        for (i, text) in INVOICES.iter().enumerate() {
            let run = invoice(&llm, text, guard).await;
            report(label, &format!("invoice {i}"), &run);
            total_tokens += run.tokens();
            total_millis += run.millis;
            valid += usize::from(run.valid);
            runs += 1;
        }
        for (i, text) in FACT_TEXTS.iter().enumerate() {
            let run = facts(&llm, text, guard).await;
            report(label, &format!("facts {i}"), &run);
            total_tokens += run.tokens();
            total_millis += run.millis;
            valid += usize::from(run.valid);
            runs += 1;
        }
        println!(
            "guard {label}: {valid}/{runs} valid, {total_tokens} completion tokens, {:.1} s",
            total_millis as f64 / 1000.0
        );
    }
    Ok(())
}

/// The longest run of one byte in the answers that ended normally: the headroom of the run limit.
fn longest_normal_run(run: &Run) -> usize {
    run.attempts
        .iter()
        .filter(|a| a.finish == Some(llm_extract::llm::Finish::Stop))
        .map(|a| {
            let bytes = a.raw.as_bytes();
            let mut best = 0;
            let mut current = 0;
            for (i, b) in bytes.iter().enumerate() {
                current = if i > 0 && bytes.get(i - 1) == Some(b) {
                    current + 1
                } else {
                    1
                };
                best = best.max(current);
            }
            best
        })
        .max()
        .unwrap_or(0)
}

fn report(label: &str, case: &str, run: &Run) {
    let loops: Vec<String> = run
        .attempts
        .iter()
        .filter_map(|a| a.looped.as_ref().map(|l| l.to_string()))
        .collect();
    println!(
        "{label:3} {case:10} valid={} items={} tokens={} {:.1}s longest-normal-run={}  {}  {}  {}",
        run.valid,
        run.items,
        run.tokens(),
        run.millis as f64 / 1000.0,
        longest_normal_run(run),
        run.finishes(),
        loops.join("; "),
        run.name.chars().take(140).collect::<String>()
    );
}
