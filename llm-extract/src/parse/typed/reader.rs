//! A JSON reader that checks the plan while serde deserializes from it: one layer between the text
//! and `T`'s `Deserialize`, where wrapping serde_json's deserializer took two (its and ours) for
//! every key and value.
//!
//! It reads the structure (objects, arrays, strings, literals) itself, held to JSON's grammar, with
//! the lexer's strict primitives (where a string's text stops, eight bytes at a time; where a number
//! or a run of whitespace ends: `lex`), and hands each number's text to serde_json, so that numbers reach `T` exactly as serde_json reads
//! them. Whatever it does not accept (a syntax error, a control character in a string, an escaped
//! key, nesting deeper than [`MAX_DEPTH`]) stops it, and the caller takes the full path, as it does
//! when a check fails.

use super::{key, Check, Checked, Hashes, Keys, MapState, SeqState, Shape, Slot, GIVE_UP};
use crate::parse::{lex, literal};
use crate::schema::plan::{Additional, Items, Node, Types};
use serde::de::value::{BorrowedStrDeserializer, StringDeserializer};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// Nesting deeper than this stops the reader (serde_json's own limit is 128 as well).
const MAX_DEPTH: u32 = 128;

/// The plan of a value nothing constrains.
pub(crate) static ANY: Node = Node::Any;

/// Why the reader stopped (never shown: the caller takes the full path).
#[derive(Debug)]
pub(crate) struct Stop;

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(GIVE_UP)
    }
}

impl std::error::Error for Stop {}

impl de::Error for Stop {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Stop
    }
}

/// A cursor over JSON text.
pub(crate) struct Reader<'de> {
    text: &'de str,
    pos: usize,
    depth: u32,
}

/// A string read from the text: borrowed when it has no escapes.
enum Text<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl Text<'_> {
    fn as_str(&self) -> &str {
        match self {
            Text::Borrowed(s) => s,
            Text::Owned(s) => s,
        }
    }
}

impl<'de> Reader<'de> {
    pub(crate) fn new(text: &'de str) -> Self {
        Reader {
            text,
            pos: 0,
            depth: 0,
        }
    }

    /// The byte the next value starts at, or where reading stopped.
    #[cfg(test)]
    fn position(&self) -> usize {
        self.pos
    }

    /// Only whitespace is left.
    pub(crate) fn end(&mut self) -> Result<(), Stop> {
        match self.skip_whitespace() {
            None => Ok(()),
            Some(_) => Err(Stop),
        }
    }

    /// The next byte that is not JSON whitespace (not consumed).
    #[inline]
    fn skip_whitespace(&mut self) -> Option<u8> {
        let bytes = self.text.as_bytes();
        self.pos = lex::space_end(bytes, self.pos);
        bytes.get(self.pos).copied()
    }

    /// Consumes `word` (a literal) or stops.
    fn literal(&mut self, word: &[u8]) -> Result<(), Stop> {
        match self.text.as_bytes().get(self.pos..) {
            Some(rest) if rest.starts_with(word) => {
                self.pos += word.len();
                Ok(())
            }
            _ => Err(Stop),
        }
    }

    /// Moves past what comes before the next entry of an object or array: nothing before its first,
    /// a comma before any other. `false` (with `close` consumed) when the container ends instead; a
    /// trailing comma or anything else stops.
    #[inline]
    fn next_entry(&mut self, first: &mut bool, close: u8) -> Result<bool, Stop> {
        let next = self.skip_whitespace();
        if next == Some(close) {
            self.pos += 1;
            return Ok(false);
        }
        if !*first {
            if next != Some(b',') {
                return Err(Stop);
            }
            self.pos += 1;
            if self.skip_whitespace() == Some(close) {
                return Err(Stop);
            }
        }
        *first = false;
        Ok(true)
    }

    fn enter(&mut self) -> Result<(), Stop> {
        self.depth += 1;
        match self.depth > MAX_DEPTH {
            true => Err(Stop),
            false => Ok(()),
        }
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    /// The string whose opening quote is at the cursor.
    #[inline]
    fn string(&mut self) -> Result<Text<'de>, Stop> {
        let bytes = self.text.as_bytes();
        let start = self.pos + 1;
        let at = lex::string_stop(bytes, start, b'"');
        match bytes.get(at) {
            Some(b'"') => {
                let text = self.text.get(start..at).ok_or(Stop)?;
                self.pos = at + 1;
                Ok(Text::Borrowed(text))
            }
            Some(b'\\') => self.escaped(start, at),
            _ => Err(Stop),
        }
    }

