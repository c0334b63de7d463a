//! The last step of one value's parse, where the answer was read as validated JSON rather than
//! straight to `T`: that JSON to `T` through serde, with serde's path and message when it refuses.
//! Also the one adapter from an item's validated JSON to `T` for the decoder and the extraction
//! loop.

use super::{ParseError, SkipReason, Skipped};
use crate::validate::Violation;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The answer's validated JSON as a `T`, with that JSON; when serde refuses it, the error names
/// serde's path and message and carries the raw answer `raw`.
pub(crate) fn answer<T: DeserializeOwned>(
    value: Value,
    raw: &str,
) -> Result<(T, Value), ParseError> {
    match deserialize::<T>(&value) {
        Ok(typed) => Ok((typed, value)),
        Err((path, message)) => Err(ParseError::Deserialize {
            path,
            message,
            raw: raw.to_owned(),
        }),
    }
}

/// Builds `T` from validated JSON; on failure, the serde path and message.
pub(crate) fn deserialize<T: DeserializeOwned>(json: &Value) -> Result<T, (String, String)> {
    match T::deserialize(json) {
        Ok(value) => Ok(value),
        // Track the path only on failure, so the success path pays nothing for it.
        Err(_) => match serde_path_to_error::deserialize::<_, T>(json) {
            Ok(value) => Ok(value),
            Err(e) => Err((e.path().to_string(), e.into_inner().to_string())),
        },
    }
}

/// An item's validated JSON as a `T`; when serde refuses it, the item is skipped with serde's path
/// and message. The one adapter from validated JSON to `T`, for the decoder and the extraction loop.
pub(crate) fn typed_item<T: DeserializeOwned>(json: &Value, line: usize) -> Result<T, Skipped> {
    deserialize::<T>(json).map_err(|(path, message)| Skipped {
        line,
        raw: json.to_string(),
        reason: SkipReason::Schema(vec![Violation { path, message }]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn deserialize_errors_carry_the_path() {
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Inner {
            n: u8,
        }
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Outer {
            items: Vec<Inner>,
        }
        let (path, message) =
            deserialize::<Outer>(&json!({"items":[{"n":1},{"n":300}]})).unwrap_err();
        assert_eq!(path, "items[1].n");
        assert!(message.contains("300"), "{message}");
        assert!(typed_item::<Outer>(&json!({"items":[]}), 1).is_ok());
        let skipped = typed_item::<Outer>(&json!({"items":[{"n":-1}]}), 7).unwrap_err();
        assert_eq!(skipped.line, 7);
        assert_eq!(skipped.raw, r#"{"items":[{"n":-1}]}"#);
        assert!(
            matches!(&skipped.reason, SkipReason::Schema(v) if v[0].path == "items[0].n"),
            "{skipped:?}"
        );
    }
}
