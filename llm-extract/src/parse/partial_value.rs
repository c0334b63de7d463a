//! Typed partial values: [`PartialValue`] (what a type's partial form is and how it is brought up to
//! date from the partial tree of [`super::partial`]) and [`PartialReader`] (the parser and the typed
//! value together, fed chunk by chunk).
//!
//! A partial form is brought up to date from what changed since the reader last looked (the open path
//! of the tree), never rebuilt: a string grows by what was appended, a list syncs its last item and
//! appends new ones, an object syncs the members written since. The update starts at the shallowest
//! level the chunk changed ([`PartialParser::changed_depth`], [`PartialValue::update_below`]), reached
//! by the steps the reader remembers from the last time it went down ([`PartialValue::update_at`]):
//! no key is compared above that level, so what a chunk costs does not grow with how deep the value
//! it changed lies. A chunk that only appends to the string being written appends to its copy without
//! a walk. So each chunk costs what it changed, and a whole answer costs time linear in its length.
//!
//! What is shown, and when:
//! - strings grow as they are written; numbers, booleans, `char`s, fieldless enums and
//!   `serde_json::Value`s appear only once complete (a half-written number is not a number);
//! - an object appears once one of its fields would be shown (an empty `{` is not shown as if it were
//!   a value), and after all its `#[extract(stream = "required")]` fields;
//! - a tagged enum appears once its tag is read whole and names a variant; an untagged enum as the
//!   first variant, in declaration order, that the JSON written so far fits ([`PartialValue::fits`]),
//!   which can change as the JSON grows (serde takes the first variant that deserializes);
//! - a list appears as soon as it begins; an item is appended when it would be shown (an item that
//!   never would, ends the list's preview there); so does a fixed-size array `[T; N]`;
//! - a tuple, and a derived tuple struct, appears as soon as its array begins, each position `None`
//!   until its item would be shown (serialized as `null`), then grown as a field is;
//! - a field marked `#[extract(stream = "done")]` appears only once its value is complete.
//!
//! Every step is monotone: a shown field never disappears, a string never shrinks, a complete value
//! never changes. Only an untagged enum's value can be replaced, by another variant's, when the JSON
//! comes to fit another variant first (a key written, a value ended; see [`PartialValue::fits`]).

use super::partial::{JsonPath, Node, PartialParser};
use crate::schema::builder::MapKey;
use crate::schema::Schema;
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::fmt::Debug;
use std::sync::Arc;

/// A type whose partial form can be shown while its JSON streams.
///
/// `#[derive(Extract)]` implements it for every derived type `T`, generating `TPartial` (every field an
/// `Option`, nested types partial, `Vec<U>` a `Vec` of partial `U`s); it is implemented here for the
/// field types the derive accepts. Name a type's partial form [`Partial<T>`].
#[diagnostic::on_unimplemented(
    message = "llm-extract does not know the schema of `{Self}`",
    label = "no schema for this type",
    note = "derive `Extract` (with `Deserialize`) for it; for a foreign type that implements \
            `schemars::JsonSchema`, mark the field `#[extract(schemars)]`"
)]
pub trait PartialValue {
    /// The partial form.
    type Partial: Clone + Debug + PartialEq + Serialize + Send + Sync + 'static;

    /// Whether `node` is far enough along to be shown (exactly when [`PartialValue::build`] gives
    /// `Some`, but without building anything).
    fn shown(node: Node<'_>) -> bool;

    /// Whether `node` can still be read as this type, as far as its shape tells at a glance: an
    /// untagged enum shows the first variant whose data fits. While `node` is open, whether it is
    /// shown; once it is complete, a derived struct fits only an object that holds every field serde
    /// needs (each not an `Option` and without `#[serde(default)]`), as serde reads it. It looks no
    /// deeper than [`PartialValue::shown`] does, and looks up a key per field.
    #[inline]
    fn fits(node: Node<'_>) -> bool {
        Self::shown(node)
    }

    /// The keys an object of this type reads: a derived struct's fields' JSON names and aliases
    /// (those of its flattened fields aside), none for any other type. An untagged enum does not
    /// show a variant while the object holds a key that another variant reads and it does not
    /// ([`PartialValue::reads`]): a derived struct's object is closed.
    #[inline]
    fn keys() -> &'static [&'static str] {
        &[]
    }

    /// Whether an object of this type reads `key`: for a derived struct, one of its fields' names or
    /// aliases, or a key a flattened field reads; any other type reads any key.
    #[inline]
    fn reads(key: &str) -> bool {
        let _ = key;
        true
    }

