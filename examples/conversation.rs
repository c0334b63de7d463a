//! Conversation analysis: each turn yields a reply and a nested analysis (subjects, keywords) whose
//! fields carry patterns and bounds. The running summary of one turn goes into the next turn's prompt.
//!
//! ```sh
//! cargo run --features llama-cpp --example conversation
//! OLLAMA_HOST=http://localhost:11434 cargo run --example conversation
//! ```

#[path = "support/backend.rs"]
mod backend;

use llm_extract::extract::{Extractor, Input};
use llm_extract::Extract;
use serde::{Deserialize, Serialize};

/// The reply to one conversation turn, with an analysis of what was discussed.
#[derive(Extract, Deserialize, Serialize, Debug)]
#[serde(rename_all = "camelCase")]
struct ConversationTurn {
    /// The reply to the user.
    #[extract(min_length = 1, max_length = 300)]
    response: String,
    /// What the conversation is about so far.
    analysis: Analysis,
}

/// What a conversation is about.
#[derive(Extract, Deserialize, Serialize, Debug)]
#[serde(rename_all = "camelCase")]
struct Analysis {
    /// The subjects discussed in this turn.
    #[extract(min_items = 0, max_items = 2)]
    subjects: Vec<Subject>,
    /// How this turn changes the running summary.
    #[extract(min_length = 10, max_length = 200)]
    summary_update: String,
}

/// One subject of a conversation.
#[derive(Extract, Deserialize, Serialize, Debug)]
#[serde(rename_all = "camelCase")]
struct Subject {
    /// A short slug naming the subject, like `garden-watering`.
    #[extract(pattern = "^[a-z0-9]+(-[a-z0-9]+)*$", min_length = 2, max_length = 40)]
    name: String,
    /// What the subject is about.
    #[extract(min_length = 10, max_length = 120)]
    description: String,
    /// Whether the subject first came up in this turn.
    is_new: bool,
    /// Keywords of the subject.
    #[extract(min_items = 0, max_items = 3)]
    keywords: Vec<Keyword>,
}

/// A keyword and how sure the model is of it.
#[derive(Extract, Deserialize, Serialize, Debug)]
#[serde(rename_all = "camelCase")]
struct Keyword {
    /// The keyword, as a slug.
    #[extract(pattern = "^[a-z0-9]+(-[a-z0-9]+)*$", max_length = 30)]
    term: String,
    /// Confidence from 0 to 1.
    #[extract(minimum = 0.0, maximum = 1.0)]
    confidence: f64,
}

const TURNS: &[&str] = &[
    "My tomato plants have yellow leaves at the bottom. I water them every evening.",
    "Should I also add fertilizer? They are in pots on a sunny balcony.",
];

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let llm = backend::from_env_and_args()?;
    let extractor = Extractor::new(&llm)
        .instructions(
            "You are a gardening assistant. Answer the user, then analyse the conversation.",
        )
        .template("Summary of the conversation so far: {{summary}}\n\nUser: {{text}}")
        .max_tokens(700)
        .temperature(0.0);
    let mut summary = String::from("(nothing yet)");
    for turn in TURNS {
        println!("user: {turn}");
        let input = Input::text(*turn).var("summary", &summary);
        match extractor.extract::<ConversationTurn>(input).await {
            Ok(out) => {
                println!("{}", serde_json::to_string_pretty(&out.value)?);
                println!(
                    "({} attempt(s), {} tokens)\n",
                    out.report.attempts.len(),
                    out.report.usage.total()
                );
                summary = out.value.analysis.summary_update;
            }
            // A small model may not fit every bound; the error says which and shows the last answer.
            Err(err) => println!("no valid turn: {err}\n"),
        }
    }
    Ok(())
}
