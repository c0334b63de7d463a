//! The backends the flags name, and the extractors built on them.

use crate::args::{BackendArgs, ExtractArgs, ModeArg};
use crate::error::CliError;
use crate::identity::Identified;
use llm_extract::extract::{Extractor, Mode};
use llm_extract::llm::{Anthropic, Gemini, Llm, Ollama, OpenAiCompatible, RetryPolicy};
use std::sync::Arc;

/// Any backend, saying what it is (`identity.rs`).
pub type Backend = Arc<dyn Identified>;

/// The model Ollama is asked for when neither --model nor OLLAMA_MODEL says.
const DEFAULT_OLLAMA_MODEL: &str = "llama3.2";

/// Every backend the flags name, in order: each --ollama, --openai, --anthropic, then --gemini, or the
/// embedded model.
/// `parallel` is how many requests the embedded engine runs at once.
pub fn backends(args: &BackendArgs, parallel: usize) -> Result<Vec<Backend>, CliError> {
    if let Some(path) = &args.embedded {
        return Ok(vec![embedded(path, parallel)?]);
    }
    let mut backends = Vec::new();
    for url in &args.ollama {
        backends.push(ollama(args, Some(url))?);
    }
    for url in &args.openai {
        backends.push(openai(args, url)?);
    }
    for url in &args.anthropic {
        backends.push(anthropic(args, url)?);
    }
    for url in &args.gemini {
        backends.push(gemini(args, url)?);
    }
    if backends.is_empty() {
        backends.push(default_backend(args, parallel)?);
    }
    Ok(backends)
}

/// The one backend of a command that does not share work between several.
pub fn single(args: &BackendArgs) -> Result<Backend, CliError> {
    single_parallel(args, 1)
}

/// [`single`], the embedded engine running up to `parallel` requests at once.
pub fn single_parallel(args: &BackendArgs, parallel: usize) -> Result<Backend, CliError> {
    let mut all = backends(args, parallel)?;
    if all.len() > 1 {
        return Err(CliError::usage(
            "several backends (--ollama, --openai, --anthropic, --gemini) are shared only by \
             `llm-extract batch`; give one here",
        ));
    }
    all.pop().ok_or_else(|| {
        CliError::usage(
            "no backend: pass --ollama URL, --openai URL, --anthropic, --gemini or --embedded",
        )
    })
}

/// The settings every extraction of the command uses.
pub fn extractor<L: Llm>(llm: L, args: &ExtractArgs) -> Extractor<L> {
    let mut extractor = Extractor::new(llm)
        .max_attempts(args.max_attempts)
        .mode(mode(args.mode));
    if let Some(tokens) = args.max_tokens {
        extractor = extractor.max_tokens(tokens);
    }
    if let Some(temperature) = args.temperature {
        extractor = extractor.temperature(temperature);
    }
    extractor
}

pub fn mode(mode: ModeArg) -> Mode {
    match mode {
        ModeArg::Constrained => Mode::Constrained,
        ModeArg::Prompted => Mode::Prompted,
        ModeArg::Tool => Mode::Tool,
    }
}

fn default_backend(args: &BackendArgs, parallel: usize) -> Result<Backend, CliError> {
    let ollama_host_set = std::env::var_os("OLLAMA_HOST").is_some_and(|v| !v.is_empty());
    if !ollama_host_set && cfg!(feature = "llama-cpp") {
        return embedded("", parallel);
    }
    ollama(args, None)
}

fn retry(args: &BackendArgs) -> RetryPolicy {
    RetryPolicy::new().max_retries(args.retries)
}

fn ollama(args: &BackendArgs, url: Option<&str>) -> Result<Backend, CliError> {
    let model = args
        .model
        .clone()
        .or_else(|| std::env::var("OLLAMA_MODEL").ok().filter(|m| !m.is_empty()))
        .unwrap_or_else(|| DEFAULT_OLLAMA_MODEL.to_owned());
    let mut builder = Ollama::builder(model).retry(retry(args));
    if let Some(url) = url {
        builder = builder.host(url);
    }
    let llm = builder
        .build()
        .map_err(|e| CliError::usage(format!("--ollama: {e}")))?;
    Ok(Arc::new(llm))
}

