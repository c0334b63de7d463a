//! Printing values on standard output, a progress bar on standard error, and keeping failed raw answers
//! with a description of the files they were read from (`--save-raw`).

use crate::error::{CliError, Exit};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use llm_extract::llm::Media;
use llm_extract::report::Attempt;
use serde_json::Value;
use std::io::{IsTerminal, Write};
use std::path::Path;

/// Standard output, line by line, flushed after each write so a pipeline sees every item at once.
pub struct Printer {
    pretty: bool,
}

impl Printer {
    pub fn new(pretty: bool) -> Self {
        Printer { pretty }
    }

    /// Prints one value on its own line (or lines, pretty).
    pub fn value(&self, value: &Value) -> Result<(), CliError> {
        let text = if self.pretty {
            serde_json::to_string_pretty(value)
        } else {
            serde_json::to_string(value)
        }
        .map_err(|e| CliError::io(format!("cannot serialize the value: {e}")))?;
        self.text(&format!("{text}\n"))
    }

    /// Prints text as it is.
    pub fn text(&self, text: &str) -> Result<(), CliError> {
        let mut stdout = std::io::stdout().lock();
        stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush())
            .map_err(stdout_error)
    }
}

fn stdout_error(error: std::io::Error) -> CliError {
    if error.kind() == std::io::ErrorKind::BrokenPipe {
        // The reader went away (`| head`): stop quietly, as other filters do.
        CliError::new(Exit::Success, String::new())
    } else {
        CliError::io(format!("cannot write to standard output: {error}"))
    }
}

/// Writes every failed attempt's raw answer under `dir` as `<prefix>-attempt-<n>-<kind>.txt` (the prefix
/// made a file name by [`file_safe`]), and says on standard error how many it wrote. A file that cannot
/// be written is a warning, never an error: the raw answers are for inspection, and the value or the
/// record they came with matters more.
pub fn save_raw(dir: Option<&Path>, prefix: &str, attempts: &[Attempt]) {
    let Some(dir) = dir else {
        return;
    };
    let failed: Vec<(usize, &Attempt)> = attempts
        .iter()
        .enumerate()
        .filter(|(_, attempt)| attempt.error.is_some())
        .map(|(i, attempt)| (i + 1, attempt))
        .collect();
    if failed.is_empty() {
        return;
    }
    if let Err(e) = std::fs::create_dir_all(dir) {
        eprintln!(
            "llm-extract: warning: --save-raw: cannot create {}: {e}",
            dir.display()
        );
        return;
    }
    let prefix = file_safe(prefix);
    let mut saved = 0;
    for (number, attempt) in &failed {
        let path = dir.join(format!("{prefix}-attempt-{number}-{}.txt", attempt.kind));
        match std::fs::write(&path, &attempt.raw) {
            Ok(()) => saved += 1,
            Err(e) => eprintln!(
                "llm-extract: warning: --save-raw: cannot write {}: {e}",
                path.display()
            ),
        }
    }
    if saved > 0 {
        eprintln!(
            "llm-extract: saved {saved} failed raw answer(s) to {}",
            dir.display()
        );
    }
}

/// The files sent with a text as `--save-raw` keeps them: each one's name, media type, size and
/// SHA-256, or its URL redacted; never its bytes ([`Media::summary`], as `--dump-exchanges` shows
/// them).
pub fn media_manifest(media: &[Media]) -> Value {
    Value::Array(media.iter().map(Media::summary).collect())
}

/// Beside the raw answers [`save_raw`] writes for `attempts` (when one failed), `<prefix>-media.json`:
/// the `manifest` of the files the answers were read from ([`media_manifest`]). A file that cannot be
/// written is a warning, as for the raw answers.
pub fn save_media(dir: Option<&Path>, prefix: &str, attempts: &[Attempt], manifest: &Value) {
    let Some(dir) = dir else {
        return;
    };
    if attempts.iter().all(|attempt| attempt.error.is_none()) {
        return;
    }
    let path = dir.join(format!("{}-media.json", file_safe(prefix)));
    let text = serde_json::to_string_pretty(manifest).unwrap_or_default();
    if let Err(e) = std::fs::write(&path, text) {
        eprintln!(
            "llm-extract: warning: --save-raw: cannot write {}: {e}",
            path.display()
        );
    }
}

/// The longest file name part [`file_safe`] makes, in bytes: room is left for the attempt suffix
/// within the usual limit of 255.
const MAX_SAFE_BYTES: usize = 200;

/// A document id as a file name, one name per id: letters, digits, `-` and `_` are kept, every other
/// byte (a path separator, `%`, a leading `.`, ...) is written `%XX`, as in a URL. An id whose name would
/// be longer than [`MAX_SAFE_BYTES`] is cut and ends in `%~` and a stable hash of the whole id (`%~`
/// never comes out of the escaping, so such a name cannot be another id's).
pub fn file_safe(id: &str) -> String {
    let mut safe = String::with_capacity(id.len());
    for (at, c) in id.char_indices() {
        if c.is_alphanumeric() || matches!(c, '-' | '_') || (c == '.' && at > 0) {
            safe.push(c);
        } else {
            let mut bytes = [0; 4];
            for byte in c.encode_utf8(&mut bytes).bytes() {
                safe.push_str(&format!("%{byte:02X}"));
            }
        }
    }
    if safe.is_empty() {
        return "%".to_owned();
    }
    if safe.len() <= MAX_SAFE_BYTES {
        return safe;
    }
    let suffix = format!("%~{:016x}", llm_extract::stable_hash::hash(id.as_bytes()));
    let mut cut = MAX_SAFE_BYTES - suffix.len();
    while !safe.is_char_boundary(cut) {
        cut -= 1;
    }
    safe.truncate(cut);
    safe.push_str(&suffix);
    safe
}

/// A progress bar on standard error when it is a terminal; hidden otherwise.
pub(crate) fn progress_bar(total: usize) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} {msg} (eta {eta})",
    ) {
        bar.set_style(style);
    }
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_become_safe_file_names() {
        assert_eq!(file_safe("sub/a b.txt"), "sub%2Fa%20b.txt");
        assert_eq!(file_safe("../x"), "%2E.%2Fx");
        assert_eq!(file_safe("語.txt"), "語.txt");
        assert_eq!(file_safe(""), "%");
        assert_eq!(file_safe("run"), "run");
    }

    #[test]
    fn different_ids_never_share_a_file_name() {
        let ids = [
            "a/b", "a_b", "a%2Fb", "a b", "a\\b", "a:b", "", "%", "%25", ".a", "%2Ea", "_.a",
        ];
        let names: std::collections::HashSet<String> = ids.iter().map(|id| file_safe(id)).collect();
        assert_eq!(names.len(), ids.len(), "{names:?}");
        let long = |c: &str| format!("{}{c}", "x".repeat(300));
        let (a, b) = (file_safe(&long("a")), file_safe(&long("b")));
        assert_ne!(a, b);
        assert!(a.len() <= MAX_SAFE_BYTES && a.contains("%~"), "{a}");
        let wide = file_safe(&"語".repeat(100));
        assert!(
            wide.len() <= MAX_SAFE_BYTES && wide.contains("%~"),
            "{wide}"
        );
    }
}
