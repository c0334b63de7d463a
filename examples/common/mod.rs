//! The one way every example picks its model.
//!
//! - `OLLAMA_HOST` set (or `--ollama` on the command line): the Ollama server there, model `OLLAMA_MODEL`
//!   (default `llama3.2`);
//! - otherwise, built with `--features llama-cpp`: the embedded llama.cpp engine on `LLM_EXTRACT_MODEL`, else
//!   the cached default model (`scripts/fetch-model.sh` puts it there);
//! - otherwise: an error saying which of the two to do.
//!
//! ```sh
//! cargo run --features llama-cpp --example streaming
//! OLLAMA_HOST=http://localhost:11434 OLLAMA_MODEL=qwen2.5:1.5b cargo run --example streaming
//! ```

use llm_extract::llm::{Llm, Ollama};
use std::sync::Arc;

/// Any backend, shareable.
pub type Backend = Arc<dyn Llm>;

/// An example's error: printed by `main` as it is.
pub type Error = Box<dyn std::error::Error + Send + Sync>;

/// The backend the environment asks for (see the module docs), announced on standard error.
pub fn backend() -> Result<Backend, Error> {
    let ollama_host = std::env::var("OLLAMA_HOST").ok().filter(|h| !h.is_empty());
    if ollama_host.is_some() || std::env::args().any(|arg| arg == "--ollama") {
        let model = std::env::var("OLLAMA_MODEL")
            .ok()
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| "llama3.2".to_owned());
        let llm = Ollama::new(model.clone())?;
        eprintln!("model: {model} on Ollama at {}", llm.host());
        return Ok(Arc::new(llm));
    }
    embedded()
}

#[cfg(feature = "llama-cpp")]
fn embedded() -> Result<Backend, Error> {
    let llm = llm_extract::llm::llama_cpp::LlamaCpp::from_env()?;
    eprintln!("model: {} (embedded llama.cpp)", llm.model_name());
    Ok(Arc::new(llm))
}

#[cfg(not(feature = "llama-cpp"))]
fn embedded() -> Result<Backend, Error> {
    Err("no model: run with `--features llama-cpp` for the embedded model (scripts/fetch-model.sh fetches it), \
         or set OLLAMA_HOST to use an Ollama server"
        .into())
}