fn openai(args: &BackendArgs, url: &str) -> Result<Backend, CliError> {
    let model = args
        .model
        .clone()
        .or_else(|| std::env::var("OPENAI_MODEL").ok().filter(|m| !m.is_empty()))
        .ok_or_else(|| {
            CliError::usage(format!(
                "--openai {url} needs --model NAME (the model the server serves), or OPENAI_MODEL set"
            ))
        })?;
    let mut builder = OpenAiCompatible::builder(url, model)
        .retry(retry(args))
        .tool_choice_required(args.tool_choice_required);
    match &args.api_key_env {
        Some(var) => builder = builder.api_key_env(var.clone()),
        None if std::env::var_os("OPENAI_API_KEY").is_some_and(|v| !v.is_empty()) => {
            builder = builder.api_key_env("OPENAI_API_KEY")
        }
        None => {}
    }
    let llm = builder
        .build()
        .map_err(|e| CliError::usage(format!("--openai: {e}")))?;
    Ok(Arc::new(llm))
}

/// The model for a hosted backend: --model, else the variable `env`.
fn hosted_model(
    args: &BackendArgs,
    flag: &str,
    env: &str,
    example: &str,
) -> Result<String, CliError> {
    args.model
        .clone()
        .or_else(|| std::env::var(env).ok().filter(|m| !m.is_empty()))
        .ok_or_else(|| {
            CliError::usage(format!(
                "--{flag} needs --model NAME (e.g. {example}), or {env} set"
            ))
        })
}

fn anthropic(args: &BackendArgs, url: &str) -> Result<Backend, CliError> {
    let model = hosted_model(args, "anthropic", "ANTHROPIC_MODEL", "claude-sonnet-4-5")?;
    let mut builder = Anthropic::builder(model).retry(retry(args));
    if !url.is_empty() {
        builder = builder.base_url(url);
    }
    if let Some(var) = &args.api_key_env {
        builder = builder.api_key_env(var.clone());
    }
    let llm = builder
        .build()
        .map_err(|e| CliError::usage(format!("--anthropic: {e}")))?;
    Ok(Arc::new(llm))
}

fn gemini(args: &BackendArgs, url: &str) -> Result<Backend, CliError> {
    let model = hosted_model(args, "gemini", "GEMINI_MODEL", "gemini-2.5-flash")?;
    let mut builder = Gemini::builder(model).retry(retry(args));
    if !url.is_empty() {
        builder = builder.base_url(url);
    }
    if let Some(var) = &args.api_key_env {
        builder = builder.api_key_env(var.clone());
    }
    let llm = builder
        .build()
        .map_err(|e| CliError::usage(format!("--gemini: {e}")))?;
    Ok(Arc::new(llm))
}

#[cfg(feature = "llama-cpp")]
fn embedded(path: &str, parallel: usize) -> Result<Backend, CliError> {
    use llm_extract::llm::llama_cpp::{model_path_from_env, LlamaCpp};
    let path = if path.is_empty() {
        model_path_from_env()
            .map_err(|e| CliError::new(crate::error::Exit::Backend, e.to_string()))?
    } else {
        std::path::PathBuf::from(path)
    };
    let llm = LlamaCpp::builder(path).parallel(parallel.max(1)).build()?;
    Ok(Arc::new(llm))
}

#[cfg(not(feature = "llama-cpp"))]
fn embedded(_path: &str, _parallel: usize) -> Result<Backend, CliError> {
    Err(CliError::usage(
        "--embedded needs the embedded llama.cpp engine, which this llm-extract was built without; rebuild \
         with `cargo install --path llm-extract-cli --features llama-cpp` (needs cmake, clang and \
         libclang-dev), or use --ollama URL / --openai URL / --anthropic / --gemini",
    ))
}
