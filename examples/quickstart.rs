//! Quickstart: the people and companies a short text names, as one typed value and as a list.
//!
//! ```text
//! scripts/demo.sh                                              # installs what is missing, runs this
//! cargo run --features llama-cpp --example quickstart          # the embedded model
//! OLLAMA_HOST=localhost:11434 cargo run --example quickstart   # an Ollama server (or pass --ollama)
//! ```
//!
//! The default embedded model is tiny (135M parameters): the answers are always valid, typed values, but
//! not always right. Point `LLM_EXTRACT_MODEL` at a larger GGUF file, or use Ollama, for better content.

#[path = "support/backend.rs"]
mod backend;

use llm_extract::{Extract, Extractor};
use serde::Deserialize;

/// The person and the company a text names.
#[derive(Extract, Deserialize, Debug)]
struct Extracted {
    /// The person's full name.
    person: String,
    /// The company's name.
    company: String,
}

/// Someone or something the text names.
#[derive(Extract, Deserialize, Debug)]
struct Mention {
    /// The name, as the text writes it.
    name: String,
    /// What it is.
    kind: Kind,
}

/// What a mention is.
#[derive(Extract, Deserialize, Debug)]
#[serde(rename_all = "lowercase")]
enum Kind {
    /// A human being.
    Person,
    /// A business.
    Company,
}

const SENTENCE: &str = "Satya Nadella is the chief executive of Microsoft.";
const TEXT: &str = "Tim Cook runs Apple. Lisa Su leads AMD. Jensen Huang co-founded Nvidia.";

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

    // One value: the whole answer is one `Extracted`, validated against its schema.
    println!("{SENTENCE}");
    let one = Extracted::extract(&llm, SENTENCE).await?;
    println!("  -> person: {}, company: {}\n", one.person, one.company);

    // A list: every `Mention` in the text, each validated on its own, with the ledger of what it cost.
    println!("{TEXT}");
    let mentions = Extractor::new(&llm)
        .max_tokens(120)
        .max_continuations(0)
        .extract_all::<Mention>(TEXT)
        .await?;
    for mention in &mentions.value {
        println!("  -> {:<14} {:?}", mention.name, mention.kind);
    }
    println!(
        "  ({} items; {} prompt + {} completion tokens; {} request(s); ended: {:?})",
        mentions.value.len(),
        mentions.report.usage.prompt_tokens,
        mentions.report.usage.completion_tokens,
        mentions.report.attempts.len(),
        mentions.report.finish.unwrap_or_default()
    );
    Ok(())
}
