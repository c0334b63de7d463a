//! Rendering the generic schema for each provider [`Dialect`]. OWNER: schema helper.

use super::Dialect;
use crate::error::SchemaError;
use serde_json::Value;

/// Renders `generic` for `dialect`.
pub fn render(generic: &Value, dialect: Dialect) -> Result<Value, SchemaError> {
    let _ = dialect;
    Ok(generic.clone())
}