    /// The partial form of `node` from scratch, or `None` while it is not to be shown.
    fn build(node: Node<'_>) -> Option<Self::Partial>;

    /// Brings `partial` (built from `node` earlier) up to date with what changed after chunk `since`;
    /// returns whether anything visible changed.
    fn update(partial: &mut Self::Partial, node: Node<'_>, since: u64) -> bool;

    /// [`PartialValue::update`] when nothing changed after chunk `since` but the node at `depth`
    /// below `node` on its open path (each container's last member or item) and what is under it (see
    /// [`PartialParser::changed_depth`]): a type that holds its members or items descends to that
    /// node's value and updates it there, so a chunk costs the levels it changed, not a walk from the
    /// root. Wherever the path leaves what the value shows (a member not shown yet, a key the type
    /// does not know), it updates from that level instead, which is always right.
    #[inline]
    fn update_below(partial: &mut Self::Partial, node: Node<'_>, since: u64, depth: usize) -> bool {
        let _ = depth;
        Self::update(partial, node, since)
    }

    /// The string being written at the end of `node` (each container's last member or item, down to
    /// a string), as `partial` shows it, with the text read so far: when a chunk did nothing but
    /// append to that string and perhaps end it ([`PartialParser::only_grew`]), the reader appends to
    /// it without walking the value (so `Some` only where a string shows the same complete or not).
    /// `None` where that string is not shown as it grows (a `stream = "done"` field, a value not shown
    /// yet, a type shown only once complete): the reader then walks as usual.
    ///
    /// Each level pushes onto `path` the step it took (a field's number, an item's index, or
    /// [`UNNUMBERED`] for a step that has no number, such as a map's key), so that
    /// [`PartialValue::grow_at`] finds the same string again without the tree.
    #[inline]
    fn growing<'p, 'n>(
        partial: &'p mut Self::Partial,
        node: Node<'n>,
        path: &mut Vec<u32>,
    ) -> Option<(&'p mut String, &'n str)> {
        let _ = (partial, node, path);
        None
    }

    /// The string [`PartialValue::growing`] found, by the steps it pushed onto its path: while the
    /// value's shape has not changed since (the reader asks only then), a chunk that did nothing but
    /// append to that string appends to it here, with no walk of the tree and no key compared.
    #[inline]
    fn grow_at<'p>(partial: &'p mut Self::Partial, path: &[u32]) -> Option<&'p mut String> {
        let _ = (partial, path);
        None
    }

    /// [`PartialValue::update_below`] of the value that the steps `route` lead to (steps as
    /// [`PartialValue::growing`] pushes them, one per level of the tree), `node` being that value's
    /// node: a chunk that changed the value `route.len()` levels down or deeper follows the steps
    /// instead of walking from the root, comparing a key at every level. `None` where a step leads
    /// nowhere (nothing has been updated then, and the reader walks from the root).
    #[inline]
    fn update_at(
        partial: &mut Self::Partial,
        route: &[u32],
        node: Node<'_>,
        since: u64,
        depth: usize,
    ) -> Option<bool> {
        route
            .is_empty()
            .then(|| Self::update_below(partial, node, since, depth))
    }

    /// [`PartialValue::growing`] from the value that the steps of `path` from `next` on lead to,
    /// `node` being that value's node: the steps below it are pushed onto `path` after them. So the
    /// string being written is found again from the deepest level whose steps are still known,
    /// without comparing the keys above it.
    #[inline]
    fn growing_at<'p, 'n>(
        partial: &'p mut Self::Partial,
        path: &mut Vec<u32>,
        next: usize,
        node: Node<'n>,
    ) -> Option<(&'p mut String, &'n str)> {
        if next == path.len() {
            Self::growing(partial, node, path)
        } else {
            None
        }
    }

    /// Builds or updates `slot`; returns whether anything visible changed. A value begun since the
    /// last look replaces what the slot showed (a key written again: serde keeps the last).
    #[inline]
    fn sync(slot: &mut Option<Self::Partial>, node: Node<'_>, since: u64) -> bool {
        match slot {
            Some(partial) if node.created() <= since => {
                node.changed() > since && Self::update(partial, node, since)
            }
            _ => {
                let new = Self::build(node);
                let changed = new != *slot;
                *slot = new;
                changed
            }
        }
    }
}

/// The field types of a derived type's partial form: every [`PartialValue`] type, each implemented
/// without conditions on other derived types (a derived type's own impl, written by the derive, has
/// none). The derive bounds its partial code on `for<'__p> F: PartialField` for each field type `F`:
/// checked where the partial form is used rather than where it is defined, so a field type with no
/// schema yields the schema code's error, not one more per item of the partial code; and, the impls
/// being unconditional, proving it never loops through types that contain each other.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "llm-extract does not know the schema of `{Self}`",
    label = "no schema for this type",
    note = "derive `Extract` (with `Deserialize`) for it; for a foreign type that implements \
            `schemars::JsonSchema`, mark the field `#[extract(schemars)]`"
)]
pub trait PartialField: PartialValue {}

macro_rules! partial_fields {
    ($($ty:ty),* $(,)?) => {$(impl PartialField for $ty {})*};
}
partial_fields!(
    String, str, bool, char, Value, i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize,
    f32, f64
);
impl<T: PartialField> PartialField for Option<T> {}
impl<T: PartialField + ?Sized> PartialField for Box<T> {}
impl<T: PartialField> PartialField for Vec<T> {}
impl<T: PartialField> PartialField for VecDeque<T> {}
impl<T: PartialField> PartialField for BTreeSet<T> {}
impl<T: PartialField, S> PartialField for HashSet<T, S> {}
impl<K: MapKey, T: PartialField> PartialField for BTreeMap<K, T> {}
impl<K: MapKey, T: PartialField, S> PartialField for HashMap<K, T, S> {}

/// A step of [`PartialValue::growing`]'s path that [`PartialValue::grow_at`] cannot take (a map's
/// key): a path holding it is not followed again.
pub const UNNUMBERED: u32 = u32::MAX;

/// The partial form of `T` (`TPartial` for a derived `T`).
pub type Partial<T> = <T as PartialValue>::Partial;

