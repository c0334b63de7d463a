//! The generic schemas of well-known types from `std` and from other crates, each the JSON that
//! type's serde implementation writes and reads: network addresses, paths and `Duration` always;
//! dates, times, UUIDs, URLs and decimals behind cargo features named as schemars 1.x names its
//! own (`chrono04`, `uuid1`, `url2`, `rust_decimal1`, `jiff02`).
//!
//! A `format` is set where it describes exactly the strings serde writes (`date`, `date-time`,
//! `uuid`, `uri`, `ipv4`, `ipv6`) and is asserted by validation; where no format fits (a time of
//! day or a date and time without an offset), an anchored `pattern` does.

use super::builder::FieldSchema;
use serde_json::{json, Value};

/// A time of day as chrono and jiff write it: `10:30:00`, fractions of a second when there are
/// any, a leap second as `60`.
#[cfg(any(feature = "chrono04", feature = "jiff02"))]
const TIME: &str = r"^([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\.[0-9]+)?$";

/// A date and a time of day without an offset: `2024-01-31T10:30:00`.
#[cfg(any(feature = "chrono04", feature = "jiff02"))]
const DATE_TIME: &str = r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])T([01][0-9]|2[0-3]):[0-5][0-9]:([0-5][0-9]|60)(\.[0-9]+)?$";

/// A socket address as `std` writes it: `127.0.0.1:8080` or `[::1]:8080`.
const SOCKET_V4: &str = r"^[0-9]{1,3}(\.[0-9]{1,3}){3}:[0-9]{1,5}$";
const SOCKET_V6: &str = r"^\[[0-9A-Fa-f:.]+(%[0-9]+)?\]:[0-9]{1,5}$";

macro_rules! leaf_schemas {
    ($($(#[$cfg:meta])* $ty:ty => $schema:expr;)*) => {$(
        $(#[$cfg])*
        impl FieldSchema for $ty {
            fn field_schema() -> Value {
                $schema
            }
        }
    )*};
}

fn string_format(format: &str) -> Value {
    json!({ "type": "string", "format": format })
}

#[cfg(any(feature = "chrono04", feature = "jiff02"))]
fn string_pattern(pattern: &str) -> Value {
    json!({ "type": "string", "pattern": pattern })
}

leaf_schemas! {
    std::net::Ipv4Addr => string_format("ipv4");
    std::net::Ipv6Addr => string_format("ipv6");
    std::net::IpAddr => json!({ "anyOf": [string_format("ipv4"), string_format("ipv6")] });
    std::net::SocketAddrV4 => json!({ "type": "string", "pattern": SOCKET_V4 });
    std::net::SocketAddrV6 => json!({ "type": "string", "pattern": SOCKET_V6 });
    std::net::SocketAddr => json!({ "anyOf": [
        { "type": "string", "pattern": SOCKET_V4 },
        { "type": "string", "pattern": SOCKET_V6 }
    ] });
    std::path::PathBuf => json!({ "type": "string" });
    // serde's form; it refuses a missing or an unknown key.
    std::time::Duration => json!({
        "type": "object",
        "properties": {
            "secs": { "type": "integer", "minimum": 0 },
            "nanos": { "type": "integer", "minimum": 0, "maximum": u32::MAX }
        },
        "required": ["secs", "nanos"],
        "additionalProperties": false
    });

    #[cfg(feature = "chrono04")]
    chrono04::NaiveDate => string_format("date");
    #[cfg(feature = "chrono04")]
    chrono04::NaiveTime => string_pattern(TIME);
    #[cfg(feature = "chrono04")]
    chrono04::NaiveDateTime => string_pattern(DATE_TIME);
    #[cfg(feature = "chrono04")]
    chrono04::DateTime<chrono04::Utc> => string_format("date-time");
    #[cfg(feature = "chrono04")]
    chrono04::DateTime<chrono04::FixedOffset> => string_format("date-time");

    #[cfg(feature = "uuid1")]
    uuid1::Uuid => string_format("uuid");

    #[cfg(feature = "url2")]
    url2::Url => string_format("uri");

    // rust_decimal's default serde writes a string and reads a string or a number.
    #[cfg(feature = "rust_decimal1")]
    rust_decimal1::Decimal => json!({ "type": ["string", "number"], "pattern": r"^-?[0-9]+(\.[0-9]+)?$" });

    #[cfg(feature = "jiff02")]
    jiff02::civil::Date => string_format("date");
    #[cfg(feature = "jiff02")]
    jiff02::civil::Time => string_pattern(TIME);
    #[cfg(feature = "jiff02")]
    jiff02::civil::DateTime => string_pattern(DATE_TIME);
    #[cfg(feature = "jiff02")]
    jiff02::Timestamp => string_format("date-time");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::Validator;
    use serde::de::DeserializeOwned;
    use serde::Serialize;

    /// What serde writes for `value` is valid, and each string of `refused` is refused by serde and
    /// by the schema alike.
    fn agrees<T: FieldSchema + Serialize + DeserializeOwned>(value: T, refused: &[Value]) {
        let validator = Validator::new(&T::field_schema()).unwrap();
        let written = serde_json::to_value(&value).unwrap();
        assert!(validator.is_valid(&written), "{written}");
        for json in refused {
            assert!(
                serde_json::from_value::<T>(json.clone()).is_err(),
                "serde read {json}"
            );
            assert!(!validator.is_valid(json), "the schema took {json}");
        }
    }

    #[test]
    fn std_types_match_serde() {
        use std::net::*;
        agrees(Ipv4Addr::new(10, 0, 0, 1), &[json!("10.0.0"), json!("::1")]);
        agrees(Ipv6Addr::LOCALHOST, &[json!("10.0.0.1"), json!(":::")]);
        agrees(IpAddr::from([192, 168, 1, 2]), &[json!("host")]);
        agrees(IpAddr::V6(Ipv6Addr::LOCALHOST), &[json!(1)]);
        agrees(
            SocketAddr::from(([127, 0, 0, 1], 80)),
            &[json!("127.0.0.1")],
        );
        agrees(
            SocketAddr::from((Ipv6Addr::LOCALHOST, 8080)),
            &[json!("::1:8080")],
        );
        agrees(std::path::PathBuf::from("/tmp/a b"), &[json!(3)]);
        agrees(
            std::time::Duration::new(3, 5),
            &[
                json!({"secs": 3}),
                json!({"secs": 3, "nanos": 1, "x": 0}),
                json!(3),
            ],
        );
    }
}
