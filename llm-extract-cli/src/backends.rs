//! The backends the flags name, each with the key named for it, and the extractors built on them.
//!
//! Which key goes where is the library's rule (a provider's own variable only to its own API, any other
//! server only the key named for it by the --api-key-env after its flag, never a key nor the credentials
//! written into a URL, Ollama's included, over plain http to another machine unless
//! --allow-insecure-key); this file passes the flags on, says when a set variable is not sent, and
//! warns about flags the chosen backend ignores.

use crate::args::{BackendArgs, ConfidenceRuleArg, ExtractArgs, Hosted, ModeArg, StrategyArg};
use crate::error::CliError;
use crate::identity::Identified;
use llm_extract::extract::{Aggregate, Basis, ConfidenceRule, Extractor, Mode, Strategy};
use llm_extract::llm::{
    redact_url, Anthropic, Cache, ConvertMedia, ExchangeHook, Gemini, Llm, LlmError, Ollama,
    OpenAiCompatible, ResponseStore, RetryPolicy,
};
use std::sync::Arc;

/// Any backend, saying what it is (`identity.rs`).
pub type Backend = Arc<dyn Identified>;

/// The model Ollama is asked for when neither --model nor OLLAMA_MODEL says.
const DEFAULT_OLLAMA_MODEL: &str = "llama3.2";

/// How many times a request to a server is re-sent when --retries does not say.
const DEFAULT_RETRIES: u32 = 3;

/// The most sequences --samples adds to the embedded engine's batch (each holds its own KV cache).
const MAX_SEQUENCES: usize = 16;

/// Every backend the flags name, in order: each --ollama, --openai, --anthropic, then --gemini, or the
/// embedded model.
/// `parallel` is how many extractions the embedded engine runs at once, each with its --samples
/// answers decoded together (at most [`MAX_SEQUENCES`] sequences); `extract` is otherwise only read
/// to warn about a mode a backend does not have.
pub fn backends(
    args: &BackendArgs,
    extract: &ExtractArgs,
    parallel: usize,
) -> Result<Vec<Backend>, CliError> {
    let parallel = parallel
        .saturating_mul(usize::from(extract.samples))
        .clamp(1, MAX_SEQUENCES.max(parallel));
    let backends = named(args, extract, parallel)?;
    let backends = converting(backends, extract);
    let backends = match &args.cache {
        Some(dir) => cached(backends, dir)?,
        None => backends,
    };
    Ok(crate::backend_layers::arrange(args, backends))
}

/// The backends the flags name, each as built (before the layers --convert-media, --cache and
/// --fallback put over them).
fn named(
    args: &BackendArgs,
    extract: &ExtractArgs,
    parallel: usize,
) -> Result<Vec<Backend>, CliError> {
    if let Some(path) = &args.embedded {
        warn_ignored(args, extract, true);
        return Ok(vec![embedded(path, parallel)?]);
    }
    let hook = crate::backend_layers::dump_hook(args.dump_exchanges.as_deref())?;
    let hook = hook.as_ref();
    let mut backends = Vec::new();
    for url in &args.ollama {
        backends.push(ollama(args, Some(url), hook)?);
    }
    for (nth, url) in args.openai.iter().enumerate() {
        backends.push(openai(args, nth, url, hook)?);
    }
    for (nth, url) in args.anthropic.iter().enumerate() {
        backends.push(anthropic(args, nth, url, hook)?);
    }
    for (nth, url) in args.gemini.iter().enumerate() {
        backends.push(gemini(args, nth, url, hook)?);
    }
    if backends.is_empty() {
        let embedded = embedded_by_default();
        warn_ignored(args, extract, embedded);
        backends.push(if embedded {
            self::embedded("", parallel)?
        } else {
            ollama(args, None, hook)?
        });
    } else {
        warn_ignored(args, extract, false);
    }
    Ok(backends)
}

