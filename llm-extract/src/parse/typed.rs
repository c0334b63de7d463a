//! Validation while deserializing: clean JSON goes from text straight to `T` through serde, and a
//! plan compiled from the schema checks every value as serde reads it, so no `serde_json::Value`
//! is built for an answer that is already right. The text is read by our own JSON reader
//! ([`reader`]), which looks each key up in the plan as it reads it and hands numbers to
//! serde_json, so checking adds no layer between the text and `T`'s `Deserialize`.
//!
//! The plan is an optimisation held to one rule: it accepts a value only if the compiled
//! `jsonschema` validator accepts it too. Whatever it is not sure of (a keyword it does not model, a
//! tag that is not the first key of its object, a number too large to compare exactly, a
//! violation) makes it give up, and the caller takes the full path (`Value`, validator, coercion,
//! located errors), which decides. Giving up costs the time spent so far; it never changes a result.
//!
//! - Modelled: `type`, `enum`, `const`, `minLength`/`maxLength`, `minimum`/`maximum` and their
//!   exclusive forms, `items`, `minItems`/`maxItems`, `uniqueItems` over scalars, `properties`,
//!   `required`, `additionalProperties`, `anyOf` of a schema and `null`, and the `oneOf` of an
//!   internally tagged enum (objects told apart by a `const` first property). `pattern` and `format`
//!   are checked by a small `jsonschema` validator of their own, so their semantics are the
//!   validator's. Annotations (`description`, `examples`, `x-...`) are ignored, as the validator does.
//! - A schema with any other keyword has no plan, and its values always take the full path.

mod reader;

use crate::validate::Validator;
use crate::Extract;
use reader::{At, Reader};
use serde::de::{self, DeserializeOwned, Visitor};
use serde_json::{Map, Number, Value};
use std::cell::Cell;
use std::cmp::Ordering;
use std::fmt;

/// What the deserializer reports when it gives up (never shown: the caller takes the full path).
const GIVE_UP: &str = "the value needs the full validation path";

/// The largest integer every `f64` comparison handles exactly.
const EXACT: u64 = 1 << 53;

/// A schema compiled for checking values while they are deserialized.
#[derive(Debug)]
pub(crate) struct Plan {
    root: Node,
    /// Whether the schema wants an object or an array (see `pipeline::wants_container`).
    wants_container: bool,
}

impl Plan {
    /// The plan of `schema`, or `None` when the schema uses something the plan does not model.
    pub(crate) fn compile(schema: &Value) -> Option<Plan> {
        Some(Plan {
            root: Node::compile(schema)?,
            wants_container: super::pipeline::wants_container(schema),
        })
    }

    /// Whether every value is an object that admits no key beyond its properties (a closed struct
    /// or a tagged union of closed variants).
    pub(crate) fn closed(&self) -> bool {
        match &self.root {
            Node::Typed(typed) => {
                typed.types == Types(Types::OBJECT)
                    && typed
                        .object
                        .as_ref()
                        .is_some_and(|o| matches!(o.additional, Additional::Denied))
            }
            Node::Tagged(tagged) => {
                !tagged.nullable
                    && tagged
                        .variants
                        .iter()
                        .all(|(_, o)| matches!(o.additional, Additional::Denied))
            }
            Node::Any | Node::OrNull(_) => false,
        }
    }

    /// Whether the schema wants an object or an array rather than a scalar.
    pub(crate) fn wants_container(&self) -> bool {
        self.wants_container
    }
}

/// `text` as a `T`, if it is one clean JSON value (that `plan`, when there is one, accepts); `None`
/// otherwise (the caller then takes the full path).
pub(crate) fn from_str<T: DeserializeOwned>(text: &str, plan: Option<&Plan>) -> Option<T> {
    let Some(plan) = plan else {
        return serde_json::from_str(text).ok();
    };
    let mut reader = Reader::new(text);
    let value = T::deserialize(At {
        r: &mut reader,
        check: Check::value(&plan.root),
    })
    .ok()?;
    reader.end().ok()?;
    Some(value)
}

/// The first JSON value of `text` (an object or an array: anything after it is left alone) as a
/// `T`, validated through the schema's plan when `validate` (else read as serde_json reads it),
/// with the byte where the value ends; `None` sends the text down the full path.
pub(crate) fn prefix_from_str<T: Extract>(text: &str, validate: bool) -> Option<(T, usize)> {
    let root = match validate {
        true => &T::schema().plan()?.root,
        false => &reader::ANY,
    };
    let mut reader = Reader::new(text);
    let value = T::deserialize(At {
        r: &mut reader,
        check: Check::value(root),
    })
    .ok()?;
    Some((value, reader.position()))
}

#[derive(Debug)]
enum Node {
    /// `{}` or `true`: anything.
    Any,
    Typed(Box<Typed>),
    /// `anyOf: [X, {"type": "null"}]`.
    OrNull(Box<Node>),
    Tagged(Box<Tagged>),
}

/// JSON types, as bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Types(u8);

impl Types {
    const NULL: u8 = 1;
    const BOOLEAN: u8 = 2;
    const INTEGER: u8 = 4;
    const NUMBER: u8 = 8;
    const STRING: u8 = 16;
    const ARRAY: u8 = 32;
    const OBJECT: u8 = 64;
    const ALL: Types = Types(127);

    fn named(name: &str) -> Option<u8> {
        Some(match name {
            "null" => Self::NULL,
            "boolean" => Self::BOOLEAN,
            "integer" => Self::INTEGER,
            "number" => Self::NUMBER,
            "string" => Self::STRING,
            "array" => Self::ARRAY,
            "object" => Self::OBJECT,
            _ => return None,
        })
    }

    #[inline]
    fn has(self, bits: u8) -> bool {
        self.0 & bits != 0
    }
}

