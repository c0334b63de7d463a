//! The prompt config format: what a file may say, read by serde into raw structs, then checked into
//! [`Prompt`]s (`TryFrom`), with every mistake named by prompt and key.

use super::example_config::{self, RawExample};
use super::{invalid, Prompt, PromptConfigError, ResponseType};
use crate::schema::{DynamicSchema, DynamicSchemaError};
use serde::Deserialize;
use serde_json::Value;

/// One prompt as written in the file. Keys are kebab-case (`response-type`); the snake_case spellings
/// are accepted too.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub(super) struct RawPrompt {
    /// Only in the array form of a config.
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    prompt: Option<Template>,
    #[serde(default, alias = "response_type")]
    response_type: Option<ResponseType>,
    #[serde(default)]
    schema: Option<Value>,
    #[serde(default, alias = "object_schema")]
    object_schema: Option<Value>,
    #[serde(default)]
    system: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default, alias = "max_tokens")]
    max_tokens: Option<u32>,
    #[serde(default)]
    temperature: Option<f32>,
    #[serde(default)]
    examples: Option<Vec<RawExample>>,
}

/// A template: one string, or lines joined with newlines.
#[derive(Debug, Deserialize)]
#[serde(untagged, expecting = "a string or an array of lines")]
enum Template {
    Text(String),
    Lines(Vec<String>),
}

/// A prompt of the file with the id it goes by (its key, or its `"id"` in the array form).
#[derive(Debug)]
pub(super) struct Entry {
    pub(super) id: String,
    pub(super) raw: RawPrompt,
}

/// The prompts of a config, in file order: an object keyed by id, or an array of prompts with `"id"`.
pub(super) fn entries(config: Value) -> Result<Vec<Entry>, PromptConfigError> {
    match config {
        Value::Object(map) => map
            .into_iter()
            .map(|(id, value)| {
                let raw = read(&id, value)?;
                match &raw.id {
                    Some(inner) if *inner != id => Err(invalid(
                        Some(&id),
                        format!("\"id\" is \"{inner}\" but the prompt is keyed \"{id}\"; drop the \"id\""),
                    )),
                    _ => Ok(Entry { id, raw }),
                }
            })
            .collect(),
        Value::Array(list) => list
            .into_iter()
            .enumerate()
            .map(|(i, value)| {
                let Some(id) = value.get("id").and_then(Value::as_str).map(str::to_owned) else {
                    return Err(invalid(
                        None,
                        format!("prompt number {} of the array has no string \"id\"", i + 1),
                    ));
                };
                let raw = read(&id, value)?;
                Ok(Entry { id, raw })
            })
            .collect(),
        _ => Err(invalid(
            None,
            "expected an object of prompts keyed by id, or an array of prompts with \"id\"",
        )),
    }
}

/// Reads one prompt, naming the key at fault when it does not fit the format.
fn read(id: &str, value: Value) -> Result<RawPrompt, PromptConfigError> {
    if !value.is_object() {
        return Err(invalid(
            Some(id),
            "expected an object with at least \"prompt\"",
        ));
    }
    serde_path_to_error::deserialize(value).map_err(|e| {
        let key = e.path().to_string();
        let message = e.into_inner().to_string();
        let message = if key == "." {
            message
        } else {
            format!("\"{key}\": {message}")
        };
        invalid(Some(id), message)
    })
}

impl TryFrom<Entry> for Prompt {
    type Error = PromptConfigError;

    fn try_from(Entry { id, raw }: Entry) -> Result<Self, Self::Error> {
        let template = match raw.prompt {
            Some(Template::Text(text)) => text,
            Some(Template::Lines(lines)) => lines.join("\n"),
            None => {
                return Err(invalid(
                    Some(&id),
                    "missing \"prompt\" (the template, with {{var}} placeholders)",
                ))
            }
        };
        let (schema_key, schema) = match (raw.schema, raw.object_schema) {
            (Some(_), Some(_)) => {
                return Err(invalid(
                    Some(&id),
                    "give \"schema\" or \"object-schema\", not both",
                ))
            }
            (Some(schema), None) => (Some("schema"), Some(schema)),
            (None, Some(schema)) => (Some("object-schema"), Some(schema)),
            (None, None) => (None, None),
        };
        let response_type = match (raw.response_type, schema_key) {
            (Some(declared), _) => declared,
            (None, Some("object-schema")) => ResponseType::Jsonl,
            (None, Some(_)) => ResponseType::Json,
            (None, None) => ResponseType::Text,
        };
        match (response_type, schema_key) {
            (ResponseType::Text, Some(key)) => {
                return Err(invalid(
                    Some(&id),
                    format!("response-type text takes no \"{key}\"; use json or jsonl"),
                ))
            }
            (ResponseType::Json, Some("object-schema")) => {
                return Err(invalid(
                    Some(&id),
                    "\"object-schema\" describes each line of a jsonl answer; use \"schema\" for response-type json",
                ))
            }
            (ResponseType::Json | ResponseType::Jsonl, None) => {
                return Err(invalid(
                    Some(&id),
                    format!("response-type {response_type} needs a \"schema\" (a JSON Schema or a signature)"),
                ))
            }
            _ => {}
        }
        let schema = schema.map(|schema| load_schema(&id, schema)).transpose()?;
        let examples = example_config::load(
            &id,
            &template,
            response_type,
            schema.as_ref(),
            raw.examples.unwrap_or_default(),
        )?;
        Ok(Prompt {
            examples,
            template,
            response_type,
            schema,
            system: raw.system,
            description: raw.description,
            max_tokens: raw.max_tokens,
            temperature: raw.temperature,
            id,
        })
    }
}

fn load_schema(id: &str, schema: Value) -> Result<DynamicSchema, PromptConfigError> {
    let loaded = match schema {
        Value::String(signature) => DynamicSchema::from_signature(&signature),
        other => DynamicSchema::named(id, other).map_err(DynamicSchemaError::from),
    };
    loaded.map_err(|source| PromptConfigError::Schema {
        id: id.to_owned(),
        source,
    })
}
