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

/// One item of an ontology.
#[derive(Extract, Deserialize, Debug)]
#[serde(tag = "type", rename_all = "snake_case")]
enum OntologyItem {
    /// An entity and its type.
    Entity {
        /// The entity's name.
        entity: String,
        /// Its type, e.g. person, organisation, place.
        entity_type: String,
    },
    /// A typed relation between two entities.
    Relationship {
        /// The subject entity.
        subject: String,
        /// The relation, as a verb phrase.
        relation: String,
        /// The object entity.
        object: String,
    },
    /// An attribute of an entity and its value.
    Attribute {
        /// The entity.
        entity: String,
        /// The attribute's name.
        attribute: String,
        /// The attribute's value.
        value: String,
    },
}

const TEXT: &str =
    "Marie Curie was a physicist born in Warsaw. She worked at the University of Paris \
                    with Pierre Curie, her husband.";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let llm = backend::from_env_and_args()?;
    println!("{TEXT}\n");

    let extractor = Extractor::new(&llm)
        .instructions("You build an ontology of the text: first its entities, then the relationships between them, then their attributes. Use only what the text states.")
        .max_tokens(200)
        .max_continuations(0);
    let started = Instant::now();
    let mut items = extractor.extract_stream::<OntologyItem>(TEXT);
    while let Some(item) = items.next().await {
        let at = started.elapsed().as_secs_f32();
        match item? {
            OntologyItem::Entity {
                entity,
                entity_type,
            } => {
                println!("{at:5.1}s  entity        {entity} ({entity_type})")
            }
            OntologyItem::Relationship {
                subject,
                relation,
                object,
            } => {
                println!("{at:5.1}s  relationship  {subject} --{relation}--> {object}")
            }
            OntologyItem::Attribute {
                entity,
                attribute,
                value,
            } => {
                println!("{at:5.1}s  attribute     {entity}.{attribute} = {value}")
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
