//! What the backend flags add over the backends `backends.rs` builds: `--requests-per-minute` and
//! `--tokens-per-minute` (a [`RateLimit`] over each backend), `--fallback` (one [`Fallback`] over all
//! of them, in the order they are written), `--dump-exchanges` (an [`ExchangeHook`] writing one file
//! per exchange), and the name of the backend that answered, for a record.

use crate::args::BackendArgs;
use crate::error::CliError;
use crate::identity::Identified;
use llm_extract::llm::{
    BoxFuture, ChatRequest, ChatResponse, ChatStream, Description, Exchange, ExchangeHook,
    Fallback, Llm, LlmError, RateLimit,
};
use llm_extract::report::Attempt;
use llm_extract::schema::Dialect;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Any backend, saying what it is (the type `backends.rs` builds).
type Backend = Arc<dyn Identified>;

/// The backends as the flags ask for them: each under its rate limits, then all in one fallback when
/// --fallback is given.
pub fn arrange(args: &BackendArgs, backends: Vec<Backend>) -> Vec<Backend> {
    let mut backends = written_order(args, backends);
    if args.requests_per_minute.is_some() || args.tokens_per_minute.is_some() {
        backends = backends
            .into_iter()
            .map(|backend| {
                let limited = RateLimit::new(backend)
                    .requests_per_minute(args.requests_per_minute.unwrap_or(0))
                    .tokens_per_minute(args.tokens_per_minute.unwrap_or(0));
                Arc::new(limited) as Backend
            })
            .collect();
    }
    if args.fallback && backends.len() > 1 {
        return vec![Arc::new(Chain::new(backends))];
    }
    backends
}

/// The backends sorted by where their flags stand on the command line (for --fallback, whose order
/// is the user's); as built when the positions are not known.
fn written_order(args: &BackendArgs, backends: Vec<Backend>) -> Vec<Backend> {
    if !args.fallback || args.written.len() != backends.len() {
        return backends;
    }
    let mut placed: Vec<(usize, Backend)> = args.written.iter().copied().zip(backends).collect();
    placed.sort_by_key(|(at, _)| *at);
    placed.into_iter().map(|(_, backend)| backend).collect()
}

impl Identified for RateLimit<Backend> {
    fn is_embedded(&self) -> bool {
        self.inner().is_embedded()
    }

    fn identity(&self) -> Vec<u8> {
        self.inner().identity()
    }
}

/// Several backends asked in order ([`Fallback`]), saying what they are: the identity of each, in
/// order.
pub struct Chain {
    fallback: Fallback,
    identity: Vec<u8>,
    embedded: bool,
}

impl Chain {
    fn new(backends: Vec<Backend>) -> Self {
        let mut identity = b"fallback".to_vec();
        for backend in &backends {
            identity.push(b'\n');
            identity.extend(backend.identity());
        }
        let embedded = backends.iter().any(|b| b.is_embedded());
        Chain {
            fallback: Fallback::from_backends(backends),
            identity,
            embedded,
        }
    }
}

impl Llm for Chain {
    fn dialect(&self) -> Dialect {
        self.fallback.dialect()
    }
    fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, LlmError>> {
        self.fallback.chat(request)
    }
    fn chat_stream(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatStream, LlmError>> {
        self.fallback.chat_stream(request)
    }
    fn constrains_json_lines(&self) -> bool {
        self.fallback.constrains_json_lines()
    }
    fn constrains_grounding(&self) -> bool {
        self.fallback.constrains_grounding()
    }
    fn count_tokens(&self, text: &str) -> Option<usize> {
        self.fallback.count_tokens(text)
    }
    fn describe(&self) -> Option<Description> {
        self.fallback.describe()
    }
    fn accepts(&self, request: &ChatRequest) -> Result<(), LlmError> {
        self.fallback.accepts(request)
    }
    fn gives_logprobs(&self) -> bool {
        self.fallback.gives_logprobs()
    }
}

impl Identified for Chain {
    fn is_embedded(&self) -> bool {
        self.embedded
    }

    fn identity(&self) -> Vec<u8> {
        self.identity.clone()
    }
}

/// The hook --dump-exchanges installs on every backend: each exchange written to `dir` as
/// `exchange-NNNNNN.json`, numbered after the files already there. A file that cannot be written is a
/// warning: the dump is for inspection, and the extraction matters more.
pub fn dump_hook(dir: Option<&Path>) -> Result<Option<ExchangeHook>, CliError> {
    let Some(dir) = dir else {
        return Ok(None);
    };
    std::fs::create_dir_all(dir).map_err(|e| {
        CliError::io(format!(
            "--dump-exchanges: cannot create {}: {e}",
            dir.display()
        ))
    })?;
    let dir: PathBuf = dir.to_owned();
    let next = AtomicUsize::new(first_free(&dir));
    Ok(Some(ExchangeHook::new(move |exchange: &Exchange| {
        let text = serde_json::to_string_pretty(exchange).unwrap_or_default();
        loop {
            let number = next.fetch_add(1, Ordering::SeqCst);
            let path = dir.join(format!("exchange-{number:06}.json"));
            let file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path);
            match file {
                Ok(mut file) => {
                    if let Err(e) = std::io::Write::write_all(&mut file, text.as_bytes()) {
                        eprintln!(
                            "llm-extract: warning: --dump-exchanges: cannot write {}: {e}",
                            path.display()
                        );
                    }
                    return;
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => {
                    eprintln!(
                        "llm-extract: warning: --dump-exchanges: cannot write {}: {e}",
                        path.display()
                    );
                    return;
                }
            }
        }
    })))
}

/// The number after the highest `exchange-NNNNNN.json` in `dir` (1 for none), so a second run adds to
/// a dump instead of overwriting it.
fn first_free(dir: &Path) -> usize {
    let highest = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name();
            let name = name.to_str()?;
            name.strip_prefix("exchange-")?
                .strip_suffix(".json")?
                .parse::<usize>()
                .ok()
        })
        .max();
    highest.map_or(1, |n| n + 1)
}

/// The backend that answered the last of `attempts`, as a record names it (provider, URL with
/// credentials redacted, model); `None` when the backend does not say.
pub fn answered_by(attempts: &[Attempt]) -> Option<Value> {
    let described = attempts.iter().rev().find_map(|a| a.backend.as_ref())?;
    Some(json!({
        "provider": described.provider,
        "url": described.url,
        "model": described.model,
    }))
}
