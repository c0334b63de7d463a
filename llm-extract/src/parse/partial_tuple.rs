//! [`PartialValue`] for tuples `(A, B, ..)` (up to twelve positions) and fixed-size arrays `[T; N]`.
//!
//! A tuple's partial form is a tuple of the same length, each position an `Option` of its type's
//! partial form: `None` until its item is shown, then brought up to date as the item grows, as a
//! derived struct's fields are from their members (its index standing for the key). It is shown as
//! soon as its array begins and serializes as an array of the same length, `null` at each position not
//! shown yet (as a derived tuple struct's partial form does). An array `[T; N]` is shown as a list is
//! (its items so far, each partial, a prefix of the `N`).

use super::partial::Node;
use super::partial_value::{descend_field, transparent_walks, PartialField, PartialValue};

macro_rules! tuples {
    ($(($($name:ident $index:tt),+);)*) => {$(
        /// A tuple: a position per item, each shown once its item is.
        impl<$($name: PartialValue),+> PartialValue for ($($name,)+) {
            type Partial = ($(Option<$name::Partial>,)+);

            fn shown(node: Node<'_>) -> bool {
                node.is_array()
            }

            fn build(node: Node<'_>) -> Option<Self::Partial> {
                if !node.is_array() {
                    return None;
                }
                let mut partial = ($(None::<$name::Partial>,)+);
                Self::update(&mut partial, node, 0);
                Some(partial)
            }

            fn update(partial: &mut Self::Partial, node: Node<'_>, since: u64) -> bool {
                let mut changed = false;
                for index in node.first_changed_item(since)..node.len() {
                    let Some(item) = node.item(index) else {
                        break;
                    };
                    // Items past the last position are not read (serde refuses them).
                    changed |= match index {
                        $($index => $name::sync(&mut partial.$index, item, since),)+
                        _ => false,
                    };
                }
                changed
            }

            #[inline]
            fn update_below(
                partial: &mut Self::Partial,
                node: Node<'_>,
                since: u64,
                depth: usize,
            ) -> bool {
                if let (Some(below), Some((index, item))) = (depth.checked_sub(1), node.last_item()) {
                    let descended = match index {
                        $($index => descend_field::<$name>(&mut partial.$index, item, since, false, below),)+
                        _ => None,
                    };
                    if let Some(changed) = descended {
                        return changed;
                    }
                }
                Self::update(partial, node, since)
            }

            #[inline]
            fn growing<'p, 'n>(
                partial: &'p mut Self::Partial,
                node: Node<'n>,
                path: &mut Vec<u32>,
            ) -> Option<(&'p mut String, &'n str)> {
                let (index, item) = node.last_item()?;
                match index {
                    $($index => {
                        path.push($index);
                        $name::growing(partial.$index.as_mut()?, item, path)
                    })+
                    _ => None,
                }
            }

            #[inline]
            fn grow_at<'p>(partial: &'p mut Self::Partial, path: &[u32]) -> Option<&'p mut String> {
                let (&step, rest) = path.split_first()?;
                match step {
                    $($index => $name::grow_at(partial.$index.as_mut()?, rest),)+
                    _ => None,
                }
            }

            #[inline]
            fn update_at(
                partial: &mut Self::Partial,
                route: &[u32],
                node: Node<'_>,
                since: u64,
                depth: usize,
            ) -> Option<bool> {
                let Some((&step, rest)) = route.split_first() else {
                    return Some(Self::update_below(partial, node, since, depth));
                };
                match step {
                    $($index => $name::update_at(partial.$index.as_mut()?, rest, node, since, depth),)+
                    _ => None,
                }
            }

            #[inline]
            fn growing_at<'p, 'n>(
                partial: &'p mut Self::Partial,
                path: &mut Vec<u32>,
                next: usize,
                node: Node<'n>,
            ) -> Option<(&'p mut String, &'n str)> {
                let Some(&step) = path.get(next) else {
                    return Self::growing(partial, node, path);
                };
                match step {
                    $($index => $name::growing_at(partial.$index.as_mut()?, path, next + 1, node),)+
                    _ => None,
                }
            }
        }

        impl<$($name: PartialField),+> PartialField for ($($name,)+) {}
    )*};
}

