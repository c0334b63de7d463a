//! A schema compiled for checking values while serde deserializes them (see `parse::typed` for the
//! checking): built once per [`SchemaSet`](super::SchemaSet), next to the schema it comes from.
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
//! - A schema with any other keyword has no plan, and its values always take the full path. So has
//!   one with `$ref` (a recursive type's schema): references are not followed here.

use crate::validate::Validator;
use serde_json::{Map, Number, Value};
use std::cmp::Ordering;

/// The largest integer every `f64` comparison handles exactly.
pub(crate) const EXACT: u64 = 1 << 53;

/// A schema compiled for checking values while they are deserialized.
#[derive(Debug)]
pub(crate) struct Plan {
    pub(crate) root: Node,
}

impl Plan {
    /// The plan of `schema`, or `None` when the schema uses something the plan does not model.
    pub(crate) fn compile(schema: &Value) -> Option<Plan> {
        Some(Plan {
            root: Node::compile(schema)?,
        })
    }

    /// Whether every value is an object that admits no key beyond its properties (a closed struct
    /// or a tagged union of closed variants).
    #[inline]
    pub(crate) fn closed(&self) -> bool {
        match &self.root {
            Node::Keywords(typed) => {
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
}

#[derive(Debug)]
pub(crate) enum Node {
    /// `{}` or `true`: anything.
    Any,
    /// A `type` and the keywords that constrain it.
    Keywords(Box<Keywords>),
    /// `anyOf: [X, {"type": "null"}]`.
    OrNull(Box<Node>),
    Tagged(Box<Tagged>),
}

/// JSON types, as bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Types(pub(crate) u8);

impl Types {
    pub(crate) const NULL: u8 = 1;
    pub(crate) const BOOLEAN: u8 = 2;
    pub(crate) const INTEGER: u8 = 4;
    pub(crate) const NUMBER: u8 = 8;
    pub(crate) const STRING: u8 = 16;
    pub(crate) const ARRAY: u8 = 32;
    pub(crate) const OBJECT: u8 = 64;
    pub(crate) const ALL: Types = Types(127);

    #[inline]
    pub(crate) fn named(name: &str) -> Option<u8> {
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
    pub(crate) fn has(self, bits: u8) -> bool {
        self.0 & bits != 0
    }
}

#[derive(Debug)]
pub(crate) struct Keywords {
    pub(crate) types: Types,
    /// `enum`, or `const` as a one-element list: scalars only.
    pub(crate) choices: Option<Vec<Value>>,
    pub(crate) min_length: Option<u64>,
    pub(crate) max_length: Option<u64>,
    /// `pattern` and `format`, checked by the validator itself.
    pub(crate) text: Option<Validator>,
    pub(crate) minimum: Option<Num>,
    pub(crate) maximum: Option<Num>,
    pub(crate) exclusive_minimum: Option<Num>,
    pub(crate) exclusive_maximum: Option<Num>,
    pub(crate) array: Option<Items>,
    pub(crate) object: Option<Object>,
    /// Every string is accepted (the type allows strings and nothing constrains them).
    pub(crate) any_string: bool,
    /// Every number is accepted (the type allows numbers and nothing constrains them).
    pub(crate) any_number: bool,
    /// Every boolean is accepted.
    pub(crate) any_bool: bool,
    /// The integers accepted, when the type allows integers, nothing but integer bounds constrains
    /// them, and those bounds are integers: `[lo, hi]`.
    pub(crate) integers: Option<(i128, i128)>,
    /// The numbers accepted, when the type allows every number and nothing but bounds that an
    /// `f64` holds exactly constrains them.
    pub(crate) floats: Option<Floats>,
    /// `enum`/`const` when every choice is a string.
    pub(crate) strings: Option<Vec<(Key, Box<str>)>>,
}

/// Number bounds as `f64`s (unbounded sides are infinite).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Floats {
    pub(crate) min: f64,
    pub(crate) max: f64,
    pub(crate) min_exclusive: bool,
    pub(crate) max_exclusive: bool,
}

impl Floats {
    #[inline]
    pub(crate) fn hold(self, f: f64) -> bool {
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
pub(crate) struct Items {
    pub(crate) node: Node,
    pub(crate) min: Option<u64>,
    pub(crate) max: Option<u64>,
    pub(crate) unique: bool,
}

#[derive(Debug)]
pub(crate) struct Object {
    pub(crate) properties: Vec<(String, Node)>,
    /// The name of each property as a [`Key`], in the same order (compared without a loop).
    pub(crate) keys: Vec<Key>,
    /// Bit `i` set: property `i` is required.
    pub(crate) required: u64,
    pub(crate) additional: Additional,
}

#[derive(Debug)]
pub(crate) enum Additional {
    Allowed,
    Denied,
    Checked(Node),
}

impl Object {
    /// The index of property `name`, looked for at `hint` first (inline: keys mostly come in
    /// schema order).
    #[inline(always)]
    pub(crate) fn position(&self, name: &str, hint: usize) -> Option<usize> {
        let key = Key::of(name);
        if self.named(hint, key, name) {
            return Some(hint);
        }
        self.find(key, name)
    }

    #[inline(never)]
    pub(crate) fn find(&self, key: Key, name: &str) -> Option<usize> {
        (0..self.keys.len()).find(|&i| self.named(i, key, name))
    }

    /// Whether property `i` is `name` (of key `key`).
    #[inline(always)]
    pub(crate) fn named(&self, i: usize, key: Key, name: &str) -> bool {
        match (self.keys.get(i), self.properties.get(i)) {
            (Some(k), Some((p, _))) => key.is(*k, name, p),
            _ => false,
        }
    }
}

/// A string as its length and two words: for one of at most 16 bytes (object keys and enum values
/// mostly are) the words hold every byte, so equal keys mean equal strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Key {
    pub(crate) len: usize,
    pub(crate) words: (u64, u64),
}

impl Key {
    #[inline(always)]
    pub(crate) fn of(s: &str) -> Key {
        Key {
            len: s.len(),
            words: ends(s.as_bytes()),
        }
    }

    /// Whether `a` (of key `self`) is `b` (of key `other`): the keys settle it for short strings.
    #[inline(always)]
    pub(crate) fn is(self, other: Key, a: &str, b: &str) -> bool {
        self == other && (self.len <= 16 || a == b)
    }
}

/// The `oneOf` of an internally tagged enum.
#[derive(Debug)]
pub(crate) struct Tagged {
    pub(crate) tag: String,
    /// Each variant's tag value and object (whose properties include the tag).
    pub(crate) variants: Vec<(String, Object)>,
    pub(crate) nullable: bool,
}

/// Keywords that do not validate.
#[inline]
pub(crate) fn is_annotation(key: &str) -> bool {
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
    pub(crate) fn compile(schema: &Value) -> Option<Node> {
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
        Keywords::compile(map).map(|typed| Node::Keywords(Box::new(typed)))
    }

    /// Whether every value of this node is a scalar (so `uniqueItems` can compare hashes).
    #[inline]
    pub(crate) fn is_scalar(&self) -> bool {
        match self {
            Node::Keywords(typed) => !typed.types.has(Types::ARRAY | Types::OBJECT),
            Node::OrNull(inner) => inner.is_scalar(),
            Node::Any | Node::Tagged(_) => false,
        }
    }

    #[inline]
    pub(crate) fn accepts_null(&self) -> bool {
        match self {
            Node::Any | Node::OrNull(_) => true,
            Node::Keywords(typed) => typed.types.has(Types::NULL) && typed.allows(&Value::Null),
            Node::Tagged(tagged) => tagged.nullable,
        }
    }

    /// The node non-null values are checked against.
    #[inline]
    pub(crate) fn present(&self) -> &Node {
        match self {
            Node::OrNull(inner) => inner.present(),
            node => node,
        }
    }

    #[inline]
    pub(crate) fn keywords(&self) -> Option<&Keywords> {
        match self.present() {
            Node::Keywords(typed) => Some(typed),
            _ => None,
        }
    }
}

/// `anyOf: [X, {"type": "null"}]` in either order.
pub(crate) fn or_null(branches: &[Value]) -> Option<Node> {
    let is_null = |b: &Value| b.get("type").and_then(Value::as_str) == Some("null");
    match branches {
        [a, b] if is_null(b) && !is_null(a) => Some(Node::OrNull(Box::new(Node::compile(a)?))),
        [a, b] if is_null(a) && !is_null(b) => Some(Node::OrNull(Box::new(Node::compile(b)?))),
        _ => None,
    }
}

/// The branches of an internally tagged enum: closed objects whose first property is the same
/// key with a distinct string `const`, required; optionally one `{"type": "null"}` branch.
pub(crate) fn tagged(branches: &[Value]) -> Option<Node> {
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
        let Node::Keywords(typed) = Node::compile(branch)? else {
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

#[inline]
pub(crate) fn uint(map: &Map<String, Value>, key: &str) -> Result<Option<u64>, ()> {
    match map.get(key) {
        None => Ok(None),
        Some(value) => value.as_u64().map(Some).ok_or(()),
    }
}

#[inline]
pub(crate) fn number(map: &Map<String, Value>, key: &str) -> Result<Option<Num>, ()> {
    match map.get(key) {
        None => Ok(None),
        Some(Value::Number(n)) => Num::of(n).map(Some).ok_or(()),
        Some(_) => Err(()),
    }
}

impl Keywords {
    pub(crate) fn compile(map: &Map<String, Value>) -> Option<Keywords> {
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
        let mut typed = Keywords {
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

    /// See [`Keywords::floats`].
    #[inline]
    pub(crate) fn float_range(&self) -> Option<Floats> {
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

    /// See [`Keywords::integers`].
    #[inline]
    pub(crate) fn integer_range(&self) -> Option<(i128, i128)> {
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
    pub(crate) fn holds(&self, lo: i128, hi: i128) -> bool {
        self.integers
            .is_some_and(|(min, max)| min <= lo && hi <= max)
    }

    /// The array keywords; `Some(None)` when there are none, `None` when they cannot be planned.
    pub(crate) fn items(map: &Map<String, Value>) -> Option<Option<Items>> {
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
    pub(crate) fn object(map: &Map<String, Value>) -> Option<Option<Object>> {
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
    pub(crate) fn allows(&self, value: &Value) -> bool {
        self.choices
            .as_ref()
            .is_none_or(|choices| choices.iter().any(|choice| same_value(choice, value)))
    }

    #[inline]
    pub(crate) fn accepts_bool(&self, b: bool) -> bool {
        self.types.has(Types::BOOLEAN) && self.allows(&Value::Bool(b))
    }

    #[inline]
    pub(crate) fn accepts_number(&self, n: Num) -> bool {
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

    #[inline]
    pub(crate) fn accepts_str(&self, s: &str) -> bool {
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
#[inline]
pub(crate) fn same_value(choice: &Value, value: &Value) -> bool {
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
pub(crate) enum Num {
    U(u64),
    I(i64),
    F(f64),
}

impl Num {
    #[inline]
    pub(crate) fn of(n: &Number) -> Option<Num> {
        n.as_u64()
            .map(Num::U)
            .or_else(|| n.as_i64().map(Num::I))
            .or_else(|| n.as_f64().map(Num::F))
    }

    /// How `self` compares with `bound`, when that can be told exactly.
    #[inline]
    pub(crate) fn compare(self, bound: Num) -> Option<Ordering> {
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
    pub(crate) fn exact(self) -> Option<f64> {
        match self {
            Num::U(u) if u <= EXACT => Some(u as f64),
            Num::I(i) if i.unsigned_abs() <= EXACT => Some(i as f64),
            Num::F(f) if f.is_finite() => Some(f),
            _ => None,
        }
    }
}

/// Two words that, with the length, determine `bytes` when it is at most 16 bytes long: its first
/// and last eight bytes (overlapping below 16), or four, or its bytes packed. No copy through
/// memory, so this stays in registers.
#[inline(always)]
pub(crate) fn ends(bytes: &[u8]) -> (u64, u64) {
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

/// Whether `schema` wants an object or an array (found by its brackets), rather than a scalar.
/// `$ref`s are followed inside `schema`, through at most [`MAX_BRANCH_DEPTH`] nested unions (a
/// union that only refers to itself never says: it wants no container).
pub(crate) fn wants_container(schema: &Value) -> bool {
    wants_container_at(schema, schema, 0)
}

/// How deep [`wants_container`] follows unions of references.
const MAX_BRANCH_DEPTH: usize = 16;

fn wants_container_at(root: &Value, schema: &Value, depth: usize) -> bool {
    let schema = super::node::resolve(root, schema);
    let is_container = |t: &Value| t == "object" || t == "array";
    match schema.get("type") {
        Some(Value::String(_)) => schema.get("type").is_some_and(is_container),
        Some(Value::Array(types)) => types.iter().any(is_container),
        _ => {
            schema.get("properties").is_some()
                || (depth < MAX_BRANCH_DEPTH
                    && ["oneOf", "anyOf"].iter().any(|k| {
                        schema.get(*k).and_then(Value::as_array).is_some_and(|b| {
                            b.iter().any(|b| wants_container_at(root, b, depth + 1))
                        })
                    }))
                || schema.as_object().is_some_and(|o| o.is_empty())
        }
    }
}

/// Whether a value of `schema` may also be a scalar (a string, a number, a boolean, `null`): a type
/// list naming one, an `enum` or a `const`, or a union with such a branch (an externally tagged enum
/// with unit variants, an untagged enum). `{}` is left out: any value is read as a container first.
pub(crate) fn admits_scalar(schema: &Value) -> bool {
    let is_scalar = |t: &Value| t.as_str().is_some_and(|t| t != "object" && t != "array");
    match schema.get("type") {
        Some(Value::String(_)) => schema.get("type").is_some_and(is_scalar),
        Some(Value::Array(types)) => types.iter().any(is_scalar),
        _ => {
            schema.get("enum").is_some()
                || schema
                    .get("const")
                    .is_some_and(|c| !c.is_object() && !c.is_array())
                || ["oneOf", "anyOf"].iter().any(|k| {
                    schema
                        .get(*k)
                        .and_then(Value::as_array)
                        .is_some_and(|b| b.iter().any(admits_scalar))
                })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scalar_schemas() {
        assert!(admits_scalar(
            &json!({"oneOf": [{"type": "string", "enum": ["A"]}, {"type": "object"}]})
        ));
        assert!(admits_scalar(
            &json!({"anyOf": [{"type": "object"}, {"type": "null"}]})
        ));
        assert!(!admits_scalar(
            &json!({"oneOf": [{"type": "object"}, {"type": "array"}]})
        ));
        assert!(!admits_scalar(&json!({})));
    }

    #[test]
    fn container_schemas() {
        assert!(wants_container(&json!({"type":"object"})));
        assert!(wants_container(&json!({"type":["array","null"]})));
        assert!(wants_container(&json!({"oneOf":[{"type":"object"}]})));
        assert!(wants_container(&json!({})));
        assert!(!wants_container(&json!({"type":"string","enum":["a"]})));
        assert!(!wants_container(
            &json!({"anyOf":[{"type":"integer"},{"type":"null"}]})
        ));
    }

    #[test]
    fn references_are_followed_and_recursion_ends() {
        let tree = json!({
            "anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}],
            "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}}
        });
        assert!(wants_container(&tree));
        let looping =
            json!({"$defs": {"L": {"anyOf": [{"$ref": "#/$defs/L"}]}}, "$ref": "#/$defs/L"});
        assert!(!wants_container(&looping));
    }

    #[test]
    fn a_schema_with_references_has_no_plan() {
        let schema = json!({
            "type": "object",
            "properties": {"next": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}},
            "required": ["next"],
            "additionalProperties": false
        });
        assert!(Plan::compile(&schema).is_none());
    }
}
