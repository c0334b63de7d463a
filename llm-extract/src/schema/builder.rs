//! Helpers the derive's generated code calls to build a type's generic schema.
//!
//! Generated code reaches it through `llm_extract::__private`. Only the grounding marks ([`GROUNDED`],
//! [`KEY`], [`mark_grounded`]) are public API, re-exported by [`crate::ground`]; nothing else here is
//! covered by semver.
//! The shapes built here are the *generic schema convention* every other module consumes:
//! closed objects with properties in declaration order, `Option<T>` as a nullable `T`, internally
//! and adjacently tagged enums as a `oneOf` of closed objects whose first property is a `const` tag,
//! externally tagged enums as a `oneOf` of a string enum (the unit variants) and closed one-key
//! objects, untagged enums as an `anyOf`, string enums as `{"type":"string","enum":[...]}`, tuples
//! as `prefixItems` arrays of fixed length, variant aliases as `x-aliases` beside the names,
//! constraints next to the `"type"` they constrain. The schemas of well-known foreign types are in
//! `foreign.rs`.
//!
//! # How a derived type nests
//!
//! `#[derive(Extract)]` implements [`FieldSchema`] for the type, next to `Extract`. A struct's schema
//! is built by asking each field type for its [`FieldSchema::field_schema`]; the impls below cover the
//! standard leaf and container types, and a derived type answers for itself. Nested schemas are
//! rebuilt rather than read from the nested type's `static`, so building a schema never re-enters a
//! `OnceLock`.
//!
//! # `$defs` and `$ref`: recursive types
//!
//! A generic schema may have `$defs` at its root, and `{"$ref": "#/$defs/<Name>"}` anywhere inside
//! it (never anywhere else: no nested `$defs`, no other pointer). Readers follow a `$ref` through
//! `schema::node` with the root at hand.
//!
//! - A type that does not recur is inlined wherever it appears, as it would be written by hand.
//! - A type that recurs (it contains itself, directly or through `Box`, `Option`, `Vec`, maps or other
//!   derived types) has one entry in the root's `$defs`, its schema, and every place inside that
//!   holds it is `{"$ref": "#/$defs/<Name>"}` (with its own keywords beside it: a description, a
//!   constraint; a nullable place is `{"anyOf": [{"$ref": ..}, {"type": "null"}]}`). Once a type has
//!   its entry, every later place that holds it in the same schema refers to it too. When the
//!   root's own type recurs, the root is that type's schema *and* its `$defs` entry, so the root
//!   stays an object.
//! - `<Name>` is the type's name without module paths, with a generic instantiation's arguments
//!   joined by `_` (`Page<Person>` is `Page_Person`), and `_2`, `_3`, ... appended, in the order the
//!   schema is built, to a name another type of the same schema already has. Names are made of
//!   ASCII letters, digits and `_`, so a reference needs no escaping.
//!
//! [`build_guarded`] does this: each derived type builds its schema through it; a type found on the
//! stack of types being built is the one that recurs.
//!
//! # Generic types
//!
//! A generic derived type (`Page<T>`) has a schema per instantiation: its [`FieldSchema`] asks `T`'s,
//! and its `Schema::schema` is computed once per instantiation and kept in a global map keyed by
//! the instantiation's `TypeId` ([`schema_set_of`]), since a generic function cannot own a `static`.

use serde_json::{json, Map, Value};
use std::any::TypeId;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::sync::{Mutex, OnceLock, PoisonError};

/// Re-exported so generated code can name `JsonSchema` without the user depending on schemars.
pub use schemars;
/// Named by the error fallback the derive emits.
pub use serde::de::DeserializeOwned;

/// A type that can appear as a field of a derived type: it knows its generic schema.
///
/// Implemented for the standard types below and by `#[derive(Extract)]`. Hidden; not public API.
#[diagnostic::on_unimplemented(
    message = "llm-extract does not know the schema of `{Self}`",
    label = "no schema for this type",
    note = "derive `Extract` (with `Deserialize`) for it; for a foreign type that implements \
            `schemars::JsonSchema`, mark the field `#[extract(schemars)]`"
)]
pub trait FieldSchema {
    /// Whether serde fills the field in when its key is missing (true for `Option<T>`).
    const OPTIONAL: bool = false;

    /// The generic schema of a value of this type.
    fn field_schema() -> Value;
}

macro_rules! bounded_integers {
    ($($ty:ty),* $(,)?) => {$(
        impl FieldSchema for $ty {
            fn field_schema() -> Value {
                json!({ "type": "integer", "minimum": <$ty>::MIN, "maximum": <$ty>::MAX })
            }
        }
    )*};
}
bounded_integers!(i8, i16, i32, u8, u16, u32);

macro_rules! unsigned_integers {
    ($($ty:ty),* $(,)?) => {$(
        impl FieldSchema for $ty {
            fn field_schema() -> Value {
                json!({ "type": "integer", "minimum": 0 })
            }
        }
    )*};
}
unsigned_integers!(u64, u128, usize);

macro_rules! leaf_types {
    ($($ty:ty => $schema:tt),* $(,)?) => {$(
        impl FieldSchema for $ty {
            fn field_schema() -> Value {
                json!($schema)
            }
        }
    )*};
}
leaf_types! {
    i64 => { "type": "integer" },
    i128 => { "type": "integer" },
    isize => { "type": "integer" },
    f32 => { "type": "number" },
    f64 => { "type": "number" },
    bool => { "type": "boolean" },
    String => { "type": "string" },
    str => { "type": "string" },
    char => { "type": "string", "minLength": 1, "maxLength": 1 },
    Value => {},
}

impl<T: FieldSchema> FieldSchema for Option<T> {
    const OPTIONAL: bool = true;

    fn field_schema() -> Value {
        nullable(T::field_schema())
    }
}

impl<T: FieldSchema + ?Sized> FieldSchema for Box<T> {
    const OPTIONAL: bool = T::OPTIONAL;

    fn field_schema() -> Value {
        T::field_schema()
    }
}

impl<T: FieldSchema> FieldSchema for Vec<T> {
    fn field_schema() -> Value {
        json!({ "type": "array", "items": T::field_schema() })
    }
}

impl<T: FieldSchema> FieldSchema for VecDeque<T> {
    fn field_schema() -> Value {
        json!({ "type": "array", "items": T::field_schema() })
    }
}

impl<T: FieldSchema, S> FieldSchema for HashSet<T, S> {
    fn field_schema() -> Value {
        json!({ "type": "array", "items": T::field_schema(), "uniqueItems": true })
    }
}