/// Each of `backends` answering from the response cache in `dir` what it holds (--cache).
fn cached(backends: Vec<Backend>, dir: &std::path::Path) -> Result<Vec<Backend>, CliError> {
    let store = ResponseStore::open(dir).map_err(|e| CliError::usage(format!("--cache: {e}")))?;
    Ok(backends
        .into_iter()
        .map(|llm| {
            // The CLI's identity tells apart what the description does not (a model file replaced).
            let identity = llm.identity();
            Arc::new(Cache::new(llm, store.clone()).with_identity(identity)) as Backend
        })
        .collect())
}

/// With `--convert-media`, each backend converting the PDFs it cannot take ([`ConvertMedia`]).
fn converting(backends: Vec<Backend>, extract: &ExtractArgs) -> Vec<Backend> {
    if !extract.convert_media {
        return backends;
    }
    backends
        .into_iter()
        .map(|backend| Arc::new(ConvertMedia::new(backend)) as Backend)
        .collect()
}

/// The one backend of a command that does not share work between several.
pub fn single(args: &BackendArgs, extract: &ExtractArgs) -> Result<Backend, CliError> {
    single_parallel(args, extract, 1)
}

/// [`single`], the embedded engine running up to `parallel` requests at once.
pub fn single_parallel(
    args: &BackendArgs,
    extract: &ExtractArgs,
    parallel: usize,
) -> Result<Backend, CliError> {
    let mut all = backends(args, extract, parallel)?;
    if all.len() > 1 {
        return Err(CliError::usage(
            "several backends (--ollama, --openai, --anthropic, --gemini) are shared only by \
             `llm-extract batch`; give one here, or ask them in turn with --fallback",
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
        .mode(mode(args.mode))
        .samples(usize::from(args.samples))
        .strategy(match args.strategy {
            StrategyArg::OneAnswer => Strategy::OneAnswer,
            StrategyArg::PerField => Strategy::PerField,
        });
    if let Some(tokens) = args.max_tokens {
        extractor = extractor.max_tokens(tokens);
    }
    if let Some(temperature) = args.temperature {
        extractor = extractor.temperature(temperature);
    }
    if let Some(rule) = confidence_rule(args) {
        extractor = extractor.confidence(rule);
    }
    if let Some(threshold) = args.min_confidence {
        extractor = extractor.min_confidence(threshold);
    }
    extractor
}

/// The confidence rule the flags ask for, if they ask for confidence at all.
pub fn confidence_rule(args: &ExtractArgs) -> Option<ConfidenceRule> {
    let asked = args.confidence || args.confidence_rule.is_some() || args.min_confidence.is_some();
    let (basis, aggregate) = match args.confidence_rule {
        None | Some(ConfidenceRuleArg::AllowedMean) => (Basis::Allowed, Aggregate::Mean),
        Some(ConfidenceRuleArg::AllowedSum) => (Basis::Allowed, Aggregate::Sum),
        Some(ConfidenceRuleArg::VocabularyMean) => (Basis::Vocabulary, Aggregate::Mean),
        Some(ConfidenceRuleArg::VocabularySum) => (Basis::Vocabulary, Aggregate::Sum),
    };
    asked.then(|| ConfidenceRule::new(basis, aggregate))
}

pub fn mode(mode: ModeArg) -> Mode {
    match mode {
        ModeArg::Constrained => Mode::Constrained,
        ModeArg::Prompted => Mode::Prompted,
        ModeArg::Tool => Mode::Tool,
    }
}

/// Whether a command without backend flags runs the embedded engine: when this build has it and
/// OLLAMA_HOST does not name a server.
fn embedded_by_default() -> bool {
    let ollama_host_set = std::env::var_os("OLLAMA_HOST").is_some_and(|v| !v.is_empty());
    !ollama_host_set && cfg!(feature = "llama-cpp")
}

/// Prints a warning for each flag given that the chosen backends ignore.
fn warn_ignored(args: &BackendArgs, extract: &ExtractArgs, embedded: bool) {
    for message in ignored(args, extract.mode, embedded) {
        eprintln!("llm-extract: warning: {message}");
    }
}

/// The flags given that the chosen backends ignore (`embedded`: the embedded engine is the backend),
/// each said with the flag and the backend.
fn ignored(args: &BackendArgs, mode: ModeArg, embedded: bool) -> Vec<String> {
    let mut ignored = Vec::new();
    if mode == ModeArg::Tool {
        // Only OpenAI-compatible servers and Anthropic force a tool; the others get the schema as in
        // constrained mode.
        let without_tools = if embedded {
            vec!["the embedded engine".to_owned()]
        } else {
            let mut named: Vec<String> = args
                .ollama
                .iter()
                .map(|url| format!("--ollama {}", redact_url(url)))
                .collect();
            named.extend(args.gemini.iter().map(|url| shown(Hosted::Gemini, url)));
            if named.is_empty() && args.openai.is_empty() && args.anthropic.is_empty() {
                named.push("the default Ollama server".to_owned());
            }
            named
        };
        if !without_tools.is_empty() {
            ignored.push(format!(
                "--mode tool is ignored by {}, which has no forced tool: the schema goes as in \
                 --mode constrained",
                without_tools.join(", ")
            ));
        }
    }
    if embedded {
        if let Some(model) = &args.model {
            ignored.push(format!(
                "--model {model} is ignored: the embedded engine runs the GGUF file --embedded (or \
                 $LLM_EXTRACT_MODEL) names"
            ));
        }
        if let Some(retries) = args.retries {
            ignored.push(format!(
                "--retries {retries} is ignored: the embedded engine sends no requests to retry"
            ));
        }
    }
    if args.tool_choice_required && args.openai.is_empty() {
        ignored.push(
            "--tool-choice-required is ignored: it applies to --openai backends, and this command \
             has none"
                .to_owned(),
        );
    }
    // An Ollama server gets credentials only from its URL (`user:password@`, sent as basic
    // authentication); the one a command without backend flags talks to is OLLAMA_HOST's.
    let ollama_credentials = if embedded {
        false
    } else if args.ollama.is_empty() {
        has_credentials(&std::env::var("OLLAMA_HOST").unwrap_or_default())
    } else {
        args.ollama.iter().any(|url| has_credentials(url))
    };
    if args.allow_insecure_key
        && args.openai.is_empty()
        && args.anthropic.is_empty()
        && args.gemini.is_empty()
        && !ollama_credentials
    {
        ignored.push(
            "--allow-insecure-key is ignored: only --openai, --anthropic and --gemini backends and \
             an Ollama URL with credentials in it send credentials, and this command has none"
                .to_owned(),
        );
    }
    ignored
}

/// Whether `url` holds credentials (what [`redact_url`] hides).
fn has_credentials(url: &str) -> bool {
    redact_url(url) != url
}

fn retry(args: &BackendArgs) -> RetryPolicy {
    RetryPolicy::new().max_retries(args.retries.unwrap_or(DEFAULT_RETRIES))
}

/// The flag and URL of a backend, credentials redacted, for messages.
fn shown(backend: Hosted, url: &str) -> String {
    if url.is_empty() {
        backend.flag().to_owned()
    } else if backend == Hosted::OpenAi {
        format!("{} {}", backend.flag(), redact_url(url))
    } else {
        format!("{}={}", backend.flag(), redact_url(url))
    }
}

/// A backend that could not be built, as a usage error naming its flag.
fn build_error(backend: Hosted, url: &str, error: LlmError) -> CliError {
    let shown = shown(backend, url);
    match error {
        LlmError::InsecureKey { .. } => CliError::usage(format!(
            "{shown}: refusing to send the API key or the credentials in the URL over plain http to \
             a host other than this machine: anyone on the network between could read them; use \
             https, or pass --allow-insecure-key to send them anyway"
        )),
        other => CliError::usage(format!("{shown}: {other}")),
    }
}

/// Says when the provider's variable is set but this backend gets no key (it is not the provider's
/// own API, and no --api-key-env follows its flag).
fn warn_unsent_key(backend: Hosted, url: &str, has_key: bool, variable: &str, api: &str) {
    if has_key || std::env::var_os(variable).is_none_or(|v| v.is_empty()) {
        return;
    }
    eprintln!(
        "llm-extract: warning: {} gets no API key: {variable} is sent only to {api}; name a key for \
         this server with --api-key-env VAR right after its flag",
        shown(backend, url)
    );
}

fn ollama(
    args: &BackendArgs,
    url: Option<&str>,
    hook: Option<&ExchangeHook>,
) -> Result<Backend, CliError> {
    let model = args
        .model
        .clone()
        .or_else(|| std::env::var("OLLAMA_MODEL").ok().filter(|m| !m.is_empty()))
        .unwrap_or_else(|| DEFAULT_OLLAMA_MODEL.to_owned());
    let mut builder = Ollama::builder(model)
        .retry(retry(args))
        .idle_timeout(args.idle_timeout)
        .allow_insecure_key(args.allow_insecure_key);
    if let Some(url) = url {
        builder = builder.host(url);
    }
    if let Some(hook) = hook {
        builder = builder.on_exchange(hook.clone());
    }
    let llm = builder.build().map_err(|e| match e {
        LlmError::InsecureKey { url } => CliError::usage(format!(
            "--ollama {url}: refusing to send the credentials in the URL over plain http to a host \
             other than this machine: anyone on the network between could read them; use https, or \
             pass --allow-insecure-key to send them anyway"
        )),
        other => CliError::usage(format!("--ollama: {other}")),
    })?;
    Ok(Arc::new(llm))
}

fn openai(
    args: &BackendArgs,
    nth: usize,
    url: &str,
    hook: Option<&ExchangeHook>,
) -> Result<Backend, CliError> {
    Ok(Arc::new(openai_llm(args, nth, url, hook)?))
}

/// The backend of the `nth` --openai flag (at `url`), as its own type.
pub fn openai_llm(
    args: &BackendArgs,
    nth: usize,
    url: &str,
    hook: Option<&ExchangeHook>,
) -> Result<OpenAiCompatible, CliError> {
    let model = args
        .model
        .clone()
        .or_else(|| std::env::var("OPENAI_MODEL").ok().filter(|m| !m.is_empty()))
        .ok_or_else(|| {
            CliError::usage(format!(
                "{} needs --model NAME (the model the server serves), or OPENAI_MODEL set",
                shown(Hosted::OpenAi, url)
            ))
        })?;
    let mut builder = OpenAiCompatible::builder(url, model)
        .retry(retry(args))
        .idle_timeout(args.idle_timeout)
        .tool_choice_required(args.tool_choice_required)
        .allow_insecure_key(args.allow_insecure_key);
    if let Some(var) = args.key_env(Hosted::OpenAi, nth) {
        builder = builder.api_key_env(var);
    }
    if let Some(hook) = hook {
        builder = builder.on_exchange(hook.clone());
    }
    let llm = builder
        .build()
        .map_err(|e| build_error(Hosted::OpenAi, url, e))?;
    warn_unsent_key(
        Hosted::OpenAi,
        url,
        llm.has_key(),
        "OPENAI_API_KEY",
        "https://api.openai.com",
    );
    Ok(llm)
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

fn anthropic(
    args: &BackendArgs,
    nth: usize,
    url: &str,
    hook: Option<&ExchangeHook>,
) -> Result<Backend, CliError> {
    Ok(Arc::new(anthropic_llm(args, nth, url, hook)?))
}

/// The backend of the `nth` --anthropic flag (at `url`), as its own type.
pub fn anthropic_llm(
    args: &BackendArgs,
    nth: usize,
    url: &str,
    hook: Option<&ExchangeHook>,
) -> Result<Anthropic, CliError> {
    let model = hosted_model(args, "anthropic", "ANTHROPIC_MODEL", "claude-sonnet-4-5")?;
    let mut builder = Anthropic::builder(model)
        .retry(retry(args))
        .idle_timeout(args.idle_timeout)
        .allow_insecure_key(args.allow_insecure_key);
    if !url.is_empty() {
        builder = builder.base_url(url);
    }
    if let Some(var) = args.key_env(Hosted::Anthropic, nth) {
        builder = builder.api_key_env(var);
    }
    if let Some(hook) = hook {
        builder = builder.on_exchange(hook.clone());
    }
    let llm = builder
        .build()
        .map_err(|e| build_error(Hosted::Anthropic, url, e))?;
    warn_unsent_key(
        Hosted::Anthropic,
        url,
        llm.has_key(),
        "ANTHROPIC_API_KEY",
        "https://api.anthropic.com",
    );
    Ok(llm)
}

fn gemini(
    args: &BackendArgs,
    nth: usize,
    url: &str,
    hook: Option<&ExchangeHook>,
) -> Result<Backend, CliError> {
    Ok(Arc::new(gemini_llm(args, nth, url, hook)?))
}

/// The backend of the `nth` --gemini flag (at `url`), as its own type.
pub fn gemini_llm(
    args: &BackendArgs,
    nth: usize,
    url: &str,
    hook: Option<&ExchangeHook>,
) -> Result<Gemini, CliError> {
    let model = hosted_model(args, "gemini", "GEMINI_MODEL", "gemini-2.5-flash")?;
    let mut builder = Gemini::builder(model)
        .retry(retry(args))
        .idle_timeout(args.idle_timeout)
        .allow_insecure_key(args.allow_insecure_key);
    if !url.is_empty() {
        builder = builder.base_url(url);
    }
    if let Some(var) = args.key_env(Hosted::Gemini, nth) {
        builder = builder.api_key_env(var);
    }
    if let Some(hook) = hook {
        builder = builder.on_exchange(hook.clone());
    }
    let llm = builder
        .build()
        .map_err(|e| build_error(Hosted::Gemini, url, e))?;
    warn_unsent_key(
        Hosted::Gemini,
        url,
        llm.has_key(),
        "GEMINI_API_KEY",
        "https://generativelanguage.googleapis.com",
    );
    Ok(llm)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::{Cli, Command};
    use clap::Parser;

    /// The warnings `run` with `flags` (separated by spaces) gives about flags its backends ignore;
    /// `embedded` says whether the backend is the embedded engine.
    fn ignored_with(flags: &str, embedded: bool) -> Vec<String> {
        let argv = ["llm-extract", "run", "--signature", "{a :int}"];
        let cli = Cli::try_parse_from(argv.into_iter().chain(flags.split_whitespace())).unwrap();
        let Command::Run(args) = cli.command else {
            panic!()
        };
        ignored(&args.backend, args.extract.mode, embedded)
    }

    #[test]
    fn flags_the_chosen_backend_ignores_are_named_with_the_backend() {
        let warnings = ignored_with("--embedded --model m --retries 1 --mode tool", true);
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        assert!(warnings[0].contains("--mode tool is ignored by the embedded engine"));
        assert!(warnings[1].contains("--model m") && warnings[1].contains("embedded"));
        assert!(warnings[2].contains("--retries 1") && warnings[2].contains("embedded"));

        let warnings = ignored_with(
            "--openai http://a/v1 --ollama http://u:pw@o:1 --gemini --mode tool",
            false,
        );
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].contains("--ollama http://u:[redacted]@o:1, --gemini")
                && !warnings[0].contains("--openai"),
            "{warnings:?}"
        );

        let warnings = ignored_with("--gemini --tool-choice-required", false);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("--tool-choice-required") && warnings[0].contains("--openai"));

        let every_flag_used = "--openai http://a/v1 --anthropic --model m --retries 1 --mode tool \
                               --tool-choice-required --allow-insecure-key";
        let warnings = ignored_with(every_flag_used, false);
        assert_eq!(warnings, Vec::<String>::new());

        // An Ollama URL with credentials in it uses --allow-insecure-key; one without does not.
        let warnings = ignored_with("--ollama http://u:pw@o:1 --allow-insecure-key", false);
        assert_eq!(warnings, Vec::<String>::new());
        let warnings = ignored_with("--ollama http://o:1 --allow-insecure-key", false);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("--allow-insecure-key is ignored"));
    }
}
