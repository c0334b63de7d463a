//! [`ResponseStore`]: where a response [`Cache`](super::Cache) keeps its answers on disk, one file per
//! answer named by its key, a content-addressed layout with no database.
//!
//! ```text
//! DIR/salt                  16 random bytes (hex), mixed into the digest of each backend's credentials
//! DIR/answers/ab/cdef….json one answer: its text, reasoning, finish, model and token log-probabilities
//! DIR/tmp/                  answers being written, renamed into answers/ once whole
//! ```
//!
//! Why files and not an embedded database: the two candidates weighed were this layout and `redb` (a
//! pure-Rust B-tree store, well kept). Entries are written once, never updated, read by key alone,
//! and a few hundred bytes each. Measured on 2,000 answers of about 300 bytes (ext4, `BENCHMARKS.md`
//! has the commands): this layout writes one in 5 ms (synced to disk before its `rename`), reads one
//! in 32 µs and takes 9 MiB (a file system block per entry); `redb` writes one in 1.3 ms (a durable
//! transaction each), reads one in 1 µs and takes 4 MiB. Both are far below what the model's answer
//! costs. What decides: `redb` locks its file, so a second process cannot open the cache while one
//! holds it (two `batch` runs, or `eval` beside `batch`, could not share one); files need no lock,
//! survive a crash whole (an entry appears by an atomic `rename`, a crash leaves at most a stray file
//! in `tmp/`), cost no dependency, and can be read, copied or pruned (`find -mtime`) with the shell.

use crate::llm::{ChatResponse, Finish, TokenLogprob};
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The layout's version, in each entry: an entry of another version is a miss.
const VERSION: u64 = 1;

/// A cache directory could not be opened or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CacheError {
    /// Reading or writing a file of the cache failed.
    #[error("response cache {}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What failed.
        source: std::io::Error,
    },
    /// The salt file holds something other than 32 hex digits: the directory is not a response cache,
    /// or was damaged.
    #[error(
        "response cache {}: the salt file is damaged (32 hex digits expected); delete the directory to \
         start a new cache",
        path.display()
    )]
    Salt {
        /// The salt file.
        path: PathBuf,
    },
}

/// Answers on disk, by key (see the module description for the layout and why).
///
/// ```
/// # fn main() -> Result<(), llm_extract::llm::CacheError> {
/// let dir = std::env::temp_dir().join(format!("llm-extract-doc-{}", std::process::id()));
/// let store = llm_extract::llm::ResponseStore::open(&dir)?;
/// assert_eq!(store.dir(), dir.as_path());
/// # std::fs::remove_dir_all(&dir).ok();
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct ResponseStore {
    dir: PathBuf,
    salt: [u8; 16],
}

impl ResponseStore {
    /// Opens the cache in `dir`, creating the directory and its salt when new.
    pub fn open(dir: impl AsRef<Path>) -> Result<Self, CacheError> {
        let dir = dir.as_ref().to_path_buf();
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| CacheError::Io { path, source }
        };
        for sub in ["answers", "tmp"] {
            let path = dir.join(sub);
            std::fs::create_dir_all(&path).map_err(io(&path))?;
        }
        let path = dir.join("salt");
        if !path.exists() {
            // Written aside, then linked into place: a link never replaces a salt another process
            // wrote first, and never shows a half-written one.
            let aside = temporary(&dir);
            write_synced(&aside, hex(&random_salt()).as_bytes()).map_err(io(&aside))?;
            let linked = std::fs::hard_link(&aside, &path);
            let _ = std::fs::remove_file(&aside);
            match linked {
                Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => {
                    return Err(CacheError::Io { path, source: e })
                }
                _ => {}
            }
        }
        let text = std::fs::read_to_string(&path).map_err(io(&path))?;
        let salt = unhex(text.trim()).ok_or(CacheError::Salt { path })?;
        Ok(ResponseStore { dir, salt })
    }

    /// The cache's directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The cache's salt, mixed into the digest of credentials before it goes into a key.
    pub(crate) fn salt(&self) -> &[u8; 16] {
        &self.salt
    }

    /// Where the answer of `key` is.
    fn path(&self, key: &[u8; 32]) -> PathBuf {
        let name = hex(key);
        let (fan, rest) = name.split_at(2);
        self.dir
            .join("answers")
            .join(fan)
            .join(format!("{rest}.json"))
    }

    /// The answer stored under `key`; `None` when there is none or it cannot be read (a damaged
    /// entry is a miss, and the next accepted answer replaces it).
    pub(crate) fn get(&self, key: &[u8; 32]) -> Option<ChatResponse> {
        let path = self.path(key);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "response cache: unreadable entry");
                return None;
            }
        };
        let entry = serde_json::from_slice::<Value>(&bytes)
            .ok()
            .and_then(decode);
        if entry.is_none() {
            tracing::warn!(path = %path.display(), "response cache: damaged entry, ignored");
        }
        entry
    }

    /// Stores `response` under `key`, replacing what was there.
    pub(crate) fn put(&self, key: &[u8; 32], response: &ChatResponse) -> Result<(), CacheError> {
        let path = self.path(key);
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| CacheError::Io { path, source }
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        let aside = temporary(&self.dir);
        let bytes = encode(response).to_string();
        write_synced(&aside, bytes.as_bytes()).map_err(io(&aside))?;
        std::fs::rename(&aside, &path).map_err(|source| {
            let _ = std::fs::remove_file(&aside);
            CacheError::Io { path, source }
        })
    }
}

