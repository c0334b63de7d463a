//! Partial values: a struct redrawn in the terminal as the model writes it, fields filling in one by
//! one, the list of lines growing, then the validated value.
//!
//! ```sh
//! cargo run --features llama-cpp --example partial
//! OLLAMA_HOST=http://localhost:11434 cargo run --example partial
//! ```

#[path = "support/backend.rs"]
mod backend;

use futures_util::StreamExt;
use llm_extract::extract::{Extractor, PartialEvent};
use llm_extract::Extract;
use serde::Deserialize;
use std::io::Write;
use std::time::Instant;

/// A purchase order.
#[derive(Extract, Deserialize)]
struct Order {
    /// The order number, exactly as written.
    #[extract(stream = "done", max_length = 20)]
    number: String,
    /// Who ordered.
    #[extract(max_length = 40)]
    customer: String,
    /// What was ordered.
    #[extract(max_items = 6)]
    lines: Vec<Line>,
    /// Anything the text says about delivery.
    #[extract(max_length = 80)]
    delivery: Option<String>,
}

/// One line of the order.
#[derive(Extract, Deserialize)]
struct Line {
    /// The product, in a few words.
    #[extract(stream = "required", max_length = 40)]
    product: String,
    /// How many.
    quantity: u32,
}

const TEXT: &str =
    "Order PO-7731 from Harbour Bakery: 12 bags of rye flour, 3 crates of butter and \
40 paper bags. Please deliver to the back door before 7 am on Tuesday.";

/// Clears the screen and draws the order as far as it is known.
fn draw(order: &OrderPartial, started: Instant) {
    let show = |value: Option<&str>| value.unwrap_or("…").to_owned();
    let mut out = std::io::stdout().lock();
    let _ = write!(out, "\x1b[2J\x1b[H");
    let _ = writeln!(out, "[{:>5} ms]", started.elapsed().as_millis());
    let _ = writeln!(out, "order    {}", show(order.number.as_deref()));
    let _ = writeln!(out, "customer {}", show(order.customer.as_deref()));
    for line in order.lines.iter().flatten() {
        let quantity = line.quantity.map_or("…".to_owned(), |q| q.to_string());
        let _ = writeln!(out, "  {quantity:>4} x {}", show(line.product.as_deref()));
    }
    let _ = writeln!(out, "delivery {}", show(order.delivery.as_deref()));
    let _ = out.flush();
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let llm = backend::from_env_and_args()?;
    let extractor = Extractor::new(&llm).max_tokens(300).temperature(0.0);
    let started = Instant::now();
    let mut events = extractor.extract_partial::<Order>(TEXT);
    let mut snapshots = 0;
    while let Some(event) = events.next().await {
        match event {
            Ok(PartialEvent::Snapshot(order)) => {
                snapshots += 1;
                draw(&order, started);
            }
            Ok(PartialEvent::Retry { attempt, kind }) => {
                println!("\nattempt {attempt} ({kind:?}): starting over");
            }
            Ok(PartialEvent::Final {
                extraction,
                revised,
            }) => {
                let order = extraction.value;
                println!(
                    "\nvalidated in {} ms after {snapshots} snapshots ({} attempt(s){}): order {} from {}, {} line(s):",
                    started.elapsed().as_millis(),
                    extraction.report.attempts.len(),
                    if revised { ", revised by a fix" } else { "" },
                    order.number,
                    order.customer,
                    order.lines.len(),
                );
                for line in &order.lines {
                    println!("  {:>4} x {}", line.quantity, line.product);
                }
                if let Some(delivery) = &order.delivery {
                    println!("delivery: {delivery}");
                }
            }
            Ok(_) => {}
            Err(err) => {
                println!("\nfailed: {err}");
                break;
            }
        }
    }
    Ok(())
}
