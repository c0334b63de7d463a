//! The prompt template: `{{name}}` placeholders filled from the input's variables, the default
//! template, the error of a template that cannot be filled, and the literal head before `{{text}}` a
//! provider's prompt cache can keep.

use serde_json::{Map, Value};

/// The prompt template unless told otherwise: the input text alone.
pub const DEFAULT_TEMPLATE: &str = "{{text}}";

/// A prompt template could not be filled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TemplateError {
    /// The template names a variable the input does not have.
    #[error("the prompt template uses {{{{{name}}}}} but the input has no variable `{name}` (it has: {available})")]
    MissingVariable {
        /// The variable's name.
        name: String,
        /// The variables the input has, comma-separated.
        available: String,
    },
    /// The context did not serialize to a JSON object.
    #[error(
        "the prompt context must serialize to a JSON object of variables; it serialized to {found}"
    )]
    NotAnObject {
        /// What it serialized to (`an array`, `a string`, ...).
        found: &'static str,
    },
    /// The context could not be serialized at all.
    #[error("the prompt context could not be serialized: {message}")]
    Serialize {
        /// serde's message.
        message: String,
    },
}

/// Fills `{{name}}` placeholders (spaces inside the braces allowed, `{{a.b}}` reaches into objects) from
/// `vars`. A string is inserted as is, anything else as compact JSON. Text that is not a placeholder,
/// including a lone `{{`, is kept.
pub(crate) fn render(template: &str, vars: &Map<String, Value>) -> Result<String, TemplateError> {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find("{{") {
        let (before, after_open) = rest.split_at(open);
        out.push_str(before);
        let inner = &after_open[2..];
        let Some(close) = inner.find("}}") else {
            out.push_str(after_open);
            return Ok(out);
        };
        let name = inner[..close].trim();
        if name.is_empty() || !name.chars().all(is_name_char) {
            // Not a placeholder (e.g. JSON in the template): keep the braces literally.
            out.push_str("{{");
            rest = inner;
            continue;
        }
        match lookup(vars, name) {
            Some(Value::String(s)) => out.push_str(s),
            Some(other) => out.push_str(&other.to_string()),
            None => {
                return Err(TemplateError::MissingVariable {
                    name: name.to_owned(),
                    available: if vars.is_empty() {
                        "none".to_owned()
                    } else {
                        vars.keys().cloned().collect::<Vec<_>>().join(", ")
                    },
                })
            }
        }
        rest = &inner[close + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.')
}

fn lookup<'a>(vars: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    if let Some(value) = vars.get(name) {
        return Some(value);
    }
    let mut parts = name.split('.');
    let mut value = vars.get(parts.next()?)?;
    for part in parts {
        value = value.get(part)?;
    }
    Some(value)
}

/// The text of `template` before its `{{text}}` placeholder, when no other placeholder comes before
/// it: what every input's rendered prompt starts with (a context every chunk of a document, or every
/// record of a batch, is sent with), which a provider's prompt cache can keep
/// ([`ChatRequest::stable_input`](crate::llm::ChatRequest::stable_input)). `None` otherwise.
pub(crate) fn stable_head(template: &str) -> Option<&str> {
    let mut from = 0;
    while let Some(open) = template.get(from..)?.find("{{").map(|at| from + at) {
        let inner = template.get(open + 2..)?;
        let close = inner.find("}}")?;
        let name = inner.get(..close)?.trim();
        if !name.is_empty() && name.chars().all(is_name_char) {
            return (name == "text").then(|| template.get(..open)).flatten();
        }
        // Not a placeholder (braces of JSON in the template): kept as written, as `render` does.
        from = open + 2;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vars(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn templates_fill_placeholders() {
        let v = vars(json!({"text": "Ada", "n": 3, "meta": {"lang": "en"}}));
        assert_eq!(
            render("Hi {{text}}, {{ n }} in {{meta.lang}}", &v).unwrap(),
            "Hi Ada, 3 in en"
        );
        assert_eq!(render("{{meta}}", &v).unwrap(), r#"{"lang":"en"}"#);
        assert_eq!(render("a {{ b", &v).unwrap(), "a {{ b");
        assert_eq!(
            render(r#"{{"x": 1}} {{text}}"#, &v).unwrap(),
            r#"{{"x": 1}} Ada"#
        );
    }

    #[test]
    fn a_missing_variable_is_an_error_naming_it() {
        let err = render("{{text}} {{lang}}", &vars(json!({"text": "x"}))).unwrap_err();
        assert_eq!(
            err,
            TemplateError::MissingVariable {
                name: "lang".into(),
                available: "text".into()
            }
        );
        assert!(err.to_string().contains("{{lang}}"), "{err}");
    }

    #[test]
    fn the_stable_head_is_the_literal_text_before_the_text() {
        assert_eq!(stable_head("{{text}}"), Some(""));
        assert_eq!(
            stable_head("Glossary: {{ not json }}.\n\n{{ text }} and {{lang}}"),
            Some("Glossary: {{ not json }}.\n\n")
        );
        // A variable before the text may differ from one input to the next: no stable head.
        assert_eq!(stable_head("{{title}}\n{{text}}"), None);
        assert_eq!(stable_head("no text here {{lang}}"), None);
        assert_eq!(stable_head("no placeholder"), None);
        assert_eq!(stable_head("cut {{text"), None);
    }
}
