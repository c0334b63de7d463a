//! The one line on standard error that names the schema keywords the chosen backend will not enforce
//! (the answers are validated against the whole schema either way); `--quiet` silences it.

use crate::args::{ExtractArgs, ModeArg};
use llm_extract::schema::{SchemaSet, Shape};
use llm_extract::Llm;

/// Prints the notice for `llm` and the schema of `set` (one value, or many with `many`), unless
/// `--quiet`, in prompted mode (no schema is sent), or when the backend enforces the whole schema.
pub fn unenforced<L: Llm + ?Sized>(llm: &L, set: &SchemaSet, many: bool, extract: &ExtractArgs) {
    if extract.quiet || extract.mode == ModeArg::Prompted {
        return;
    }
    if let Some(line) = line(llm, set, many) {
        eprintln!("llm-extract: note: {line}");
    }
}

/// The notice's text, if any. A schema the backend cannot take at all has no notice: the extraction
/// reports that error itself.
fn line<L: Llm + ?Sized>(llm: &L, set: &SchemaSet, many: bool) -> Option<String> {
    let shape = match (many, llm.constrains_json_lines()) {
        (false, _) => Shape::One,
        (true, true) => Shape::Line,
        (true, false) => Shape::List,
    };
    let dialect = llm.dialect();
    set.lowering(dialect, shape).ok()?.notice(dialect)
}

#[cfg(test)]
mod tests {
    use super::*;
    use llm_extract::llm::from_fn;
    use llm_extract::{llm::ChatResponse, schema::Dialect};
    use serde_json::json;

    fn set() -> SchemaSet {
        SchemaSet::new(
            "T",
            json!({ "type": "object", "properties": { "n": { "type": "integer", "multipleOf": 2 },
                "s": { "type": "string", "maxLength": 3 } }, "required": ["n", "s"], "additionalProperties": false }),
        )
    }

    fn with(dialect: Dialect) -> impl Llm {
        from_fn(|_| async { Ok(ChatResponse::new("{}")) }).with_dialect(dialect)
    }

    #[test]
    fn names_what_the_backend_leaves_to_the_local_check() {
        assert_eq!(
            line(&with(Dialect::Gemini), &set(), false).unwrap(),
            "gemini will not enforce maxLength, multipleOf (checked locally)"
        );
        assert_eq!(
            line(&with(Dialect::Anthropic), &set(), true).unwrap(),
            "anthropic will not enforce maxLength, multipleOf (checked locally)"
        );
        assert_eq!(line(&with(Dialect::Generic), &set(), false), None);
        let open = SchemaSet::new("T", json!({ "type": "object" }));
        let relaxed = line(&with(Dialect::OpenAiStrict), &open, false).unwrap();
        assert!(
            relaxed.starts_with("openai-strict takes this schema only without strict mode"),
            "{relaxed}"
        );
    }
}
