//! `llm-extract schema`: what would be sent, and loading the schema every command shares.

use crate::args::{DialectArg, SchemaArgs, SchemaSource, ShapeArg};
use crate::error::{schema_error, CliError, Exit};
use crate::output::Printer;
use llm_extract::schema::{Dialect, DynamicSchema, Shape};

/// The schema `--schema` or `--signature` names.
pub fn load(source: &SchemaSource) -> Result<DynamicSchema, CliError> {
    match (&source.schema, &source.signature) {
        (Some(path), _) => DynamicSchema::from_file(path).map_err(|e| schema_error("--schema", e)),
        (None, Some(signature)) => {
            DynamicSchema::from_signature(signature).map_err(|e| schema_error("--signature", e))
        }
        (None, None) => Err(CliError::usage(
            "give the schema: --schema FILE or --signature '...'",
        )),
    }
}

/// Prints the schema in the dialect asked for, or the format instructions.
pub fn run(args: &SchemaArgs) -> Result<Exit, CliError> {
    let schema = load(&args.source)?;
    let set = schema.schema_set();
    let shape = match (args.shape, args.jsonl) {
        (Some(ShapeArg::One), _) => Shape::One,
        (Some(ShapeArg::Line), _) | (None, true) => Shape::Line,
        (Some(ShapeArg::List), _) => Shape::List,
        (None, false) => Shape::One,
    };
    let printer = Printer::new(true);
    if args.instructions {
        let instructions = match shape {
            Shape::One => set.format_instructions(),
            _ => set.line_format_instructions(),
        };
        return printer
            .text(&format!("{}\n", instructions.trim_end()))
            .map(|()| Exit::Success);
    }
    let dialect = match args.dialect {
        DialectArg::Generic => Dialect::Generic,
        DialectArg::Gbnf => Dialect::Gbnf,
        DialectArg::Openai => Dialect::OpenAiStrict,
        DialectArg::Anthropic => Dialect::Anthropic,
        DialectArg::Gemini => Dialect::Gemini,
    };
    let rendered = set.for_dialect(dialect, shape).map_err(|e| {
        CliError::usage(format!(
            "the schema cannot be sent in the {} dialect: {e}",
            dialect.name()
        ))
    })?;
    printer.value(rendered)?;
    Ok(Exit::Success)
}
