//! Exit codes scripts can rely on, and errors printed as one line a person can act on.

use llm_extract::extract::{ExtractError, ExtractErrorKind};
use llm_extract::llm::LlmError;
use llm_extract::schema::DynamicSchemaError;
use llm_extract::SchemaError;
use std::process::ExitCode;

/// How the command ended. The numbers are documented in `--help` (see `args.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Everything asked for was extracted.
    Success = 0,
    /// The model never produced a valid answer (after repairs); in a batch, at least one document failed.
    ExtractionFailed = 1,
    /// A usage or configuration error: a bad flag, an unreadable or invalid schema, config or input, a
    /// template variable missing, a schema the backend cannot take.
    Usage = 2,
    /// The backend is unreachable or refused: no connection, a timeout, an HTTP error, an unknown model,
    /// a model file that cannot be loaded.
    Backend = 3,
    /// The output could not be written (`--out`, `--save-raw`, standard output).
    Output = 4,
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> ExitCode {
        ExitCode::from(exit as u8)
    }
}

/// An error that ends the command: what to print and how to exit.
#[derive(Debug)]
pub struct CliError {
    pub exit: Exit,
    pub message: String,
}

impl CliError {
    pub fn new(exit: Exit, message: impl Into<String>) -> Self {
        CliError {
            exit,
            message: message.into(),
        }
    }

    /// A usage or configuration error (exit 2).
    pub fn usage(message: impl Into<String>) -> Self {
        Self::new(Exit::Usage, message)
    }

    /// The output could not be written (exit 4).
    pub fn io(message: impl Into<String>) -> Self {
        Self::new(Exit::Output, message)
    }

    /// Prints the error on standard error, as one line, and returns the exit code.
    pub fn report(&self) -> ExitCode {
        if !self.message.is_empty() {
            eprintln!("llm-extract: error: {}", one_line(&self.message));
        }
        self.exit.into()
    }
}

/// Joins a multi-line message into one line.
pub fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The exit code an extraction failure means.
pub fn exit_for(error: &ExtractError) -> Exit {
    match error.kind() {
        ExtractErrorKind::Llm(llm) => exit_for_llm(llm),
        ExtractErrorKind::Template(_)
        | ExtractErrorKind::Schema(_)
        | ExtractErrorKind::Example(_) => Exit::Usage,
        _ => Exit::ExtractionFailed,
    }
}

/// The exit code a backend failure means.
pub fn exit_for_llm(error: &LlmError) -> Exit {
    match error {
        LlmError::Config { .. } | LlmError::InsecureKey { .. } | LlmError::Media(_) => Exit::Usage,
        _ => Exit::Backend,
    }
}

impl From<ExtractError> for CliError {
    fn from(error: ExtractError) -> Self {
        let exit = exit_for(&error);
        let message = match error.kind() {
            ExtractErrorKind::Schema(_) => {
                format!(
                    "{error} (pass --mode prompted to describe the schema in the prompt instead)"
                )
            }
            _ => error.to_string(),
        };
        CliError::new(exit, message)
    }
}

impl From<LlmError> for CliError {
    fn from(error: LlmError) -> Self {
        CliError::new(exit_for_llm(&error), error.to_string())
    }
}

/// A schema that cannot be loaded, with the flag it came from.
pub fn schema_error(flag: &str, error: DynamicSchemaError) -> CliError {
    match error {
        DynamicSchemaError::Signature(e) => CliError::usage(format!(
            "{flag}: error at column {}: {} (in \"{}\")",
            e.column, e.message, e.signature
        )),
        DynamicSchemaError::Schema(SchemaError::RemoteRef { uri }) => CliError::usage(format!(
            "{flag}: the schema refers to {uri}, another document; documents are never fetched: \
             copy what it refers to into the schema's $defs and refer to it as #/$defs/..."
        )),
        other => CliError::usage(format!("{flag}: {other}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_become_one_line() {
        assert_eq!(one_line("a\n  b\tc "), "a b c");
    }

    #[test]
    fn signature_errors_keep_the_column_on_one_line() {
        let err = llm_extract::schema::DynamicSchema::from_signature("{a :nope}").unwrap_err();
        let cli = schema_error("--signature", err);
        assert_eq!(cli.exit, Exit::Usage);
        assert!(cli.message.contains("column"), "{}", cli.message);
        assert!(!cli.message.contains('\n'), "{}", cli.message);
    }
}