    /// A string with escapes, from its first byte `start`; the first escape is at `at`.
    fn escaped(&mut self, start: usize, mut at: usize) -> Result<Text<'de>, Stop> {
        let bytes = self.text.as_bytes();
        let mut out = String::with_capacity(at - start + 16);
        out.push_str(self.text.get(start..at).ok_or(Stop)?);
        loop {
            match bytes.get(at) {
                Some(b'"') => {
                    self.pos = at + 1;
                    return Ok(Text::Owned(out));
                }
                Some(b'\\') => {
                    let escape = *bytes.get(at + 1).ok_or(Stop)?;
                    at += 2;
                    // JSON's escapes only (from the table every reader shares): anything the
                    // lenient parser would repair stops this reader.
                    let c = match escape {
                        b'u' => self.unicode(&mut at)?,
                        _ => literal::escape(escape, false).ok_or(Stop)?,
                    };
                    out.push(c);
                }
                Some(_) => {
                    let end = lex::string_stop(bytes, at, b'"');
                    if end == at {
                        // A control character: JSON strings may not hold one raw.
                        return Err(Stop);
                    }
                    out.push_str(self.text.get(at..end).ok_or(Stop)?);
                    at = end;
                }
                None => return Err(Stop),
            }
        }
    }

    /// The character of a `\u` escape whose four hex digits start at `at` (a surrogate pair takes
    /// a second escape); a lone surrogate stops, as it makes serde_json fail.
    fn unicode(&self, at: &mut usize) -> Result<char, Stop> {
        let bytes = self.text.as_bytes();
        let hex = |from: usize| literal::hex4(bytes.get(from..from + 4).ok_or(Stop)?).ok_or(Stop);
        let first = hex(*at)?;
        *at += 4;
        if literal::is_high_surrogate(first) {
            if bytes.get(*at..*at + 2) != Some(b"\\u") {
                return Err(Stop);
            }
            let c = literal::surrogate_pair(first, hex(*at + 2)?).ok_or(Stop)?;
            *at += 6;
            return Ok(c);
        }
        // A lone low surrogate is no character: `from_u32` refuses it.
        char::from_u32(first).ok_or(Stop)
    }

    /// The text of the number at the cursor (its grammar is serde_json's to check).
    #[inline]
    fn number(&mut self) -> &'de str {
        let start = self.pos;
        let end = lex::number_end(self.text.as_bytes(), start);
        self.pos = end;
        self.text.get(start..end).unwrap_or_default()
    }
}

/// The value at the cursor, checked against `check` as it is deserialized.
pub(crate) struct At<'a, 'de> {
    pub(crate) r: &'a mut Reader<'de>,
    pub(crate) check: Check<'a>,
}

/// Deserializes a number through serde_json, checked unless the leaf is trusted.
macro_rules! number {
    ($($method:ident => $leaf:expr;)*) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
                match self.r.skip_whitespace() {
                    Some(b'-' | b'0'..=b'9') => {
                        let trusted = self.check.trusts($leaf);
                        let check = self.check;
                        let text = self.r.number();
                        let mut de = serde_json::Deserializer::from_str(text);
                        let value = match trusted {
                            true => de.$method(visitor),
                            false => de.$method(Checked { visitor, check }),
                        }
                        .map_err(|_| Stop)?;
                        de.end().map_err(|_| Stop)?;
                        Ok(value)
                    }
                    // serde_json refuses any other JSON type for a number too.
                    _ => Err(Stop),
                }
            }
        )*
    };
}

