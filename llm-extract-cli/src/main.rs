//! `llm-extract`: typed, validated JSON from a language model, in a shell pipeline.
//!
//! - `args.rs`: the command line (clap), with the help text and its examples;
//! - `backends.rs`: the backends the flags name (Ollama, OpenAI-compatible servers, Anthropic, Gemini, the
//!   embedded engine), each with the key named for it; `backend_layers.rs`: what the flags add over
//!   them (rate limits, the fallback order, the exchange dumps);
//! - `identity.rs`: what a built backend is (embedded or not, which model answers);
//! - `input.rs`: template variables (`key=value`, `key=@file`), standard input, batch documents;
//!   `examples.rs`: the worked examples of `--example FILE.jsonl`;
//! - `output.rs`: printing values and saving raw answers; `notice.rs`: the line naming the schema
//!   keywords a backend will not enforce;
//! - `error.rs`: the exit codes and the one-line error messages;
//! - `check_command.rs`: `--check-command`, the user's own checks run as a program on each value,
//!   without the variables `key_vars.rs` lists (the ones keys and credentials are read from);
//! - `doubts.rs`: what the CLI tells about values to doubt (confidence, soft issues, lines left out);
//! - one file per subcommand: `run.rs`, `prompt.rs`, `schema.rs`, `batch_command.rs`, `doc.rs` (its
//!   document streamed in `doc_input.rs`, its resumable state in `doc_state.rs`, the review page in
//!   `review.rs`), `eval.rs`.

mod args;
mod backend_layers;
mod backends;
mod batch_command;
mod check_command;
mod doc;
mod doc_input;
mod doc_state;
mod doubts;
mod error;
mod eval;
mod examples;
mod identity;
mod input;
mod key_vars;
mod notice;
mod output;
mod prompt;
mod review;
mod run;
mod schema;

use args::{Cli, Command};
use error::CliError;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match args::parse() {
        Ok(cli) => cli,
        Err(message) => return CliError::usage(message).report(),
    };
    match execute(cli) {
        Ok(code) => code.into(),
        Err(error) => error.report(),
    }
}

fn execute(cli: Cli) -> Result<error::Exit, CliError> {
    if let Command::Schema(args) = &cli.command {
        return schema::run(args);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::io(format!("cannot start the async runtime: {e}")))?;
    runtime.block_on(async move {
        match cli.command {
            Command::Run(args) => run::run(args).await,
            Command::Prompt(args) => prompt::run(args).await,
            Command::Batch(args) => batch_command::run(args).await,
            Command::Doc(args) => doc::run(args).await,
            Command::Eval(args) => eval::run(args).await,
            Command::Schema(args) => schema::run(&args),
        }
    })
}