impl<T: FieldSchema> FieldSchema for BTreeSet<T> {
    fn field_schema() -> Value {
        json!({ "type": "array", "items": T::field_schema(), "uniqueItems": true })
    }
}

/// A type whose values serde reads from the keys of a JSON object: `String` (any key) and the
/// fieldless enums the derive implements it for (their names, as `propertyNames`).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the key of a map in a derived type",
    label = "not a map key",
    note = "the keys of a JSON object are strings: use `String`, or a fieldless enum that derives \
            `Extract`"
)]
pub trait MapKey {
    /// The schema every key must satisfy, or `None` when any string will do.
    fn key_schema() -> Option<Value>;
}

impl MapKey for String {
    fn key_schema() -> Option<Value> {
        None
    }
}

/// `{"type": "object", "additionalProperties": <T>}`, with `"propertyNames"` when the keys are
/// restricted (an enum's names).
pub fn map_schema<K: MapKey + ?Sized, T: FieldSchema + ?Sized>() -> Value {
    let mut schema = json!({ "type": "object", "additionalProperties": T::field_schema() });
    if let (Some(keys), Value::Object(map)) = (K::key_schema(), &mut schema) {
        map.insert("propertyNames".into(), keys);
    }
    schema
}

impl<K: MapKey, T: FieldSchema> FieldSchema for BTreeMap<K, T> {
    fn field_schema() -> Value {
        map_schema::<K, T>()
    }
}

impl<K: MapKey, T: FieldSchema, S> FieldSchema for HashMap<K, T, S> {
    fn field_schema() -> Value {
        map_schema::<K, T>()
    }
}

/// The schema of a fieldless enum's names as map keys: its `enum` alone (no description, which
/// belongs to the values).
pub fn key_names(names: &[&str]) -> Value {
    json!({ "type": "string", "enum": names })
}

/// A tuple is a fixed-length array (see [`tuple`]).
macro_rules! tuples {
    ($(($($name:ident),+))*) => {$(
        impl<$($name: FieldSchema),+> FieldSchema for ($($name,)+) {
            fn field_schema() -> Value {
                tuple(None, ::std::vec![$(Property::of::<$name>("")),+], false)
            }
        }
    )*};
}
tuples! {
    (A) (A, B) (A, B, C) (A, B, C, D) (A, B, C, D, E) (A, B, C, D, E, F) (A, B, C, D, E, F, G)
    (A, B, C, D, E, F, G, H) (A, B, C, D, E, F, G, H, I) (A, B, C, D, E, F, G, H, I, J)
    (A, B, C, D, E, F, G, H, I, J, K) (A, B, C, D, E, F, G, H, I, J, K, L)
}

/// An array `[T; N]`: exactly `N` items (serde reads it as a tuple of `N`).
impl<T: FieldSchema, const N: usize> FieldSchema for [T; N] {
    fn field_schema() -> Value {
        json!({ "type": "array", "items": T::field_schema(), "minItems": N, "maxItems": N })
    }
}

/// Marks the types `min_length`/`max_length` apply to; generated code asserts it for types the
/// macro cannot classify by name (type aliases, paths it does not know).
#[diagnostic::on_unimplemented(
    message = "`pattern`, `min_length` and `max_length` apply to strings, and `{Self}` is not a string",
    label = "not a string",
    note = "use `min_items`/`max_items` for sequences and `minimum`/`maximum` for numbers"
)]
pub trait StringLike {}
impl StringLike for String {}
impl StringLike for str {}
impl<T: StringLike + ?Sized> StringLike for Box<T> {}
impl<T: StringLike> StringLike for Option<T> {}

/// Marks the types `min_items`/`max_items` apply to (see [`StringLike`]).
#[diagnostic::on_unimplemented(
    message = "`min_items`/`max_items` apply to sequences and sets, and `{Self}` is neither",
    label = "not a sequence",
    note = "use `min_length`/`max_length` for strings and `minimum`/`maximum` for numbers"
)]
pub trait ListLike {}
impl<T> ListLike for Vec<T> {}
impl<T> ListLike for VecDeque<T> {}
impl<T, S> ListLike for HashSet<T, S> {}
impl<T> ListLike for BTreeSet<T> {}
impl<T: ListLike + ?Sized> ListLike for Box<T> {}
impl<T: ListLike> ListLike for Option<T> {}

/// Marks the types `minimum`/`maximum` apply to (see [`StringLike`]).
#[diagnostic::on_unimplemented(
    message = "`minimum`/`maximum` apply to numbers, and `{Self}` is not a number",
    label = "not a number",
    note = "use `min_length`/`max_length` for strings and `min_items`/`max_items` for sequences"
)]
pub trait NumberLike {}
macro_rules! number_like {
    ($($ty:ty),*) => { $(impl NumberLike for $ty {})* };
}
number_like!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, f32, f64);
impl<T: NumberLike + ?Sized> NumberLike for Box<T> {}
impl<T: NumberLike> NumberLike for Option<T> {}

/// Compile-time assertion that `T` is a string type; called by generated code, does nothing.
pub fn assert_string<T: StringLike + ?Sized>() {}

/// Compile-time assertion that `T` is a sequence or set type; called by generated code, does nothing.
pub fn assert_list<T: ListLike + ?Sized>() {}

/// Compile-time assertion that `T` is a number type; called by generated code, does nothing.
pub fn assert_number<T: NumberLike + ?Sized>() {}

/// One property of an object schema under construction.
#[derive(Debug, Clone)]
pub struct Property {
    name: &'static str,
    schema: Value,
    required: bool,
    aliases: Vec<&'static str>,
    /// `#[serde(flatten)]`: `schema`'s members are merged into the object (see [`object`]).
    flatten: bool,
}

impl Property {
    /// A property whose schema is `T`'s; required unless `T` is optional (`Option<_>`).
    pub fn of<T: FieldSchema + ?Sized>(name: &'static str) -> Self {
        Property::with_schema(name, T::field_schema(), !T::OPTIONAL)
    }

    /// A property with an explicit schema.
    pub fn with_schema(name: &'static str, schema: Value, required: bool) -> Self {
        Property {
            name,
            schema,
            required,
            aliases: Vec::new(),
            flatten: false,
        }
    }

    /// A `#[serde(flatten)]` field of type `T`: its members are merged into the object.
    pub fn flatten<T: Flatten + ?Sized>() -> Self {
        let (schema, required) = T::flattened();
        Property {
            flatten: true,
            ..Property::with_schema("", schema, required)
        }
    }