/// A field of a derived type: shown only once complete when `done` (`#[extract(stream = "done")]`).
#[doc(hidden)]
#[inline]
pub fn sync_field<T: PartialValue + ?Sized>(
    slot: &mut Option<T::Partial>,
    node: Node<'_>,
    since: u64,
    done: bool,
) -> bool {
    if done && !node.is_complete() {
        return false;
    }
    T::sync(slot, node, since)
}

/// A field of a derived type whose node is on the open path, `depth` levels above what changed (see
/// [`PartialValue::update_below`]); `None` when the field's slot cannot be descended into (not shown
/// yet, a value begun since the last look, or shown only once complete): then its object updates.
#[doc(hidden)]
#[inline]
pub fn descend_field<T: PartialValue + ?Sized>(
    slot: &mut Option<T::Partial>,
    node: Node<'_>,
    since: u64,
    done: bool,
    depth: usize,
) -> Option<bool> {
    match slot {
        Some(partial) if !done && node.created() <= since => {
            Some(node.changed() > since && T::update_below(partial, node, since, depth))
        }
        _ => None,
    }
}

/// Whether a field of a derived type would be shown (see [`sync_field`]).
#[doc(hidden)]
#[inline]
pub fn field_shown<T: PartialValue + ?Sized>(node: Option<Node<'_>>, done: bool) -> bool {
    node.is_some_and(|node| (!done || node.is_complete()) && T::shown(node))
}

/// The value of the first of `names` (a field's JSON name and its aliases) in an object.
#[doc(hidden)]
#[inline]
pub fn member<'a>(node: Node<'a>, names: &[&str]) -> Option<Node<'a>> {
    names.iter().find_map(|name| node.get(name))
}

/// Whether the object `node` holds `key` with a value read so far (not a number or word still being
/// written, which no reader sees yet).
#[doc(hidden)]
#[inline]
pub fn written(node: Node<'_>, key: &str) -> bool {
    node.get(key).is_some_and(readable)
}

/// Removes `keys` (the fields of the object, and their aliases) from the partial form of a
/// `#[serde(flatten)]` map, which is read from the whole object: serde gives the map only the keys
/// no field reads.
#[doc(hidden)]
pub fn without_keys<P>(map: &mut BTreeMap<String, P>, keys: &[&str]) {
    for key in keys {
        map.remove(*key);
    }
}

/// A field whose type has its schema from schemars: shown as the JSON written so far.
#[doc(hidden)]
pub fn sync_json(slot: &mut Option<Value>, node: Node<'_>, since: u64, done: bool) -> bool {
    sync_field::<Value>(slot, node, since, done)
}

/// Whether a schemars field would be shown.
#[doc(hidden)]
pub fn json_shown(node: Option<Node<'_>>, done: bool) -> bool {
    field_shown::<Value>(node, done)
}

/// Serializes the content of an internally tagged enum's newtype variant: the content's partial form,
/// or an empty map while it is not shown (serde writes the tag beside the content's members, so the
/// content must be a map).
#[doc(hidden)]
pub fn content_or_empty<T: Serialize, S: serde::Serializer>(
    content: &Option<T>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    match content {
        Some(content) => content.serialize(serializer),
        None => serializer.serialize_map(Some(0))?.end(),
    }
}

/// Serializes the one position of a tuple struct's or tuple variant's partial form whose other
/// fields are skipped: as an array of one item, as serde writes the value (a partial form of one
/// field would otherwise be written as a newtype's, the bare item).
#[doc(hidden)]
pub fn one_item<T: Serialize, S: serde::Serializer>(
    position: &T,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    (position,).serialize(serializer)
}

/// The complete string of a tag or fieldless enum.
#[doc(hidden)]
#[inline]
pub fn complete_str(node: Option<Node<'_>>) -> Option<&str> {
    node.filter(|node| node.is_complete())?.as_str()
}

impl PartialValue for String {
    type Partial = String;

    #[inline]
    fn growing<'p, 'n>(
        partial: &'p mut String,
        node: Node<'n>,
        _path: &mut Vec<u32>,
    ) -> Option<(&'p mut String, &'n str)> {
        Some((partial, node.as_str()?))
    }

    #[inline]
    fn grow_at<'p>(partial: &'p mut String, path: &[u32]) -> Option<&'p mut String> {
        path.is_empty().then_some(partial)
    }

    fn shown(node: Node<'_>) -> bool {
        node.as_str().is_some()
    }

    fn build(node: Node<'_>) -> Option<String> {
        // A string shows as soon as it begins and grows by a few bytes a chunk: room for a short
        // one from the start, so it is not reallocated at every doubling from nothing.
        let text = node.as_str()?;
        let mut partial = String::with_capacity(text.len().max(32));
        partial.push_str(text);
        Some(partial)
    }

    #[inline]
    fn update(partial: &mut String, node: Node<'_>, _since: u64) -> bool {
        // The same string as before (a new one is built, see `sync`): it only grows, so append what
        // was written since.
        match node.as_str().and_then(|text| text.get(partial.len()..)) {
            Some(more) => {
                partial.push_str(more);
                !more.is_empty()
            }
            None => false,
        }
    }
}

impl PartialValue for str {
    type Partial = String;

    fn shown(node: Node<'_>) -> bool {
        String::shown(node)
    }

    fn build(node: Node<'_>) -> Option<String> {
        String::build(node)
    }

