//! What the hosted-provider examples (`anthropic`, `gemini`) share: a key check that says what to set,
//! and the same extraction run against whichever backend the example built.

use futures_util::StreamExt;
use llm_extract::extract::{Extractor, Mode};
use llm_extract::llm::Llm;
use llm_extract::Extract;
use serde::Deserialize;

/// An invoice, as one value.
#[derive(Extract, Deserialize, Debug)]
pub struct Invoice {
    /// The invoice number.
    pub number: String,
    /// Who is billed.
    pub customer: String,
    /// The total, in the invoice's currency.
    pub total: f64,
}

/// One line of an invoice.
#[derive(Extract, Deserialize, Debug)]
pub struct Line {
    /// What was sold.
    pub item: String,
    /// How many.
    #[extract(minimum = 1)]
    pub quantity: u32,
}

const INVOICE: &str =
    "Invoice 3310 for Redwood Cafe: 12 bags of coffee beans, 3 grinders and 40 paper \
                       filters. Total due: 518.40 EUR.";

/// `Ok(())` when the environment variable `name` holds a key, else a message saying how to set it.
pub fn require_key(name: &str, provider: &str) -> Result<(), String> {
    match std::env::var(name) {
        Ok(value) if !value.trim().is_empty() => Ok(()),
        _ => Err(format!(
            "{name} is not set: this example calls {provider} with your key. Run it as\n  \
             {name}=... cargo run --example {}",
            provider.to_lowercase()
        )),
    }
}

/// One value, then the invoice lines streamed as each completes, in `mode`.
pub async fn run(llm: impl Llm, mode: Mode) -> Result<(), Box<dyn std::error::Error>> {
    let extractor = Extractor::new(llm).mode(mode);
    println!("{INVOICE}\n");
    let invoice = extractor.extract::<Invoice>(INVOICE).await?;
    println!(
        "  -> invoice {} for {}: {:.2} ({} prompt + {} completion tokens)\n",
        invoice.value.number,
        invoice.value.customer,
        invoice.value.total,
        invoice.report.usage.prompt_tokens,
        invoice.report.usage.completion_tokens
    );
    let mut lines = extractor.extract_stream::<Line>(INVOICE);
    while let Some(line) = lines.next().await {
        let line = line?;
        println!("  -> {:>3} x {}", line.quantity, line.item);
    }
    Ok(())
}
