//! What the dialects with a strict mode (OpenAI, Anthropic: `openai.rs`, `anthropic.rs`) share: the
//! strict lowering or, when it cannot carry the schema, the non-strict form, each with an object
//! root (a root that is not one sent wrapped); and the rules both apply. An object must list its
//! properties and be closed (any other object makes the lowering non-strict), goes out with its
//! type, description, properties, `required` (as the dialect lists it) and
//! `"additionalProperties": false`, every other keyword dropped. An array must say what its items
//! are, a tuple goes out as an array of the union of its item schemas, and a `format` the provider
//! does not document is dropped. What each keyword of any other node goes out as is the dialect's
//! own rule ([`Strict::keyword`]).

use super::{branches, properties, Lowering, Pointer, Refs, Rules, Walk};
use crate::error::SchemaError;
use serde_json::{Map, Value};

/// The `format` values both providers document (OpenAI's strict mode, Anthropic's structured
/// outputs; see their files).
const FORMATS: &[&str] = &[
    "date-time",
    "time",
    "date",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uuid",
];

/// Whether the strict dialect `S` documents the `format` value `format`.
fn documented<S: Strict>(format: &str) -> bool {
    FORMATS.contains(&format) || S::MORE_FORMATS.contains(&format)
}

/// A JSON object, as a schema node is read.
pub(super) type Object = Map<String, Value>;

/// A dialect with a strict mode: its own rules beside the shared ones. Every such dialect is a
/// [`Rules`] through them.
pub(super) trait Strict {
    /// The dialect's name, for errors.
    const NAME: &'static str;
    /// How the dialect sends references.
    const REFS: Refs;
    /// The `format` values the provider documents beyond [`FORMATS`] (any other is dropped).
    const MORE_FORMATS: &'static [&'static str] = &[];
    /// The deepest nesting of objects the provider accepts, if it has a limit.
    const MAX_DEPTH: Option<usize> = None;
    /// What to do instead of asking for any JSON value, which strict mode cannot express.
    const ANY_HINT: &'static str;

    /// Writes what goes out before a node's keywords (nothing, unless the dialect says).
    fn begin(&self, _map: &Map<String, Value>, _out: &mut Map<String, Value>) {}

    /// What a keyword of a node that is not an object goes out as: kept, dropped, written into the
    /// output by the rule itself, or the node accepts nothing. `type`, `description`, `format` and
    /// `prefixItems` are the shared rules'.
    ///
    /// # Errors
    /// A part of the value the dialect cannot express.
    fn keyword(&self, at: Keyed<'_, '_>) -> Result<Keyword, SchemaError>;

    /// The `required` list of an object (`map`) whose lowered properties are `lowered`, or `None`
    /// to send none.
    fn required(
        &self,
        map: &Map<String, Value>,
        lowered: &Map<String, Value>,
    ) -> Option<Vec<Value>>;
}

/// One keyword of a node, as [`Strict::keyword`] reads it.
pub(super) struct Keyed<'a, 'w> {
    /// The walk.
    pub cx: &'a mut Walk<'w>,
    /// The node.
    pub map: &'a Map<String, Value>,
    /// The keyword.
    pub key: &'a str,
    /// Its value.
    pub value: &'a Value,
    /// Where the node is.
    pub path: &'a Pointer,
    /// What goes out for the node so far.
    pub out: &'a mut Map<String, Value>,
}

/// What a keyword of a node goes out as (see [`Strict::keyword`]).
pub(super) enum Keyword {
    /// Sent as it is.
    Keep,
    /// Left out, and reported dropped (checked locally).
    Drop,
    /// Written into the output by the rule (or left out silently: it says nothing more).
    Written,
    /// The node accepts no value.
    Never,
}

impl<S: Strict> Rules for S {
    const NAME: &'static str = S::NAME;
    const REFS: Refs = S::REFS;

    fn any(&self, _cx: &mut Walk<'_>, path: &Pointer) -> Result<Value, SchemaError> {
        Err(self.unsupported("any JSON value (true or {})", path, S::ANY_HINT))
    }