    /// A required property whose only valid value is the string `value` (an enum's tag).
    pub fn tag(name: &'static str, value: &'static str) -> Self {
        Property::with_schema(name, json!({ "const": value }), true)
    }

    /// The property may be missing (`#[serde(default)]`).
    pub fn optional(mut self) -> Self {
        self.required = false;
        self
    }

    /// The property must be present, even when its type is optional (an enum variant's key).
    pub fn required(mut self) -> Self {
        self.required = true;
        self
    }

    /// Records other values serde reads for a tag (a variant's `alias`es), as `"x-aliases":
    /// {"alias": "canonical"}` on the tag's schema (see [`name_aliases`]).
    pub fn tag_aliases(mut self, aliases: &[&str]) -> Self {
        if let Some(canonical) = self.schema.get("const").and_then(Value::as_str) {
            let canonical = canonical.to_owned();
            let pairs: Vec<(&str, &str)> =
                aliases.iter().map(|a| (*a, canonical.as_str())).collect();
            name_aliases(&mut self.schema, &pairs);
        }
        self
    }

    /// The property's schema alone (a newtype's inner value, an element of a tuple).
    pub fn into_schema(self) -> Value {
        self.schema
    }

    /// Adds a constraint keyword (see [`constrain`]).
    pub fn constraint(mut self, keyword: &str, value: Value) -> Self {
        constrain(&mut self.schema, keyword, value);
        self
    }

    /// Marks the property's text as quoted from the source (`#[extract(grounded)]`, see [`mark_grounded`]).
    pub fn grounded(mut self) -> Self {
        mark_grounded(&mut self.schema);
        self
    }

    /// Marks the property as part of an item's identity (`#[extract(key)]`): `"x-key": true`. Items
    /// with equal key properties are merged by `extract_all`, `extract_stream` and documents; a schema
    /// without key properties is merged by none but documents (exact duplicates only).
    pub fn key(mut self) -> Self {
        constrain(&mut self.schema, KEY, Value::Bool(true));
        self
    }

    /// Sets the property's description (see [`describe`]).
    pub fn description(mut self, text: &str) -> Self {
        describe(&mut self.schema, text);
        self
    }

    /// Records another name serde accepts for this property.
    pub fn alias(mut self, alias: &'static str) -> Self {
        self.aliases.push(alias);
        self
    }
}

/// A closed object schema: properties in order, the required ones, and the aliases serde accepts as
/// `"x-aliases": {"alias": "canonical"}`.
///
/// A flattened property ([`Property::flatten`]) contributes its schema's members in its place: a
/// struct's properties (required ones kept unless the field is an `Option`) and aliases; a map's
/// value schema as `additionalProperties` (the object is then open), or, for a map whose keys are
/// an enum's names, one optional property per name. Anything else cannot be flattened into an
/// object: the object becomes a schema that fails to compile with the reason (the derive's trait
/// bound on [`Flatten`] refuses such types first; this catches a hand-written impl).
pub fn object(description: Option<&str>, properties: Vec<Property>) -> Value {
    let mut members = Members::default();
    for property in properties {
        if property.flatten {
            if let Err(why) = members.merge(property.schema, property.required) {
                return unsupported(&why);
            }
            continue;
        }
        if property.required {
            members.required.push(Value::from(property.name));
        }
        for alias in property.aliases {
            members.aliases.insert(alias.into(), property.name.into());
        }
        members
            .properties
            .insert(property.name.into(), property.schema);
    }
    let mut schema = Map::new();
    schema.insert("type".into(), "object".into());
    if let Some(text) = description {
        schema.insert("description".into(), text.into());
    }
    schema.insert("properties".into(), Value::Object(members.properties));
    schema.insert("required".into(), Value::Array(members.required));
    schema.insert(
        "additionalProperties".into(),
        members.additional.unwrap_or(Value::Bool(false)),
    );
    if !members.aliases.is_empty() {
        schema.insert("x-aliases".into(), Value::Object(members.aliases));
    }
    Value::Object(schema)
}

/// The members of an object under construction.
#[derive(Default)]
struct Members {
    properties: Map<String, Value>,
    required: Vec<Value>,
    aliases: Map<String, Value>,
    /// The schema of keys not listed, once a flattened map opened the object.
    additional: Option<Value>,
}

impl Members {
    /// Merges a flattened field's schema (see [`object`]).
    fn merge(&mut self, schema: Value, keep_required: bool) -> Result<(), String> {
        let schema = match super::node::reference_of(&schema) {
            Some(reference) => defined(reference).ok_or_else(|| {
                format!(
                    "`#[serde(flatten)]` of a type that contains itself ({reference}) cannot be \
                     written as one object"
                )
            })?,
            None => schema,
        };
        let Value::Object(mut map) = schema else {
            return Err("`#[serde(flatten)]` needs a struct or a map".into());
        };
        let additional = map.remove("additionalProperties");
        match map.remove("properties") {
            Some(Value::Object(properties)) => {
                self.properties.extend(properties);
                if let (true, Some(Value::Array(required))) =
                    (keep_required, map.remove("required"))
                {
                    self.required.extend(required);
                }
                if let Some(Value::Object(aliases)) = map.remove("x-aliases") {
                    self.aliases.extend(aliases);
                }
                if let Some(additional) = additional.filter(|value| value != &Value::Bool(false)) {
                    self.additional = Some(additional);
                }
                Ok(())
            }
            None => {
                let Some(values) = additional.filter(Value::is_object) else {
                    return Err(
                        "`#[serde(flatten)]` needs a struct or a map, and this field's type is \
                         neither (an enum, a sequence or a scalar has no members to merge)"
                            .into(),
                    );
                };
                let names = map
                    .get("propertyNames")
                    .and_then(|keys| keys.get("enum"))
                    .and_then(Value::as_array);
                match names {
                    // Keys from an enum: each name is a property the object may have.
                    Some(names) => {
                        for name in names.iter().filter_map(Value::as_str) {
                            self.properties.insert(name.into(), values.clone());
                        }
                    }
                    None => self.additional = Some(values),
                }
                Ok(())
            }
            Some(_) => Err("`#[serde(flatten)]` of a malformed object schema".into()),
        }
    }
}