#[derive(Debug)]
struct Typed {
    types: Types,
    /// `enum`, or `const` as a one-element list: scalars only.
    choices: Option<Vec<Value>>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    /// `pattern` and `format`, checked by the validator itself.
    text: Option<Validator>,
    minimum: Option<Num>,
    maximum: Option<Num>,
    exclusive_minimum: Option<Num>,
    exclusive_maximum: Option<Num>,
    array: Option<Items>,
    object: Option<Object>,
    /// Every string is accepted (the type allows strings and nothing constrains them).
    any_string: bool,
    /// Every number is accepted (the type allows numbers and nothing constrains them).
    any_number: bool,
    /// Every boolean is accepted.
    any_bool: bool,
    /// The integers accepted, when the type allows integers, nothing but integer bounds constrains
    /// them, and those bounds are integers: `[lo, hi]`.
    integers: Option<(i128, i128)>,
    /// The numbers accepted, when the type allows every number and nothing but bounds that an
    /// `f64` holds exactly constrains them.
    floats: Option<Floats>,
    /// `enum`/`const` when every choice is a string.
    strings: Option<Vec<(Key, Box<str>)>>,
}

/// Number bounds as `f64`s (unbounded sides are infinite).
#[derive(Debug, Clone, Copy)]
struct Floats {
    min: f64,
    max: f64,
    min_exclusive: bool,
    max_exclusive: bool,
}

impl Floats {
    #[inline]
    fn hold(self, f: f64) -> bool {
        let above = if self.min_exclusive {
            f > self.min
        } else {
            f >= self.min
        };
        let below = if self.max_exclusive {
            f < self.max
        } else {
            f <= self.max
        };
        above && below
    }
}

#[derive(Debug)]
struct Items {
    node: Node,
    min: Option<u64>,
    max: Option<u64>,
    unique: bool,
}

#[derive(Debug)]
struct Object {
    properties: Vec<(String, Node)>,
    /// The name of each property as a [`Key`], in the same order (compared without a loop).
    keys: Vec<Key>,
    /// Bit `i` set: property `i` is required.
    required: u64,
    additional: Additional,
}

#[derive(Debug)]
enum Additional {
    Allowed,
    Denied,
    Checked(Node),
}

impl Object {
    /// The index of property `name`, looked for at `hint` first (inline: keys mostly come in
    /// schema order).
    #[inline(always)]
    fn position(&self, name: &str, hint: usize) -> Option<usize> {
        let key = Key::of(name);
        if self.named(hint, key, name) {
            return Some(hint);
        }
        self.find(key, name)
    }

    #[inline(never)]
    fn find(&self, key: Key, name: &str) -> Option<usize> {
        (0..self.keys.len()).find(|&i| self.named(i, key, name))
    }

    /// Whether property `i` is `name` (of key `key`).
    #[inline(always)]
    fn named(&self, i: usize, key: Key, name: &str) -> bool {
        match (self.keys.get(i), self.properties.get(i)) {
            (Some(k), Some((p, _))) => key.is(*k, name, p),
            _ => false,
        }
    }
}

/// A string as its length and two words: for one of at most 16 bytes (object keys and enum values
/// mostly are) the words hold every byte, so equal keys mean equal strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Key {
    len: usize,
    words: (u64, u64),
}

impl Key {
    #[inline(always)]
    fn of(s: &str) -> Key {
        Key {
            len: s.len(),
            words: ends(s.as_bytes()),
        }
    }

    /// Whether `a` (of key `self`) is `b` (of key `other`): the keys settle it for short strings.
    #[inline(always)]
    fn is(self, other: Key, a: &str, b: &str) -> bool {
        self == other && (self.len <= 16 || a == b)
    }
}

/// The `oneOf` of an internally tagged enum.
#[derive(Debug)]
struct Tagged {
    tag: String,
    /// Each variant's tag value and object (whose properties include the tag).
    variants: Vec<(String, Object)>,
    nullable: bool,
}

/// Keywords that do not validate.
fn is_annotation(key: &str) -> bool {
    matches!(
        key,
        "description"
            | "title"
            | "examples"
            | "default"
            | "$comment"
            | "$schema"
            | "deprecated"
            | "readOnly"
            | "writeOnly"
    ) || key.starts_with("x-")
}

impl Node {
    fn compile(schema: &Value) -> Option<Node> {
        let map = match schema {
            Value::Bool(true) => return Some(Node::Any),
            Value::Object(map) => map,
            _ => return None,
        };
        let keywords: Vec<&str> = map
            .keys()
            .map(String::as_str)
            .filter(|k| !is_annotation(k))
            .collect();
        if keywords.is_empty() {
            return Some(Node::Any);
        }
        if let [only] = keywords.as_slice() {
            if let Some(branches) = map.get(*only).and_then(Value::as_array) {
                match *only {
                    "anyOf" => return or_null(branches).or_else(|| tagged(branches)),
                    "oneOf" => return tagged(branches),
                    _ => {}
                }
            }
        }
        Typed::compile(map).map(|typed| Node::Typed(Box::new(typed)))
    }

    /// Whether every value of this node is a scalar (so `uniqueItems` can compare hashes).
    fn is_scalar(&self) -> bool {
        match self {
            Node::Typed(typed) => !typed.types.has(Types::ARRAY | Types::OBJECT),
            Node::OrNull(inner) => inner.is_scalar(),
            Node::Any | Node::Tagged(_) => false,
        }
    }

    #[inline]
    fn accepts_null(&self) -> bool {
        match self {
            Node::Any | Node::OrNull(_) => true,
            Node::Typed(typed) => typed.types.has(Types::NULL) && typed.allows(&Value::Null),
            Node::Tagged(tagged) => tagged.nullable,
        }
    }

    /// The node non-null values are checked against.
    #[inline]
    fn present(&self) -> &Node {
        match self {
            Node::OrNull(inner) => inner.present(),
            node => node,
        }
    }

    #[inline]
    fn typed(&self) -> Option<&Typed> {
        match self.present() {
            Node::Typed(typed) => Some(typed),
            _ => None,
        }
    }
}

/// `anyOf: [X, {"type": "null"}]` in either order.
fn or_null(branches: &[Value]) -> Option<Node> {
    let is_null = |b: &Value| b.get("type").and_then(Value::as_str) == Some("null");
    match branches {
        [a, b] if is_null(b) && !is_null(a) => Some(Node::OrNull(Box::new(Node::compile(a)?))),
        [a, b] if is_null(a) && !is_null(b) => Some(Node::OrNull(Box::new(Node::compile(b)?))),
        _ => None,
    }
}

