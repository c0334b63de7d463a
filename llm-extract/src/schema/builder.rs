//! Helpers the derive's generated code calls to build a type's generic schema.
//!
//! Generated code reaches it through `llm_extract::__private`. Only the grounding marks ([`GROUNDED`],
//! [`KEY`], [`mark_grounded`]) are public API, re-exported by [`crate::ground`]; nothing else here is
//! covered by semver.
//! The shapes built here are the *generic schema convention* every other module consumes:
//! closed objects with properties in declaration order, `Option<T>` as a nullable `T`, internally
//! tagged enums as a `oneOf` of closed objects whose first property is a `const` tag, string enums
//! as `{"type":"string","enum":[...]}`, constraints next to the `"type"` they constrain.
//!
//! # How a derived type nests
//!
//! `#[derive(Extract)]` implements [`FieldSchema`] for the type, next to `Extract`. A struct's schema
//! is built by asking each field type for its [`FieldSchema::field_schema`]; the impls below cover the
//! standard leaf and container types, and a derived type answers for itself. Nested schemas are
//! rebuilt rather than read from the nested type's `static`, so building a schema never re-enters a
//! `OnceLock` (which would deadlock, not fail, on a recursive type).
//!
//! # Recursive types
//!
//! Recursive types are not supported. The derive rejects a field that names its own type; a cycle
//! through other types (`A` holds a `B`, `B` holds an `A`) is a compile-time cycle error: each
//! derived type's [`FieldSchema::NESTING`] is computed from its fields' and evaluated by the
//! compiler. A hand-written impl that recurses is caught at run time by [`build_guarded`], whose
//! schema then fails to compile with the cycle spelled out, instead of overflowing the stack.

use serde_json::{json, Map, Value};
use std::any::TypeId;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};

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

    /// How many derived types deep this type nests. The derive computes it from its fields' and
    /// has the compiler evaluate it, so a type that contains itself through other types (`A`
    /// holds a `B` that holds an `A`) is a compile-time cycle error rather than a run-time one.
    const NESTING: usize = 0;

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
    const NESTING: usize = T::NESTING;
    const OPTIONAL: bool = true;

    fn field_schema() -> Value {
        nullable(T::field_schema())
    }
}

impl<T: FieldSchema + ?Sized> FieldSchema for Box<T> {
    const NESTING: usize = T::NESTING;
    const OPTIONAL: bool = T::OPTIONAL;

    fn field_schema() -> Value {
        T::field_schema()
    }
}

impl<T: FieldSchema> FieldSchema for Vec<T> {
    const NESTING: usize = T::NESTING;
    fn field_schema() -> Value {
        json!({ "type": "array", "items": T::field_schema() })
    }
}

impl<T: FieldSchema> FieldSchema for VecDeque<T> {
    const NESTING: usize = T::NESTING;
    fn field_schema() -> Value {
        json!({ "type": "array", "items": T::field_schema() })
    }
}

impl<T: FieldSchema, S> FieldSchema for HashSet<T, S> {
    const NESTING: usize = T::NESTING;
    fn field_schema() -> Value {
        json!({ "type": "array", "items": T::field_schema(), "uniqueItems": true })
    }
}

impl<T: FieldSchema> FieldSchema for BTreeSet<T> {
    const NESTING: usize = T::NESTING;
    fn field_schema() -> Value {
        json!({ "type": "array", "items": T::field_schema(), "uniqueItems": true })
    }
}

impl<T: FieldSchema> FieldSchema for BTreeMap<String, T> {
    const NESTING: usize = T::NESTING;
    fn field_schema() -> Value {
        json!({ "type": "object", "additionalProperties": T::field_schema() })
    }
}