/// A type a `#[serde(flatten)]` field can have: a struct with named fields that derives `Extract`,
/// a map with string or enum keys, or an `Option`/`Box` of one.
#[diagnostic::on_unimplemented(
    message = "`#[serde(flatten)]` cannot merge `{Self}` into an object",
    label = "not a struct or a map",
    note = "flatten a struct with named fields that derives `Extract`, or a `HashMap`/`BTreeMap` \
            with `String` or enum keys; nest any other type as a normal field"
)]
pub trait Flatten {
    /// The schema whose members are merged, and whether its required members stay required.
    fn flattened() -> (Value, bool);
}

impl<T: Flatten> Flatten for Option<T> {
    fn flattened() -> (Value, bool) {
        (T::flattened().0, false)
    }
}

impl<T: Flatten + ?Sized> Flatten for Box<T> {
    fn flattened() -> (Value, bool) {
        T::flattened()
    }
}

impl<K: MapKey, T: FieldSchema> Flatten for BTreeMap<K, T> {
    fn flattened() -> (Value, bool) {
        (map_schema::<K, T>(), true)
    }
}

impl<K: MapKey, T: FieldSchema, S> Flatten for HashMap<K, T, S> {
    fn flattened() -> (Value, bool) {
        (map_schema::<K, T>(), true)
    }
}

/// A schema that no validator compiles, whose compile error is `why` (its `type` is not a JSON
/// Schema type): every use of it fails with a [`SchemaError`](crate::SchemaError) saying why.
fn unsupported(why: &str) -> Value {
    json!({ "type": why })
}

/// An internally tagged enum: `{"oneOf": [variant objects...], "description"?}`.
pub fn one_of(description: Option<&str>, variants: Vec<Value>) -> Value {
    let mut schema = Map::new();
    schema.insert("oneOf".into(), Value::Array(variants));
    if let Some(text) = description {
        schema.insert("description".into(), text.into());
    }
    Value::Object(schema)
}

/// A fieldless enum: `{"type": "string", "description"?, "enum": [names...]}`.
pub fn string_enum(description: Option<&str>, names: &[&str]) -> Value {
    let mut schema = json!({ "type": "string", "enum": names });
    if let Some(text) = description {
        describe(&mut schema, text);
    }
    schema
}

/// Records the other names serde reads for the values of a string enum or a tag (variant
/// `alias`es): `"x-aliases": {"alias": "canonical"}`, for parsers to map back. The schema asks for
/// the canonical names only.
pub fn name_aliases(schema: &mut Value, pairs: &[(&str, &str)]) {
    let Value::Object(map) = schema else {
        return;
    };
    if pairs.is_empty() {
        return;
    }
    let aliases: Map<String, Value> = pairs
        .iter()
        .map(|(alias, canonical)| ((*alias).to_owned(), Value::from(*canonical)))
        .collect();
    map.insert("x-aliases".into(), Value::Object(aliases));
}

/// An untagged enum, or the untagged variants after the tagged ones: `{"anyOf": [...]}`. serde
/// takes the first branch that deserializes; the schema accepts a value any branch accepts.
pub fn any_of(description: Option<&str>, branches: Vec<Value>) -> Value {
    let mut schema = Map::new();
    schema.insert("anyOf".into(), Value::Array(branches));
    if let Some(text) = description {
        schema.insert("description".into(), text.into());
    }
    Value::Object(schema)
}

/// A fixed-length array, serde's form of a tuple, a tuple struct and a tuple variant:
/// `{"type": "array", "prefixItems": [...], "items": false, "minItems": n, "maxItems": n}`, with
/// `minItems` 0 when serde fills in missing elements (a tuple struct's `#[serde(default)]`).
pub fn tuple(description: Option<&str>, elements: Vec<Property>, all_optional: bool) -> Value {
    let count = elements.len();
    let mut schema = Map::new();
    schema.insert("type".into(), "array".into());
    if let Some(text) = description {
        schema.insert("description".into(), text.into());
    }
    let items: Vec<Value> = elements.into_iter().map(Property::into_schema).collect();
    schema.insert("prefixItems".into(), Value::Array(items));
    schema.insert("items".into(), false.into());
    if !all_optional {
        schema.insert("minItems".into(), count.into());
    }
    schema.insert("maxItems".into(), count.into());
    Value::Object(schema)
}

/// The schema of a newtype struct or `#[serde(transparent)]` struct: its one field's, with the
/// struct's description where the field has none.
pub fn newtype(description: Option<&str>, inner: Property) -> Value {
    let mut schema = inner.into_schema();
    if let Some(text) = description {
        if schema.get("description").is_none() {
            describe(&mut schema, text);
        }
    }
    schema
}

/// The tag of a catch-all variant (`#[serde(other)]`): any string but the other variants' names.
pub fn other_name(known: &[&str]) -> Value {
    json!({ "type": "string", "not": { "enum": known } })
}

/// A newtype variant of an internally tagged enum: serde writes the tag into the inner value's
/// object, so the variant is that object with the tag as its first, required property. An inner
/// value that is not an object with properties (serde accepts a map or a struct there) gets a
/// schema that cannot be compiled, whose message says so.
pub fn tagged_newtype(description: Option<&str>, tag: Property, inner: Value) -> Value {
    let tag_name = tag.name;
    let Value::Object(mut inner) = inner else {
        return tagged_newtype_error(tag_name);
    };
    let (Some(Value::Object(properties)), Some(Value::Array(required))) =
        (inner.remove("properties"), inner.remove("required"))
    else {
        return tagged_newtype_error(tag_name);
    };
    let mut schema = object(description, vec![tag]);
    if let Value::Object(map) = &mut schema {
        if description.is_none() {
            if let Some(text) = inner.remove("description") {
                map.shift_insert(1, "description".into(), text);
            }
        }
        if let Some(Value::Object(merged)) = map.get_mut("properties") {
            merged.extend(properties);
        }
        if let Some(Value::Array(merged)) = map.get_mut("required") {
            merged.extend(required);
        }
        if let Some(aliases) = inner.remove("x-aliases") {
            map.insert("x-aliases".into(), aliases);
        }
    }
    schema
}

fn tagged_newtype_error(tag: &str) -> Value {
    // Not a JSON Schema type: compiling the schema fails with this as its message.
    json!({ "type": format!(
        "a newtype variant of an enum internally tagged with `{tag}` must hold a struct with named \
         fields: serde writes the tag among its fields"
    ) })
}

