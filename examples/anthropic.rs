//! Claude through Anthropic's Messages API: an invoice as one value (native JSON output), then its lines
//! streamed as each completes through a forced tool call.
//!
//! ```text
//! ANTHROPIC_API_KEY=... cargo run --example anthropic
//! ANTHROPIC_API_KEY=... ANTHROPIC_MODEL=claude-sonnet-4-5 cargo run --example anthropic
//! ```

#[path = "support/hosted.rs"]
mod hosted;

use llm_extract::extract::Mode;
use llm_extract::llm::Anthropic;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let result = async {
        hosted::require_key("ANTHROPIC_API_KEY", "Anthropic")?;
        let model = std::env::var("ANTHROPIC_MODEL").unwrap_or_else(|_| "claude-haiku-4-5".into());
        let claude = Anthropic::new(model)?;
        hosted::run(&claude, Mode::Constrained).await?;
        // The same, with the schema sent as one tool the model must call.
        hosted::run(&claude, Mode::Tool).await
    };
    match result.await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