/// A new file name in the cache's `tmp/`, unique within the machine.
fn temporary(dir: &Path) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    dir.join("tmp").join(format!(
        "{}-{n}-{}",
        std::process::id(),
        hex(&random_salt())
    ))
}

/// Writes `bytes` to a new file at `path` and waits until they are on disk.
fn write_synced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = std::fs::File::create(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// 16 bytes from the operating system's randomness (the standard library seeds each hasher's keys
/// from it).
fn random_salt() -> [u8; 16] {
    use std::hash::{BuildHasher, Hasher};
    let mut salt = [0u8; 16];
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    for (i, half) in salt.chunks_mut(8).enumerate() {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u128(nanos);
        hasher.write_usize(i);
        half.copy_from_slice(&hasher.finish().to_le_bytes());
    }
    salt
}

/// `bytes` as lowercase hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// 16 bytes from 32 hex digits.
fn unhex(text: &str) -> Option<[u8; 16]> {
    let bytes = text.as_bytes();
    if bytes.len() != 32 {
        return None;
    }
    let mut out = [0u8; 16];
    for (byte, pair) in out.iter_mut().zip(bytes.chunks(2)) {
        *byte = u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()?;
    }
    Some(out)
}

/// An answer as an entry.
fn encode(response: &ChatResponse) -> Value {
    let logprobs = response.logprobs.as_ref().map(|tokens| {
        tokens
            .iter()
            .map(|t| json!([t.bytes, t.logprob, t.vocabulary_logprob]))
            .collect::<Vec<_>>()
    });
    json!({
        "version": VERSION,
        "text": response.text,
        "thinking": response.thinking,
        "finish": finish_name(&response.finish),
        "model": response.model,
        "logprobs": logprobs,
    })
}

/// An entry as an answer (marked cached, with no usage); `None` when it is not one of this version.
fn decode(entry: Value) -> Option<ChatResponse> {
    if entry.get("version")?.as_u64()? != VERSION {
        return None;
    }
    let text = |field: &str| entry.get(field).and_then(Value::as_str).map(str::to_owned);
    let logprobs = match entry.get("logprobs")? {
        Value::Null => None,
        Value::Array(tokens) => Some(
            tokens
                .iter()
                .map(decode_token)
                .collect::<Option<Vec<_>>>()?,
        ),
        _ => return None,
    };
    let mut response = ChatResponse::new(text("text")?);
    response.thinking = text("thinking");
    response.finish = finish_of(entry.get("finish")?.as_str()?);
    response.model = text("model");
    response.logprobs = logprobs;
    response.cached = true;
    Some(response)
}

/// One token of an entry: `[bytes, logprob, vocabulary logprob or null]`.
fn decode_token(token: &Value) -> Option<TokenLogprob> {
    let bytes = token
        .get(0)?
        .as_array()?
        .iter()
        .map(|b| b.as_u64().and_then(|b| u8::try_from(b).ok()))
        .collect::<Option<Vec<u8>>>()?;
    let logprob = token.get(1)?.as_f64()? as f32;
    let mut decoded = TokenLogprob::new(bytes, logprob);
    if let Some(vocabulary) = token.get(2).and_then(Value::as_f64) {
        decoded = decoded.with_vocabulary_logprob(vocabulary as f32);
    }
    Some(decoded)
}

fn finish_name(finish: &Finish) -> String {
    match finish {
        Finish::Other(reason) => format!("other:{reason}"),
        known => known.to_string(),
    }
}

fn finish_of(name: &str) -> Finish {
    match name {
        "stop" => Finish::Stop,
        "length" => Finish::Length,
        "loop" => Finish::Loop,
        "max items" => Finish::MaxItems,
        other => Finish::Other(other.strip_prefix("other:").unwrap_or(other).to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_comes_back_as_stored_marked_cached() {
        let dir = tempfile::tempdir().unwrap();
        let store = ResponseStore::open(dir.path()).unwrap();
        let key = [7u8; 32];
        assert!(store.get(&key).is_none());
        let mut response = ChatResponse::new("{\"a\":1}")
            .with_model("m")
            .with_usage(10, 3)
            .with_logprobs(vec![
                TokenLogprob::new(b"{".to_vec(), -0.5).with_vocabulary_logprob(-1.0),
                TokenLogprob::new(vec![0xe2], 0.0),
            ]);
        response.thinking = Some("hm".into());
        response.finish = Finish::Other("refusal".into());
        store.put(&key, &response).unwrap();
        let back = store.get(&key).unwrap();
        assert!(back.cached);
        assert_eq!(
            back.usage,
            Default::default(),
            "a cached answer costs nothing"
        );
        assert_eq!(
            (
                back.text.as_str(),
                back.thinking.as_deref(),
                &back.finish,
                back.model.as_deref()
            ),
            (
                "{\"a\":1}",
                Some("hm"),
                &Finish::Other("refusal".into()),
                Some("m")
            )
        );
        assert_eq!(back.logprobs, response.logprobs);
        // The same directory opened again keeps its salt and its answers.
        let again = ResponseStore::open(dir.path()).unwrap();
        assert_eq!(again.salt(), store.salt());
        assert!(again.get(&key).is_some());
        assert!(std::fs::read_dir(dir.path().join("tmp"))
            .unwrap()
            .next()
            .is_none());
    }

    #[test]
    fn a_damaged_entry_is_a_miss_and_a_damaged_salt_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let store = ResponseStore::open(dir.path()).unwrap();
        let key = [1u8; 32];
        store.put(&key, &ChatResponse::new("x")).unwrap();
        std::fs::write(store.path(&key), b"{\"version\":1,\"te").unwrap();
        assert!(store.get(&key).is_none());
        std::fs::write(dir.path().join("salt"), "not hex").unwrap();
        let err = ResponseStore::open(dir.path()).unwrap_err();
        assert!(matches!(err, CacheError::Salt { .. }), "{err}");
    }

    #[test]
    fn salts_differ_between_caches() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let (a, b) = (
            ResponseStore::open(a.path()).unwrap(),
            ResponseStore::open(b.path()).unwrap(),
        );
        assert_ne!(a.salt(), b.salt());
    }

    /// The figures of `BENCHMARKS.md`: writes and reads of `LLM_EXTRACT_STORE_ENTRIES` (default 2,000)
    /// answers of about 300 bytes, and the space they take. Ignored: a measurement, not a check.
    #[test]
    #[ignore]
    fn store_figures() {
        let entries: usize = std::env::var("LLM_EXTRACT_STORE_ENTRIES")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(2000);
        let dir = tempfile::tempdir().unwrap();
        let store = ResponseStore::open(dir.path()).unwrap();
        let answer = ChatResponse::new(format!("{{\"name\":\"{}\",\"age\":36}}", "A".repeat(200)));
        let key = |i: usize| {
            use sha2::Digest;
            let digest: [u8; 32] = sha2::Sha256::digest(i.to_le_bytes()).into();
            digest
        };
        let started = std::time::Instant::now();
        for i in 0..entries {
            store.put(&key(i), &answer).unwrap();
        }
        let written = started.elapsed();
        let started = std::time::Instant::now();
        for i in 0..entries {
            assert!(store.get(&key(i)).is_some());
        }
        let read = started.elapsed();
        let output = std::process::Command::new("du")
            .args(["-sk", &dir.path().join("answers").display().to_string()])
            .output()
            .unwrap();
        println!(
            "{entries} entries: write {:.0} µs each (fsync'd), read {:.0} µs each; on disk: {} KiB",
            written.as_micros() as f64 / entries as f64,
            read.as_micros() as f64 / entries as f64,
            String::from_utf8_lossy(&output.stdout)
                .split_whitespace()
                .next()
                .unwrap_or("?")
        );
    }
}
