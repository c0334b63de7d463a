//! The environment variables this command reads API keys and credentials from, in one list: the
//! provider variables the library sends to each provider's own API, `OLLAMA_HOST` (which may carry a
//! user and password), and every variable an `--api-key-env` names. What must not see keys (the
//! `--check-command` program) is given the environment without them.

use crate::args::BackendArgs;

/// The variables read for keys or credentials whatever the flags: `OPENAI_API_KEY`,
/// `ANTHROPIC_API_KEY`, `GEMINI_API_KEY` (each sent to its provider's own API when no key is named) and
/// `OLLAMA_HOST` (the Ollama server, credentials in its URL included).
pub const PROVIDER_KEY_VARS: [&str; 4] = [
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GEMINI_API_KEY",
    "OLLAMA_HOST",
];

/// Every variable this command reads a key or credentials from with the flags `backend`: the
/// provider variables and the ones `--api-key-env` names, each once, in that order.
pub fn key_vars(backend: &BackendArgs) -> Vec<String> {
    let mut vars: Vec<String> = PROVIDER_KEY_VARS.iter().map(|v| (*v).to_owned()).collect();
    for var in &backend.api_key_env {
        if !vars.contains(var) {
            vars.push(var.clone());
        }
    }
    vars
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::{Cli, Command};
    use clap::Parser;

    #[test]
    fn the_variables_named_by_api_key_env_are_keys_too() {
        let argv = [
            "llm-extract",
            "run",
            "--signature",
            "{a :int}",
            "--openai",
            "http://h/v1",
        ];
        let extra = [
            "--api-key-env",
            "GATEWAY_KEY",
            "--api-key-env",
            "OPENAI_API_KEY",
        ];
        let cli = Cli::try_parse_from(argv.into_iter().chain(extra)).unwrap();
        let Command::Run(args) = cli.command else {
            panic!()
        };
        assert_eq!(
            key_vars(&args.backend),
            [
                "OPENAI_API_KEY",
                "ANTHROPIC_API_KEY",
                "GEMINI_API_KEY",
                "OLLAMA_HOST",
                "GATEWAY_KEY"
            ]
        );
    }
}
