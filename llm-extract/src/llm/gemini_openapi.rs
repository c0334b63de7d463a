//! A schema in the Gemini dialect written as the OpenAPI subset of Gemini's older `responseSchema`
//! field, for [`GeminiBuilder::openapi_schema`](super::GeminiBuilder::openapi_schema).

use super::LlmError;
use serde_json::{json, Map, Value};

/// A schema in the Gemini dialect as the OpenAPI subset `responseSchema` takes: upper-case `type`, a
/// `"null"` in a type list as `nullable`, `const` as a one-value `enum`, `propertyOrdering` from the
/// properties' order, no `additionalProperties`. `path` locates the schema in messages.
pub(crate) fn openapi(schema: &Value, path: &str) -> Result<Value, LlmError> {
    let refuse = |what: &str| {
        LlmError::Config {
        message: format!(
            "the schema cannot be sent as responseSchema: {what} at {}; send it as responseJsonSchema \
             (turn openapi_schema off) or change the type",
            if path.is_empty() { "/" } else { path }
        ),
    }
    };
    let Value::Object(map) = schema else {
        return Err(refuse("a schema that is not an object"));
    };
    let mut out = Map::new();
    for (key, value) in map {
        match key.as_str() {
            "type" => {
                let names: Vec<&str> = match value {
                    Value::String(one) => vec![one.as_str()],
                    Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
                    _ => Vec::new(),
                };
                let concrete: Vec<&str> = names.iter().copied().filter(|t| *t != "null").collect();
                match concrete.as_slice() {
                    [one] => {
                        out.insert("type".into(), json!(one.to_ascii_uppercase()));
                    }
                    [] => {
                        out.insert("type".into(), json!("NULL"));
                    }
                    _ => return Err(refuse("a value of several types")),
                }
                if concrete.len() < names.len() {
                    out.insert("nullable".into(), json!(true));
                }
            }
            "properties" => {
                let Value::Object(properties) = value else {
                    continue;
                };
                let mut rendered = Map::new();
                for (name, sub) in properties {
                    rendered.insert(
                        name.clone(),
                        openapi(sub, &format!("{path}/properties/{name}"))?,
                    );
                }
                let order: Vec<&String> = properties.keys().collect();
                out.insert("properties".into(), Value::Object(rendered));
                out.insert("propertyOrdering".into(), json!(order));
            }
            "items" => {
                out.insert("items".into(), openapi(value, &format!("{path}/items"))?);
            }
            "anyOf" => {
                let branches = value
                    .as_array()
                    .into_iter()
                    .flatten()
                    .enumerate()
                    .map(|(i, branch)| openapi(branch, &format!("{path}/anyOf/{i}")))
                    .collect::<Result<Vec<_>, _>>()?;
                out.insert("anyOf".into(), Value::Array(branches));
            }
            "additionalProperties" if value.is_object() => {
                return Err(refuse("a map (an object with arbitrary keys)"))
            }
            "prefixItems" => return Err(refuse("a tuple")),
            "enum" => {
                // The subset lists strings only.
                if let Some(values) = value.as_array().filter(|v| v.iter().all(Value::is_string)) {
                    out.insert("enum".into(), json!(values));
                }
            }
            "required" | "description" | "minItems" | "maxItems" | "minimum" | "maximum"
            | "format" => {
                out.insert(key.clone(), value.clone());
            }
            _ => {}
        }
    }
    if out.contains_key("enum") && !out.contains_key("type") {
        out.insert("type".into(), json!("STRING"));
    }
    Ok(Value::Object(out))
}