    fn update(partial: &mut String, node: Node<'_>, since: u64) -> bool {
        String::update(partial, node, since)
    }

    #[inline]
    fn growing<'p, 'n>(
        partial: &'p mut String,
        node: Node<'n>,
        path: &mut Vec<u32>,
    ) -> Option<(&'p mut String, &'n str)> {
        String::growing(partial, node, path)
    }

    #[inline]
    fn grow_at<'p>(partial: &'p mut String, path: &[u32]) -> Option<&'p mut String> {
        String::grow_at(partial, path)
    }
    #[inline]
    fn growing_at<'p, 'n>(
        partial: &'p mut String,
        path: &mut Vec<u32>,
        next: usize,
        node: Node<'n>,
    ) -> Option<(&'p mut String, &'n str)> {
        String::growing_at(partial, path, next, node)
    }
}

/// Scalars shown only once complete: built whole, never updated.
macro_rules! complete_only {
    ($($ty:ty => |$node:ident| $read:expr),* $(,)?) => {$(
        impl PartialValue for $ty {
            type Partial = $ty;

            fn shown(node: Node<'_>) -> bool {
                Self::build(node).is_some()
            }

            fn build($node: Node<'_>) -> Option<$ty> {
                $read
            }

            fn update(_: &mut $ty, _: Node<'_>, _: u64) -> bool {
                false
            }
        }
    )*};
}

complete_only! {
    bool => |node| node.as_bool(),
    char => |node| {
        let mut chars = complete_str(Some(node))?.chars();
        let first = chars.next()?;
        chars.next().is_none().then_some(first)
    },
}

macro_rules! numbers {
    ($($ty:ty),* $(,)?) => {
        // As written when it is JSON (exact, and the common case); else as the final parse reads
        // it (`.5`, `+1`), through the table the parsers share.
        complete_only! { $($ty => |node| serde_json::from_str(node.number()?).ok().or_else(|| {
            <$ty as serde::Deserialize>::deserialize(node.as_number()?).ok()
        })),* }
    };
}
numbers!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, f32, f64);

/// JSON of any shape grows as it is written: strings as far as written, lists and objects as they
/// fill, numbers and literals once complete.
impl PartialValue for Value {
    type Partial = Value;

    fn shown(node: Node<'_>) -> bool {
        readable(node)
    }

    fn build(node: Node<'_>) -> Option<Value> {
        readable(node).then(|| node.to_value())
    }

    fn update(partial: &mut Value, node: Node<'_>, since: u64) -> bool {
        match partial {
            Value::String(text) => String::update(text, node, since),
            Value::Array(items) => {
                let mut changed = false;
                for index in node.first_changed_item(since)..node.len() {
                    let Some(item) = node.item(index) else {
                        break;
                    };
                    match items.get_mut(index) {
                        Some(value) => changed |= Value::update(value, item, since),
                        // Only the last item can be unreadable (a number not yet ended).
                        None => match Value::build(item) {
                            Some(value) => {
                                items.push(value);
                                changed = true;
                            }
                            None => break,
                        },
                    }
                }
                changed
            }
            Value::Object(map) => {
                // As `Node::to_value` reads a key written twice: the last value that shows wins.
                let mut changed = false;
                for (key, value) in node.changed_entries(since) {
                    if !readable(value) {
                        continue;
                    }
                    // A value shown at the last look is what its key shows (a later one for the same
                    // key would have been read after it): it grows in place. One begun since, or a
                    // number or literal just ended, replaces what its key showed.
                    let grows = value.created() <= since
                        && (value.as_str().is_some() || value.is_array() || value.is_object());
                    match map.get_mut(key) {
                        Some(partial) if grows => changed |= Value::update(partial, value, since),
                        Some(partial) => {
                            let new = value.to_value();
                            changed |= new != *partial;
                            *partial = new;
                        }
                        None => {
                            map.insert(key.to_owned(), value.to_value());
                            changed = true;
                        }
                    }
                }
                changed
            }
            // Numbers and literals appear complete: they never change.
            _ => false,
        }
    }
}

/// Whether JSON of any shape shows `node`: anything but a number or literal not yet ended.
fn readable(node: Node<'_>) -> bool {
    node.is_complete() || node.as_str().is_some() || node.is_array() || node.is_object()
}

/// The methods of [`PartialValue`] that walk the tree, for a type shown as the `$inner` it wraps
/// (`Option<T>` and `Box<T>` as `T`, `[T; N]` as `Vec<T>`): each passes the question on to `$inner`,
/// taking no step of its own.
macro_rules! transparent_walks {
    ($partial:ty, $inner:ty) => {
        #[inline]
        fn update_below(partial: &mut $partial, node: Node<'_>, since: u64, depth: usize) -> bool {
            <$inner>::update_below(partial, node, since, depth)
        }

        #[inline]
        fn growing<'p, 'n>(
            partial: &'p mut $partial,
            node: Node<'n>,
            path: &mut Vec<u32>,
        ) -> Option<(&'p mut String, &'n str)> {
            <$inner>::growing(partial, node, path)
        }

        #[inline]
        fn grow_at<'p>(partial: &'p mut $partial, path: &[u32]) -> Option<&'p mut String> {
            <$inner>::grow_at(partial, path)
        }

        #[inline]
        fn update_at(
            partial: &mut $partial,
            route: &[u32],
            node: Node<'_>,
            since: u64,
            depth: usize,
        ) -> Option<bool> {
            <$inner>::update_at(partial, route, node, since, depth)
        }

        #[inline]
        fn growing_at<'p, 'n>(
            partial: &'p mut $partial,
            path: &mut Vec<u32>,
            next: usize,
            node: Node<'n>,
        ) -> Option<(&'p mut String, &'n str)> {
            <$inner>::growing_at(partial, path, next, node)
        }
    };
}
pub(super) use transparent_walks;

