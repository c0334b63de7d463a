//! Resuming `llm-extract doc`: every chunk that finishes is saved as one JSON file in a directory named
//! by a hash of the document and of every setting that changes what a chunk returns (schema, backend,
//! model, and the versioned list of settings of `doc.rs`: chunk size, extraction settings, the check
//! program). Running the same command again reads them back and asks
//! only the chunks that are missing (failed, or not reached before an interruption). Each file names its
//! pass, and a pass's chunks do not depend on how many passes follow, so the number of passes is not part
//! of the hash: a rerun with `--passes 2` after an interrupted one-pass run asks only the rest. The directory
//! is `${XDG_CACHE_HOME:-$HOME/.cache}/llm-extract/doc/<hash>/`, removed when a run ends with no failed
//! chunk. The files hold what was extracted from the document, so on Unix they are the user's alone:
//! the directories are made `0700` (the run's own one tightened to it if it exists already) and the
//! files `0600`.

use llm_extract::extract::DoneChunk;
use llm_extract::stable_hash::StableHasher;
use std::path::{Path, PathBuf};

/// Where one document's finished chunks are kept.
pub struct State {
    dir: Option<PathBuf>,
}

impl State {
    /// The state of the run whose inputs are `parts` (the document, the schema, the settings); none when
    /// there is no cache directory (neither `XDG_CACHE_HOME` nor `HOME` is set) or `enabled` is false.
    pub fn open(parts: &[&[u8]], enabled: bool) -> State {
        let dir = enabled
            .then(cache_dir)
            .flatten()
            .map(|cache| cache.join("llm-extract").join("doc").join(key(parts)));
        State { dir }
    }

    /// The chunks an earlier run of the same command finished. A file that cannot be read is skipped
    /// with a warning (its chunk is asked again).
    pub fn load(&self) -> Vec<DoneChunk> {
        let Some(dir) = &self.dir else {
            return Vec::new();
        };
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut done = Vec::new();
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_none_or(|e| e != "json") {
                continue;
            }
            match std::fs::read(&path)
                .map_err(|e| e.to_string())
                .and_then(|bytes| serde_json::from_slice(&bytes).map_err(|e| e.to_string()))
            {
                Ok(chunk) => done.push(chunk),
                Err(e) => eprintln!(
                    "llm-extract: warning: ignoring {} ({e}); its chunk is asked again",
                    path.display()
                ),
            }
        }
        if !done.is_empty() {
            eprintln!(
                "llm-extract: resuming: {} chunk(s) already done in {} (--no-resume asks them again)",
                done.len(),
                dir.display()
            );
        }
        done
    }

    /// Saves a finished chunk (written to a temporary file, then renamed: an interrupted write leaves
    /// no half file). An error says what could not be written; it is not fatal (the run goes on, a
    /// rerun asks that chunk again).
    pub fn save(&self, chunk: &DoneChunk) -> Result<(), String> {
        let Some(dir) = &self.dir else {
            return Ok(());
        };
        let cannot = |e: std::io::Error| format!("cannot save progress in {}: {e}", dir.display());
        private_dir(dir).map_err(cannot)?;
        let name = format!(
            "pass{}-bytes{}-{}",
            chunk.pass, chunk.bytes.start, chunk.bytes.end
        );
        let json = serde_json::to_vec(chunk).map_err(|e| format!("cannot save progress: {e}"))?;
        let unfinished = dir.join(format!("{name}.part"));
        private_file(&unfinished, &json).map_err(cannot)?;
        std::fs::rename(&unfinished, dir.join(format!("{name}.json"))).map_err(cannot)
    }

    /// Forgets the saved chunks (the run is complete).
    pub fn clear(&self) {
        if let Some(dir) = &self.dir {
            if dir.exists() {
                if let Err(e) = std::fs::remove_dir_all(dir) {
                    eprintln!("llm-extract: warning: cannot remove {}: {e}", dir.display());
                }
            }
        }
    }

    /// The directory, if there is one.
    #[cfg(test)]
    fn dir(&self) -> Option<&std::path::Path> {
        self.dir.as_deref()
    }
}

/// The directory name of the run whose inputs are `parts`: a stable hash (the same in every build), so
/// a new release of the command still finds what an older one saved.
fn key(parts: &[&[u8]]) -> String {
    let mut hasher = StableHasher::new();
    for part in parts {
        hasher.write_part(part);
    }
    format!("{:016x}", hasher.finish())
}

