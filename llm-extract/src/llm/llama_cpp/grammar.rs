//! Schemas to decoding constraints: the llguidance grammar that runs by default, built from the request's
//! schema itself, llama.cpp's JSON-Schema-to-grammar converter (what Ollama enforces) for the GBNF
//! engine, GBNF for JSON Lines, and the tokens a grammar forces.
//!
//! The embedded engine's dialect is [`Dialect::Generic`]: a request carries the full schema, and
//! llguidance enforces what it says (`allOf`, `anyOf`, `$ref` and recursion, `patternProperties`,
//! `min`/`maxProperties`, numeric bounds, string formats...). Only when llguidance refuses a schema does
//! the grammar come from the schema lowered for [`Dialect::Gbnf`] (see [`GrammarSource`]); the GBNF
//! engine always reads that lowering, through llama.cpp's converter. Either way every answer is
//! validated against the full schema afterwards.

use super::grounded::grounded_lark;
use super::guidance_options::with_guidance_options;
use super::LlamaCppError;
use crate::schema::dialect;
use crate::schema::Dialect;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;
use llguidance::api::TopLevelGrammar;
use llguidance::{Matcher, ParserFactory};
use serde_json::Value;

/// Converts a JSON Schema to a llama.cpp GBNF grammar with llama.cpp's own converter, the one Ollama and
/// llama-server enforce. A schema this accepts is one Ollama accepts.
///
/// # Errors
/// [`LlamaCppError::SchemaRejected`] when the converter rejects the schema (llama.cpp does not say why;
/// the usual causes are a subschema with no constraining keyword, such as `true` or `{"title": ..}`, and an
/// unanchored `pattern`).
pub fn schema_to_grammar(schema: &Value) -> Result<String, LlamaCppError> {
    let text = schema.to_string();
    llama_cpp_2::json_schema_to_grammar(&text).map_err(|e| LlamaCppError::SchemaRejected {
        message: e.to_string(),
        schema: text,
    })
}

/// The GBNF grammar of a JSON Lines answer: one or more values of `line_grammar`'s root, each on its own
/// line. Whitespace inside a value is limited to spaces, so a value cannot spill over lines.
pub(super) fn json_lines_gbnf(line_grammar: &str) -> String {
    let mut out = String::from("root ::= (jsonl-line \"\\n\")+\n");
    for rule in line_grammar.lines() {
        if let Some(body) = rule.strip_prefix("root ::=") {
            out.push_str("jsonl-line ::=");
            out.push_str(body);
        } else if rule.starts_with("space ::=") {
            out.push_str("space ::= | \" \"");
        } else {
            out.push_str(rule);
        }
        out.push('\n');
    }
    out
}

/// The llguidance grammar of a request's schema; with a grounding source, its grounded strings are spans
/// of that source (see [`grounded_lark`]) where the schema's shape allows. A schema with references keeps
/// the plain grammar: the grounded grammar writes subschemas out one by one, and a reference inside one
/// would point into a document of its own.
pub(super) fn guidance_grammar(
    schema: &Value,
    json_lines: bool,
    grounding: Option<&str>,
) -> TopLevelGrammar {
    let references = schema.to_string().contains("\"$ref\"");
    if let Some(lark) = grounding
        .filter(|_| !references)
        .and_then(|source| grounded_lark(schema, source, json_lines))
    {
        return TopLevelGrammar::from_lark(lark);
    }
    let schema = with_guidance_options(schema);
    if json_lines {
        TopLevelGrammar::from_lark(format!("start: (item \"\\n\")+\nitem: %json {schema}\n"))
    } else {
        TopLevelGrammar::from_json_schema(schema)
    }
}

/// Which schema an llguidance grammar was built from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum GrammarSource {
    /// The request's schema itself.
    Schema,
    /// The schema lowered for [`Dialect::Gbnf`], because llguidance refused the schema itself.
    Lowered,
}

