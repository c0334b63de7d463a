//! A two-step pipeline: the sentiment extracted from a review feeds the prompt that drafts the reply.
//!
//! ```sh
//! cargo run --features llama-cpp --example sentiment_pipeline
//! OLLAMA_HOST=http://localhost:11434 cargo run --example sentiment_pipeline
//! ```

#[path = "support/backend.rs"]
mod backend;

use llm_extract::extract::{Extractor, Input};
use llm_extract::Extract;
use serde::{Deserialize, Serialize};

/// The sentiment of a text.
#[derive(Extract, Deserialize, Serialize, Debug)]
struct Sentiment {
    /// The overall polarity.
    sentiment: Polarity,
    /// How strongly the text expresses it, from 0 to 1.
    #[extract(minimum = 0.0, maximum = 1.0)]
    score: f64,
}

/// A sentiment's polarity.
#[derive(Extract, Deserialize, Serialize, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum Polarity {
    /// Approving, happy, favourable.
    Positive,
    /// Disapproving, unhappy, unfavourable.
    Negative,
    /// Neither.
    Neutral,
}

/// The answer to send the customer.
#[derive(Extract, Deserialize, Debug)]
struct Reply {
    /// One or two sentences addressed to the customer.
    #[extract(min_length = 10, max_length = 400)]
    reply: String,
    /// Whether a person should follow up.
    escalate: bool,
}

const REVIEWS: &[&str] = &[
    "The blender arrived broken and support never answered my emails. I want a refund.",
    "Fast delivery, and the kettle boils in under two minutes. Very happy with it!",
];

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let llm = backend::from_env_and_args()?;
    let classify = Extractor::new(&llm).max_tokens(64).temperature(0.0);
    let draft = Extractor::new(&llm)
        .instructions("You write short, polite replies to customer reviews.")
        .template(
            "This review was classified as {{sentiment.sentiment}} (strength {{sentiment.score}}).\n\
             Draft the reply, and escalate if the customer is unhappy.\n\nReview: {{text}}",
        )
        .max_tokens(160)
        .temperature(0.0);

    for review in REVIEWS {
        println!("review: {review}");
        // Step 1: the sentiment.
        let sentiment = classify.extract::<Sentiment>(*review).await?.value;
        println!(
            "  sentiment: {:?} ({:.2})",
            sentiment.sentiment, sentiment.score
        );
        // Step 2: the first step's output is a variable of the second prompt.
        let input = Input::text(*review).var("sentiment", &sentiment);
        match draft.extract::<Reply>(input).await {
            Ok(out) => println!(
                "  reply: {}\n  escalate: {} ({} attempt(s), {} tokens)",
                out.value.reply,
                out.value.escalate,
                out.report.attempts.len(),
                out.report.usage.total()
            ),
            Err(err) => println!("  no reply: {err}"),
        }
    }
    Ok(())
}