    fn node(
        &self,
        cx: &mut Walk<'_>,
        map: Map<String, Value>,
        path: &Pointer,
    ) -> Result<Value, SchemaError> {
        match kind_of(self, &map, path)? {
            Kind::Object => return object(self, cx, &map, path),
            Kind::Any => return self.any(cx, path),
            Kind::Other => {}
        }
        let mut out = Map::with_capacity(map.len());
        self.begin(&map, &mut out);
        for (key, value) in &map {
            let keyword = match key.as_str() {
                "type" | "description" => Keyword::Keep,
                "format" if value.as_str().is_some_and(documented::<S>) => Keyword::Keep,
                "format" => Keyword::Drop,
                "prefixItems" => {
                    let items = tuple_items(self, cx, &map, path)?;
                    out.insert("items".into(), items);
                    Keyword::Drop
                }
                _ => self.keyword(Keyed {
                    cx,
                    map: &map,
                    key,
                    value,
                    path,
                    out: &mut out,
                })?,
            };
            match keyword {
                Keyword::Keep => {
                    out.insert(key.clone(), value.clone());
                }
                Keyword::Drop => cx.drop(key, path),
                Keyword::Written => {}
                Keyword::Never => return Ok(Value::Bool(false)),
            }
        }
        Ok(Value::Object(out))
    }
}

/// An object in strict mode: it must list its properties and be closed; it goes out with its type,
/// description, properties, `required` as the dialect lists it, and `"additionalProperties": false`,
/// every other keyword dropped. `false` when a required property accepts nothing.
///
/// # Errors
/// An object with arbitrary or extra keys, or nested deeper than the dialect's limit.
fn object<S: Strict>(
    rules: &S,
    cx: &mut Walk<'_>,
    map: &Map<String, Value>,
    path: &Pointer,
) -> Result<Value, SchemaError> {
    if let Some(max) = S::MAX_DEPTH.filter(|&max| cx.depth >= max) {
        return Err(rules.unsupported(
            &format!("more than {max} levels of nested objects"),
            path,
            "flatten the type",
        ));
    }
    let extra = !matches!(map.get("additionalProperties"), Some(Value::Bool(false)));
    if !map.contains_key("properties") && extra {
        return Err(rules.unsupported(
            "an object with arbitrary keys",
            path,
            "use a struct with named fields, or a list of key/value structs",
        ));
    }
    if extra && map.contains_key("additionalProperties") {
        return Err(rules.unsupported(
            "an object with extra keys beside its properties",
            path,
            "close the object (\"additionalProperties\": false)",
        ));
    }
    cx.depth += 1;
    let lowered = properties(rules, cx, map, path);
    cx.depth -= 1;
    let Some(lowered) = lowered? else {
        return Ok(Value::Bool(false));
    };
    for key in map.keys() {
        if !matches!(
            key.as_str(),
            "type" | "description" | "properties" | "required" | "additionalProperties"
        ) {
            cx.drop(key, path);
        }
    }
    let required = rules.required(map, &lowered);
    let mut out = Map::new();
    out.insert(
        "type".to_owned(),
        map.get("type").cloned().unwrap_or_else(|| "object".into()),
    );
    if let Some(description) = map.get("description") {
        out.insert("description".to_owned(), description.clone());
    }
    out.insert("properties".to_owned(), Value::Object(lowered));
    if let Some(required) = required {
        out.insert("required".to_owned(), Value::Array(required));
    }
    out.insert("additionalProperties".to_owned(), Value::Bool(false));
    Ok(Value::Object(out))
}

