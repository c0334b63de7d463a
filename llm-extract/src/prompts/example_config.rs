//! A prompt config's `examples`: read and validated against the prompt's schema when the config loads,
//! and filled into the prompt's template (the example's text as `{{text}}`) for each call.

use super::{invalid, Prompt, PromptConfigError, PromptError, ResponseType};
use crate::extract::{Example, Input};
use crate::schema::DynamicSchema;
use serde::Deserialize;
use serde_json::Value;

/// One example as written in the file: the input `text`, and the answer as one `value` or (for a
/// `jsonl` prompt) a list of `items`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawExample {
    text: String,
    #[serde(default)]
    value: Option<Value>,
    #[serde(default)]
    items: Option<Vec<Value>>,
}

/// The examples of prompt `id`, checked: each with a non-empty `text` and a `value` (or, for a `jsonl`
/// prompt, `items`) that satisfies the schema; the template must use `{{text}}`.
pub(super) fn load(
    id: &str,
    template: &str,
    response_type: ResponseType,
    schema: Option<&DynamicSchema>,
    entries: Vec<RawExample>,
) -> Result<Vec<Example>, PromptConfigError> {
    if entries.is_empty() {
        return Ok(Vec::new());
    }
    let Some(schema) = schema else {
        return Err(invalid(
            Some(id),
            "\"examples\" need a json or jsonl prompt with a schema",
        ));
    };
    if !uses_text(template) {
        return Err(invalid(
            Some(id),
            "\"examples\" fill the template's {{text}}, and this template has none; put the input text in {{text}}",
        ));
    }
    let set = schema.schema_set();
    entries
        .into_iter()
        .enumerate()
        .map(|(i, entry)| {
            let n = i + 1;
            let text = entry.text.as_str();
            let made = match (entry.value, entry.items) {
                (Some(value), None) => Example::value(set, text, value),
                (None, Some(items)) if response_type == ResponseType::Jsonl => {
                    Example::value_items(set, text, items)
                }
                (None, Some(_)) => {
                    return Err(invalid(
                        Some(id),
                        format!("example {n}: \"items\" is for jsonl prompts; give one \"value\""),
                    ))
                }
                _ => {
                    return Err(invalid(
                        Some(id),
                        format!("example {n} needs exactly one of \"value\" or \"items\""),
                    ))
                }
            };
            made.map_err(|e| invalid(Some(id), format!("example {n}: {e}")))
        })
        .collect()
}

/// The prompt's examples with their text filled into the template, the rest of the variables taken from
/// `input`, so an example turn reads like the real one.
pub(super) fn shown(prompt: &Prompt, input: &Input) -> Result<Vec<Example>, PromptError> {
    if prompt.examples.is_empty() {
        return Ok(Vec::new());
    }
    let template_error = |source| PromptError::Template {
        id: prompt.id.clone(),
        source,
    };
    let vars = input.clone().into_vars().map_err(template_error)?;
    prompt
        .examples
        .iter()
        .map(|example| {
            let mut vars = vars.clone();
            vars.insert("text".into(), Value::String(example.text().to_owned()));
            crate::extract::render(&prompt.template, &vars)
                .map(|text| example.with_text(text))
                .map_err(template_error)
        })
        .collect()
}

/// Whether `template` has a `{{text}}` placeholder (spaces inside the braces allowed).
fn uses_text(template: &str) -> bool {
    let mut rest = template;
    while let Some(open) = rest.find("{{") {
        rest = &rest[open + 2..];
        if let Some(close) = rest.find("}}") {
            if rest[..close].trim() == "text" {
                return true;
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::super::PromptSet;
    use crate::extract::Input;
    use crate::llm::{from_fn, ChatRequest, ChatResponse, Role};
    use serde_json::json;
    use std::sync::{Arc, Mutex};

    fn config(examples: serde_json::Value) -> Result<PromptSet, super::PromptConfigError> {
        PromptSet::from_json(json!({
            "paid": {
                "prompt": "Is this invoice paid? {{text}}",
                "schema": "{paid :bool}",
                "examples": examples
            }
        }))
    }

    #[test]
    fn examples_are_checked_when_the_config_loads() {
        let set = config(json!([{"text": "Settled in May.", "value": {"paid": true}}])).unwrap();
        let prompt = set.get("paid").unwrap();
        assert_eq!(prompt.examples().len(), 1);
        assert_eq!(prompt.examples()[0].text(), "Settled in May.");

        let err = config(json!([{"text": "Settled.", "value": {"paid": "yes"}}])).unwrap_err();
        let message = err.to_string();
        assert!(
            message.contains("`paid`") && message.contains("example 1"),
            "{message}"
        );
        assert!(message.contains("does not satisfy its schema"), "{message}");

        let err = config(json!([{"text": "Settled.", "items": [{"paid": true}]}])).unwrap_err();
        assert!(err.to_string().contains("jsonl"), "{err}");
        let err = config(json!({"text": "Settled."})).unwrap_err();
        assert!(
            err.to_string()
                .contains("\"examples\": invalid type: map, expected a sequence"),
            "{err}"
        );

        let err = PromptSet::from_json(json!({
            "paid": {"prompt": "Paid? {{doc}}", "schema": "{paid :bool}",
                     "examples": [{"text": "Settled.", "value": {"paid": true}}]}
        }))
        .unwrap_err();
        assert!(err.to_string().contains("{{text}}"), "{err}");
    }

    #[test]
    fn a_call_shows_the_examples_through_the_template() {
        let set = config(json!([{"text": "Settled in May.", "value": {"paid": true}}])).unwrap();
        let seen: Arc<Mutex<Vec<ChatRequest>>> = Arc::default();
        let log = Arc::clone(&seen);
        let llm = from_fn(move |request: ChatRequest| {
            log.lock().unwrap().push(request);
            async { Ok(ChatResponse::new(r#"{"paid": false}"#)) }
        });
        let prompt = set.get("paid").unwrap();
        let out = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(prompt.invoke(&llm, Input::text("Due on Friday.")))
            .unwrap();
        assert_eq!(out.to_value(), json!({"paid": false}));
        let requests = seen.lock().unwrap();
        let turns: Vec<(Role, &str)> = requests[0]
            .messages
            .iter()
            .map(|m| (m.role, m.content.as_str()))
            .collect();
        assert_eq!(
            turns,
            vec![
                (Role::User, "Is this invoice paid? Settled in May."),
                (Role::Assistant, r#"{"paid": true}"#),
                (Role::User, "Is this invoice paid? Due on Friday."),
            ]
        );
    }
}