/// `null` is not shown (as a field not yet written).
impl<T: PartialValue> PartialValue for Option<T> {
    type Partial = T::Partial;

    fn shown(node: Node<'_>) -> bool {
        !node.is_null() && T::shown(node)
    }

    fn fits(node: Node<'_>) -> bool {
        !node.is_null() && T::fits(node)
    }

    fn keys() -> &'static [&'static str] {
        T::keys()
    }

    fn reads(key: &str) -> bool {
        T::reads(key)
    }

    fn build(node: Node<'_>) -> Option<T::Partial> {
        if node.is_null() {
            return None;
        }
        T::build(node)
    }

    fn update(partial: &mut T::Partial, node: Node<'_>, since: u64) -> bool {
        T::update(partial, node, since)
    }

    transparent_walks!(T::Partial, T);
}

/// Shown as the `T` it holds, boxed too (so a type that holds itself through a `Box` has a partial
/// form of finite size).
impl<T: PartialValue + ?Sized> PartialValue for Box<T> {
    type Partial = Box<T::Partial>;

    fn shown(node: Node<'_>) -> bool {
        T::shown(node)
    }

    fn fits(node: Node<'_>) -> bool {
        T::fits(node)
    }

    fn keys() -> &'static [&'static str] {
        T::keys()
    }

    fn reads(key: &str) -> bool {
        T::reads(key)
    }

    fn build(node: Node<'_>) -> Option<Box<T::Partial>> {
        T::build(node).map(Box::new)
    }

    fn update(partial: &mut Box<T::Partial>, node: Node<'_>, since: u64) -> bool {
        T::update(partial, node, since)
    }

    transparent_walks!(Box<T::Partial>, T);
}

/// A list: its items so far, each partial; only the last one and new ones can change.
fn build_list<T: PartialValue + ?Sized>(node: Node<'_>) -> Option<Vec<T::Partial>> {
    if !node.is_array() {
        return None;
    }
    let mut list = Vec::new();
    update_list::<T>(&mut list, node, 0);
    Some(list)
}

fn update_list<T: PartialValue + ?Sized>(
    list: &mut Vec<T::Partial>,
    node: Node<'_>,
    since: u64,
) -> bool {
    let mut changed = false;
    for index in node.first_changed_item(since)..node.len() {
        let Some(item) = node.item(index) else {
            break;
        };
        if index + 1 == list.len() {
            if let Some(last) = list.last_mut() {
                changed |= T::update(last, item, since);
            }
        } else if index == list.len() {
            // An item that is not shown yet hides the ones after it (the list stays a prefix).
            let Some(partial) = T::build(item) else {
                break;
            };
            list.push(partial);
            changed = true;
        } else if index > list.len() {
            break;
        }
    }
    changed
}

/// [`PartialValue::update_below`] for a list: the last item, when the change is inside it and it is
/// shown already (the items before it are complete, and unchanged).
fn update_list_below<T: PartialValue + ?Sized>(
    list: &mut Vec<T::Partial>,
    node: Node<'_>,
    since: u64,
    depth: usize,
) -> bool {
    if let (Some(below), Some((index, item))) = (depth.checked_sub(1), node.last_item()) {
        if index + 1 == list.len() && item.created() <= since {
            if let Some(last) = list.last_mut() {
                return item.changed() > since && T::update_below(last, item, since, below);
            }
        }
    }
    update_list::<T>(list, node, since)
}

macro_rules! lists {
    ($($list:ident $(, $extra:ident)?);* $(;)?) => {$(
        impl<T: PartialValue $(, $extra)?> PartialValue for $list<T $(, $extra)?> {
            type Partial = Vec<T::Partial>;

            fn shown(node: Node<'_>) -> bool {
                node.is_array()
            }

            fn build(node: Node<'_>) -> Option<Self::Partial> {
                build_list::<T>(node)
            }

            fn update(partial: &mut Self::Partial, node: Node<'_>, since: u64) -> bool {
                update_list::<T>(partial, node, since)
            }

            #[inline]
            fn update_below(
                partial: &mut Self::Partial,
                node: Node<'_>,
                since: u64,
                depth: usize,
            ) -> bool {
                update_list_below::<T>(partial, node, since, depth)
            }

            #[inline]
            fn growing<'p, 'n>(
                partial: &'p mut Self::Partial,
                node: Node<'n>,
                path: &mut Vec<u32>,
            ) -> Option<(&'p mut String, &'n str)> {
                let (index, item) = node.last_item()?;
                path.push(u32::try_from(index).unwrap_or(UNNUMBERED));
                T::growing(partial.get_mut(index)?, item, path)
            }

            #[inline]
            fn grow_at<'p>(partial: &'p mut Self::Partial, path: &[u32]) -> Option<&'p mut String> {
                let (&index, rest) = path.split_first()?;
                T::grow_at(partial.get_mut(index as usize)?, rest)
            }

            #[inline]
            fn update_at(
                partial: &mut Self::Partial,
                route: &[u32],
                node: Node<'_>,
                since: u64,
                depth: usize,
            ) -> Option<bool> {
                match route.split_first() {
                    Some((&index, rest)) => {
                        T::update_at(partial.get_mut(index as usize)?, rest, node, since, depth)
                    }
                    None => Some(update_list_below::<T>(partial, node, since, depth)),
                }
            }

            #[inline]
            fn growing_at<'p, 'n>(
                partial: &'p mut Self::Partial,
                path: &mut Vec<u32>,
                next: usize,
                node: Node<'n>,
            ) -> Option<(&'p mut String, &'n str)> {
                match path.get(next) {
                    Some(&index) => {
                        T::growing_at(partial.get_mut(index as usize)?, path, next + 1, node)
                    }
                    None => Self::growing(partial, node, path),
                }
            }
        }
    )*};
}
lists!(Vec; VecDeque; BTreeSet; HashSet, S);

