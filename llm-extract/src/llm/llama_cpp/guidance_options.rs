//! llguidance's JSON compile options, given to every schema the embedded engine compiles: the whole
//! answer's (`grammar.rs`) and each grounded value's (`grounded.rs`).

use serde_json::{json, Value};

/// llguidance's JSON compile options: values written the way `json.dumps` writes them, on one line, with
/// `oneOf` read as `anyOf` (llguidance cannot enforce "exactly one"; the validator does) and keywords it
/// does not know ignored (every value is validated against the full schema after parsing).
pub(super) fn with_guidance_options(schema: &Value) -> Value {
    let mut schema = schema.clone();
    if let Value::Object(map) = &mut schema {
        map.insert(
            "x-guidance".into(),
            json!({
                "whitespace_flexible": false,
                "item_separator": ", ",
                "key_separator": ": ",
                "coerce_one_of": true,
                "lenient": true
            }),
        );
    }
    schema
}