/// The lowering of `generic` with `rules`: the strict one if it succeeds, else the non-strict form.
/// Both forms need an object root: a root that is not one (an array, a string, a union, a reference
/// to one) is sent wrapped (see [`super::WRAPPER_KEY`]).
pub(super) fn lower<R: Rules>(rules: &R, generic: &Value) -> Result<Lowering, SchemaError> {
    if let Some(root) = object_root(generic) {
        match super::run(rules, &root, false) {
            Ok(lowering) if is_object(&lowering.schema) => return Ok(lowering),
            Ok(_) => {}
            Err(error) => return Ok(super::relaxed(&root, error)),
        }
    }
    let wrapper = super::wrap(generic);
    let lowering = match super::run(rules, &wrapper, false) {
        Ok(lowering) => lowering,
        Err(error) => super::relaxed(&wrapper, error),
    };
    Ok(lowering.wrapped())
}

/// Whether a lowered schema is an object (not a reference to one).
fn is_object(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

/// The generic schema with a root that describes objects only, or `None` when it admits no object. A
/// root that says nothing of its type (`{"properties": ..}`, `{"required": ..}`) or lists several types is
/// narrowed to objects: a tightening, which the provider requires (its root must be an object).
fn object_root(generic: &Value) -> Option<Value> {
    let mut root = generic.clone();
    let Value::Object(map) = &mut root else {
        return None;
    };
    if ["$ref", "anyOf", "oneOf", "enum", "const"]
        .iter()
        .any(|key| map.contains_key(*key))
    {
        // Followed to its end, a root reference may still be an object; a union or a value list is not
        // one object.
        let resolved = crate::schema::node::resolve(generic, generic);
        let object = resolved
            .as_object()
            .is_some_and(|target| crate::schema::node::types_of(target) == ["object"]);
        return object.then(|| generic.clone());
    }
    let types = crate::schema::node::types_of(map);
    if types.is_empty() || types.contains(&"object") {
        map.insert("type".into(), Value::from("object"));
        return Some(root);
    }
    None
}

/// What a node is to a strict dialect (OpenAI, Anthropic), by its types.
enum Kind {
    /// An object (not a list of values): the dialect's object rule.
    Object,
    /// No type and no list of values: any value, the dialect's [`Rules::any`].
    Any,
    /// A scalar, an array (whose `items` are checked), or a list of values.
    Other,
}

/// What `map` is to a strict dialect.
///
/// # Errors
/// An array that does not say what its items are.
fn kind_of<R: Rules>(
    rules: &R,
    map: &Map<String, Value>,
    path: &Pointer,
) -> Result<Kind, SchemaError> {
    let types = crate::schema::node::types_of(map);
    let valued = map.contains_key("enum") || map.contains_key("const");
    if types.contains(&"object") && !valued {
        return Ok(Kind::Object);
    }
    if !valued && types.contains(&"array") {
        check_items(rules, map, path)?;
    }
    Ok(if !valued && types.is_empty() {
        Kind::Any
    } else {
        Kind::Other
    })
}

/// An array schema must say what its items are.
fn check_items<R: Rules>(
    rules: &R,
    map: &Map<String, Value>,
    path: &Pointer,
) -> Result<(), SchemaError> {
    if map.contains_key("items") || map.contains_key("prefixItems") {
        return Ok(());
    }
    Err(rules.unsupported(
        "an array of any values (no \"items\")",
        path,
        "give the sequence a concrete item type",
    ))
}

/// A tuple as one item schema: the union of its position schemas (and of `items`, the rest).
fn tuple_items<R: Rules>(
    rules: &R,
    cx: &mut Walk<'_>,
    map: &Map<String, Value>,
    path: &Pointer,
) -> Result<Value, SchemaError> {
    let mut all: Vec<Value> = map
        .get("prefixItems")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if let Some(rest) = map.get("items") {
        all.push(rest.clone());
    }
    let Some(mut lowered) = branches(rules, cx, &all, &path.child("prefixItems"))? else {
        return Err(rules.unsupported(
            "a tuple whose items accept no value",
            path,
            "fix the schema",
        ));
    };
    lowered.dedup();
    Ok(if lowered.len() == 1 {
        lowered.remove(0)
    } else {
        let mut out = Map::new();
        out.insert("anyOf".into(), Value::Array(lowered));
        Value::Object(out)
    })
}
