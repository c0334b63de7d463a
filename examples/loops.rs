//! Loops of a small model under greedy decoding, with the loop guard off and on: tokens, time and
//! outcome per document. The figures in BENCHMARKS.md ("Loops") come from this program.
//!
//! ```text
//! cargo run --features llama-cpp --example loops             # guard off vs on, every case
//! cargo run --features llama-cpp --example loops -- on       # the guard on only
//! ```
//!
//! "off" is the build before the guard: no loop detection, `max_tokens` unset (the whole context,
//! 4096 tokens), greedy. "on" is the default settings.

use llm_extract::llm::llama_cpp::LlamaCpp;
use llm_extract::parse::LoopGuard;
use llm_extract::report::Attempt;
use llm_extract::{Extract, Extractor};
use serde::Deserialize;
use std::time::Instant;

/// An invoice in one line.
#[derive(Extract, Deserialize, Debug)]
struct Invoice {
    /// The invoice number as printed.
    invoice_number: String,
    /// Who is billed.
    customer: String,
    /// The amount due.
    total: f64,
    /// Whether it is paid.
    paid: bool,
}

/// One fact a text states.
#[derive(Extract, Deserialize, Debug)]
#[serde(tag = "type", rename_all = "lowercase")]
enum Fact {
    /// Someone lives somewhere.
    Residence {
        /// Who.
        person: String,
        /// Where.
        city: String,
    },
    /// Someone works for an organisation.
    Employment {
        /// Who.
        person: String,
        /// For whom.
        employer: String,
    },
}

/// Short invoices of the kind the issue reports looping.
const INVOICES: &[&str] = &[
    "Invoice 125 for Bolt Ltd: 300 EUR, paid.",
    "Invoice INV-2291, customer Nova GmbH, amount due 1,250.00 EUR.",
    "Inv. 100045 to Harbor Foods, total $89.90, settled on 3 May.",
    "Invoice no. 7781 issued to Mira Chen for 45 USD (unpaid).",
    "Bill 2024-006: Kestrel Labs owes 12,000 GBP, not yet paid.",
    "Invoice 3300 - Pine & Co - 75.50 EUR - paid in full.",
    "Invoice #88 for Luis Ortega, 1,999 EUR, payment pending.",
];

/// Three facts each.
const FACT_TEXTS: &[&str] = &[
    "Anna lives in Oslo. Ben works for Siemens. Carla lives in Lima.",
    "Omar works for Nokia. Omar lives in Espoo. Lea works for Airbus.",
    "Tom lives in Leeds. Sara works for Volvo. Tom works for Arup.",
];

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
        extractor.loop_guard(LoopGuard::off()).max_tokens(4096)
    }
}

async fn invoice(llm: &LlamaCpp, text: &str, guard: bool) -> Run {
    let started = Instant::now();
    let out = extractor(llm, guard).extract::<Invoice>(text).await;
    let millis = started.elapsed().as_millis();
    match out {
        Ok(out) => Run {
            name: format!("{:?}", out.value),
            valid: true,
            items: 1,
            attempts: out.attempts,
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

async fn facts(llm: &LlamaCpp, text: &str, guard: bool) -> Run {
    let started = Instant::now();
    let out = extractor(llm, guard).extract_all::<Fact>(text).await;
    let millis = started.elapsed().as_millis();
    match out {
        Ok(out) => Run {
            name: format!("{:?}", out.value),
            valid: true,
            items: out.value.len(),
            attempts: out.attempts,
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

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let llm = LlamaCpp::from_env()?;
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

fn report(label: &str, case: &str, run: &Run) {
    println!(
        "{label:3} {case:10} valid={} items={} tokens={} {:.1}s  {}  {}",
        run.valid,
        run.items,
        run.tokens(),
        run.millis as f64 / 1000.0,
        run.finishes(),
        run.name.chars().take(160).collect::<String>()
    );
}
