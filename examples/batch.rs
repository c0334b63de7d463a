//! Batch extraction: many documents, a few at a time, with progress as each finishes. A document that
//! fails is recorded with its error; the others go on. With several servers, pass one extractor per
//! server to `with_extractor` and the documents are shared round-robin.
//!
//! ```sh
//! cargo run --features llama-cpp --example batch
//! OLLAMA_HOST=http://localhost:11434 cargo run --example batch
//! ```

#[path = "support/backend.rs"]
mod backend;

use llm_extract::batch::{Batch, Record};
use llm_extract::extract::Extractor;
use llm_extract::{Extract, Schema};
use serde::Deserialize;

/// A company a text mentions.
#[derive(Extract, Deserialize, Debug)]
struct Company {
    /// The company's name.
    name: String,
    /// The city of its head office, if the text says.
    city: Option<String>,
    /// The year it was founded, if the text says.
    #[extract(minimum = 1600, maximum = 2100)]
    founded: Option<u16>,
}

const DOCUMENTS: &[(&str, &str)] = &[
    (
        "press-1",
        "Nokia, headquartered in Espoo, began in 1865 as a paper mill.",
    ),
    (
        "press-2",
        "Founded in 1976 in Los Altos, Apple now makes phones.",
    ),
    (
        "press-3",
        "Michelin, the tyre maker from Clermont-Ferrand, dates from 1889.",
    ),
    (
        "press-4",
        "Zeiss opened its first workshop in Jena in 1846.",
    ),
];

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let llm = backend::from_env_and_args()?;
    let batch = Batch::new(Extractor::new(llm).max_tokens(96).temperature(0.0)).concurrency(2);
    let documents = DOCUMENTS.iter().map(|(id, text)| Record::new(*id, *text));

    let results = batch
        .extract_many(Company::schema(), documents, |progress| {
            eprintln!(
                "{}/{} done ({} failed, {} tokens)",
                progress.done,
                progress.total.unwrap_or(0),
                progress.failed,
                progress.usage.total()
            );
        })
        .await;

    for result in results {
        // The values are validated JSON; the derived type reads them back.
        match result
            .outcome
            .map(|out| serde_json::from_value::<Company>(out.value))
        {
            Ok(Ok(company)) => println!(
                "{}: {} ({}, founded {})",
                result.id,
                company.name,
                company.city.as_deref().unwrap_or("city unknown"),
                company
                    .founded
                    .map_or("?".to_owned(), |year| year.to_string())
            ),
            Ok(Err(err)) => println!("{}: unexpected shape: {err}", result.id),
            Err(err) => println!("{}: failed: {err}", result.id),
        }
    }
    Ok(())
}