fn update_map<T: PartialValue>(
    map: &mut BTreeMap<String, T::Partial>,
    node: Node<'_>,
    since: u64,
) -> bool {
    let mut changed = false;
    for (key, value) in node.changed_entries(since) {
        match map.get_mut(key) {
            Some(partial) if value.created() <= since => {
                changed |= T::update(partial, value, since)
            }
            // New, or a key written again (its last value is shown, as serde reads duplicates).
            shown => match (T::build(value), shown) {
                (Some(partial), Some(slot)) => {
                    changed |= partial != *slot;
                    *slot = partial;
                }
                (Some(partial), None) => {
                    map.insert(key.to_owned(), partial);
                    changed = true;
                }
                (None, Some(_)) => {
                    map.remove(key);
                    changed = true;
                }
                (None, None) => {}
            },
        }
    }
    changed
}

macro_rules! maps {
    ($($map:ident $(, $extra:ident)?);* $(;)?) => {$(
        /// A map: its entries so far, by key as written (each shown once its key is read and its value
        /// would be).
        impl<K: MapKey, T: PartialValue $(, $extra)?> PartialValue for $map<K, T $(, $extra)?> {
            type Partial = BTreeMap<String, T::Partial>;

            fn shown(node: Node<'_>) -> bool {
                node.is_object()
            }

            fn build(node: Node<'_>) -> Option<Self::Partial> {
                if !node.is_object() {
                    return None;
                }
                let mut map = BTreeMap::new();
                update_map::<T>(&mut map, node, 0);
                Some(map)
            }

            fn update(partial: &mut Self::Partial, node: Node<'_>, since: u64) -> bool {
                update_map::<T>(partial, node, since)
            }

            #[inline]
            fn growing<'p, 'n>(
                partial: &'p mut Self::Partial,
                node: Node<'n>,
                path: &mut Vec<u32>,
            ) -> Option<(&'p mut String, &'n str)> {
                let (key, value) = node.last_entry()?;
                path.push(UNNUMBERED);
                T::growing(partial.get_mut(key)?, value, path)
            }
        }
    )*};
}
maps!(BTreeMap; HashMap, S);

/// The parser and a typed partial value together: feed chunks, read the value as it grows.
///
/// ```
/// use llm_extract::parse::{Partial, PartialReader};
/// use llm_extract::Extract;
///
/// #[derive(Extract, serde::Deserialize)]
/// struct Person {
///     name: String,
///     age: u32,
/// }
///
/// let mut reader = PartialReader::<Person>::new();
/// assert!(reader.feed(br#"{"name": "Ada"#));
/// let person: &Partial<Person> = reader.partial().unwrap();
/// assert_eq!((person.name.as_deref(), person.age), (Some("Ada"), None));
/// assert!(reader.feed(br#" L", "ag"#)); // the name grew
/// assert!(!reader.feed(br#"e": 3"#)); // a key and a number not yet ended: nothing to show
/// reader.feed(b"6}");
/// assert_eq!(reader.partial().unwrap().age, Some(36));
/// ```
pub struct PartialReader<T: PartialValue + ?Sized> {
    parser: PartialParser,
    value: Option<Arc<T::Partial>>,
    /// The chunk the value was last brought up to date with.
    seen: u64,
    /// The steps to the string being written ([`PartialValue::growing`]), when `on_path`.
    path: Vec<u32>,
    /// Whether `path` leads to the string being written and its copy there is up to date: set when a
    /// chunk that only appended to it finds it, cleared by any other change.
    on_path: bool,
    /// How many of `path`'s first steps still lead along the open path: a chunk that changed the
    /// tree at depth `d` leaves the nodes above `d` as they were, so the first `d` steps stay known
    /// (see [`PartialValue::update_at`]).
    known: usize,
}

impl<T: PartialValue + ?Sized> Debug for PartialReader<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PartialReader")
            .field("value", &self.value)
            .finish_non_exhaustive()
    }
}

impl<T: PartialValue + Schema> PartialReader<T> {
    /// A reader of one value of `T`.
    pub fn new() -> Self {
        Self::with_parser(PartialParser::new(T::schema().wants_container()))
    }
}

impl<T: PartialValue + Schema> Default for PartialReader<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: PartialValue + ?Sized> PartialReader<T> {
    /// A reader around `parser` (whether prose before the value is skipped is the parser's setting).
    pub fn with_parser(parser: PartialParser) -> Self {
        PartialReader {
            parser,
            value: None,
            seen: 0,
            path: Vec::new(),
            on_path: false,
            known: 0,
        }
    }

