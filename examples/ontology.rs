//! An ontology as JSON Lines: entities, relationships and attributes as one tagged enum, each printed as a
//! typed value the moment its line is complete, while the model is still writing the next one.
//!
//! ```text
//! scripts/demo.sh                                            # installs what is missing, runs this
//! cargo run --features llama-cpp --example ontology          # the embedded model
//! OLLAMA_HOST=localhost:11434 cargo run --example ontology   # an Ollama server (or pass --ollama)
//! ```
//!
//! On the embedded engine every line is constrained by a grammar of the line schema; on a server, the
//! items arrive as one constrained list and are still yielded one by one as each element completes.

#[path = "support/backend.rs"]
mod backend;

use futures_util::StreamExt;
use llm_extract::{Extract, Extractor};
use serde::Deserialize;
use std::time::Instant;

/// One item of an ontology: an entity, a relationship between two entities, or an attribute of one.
#[derive(Extract, Deserialize, Debug)]
#[serde(tag = "type", rename_all = "snake_case")]
enum OntologyItem {
    /// Something the text names: a person, an organisation, a place.
    Entity {
        /// Its name, as the text writes it.
        name: String,
        /// What it is: person, organisation, place, ...
        kind: String,
    },
    /// How one entity relates to another.
    Relationship {
        /// The entity the relation starts from.
        subject: String,
        /// The relation, as a short verb phrase ("born in", "married").
        predicate: String,
        /// The entity the relation points to.
        object: String,
    },
    /// A property of an entity.
    Attribute {
        /// The entity.
        entity: String,
        /// The property's name ("occupation", "birth year").
        name: String,
        /// Its value.
        value: String,
    },
}

const TEXT: &str = "Marie Curie was a physicist. She was born in Warsaw. She married Pierre Curie.";

#[tokio::main]
async fn main() -> std::process::ExitCode {
    match run().await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let llm = backend::from_env_and_args()?;
    println!("{TEXT}\n");

    let extractor = Extractor::new(&llm).max_tokens(200).max_continuations(0);
    let started = Instant::now();
    let mut items = extractor.extract_stream::<OntologyItem>(TEXT);
    while let Some(item) = items.next().await {
        let at = started.elapsed().as_secs_f32();
        match item? {
            OntologyItem::Entity { name, kind } => {
                println!("{at:5.1}s  entity        {name} ({kind})")
            }
            OntologyItem::Relationship {
                subject,
                predicate,
                object,
            } => {
                println!("{at:5.1}s  relationship  {subject} --{predicate}--> {object}")
            }
            OntologyItem::Attribute {
                entity,
                name,
                value,
            } => {
                println!("{at:5.1}s  attribute     {entity}: {name} = {value}")
            }
        }
    }
    if let Some(report) = items.report() {
        println!(
            "\n(ended: {:?}; {} request(s); {} lines skipped)",
            report.finish,
            report.attempts.len(),
            report.skipped.len()
        );
    }
    Ok(())
}