/// The branches of an internally tagged enum: closed objects whose first property is the same
/// key with a distinct string `const`, required; optionally one `{"type": "null"}` branch.
fn tagged(branches: &[Value]) -> Option<Node> {
    let mut tag: Option<&str> = None;
    let mut variants = Vec::new();
    let mut nullable = false;
    for branch in branches {
        if branch.get("type").and_then(Value::as_str) == Some("null")
            && branch.as_object().is_some_and(|m| m.len() == 1)
        {
            nullable = true;
            continue;
        }
        let (key, first) = branch.get("properties")?.as_object()?.iter().next()?;
        let value = first.get("const")?.as_str()?;
        if tag.is_some_and(|t| t != key) || variants.iter().any(|(v, _)| v == value) {
            return None;
        }
        tag = Some(key);
        let Node::Typed(typed) = Node::compile(branch)? else {
            return None;
        };
        let typed = *typed;
        let object = typed.object?;
        // The branch must be an object and nothing else, with its tag required.
        if typed.types != Types(Types::OBJECT) || object.required & 1 == 0 {
            return None;
        }
        variants.push((value.to_owned(), object));
    }
    Some(Node::Tagged(Box::new(Tagged {
        tag: tag?.to_owned(),
        variants,
        nullable,
    })))
}

fn uint(map: &Map<String, Value>, key: &str) -> Result<Option<u64>, ()> {
    match map.get(key) {
        None => Ok(None),
        Some(value) => value.as_u64().map(Some).ok_or(()),
    }
}

fn number(map: &Map<String, Value>, key: &str) -> Result<Option<Num>, ()> {
    match map.get(key) {
        None => Ok(None),
        Some(Value::Number(n)) => Num::of(n).map(Some).ok_or(()),
        Some(_) => Err(()),
    }
}

impl Typed {
    fn compile(map: &Map<String, Value>) -> Option<Typed> {
        const KNOWN: &[&str] = &[
            "type",
            "enum",
            "const",
            "pattern",
            "format",
            "minLength",
            "maxLength",
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "items",
            "minItems",
            "maxItems",
            "uniqueItems",
            "properties",
            "required",
            "additionalProperties",
        ];
        if map
            .keys()
            .any(|k| !is_annotation(k) && !KNOWN.contains(&k.as_str()))
        {
            return None;
        }
        let types = match map.get("type") {
            None => Types::ALL,
            Some(Value::String(name)) => Types(Types::named(name)?),
            Some(Value::Array(names)) => {
                let mut bits = 0;
                for name in names {
                    bits |= Types::named(name.as_str()?)?;
                }
                Types(bits)
            }
            Some(_) => return None,
        };
        let choices = match (map.get("enum"), map.get("const")) {
            (Some(_), Some(_)) => return None,
            (Some(Value::Array(values)), None) => Some(values.clone()),
            (Some(_), None) => return None,
            (None, Some(value)) => Some(vec![value.clone()]),
            (None, None) => None,
        };
        if choices
            .iter()
            .flatten()
            .any(|v| v.is_array() || v.is_object())
        {
            return None;
        }
        let text = if map.contains_key("pattern") || map.contains_key("format") {
            let mut leaf = Map::new();
            for key in ["pattern", "format"] {
                if let Some(value) = map.get(key) {
                    leaf.insert(key.to_owned(), value.clone());
                }
            }
            Some(Validator::new(&Value::Object(leaf)).ok()?)
        } else {
            None
        };
        let array = Self::items(map)?;
        let object = Self::object(map)?;
        let mut typed = Typed {
            types,
            choices,
            min_length: uint(map, "minLength").ok()?,
            max_length: uint(map, "maxLength").ok()?,
            text,
            minimum: number(map, "minimum").ok()?,
            maximum: number(map, "maximum").ok()?,
            exclusive_minimum: number(map, "exclusiveMinimum").ok()?,
            exclusive_maximum: number(map, "exclusiveMaximum").ok()?,
            array,
            object,
            any_string: false,
            any_number: false,
            any_bool: false,
            integers: None,
            floats: None,
            strings: None,
        };
        let unchosen = typed.choices.is_none();
        typed.any_string = unchosen
            && typed.types.has(Types::STRING)
            && typed.min_length.is_none()
            && typed.max_length.is_none()
            && typed.text.is_none();
        typed.any_number = unchosen
            && typed.types.has(Types::NUMBER)
            && typed.minimum.is_none()
            && typed.maximum.is_none()
            && typed.exclusive_minimum.is_none()
            && typed.exclusive_maximum.is_none();
        typed.any_bool = unchosen && typed.types.has(Types::BOOLEAN);
        typed.integers = typed.integer_range();
        typed.floats = typed.float_range();
        typed.strings = typed.choices.as_ref().and_then(|choices| {
            choices
                .iter()
                .map(|c| c.as_str().map(|s| (Key::of(s), Box::from(s))))
                .collect::<Option<Vec<_>>>()
        });
        Some(typed)
    }

    /// See [`Typed::floats`].
    fn float_range(&self) -> Option<Floats> {
        if self.choices.is_some() || !self.types.has(Types::NUMBER) {
            return None;
        }
        let side = |inclusive: Option<Num>, exclusive: Option<Num>, unbounded: f64| match (
            inclusive, exclusive,
        ) {
            (None, None) => Some((unbounded, false)),
            (Some(n), None) => Some((n.exact()?, false)),
            (None, Some(n)) => Some((n.exact()?, true)),
            (Some(_), Some(_)) => None,
        };
        let (min, min_exclusive) = side(self.minimum, self.exclusive_minimum, f64::NEG_INFINITY)?;
        let (max, max_exclusive) = side(self.maximum, self.exclusive_maximum, f64::INFINITY)?;
        Some(Floats {
            min,
            max,
            min_exclusive,
            max_exclusive,
        })
    }