/// Creates `dir` and the directories above it that are missing, readable by the user alone (`0700`
/// on Unix), and tightens `dir` to `0700` if it was there already.
fn private_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
    }
    #[cfg(not(unix))]
    std::fs::create_dir_all(dir)
}

/// Writes `bytes` to the file `path`, readable by the user alone (`0600` on Unix, also when a file
/// of that name was left there with other permissions).
fn private_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        options.mode(0o600);
        let file = options.open(path)?;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        write_all(file, bytes)
    }
    #[cfg(not(unix))]
    write_all(options.open(path)?, bytes)
}

/// Writes `bytes` into `file`.
fn write_all(mut file: std::fs::File, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    file.write_all(bytes)?;
    file.flush()
}

/// `${XDG_CACHE_HOME:-$HOME/.cache}`, if either is set.
fn cache_dir() -> Option<PathBuf> {
    let non_empty = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    non_empty("XDG_CACHE_HOME").or_else(|| non_empty("HOME").map(|home| home.join(".cache")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_inputs_name_the_same_directory_and_others_another() {
        let a = State::open(&[b"doc", b"schema"], true);
        let b = State::open(&[b"doc", b"schema"], true);
        let c = State::open(&[b"doc", b"other schema"], true);
        let d = State::open(&[b"docs", b"chema"], true);
        assert_eq!(a.dir(), b.dir());
        assert_ne!(a.dir(), c.dir());
        assert_ne!(a.dir(), d.dir(), "parts are length-prefixed");
        assert_eq!(State::open(&[b"doc"], false).dir(), None);
    }

    #[test]
    fn the_directory_name_is_the_same_in_every_build() {
        assert_eq!(key(&[b"doc", b"schema"]), "d7344baf06f19ff9");
        assert_eq!(key(&[]), "cbf29ce484222325");
    }

    #[test]
    fn saved_chunks_load_back_and_clear_removes_them() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path();
        let state = State {
            dir: Some(root.join("key")),
        };
        assert!(state.load().is_empty());
        let chunk: DoneChunk = serde_json::from_value(serde_json::json!({
            "pass": 0, "bytes": {"start": 0, "end": 10},
            "items": [[{"name": "Holmes"}, []]],
            "usage": {"prompt_tokens": 5, "completion_tokens": 2, "estimated": false,
                      "cache_read_tokens": 0, "cache_write_tokens": 0, "thinking_tokens": 0}
        }))
        .unwrap();
        state.save(&chunk).unwrap();
        std::fs::write(root.join("key").join("broken.json"), "{").unwrap();
        assert_eq!(state.load(), vec![chunk]);
        state.clear();
        assert!(!root.join("key").exists());
    }

    #[cfg(unix)]
    #[test]
    fn saved_chunks_are_readable_by_the_user_alone() {
        use std::os::unix::fs::PermissionsExt;
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        let temp = tempfile::tempdir().unwrap();
        let chunk: DoneChunk = serde_json::from_value(serde_json::json!({
            "pass": 0, "bytes": {"start": 0, "end": 10}, "items": [[{"name": "Holmes"}, []]],
            "usage": {"prompt_tokens": 5, "completion_tokens": 2, "estimated": false,
                      "cache_read_tokens": 0, "cache_write_tokens": 0, "thinking_tokens": 0}
        }))
        .unwrap();
        // Made by the save, parents included.
        let made = temp.path().join("cache").join("doc").join("key");
        State {
            dir: Some(made.clone()),
        }
        .save(&chunk)
        .unwrap();
        for dir in [
            temp.path().join("cache"),
            temp.path().join("cache/doc"),
            made.clone(),
        ] {
            assert_eq!(mode(&dir), 0o700, "{}", dir.display());
        }
        let saved = made.join("pass0-bytes0-10.json");
        assert_eq!(mode(&saved), 0o600);

        // There already, open to everyone, with a stale half file: tightened.
        let open = temp.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let part = open.join("pass0-bytes0-10.part");
        std::fs::write(&part, "{").unwrap();
        std::fs::set_permissions(&part, std::fs::Permissions::from_mode(0o666)).unwrap();
        let state = State {
            dir: Some(open.clone()),
        };
        state.save(&chunk).unwrap();
        assert_eq!(mode(&open), 0o700);
        assert_eq!(mode(&open.join("pass0-bytes0-10.json")), 0o600);
        assert_eq!(state.load(), vec![chunk]);
    }
}