impl<'a, 'de> At<'a, 'de> {
    /// Reads a string and checks it (unless `trusted`).
    #[inline]
    fn checked_string(&mut self, trusted: bool) -> Result<Text<'de>, Stop> {
        if self.r.skip_whitespace() != Some(b'"') {
            return Err(Stop);
        }
        let text = self.r.string()?;
        if !trusted {
            self.check.string::<Stop>(text.as_str())?;
        }
        Ok(text)
    }

    fn visit_text<V: Visitor<'de>>(visitor: V, text: Text<'de>) -> Result<V::Value, Stop> {
        match text {
            Text::Borrowed(s) => visitor.visit_borrowed_str(s),
            Text::Owned(s) => visitor.visit_string(s),
        }
    }

    fn boolean<V: Visitor<'de>>(self, visitor: V, trusted: bool) -> Result<V::Value, Stop> {
        let value = match self.r.skip_whitespace() {
            Some(b't') => self.r.literal(b"true").map(|()| true)?,
            Some(b'f') => self.r.literal(b"false").map(|()| false)?,
            _ => return Err(Stop),
        };
        if !trusted {
            self.check.boolean::<Stop>(value)?;
        }
        visitor.visit_bool(value)
    }

    fn null(&mut self) -> Result<(), Stop> {
        self.r.literal(b"null")?;
        match self.check.is_any() {
            true => Ok(()),
            false => self.check.null::<Stop>(),
        }
    }

    /// An object, with the shape its node gives it.
    fn map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        let Check::Value { node, .. } = self.check else {
            return Err(Stop);
        };
        let shape = match node.present() {
            Node::Any => Shape::Open,
            Node::Tagged(tagged) => Shape::Tagged(tagged),
            Node::Keywords(typed) if typed.types.has(Types::OBJECT) => match &typed.object {
                Some(object) => Shape::Object(object),
                None => Shape::Open,
            },
            _ => return Err(Stop),
        };
        self.r.pos += 1;
        self.r.enter()?;
        let state = MapState::new(match shape {
            Shape::Object(object) => Some(object),
            Shape::Tagged(_) | Shape::Open => None,
        });
        let value = visitor.visit_map(Entries {
            r: &mut *self.r,
            shape,
            state: &state,
            first: true,
        })?;
        self.r.leave();
        let complete = match (shape, state.object.get()) {
            (Shape::Open, _) => true,
            (_, Some(object)) => object.required & !state.seen.get() == 0,
            (_, None) => false,
        };
        match state.done.get() && complete {
            true => Ok(value),
            false => Err(Stop),
        }
    }

    /// An array, its elements checked against its `items`.
    fn seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        let Check::Value { node, .. } = self.check else {
            return Err(Stop);
        };
        let items = match node.present() {
            Node::Any => None,
            Node::Keywords(typed) if typed.types.has(Types::ARRAY) => typed.array.as_ref(),
            _ => return Err(Stop),
        };
        self.r.pos += 1;
        self.r.enter()?;
        let state = SeqState::default();
        let value = visitor.visit_seq(Elements {
            r: &mut *self.r,
            items,
            state: &state,
            first: true,
            hashes: Hashes::default(),
        })?;
        self.r.leave();
        let count = state.count.get();
        match state.done.get() && items.and_then(|i| i.min).is_none_or(|min| count >= min) {
            true => Ok(value),
            false => Err(Stop),
        }
    }
}

impl<'de> Deserializer<'de> for At<'_, 'de> {
    type Error = Stop;

    number! {
        deserialize_i8 => super::Leaf::Int(i8::MIN.into(), i8::MAX.into());
        deserialize_i16 => super::Leaf::Int(i16::MIN.into(), i16::MAX.into());
        deserialize_i32 => super::Leaf::Int(i32::MIN.into(), i32::MAX.into());
        deserialize_i64 => super::Leaf::Int(i64::MIN.into(), i64::MAX.into());
        deserialize_u8 => super::Leaf::Int(0, u8::MAX.into());
        deserialize_u16 => super::Leaf::Int(0, u16::MAX.into());
        deserialize_u32 => super::Leaf::Int(0, u32::MAX.into());
        deserialize_u64 => super::Leaf::Int(0, u64::MAX.into());
        deserialize_f32 => super::Leaf::Number;
        deserialize_f64 => super::Leaf::Number;
    }

