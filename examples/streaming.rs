//! Streaming: each action item is printed the moment its line (or array element) is complete, long
//! before the model has finished the whole answer.
//!
//! ```sh
//! cargo run --features llama-cpp --example streaming
//! OLLAMA_HOST=http://localhost:11434 cargo run --example streaming
//! ```

#[path = "support/backend.rs"]
mod backend;

use futures_util::StreamExt;
use llm_extract::extract::Extractor;
use llm_extract::Extract;
use serde::Deserialize;
use std::time::Instant;

/// An action item agreed in a meeting.
#[derive(Extract, Deserialize, Debug)]
struct ActionItem {
    /// Who does it (a first name).
    #[extract(max_length = 20)]
    owner: String,
    /// What they will do, in a few words.
    #[extract(max_length = 80)]
    task: String,
    /// When it is due, if the notes say.
    #[extract(max_length = 30)]
    due: Option<String>,
}

const NOTES: &str = "Meeting notes, 3 March. Priya will send the budget to finance by Friday. \
Tom fixes the login bug before the release. Ana books the venue for the offsite next month. \
Priya also reviews the hiring plan.";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let llm = backend::from_env_and_args()?;
    let extractor = Extractor::new(&llm)
        .max_tokens(256)
        .max_items(8)
        .temperature(0.0);
    let started = Instant::now();
    let mut stream = extractor.extract_stream::<ActionItem>(NOTES);
    while let Some(item) = stream.next().await {
        match item {
            Ok(item) => println!(
                "[{:>5} ms] {}: {}{}",
                started.elapsed().as_millis(),
                item.owner,
                item.task,
                item.due.map(|d| format!(" (due {d})")).unwrap_or_default()
            ),
            Err(err) => {
                println!("stopped: {err}");
                break;
            }
        }
    }
    if let Some(report) = stream.report() {
        println!(
            "done in {} ms: {} attempt(s), {} tokens, {} line(s) skipped",
            started.elapsed().as_millis(),
            report.attempts.len(),
            report.usage.total(),
            report.skipped.len()
        );
        for skipped in &report.skipped {
            println!("  skipped line {}: {}", skipped.line, skipped.reason);
        }
    }
    Ok(())
}
