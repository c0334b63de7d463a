//! Compact format instructions for prompts. OWNER: schema helper.

use serde_json::Value;

/// Instructions for one value.
pub fn render_one(schema: &Value) -> String {
    schema.to_string()
}

/// Instructions for JSON Lines.
pub fn render_lines(schema: &Value) -> String {
    schema.to_string()
}