/// The llguidance matcher the embedded engine decodes a request with: the grammar of `schema` itself, or,
/// when llguidance refuses it, of `schema` lowered for [`Dialect::Gbnf`] (grounding marks kept).
///
/// `factory` holds the model's tokenizer; JSON Lines and grounding as in a [`ChatRequest`](crate::llm::ChatRequest).
///
/// # Errors
/// [`LlamaCppError::Grammar`] when llguidance refuses both (with both of its messages), or refuses the
/// schema and the lowering cannot express it.
pub fn guidance_matcher(
    factory: &ParserFactory,
    schema: &Value,
    json_lines: bool,
    grounding: Option<&str>,
) -> Result<(Matcher, GrammarSource), LlamaCppError> {
    let compile = |schema: &Value| {
        let matcher =
            Matcher::new(factory.create_parser(guidance_grammar(schema, json_lines, grounding)));
        match matcher.get_error() {
            Some(message) => Err(message),
            None => Ok(matcher),
        }
    };
    let refused = match compile(schema) {
        Ok(matcher) => return Ok((matcher, GrammarSource::Schema)),
        Err(message) => message,
    };
    let lowered =
        dialect::lower_grounded(schema, Dialect::Gbnf).map_err(|e| LlamaCppError::Grammar {
            message: format!("{e} (llguidance refused the schema itself: {refused})"),
        })?;
    compile(lowered.schema())
        .map(|matcher| (matcher, GrammarSource::Lowered))
        .map_err(|message| LlamaCppError::Grammar {
            message: format!("{message} (the schema itself was refused too: {refused})"),
        })
}

/// The GBNF grammar llama.cpp's converter writes for `schema` lowered for [`Dialect::Gbnf`] (what
/// Ollama would run), for one value or JSON Lines.
///
/// # Errors
/// [`LlamaCppError::Grammar`] when the lowering refuses the schema, and the converter's errors (see
/// [`schema_to_grammar`]).
pub(super) fn gbnf_grammar(schema: &Value, json_lines: bool) -> Result<String, LlamaCppError> {
    let lowered = dialect::lower(schema, Dialect::Gbnf).map_err(|e| LlamaCppError::Grammar {
        message: e.to_string(),
    })?;
    let gbnf = schema_to_grammar(lowered.schema())?;
    Ok(if json_lines {
        json_lines_gbnf(&gbnf)
    } else {
        gbnf
    })
}

/// Which sampler enforces a schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum GrammarEngine {
    /// llguidance: masks computed lazily over a token trie, close to unconstrained speed. The default.
    #[default]
    Guidance,
    /// llama.cpp's GBNF grammar sampler over the converter's grammar: exactly what Ollama runs, and slower.
    Gbnf,
}

/// What constrains the next token.
pub(super) enum Constraint {
    /// Free text.
    None,
    /// llguidance: we compute the mask and feed it each accepted token.
    Guidance(Box<Matcher>),
    /// llama.cpp's grammar sampler: applied to the candidates, then told the chosen token.
    Gbnf(LlamaSampler),
}

impl Constraint {
    /// Feeds a prefill's tokens, so the grammar continues from where the prefill left off.
    pub(super) fn feed_prefill(&mut self, tokens: &[LlamaToken]) -> Result<(), LlamaCppError> {
        let rejected = || LlamaCppError::InvalidRequest {
            message: "the assistant prefill (the last message) does not match the schema's grammar"
                .into(),
        };
        match self {
            Constraint::None => Ok(()),
            Constraint::Guidance(matcher) => {
                let ids: Vec<u32> = tokens.iter().map(|t| t.0.cast_unsigned()).collect();
                matcher.consume_tokens(&ids).map_err(|_| rejected())
            }
            Constraint::Gbnf(grammar) => tokens
                .iter()
                .try_for_each(|t| grammar.try_accept(*t).map_err(|_| rejected())),
        }
    }

    /// The grammar is complete and allows nothing more.
    pub(super) fn is_complete(&self) -> bool {
        matches!(self, Constraint::Guidance(m) if m.is_stopped())
    }
}