tuples! {
    (A 0);
    (A 0, B 1);
    (A 0, B 1, C 2);
    (A 0, B 1, C 2, D 3);
    (A 0, B 1, C 2, D 3, E 4);
    (A 0, B 1, C 2, D 3, E 4, F 5);
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6);
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7);
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8);
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9);
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10);
    (A 0, B 1, C 2, D 3, E 4, F 5, G 6, H 7, I 8, J 9, K 10, L 11);
}

/// A fixed-size array: shown as a list of its items so far.
impl<T: PartialValue, const N: usize> PartialValue for [T; N] {
    type Partial = Vec<T::Partial>;

    fn shown(node: Node<'_>) -> bool {
        Vec::<T>::shown(node)
    }

    fn build(node: Node<'_>) -> Option<Self::Partial> {
        Vec::<T>::build(node)
    }

    fn update(partial: &mut Self::Partial, node: Node<'_>, since: u64) -> bool {
        Vec::<T>::update(partial, node, since)
    }

    transparent_walks!(Self::Partial, Vec<T>);
}

impl<T: PartialField, const N: usize> PartialField for [T; N] {}

#[cfg(test)]
mod tests {
    use crate::parse::partial::PartialParser;
    use crate::parse::partial_value::{PartialReader, PartialValue};
    use serde_json::json;

    /// What a reader of `T` shows after the whole of `text`, checked equal, after every piece of
    /// every split into pieces of 1 to 9 bytes, to what a reader given the same prefix at once shows.
    fn read<T: PartialValue>(text: &str) -> Option<T::Partial> {
        let bytes = text.as_bytes();
        let new = || PartialReader::<T>::with_parser(PartialParser::new(true));
        let mut last = None;
        for size in 1..10 {
            let mut reader = new();
            let mut end = 0;
            for piece in bytes.chunks(size) {
                end += piece.len();
                let before = reader.partial().cloned();
                let changed = reader.feed(piece);
                let mut fresh = new();
                fresh.feed(&bytes[..end]);
                assert_eq!(reader.partial(), fresh.partial(), "{size}, {end}");
                assert_eq!(
                    changed,
                    reader.partial().cloned() != before,
                    "{size}, {end}"
                );
            }
            last = reader.partial().cloned();
        }
        last
    }

    #[test]
    fn tuples_show_each_position_once_its_item_is() {
        assert_eq!(read::<(u8, String)>("["), Some((None, None)));
        assert_eq!(read::<(u8, String)>("[1"), Some((None, None)));
        assert_eq!(
            read::<(u8, String)>("[1, \"ab"),
            Some((Some(1), Some("ab".into())))
        );
        // A position whose item is not of its type stays `None`; the next one is still read.
        assert_eq!(read::<(u8, u8)>("[\"x\", 2]"), Some((None, Some(2))));
        // Items past the last position are not read.
        assert_eq!(read::<(u8,)>("[1, 2, 3]"), Some((Some(1),)));
        assert_eq!(read::<(u8, String)>("{\"a\": 1}"), None);
        // `null` for each position not shown yet.
        let partial = read::<(u8, String, bool)>("[7, \"a").unwrap();
        assert_eq!(
            serde_json::to_value(partial).unwrap(),
            json!([7, "a", null])
        );
    }

    #[test]
    fn nested_tuples_and_arrays_grow_at_every_depth() {
        type Deep = Vec<(String, [(u8, Vec<String>); 2], Option<(bool, String)>)>;
        let text = r#"[["first, written slowly", [[1, ["a", "bc"]], [2, []]], [true, "end é€"]], ["x", [], null]]"#;
        let shown = read::<Deep>(text).unwrap();
        assert_eq!(
            shown,
            vec![
                (
                    Some("first, written slowly".to_string()),
                    Some(vec![
                        (Some(1), Some(vec!["a".to_string(), "bc".to_string()])),
                        (Some(2), Some(vec![])),
                    ]),
                    Some((Some(true), Some("end é€".to_string()))),
                ),
                (Some("x".to_string()), Some(vec![]), None),
            ]
        );
        assert_eq!(read::<[u8; 3]>("[1, 2"), Some(vec![1]));
    }
}