/// A single string `"type"` without `enum`/`const` becomes `[type, "null"]`; with an `enum`, `null`
/// is appended to it as well; anything else is wrapped as `{"anyOf": [schema, {"type": "null"}]}`.
/// A schema that already accepts `null` (`{}`, or a type list containing `"null"`) is returned as is.
pub fn nullable(schema: Value) -> Value {
    let Value::Object(mut map) = schema else {
        return any_of_null(schema);
    };
    if map.is_empty() || accepts_null(&map) {
        return Value::Object(map);
    }
    let simple_type = match map.get("type") {
        Some(Value::String(ty)) if !map.contains_key("const") => Some(ty.clone()),
        _ => None,
    };
    match (simple_type, map.get_mut("enum")) {
        (Some(ty), None) => {
            map.insert("type".into(), json!([ty, "null"]));
            Value::Object(map)
        }
        (Some(ty), Some(Value::Array(values))) => {
            values.push(Value::Null);
            map.insert("type".into(), json!([ty, "null"]));
            Value::Object(map)
        }
        _ => any_of_null(Value::Object(map)),
    }
}

fn accepts_null(map: &Map<String, Value>) -> bool {
    match map.get("type") {
        Some(Value::Array(types)) => types.iter().any(|t| t == "null"),
        Some(Value::String(ty)) => ty == "null",
        _ => false,
    }
}

fn any_of_null(schema: Value) -> Value {
    json!({ "anyOf": [schema, { "type": "null" }] })
}

/// Sets a constraint keyword on the schema a field's value must satisfy.
///
/// It lands next to the schema's `"type"`, replacing a keyword of the same name in place (an
/// integer's own `minimum`, say); in a nullable `anyOf` it goes into the non-null branch.
pub fn constrain(schema: &mut Value, keyword: &str, value: Value) {
    let target = match schema {
        Value::Object(map) if !map.contains_key("type") => match map.get_mut("anyOf") {
            Some(Value::Array(branches)) => branches
                .iter_mut()
                .find(|branch| branch.get("type").and_then(Value::as_str) != Some("null")),
            _ => None,
        },
        _ => None,
    };
    let target = match target {
        Some(branch) => branch,
        None => schema,
    };
    if let Value::Object(map) = target {
        map.insert(keyword.into(), value);
    }
}

/// The keyword marking a string whose value must be a verbatim span of the source text.
pub const GROUNDED: &str = "x-grounded";

/// The keyword marking a property that is part of an item's identity when items are merged
/// (`extract_all`, `extract_stream`, documents; see [`crate::ground::merge`]).
pub const KEY: &str = "x-key";

/// Sets `"x-grounded": true` on every string schema `schema` holds as a value: the schema itself, the
/// non-null branch of a nullable `anyOf`, or the `items` of an array. Every dialect strips `x-` keys
/// from what is sent.
pub fn mark_grounded(schema: &mut Value) {
    let Value::Object(map) = schema else {
        return;
    };
    if let Some(Value::Array(branches)) = map.get_mut("anyOf") {
        branches.iter_mut().for_each(mark_grounded);
        return;
    }
    let types: Vec<&str> = match map.get("type") {
        Some(Value::String(ty)) => vec![ty.as_str()],
        Some(Value::Array(types)) => types.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if types.contains(&"string") {
        map.insert(GROUNDED.into(), Value::Bool(true));
    } else if types.contains(&"array") {
        if let Some(items) = map.get_mut("items") {
            mark_grounded(items);
        }
    }
}

/// Sets the schema's `"description"`: in place if it has one, else right after its `"type"`, else
/// last.
pub fn describe(schema: &mut Value, text: &str) {
    let Value::Object(map) = schema else {
        return;
    };
    if let Some(existing) = map.get_mut("description") {
        *existing = text.into();
        return;
    }
    match map.keys().position(|key| key == "type") {
        Some(index) => {
            map.shift_insert(index + 1, "description".into(), text.into());
        }
        None => {
            map.insert("description".into(), text.into());
        }
    }
}

/// The generic schema of a foreign type implementing `schemars::JsonSchema` (`#[extract(schemars)]`).
///
/// Generated for deserialization with subschemas inlined, then brought to our convention: no
/// `$schema` or `title`, no definitions unless a recursive `$ref` still needs them, and objects with
/// `properties` closed (`additionalProperties: false`) unless schemars said otherwise.
pub fn schemars_schema<T: schemars::JsonSchema + ?Sized>() -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .for_deserialize()
        .with(|settings| {
            settings.inline_subschemas = true;
            settings.meta_schema = None;
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    if let Value::Object(root) = &mut schema {
        root.remove("$schema");
        if !contains_ref(&Value::Object(root.clone())) {
            root.remove("$defs");
            root.remove("definitions");
        }
    }
    normalize_foreign(&mut schema);
    schema
}

fn contains_ref(value: &Value) -> bool {
    match value {
        Value::Object(map) => map
            .iter()
            .any(|(key, value)| key == "$ref" || contains_ref(value)),
        Value::Array(items) => items.iter().any(contains_ref),
        _ => false,
    }
}

/// Walks schema positions only (never a `properties` map's keys), so a property named `title` survives.
fn normalize_foreign(schema: &mut Value) {
    match schema {
        // `additionalProperties: false` stays a boolean; a `true` schema becomes the
        // equivalent `{}` our convention (and the GBNF dialect's check) expects.
        Value::Bool(true) => *schema = json!({}),
        Value::Object(map) => {
            map.remove("title");
            if map.contains_key("properties") && !map.contains_key("additionalProperties") {
                map.insert("additionalProperties".into(), false.into());
            }
            for (key, child) in map.iter_mut() {
                match key.as_str() {
                    "properties" | "$defs" | "definitions" | "patternProperties" => {
                        if let Value::Object(children) = child {
                            children.values_mut().for_each(normalize_foreign);
                        }
                    }
                    "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                        if let Value::Array(children) = child {
                            children.iter_mut().for_each(normalize_foreign);
                        }
                    }
                    "additionalProperties" | "unevaluatedProperties" if child.is_boolean() => {}
                    "items"
                    | "additionalProperties"
                    | "not"
                    | "contains"
                    | "if"
                    | "then"
                    | "else"
                    | "propertyNames"
                    | "unevaluatedProperties" => normalize_foreign(child),
                    _ => {}
                }
            }
        }
        _ => {}
    }
}

/// The `$defs` of the schema being built on this thread (see the module documentation).
#[derive(Default)]
struct Defs {
    /// The types whose schemas are being built, outermost first.
    stack: Vec<TypeId>,
    /// The types found to recur: met again while on the stack.
    recurs: HashSet<TypeId>,
    /// Each named type's name in `$defs`, and the names taken.
    names: HashMap<TypeId, String>,
    taken: HashSet<String>,
    /// The entries, in the order their types' schemas were completed.
    defs: Map<String, Value>,
}