    /// Reads the next chunk (cut anywhere); returns whether the partial value changed visibly.
    #[inline]
    pub fn feed(&mut self, bytes: &[u8]) -> bool {
        self.parser.feed(bytes);
        let since = std::mem::replace(&mut self.seen, self.parser.chunk());
        if self.parser.changed_depth() == usize::MAX {
            // Nothing changed (whitespace, a key, a number not yet ended): most small chunks.
            return false;
        }
        self.changed(since)
    }

    /// Brings the value up to date after a chunk that changed the tree since chunk `since`.
    #[inline(never)]
    fn changed(&mut self, since: u64) -> bool {
        let depth = self.parser.changed_depth();
        self.known = self.known.min(depth);
        if self.parser.only_grew() {
            if let Some(grew) = self.grow() {
                return grew;
            }
        }
        self.on_path = false;
        let Some(root) = self.parser.root() else {
            return false;
        };
        let Some(value) = &mut self.value else {
            self.value = T::build(root).map(Arc::new);
            return self.value.is_some();
        };
        // Only clone a snapshot still held elsewhere if something changed (the open path's stamps
        // all moved then, the root's with them).
        if root.changed() <= since {
            return false;
        }
        let value = Arc::make_mut(value);
        // Update from the shallowest level the chunk changed (above it, only change stamps moved):
        // reached by the known steps as far as they go, and from there through the tree.
        let known = self.known.min(self.parser.open_depth().saturating_sub(1));
        let steps = self.path.get(..known).filter(|steps| !steps.is_empty());
        if let (Some(route), Some(node)) = (steps, self.parser.open_node(known)) {
            let below = depth.saturating_sub(known);
            if let Some(changed) = T::update_at(value, route, node, since, below) {
                return changed;
            }
        }
        T::update_below(value, root, since, depth)
    }

    /// A chunk that only appended to the string being written (or ended it): appends to its copy,
    /// without a walk, by the path found the first time (see [`PartialValue::grow_at`]), or found
    /// from the deepest level whose steps are still known; `None` when that string is not shown as
    /// it grows, or a snapshot is still held (then the walk decides, and copies the value only if
    /// something visible changed).
    fn grow(&mut self) -> Option<bool> {
        let partial = self.value.as_mut().and_then(Arc::get_mut)?;
        if self.on_path {
            if let Some(shown) = T::grow_at(partial, &self.path) {
                let more = self.parser.grown();
                shown.push_str(more);
                return Some(!more.is_empty());
            }
        }
        // The string is a member or item of the innermost open container (or the root itself).
        let known = self.known.min(self.parser.open_depth().saturating_sub(1));
        self.path.truncate(known);
        self.known = known;
        let node = self.parser.open_node(known)?;
        let (shown, text) = T::growing_at(partial, &mut self.path, 0, node)?;
        let more = text.get(shown.len()..)?;
        shown.push_str(more);
        self.known = self
            .path
            .iter()
            .position(|&step| step == UNNUMBERED)
            .unwrap_or(self.path.len());
        self.on_path = self.known == self.path.len();
        Some(!more.is_empty())
    }

    /// The partial value so far, once anything of it is shown.
    pub fn partial(&self) -> Option<&T::Partial> {
        self.value.as_deref()
    }

    /// The partial value as a shared snapshot (cheap: the reader copies it only if it changes while
    /// the snapshot is still held).
    pub fn snapshot(&self) -> Option<Arc<T::Partial>> {
        self.value.clone()
    }

    /// The parser underneath.
    pub fn parser(&self) -> &PartialParser {
        &self.parser
    }

