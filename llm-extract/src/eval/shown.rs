//! How shares and field names are written in the text and HTML reports.

/// A share as a percentage with one decimal, or `-`.
pub(crate) fn percent(value: Option<f64>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format!("{:.1}%", 100.0 * v))
}

/// A field's name as shown: the root of a scalar value has none.
pub(crate) fn field_name(field: &str) -> &str {
    if field.is_empty() {
        "(value)"
    } else {
        field
    }
}