impl Defs {
    /// The reference to `id`'s entry, naming the type if it has no name yet.
    fn reference(&mut self, id: TypeId, type_name: &str) -> Value {
        let name = self.name(id, type_name);
        json!({ "$ref": format!("#/$defs/{name}") })
    }

    fn name(&mut self, id: TypeId, type_name: &str) -> String {
        if let Some(name) = self.names.get(&id) {
            return name.clone();
        }
        let base = def_name(type_name);
        let mut name = base.clone();
        let mut n = 2;
        while self.taken.contains(&name) {
            name = format!("{base}_{n}");
            n += 1;
        }
        self.taken.insert(name.clone());
        self.names.insert(id, name.clone());
        name
    }

    /// Whether `id` has its entry already.
    fn defined(&self, id: TypeId) -> bool {
        self.names
            .get(&id)
            .is_some_and(|name| self.defs.contains_key(name))
    }
}

thread_local! {
    /// The `$defs` of the schema this thread is building, while it builds one.
    static DEFS: RefCell<Option<Defs>> = const { RefCell::new(None) };
}

/// Runs `f` on the `$defs` being built, if a schema is being built.
fn with_defs<R>(f: impl FnOnce(&mut Defs) -> R) -> Option<R> {
    DEFS.with(|defs| defs.borrow_mut().as_mut().map(f))
}

/// The entry a `#/$defs/<Name>` reference points at in the schema being built, once complete.
fn defined(reference: &str) -> Option<Value> {
    let name = reference.strip_prefix("#/$defs/")?;
    with_defs(|defs| defs.defs.get(name).cloned()).flatten()
}

/// `<Name>` of a type's `$defs` entry (see the module documentation): `a::Page<b::Person>` is
/// `Page_Person`.
pub fn def_name(type_name: &str) -> String {
    let words: Vec<&str> = type_name
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
        .filter_map(|path| path.rsplit("::").next())
        .filter(|word| !word.is_empty())
        .collect();
    if words.is_empty() {
        "Type".into()
    } else {
        words.join("_")
    }
}

/// The name of `T` for a schema (its `$defs` name, see [`def_name`]): a generic instantiation's
/// `SchemaSet` is named with it.
pub fn schema_name<T: ?Sized>() -> String {
    def_name(std::any::type_name::<T>())
}

/// Builds a whole schema with `build`: the root of a schema, which receives the `$defs` of the types
/// that recur in it. Inside another build (a hand-written impl asking for one), just `build`.
pub fn root_schema(build: impl FnOnce() -> Value) -> Value {
    if DEFS.with(|defs| defs.borrow().is_some()) {
        return build();
    }
    DEFS.with(|defs| *defs.borrow_mut() = Some(Defs::default()));
    // Cleared on unwind too, so a panicking build leaves no half-built `$defs` behind.
    struct Clear;
    impl Drop for Clear {
        fn drop(&mut self) {
            DEFS.with(|defs| defs.borrow_mut().take());
        }
    }
    let clear = Clear;
    let schema = build();
    let defs = DEFS
        .with(|defs| defs.borrow_mut().take())
        .map(|defs| defs.defs)
        .unwrap_or_default();
    drop(clear);
    if defs.is_empty() {
        return schema;
    }
    // The root's own type recurs: the root is its entry's schema, so that it stays an object.
    let mut schema = match super::node::reference_of(&schema)
        .and_then(|reference| reference.strip_prefix("#/$defs/"))
        .and_then(|name| defs.get(name))
    {
        Some(entry) if schema.as_object().is_some_and(|map| map.len() == 1) => entry.clone(),
        _ => schema,
    };
    match &mut schema {
        Value::Object(map) => {
            map.insert("$defs".into(), Value::Object(defs));
            schema
        }
        _ => json!({ "allOf": [schema], "$defs": defs }),
    }
}

/// Builds `T`'s schema with `build`, as every derived type does: inlined, unless `T` recurs.
///
/// If `T` is already being built further out (it contains itself), this is a `$ref` to `T`'s
/// `$defs` entry, and `T` is marked as recurring; when `T`'s outermost build completes marked, its
/// schema becomes the entry and the build returns a `$ref` too. A type with an entry already is a
/// `$ref` wherever else it appears in the same schema. Called outside a schema being built, it
/// builds the root ([`root_schema`]).
pub fn build_guarded<T: ?Sized + 'static>(build: impl FnOnce() -> Value) -> Value {
    if DEFS.with(|defs| defs.borrow().is_none()) {
        return root_schema(|| build_guarded::<T>(build));
    }
    let id = TypeId::of::<T>();
    let type_name = std::any::type_name::<T>();
    let reference = with_defs(|defs| {
        if defs.defined(id) {
            Some(defs.reference(id, type_name))
        } else if defs.stack.contains(&id) {
            defs.recurs.insert(id);
            Some(defs.reference(id, type_name))
        } else {
            defs.stack.push(id);
            None
        }
    })
    .flatten();
    if let Some(reference) = reference {
        return reference;
    }
    // Pops on unwind too, so a panicking build leaves the stack as it found it.
    struct Pop;
    impl Drop for Pop {
        fn drop(&mut self) {
            with_defs(|defs| defs.stack.pop());
        }
    }
    let pop = Pop;
    let schema = build();
    drop(pop);
    let recurs = with_defs(|defs| defs.recurs.contains(&id)).unwrap_or(false);
    if !recurs {
        return schema;
    }
    with_defs(|defs| {
        let name = defs.name(id, type_name);
        defs.defs.insert(name, schema.clone());
        defs.reference(id, type_name)
    })
    .unwrap_or(schema)
}