    /// See [`Typed::integers`].
    fn integer_range(&self) -> Option<(i128, i128)> {
        if self.choices.is_some() || !self.types.has(Types::INTEGER | Types::NUMBER) {
            return None;
        }
        let int = |n: Option<Num>, unbounded: i128| match n {
            None => Some(unbounded),
            Some(Num::U(u)) => Some(i128::from(u)),
            Some(Num::I(i)) => Some(i128::from(i)),
            Some(Num::F(_)) => None,
        };
        let exclusive = |n: Option<Num>, unbounded: i128, step: fn(i128) -> i128| match n {
            None => Some(unbounded),
            bound => int(bound, unbounded).map(step),
        };
        let lo =
            int(self.minimum, i128::MIN)?.max(exclusive(self.exclusive_minimum, i128::MIN, |b| {
                b.saturating_add(1)
            })?);
        let hi =
            int(self.maximum, i128::MAX)?.min(exclusive(self.exclusive_maximum, i128::MAX, |b| {
                b.saturating_sub(1)
            })?);
        Some((lo, hi))
    }

    /// Whether every integer in `[lo, hi]` is accepted.
    #[inline]
    fn holds(&self, lo: i128, hi: i128) -> bool {
        self.integers
            .is_some_and(|(min, max)| min <= lo && hi <= max)
    }

    /// The array keywords; `Some(None)` when there are none, `None` when they cannot be planned.
    fn items(map: &Map<String, Value>) -> Option<Option<Items>> {
        let unique = match map.get("uniqueItems") {
            None | Some(Value::Bool(false)) => false,
            Some(Value::Bool(true)) => true,
            Some(_) => return None,
        };
        let min = uint(map, "minItems").ok()?;
        let max = uint(map, "maxItems").ok()?;
        let node = match map.get("items") {
            Some(items) => Node::compile(items)?,
            None if min.is_none() && max.is_none() && !unique => return Some(None),
            None => Node::Any,
        };
        if unique && !node.is_scalar() {
            return None;
        }
        Some(Some(Items {
            node,
            min,
            max,
            unique,
        }))
    }

    /// The object keywords; `Some(None)` when there are none, `None` when they cannot be planned.
    fn object(map: &Map<String, Value>) -> Option<Option<Object>> {
        if !["properties", "required", "additionalProperties"]
            .iter()
            .any(|k| map.contains_key(*k))
        {
            return Some(None);
        }
        let mut properties = Vec::new();
        if let Some(declared) = map.get("properties") {
            for (name, schema) in declared.as_object()? {
                properties.push((name.clone(), Node::compile(schema)?));
            }
        }
        if properties.len() > 64 {
            return None;
        }
        let mut required = 0u64;
        for name in map
            .get("required")
            .map_or(Some(&[][..]), |r| r.as_array().map(Vec::as_slice))?
        {
            let index = properties
                .iter()
                .position(|(p, _)| Some(p.as_str()) == name.as_str())?;
            required |= 1 << index;
        }
        let additional = match map.get("additionalProperties") {
            None | Some(Value::Bool(true)) => Additional::Allowed,
            Some(Value::Bool(false)) => Additional::Denied,
            Some(schema) => Additional::Checked(Node::compile(schema)?),
        };
        Some(Some(Object {
            keys: properties.iter().map(|(name, _)| Key::of(name)).collect(),
            properties,
            required,
            additional,
        }))
    }

    /// Whether `value` is one of the choices (or there are none).
    #[inline]
    fn allows(&self, value: &Value) -> bool {
        self.choices
            .as_ref()
            .is_none_or(|choices| choices.iter().any(|choice| same_value(choice, value)))
    }

    #[inline]
    fn accepts_bool(&self, b: bool) -> bool {
        self.types.has(Types::BOOLEAN) && self.allows(&Value::Bool(b))
    }

    #[inline]
    fn accepts_number(&self, n: Num) -> bool {
        let is_integer = match n {
            Num::U(_) | Num::I(_) => true,
            Num::F(f) => f.is_finite() && f.fract() == 0.0,
        };
        let typed = self.types.has(Types::NUMBER) || (is_integer && self.types.has(Types::INTEGER));
        let at_least = |b: &Num| matches!(n.compare(*b), Some(Ordering::Greater | Ordering::Equal));
        let at_most = |b: &Num| matches!(n.compare(*b), Some(Ordering::Less | Ordering::Equal));
        typed
            && self.minimum.as_ref().is_none_or(at_least)
            && self.maximum.as_ref().is_none_or(at_most)
            && self
                .exclusive_minimum
                .is_none_or(|b| n.compare(b) == Some(Ordering::Greater))
            && self
                .exclusive_maximum
                .is_none_or(|b| n.compare(b) == Some(Ordering::Less))
            && self.choices.as_ref().is_none_or(|choices| {
                choices
                    .iter()
                    .any(|c| matches!(c, Value::Number(c) if Num::of(c).and_then(|c| n.compare(c)) == Some(Ordering::Equal)))
            })
    }

    fn accepts_str(&self, s: &str) -> bool {
        if !self.types.has(Types::STRING) {
            return false;
        }
        if self.min_length.is_some() || self.max_length.is_some() {
            // Lengths count Unicode scalar values, as the validator does; bytes bound them.
            let bytes = s.len() as u64;
            let short_enough = self
                .max_length
                .is_none_or(|max| bytes <= max || (s.chars().count() as u64) <= max);
            let long_enough = self.min_length.is_none_or(|min| {
                bytes >= min && (bytes / 4 >= min || (s.chars().count() as u64) >= min)
            });
            if !short_enough || !long_enough {
                return false;
            }
        }
        let chosen = match (&self.strings, &self.choices) {
            (Some(strings), _) => {
                let key = Key::of(s);
                strings.iter().any(|(k, c)| key.is(*k, c, s))
            }
            (None, choices) => choices
                .as_ref()
                .is_none_or(|choices| choices.iter().any(|c| c.as_str() == Some(s))),
        };
        chosen
            && self
                .text
                .as_ref()
                .is_none_or(|text| text.is_valid(&Value::String(s.to_owned())))
    }
}

/// Equality of scalars as the validator sees it (numbers by value).
fn same_value(choice: &Value, value: &Value) -> bool {
    match (choice, value) {
        (Value::Number(a), Value::Number(b)) => match (Num::of(a), Num::of(b)) {
            (Some(a), Some(b)) => b.compare(a) == Some(Ordering::Equal),
            _ => false,
        },
        (a, b) => a == b,
    }
}

/// A number as serde_json hands it over.
#[derive(Debug, Clone, Copy)]
enum Num {
    U(u64),
    I(i64),
    F(f64),
}

