//! Gemini through `generateContent`: an invoice as one value, then its lines streamed as each completes,
//! the schema sent as `responseJsonSchema`.
//!
//! ```text
//! GEMINI_API_KEY=... cargo run --example gemini
//! GEMINI_API_KEY=... GEMINI_MODEL=gemini-2.5-pro cargo run --example gemini
//! ```

#[path = "support/hosted.rs"]
mod hosted;

use llm_extract::extract::Mode;
use llm_extract::llm::Gemini;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let result = async {
        hosted::require_key("GEMINI_API_KEY", "Gemini")?;
        let model = std::env::var("GEMINI_MODEL").unwrap_or_else(|_| "gemini-2.5-flash".into());
        hosted::run(Gemini::new(model)?, Mode::Constrained).await
    };
    match result.await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