    /// The values completed since the last call, innermost first, each with its path, as JSON (the
    /// root, once complete, is not among them: it is the whole value).
    pub fn take_completed(&mut self) -> Vec<(JsonPath, Value)> {
        self.parser
            .take_closed()
            .into_iter()
            .filter(|(path, _)| !path.0.is_empty())
            .map(|(path, node)| (path, node.to_value()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Feeds `chunks` to a reader of `T`; the partial value after each.
    fn steps<T: PartialValue + ?Sized>(
        container: bool,
        chunks: &[&str],
    ) -> Vec<Option<T::Partial>> {
        let mut reader = PartialReader::<T>::with_parser(PartialParser::new(container));
        chunks
            .iter()
            .map(|chunk| {
                reader.feed(chunk.as_bytes());
                reader.partial().cloned()
            })
            .collect()
    }

    #[test]
    fn lists_grow_item_by_item_and_only_show_what_is_whole() {
        let seen = steps::<Vec<u32>>(true, &["[1, 2", "2, 3", "]"]);
        assert_eq!(
            seen,
            [Some(vec![1]), Some(vec![1, 22]), Some(vec![1, 22, 3])]
        );
        let seen = steps::<Vec<String>>(true, &["[\"a", "b\", \"", "c\"]"]);
        assert_eq!(
            seen,
            [
                Some(vec!["a".into()]),
                Some(vec!["ab".into(), String::new()]),
                Some(vec!["ab".into(), "c".into()])
            ]
        );
        // An item that never shows (not a number) ends the list's preview there.
        let seen = steps::<Vec<u8>>(true, &["[1, \"x\", 2]"]);
        assert_eq!(seen, [Some(vec![1])]);
    }

    #[test]
    fn maps_options_and_boxes() {
        let seen = steps::<BTreeMap<String, Option<Box<String>>>>(
            true,
            &["{\"a\": null, \"b\": \"x", "y\"}"],
        );
        let map = |pairs: &[(&str, &str)]| {
            Some(
                pairs
                    .iter()
                    .map(|(k, v)| (k.to_string(), Box::new(v.to_string())))
                    .collect::<BTreeMap<_, _>>(),
            )
        };
        // A box's partial form is boxed too.
        assert_eq!(seen, [map(&[("b", "x")]), map(&[("b", "xy")])]);
    }

    #[test]
    fn scalars_appear_whole() {
        assert_eq!(
            steps::<f64>(false, &["-1.", "5e1", " "]),
            [None, None, Some(-15.0)]
        );
        assert_eq!(steps::<u8>(false, &["300 "]), [None]);
        assert_eq!(steps::<bool>(true, &["[tr"]), [None]);
        assert_eq!(steps::<char>(false, &["\"é", "\""]), [None, Some('é')]);
    }

    #[test]
    fn json_grows_as_written() {
        let seen = steps::<Value>(
            true,
            &["{\"a\": [1, 2", ", {\"b\": \"x", "y\"}], \"c\": tru", "e}"],
        );
        assert_eq!(
            seen,
            [
                Some(json!({"a": [1]})),
                Some(json!({"a": [1, 2, {"b": "x"}]})),
                Some(json!({"a": [1, 2, {"b": "xy"}]})),
                Some(json!({"a": [1, 2, {"b": "xy"}], "c": true})),
            ]
        );
    }

    /// Fed in chunks of every size from 1 to 9 bytes, `T` shows after each chunk what a reader given
    /// the same prefix in one piece shows (updates from below the root never drift from a fresh read).
    fn matches_fresh_reads<T: PartialValue + ?Sized>(text: &str) {
        let bytes = text.as_bytes();
        for size in 1..10 {
            let mut reader = PartialReader::<T>::with_parser(PartialParser::new(true));
            let mut end = 0;
            for piece in bytes.chunks(size) {
                end += piece.len();
                let before = reader.partial().cloned();
                let changed = reader.feed(piece);
                let mut fresh = PartialReader::<T>::with_parser(PartialParser::new(true));
                fresh.feed(&bytes[..end]);
                assert_eq!(
                    reader.partial(),
                    fresh.partial(),
                    "{size}-byte chunks, {end} bytes"
                );
                assert_eq!(
                    changed,
                    reader.partial().cloned() != before,
                    "{size}, {end}"
                );
            }
        }
    }

    #[test]
    fn nested_lists_maps_and_json_update_from_below_as_read_whole() {
        matches_fresh_reads::<Vec<Vec<String>>>(r#"[["ab", "c\"d"], [], ["é€", "x"], ["y"]]"#);
        matches_fresh_reads::<BTreeMap<String, Vec<String>>>(
            r#"{"a": ["x", "yz"], "b": [], "a": ["again"], "c": ["1", "22"]}"#,
        );
        matches_fresh_reads::<Vec<Option<Box<Vec<u32>>>>>("[[1, 22], null, [333, 4], [5]]");
        // Strings that grow over many chunks, at the end of paths of list indices and of map keys
        // (which the remembered path cannot follow), the path changing under them.
        matches_fresh_reads::<Vec<BTreeMap<String, Vec<String>>>>(
            r#"[{"a": ["a long first string", "é€ then more"]}, {"b": ["x\"y", "zz"], "b": ["again and again"]}]"#,
        );
        matches_fresh_reads::<BTreeMap<String, Vec<Vec<String>>>>(
            r#"{"k": [["one string written slowly", "two"], ["three strings"]], "j": [[]], "k": [["over"]]}"#,
        );
        matches_fresh_reads::<Value>(
            r#"{"a": [1, {"b": "xy", "c": [true, null]}], "d": {"e": "f", "g": [[2], "h"]}, "a": 12, "a": "again", "a": 3}"#,
        );
    }

    #[test]
    fn what_fits_and_which_keys_count_as_written() {
        let mut parser = PartialParser::new(true);
        parser.feed(br#"{"a": null, "b": 12"#);
        let root = parser.root().unwrap();
        let a = root.get("a").unwrap();
        // `null` fits no `Option`; an open number is not written yet, a complete `null` is.
        assert!(!<Option<String>>::fits(a) && <Value>::fits(a));
        assert!(written(root, "a") && !written(root, "b") && !written(root, "c"));
        parser.feed(b",");
        assert!(written(parser.root().unwrap(), "b"));
        // Only derived structs bound the keys they read.
        assert!(<Option<Box<BTreeMap<String, u8>>>>::keys().is_empty());
        assert!(<Box<Value>>::reads("anything"));
    }

    #[test]
    fn a_held_snapshot_is_not_changed_behind_its_holder() {
        let mut reader = PartialReader::<Vec<String>>::with_parser(PartialParser::new(true));
        reader.feed(b"[\"a");
        let held = reader.snapshot();
        reader.feed(b"b\"]");
        assert_eq!(held.as_deref(), Some(&vec!["a".to_string()]));
        assert_eq!(reader.partial(), Some(&vec!["ab".to_string()]));
    }
}
