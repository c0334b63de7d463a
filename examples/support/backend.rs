//! Which model the examples talk to: an Ollama server when `--ollama` is passed or `OLLAMA_HOST` is set
//! (model `OLLAMA_MODEL`, default `llama3.2`), else the embedded llama.cpp engine (feature `llama-cpp`)
//! with the model `LLM_EXTRACT_MODEL` names or the default one `scripts/fetch-model.sh` caches.

use llm_extract::llm::Likelihood;
use llm_extract::Llm;
use std::error::Error;

/// A backend, and the same model as a [`Likelihood`] when it can score options.
pub type WithScorer = (Box<dyn Llm>, Option<Box<dyn Likelihood>>);

/// The backend the command line and environment ask for.
#[allow(dead_code)] // each example includes this file and uses one of the two functions
pub fn from_env_and_args() -> Result<Box<dyn Llm>, Box<dyn Error>> {
    Ok(with_scorer()?.0)
}

/// The backend the command line and environment ask for, and the same model as a [`Likelihood`] when
/// it can score options (the embedded engine; an Ollama server cannot).
#[allow(dead_code)]
pub fn with_scorer() -> Result<WithScorer, Box<dyn Error>> {
    let flag = std::env::args().skip(1).any(|arg| arg == "--ollama");
    let host = std::env::var("OLLAMA_HOST").ok().filter(|h| !h.is_empty());
    if flag || host.is_some() {
        let model = std::env::var("OLLAMA_MODEL").ok().filter(|m| !m.is_empty());
        let model = model.unwrap_or_else(|| "llama3.2".into());
        let llm = llm_extract::Ollama::new(&model)?;
        eprintln!("{}\n", ollama_banner(&llm));
        return Ok((Box::new(llm), None));
    }
    embedded()
}

/// The line that says which Ollama model and server the example talks to, the server's credentials
/// (`user:password@` in `OLLAMA_HOST`) redacted.
pub fn ollama_banner(llm: &llm_extract::Ollama) -> String {
    let host = llm_extract::llm::redact_url(llm.host());
    format!("[model: {} on the Ollama server at {host}]", llm.model())
}

#[cfg(feature = "llama-cpp")]
fn embedded() -> Result<WithScorer, Box<dyn Error>> {
    let llm = llm_extract::llm::llama_cpp::LlamaCpp::from_env()?;
    eprintln!(
        "[model: {} (embedded llama.cpp)]\n",
        llm.model_path().display()
    );
    Ok((Box::new(llm.clone()), Some(Box::new(llm))))
}

#[cfg(not(feature = "llama-cpp"))]
fn embedded() -> Result<WithScorer, Box<dyn Error>> {
    Err("no model to run: build with `--features llama-cpp` for the embedded engine (scripts/demo.sh does), \
         or point OLLAMA_HOST at an Ollama server"
        .into())
}
