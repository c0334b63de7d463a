//! [`PartialValue`] for the leaf types of `std` and of other crates (addresses, paths, dates, UUIDs,
//! ...), shown once complete, when serde reads them.

use super::partial::Node;
use super::partial_value::{PartialField, PartialValue};

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

    fn build<T: PartialValue>(text: &str) -> Option<T::Partial> {
        let mut parser = PartialParser::new(!text.starts_with('"'));
        parser.feed(text.as_bytes());
        T::build(parser.root()?)
    }

    #[test]
    fn leaves_show_once_complete() {
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