impl Num {
    #[inline]
    fn of(n: &Number) -> Option<Num> {
        n.as_u64()
            .map(Num::U)
            .or_else(|| n.as_i64().map(Num::I))
            .or_else(|| n.as_f64().map(Num::F))
    }

    /// How `self` compares with `bound`, when that can be told exactly.
    #[inline]
    fn compare(self, bound: Num) -> Option<Ordering> {
        match (self, bound) {
            (Num::U(a), Num::U(b)) => Some(a.cmp(&b)),
            (Num::I(a), Num::I(b)) => Some(a.cmp(&b)),
            // serde_json hands over a non-negative integer as U, a negative one as I.
            (Num::U(_), Num::I(_)) => Some(Ordering::Greater),
            (Num::I(_), Num::U(_)) => Some(Ordering::Less),
            (a, b) => a.exact()?.partial_cmp(&b.exact()?),
        }
    }

    /// As an `f64`, when that loses nothing.
    #[inline]
    fn exact(self) -> Option<f64> {
        match self {
            Num::U(u) if u <= EXACT => Some(u as f64),
            Num::I(i) if i.unsigned_abs() <= EXACT => Some(i as f64),
            Num::F(f) if f.is_finite() => Some(f),
            _ => None,
        }
    }
}

/// What a slot of a map learned from the key just read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Unset,
    /// The key names property `i` of the current object.
    Property(usize),
    /// Not a property; `additionalProperties` is a schema.
    Additional,
    /// Not a property; anything goes.
    Unchecked,
    /// The discriminator of a tagged union.
    Tag,
}

/// Where the keys of the object being read are looked up.
#[derive(Clone, Copy)]
enum Keys<'a> {
    /// The object, and the property expected next (keys usually come in schema order).
    Object(&'a Object, usize),
    /// A tagged union before its tag: the first key must be the tag.
    Tag(&'a str),
}

/// What a wrapped deserializer checks.
#[derive(Clone, Copy)]
enum Check<'a> {
    /// A value against a node; a scalar leaves its hash in `hash` (for `uniqueItems`).
    Value {
        node: &'a Node,
        hash: Option<&'a Cell<Option<u64>>>,
    },
    /// The discriminator of a tagged union: the variant it names goes to `variant`.
    Tag {
        tagged: &'a Tagged,
        variant: &'a Cell<Option<usize>>,
    },
}

/// What a typed `deserialize_*` method guarantees about the JSON it accepts.
#[derive(Clone, Copy)]
enum Leaf {
    Bool,
    /// An integer within these bounds.
    Int(i128, i128),
    Number,
    Str,
}

impl<'a> Check<'a> {
    /// Whether every value `leaf` lets through is valid here, so no check is needed.
    #[inline]
    fn trusts(self, leaf: Leaf) -> bool {
        let Check::Value { node, hash: None } = self else {
            return false;
        };
        match node.present() {
            Node::Any => true,
            Node::Typed(typed) => match leaf {
                Leaf::Bool => typed.any_bool,
                Leaf::Int(lo, hi) => typed.holds(lo, hi),
                Leaf::Number => typed.any_number,
                Leaf::Str => typed.any_string,
            },
            _ => false,
        }
    }

    #[inline]
    fn value(node: &'a Node) -> Self {
        Check::Value { node, hash: None }
    }

    /// Whether the check is a no-op (the deserializer is forwarded untouched).
    #[inline]
    fn is_any(self) -> bool {
        matches!(
            self,
            Check::Value {
                node: Node::Any,
                ..
            }
        )
    }

    #[inline]
    fn scalar<E: de::Error>(self, accepted: bool, hash: impl FnOnce() -> u64) -> Result<(), E> {
        match self {
            Check::Value { hash: slot, .. } if accepted => {
                if let Some(slot) = slot {
                    slot.set(Some(hash()));
                }
                Ok(())
            }
            _ => Err(E::custom(GIVE_UP)),
        }
    }

    #[inline(always)]
    fn string<E: de::Error>(self, s: &str) -> Result<(), E> {
        match self {
            // The common case, kept small enough to inline: a string with no constraint.
            Check::Value {
                node: Node::Typed(typed),
                hash,
            } if typed.any_string => {
                if let Some(slot) = hash {
                    slot.set(Some(hash_of(3, s.as_bytes())));
                }
                Ok(())
            }
            _ => self.string_slow(s),
        }
    }

    fn string_slow<E: de::Error>(self, s: &str) -> Result<(), E> {
        match self {
            Check::Value { node, .. } => {
                let accepted = node.typed().is_some_and(|t| t.accepts_str(s));
                self.scalar(accepted, || hash_of(3, s.as_bytes()))
            }
            Check::Tag { tagged, variant } => {
                let index = tagged
                    .variants
                    .iter()
                    .position(|(v, _)| v == s)
                    .ok_or_else(|| E::custom(GIVE_UP))?;
                variant.set(Some(index));
                Ok(())
            }
        }
    }

    #[inline]
    fn number<E: de::Error>(self, n: Num) -> Result<(), E> {
        match self {
            Check::Value {
                node: Node::Typed(typed),
                hash: None,
            } => match (typed.any_number, typed.floats, n.exact()) {
                (true, _, _) => Ok(()),
                (false, Some(floats), Some(f)) if floats.hold(f) => Ok(()),
                _ => self.number_slow(n),
            },
            _ => self.number_slow(n),
        }
    }

    fn number_slow<E: de::Error>(self, n: Num) -> Result<(), E> {
        let accepted = match self {
            Check::Value { node, .. } => node.typed().is_some_and(|t| t.accepts_number(n)),
            _ => false,
        };
        // Equal numbers hash alike whatever their form; inexact ones give up on uniqueness.
        let key = n
            .exact()
            .map(|f| if f == 0.0 { 0.0f64 } else { f }.to_bits());
        match (accepted, key) {
            (true, None) if matches!(self, Check::Value { hash: Some(_), .. }) => {
                Err(E::custom(GIVE_UP))
            }
            _ => self.scalar(accepted, || {
                hash_of(2, &key.unwrap_or_default().to_le_bytes())
            }),
        }
    }

