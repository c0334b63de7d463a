//! Printing values on standard output, and keeping failed raw answers (`--save-raw`).

use crate::error::{CliError, Exit};
use llm_extract::report::Attempt;
use serde_json::Value;
use std::io::Write;
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

/// Writes every failed attempt's raw answer under `dir` as `<prefix>-attempt-<n>-<kind>.txt`, and says
/// on standard error how many it wrote.
pub fn save_raw(dir: Option<&Path>, prefix: &str, attempts: &[Attempt]) -> Result<(), CliError> {
    let Some(dir) = dir else {
        return Ok(());
    };
    let failed: Vec<(usize, &Attempt)> = attempts
        .iter()
        .enumerate()
        .filter(|(_, attempt)| attempt.error.is_some())
        .map(|(i, attempt)| (i + 1, attempt))
        .collect();
    if failed.is_empty() {
        return Ok(());
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| CliError::io(format!("--save-raw: cannot create {}: {e}", dir.display())))?;
    let prefix = file_safe(prefix);
    for (number, attempt) in &failed {
        let path = dir.join(format!("{prefix}-attempt-{number}-{}.txt", attempt.kind));
        std::fs::write(&path, &attempt.raw).map_err(|e| {
            CliError::io(format!("--save-raw: cannot write {}: {e}", path.display()))
        })?;
    }
    eprintln!(
        "llm-extract: saved {} failed raw answer(s) to {}",
        failed.len(),
        dir.display()
    );
    Ok(())
}

/// A document id as a file name: path separators and other awkward characters become `_`.
pub fn file_safe(id: &str) -> String {
    let safe: String = id
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if safe.is_empty() || safe.starts_with('.') {
        format!("_{safe}")
    } else {
        safe
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_become_safe_file_names() {
        assert_eq!(file_safe("sub/a b.txt"), "sub_a_b.txt");
        assert_eq!(file_safe("../x"), "_.._x");
        assert_eq!(file_safe(""), "_");
    }
}