/// The `SchemaSet` of `T`, built once per type with `build` and kept for the program's life: what a
/// generic type's `Schema::schema` returns (a generic function cannot own a `static` per
/// instantiation). Built outside the lock; if two threads build it at once, one set is kept.
pub fn schema_set_of<T: ?Sized + 'static>(
    build: impl FnOnce() -> crate::schema::SchemaSet,
) -> &'static crate::schema::SchemaSet {
    static SETS: OnceLock<Mutex<HashMap<TypeId, &'static crate::schema::SchemaSet>>> =
        OnceLock::new();
    let id = TypeId::of::<T>();
    let sets = SETS.get_or_init(Default::default);
    let lock = || sets.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(set) = lock().get(&id) {
        return set;
    }
    let set = build();
    lock().entry(id).or_insert_with(|| Box::leak(Box::new(set)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_carry_their_range() {
        assert_eq!(
            u8::field_schema(),
            json!({"type": "integer", "minimum": 0, "maximum": 255})
        );
        assert_eq!(
            i32::field_schema(),
            json!({"type": "integer", "minimum": i32::MIN, "maximum": i32::MAX})
        );
        assert_eq!(
            u64::field_schema(),
            json!({"type": "integer", "minimum": 0})
        );
        assert_eq!(i64::field_schema(), json!({"type": "integer"}));
    }

    #[test]
    fn containers_wrap_their_items() {
        assert_eq!(
            Vec::<bool>::field_schema(),
            json!({"type": "array", "items": {"type": "boolean"}})
        );
        assert_eq!(
            BTreeSet::<String>::field_schema(),
            json!({"type": "array", "items": {"type": "string"}, "uniqueItems": true})
        );
        assert_eq!(
            HashMap::<String, f64>::field_schema(),
            json!({"type": "object", "additionalProperties": {"type": "number"}})
        );
        assert_eq!(Box::<str>::field_schema(), json!({"type": "string"}));
        fn optional<T: FieldSchema + ?Sized>() -> bool {
            T::OPTIONAL
        }
        assert!(optional::<Option<String>>() && optional::<Box<Option<String>>>());
        assert!(!optional::<String>() && !optional::<Vec<Option<u8>>>());
    }

    #[test]
    fn nullable_follows_the_convention() {
        assert_eq!(
            nullable(json!({"type": "string", "minLength": 1})),
            json!({"type": ["string", "null"], "minLength": 1})
        );
        assert_eq!(
            nullable(json!({"type": "string", "enum": ["a", "b"]})),
            json!({"type": ["string", "null"], "enum": ["a", "b", null]})
        );
        let tagged = json!({"oneOf": [{"type": "object"}]});
        assert_eq!(
            nullable(tagged.clone()),
            json!({"anyOf": [tagged, {"type": "null"}]})
        );
        assert_eq!(
            nullable(json!({"const": "x", "type": "string"})),
            json!({"anyOf": [{"const": "x", "type": "string"}, {"type": "null"}]})
        );
        assert_eq!(nullable(json!({})), json!({}));
        let twice = nullable(json!({"type": "integer"}));
        assert_eq!(nullable(twice.clone()), twice);
    }

    #[test]
    fn constraints_go_next_to_the_type_or_into_the_non_null_branch() {
        let mut schema = u8::field_schema();
        constrain(&mut schema, "minimum", json!(1));
        describe(&mut schema, "How many.");
        assert_eq!(
            serde_json::to_string(&schema).unwrap(),
            r#"{"type":"integer","description":"How many.","minimum":1,"maximum":255}"#
        );
        let mut schema = nullable(json!({"oneOf": []}));
        constrain(&mut schema, "examples", json!([1]));
        assert_eq!(
            schema,
            json!({"anyOf": [{"oneOf": [], "examples": [1]}, {"type": "null"}]})
        );
    }

    #[test]
    fn objects_are_closed_and_record_aliases() {
        let schema = object(
            Some("A thing."),
            vec![
                Property::of::<String>("name").alias("title"),
                Property::of::<Option<u8>>("age"),
                Property::of::<bool>("flag").optional(),
            ],
        );
        assert_eq!(
            serde_json::to_string(&schema).unwrap(),
            concat!(
                r#"{"type":"object","description":"A thing.","properties":{"name":{"type":"string"},"#,
                r#""age":{"type":["integer","null"],"minimum":0,"maximum":255},"flag":{"type":"boolean"}},"#,
                r#""required":["name"],"additionalProperties":false,"x-aliases":{"title":"name"}}"#
            )
        );
    }

    #[test]
    fn string_enums_and_tagged_enums() {
        assert_eq!(
            serde_json::to_string(&string_enum(Some("Mood."), &["up", "down"])).unwrap(),
            r#"{"type":"string","description":"Mood.","enum":["up","down"]}"#
        );
        let variant = object(None, vec![Property::tag("kind", "unit")]);
        assert_eq!(
            serde_json::to_string(&one_of(Some("E."), vec![variant])).unwrap(),
            concat!(
                r#"{"oneOf":[{"type":"object","properties":{"kind":{"const":"unit"}},"#,
                r#""required":["kind"],"additionalProperties":false}],"description":"E."}"#
            )
        );
    }

    #[test]
    fn tuples_and_arrays_have_a_fixed_length() {
        let pair = <(u8, String)>::field_schema();
        assert_eq!(
            serde_json::to_string(&pair).unwrap(),
            concat!(
                r#"{"type":"array","prefixItems":[{"type":"integer","minimum":0,"maximum":255},"#,
                r#"{"type":"string"}],"items":false,"minItems":2,"maxItems":2}"#
            )
        );
        let prefix = tuple(Some("P."), vec![Property::of::<bool>("")], true);
        assert_eq!(
            prefix,
            json!({"type": "array", "description": "P.", "prefixItems": [{"type": "boolean"}], "items": false, "maxItems": 1})
        );
        assert_eq!(
            <[bool; 2]>::field_schema(),
            json!({"type": "array", "items": {"type": "boolean"}, "minItems": 2, "maxItems": 2})
        );
    }

    #[test]
    fn newtypes_take_the_struct_description_where_the_field_has_none() {
        let plain = newtype(Some("Outer."), Property::of::<String>(""));
        assert_eq!(plain, json!({"type": "string", "description": "Outer."}));
        let own = newtype(
            Some("Outer."),
            Property::of::<String>("").description("Inner."),
        );
        assert_eq!(own["description"], "Inner.");
        assert_eq!(newtype(None, Property::of::<u64>("")), u64::field_schema());
    }

    #[test]
    fn names_aliases_and_catch_alls() {
        let mut names = string_enum(None, &["a", "b"]);
        name_aliases(&mut names, &[("x", "a")]);
        assert_eq!(names["x-aliases"], json!({"x": "a"}));
        let mut untouched = string_enum(None, &["a"]);
        name_aliases(&mut untouched, &[]);
        assert!(untouched.get("x-aliases").is_none());
        let tag = Property::tag("t", "a")
            .tag_aliases(&["x", "y"])
            .into_schema();
        assert_eq!(
            tag,
            json!({"const": "a", "x-aliases": {"x": "a", "y": "a"}})
        );
        assert_eq!(
            other_name(&["a", "x"]),
            json!({"type": "string", "not": {"enum": ["a", "x"]}})
        );
        assert_eq!(
            any_of(Some("U."), vec![json!({"type": "null"})]),
            json!({"anyOf": [{"type": "null"}], "description": "U."})
        );
        let optional = Property::of::<Option<u8>>("k").required();
        let schema = object(None, vec![optional]);
        assert_eq!(schema["required"], json!(["k"]));
    }

    #[test]
    fn a_tagged_newtype_is_its_object_with_the_tag_first() {
        let inner = object(
            Some("Inner."),
            vec![
                Property::of::<String>("name").alias("title"),
                Property::of::<Option<u8>>("age"),
            ],
        );
        let schema = tagged_newtype(None, Property::tag("type", "person"), inner);
        assert_eq!(
            serde_json::to_string(&schema).unwrap(),
            concat!(
                r#"{"type":"object","description":"Inner.","properties":{"type":{"const":"person"},"#,
                r#""name":{"type":"string"},"age":{"type":["integer","null"],"minimum":0,"maximum":255}},"#,
                r#""required":["type","name"],"additionalProperties":false,"x-aliases":{"title":"name"}}"#
            )
        );
        let number = tagged_newtype(None, Property::tag("type", "n"), u8::field_schema());
        let set = crate::schema::SchemaSet::new("N", number);
        let message = set.validator().unwrap_err().to_string();
        assert!(
            message.contains("must hold a struct with named fields"),
            "{message}"
        );
    }

    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Foreign {
        /// The title.
        title: String,
        count: Option<u8>,
    }

    #[test]
    fn schemars_schemas_are_brought_to_the_convention() {
        let schema = schemars_schema::<Foreign>();
        assert_eq!(schema["type"], "object");
        assert!(schema.get("title").is_none() && schema.get("$schema").is_none());
        assert_eq!(schema["additionalProperties"], false);
        assert_eq!(schema["properties"]["title"]["description"], "The title.");
        assert_eq!(schema["required"], json!(["title"]));
        assert_eq!(schemars_schema::<Value>(), json!({}));
    }

    struct Cyclic;
    impl FieldSchema for Cyclic {
        fn field_schema() -> Value {
            build_guarded::<Self>(|| json!({"type": "array", "items": Cyclic::field_schema()}))
        }
    }

    #[test]
    fn a_type_that_recurs_gets_a_def_and_refs() {
        let schema = Cyclic::field_schema();
        let body = json!({"type": "array", "items": {"$ref": "#/$defs/Cyclic"}});
        let mut expected = body.clone();
        expected["$defs"] = json!({ "Cyclic": body });
        assert_eq!(schema, expected);
        let set = crate::schema::SchemaSet::new("Cyclic", schema);
        let validator = set.validator().unwrap();
        assert!(validator.is_valid(&json!([[], [[[]]]])));
        assert!(!validator.is_valid(&json!([[1]])));
        // Nothing is left behind: a non-recursive build is inlined as ever.
        assert_eq!(build_guarded::<u8>(|| json!(1)), json!(1));
    }

    struct Pair;
    impl FieldSchema for Pair {
        fn field_schema() -> Value {
            build_guarded::<Self>(|| {
                object(
                    None,
                    vec![
                        Property::of::<Cyclic>("a"),
                        Property::of::<Cyclic>("b"),
                        Property::of::<Vec<u8>>("c"),
                    ],
                )
            })
        }
    }

    #[test]
    fn a_def_is_referred_to_wherever_else_its_type_appears() {
        let schema = Pair::field_schema();
        assert_eq!(schema["properties"]["a"], json!({"$ref": "#/$defs/Cyclic"}));
        assert_eq!(schema["properties"]["b"], json!({"$ref": "#/$defs/Cyclic"}));
        assert_eq!(
            schema["properties"]["c"],
            json!({"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 255}})
        );
        assert_eq!(schema["$defs"].as_object().unwrap().len(), 1);
    }

    #[test]
    fn def_names_drop_paths_and_join_arguments() {
        assert_eq!(
            def_name("app::model::Page<app::model::Person>"),
            "Page_Person"
        );
        assert_eq!(
            def_name("a::Pair<alloc::vec::Vec<b::X>, u8>"),
            "Pair_Vec_X_u8"
        );
        assert_eq!(def_name("Node"), "Node");
        assert_eq!(schema_name::<Vec<String>>(), "Vec_String");
    }

    #[test]
    fn flattened_structs_and_maps_merge_into_the_object() {
        struct Inner;
        impl FieldSchema for Inner {
            fn field_schema() -> Value {
                object(None, vec![Property::of::<String>("city").alias("town")])
            }
        }
        impl Flatten for Inner {
            fn flattened() -> (Value, bool) {
                (Inner::field_schema(), true)
            }
        }
        let schema = object(
            None,
            vec![
                Property::of::<String>("name"),
                Property::flatten::<Inner>(),
                Property::flatten::<HashMap<String, u64>>(),
            ],
        );
        assert_eq!(
            schema,
            json!({
                "type": "object",
                "properties": {"name": {"type": "string"}, "city": {"type": "string"}},
                "required": ["name", "city"],
                "additionalProperties": {"type": "integer", "minimum": 0},
                "x-aliases": {"town": "city"}
            })
        );
        let optional = object(None, vec![Property::flatten::<Option<Inner>>()]);
        assert_eq!(optional["required"], json!([]));
        // A hand-written impl that is no object: a schema error saying so.
        struct Scalar;
        impl Flatten for Scalar {
            fn flattened() -> (Value, bool) {
                (json!({"type": "string"}), true)
            }
        }
        let broken = object(None, vec![Property::flatten::<Scalar>()]);
        let message = crate::schema::SchemaSet::new("B", broken)
            .validator()
            .unwrap_err()
            .to_string();
        assert!(message.contains("needs a struct or a map"), "{message}");
    }

    #[test]
    fn generic_sets_are_built_once_per_type() {
        let first = schema_set_of::<Vec<u8>>(|| crate::schema::SchemaSet::new("a", json!({})));
        let again = schema_set_of::<Vec<u8>>(|| crate::schema::SchemaSet::new("b", json!({})));
        let other = schema_set_of::<Vec<i8>>(|| crate::schema::SchemaSet::new("c", json!({})));
        assert!(std::ptr::eq(first, again));
        assert_eq!((again.name(), other.name()), ("a", "c"));
    }
}
