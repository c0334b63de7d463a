//! `llm-extract prompt`: a named prompt from a prompt config.

use crate::args::PromptArgs;
use crate::backends;
use crate::doubts::warn_about_items;
use crate::error::{exit_for, CliError, Exit};
use crate::input;
use crate::output::{save_raw, Printer};
use futures_util::StreamExt;
use llm_extract::extract::Input;
use llm_extract::llm::ChatEvent;
use llm_extract::prompts::{Prompt, PromptError, PromptOutput, PromptSet, ResponseType};
use std::path::Path;

pub async fn run(args: PromptArgs) -> Result<Exit, CliError> {
    let prompts = PromptSet::from_file(&args.config)
        .map_err(|e| CliError::usage(format!("--config: {e}")))?;
    let printer = Printer::new(args.pretty);
    if args.list {
        for prompt in prompts.iter() {
            let about = prompt
                .description()
                .map(|d| format!("  {d}"))
                .unwrap_or_default();
            printer.text(&format!(
                "{}\t{}{about}\n",
                prompt.id(),
                prompt.response_type()
            ))?;
        }
        return Ok(Exit::Success);
    }
    let id = args.id.as_deref().unwrap_or_default();
    let prompt = prompts.get(id).ok_or_else(|| {
        CliError::usage(format!(
            "--id {id}: no such prompt in {}; it has: {}",
            args.config.display(),
            prompts.ids().collect::<Vec<_>>().join(", ")
        ))
    })?;
    let mut vars = input::variables(&args.vars)?;
    input::stdin_as_text(&mut vars)?;
    let input = Input::context(&vars);
    // Fail on a missing variable before connecting to anything.
    prompt
        .render(input.clone())
        .map_err(|e| prompt_error(e, None))?;

    let llm = backends::single(&args.backend, &args.extract)?;
    let mut call = prompt
        .call(llm)
        .max_attempts(args.extract.max_attempts)
        .mode(backends::mode(args.extract.mode));
    if let Some(tokens) = args.extract.max_tokens {
        call = call.max_tokens(tokens);
    }
    if let Some(temperature) = args.extract.temperature {
        call = call.temperature(temperature);
    }
    let save_dir = args.extract.save_raw.as_deref();
    let streaming = !args.no_streaming;

    match prompt.response_type() {
        ResponseType::Text if streaming => {
            let mut stream = call
                .text_stream(input)
                .await
                .map_err(|e| prompt_error(e, None))?;
            let mut last = String::new();
            while let Some(event) = stream.next().await {
                match event.map_err(CliError::from)? {
                    ChatEvent::Delta(delta) => {
                        printer.text(&delta)?;
                        last = delta;
                    }
                    ChatEvent::Done(_) => break,
                    ChatEvent::Restart { error, .. } => {
                        // What was printed cannot be taken back: say that the text starts over.
                        if !last.is_empty() && !last.ends_with('\n') {
                            printer.text("\n")?;
                        }
                        last.clear();
                        eprintln!(
                            "llm-extract: {}; the request was sent again and the answer starts over",
                            crate::error::one_line(&error.to_string())
                        );
                    }
                    _ => {}
                }
            }
            if !last.is_empty() && !last.ends_with('\n') {
                printer.text("\n")?;
            }
            Ok(Exit::Success)
        }
        ResponseType::Jsonl if streaming => {
            let mut items = call
                .items_stream(input)
                .map_err(|e| prompt_error(e, None))?;
            let mut printed = 0;
            while let Some(item) = items.next().await {
                match item {
                    Ok(value) => {
                        printer.value(&value)?;
                        printed += 1;
                    }
                    Err(error) => {
                        save_raw(save_dir, prompt.id(), error.attempts());
                        return Err(CliError::new(
                            exit_for(&error),
                            format!("prompt `{}`: {error}", prompt.id()),
                        ));
                    }
                }
            }
            if let Some(report) = items.report() {
                save_raw(save_dir, prompt.id(), &report.attempts);
                warn_about_items(printed, &report.skipped);
            }
            Ok(Exit::Success)
        }
        _ => {
            let output = call
                .run(input)
                .await
                .map_err(|e| prompt_error(e, save_dir.map(|d| (d, prompt))))?;
            match &output {
                PromptOutput::Text(response) => {
                    printer.text(&response.text)?;
                    if !response.text.ends_with('\n') {
                        printer.text("\n")?;
                    }
                }
                PromptOutput::Json(extraction) => {
                    printer.value(&extraction.value)?;
                    save_raw(save_dir, prompt.id(), &extraction.report.attempts);
                }
                PromptOutput::Jsonl(extraction) => {
                    for item in &extraction.value {
                        printer.value(item)?;
                    }
                    save_raw(save_dir, prompt.id(), &extraction.report.attempts);
                    warn_about_items(extraction.value.len(), &extraction.report.skipped);
                }
                _ => printer.value(&output.to_value())?,
            }
            Ok(Exit::Success)
        }
    }
}

/// The exit code and message of a failed prompt, after saving its raw answers when asked.
fn prompt_error(error: PromptError, save: Option<(&Path, &Prompt)>) -> CliError {
    match &error {
        PromptError::Template { .. } => CliError::usage(format!(
            "{error}; pass the variable as name=VALUE or name=@FILE"
        )),
        PromptError::Llm { source, .. } => {
            CliError::new(crate::error::exit_for_llm(source), error.to_string())
        }
        PromptError::Extract { source, .. } => {
            if let Some((dir, prompt)) = save {
                save_raw(Some(dir), prompt.id(), source.attempts());
            }
            CliError::new(exit_for(source), error.to_string())
        }
        _ => CliError::usage(error.to_string()),
    }
}
