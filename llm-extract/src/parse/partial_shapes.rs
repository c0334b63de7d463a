//! [`PartialValue`] for the shapes shown as the JSON written so far (tuples, fixed-size arrays) and for
//! the leaf types of `std` and of other crates (addresses, paths, dates, UUIDs, ...), shown once
//! complete, when serde reads them.

use super::partial::Node;
use super::partial_value::{PartialField, PartialValue};
use serde_json::Value;

/// Types shown as the JSON written so far (see `PartialValue for Value`).
macro_rules! as_json {
    ($(impl[$($generics:tt)*] $ty:ty;)*) => {$(
        impl<$($generics)*> PartialValue for $ty {
            type Partial = Value;

            fn shown(node: Node<'_>) -> bool {
                Value::shown(node)
            }

            fn build(node: Node<'_>) -> Option<Value> {
                Value::build(node)
            }

            fn update(partial: &mut Value, node: Node<'_>, since: u64) -> bool {
                Value::update(partial, node, since)
            }
        }

        impl<$($generics)*> PartialField for $ty {}
    )*};
}

as_json! {
    impl[A] (A,);
    impl[A, B] (A, B);
    impl[A, B, C] (A, B, C);
    impl[A, B, C, D] (A, B, C, D);
    impl[A, B, C, D, E] (A, B, C, D, E);
    impl[A, B, C, D, E, F] (A, B, C, D, E, F);
    impl[A, B, C, D, E, F, G] (A, B, C, D, E, F, G);
    impl[A, B, C, D, E, F, G, H] (A, B, C, D, E, F, G, H);
    impl[A, B, C, D, E, F, G, H, I] (A, B, C, D, E, F, G, H, I);
    impl[A, B, C, D, E, F, G, H, I, J] (A, B, C, D, E, F, G, H, I, J);
    impl[A, B, C, D, E, F, G, H, I, J, K] (A, B, C, D, E, F, G, H, I, J, K);
    impl[A, B, C, D, E, F, G, H, I, J, K, L] (A, B, C, D, E, F, G, H, I, J, K, L);
    impl[T, const N: usize] [T; N];
}

/// The value once `node` is complete and serde reads it.
fn complete<T: serde::de::DeserializeOwned>(node: Node<'_>) -> Option<T> {
    if !node.is_complete() {
        return None;
    }
    serde_json::from_value(node.to_value()).ok()
}

/// Leaf types shown whole, once complete and read.
macro_rules! complete_leaves {
    ($($(#[$cfg:meta])* $ty:ty;)*) => {$(
        $(#[$cfg])*
        impl PartialValue for $ty {
            type Partial = $ty;

            fn shown(node: Node<'_>) -> bool {
                Self::build(node).is_some()
            }

            fn build(node: Node<'_>) -> Option<$ty> {
                complete(node)
            }

            fn update(_: &mut $ty, _: Node<'_>, _: u64) -> bool {
                false
            }
        }

        $(#[$cfg])*
        impl PartialField for $ty {}
    )*};
}

complete_leaves! {
    std::net::IpAddr;
    std::net::Ipv4Addr;
    std::net::Ipv6Addr;
    std::net::SocketAddr;
    std::net::SocketAddrV4;
    std::net::SocketAddrV6;
    std::path::PathBuf;
    std::time::Duration;
    #[cfg(feature = "chrono04")]
    chrono04::NaiveDate;
    #[cfg(feature = "chrono04")]
    chrono04::NaiveTime;
    #[cfg(feature = "chrono04")]
    chrono04::NaiveDateTime;
    #[cfg(feature = "chrono04")]
    chrono04::DateTime<chrono04::Utc>;
    #[cfg(feature = "chrono04")]
    chrono04::DateTime<chrono04::FixedOffset>;
    #[cfg(feature = "uuid1")]
    uuid1::Uuid;
    #[cfg(feature = "url2")]
    url2::Url;
    #[cfg(feature = "rust_decimal1")]
    rust_decimal1::Decimal;
    #[cfg(feature = "jiff02")]
    jiff02::civil::Date;
    #[cfg(feature = "jiff02")]
    jiff02::civil::Time;
    #[cfg(feature = "jiff02")]
    jiff02::civil::DateTime;
    #[cfg(feature = "jiff02")]
    jiff02::Timestamp;
}

#[cfg(test)]
mod tests {
    use crate::parse::partial::PartialParser;
    use crate::parse::partial_value::PartialValue;
    use serde_json::json;

    fn build<T: PartialValue>(text: &str) -> Option<T::Partial> {
        let mut parser = PartialParser::new(!text.starts_with('"'));
        parser.feed(text.as_bytes());
        T::build(parser.root()?)
    }

    #[test]
    fn tuples_show_what_is_written_and_leaves_show_once_complete() {
        assert_eq!(build::<(u8, String)>(r#"[1, "ab"#), Some(json!([1, "ab"])));
        assert_eq!(build::<[u8; 2]>("[1, 2]"), Some(json!([1, 2])));
        assert_eq!(build::<std::net::Ipv4Addr>(r#""10.0.0"#), None);
        assert_eq!(
            build::<std::net::Ipv4Addr>(r#""10.0.0.1""#),
            Some(std::net::Ipv4Addr::new(10, 0, 0, 1))
        );
        assert_eq!(
            build::<std::time::Duration>(r#"{"secs": 1, "nanos": 2"#),
            None
        );
    }
}