    #[inline]
    fn boolean<E: de::Error>(self, b: bool) -> Result<(), E> {
        let accepted = match self {
            Check::Value { node, .. } => node.typed().is_some_and(|t| t.accepts_bool(b)),
            _ => false,
        };
        self.scalar(accepted, || hash_of(1, &[u8::from(b)]))
    }

    #[inline]
    fn null<E: de::Error>(self) -> Result<(), E> {
        let accepted = match self {
            Check::Value { node, .. } => node.accepts_null(),
            _ => false,
        };
        self.scalar(accepted, || hash_of(0, &[]))
    }
}

/// A scalar's hash for `uniqueItems`: a multiply-rotate hash over 8-byte words (values are short,
/// and a collision only sends the value down the full path). Equal bytes hash alike.
#[inline]
fn hash_of(kind: u8, bytes: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mix = |h: u64, word: u64| (h.rotate_left(5) ^ word).wrapping_mul(K);
    let hash = mix(u64::from(kind), bytes.len() as u64);
    let (first, last) = ends(bytes);
    if bytes.len() <= 16 {
        // The first and last words cover every byte.
        return mix(mix(hash, first), last);
    }
    let mut words = bytes.chunks_exact(8);
    let hash = words.by_ref().fold(hash, |h, word| {
        mix(h, word.first_chunk().map_or(0, |w| u64::from_le_bytes(*w)))
    });
    mix(hash, last)
}

/// Two words that, with the length, determine `bytes` when it is at most 16 bytes long: its first
/// and last eight bytes (overlapping below 16), or four, or its bytes packed. No copy through
/// memory, so this stays in registers.
#[inline(always)]
fn ends(bytes: &[u8]) -> (u64, u64) {
    if let (Some(first), Some(last)) = (bytes.first_chunk::<8>(), bytes.last_chunk::<8>()) {
        return (u64::from_le_bytes(*first), u64::from_le_bytes(*last));
    }
    if let (Some(first), Some(last)) = (bytes.first_chunk::<4>(), bytes.last_chunk::<4>()) {
        return (
            u64::from(u32::from_le_bytes(*first)),
            u64::from(u32::from_le_bytes(*last)),
        );
    }
    let packed = bytes
        .iter()
        .take(3)
        .enumerate()
        .fold(0u64, |word, (i, b)| word | (u64::from(*b) << (8 * i)));
    (packed, 0)
}

/// Which property key `s` names, into `slot`; an error (give up) for a key the object forbids.
#[inline(always)]
fn key<E: de::Error>(keys: Keys<'_>, slot: &Cell<Slot>, s: &str) -> Result<(), E> {
    let found = match keys {
        Keys::Object(object, hint) => match object.position(s, hint) {
            Some(index) => Slot::Property(index),
            None => match object.additional {
                Additional::Allowed => Slot::Unchecked,
                Additional::Checked(_) => Slot::Additional,
                Additional::Denied => return Err(E::custom(GIVE_UP)),
            },
        },
        Keys::Tag(tag) if tag == s => Slot::Tag,
        Keys::Tag(_) => return Err(E::custom(GIVE_UP)),
    };
    slot.set(found);
    Ok(())
}

/// A visitor that checks the number it is given before passing it on (serde_json reads numbers).
struct Checked<'a, V> {
    visitor: V,
    check: Check<'a>,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Checked<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.visitor.expecting(f)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<V::Value, E> {
        self.check.number(Num::I(v))?;
        self.visitor.visit_i64(v)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<V::Value, E> {
        self.check.number(Num::U(v))?;
        self.visitor.visit_u64(v)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<V::Value, E> {
        self.check.number(Num::F(v))?;
        self.visitor.visit_f64(v)
    }

    fn visit_i128<E: de::Error>(self, _: i128) -> Result<V::Value, E> {
        Err(E::custom(GIVE_UP))
    }

    fn visit_u128<E: de::Error>(self, _: u128) -> Result<V::Value, E> {
        Err(E::custom(GIVE_UP))
    }
}

#[derive(Default)]
struct SeqState {
    count: Cell<u64>,
    done: Cell<bool>,
    hash: Cell<Option<u64>>,
}

/// The hashes of the elements seen so far: the first few inline, the rest in a set (so a long
/// array is checked in linear time).
#[derive(Default)]
struct Hashes {
    inline: [u64; 8],
    len: usize,
    more: std::collections::HashSet<u64>,
}

impl Hashes {
    /// Adds `hash`; `false` if it was there already.
    #[inline]
    fn insert(&mut self, hash: u64) -> bool {
        let inline = self.inline.get(..self.len).unwrap_or_default();
        if inline.contains(&hash) {
            return false;
        }
        match self.inline.get_mut(self.len) {
            Some(slot) => {
                *slot = hash;
                self.len += 1;
                true
            }
            None => self.more.insert(hash),
        }
    }
}

#[derive(Clone, Copy)]
enum Shape<'a> {
    Object(&'a Object),
    Tagged(&'a Tagged),
    /// An object nothing constrains.
    Open,
}

struct MapState<'s> {
    /// Bit `i`: property `i` of the object was present.
    seen: Cell<u64>,
    done: Cell<bool>,
    /// The object whose properties the keys name: the object itself, or a tagged union's variant
    /// once its tag is read.
    object: Cell<Option<&'s Object>>,
    /// The variant a tagged union's tag chose.
    variant: Cell<Option<usize>>,
    /// The property expected next.
    next: Cell<usize>,
    /// What the key just read names (`Unset` between entries).
    slot: Cell<Slot>,
}

