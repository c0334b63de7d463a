//! Validation while deserializing: clean JSON goes from text straight to `T` through serde, and the
//! schema's plan (compiled next to the schema, in `schema::plan`) checks every value as serde reads
//! it, so no `serde_json::Value` is built for an answer that is already right. The text is read by
//! our own JSON reader ([`reader`]), which looks each key up in the plan as it reads it and hands
//! numbers to serde_json, so checking adds no layer between the text and `T`'s `Deserialize`.
//!
//! Whatever the plan is not sure of makes the check give up, and the caller takes the full path
//! (`Value`, validator, coercion, located errors), which decides.

mod reader;

use crate::schema::plan::Plan;
use crate::schema::plan::{ends, Additional, Node, Num, Object, Tagged};
use reader::{At, Reader};
use serde::de::{self, DeserializeOwned, Visitor};
use std::cell::Cell;
use std::fmt;

/// What the deserializer reports when it gives up (never shown: the caller takes the full path).
const GIVE_UP: &str = "the value needs the full validation path";

/// `text` as a `T`, if it is one clean JSON value (that `plan`, when there is one, accepts); `None`
/// otherwise (the caller then takes the full path).
#[inline]
pub(crate) fn read<T: DeserializeOwned>(text: &str, plan: Option<&Plan>) -> Option<T> {
    let root = match plan {
        Some(plan) => &plan.root,
        None => &reader::ANY,
    };
    let mut reader = Reader::new(text);
    let value = T::deserialize(At {
        r: &mut reader,
        check: Check::value(root),
    })
    .ok()?;
    reader.end().ok()?;
    Some(value)
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
            Node::Keywords(typed) => match leaf {
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
                node: Node::Keywords(typed),
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
                let accepted = node.keywords().is_some_and(|t| t.accepts_str(s));
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
                node: Node::Keywords(typed),
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
            Check::Value { node, .. } => node.keywords().is_some_and(|t| t.accepts_number(n)),
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
            Check::Value { node, .. } => node.keywords().is_some_and(|t| t.accepts_bool(b)),
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
/// array is checked in linear time), made only when the inline ones run out (a set's hasher is
/// seeded from thread-local state, a cost every short array would pay).
#[derive(Default)]
struct Hashes {
    inline: [u64; 8],
    len: usize,
    more: Option<std::collections::HashSet<u64>>,
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
            None => self.more.get_or_insert_with(Default::default).insert(hash),
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
    use crate::schema::plan::Key;
    use crate::validate::Validator;
    use serde::Deserialize;
    use serde_json::{json, Value};
    use std::collections::BTreeMap;

    /// The plan accepts exactly when it deserializes and the validator accepts (never more).
    fn agree<T: DeserializeOwned>(schema: &Value, text: &str) -> bool {
        let plan = Plan::compile(schema).expect("a plannable schema");
        let validator = Validator::new(schema).unwrap();
        let fast = read::<T>(text, Some(&plan)).is_some();
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
            read::<Fact>(
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
                let fast = read::<Value>(text, Some(&plan)).is_some();
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
