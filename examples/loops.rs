//! Loops of a small model under greedy decoding, with the loop guard off and on: tokens, time and
//! outcome per document. The figures in BENCHMARKS.md ("Loops") come from this program.
//!
//! ```text
//! cargo run --features llama-cpp --example loops             # guard off vs on, every case
//! cargo run --features llama-cpp --example loops -- on       # the guard on only
//! cargo run --features llama-cpp --example loops -- probe    # more invoices, guard on, to find loops
//! ```
//!
//! "off" is the build before the guard with its cost capped: no loop detection, greedy, `max_tokens`
//! 512 (the build before left it unset, so a loop ran to the whole context, 4096 tokens, and a cut
//! list was continued twice: its real cost was 8 to 24 times this cap), no continuation. "on" is the
//! default settings.

use llm_extract::llm::llama_cpp::LlamaCpp;
use llm_extract::parse::LoopGuard;
use llm_extract::report::Attempt;
use llm_extract::{Extract, Extractor};
use serde::Deserialize;
use std::time::Instant;

/// An invoice in one line.
#[derive(Extract, Deserialize, Debug)]
#[allow(dead_code)] // read through `Debug`
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
#[allow(dead_code)] // read through `Debug`
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

/// The cap of an answer with the guard off (see the module docs).
const OFF_MAX_TOKENS: u32 = 512;

/// Short invoices: the first five loop under greedy decoding (found with `-- probe`), the last two do
/// not.
const INVOICES: &[&str] = &[
    "INVOICE 000123 Acme Supplies -> Delta Corp, 1,200.00 USD due 2024-07-01",
    "Facture n° 2024-0310, client Dupont SARL, montant 1 500,00 EUR, réglée",
    "Invoice 000000482 for Blue Ocean Inc, total due $7,800.00",
    "INV 5 - Smith - 10 GBP",
    "Invoice 1250000 for Polar Freight, 12,500.00 EUR, settled",
    "Invoice INV-2291, customer Nova GmbH, amount due 1,250.00 EUR.",
    "Invoice no. 7781 issued to Mira Chen for 45 USD (unpaid).",
];

/// Invoices that did not loop in the probe (no false stop): run with `-- probe`.
const CALM_INVOICES: &[&str] = &[
    "Invoice 125 for Bolt Ltd: 300 EUR, paid.",
    "Inv. 100045 to Harbor Foods, total $89.90, settled on 3 May.",
    "Bill 2024-006: Kestrel Labs owes 12,000 GBP, not yet paid.",
    "Invoice 3300 - Pine & Co - 75.50 EUR - paid in full.",
    "Invoice #88 for Luis Ortega, 1,999 EUR, payment pending.",
];

/// More one-line invoices, searched for loops with `-- probe` (the guard on, so a loop costs little).
const PROBE_INVOICES: &[&str] = &[
    "Invoice number 4500012345, customer: Zenith Bank, total 99.99 EUR, paid",
    "Ref 2023/0042 - Baker & Sons - EUR 560 - settled",
    "Invoice 10000001 for Orion Ltd, 250,000.00 JPY, unpaid",
    "inv 77-2024-0001 / client Gamma SA / 3.450,00 EUR / paid by card",
    "Invoice 991 to Helen Park: 12.5 USD, overdue",
    "Our invoice 33-1-2024 to Kim Lee totals 640 USD and remains open.",
    "Invoice 120 for 120 USD to 120 Main St Ltd, paid",
];

/// Three facts each.
const FACT_TEXTS: &[&str] = &[
    "Anna lives in Oslo. Ben works for Siemens. Carla lives in Lima.",
    "Omar works for Nokia. Omar lives in Espoo. Lea works for Airbus.",
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
        // One answer of up to the whole context; the build before the guard also continued a cut list
        // twice, so for lists this is a lower bound of what it spent.
        extractor
            .loop_guard(LoopGuard::off())
            .max_tokens(OFF_MAX_TOKENS)
            .max_continuations(0)
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
        .filter(|a| a.finish == Some(llm_extract::Finish::Stop))
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
        .filter_map(|a| a.repetition.map(|l| l.to_string()))
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