impl<'s> MapState<'s> {
    fn new(object: Option<&'s Object>) -> Self {
        MapState {
            seen: Cell::new(0),
            done: Cell::new(false),
            object: Cell::new(object),
            variant: Cell::new(None),
            next: Cell::new(0),
            slot: Cell::new(Slot::Unset),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;
    use std::collections::BTreeMap;

    /// The plan accepts exactly when it deserializes and the validator accepts (never more).
    fn agree<T: DeserializeOwned>(schema: &Value, text: &str) -> bool {
        let plan = Plan::compile(schema).expect("a plannable schema");
        let validator = Validator::new(schema).unwrap();
        let fast = from_str::<T>(text, Some(&plan)).is_some();
        let value: Option<Value> = serde_json::from_str(text).ok();
        let slow = value.as_ref().is_some_and(|v| validator.is_valid(v))
            && serde_json::from_str::<T>(text).is_ok();
        assert!(
            !fast || slow,
            "the plan accepted what the validator rejects: {text}"
        );
        fast
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Person {
        name: String,
        age: Option<u8>,
        tags: Vec<String>,
        mood: Mood,
        score: f64,
    }

    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "lowercase")]
    enum Mood {
        Up,
        Down,
    }

    fn person() -> Value {
        json!({
            "type": "object",
            "description": "A person.",
            "properties": {
                "name": {"type": "string", "minLength": 2, "maxLength": 5, "pattern": "^[a-z]+$"},
                "age": {"type": ["integer", "null"], "minimum": 0, "maximum": 150},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2, "uniqueItems": true},
                "mood": {"type": "string", "enum": ["up", "down"]},
                "score": {"type": "number", "minimum": 0, "exclusiveMaximum": 1}
            },
            "required": ["name", "tags", "mood", "score"],
            "additionalProperties": false
        })
    }

    #[test]
    fn accepts_what_is_valid() {
        let schema = person();
        for text in [
            r#"{"name":"ann","age":30,"tags":["a","b"],"mood":"up","score":0.5}"#,
            r#"{"name":"bob","age":null,"tags":[],"mood":"down","score":0}"#,
            r#"{"tags":[],"mood":"down","score":0.99,"name":"éé"}"#,
        ] {
            let accepted = if text.contains('é') {
                // "éé" is 2 characters but 4 bytes, and fails the pattern: rejected either way.
                !agree::<Person>(&schema, text)
            } else {
                agree::<Person>(&schema, text)
            };
            assert!(accepted, "{text}");
        }
    }

    #[test]
    fn gives_up_on_every_kind_of_violation() {
        let schema = person();
        for text in [
            r#"{"name":"a","tags":[],"mood":"up","score":0.5}"#,
            r#"{"name":"abcdef","tags":[],"mood":"up","score":0.5}"#,
            r#"{"name":"AB","tags":[],"mood":"up","score":0.5}"#,
            r#"{"name":"ab","age":151,"tags":[],"mood":"up","score":0.5}"#,
            r#"{"name":"ab","tags":["a","a"],"mood":"up","score":0.5}"#,
            r#"{"name":"ab","tags":["a","b","c"],"mood":"up","score":0.5}"#,
            r#"{"name":"ab","tags":[],"mood":"sideways","score":0.5}"#,
            r#"{"name":"ab","tags":[],"mood":"up","score":1}"#,
            r#"{"name":"ab","tags":[],"mood":"up","score":-0.1}"#,
            r#"{"name":"ab","tags":[],"mood":"up","score":0.5,"extra":1}"#,
            r#"{"name":"ab","tags":[],"mood":"up"}"#,
            r#"{"name":"ab","tags":[],"mood":"up","score":0.5} trailing"#,
            r#"{"name":"ab","tags":[],"mood":{"up":null},"score":0.5}"#,
        ] {
            assert!(!agree::<Person>(&schema, text), "{text}");
        }
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(tag = "type", rename_all = "lowercase")]
    enum Fact {
        Definition { entity: String },
        Relation { subject: String, weight: u8 },
        Nothing,
    }

    fn fact() -> Value {
        let closed = |properties: Value, required: Value| {
            json!({"type": "object", "properties": properties, "required": required,
                   "additionalProperties": false})
        };
        json!({"oneOf": [
            closed(json!({"type": {"const": "definition"}, "entity": {"type": "string"}}), json!(["type", "entity"])),
            closed(json!({"type": {"const": "relation"}, "subject": {"type": "string"},
                          "weight": {"type": "integer", "minimum": 0, "maximum": 9}}),
                   json!(["type", "subject", "weight"])),
            closed(json!({"type": {"const": "nothing"}}), json!(["type"])),
        ]})
    }