impl<T: FieldSchema, S> FieldSchema for HashMap<String, T, S> {
    const NESTING: usize = T::NESTING;
    fn field_schema() -> Value {
        json!({ "type": "object", "additionalProperties": T::field_schema() })
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
pub fn object(description: Option<&str>, properties: Vec<Property>) -> Value {
    let mut schema = Map::new();
    schema.insert("type".into(), "object".into());
    if let Some(text) = description {
        schema.insert("description".into(), text.into());
    }
    let mut props = Map::new();
    let mut required = Vec::new();
    let mut aliases = Map::new();
    for property in properties {
        if property.required {
            required.push(Value::from(property.name));
        }
        for alias in property.aliases {
            aliases.insert(alias.into(), property.name.into());
        }
        props.insert(property.name.into(), property.schema);
    }
    schema.insert("properties".into(), Value::Object(props));
    schema.insert("required".into(), Value::Array(required));
    schema.insert("additionalProperties".into(), false.into());
    if !aliases.is_empty() {
        schema.insert("x-aliases".into(), Value::Object(aliases));
    }
    Value::Object(schema)
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

/// `schema`, also accepting `null`.
///
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
        // equivalent `{}` our convention (and the Ollama dialect's check) expects.
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

/// The largest of `nestings` (0 for none): the derive's `NESTING` is one more than its fields'.
pub const fn deepest(nestings: &[usize]) -> usize {
    let mut deepest = 0;
    let mut i = 0;
    while i < nestings.len() {
        if nestings[i] > deepest {
            deepest = nestings[i];
        }
        i += 1;
    }
    deepest
}

thread_local! {
    /// The types whose schemas this thread is building, outermost first.
    static BUILDING: RefCell<Vec<(TypeId, &'static str)>> = const { RefCell::new(Vec::new()) };
}

/// Builds `T`'s schema with `build`, refusing to recurse into `T` while it is already being built.
///
/// Recursive types are not supported. A derived type that contains itself is a compile error
/// (directly: the derive names the field; through other types: the cycle of [`FieldSchema::NESTING`]).
/// Only a hand-written [`FieldSchema`] can still recurse at run time; then the schema built here,
/// at the point where the type recurs, is one that cannot be compiled, so every use of it fails
/// with a [`SchemaError`](crate::SchemaError) that names the cycle, instead of overflowing the stack.
pub fn build_guarded<T: ?Sized + 'static>(build: impl FnOnce() -> Value) -> Value {
    let id = TypeId::of::<T>();
    let name = std::any::type_name::<T>();
    let cycle = BUILDING.with(|stack| {
        let stack = stack.borrow();
        if stack.iter().any(|(building, _)| *building == id) {
            let mut cycle: Vec<&str> = stack
                .iter()
                .skip_while(|(building, _)| *building != id)
                .map(|(_, name)| *name)
                .collect();
            cycle.push(name);
            Some(cycle.join(" -> "))
        } else {
            None
        }
    });
    if let Some(cycle) = cycle {
        // Not a JSON Schema type: compiling the schema fails with this as its message.
        return json!({ "type": format!(
            "`{name}` contains itself ({cycle}); recursive types are not supported: break the \
             cycle, e.g. with a `serde_json::Value` field or `#[serde(skip)]`"
        ) });
    }
    BUILDING.with(|stack| stack.borrow_mut().push((id, name)));
    // Pops on unwind too, so a panicking build leaves the stack as it found it.
    struct Pop;
    impl Drop for Pop {
        fn drop(&mut self) {
            BUILDING.with(|stack| stack.borrow_mut().pop());
        }
    }
    let _pop = Pop;
    build()
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
            build_guarded::<Self>(|| json!({"items": Cyclic::field_schema()}))
        }
    }

    #[test]
    fn recursion_at_run_time_is_a_schema_error_naming_the_cycle() {
        let set = crate::SchemaSet::new("Cyclic", Cyclic::field_schema());
        let message = set.validator().unwrap_err().to_string();
        assert!(message.contains("contains itself"), "{message}");
        assert!(message.contains("Cyclic -> "), "{message}");
        // The guard left the stack as it found it: a non-recursive build still works.
        assert_eq!(build_guarded::<u8>(|| json!(1)), json!(1));
    }

    #[test]
    fn nesting_follows_containers() {
        assert_eq!(deepest(&[]), 0);
        assert_eq!(deepest(&[1, 3, 2]), 3);
        assert_eq!(<Vec<Option<Box<String>>> as FieldSchema>::NESTING, 0);
    }
}
