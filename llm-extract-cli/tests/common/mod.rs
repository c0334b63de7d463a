//! Readers of the CLI's output shared by its tests (`mod common;` in a test file).
//!
//! Each test binary compiles this module on its own and uses only part of it.
#![allow(dead_code)]

use serde_json::Value;

/// The JSON values of the lines on stdout, blank lines passed over.
pub fn json_lines(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l:?}: {e}")))
        .collect()
}

/// What the command wrote to stderr, as text.
pub fn stderr_of(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}