    #[test]
    fn tagged_unions_are_checked_by_the_variant_their_first_key_names() {
        let schema = fact();
        let plan = Plan::compile(&schema).unwrap();
        assert_eq!(
            from_str::<Fact>(
                r#"{"type":"relation","subject":"a","weight":3}"#,
                Some(&plan)
            ),
            Some(Fact::Relation {
                subject: "a".into(),
                weight: 3
            })
        );
        assert!(agree::<Fact>(&schema, r#"{"type":"nothing"}"#));
        assert!(agree::<Fact>(
            &schema,
            r#"{"type":"definition","entity":"x"}"#
        ));
        for text in [
            r#"{"type":"relation","subject":"a","weight":10}"#,
            r#"{"type":"definition","entity":"x","weight":1}"#,
            r#"{"type":"other"}"#,
            r#"{"entity":"x","type":"definition"}"#,
            r#"{"type":"definition"}"#,
        ] {
            assert!(!agree::<Fact>(&schema, text), "{text}");
        }
    }

    #[test]
    fn maps_options_and_any_values() {
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct Scores {
            scores: BTreeMap<String, f64>,
            extra: Value,
            inner: Option<Box<Scores>>,
        }
        let leaf = json!({"type": "object",
            "properties": {"scores": {"type": "object", "additionalProperties": {"type": "number", "maximum": 1}},
                           "extra": {}, "inner": {"type": "null"}},
            "required": ["scores", "extra"], "additionalProperties": false});
        let schema = json!({"type": "object",
            "properties": {"scores": {"type": "object", "additionalProperties": {"type": "number", "maximum": 1}},
                           "extra": {}, "inner": {"anyOf": [leaf, {"type": "null"}]}},
            "required": ["scores", "extra"], "additionalProperties": false});
        assert!(agree::<Scores>(
            &schema,
            r#"{"scores":{"a":0.5,"b":1},"extra":[1,{"x":null}],"inner":{"scores":{},"extra":null}}"#
        ));
        assert!(agree::<Scores>(
            &schema,
            r#"{"scores":{},"extra":"x","inner":null}"#
        ));
        assert!(!agree::<Scores>(&schema, r#"{"scores":{"a":2},"extra":1}"#));
        assert!(!agree::<Scores>(
            &schema,
            r#"{"scores":{},"extra":1,"inner":{"scores":{"a":1.5},"extra":1}}"#
        ));
    }

    #[test]
    fn numbers_compare_exactly_or_give_up() {
        let schema = json!({"type": "integer", "minimum": -5, "maximum": 18446744073709551615u64});
        assert!(agree::<u64>(&schema, "18446744073709551615"));
        assert!(agree::<i64>(&schema, "-5"));
        assert!(!agree::<i64>(&schema, "-6"));
        let float_bound = json!({"type": "number", "maximum": 0.5});
        assert!(agree::<f64>(&float_bound, "0.5"));
        assert!(!agree::<f64>(&float_bound, "0.50001"));
        // Too large to compare with a float bound exactly: the full path decides.
        assert!(!agree::<u64>(&float_bound, "18446744073709551615"));
        let choices = json!({"enum": [1, 2.5, "a", null, true]});
        assert!(agree::<f64>(&choices, "1.0"));
        assert!(agree::<f64>(&choices, "2.5"));
        assert!(agree::<Option<String>>(&choices, "\"a\""));
        assert!(agree::<Option<u8>>(&choices, "null"));
        assert!(agree::<bool>(&choices, "true"));
        assert!(!agree::<bool>(&choices, "false"));
    }

    /// The `f64` fast path of number bounds decides as the validator does, at and around every
    /// kind of bound, for floats and for integers.
    #[test]
    fn float_bounds_agree_with_the_validator_at_their_edges() {
        let schemas = [
            json!({"type": "number", "minimum": 0, "maximum": 1}),
            json!({"type": "number", "exclusiveMinimum": -0.5, "exclusiveMaximum": 2.25}),
            json!({"type": "number", "minimum": 0.1, "exclusiveMaximum": 3}),
            json!({"type": ["number", "null"], "maximum": 9007199254740992u64}),
            json!({"type": "number", "minimum": -1e300}),
        ];
        let texts = [
            "0",
            "1",
            "-0",
            "-0.0",
            "0.0",
            "1.0",
            "1.0000000000000002",
            "-1e-300",
            "0.1",
            "0.09999999999999999",
            "-0.5",
            "-0.49999999999999994",
            "2.25",
            "2.2499999999999996",
            "3",
            "2.9999999999999996",
            "9007199254740992",
            "9007199254740993",
            "9007199254740994",
            "-1e300",
            "-1.0000000000000001e300",
            "1e308",
            "-9223372036854775808",
            "18446744073709551615",
        ];
        for schema in &schemas {
            let plan = Plan::compile(schema).expect("a plannable schema");
            let validator = Validator::new(schema).unwrap();
            for text in texts {
                let Ok(value) = serde_json::from_str::<Value>(text) else {
                    continue;
                };
                // Read as `Value` so that every number reaches the check in the form serde_json
                // gives it (u64, i64 or f64).
                let fast = from_str::<Value>(text, Some(&plan)).is_some();
                if fast {
                    assert!(validator.is_valid(&value), "{schema} accepted {text}");
                }
                let exact = match Num::of(value.as_number().unwrap()) {
                    Some(n) => n.exact().is_some(),
                    None => false,
                };
                if exact {
                    assert_eq!(fast, validator.is_valid(&value), "{schema} on {text}");
                }
            }
        }
    }

    /// Keys tell strings apart exactly as `==` does, and `hash_of` hashes equal bytes alike and
    /// tells every one-byte change of a short value apart (so `uniqueItems` rarely gives up).
    #[test]
    fn keys_and_hashes() {
        let base: String = (0..40u8).map(|i| char::from(b'a' + i % 26)).collect();
        let is = |a: &str, b: &str| Key::of(a).is(Key::of(b), a, b);
        for len in 0..=base.len() {
            let a = &base[..len];
            assert!(is(a, a));
            assert!(is(a, &String::from(a)));
            assert_eq!(
                hash_of(3, a.as_bytes()),
                hash_of(3, a.to_owned().as_bytes())
            );
            if len > 0 {
                assert!(!is(a, &base[..len - 1]));
            }
            for at in 0..len {
                let mut b = a.to_owned().into_bytes();
                b[at] ^= 0x20;
                let b = String::from_utf8(b).unwrap();
                assert!(!is(a, &b), "{len} {at}");
                if len <= 16 {
                    assert_ne!(
                        hash_of(3, a.as_bytes()),
                        hash_of(3, b.as_bytes()),
                        "{len} {at}"
                    );
                }
            }
        }
        assert!(!is("a", "a\0"));
        assert_ne!(hash_of(3, b"a"), hash_of(3, b"a\0"));
        assert_ne!(hash_of(3, b""), hash_of(0, b""));
    }

    /// Uniqueness holds past the inline hashes: duplicates are caught wherever they are.
    #[test]
    fn long_arrays_are_checked_for_duplicates() {
        let schema = json!({"type": "array", "items": {"type": "integer"}, "uniqueItems": true});
        let distinct: Vec<u32> = (0..40).collect();
        let text = serde_json::to_string(&distinct).unwrap();
        assert!(agree::<Vec<u32>>(&schema, &text));
        for (first, second) in [(0, 1), (3, 20), (12, 30), (38, 39)] {
            let mut repeated = distinct.clone();
            repeated[second] = repeated[first];
            let text = serde_json::to_string(&repeated).unwrap();
            assert!(!agree::<Vec<u32>>(&schema, &text), "{text}");
        }
    }

    #[test]
    fn unplannable_schemas_have_no_plan() {
        for schema in [
            json!({"$ref": "#/x"}),
            json!({"type": "number", "multipleOf": 2}),
            json!({"oneOf": [{"type": "string"}, {"type": "integer"}]}),
            json!({"type": "array", "items": {"type": "object"}, "uniqueItems": true}),
            json!({"enum": [[1]]}),
            json!(false),
        ] {
            assert!(Plan::compile(&schema).is_none(), "{schema}");
        }
        assert!(Plan::compile(&json!({"description": "anything", "x-aliases": {}})).is_some());
    }

    #[test]
    fn formats_are_the_validators() {
        let schema = json!({"type": "string", "format": "date"});
        assert!(agree::<String>(&schema, "\"2026-11-22\""));
        assert!(!agree::<String>(&schema, "\"2026-13-40\""));
    }
}
