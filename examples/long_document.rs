//! The people and places of a long public-domain text, each with the spans it was found at.
//!
//! ```sh
//! cargo run --release --features llama-cpp --example long_document -- [BOOK.txt] [PASSES]
//! ```
//!
//! Reads the book (default: `tests/data/a-case-of-identity.txt`, one story of The Adventures of Sherlock
//! Holmes, CRLF line ends as Project Gutenberg distributes it) with the embedded default model, chunk by
//! chunk, and prints every merged item with its spans and how each matched, then the per-pass and
//! per-chunk report. For the review page, run the same through the command line:
//! `llm-extract doc --signature '{kind (person | place), name :string}' --grounded name --key name
//! --embedded --html review.html BOOK.txt`.

use llm_extract::extract::Extractor;
use llm_extract::llm::llama_cpp::LlamaCpp;
use llm_extract::Extract;
use serde::Deserialize;
use std::time::Instant;

/// Someone or somewhere the text names.
#[derive(Extract, Deserialize, Debug)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Entity {
    /// A person, by the name the text uses.
    Person {
        /// The name exactly as written in the text.
        #[extract(grounded, key)]
        name: String,
    },
    /// A place: a town, a street, a house, a country.
    Place {
        /// The place exactly as written in the text.
        #[extract(grounded, key)]
        name: String,
    },
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .unwrap_or_else(|| "tests/data/a-case-of-identity.txt".to_owned());
    let passes: u32 = args.next().map_or(Ok(1), |p| p.parse())?;
    let book = std::fs::read_to_string(&path)?;
    let llm = LlamaCpp::from_env()?;
    let started = Instant::now();
    let doc = Extractor::new(&llm)
        .chunk_bytes(3072)
        .passes(passes)
        .instructions(
            "List the people and the places this text names. Copy each name exactly as the text \
             writes it. Leave out anything the text does not name.",
        )
        .extract_document::<Entity>(&book)
        .await?;
    let elapsed = started.elapsed().as_secs_f64();
    for item in &doc.items {
        let (kind, name) = match &item.value {
            Entity::Person { name } => ("person", name),
            Entity::Place { name } => ("place", name),
        };
        let spans: Vec<String> = item
            .spans
            .iter()
            .take(4)
            .map(|s| format!("{}..{} {:?}", s.chars.start, s.chars.end, s.kind))
            .collect();
        println!(
            "{kind:6} {name:30} {} span(s): {}{}",
            item.spans.len(),
            spans.join(", "),
            if item.spans.len() > 4 { ", ..." } else { "" }
        );
    }
    let spans: Vec<_> = doc.items.iter().flat_map(|i| &i.spans).collect();
    let exact = spans
        .iter()
        .filter(|s| s.kind == llm_extract::ground::MatchKind::Exact)
        .count();
    println!(
        "\n{} bytes, {} chunks ({} failed), {:.1} s: {:.2} chunks/s, {:.2} items/s",
        book.len(),
        doc.chunks.len(),
        doc.failed().count(),
        elapsed,
        doc.chunks.len() as f64 / elapsed,
        doc.found as f64 / elapsed
    );
    println!(
        "items: {} before merging, {} after; spans: {} ({} exact, {:.1}%)",
        doc.found,
        doc.items.len(),
        spans.len(),
        exact,
        100.0 * exact as f64 / spans.len().max(1) as f64
    );
    for pass in &doc.passes {
        println!(
            "pass {}: {} chunks, {} failed, {} items, {} new, {} attempts, {} tokens",
            pass.pass + 1,
            pass.chunks,
            pass.failed,
            pass.items,
            pass.new_items,
            pass.attempts,
            pass.usage.total()
        );
    }
    Ok(())
}