    fn deserialize_any<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value, Stop> {
        match self.r.skip_whitespace() {
            Some(b'{') => self.map(visitor),
            Some(b'[') => self.seq(visitor),
            Some(b'"') => {
                let trusted = self.check.is_any();
                let text = self.checked_string(trusted)?;
                Self::visit_text(visitor, text)
            }
            Some(b't' | b'f') => {
                let trusted = self.check.is_any();
                self.boolean(visitor, trusted)
            }
            Some(b'n') => {
                self.null()?;
                visitor.visit_unit()
            }
            Some(b'-' | b'0'..=b'9') => {
                let check = self.check;
                let text = self.r.number();
                let mut de = serde_json::Deserializer::from_str(text);
                let value = match check.is_any() {
                    true => de.deserialize_any(visitor),
                    false => de.deserialize_any(Checked { visitor, check }),
                }
                .map_err(|_| Stop)?;
                de.end().map_err(|_| Stop)?;
                Ok(value)
            }
            _ => Err(Stop),
        }
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        let trusted = self.check.trusts(super::Leaf::Bool);
        self.boolean(visitor, trusted)
    }

    fn deserialize_str<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value, Stop> {
        let trusted = self.check.trusts(super::Leaf::Str);
        let text = self.checked_string(trusted)?;
        Self::visit_text(visitor, text)
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        self.deserialize_str(visitor)
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        self.deserialize_str(visitor)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        self.deserialize_str(visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value, Stop> {
        match self.r.skip_whitespace() {
            Some(b'n') => {
                self.null()?;
                visitor.visit_none()
            }
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value, Stop> {
        match self.r.skip_whitespace() {
            Some(b'n') => {
                self.null()?;
                visitor.visit_unit()
            }
            _ => Err(Stop),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, Stop> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, Stop> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        match self.r.skip_whitespace() {
            Some(b'[') => self.seq(visitor),
            _ => Err(Stop),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _: usize, visitor: V) -> Result<V::Value, Stop> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: usize,
        visitor: V,
    ) -> Result<V::Value, Stop> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        match self.r.skip_whitespace() {
            Some(b'{') => self.map(visitor),
            _ => Err(Stop),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Stop> {
        self.deserialize_map(visitor)
    }

    /// Our schemas hold only fieldless enums, which JSON writes as strings: read a string, check
    /// it, and hand it to the enum's visitor as its variant.
    fn deserialize_enum<V: Visitor<'de>>(
        mut self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Stop> {
        let trusted = self.check.is_any();
        match self.checked_string(trusted)? {
            Text::Borrowed(s) => visitor.visit_enum(BorrowedStrDeserializer::<Stop>::new(s)),
            Text::Owned(s) => visitor.visit_enum(StringDeserializer::<Stop>::new(s)),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Stop> {
        self.deserialize_any(visitor)
    }

    /// JSON has no bytes, and 128-bit integers are rare enough to leave to the full path.
    fn deserialize_bytes<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
        Err(Stop)
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
        Err(Stop)
    }

    fn deserialize_i128<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
        Err(Stop)
    }

    fn deserialize_u128<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
        Err(Stop)
    }
}

/// The entries of an object, keys looked up in the plan as they are read.
struct Entries<'a, 'p, 'de> {
    r: &'a mut Reader<'de>,
    shape: Shape<'p>,
    state: &'a MapState<'p>,
    first: bool,
}

impl<'de> MapAccess<'de> for Entries<'_, '_, 'de> {
    type Error = Stop;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Stop> {
        if !self.r.next_entry(&mut self.first, b'}')? {
            self.state.done.set(true);
            return Ok(None);
        }
        if self.r.skip_whitespace() != Some(b'"') {
            return Err(Stop);
        }
        // An escaped key is rare enough to leave to the full path.
        let Text::Borrowed(name) = self.r.string()? else {
            return Err(Stop);
        };
        let slot = &self.state.slot;
        match (self.state.object.get(), self.shape) {
            (Some(object), _) => key(Keys::Object(object, self.state.next.get()), slot, name)?,
            (None, Shape::Tagged(tagged)) => key(Keys::Tag(&tagged.tag), slot, name)?,
            (None, Shape::Open) => slot.set(Slot::Unchecked),
            (None, Shape::Object(_)) => return Err(Stop),
        }
        seed.deserialize(BorrowedStrDeserializer::<Stop>::new(name))
            .map(Some)
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, Stop> {
        if self.r.skip_whitespace() != Some(b':') {
            return Err(Stop);
        }
        self.r.pos += 1;
        let state = self.state;
        let r = &mut *self.r;
        match state.slot.replace(Slot::Unset) {
            Slot::Property(index) => {
                let object = state.object.get().ok_or(Stop)?;
                let (_, node) = object.properties.get(index).ok_or(Stop)?;
                state.seen.set(state.seen.get() | (1 << index));
                state.next.set(index + 1);
                seed.deserialize(At {
                    r,
                    check: Check::value(node),
                })
            }
            Slot::Tag => {
                let Shape::Tagged(tagged) = self.shape else {
                    return Err(Stop);
                };
                let check = Check::Tag {
                    tagged,
                    variant: &state.variant,
                };
                let value = seed.deserialize(At { r, check })?;
                let variant = state.variant.get().ok_or(Stop)?;
                let (_, object) = tagged.variants.get(variant).ok_or(Stop)?;
                state.object.set(Some(object));
                // The tag is the variant object's first property.
                state.seen.set(state.seen.get() | 1);
                state.next.set(1);
                Ok(value)
            }
            Slot::Additional => match state.object.get().map(|o| &o.additional) {
                Some(Additional::Checked(node)) => seed.deserialize(At {
                    r,
                    check: Check::value(node),
                }),
                _ => Err(Stop),
            },
            Slot::Unchecked => seed.deserialize(At {
                r,
                check: Check::value(&ANY),
            }),
            Slot::Unset => Err(Stop),
        }
    }
}

/// The elements of an array, each checked against the array's `items`.
struct Elements<'a, 'p, 'de> {
    r: &'a mut Reader<'de>,
    items: Option<&'p Items>,
    state: &'a SeqState,
    first: bool,
    hashes: Hashes,
}

impl<'de> SeqAccess<'de> for Elements<'_, '_, 'de> {
    type Error = Stop;

    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, Stop> {
        if !self.r.next_entry(&mut self.first, b']')? {
            self.state.done.set(true);
            return Ok(None);
        }
        let count = self.state.count.get() + 1;
        self.state.count.set(count);
        let Some(items) = self.items else {
            return seed
                .deserialize(At {
                    r: &mut *self.r,
                    check: Check::value(&ANY),
                })
                .map(Some);
        };
        if items.max.is_some_and(|max| count > max) {
            return Err(Stop);
        }
        let check = Check::Value {
            node: &items.node,
            hash: items.unique.then_some(&self.state.hash),
        };
        let element = seed.deserialize(At {
            r: &mut *self.r,
            check,
        })?;
        if items.unique {
            // Equal hashes may be equal values: give up rather than guess.
            match self.state.hash.take() {
                Some(hash) if self.hashes.insert(hash) => {}
                _ => return Err(Stop),
            }
        }
        Ok(Some(element))
    }
}

#[cfg(test)]
mod tests {
    use super::super::Plan;
    use super::*;
    use proptest::prelude::*;
    use serde_json::{json, Value};

    /// `text` read by the reader with a plan that accepts anything.
    fn read(text: &str) -> Option<Value> {
        let plan = Plan::compile(&json!({})).unwrap();
        super::super::read::<Value>(text, Some(&plan))
    }

    /// Any JSON value, with strings that need every kind of escape (keys stay plain: the reader
    /// leaves escaped keys to the full path).
    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            any::<String>().prop_map(Value::String),
            "[a-z\\\"\u{0}-\u{1f}é😀 ]{0,12}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                proptest::collection::vec(("[a-z_]{0,6}", inner), 0..6)
                    .prop_map(|entries| Value::Object(entries.into_iter().collect())),
            ]
        })
    }

    /// Fragments of JSON, broken and whole, for text that is almost JSON.
    fn jsonish() -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![
                Just("{"),
                Just("}"),
                Just("["),
                Just("]"),
                Just("\""),
                Just(":"),
                Just(","),
                Just("\\"),
                Just("\\u00e9"),
                Just("\\ud83d"),
                Just("\\ude00"),
                Just("\\n"),
                Just("1"),
                Just("0"),
                Just("-"),
                Just("."),
                Just("e"),
                Just("+"),
                Just("2.5"),
                Just("true"),
                Just("null"),
                Just("fals"),
                Just(" "),
                Just("\n"),
                Just("\t"),
                Just("\u{0}"),
                Just("\u{1f}"),
                Just("é"),
                Just("a"),
                Just("\"k\":"),
                Just("18446744073709551616"),
                Just("1e400"),
                Just("-0"),
            ],
            0..40,
        )
        .prop_map(|parts| parts.concat())
    }

    /// A JSON text with one fragment inserted, or one stretch of it replaced by a fragment: text
    /// that is almost valid, where a reader too lenient would show.
    fn mutated() -> impl Strategy<Value = String> {
        let fragment = prop_oneof![Just(String::new()), jsonish()];
        (
            json_value(),
            any::<bool>(),
            any::<usize>(),
            0usize..3,
            fragment,
        )
            .prop_map(|(value, pretty, at, cut, fragment)| {
                let text = match pretty {
                    true => serde_json::to_string_pretty(&value).unwrap(),
                    false => serde_json::to_string(&value).unwrap(),
                };
                let mut at = at % (text.len() + 1);
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                let mut end = (at + cut).min(text.len());
                while !text.is_char_boundary(end) {
                    end += 1;
                }
                format!("{}{}{}", &text[..at], fragment, &text[end..])
            })
    }

    /// Texts one mistake away from JSON: the reader refuses each, as serde_json does.
    #[test]
    fn near_misses_are_refused() {
        for text in [
            r#"{"a":1 "b":2}"#,
            r#"{"a":1,}"#,
            r#"{,}"#,
            r#"{"a" 1}"#,
            r#"{"a"::1}"#,
            r#"{a:1}"#,
            r#"{'a':1}"#,
            r#"{"a":1}}"#,
            r#"{"a":1"#,
            r#"[1 2]"#,
            r#"[1,]"#,
            r#"[,]"#,
            r#"[,1]"#,
            r#"[1]]"#,
            r#"[1"#,
            "01",
            "+1",
            ".5",
            "1.",
            "1e",
            "1e+",
            "-",
            "--1",
            "0x10",
            "tru",
            "nul",
            "True",
            "NaN",
            "Infinity",
            r#""\x""#,
            r#""\u12g4""#,
            "\"a\u{1}\"",
            "1 2",
            "\u{feff}1",
            "[1]\u{0}",
            r#"{"a":1}x"#,
            "",
            " ",
        ] {
            assert_eq!(read(text), None, "{text}");
            assert!(serde_json::from_str::<Value>(text).is_err(), "{text}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

        /// Whatever the reader accepts, serde_json reads as the same value.
        #[test]
        fn accepts_only_what_serde_json_reads_the_same(text in prop_oneof![jsonish(), mutated()]) {
            if let Some(ours) = read(&text) {
                prop_assert_eq!(Some(ours), serde_json::from_str::<Value>(&text).ok(), "{:?}", text);
            }
        }

        /// Every JSON value, compact or pretty, reads back as itself.
        #[test]
        fn reads_every_json_value(value in json_value(), pretty in any::<bool>()) {
            let text = match pretty {
                true => serde_json::to_string_pretty(&value).unwrap(),
                false => serde_json::to_string(&value).unwrap(),
            };
            let expected = serde_json::from_str::<Value>(&text).unwrap();
            prop_assert_eq!(read(&text), Some(expected), "{}", text);
        }
    }

    /// Strings decode as serde_json decodes them, or stop where serde_json fails.
    #[test]
    fn strings_decode_as_serde_json_does() {
        for text in [
            r#""plain""#,
            r#""a \"quoted\" word""#,
            r#""\\ \/ \b \f \n \r \t""#,
            r#""\u00e9t\u00E9 \ud83d\ude00 x""#,
            r#""€ and ünïcödé""#,
            r#""""#,
            r#""\ud83d""#,
            r#""\ude00""#,
            r#""\ud83d\u0041""#,
            r#""\x""#,
            r#""\u12""#,
            "\"raw\ncontrol\"",
            "\"tab\there\"",
            r#""unterminated"#,
            r#""ends in \"#,
        ] {
            let mut reader = Reader::new(text);
            let ours = reader.string().map(|t| t.as_str().to_owned()).ok();
            let theirs = serde_json::from_str::<String>(text).ok();
            assert_eq!(ours, theirs, "{text}");
            if ours.is_some() {
                assert_eq!(reader.position(), text.len(), "{text}");
            }
        }
    }
}