/// The tokens the grammar forces next (at most `room`, none past an end-of-generation token), already fed
/// to the matcher.
pub(super) fn forced_tokens(
    matcher: &mut Matcher,
    room: usize,
    vocab: &llama_cpp_2::vocab::LlamaVocab<'_>,
) -> Result<Vec<LlamaToken>, String> {
    if room == 0 || matcher.is_stopped() {
        return Ok(Vec::new());
    }
    let mut forced = matcher.compute_ff_tokens();
    forced.truncate(room);
    if let Some(end) = forced
        .iter()
        .position(|&t| vocab.is_eog(LlamaToken(t.cast_signed())))
    {
        forced.truncate(end);
    }
    if !forced.is_empty() {
        matcher.consume_tokens(&forced).map_err(|e| e.to_string())?;
    }
    Ok(forced
        .into_iter()
        .map(|t| LlamaToken(t.cast_signed()))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use llguidance::toktrie::{ApproximateTokEnv, TokEnv};
    use serde_json::json;

    fn factory() -> (ParserFactory, TokEnv) {
        let env = ApproximateTokEnv::single_byte_env();
        let mut factory = ParserFactory::new_simple(&env).unwrap();
        factory.quiet();
        (factory, env)
    }

    /// Whether the matcher takes `text` whole, as a complete answer.
    fn accepts(matcher: &Matcher, env: &TokEnv, text: &str) -> bool {
        let mut matcher = matcher.deep_clone();
        let tokens = env.tokenize_bytes(text.as_bytes());
        matcher.consume_tokens(&tokens).is_ok() && matcher.is_accepting().unwrap_or(false)
    }

    #[test]
    fn llguidance_enforces_recursion_and_all_of_from_the_schema_itself() {
        let (factory, env) = factory();
        let tree = json!({
            "type": "object",
            "properties": {
                "name": { "type": "string", "maxLength": 3 },
                "kids": { "type": "array", "items": { "$ref": "#/$defs/Tree" } }
            },
            "required": ["name", "kids"],
            "additionalProperties": false,
            "$defs": { "Tree": { "$ref": "#" } }
        });
        let (matcher, source) = guidance_matcher(&factory, &tree, false, None).unwrap();
        assert_eq!(source, GrammarSource::Schema);
        assert!(accepts(
            &matcher,
            &env,
            r#"{"name": "a", "kids": [{"name": "b", "kids": [{"name": "c", "kids": []}]}]}"#
        ));
        assert!(!accepts(
            &matcher,
            &env,
            r#"{"name": "a", "kids": [{"name": "long", "kids": []}]}"#
        ));
        assert!(!accepts(
            &matcher,
            &env,
            r#"{"name": "a", "kids": [{"kids": []}]}"#
        ));

        let merged = json!({
            "allOf": [
                { "type": "object", "properties": { "n": { "type": "integer", "minimum": 3 } }, "required": ["n"] },
                { "properties": { "n": { "maximum": 5 }, "tag": { "const": "x" } }, "required": ["tag"] }
            ]
        });
        let (matcher, source) = guidance_matcher(&factory, &merged, false, None).unwrap();
        assert_eq!(source, GrammarSource::Schema);
        assert!(accepts(&matcher, &env, r#"{"n": 4, "tag": "x"}"#));
        assert!(!accepts(&matcher, &env, r#"{"n": 7, "tag": "x"}"#));
        assert!(!accepts(&matcher, &env, r#"{"n": 4}"#));
    }

    #[test]
    fn a_schema_no_grammar_can_hold_is_an_error() {
        let (factory, _) = factory();
        let nothing = json!({"type": "object", "properties": {"v": false}, "required": ["v"]});
        let Err(err) = guidance_matcher(&factory, &nothing, false, None) else {
            panic!("a grammar for a schema that accepts nothing");
        };
        assert!(matches!(err, LlamaCppError::Grammar { .. }), "{err}");
        assert!(err.to_string().contains("accepts no value"), "{err}");
    }

    #[test]
    fn what_llguidance_refuses_falls_back_to_the_ollama_lowering() {
        let (factory, env) = factory();
        // A pattern llguidance cannot compile (a look-ahead); the lowering drops it.
        let schema = json!({
            "type": "object",
            "properties": { "w": { "type": "string", "pattern": "^(?=a)[a-z]+$" }, "n": { "type": "integer", "maximum": 2 } },
            "required": ["w", "n"],
            "additionalProperties": false
        });
        let (matcher, source) = guidance_matcher(&factory, &schema, false, None).unwrap();
        assert_eq!(source, GrammarSource::Lowered);
        assert!(accepts(&matcher, &env, r#"{"w": "b", "n": 1}"#));
        assert!(!accepts(&matcher, &env, r#"{"w": "b", "n": 3}"#));
    }

    #[test]
    fn json_lines_gbnf_wraps_the_root_and_keeps_values_on_one_line() {
        let line = schema_to_grammar(
            &json!({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}),
        )
        .unwrap();
        let lines = json_lines_gbnf(&line);
        assert!(
            lines.starts_with("root ::= (jsonl-line \"\\n\")+\n"),
            "{lines}"
        );
        assert!(lines.contains("jsonl-line ::="), "{lines}");
        assert!(lines.contains("space ::= | \" \"\n"), "{lines}");
        assert_eq!(lines.matches("root ::=").count(), 1, "{lines}");
    }

    #[test]
    fn the_converter_rejects_what_ollama_rejects() {
        let err =
            schema_to_grammar(&json!({"type": "object", "properties": {"v": true}})).unwrap_err();
        assert!(matches!(err, LlamaCppError::SchemaRejected { .. }), "{err}");
        assert!(
            err.to_string().contains("\"v\":true"),
            "the message carries the schema: {err}"
        );
    }
}
