//! Lowering the generic schema for each provider [`Dialect`].
//!
//! The generic schema (see [`super`]) is what we validate locally, always. A lowering is only what we
//! *send*: a [`Lowering`] holds the schema a dialect receives, whether the provider's strict mode takes it,
//! and every keyword left out of it ([`Dropped`], with its path). A dropped keyword is still enforced: the
//! repair loop validates each answer against the full schema. Only a schema that no form of the provider's
//! request can carry is a [`SchemaError::Unsupported`] naming the path and what to do instead, raised
//! before any request is made.
//!
//! # The shared walk
//! Every dialect reads each node through one shared walk, which rewrites what every provider reads alike
//! before the dialect's own rules (one file per provider) decide what is sent:
//! - `x-` extension keys (such as `x-aliases`) are removed; the grounding marks ([`GROUNDED`]) stay only in
//!   a grounded lowering.
//! - A local `$ref` (any JSON pointer, read through `schema/node.rs`) is kept as a reference into the sent
//!   schema's root `$defs` where the dialect takes references (`Refs::Keep`), or inlined where it does not
//!   (`Refs::Unroll`); a recursive reference is then unrolled [`UNROLL_DEPTH`] times, and the level
//!   below goes out as a schema accepting nothing, which the parent turns into "absent" (an optional
//!   property left out, a union branch left out, an empty array). A remote `$ref` is refused.
//! - `allOf` is merged into its parent: properties are united (a property named twice gets both schemas,
//!   merged in turn), `required` lists united, types intersected, lower bounds raised and upper bounds
//!   lowered; a keyword two parts give different values that do not merge (two `pattern`s, two `anyOf`s)
//!   keeps the first and is reported dropped.
//! - `oneOf` goes out as `anyOf`; when the branches are not provably disjoint (tagged variants, externally
//!   tagged objects with distinct keys, distinct types or values), `oneOf` is reported dropped: at most one
//!   branch matching is then checked locally.
//! - Keywords beside `anyOf` are moved into every branch (`A and (B or C)` is `(A and B) or (A and C)`):
//!   providers ignore keywords beside a union.
//! - Array-form `items` (drafts 4 to 2019-09) becomes `prefixItems`, `additionalItems` its `items`;
//!   `items: false` after a tuple becomes a `maxItems` bound. Boolean `exclusiveMinimum`/`exclusiveMaximum`
//!   (draft 4) become their numeric form.
//! - `propertyNames` listing the names (`enum`/`const`, the form of a map with enum keys) becomes the
//!   properties it allows, each with the map's value schema, and the object is closed: the same values.
//! - `if`/`then`/`else`, `dependentRequired`, `dependentSchemas`, `dependencies`, `not` and the other
//!   assertions no provider takes are dropped and reported. (`if`/`then`/`else` and the dependencies have
//!   an exact `anyOf` form only with `not`, which none of these providers takes.)
//! - The walk counts the schema nodes it copies ([`WORK_LIMIT`]; references inlined have their own
//!   bounds, [`INLINE_LIMIT`] and [`INLINE_NODE_LIMIT`]): a schema past the budget is
//!   [`SchemaError::Unsupported`] naming the part being read, in a time bounded by the schema alone.
//!
//! # The dialects
//! - [`Dialect::Generic`]: the generic schema minus its `x-` keys (grounded: with its marks), with a map
//!   keyed by listed names closed on them as above (llguidance ignores `propertyNames`): what the
//!   embedded engine's llguidance grammar receives.
//! - [`Dialect::Gbnf`]: `gbnf.rs`. [`Dialect::OpenAiStrict`]: `openai.rs`. [`Dialect::Anthropic`]:
//!   `anthropic.rs`. [`Dialect::Gemini`]: `gemini.rs`. Each file's documentation lists what the provider
//!   takes, with its source. The two with a strict mode (OpenAI, Anthropic) share their object rule,
//!   their fallback to the non-strict form and their object root: `strict.rs`.

mod anthropic;
mod gbnf;
mod gemini;
mod openai;
mod strict;

use super::builder::GROUNDED;
use super::node;
use super::Dialect;
use crate::error::SchemaError;
use serde_json::{Map, Value};
use std::collections::HashSet;

pub use openai::OPENAI_MAX_DEPTH;

/// How many times a dialect that cannot send recursion (`Refs::Unroll`) inlines a recursive `$ref`
/// along one path before the level below is left out.
pub const UNROLL_DEPTH: usize = 3;

/// After this many references inlined in one lowering, a recursion is no longer unrolled (its first
/// repetition is left out): a schema whose definitions refer to one another many times would otherwise
/// grow exponentially with [`UNROLL_DEPTH`].
const UNROLL_BUDGET: usize = 2_000;

/// The most references one lowering inlines: beyond, the dialect cannot express the schema (a schema
/// whose references form a wide acyclic graph inlines to a tree exponentially larger).
pub const INLINE_LIMIT: usize = 20_000;

/// The most schema nodes one lowering copies in by inlining references: a few large definitions that
/// refer to one another reach it long before [`INLINE_LIMIT`] copies, and the lowering stays fast.
pub const INLINE_NODE_LIMIT: usize = 200_000;

/// The most schema nodes one lowering copies in all: every node it reads is copied with what it
/// holds, and the keywords beside a union are copied into each of its branches. A budget of work,
/// not of time: a schema whose parts are read many times over (a large tree under many levels, a
/// long union beside many keywords) stops here with an error naming the part being read, in a
/// time that depends on the schema alone, not on the machine. Three times what the costliest
/// schema of SchemaStore's that lowers copies (1.7 million nodes).
pub const WORK_LIMIT: usize = 5_000_000;

/// A keyword left out of what is sent (the local validator still checks it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dropped {
    /// The keyword, e.g. `"patternProperties"`.
    pub keyword: String,
    /// A JSON pointer into the generic schema: the schema that holds the keyword (for a keyword merged
    /// in from `allOf` or a `$ref`, the schema it was merged into).
    pub path: String,
}

/// One schema lowered for one dialect: what is sent, and what the provider will not enforce.
#[derive(Debug, Clone, PartialEq)]
pub struct Lowering {
    schema: Value,
    strict: bool,
    dropped: Vec<Dropped>,
    relaxed: Option<String>,
    wrapped: bool,
}

/// The one property of the object a root that is not an object is sent wrapped in, for a provider that
/// takes object roots only (OpenAI, Anthropic): `{"type": "object", "properties": {"value": <root>},
/// "required": ["value"], "additionalProperties": false}`, the root's `$defs`/`definitions` hoisted to
/// the wrapper and its references into itself pointed into the wrapper. The answer, `{"value": X}`, is
/// read as `X`: the caller never sees the wrapper.
pub const WRAPPER_KEY: &str = "value";

impl Lowering {
    /// The schema as the dialect receives it.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// Whether the provider's strict mode takes the schema. `false` for a dialect with a strict mode
    /// (OpenAI, Anthropic) means the schema goes out in the provider's non-strict form, which the
    /// provider follows on a best-effort basis: see [`Lowering::relaxed`].
    pub fn strict(&self) -> bool {
        self.strict
    }

    /// Why the strict form could not carry the schema (the first construct it cannot express), when the
    /// lowering is not strict.
    pub fn relaxed(&self) -> Option<&str> {
        self.relaxed.as_deref()
    }

    /// Whether the schema sent wraps a root that is not an object in an object (see [`WRAPPER_KEY`]):
    /// the provider's answer is then `{"value": X}`, whose `X` is the answer to the schema.
    pub fn is_wrapped(&self) -> bool {
        self.wrapped
    }

    /// This lowering as the lowering of the wrapper of a root (see [`wrap`]): the paths of its dropped
    /// keywords point into the root again.
    fn wrapped(mut self) -> Self {
        let prefix = format!("/properties/{WRAPPER_KEY}");
        for dropped in &mut self.dropped {
            if let Some(rest) = dropped.path.strip_prefix(&prefix) {
                if rest.is_empty() || rest.starts_with('/') {
                    dropped.path = rest.to_owned();
                }
            }
        }
        self.wrapped = true;
        self
    }

    /// The keywords left out of what is sent, with their paths, in the order met.
    pub fn dropped(&self) -> &[Dropped] {
        &self.dropped
    }

    /// One sentence naming what `dialect`'s provider will not enforce of the schema (checked locally
    /// instead), or `None` when it enforces all of it.
    ///
    /// ```
    /// use llm_extract::schema::{dialect, Dialect};
    /// use serde_json::json;
    ///
    /// let schema = json!({ "type": "object", "properties": { "tags": { "type": "array",
    ///     "items": { "type": "string" }, "uniqueItems": true } }, "required": ["tags"] });
    /// let lowered = dialect::lower(&schema, Dialect::Gemini).unwrap();
    /// assert_eq!(
    ///     lowered.notice(Dialect::Gemini).unwrap(),
    ///     "gemini will not enforce uniqueItems (checked locally)"
    /// );
    /// ```
    pub fn notice(&self, dialect: Dialect) -> Option<String> {
        if let Some(reason) = &self.relaxed {
            return Some(format!(
                "{dialect} takes this schema only without strict mode, so it enforces none of it \
                 (checked locally): {reason}"
            ));
        }
        let names = self.dropped_keywords();
        if names.is_empty() {
            return None;
        }
        Some(format!(
            "{dialect} will not enforce {} (checked locally)",
            names.join(", ")
        ))
    }

    /// The names of the dropped keywords, each once, sorted.
    pub fn dropped_keywords(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.dropped.iter().map(|d| d.keyword.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        names
    }
}

/// Lowers `generic` (a schema following the generic convention) for `dialect`.
///
/// ```
/// use llm_extract::schema::{dialect, Dialect};
/// use serde_json::json;
///
/// let generic = json!({
///     "type": "object",
///     "properties": { "nickname": { "type": ["string", "null"], "maxLength": 20 } },
///     "required": [],
///     "additionalProperties": false,
///     "x-aliases": { "nick": "nickname" }
/// });
/// let strict = dialect::lower(&generic, Dialect::OpenAiStrict).unwrap();
/// assert_eq!(strict.schema(), &json!({
///     "type": "object",
///     "properties": { "nickname": { "type": ["string", "null"] } },
///     "required": ["nickname"],
///     "additionalProperties": false
/// }));
/// assert!(strict.strict());
/// assert_eq!(strict.dropped_keywords(), ["maxLength"]);
/// ```
///
/// # Errors
/// [`SchemaError::Unsupported`] when no form of the provider's request can carry the schema (e.g. a
/// remote `$ref`, or for GBNF a value that is `true` where the converter needs a schema object).
pub fn lower(generic: &Value, dialect: Dialect) -> Result<Lowering, SchemaError> {
    lower_marked(generic, dialect, false)
}

/// [`lower`], except that [`Dialect::Generic`] and [`Dialect::Gbnf`] keep the grounding marks
/// (`"x-grounded": true`, see [`GROUNDED`]) on the strings that must be spans of the source: the schema a
/// backend that grounds while decoding (the embedded engine) turns into its grammar. The other dialects
/// are lowered as by [`lower`]: their servers only see what they enforce.
///
/// # Errors
/// As [`lower`].
pub fn lower_grounded(generic: &Value, dialect: Dialect) -> Result<Lowering, SchemaError> {
    lower_marked(generic, dialect, true)
}

/// The schema of [`lower`] alone.
///
/// # Errors
/// As [`lower`].
pub fn render(generic: &Value, dialect: Dialect) -> Result<Value, SchemaError> {
    lower(generic, dialect).map(|lowering| lowering.schema)
}

/// The schema of [`lower_grounded`] alone.
///
/// # Errors
/// As [`lower`].
pub fn render_grounded(generic: &Value, dialect: Dialect) -> Result<Value, SchemaError> {
    lower_grounded(generic, dialect).map(|lowering| lowering.schema)
}

fn lower_marked(
    generic: &Value,
    dialect: Dialect,
    grounding: bool,
) -> Result<Lowering, SchemaError> {
    match dialect {
        Dialect::Generic => Ok(Lowering {
            schema: strip_extensions(generic, grounding),
            strict: true,
            dropped: Vec::new(),
            relaxed: None,
            wrapped: false,
        }),
        Dialect::Gbnf => run(&gbnf::Gbnf, generic, grounding),
        Dialect::OpenAiStrict => strict::lower(&openai::OpenAiStrict, generic),
        Dialect::Anthropic => strict::lower(&anthropic::Anthropic, generic),
        Dialect::Gemini => run(&gemini::Gemini, generic, grounding),
    }
}

/// The non-strict form of a dialect with a strict mode: the generic schema minus its `x-` keys, with
/// the reason the strict form failed.
fn relaxed(generic: &Value, reason: SchemaError) -> Lowering {
    Lowering {
        schema: strip_extensions(generic, false),
        strict: false,
        dropped: Vec::new(),
        relaxed: Some(reason.to_string()),
        wrapped: false,
    }
}

/// `generic` wrapped in an object with one required property, [`WRAPPER_KEY`]: its `$defs` and
/// `definitions` are hoisted to the wrapper, and its other references into itself (`#`, `#/items`...)
/// point into the wrapper's property, so that every reference still resolves.
fn wrap(generic: &Value) -> Value {
    let mut root = generic.clone();
    let mut out = Map::new();
    out.insert("type".into(), Value::from("object"));
    let mut hoisted = Vec::new();
    if let Value::Object(map) = &mut root {
        for key in ["$defs", "definitions"] {
            if let Some(mut defs) = map.remove(key) {
                repoint(&mut defs);
                hoisted.push((key, defs));
            }
        }
    }
    repoint(&mut root);
    let mut properties = Map::new();
    properties.insert(WRAPPER_KEY.into(), root);
    out.insert("properties".into(), Value::Object(properties));
    out.insert("required".into(), Value::from(vec![WRAPPER_KEY]));
    out.insert("additionalProperties".into(), Value::Bool(false));
    for (key, defs) in hoisted {
        out.insert(key.into(), defs);
    }
    Value::Object(out)
}

/// Points every local `$ref` of `schema` that is not into `$defs`/`definitions` into the wrapper's
/// property (`#/items` to `#/properties/value/items`). Values (`const`, `enum`, `default`, `examples`)
/// are data, and left alone.
fn repoint(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                match (key.as_str(), value) {
                    ("$ref", Value::String(reference)) => {
                        if let Some(rest) = reference.strip_prefix('#') {
                            let hoisted = ["/$defs/", "/definitions/"]
                                .iter()
                                .any(|defs| rest.starts_with(defs));
                            if !hoisted {
                                *reference = format!("#/properties/{WRAPPER_KEY}{rest}");
                            }
                        }
                    }
                    ("const" | "enum" | "default" | "examples", _) => {}
                    (_, value) => repoint(value),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(repoint),
        _ => {}
    }
}

/// How a dialect sends `$ref`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Refs {
    /// Kept as references into the root's `$defs` (recursion included).
    Keep,
    /// Inlined; recursion unrolled [`UNROLL_DEPTH`] times.
    Unroll,
}

/// One dialect's rules: what a prepared node goes out as.
pub(super) trait Rules {
    /// The dialect's name, for errors.
    const NAME: &'static str;
    /// How the dialect sends references.
    const REFS: Refs;

    /// Lowers one prepared node that is not a union (its children through [`child`]).
    fn node(
        &self,
        cx: &mut Walk<'_>,
        map: Map<String, Value>,
        path: &Pointer,
    ) -> Result<Value, SchemaError>;

    /// What a schema accepting any value (`true`, `{}`) goes out as.
    fn any(&self, cx: &mut Walk<'_>, path: &Pointer) -> Result<Value, SchemaError>;

    /// What a reference into the root's `$defs` goes out as.
    fn reference(&self, name: &str) -> Value {
        let mut out = Map::new();
        out.insert(
            "$ref".into(),
            Value::String(format!("#/$defs/{}", node::escape_token(name))),
        );
        Value::Object(out)
    }

    /// The error for a construct the dialect cannot express.
    fn unsupported(&self, what: &str, path: &Pointer, hint: &str) -> SchemaError {
        unsupported(Self::NAME, what, path, hint)
    }
}

fn unsupported(dialect: &'static str, what: &str, path: &Pointer, hint: &str) -> SchemaError {
    SchemaError::Unsupported {
        dialect,
        what: what.to_owned(),
        path: path.shown(),
        hint: hint.to_owned(),
    }
}

/// Lowers `generic` with `rules`: the root, then every definition a kept reference points at.
pub(super) fn run<R: Rules>(
    rules: &R,
    generic: &Value,
    grounding: bool,
) -> Result<Lowering, SchemaError> {
    let mut cx = Walk::new(R::NAME, generic, R::REFS, grounding);
    let root = Pointer::default();
    let schema = match cx.prepare(generic, &root, true)? {
        Prepared::Any => rules.any(&mut cx, &root)?,
        Prepared::Never => Value::Bool(false),
        Prepared::Ref(name) => rules.reference(&name),
        Prepared::Node(map, entered) => {
            let out = node(rules, &mut cx, map, &root);
            cx.leave(entered);
            out?
        }
    };
    if schema == Value::Bool(false) {
        return Err(rules.unsupported(
            "a schema that accepts no value (false, or a recursion with no way to end)",
            &root,
            "make the recursive field optional (Option<Box<T>>, a Vec, or #[serde(default)])",
        ));
    }
    let mut defs = Map::new();
    let mut next = 0;
    while let Some((name, reference)) = cx.defs.get(next).cloned() {
        next += 1;
        let Some(target) = node::target(generic, &reference) else {
            continue;
        };
        let path = Pointer(reference.trim_start_matches('#').to_owned());
        let lowered = child(rules, &mut cx, target, &path)?;
        defs.insert(name, lowered);
    }
    let mut schema = schema;
    if !defs.is_empty() {
        if let Value::Object(map) = &mut schema {
            map.insert("$defs".into(), Value::Object(defs));
        }
    }
    Ok(Lowering {
        schema,
        strict: true,
        dropped: cx.dropped,
        relaxed: None,
        wrapped: false,
    })
}

/// Lowers one subschema with `rules`.
pub(super) fn child<R: Rules>(
    rules: &R,
    cx: &mut Walk<'_>,
    raw: &Value,
    path: &Pointer,
) -> Result<Value, SchemaError> {
    match cx.prepare(raw, path, false)? {
        Prepared::Any => rules.any(cx, path),
        Prepared::Never => Ok(Value::Bool(false)),
        Prepared::Ref(name) => Ok(rules.reference(&name)),
        Prepared::Node(map, entered) => {
            let out = node(rules, cx, map, path);
            cx.leave(entered);
            out
        }
    }
}

/// Lowers one prepared node: a union (`anyOf`) the same way for every dialect, any other node by the
/// dialect's [`Rules::node`].
fn node<R: Rules>(
    rules: &R,
    cx: &mut Walk<'_>,
    map: Map<String, Value>,
    path: &Pointer,
) -> Result<Value, SchemaError> {
    let Some(Value::Array(list)) = map.get("anyOf") else {
        return rules.node(cx, map, path);
    };
    let Some(lowered) = branches(rules, cx, list, path)? else {
        return Ok(Value::Bool(false));
    };
    Ok(union(&map, lowered))
}

/// `{"anyOf": branches}` with the schema's description, if any.
fn union(map: &Map<String, Value>, branches: Vec<Value>) -> Value {
    let mut out = Map::new();
    out.insert("anyOf".into(), Value::Array(branches));
    if let Some(description) = map.get("description") {
        out.insert("description".into(), description.clone());
    }
    Value::Object(out)
}

/// Lowers the branches of a union, leaving out those that accept nothing; `None` when none is left.
pub(super) fn branches<R: Rules>(
    rules: &R,
    cx: &mut Walk<'_>,
    branches: &[Value],
    path: &Pointer,
) -> Result<Option<Vec<Value>>, SchemaError> {
    let mut out = Vec::with_capacity(branches.len());
    for (i, branch) in branches.iter().enumerate() {
        let lowered = child(rules, cx, branch, &path.child("anyOf").index(i))?;
        if lowered != Value::Bool(false) {
            out.push(lowered);
        }
    }
    Ok(if out.is_empty() { None } else { Some(out) })
}

/// Lowers an object's properties; a property that accepts nothing is left out when optional. `None`
/// when a required property accepts nothing (the object then accepts nothing).
pub(super) fn properties<R: Rules>(
    rules: &R,
    cx: &mut Walk<'_>,
    map: &Map<String, Value>,
    path: &Pointer,
) -> Result<Option<Map<String, Value>>, SchemaError> {
    let Some(Value::Object(properties)) = map.get("properties") else {
        return Ok(Some(Map::new()));
    };
    let required = required_of(map);
    let mut out = Map::with_capacity(properties.len());
    for (name, sub) in properties {
        let lowered = child(rules, cx, sub, &path.child("properties").child(name))?;
        if lowered == Value::Bool(false) {
            if required.contains(&name.as_str()) {
                return Ok(None);
            }
            continue;
        }
        out.insert(name.clone(), lowered);
    }
    Ok(Some(out))
}

/// The names an object schema requires.
pub(super) fn required_of(map: &Map<String, Value>) -> Vec<&str> {
    map.get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// A prepared node.
pub(super) enum Prepared {
    /// Any value.
    Any,
    /// No value.
    Never,
    /// A kept reference to the named definition.
    Ref(String),
    /// A node to lower, and how many inlined references to leave once it is lowered.
    Node(Map<String, Value>, usize),
}

/// The state of one lowering: the generic root, what was dropped, the definitions kept references
/// point at, and the references being inlined.
pub(super) struct Walk<'a> {
    name: &'static str,
    /// How many references were inlined so far.
    inlined: usize,
    /// How many schema nodes those references copied in.
    inlined_nodes: usize,
    /// How many schema nodes the walk copied so far (see [`WORK_LIMIT`]).
    work: usize,
    root: &'a Value,
    refs: Refs,
    grounding: bool,
    dropped: Vec<Dropped>,
    /// The dropped keywords and paths already recorded.
    seen: HashSet<(String, String)>,
    /// Kept definitions: their name in the sent `$defs` and the reference in the generic schema.
    defs: Vec<(String, String)>,
    /// The references inlined on the way to the current node.
    stack: Vec<String>,
    /// How many objects deep the current node is (for limits on nesting).
    pub(super) depth: usize,
}

/// Keywords that constrain values: those a dialect leaves out are reported as dropped. Other keys are
/// unknown (vendor extensions, typos) and constrain nothing.
pub(super) const ASSERTIONS: &[&str] = &[
    "type",
    "enum",
    "const",
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
    "unevaluatedProperties",
    "items",
    "prefixItems",
    "additionalItems",
    "unevaluatedItems",
    "contains",
    "minContains",
    "maxContains",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "$ref",
    "$dynamicRef",
    "$recursiveRef",
];

impl<'a> Walk<'a> {
    fn new(name: &'static str, root: &'a Value, refs: Refs, grounding: bool) -> Self {
        Walk {
            name,
            inlined: 0,
            inlined_nodes: 0,
            work: 0,
            root,
            refs,
            grounding,
            dropped: Vec::new(),
            seen: HashSet::new(),
            defs: Vec::new(),
            stack: Vec::new(),
            depth: 0,
        }
    }

    /// Records `keyword` at `path` as left out of what is sent, when it constrains values.
    pub(super) fn drop(&mut self, keyword: &str, path: &Pointer) {
        if !ASSERTIONS.contains(&keyword) {
            return;
        }
        let path = path.shown();
        if self.seen.insert((keyword.to_owned(), path.clone())) {
            self.dropped.push(Dropped {
                keyword: keyword.to_owned(),
                path,
            });
        }
    }

    /// Counts the copy of `count` more schema nodes at `path` against [`WORK_LIMIT`].
    fn spend(&mut self, count: usize, path: &Pointer) -> Result<(), SchemaError> {
        self.work = self.work.saturating_add(count);
        if self.work > WORK_LIMIT {
            return Err(unsupported(
                self.name,
                &format!("a schema whose lowering copies more than {WORK_LIMIT} schema nodes"),
                path,
                "send it to a provider that takes references, or simplify its definitions \
                 (a large definition used in many places, a long union beside other keywords)",
            ));
        }
        Ok(())
    }

    /// The nodes of `value`, counted up to one past what is left of [`WORK_LIMIT`].
    fn size(&self, value: &Value) -> usize {
        nodes_up_to(
            value,
            WORK_LIMIT.saturating_sub(self.work).saturating_add(2),
        )
    }

    /// Whether the grounding marks are kept.
    pub(super) fn grounding(&self) -> bool {
        self.grounding
    }

    fn leave(&mut self, entered: usize) {
        let keep = self.stack.len().saturating_sub(entered);
        self.stack.truncate(keep);
    }

    /// Reads one node: see the module documentation for the rewrites. `inline` inlines a `$ref` on
    /// this node even where references are kept (the root, and the parts of an `allOf`).
    pub(super) fn prepare(
        &mut self,
        raw: &Value,
        path: &Pointer,
        inline: bool,
    ) -> Result<Prepared, SchemaError> {
        let source = match raw {
            Value::Bool(false) => return Ok(Prepared::Never),
            Value::Object(map) => map,
            _ => return Ok(Prepared::Any),
        };
        self.spend(self.size(raw), path)?;
        let mut map: Map<String, Value> = source
            .iter()
            .filter(|(key, value)| {
                !key.starts_with("x-")
                    || (self.grounding && key.as_str() == GROUNDED && **value == Value::Bool(true))
            })
            .filter(|(key, _)| !matches!(key.as_str(), "$defs" | "definitions"))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        let mut entered = 0;

        if let Some(reference) = map.remove("$ref") {
            let Value::String(reference) = reference else {
                return Ok(Prepared::Any);
            };
            match self.reference(&reference, path, inline || self.refs == Refs::Unroll)? {
                Resolved::Ref(name) => {
                    for key in map.keys().filter(|key| constrains(key)) {
                        self.drop(key, path);
                    }
                    return Ok(Prepared::Ref(name));
                }
                Resolved::Never => return Ok(Prepared::Never),
                Resolved::Any => {}
                Resolved::Inline(target) => {
                    self.stack.push(reference.clone());
                    entered += 1;
                    match self.prepare(target, path, false)? {
                        Prepared::Node(mut base, more) => {
                            entered += more;
                            let siblings = std::mem::take(&mut map);
                            if !merge(&mut base, siblings, path, &mut self.dropped) {
                                self.leave(entered);
                                return Ok(Prepared::Never);
                            }
                            map = base;
                        }
                        Prepared::Any => {}
                        Prepared::Never => {
                            self.leave(entered);
                            return Ok(Prepared::Never);
                        }
                        Prepared::Ref(name) => {
                            self.leave(entered);
                            return Ok(Prepared::Ref(name));
                        }
                    }
                }
            }
        }

        if let Some(parts) = map.remove("allOf") {
            for (i, part) in parts.as_array().into_iter().flatten().enumerate() {
                let part_path = path.child("allOf").index(i);
                match self.prepare(part, &part_path, true)? {
                    Prepared::Any => {}
                    Prepared::Never => {
                        self.leave(entered);
                        return Ok(Prepared::Never);
                    }
                    // A part that is a recursion already being inlined: left to the local check.
                    Prepared::Ref(_) => self.drop("allOf", path),
                    Prepared::Node(part, more) => {
                        entered += more;
                        if !merge(&mut map, part, path, &mut self.dropped) {
                            self.leave(entered);
                            return Ok(Prepared::Never);
                        }
                    }
                }
            }
        }

        if let Some(branches) = map.remove("oneOf") {
            if map.contains_key("anyOf") {
                self.drop("oneOf", path);
            } else {
                let disjoint = branches.as_array().is_some_and(|list| {
                    let resolved: Vec<Value> = list
                        .iter()
                        .map(|b| node::resolve(self.root, b).clone())
                        .collect();
                    pairwise_disjoint(&resolved)
                });
                if !disjoint {
                    self.drop("oneOf", path);
                }
                map.insert("anyOf".into(), branches);
            }
        }
        if let Some(Value::Array(branches)) = map.get("anyOf") {
            let siblings: Map<String, Value> = map
                .iter()
                .filter(|(key, _)| constrains(key) && key.as_str() != "anyOf")
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect();
            if !siblings.is_empty() {
                let siblings = Value::Object(siblings);
                let copies = self.size(&siblings).saturating_mul(branches.len());
                self.spend(copies, path)?;
                let distributed: Vec<Value> = branches
                    .iter()
                    .map(|branch| {
                        let mut both = Map::new();
                        both.insert(
                            "allOf".into(),
                            Value::Array(vec![siblings.clone(), branch.clone()]),
                        );
                        Value::Object(both)
                    })
                    .collect();
                map.retain(|key, _| !constrains(key));
                map.insert("anyOf".into(), Value::Array(distributed));
            }
        }

        normalize_arrays(&mut map);
        normalize_bounds(&mut map);
        property_names(&mut map);
        Ok(Prepared::Node(map, entered))
    }

    /// Follows a `$ref`: a kept reference's definition name, or the target to inline.
    fn reference(
        &mut self,
        reference: &str,
        path: &Pointer,
        inline: bool,
    ) -> Result<Resolved<'a>, SchemaError> {
        let root = self.root;
        // A reference this walk cannot follow (to another document, to an `$id` or an anchor) goes out
        // as any value: the validator, which resolved it, checks it.
        let Some(target) = node::target(root, reference) else {
            self.drop("$ref", path);
            return Ok(Resolved::Any);
        };
        let depth = self.stack.iter().filter(|r| *r == reference).count();
        if inline {
            let limit = match self.refs {
                Refs::Unroll if self.inlined < UNROLL_BUDGET => UNROLL_DEPTH,
                _ => 1,
            };
            if depth < limit {
                self.inlined += 1;
                let budget = INLINE_NODE_LIMIT.saturating_sub(self.inlined_nodes);
                self.inlined_nodes += nodes_up_to(target, budget.saturating_add(1));
                if self.inlined_nodes > INLINE_NODE_LIMIT {
                    return Err(unsupported(
                        self.name,
                        &format!(
                            "a schema whose references inline to more than {INLINE_NODE_LIMIT} nodes"
                        ),
                        path,
                        "send it to a provider that takes references, or simplify its definitions",
                    ));
                }
                if self.inlined > INLINE_LIMIT {
                    return Err(unsupported(
                        self.name,
                        &format!(
                            "a schema whose references inline to more than {INLINE_LIMIT} copies"
                        ),
                        path,
                        "send it to a provider that takes references, or simplify its definitions",
                    ));
                }
                return Ok(Resolved::Inline(target));
            }
            if self.refs == Refs::Unroll {
                self.drop("$ref", path);
                return Ok(Resolved::Never);
            }
        }
        Ok(Resolved::Ref(self.def_name(reference)))
    }

    /// The name in the sent `$defs` of the definition `reference` points at.
    fn def_name(&mut self, reference: &str) -> String {
        if let Some((name, _)) = self.defs.iter().find(|(_, r)| r == reference) {
            return name.clone();
        }
        let pointer = reference.trim_start_matches('#');
        let last = pointer.rsplit('/').next().unwrap_or_default();
        let mut base: String = last
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if base.is_empty() {
            base = "root".into();
        }
        let mut name = base.clone();
        let mut n = 2;
        while self.defs.iter().any(|(taken, _)| *taken == name) {
            name = format!("{base}_{n}");
            n += 1;
        }
        self.defs.push((name.clone(), reference.to_owned()));
        name
    }
}

/// `propertyNames` listing the names (the form of a map with enum keys) becomes those properties, each
/// with the map's value schema, none required, and the object is closed: the same values, in a form
/// every dialect and llguidance enforce (llguidance ignores `propertyNames`).
fn property_names(map: &mut Map<String, Value>) {
    let names: Vec<String> = match map.get("propertyNames") {
        Some(Value::Object(names)) => match (names.get("enum"), names.get("const")) {
            (Some(Value::Array(values)), _) => {
                match values.iter().map(Value::as_str).collect::<Option<Vec<_>>>() {
                    Some(names) => names.into_iter().map(str::to_owned).collect(),
                    None => return,
                }
            }
            (_, Some(Value::String(name))) => vec![name.clone()],
            _ => return,
        },
        _ => return,
    };
    if map.contains_key("patternProperties")
        || map.get("additionalProperties") == Some(&Value::Bool(false))
    {
        return;
    }
    let value = match map.remove("additionalProperties") {
        Some(Value::Bool(true)) | None => Value::Object(Map::new()),
        Some(schema) => schema,
    };
    let properties = map
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(properties) = properties {
        for name in names {
            properties.entry(name).or_insert_with(|| value.clone());
        }
    }
    map.remove("propertyNames");
    map.insert("additionalProperties".into(), Value::Bool(false));
}

/// What a `$ref` leads to.
enum Resolved<'a> {
    Any,
    Ref(String),
    Inline(&'a Value),
    Never,
}

/// Whether a key constrains values (as opposed to annotating, or being unknown).
fn constrains(key: &str) -> bool {
    ASSERTIONS.contains(&key) || key == GROUNDED
}

/// Array-form `items` and `additionalItems` to `prefixItems` and `items`; `items: false` after a tuple
/// to a `maxItems` bound.
fn normalize_arrays(map: &mut Map<String, Value>) {
    if let Some(Value::Array(tuple)) = map.get("items").cloned() {
        map.remove("items");
        if !map.contains_key("prefixItems") {
            map.insert("prefixItems".into(), Value::Array(tuple));
        }
        if let Some(rest) = map.remove("additionalItems") {
            map.insert("items".into(), rest);
        }
    } else {
        map.remove("additionalItems");
    }
    if let Some(Value::Array(tuple)) = map.get("prefixItems") {
        let len = tuple.len() as u64;
        if map.get("items") == Some(&Value::Bool(false)) {
            map.remove("items");
            let bound = map
                .get("maxItems")
                .and_then(Value::as_u64)
                .map_or(len, |max| max.min(len));
            map.insert("maxItems".into(), Value::from(bound));
        }
    }
}

/// Draft 4's boolean `exclusiveMinimum`/`exclusiveMaximum` to their numeric form.
fn normalize_bounds(map: &mut Map<String, Value>) {
    for (exclusive, inclusive) in [
        ("exclusiveMinimum", "minimum"),
        ("exclusiveMaximum", "maximum"),
    ] {
        if let Some(Value::Bool(flag)) = map.get(exclusive).cloned() {
            map.remove(exclusive);
            if flag {
                if let Some(bound) = map.remove(inclusive) {
                    map.insert(exclusive.into(), bound);
                }
            }
        }
    }
}

/// Merges one `allOf` part (or the keywords beside a `$ref`) into `base`; `false` when the two
/// cannot both hold (no value is valid).
fn merge(
    base: &mut Map<String, Value>,
    part: Map<String, Value>,
    path: &Pointer,
    dropped: &mut Vec<Dropped>,
) -> bool {
    let mut report = |keyword: &str| {
        if ASSERTIONS.contains(&keyword) {
            dropped.push(Dropped {
                keyword: keyword.to_owned(),
                path: path.shown(),
            });
        }
    };
    for (key, value) in part {
        let Some(current) = base.get_mut(&key) else {
            base.insert(key, value);
            continue;
        };
        if *current == value {
            continue;
        }
        match key.as_str() {
            "properties" => {
                if let (Value::Object(mine), Value::Object(theirs)) = (current, value) {
                    for (name, schema) in theirs {
                        match mine.get_mut(&name) {
                            Some(existing) => {
                                let both = Value::Array(vec![existing.take(), schema]);
                                let mut all = Map::new();
                                all.insert("allOf".into(), both);
                                *existing = Value::Object(all);
                            }
                            None => {
                                mine.insert(name, schema);
                            }
                        }
                    }
                }
            }
            "required" => {
                if let (Value::Array(mine), Value::Array(theirs)) = (current, value) {
                    for name in theirs {
                        if !mine.contains(&name) {
                            mine.push(name);
                        }
                    }
                }
            }
            "type" => {
                let mine = type_names(current);
                let theirs = type_names(&value);
                let mut common: Vec<Value> = Vec::new();
                for a in &mine {
                    for b in &theirs {
                        let meet = match (a.as_str(), b.as_str()) {
                            (x, y) if x == y => Some(x),
                            ("integer", "number") | ("number", "integer") => Some("integer"),
                            _ => None,
                        };
                        if let Some(meet) = meet {
                            let meet = Value::from(meet);
                            if !common.contains(&meet) {
                                common.push(meet);
                            }
                        }
                    }
                }
                match common.len() {
                    0 => return false,
                    1 => *current = common.remove(0),
                    _ => *current = Value::Array(common),
                }
            }
            "enum" | "const" => {
                let mine = values_of(&key, current);
                let theirs = values_of(&key, &value);
                let common: Vec<Value> = mine.into_iter().filter(|v| theirs.contains(v)).collect();
                if common.is_empty() {
                    return false;
                }
                *current = if key == "const" {
                    common.into_iter().next().unwrap_or_default()
                } else {
                    Value::Array(common)
                };
            }
            "minimum" | "exclusiveMinimum" | "minLength" | "minItems" | "minProperties"
            | "minContains" => {
                if value.as_f64() > current.as_f64() {
                    *current = value;
                }
            }
            "maximum" | "exclusiveMaximum" | "maxLength" | "maxItems" | "maxProperties"
            | "maxContains" => {
                if value.as_f64() < current.as_f64() {
                    *current = value;
                }
            }
            "uniqueItems" => {
                *current = Value::Bool(current.as_bool() == Some(true) || value == true)
            }
            "additionalProperties" if value == Value::Bool(false) => *current = value,
            "additionalProperties" if *current == Value::Bool(false) => {}
            "items" | "contains" | "propertyNames" | "additionalProperties" => {
                let mut all = Map::new();
                all.insert("allOf".into(), Value::Array(vec![current.take(), value]));
                *current = Value::Object(all);
            }
            other => report(other),
        }
    }
    true
}

fn type_names(value: &Value) -> Vec<String> {
    match value {
        Value::String(name) => vec![name.clone()],
        Value::Array(names) => names
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

fn values_of(key: &str, value: &Value) -> Vec<Value> {
    match (key, value) {
        ("enum", Value::Array(values)) => values.clone(),
        ("const", value) => vec![value.clone()],
        _ => Vec::new(),
    }
}

/// The generic schema minus every `x-` key (only keys of schemas: a property named `x-id` stays);
/// with `marks`, the grounding marks stay.
fn strip_extensions(schema: &Value, marks: bool) -> Value {
    let Value::Object(map) = schema else {
        return schema.clone();
    };
    let mut out = Map::with_capacity(map.len());
    for (key, value) in map {
        if key.starts_with("x-") && !(marks && key == GROUNDED) {
            continue;
        }
        let value = if SUBSCHEMA.contains(&key.as_str()) {
            match value {
                Value::Array(items) => Value::Array(
                    items
                        .iter()
                        .map(|item| strip_extensions(item, marks))
                        .collect(),
                ),
                other => strip_extensions(other, marks),
            }
        } else if SUBSCHEMA_MAP.contains(&key.as_str()) {
            match value {
                Value::Object(entries) => Value::Object(
                    entries
                        .iter()
                        .map(|(name, sub)| (name.clone(), strip_extensions(sub, marks)))
                        .collect(),
                ),
                other => other.clone(),
            }
        } else if SUBSCHEMA_LIST.contains(&key.as_str()) {
            match value {
                Value::Array(items) => Value::Array(
                    items
                        .iter()
                        .map(|item| strip_extensions(item, marks))
                        .collect(),
                ),
                other => other.clone(),
            }
        } else {
            value.clone()
        };
        out.insert(key.clone(), value);
    }
    property_names(&mut out);
    Value::Object(out)
}

/// Keywords whose value is one subschema (or, for `items` before 2020-12, a list of them).
const SUBSCHEMA: &[&str] = &[
    "items",
    "additionalProperties",
    "additionalItems",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
];
/// Keywords whose value maps names to subschemas.
const SUBSCHEMA_MAP: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];
/// Keywords whose value is a list of subschemas.
const SUBSCHEMA_LIST: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];

/// A JSON pointer into the generic schema, for errors and dropped keywords.
#[derive(Debug, Clone, Default)]
pub(super) struct Pointer(String);

impl Pointer {
    pub(super) fn child(&self, token: &str) -> Pointer {
        Pointer(format!("{}/{}", self.0, node::escape_token(token)))
    }

    pub(super) fn index(&self, index: usize) -> Pointer {
        Pointer(format!("{}/{}", self.0, index))
    }

    /// The pointer as written in messages: the root is `/`.
    pub(super) fn shown(&self) -> String {
        if self.0.is_empty() {
            "/".to_owned()
        } else {
            self.0.clone()
        }
    }
}

/// Whether no value can satisfy two of `branches` at once (so `oneOf` means the same as `anyOf`).
///
/// Conservative: `false` when disjointness cannot be shown.
pub(crate) fn pairwise_disjoint(branches: &[Value]) -> bool {
    branches
        .iter()
        .enumerate()
        .all(|(i, a)| branches.iter().skip(i + 1).all(|b| disjoint(a, b)))
}

fn disjoint(a: &Value, b: &Value) -> bool {
    let (Value::Object(a), Value::Object(b)) = (a, b) else {
        return false;
    };
    if let (Some(a_types), Some(b_types)) = (type_set(a), type_set(b)) {
        let overlap = a_types.iter().any(|x| {
            b_types.iter().any(|y| {
                x == y || (*x == "integer" && *y == "number") || (*x == "number" && *y == "integer")
            })
        });
        if !overlap {
            return true;
        }
    }
    if let (Some(a_values), Some(b_values)) = (value_set(a), value_set(b)) {
        if a_values.iter().all(|v| !b_values.contains(v)) {
            return true;
        }
    }
    tags_differ(a, b) || keys_exclude(a, b) || keys_exclude(b, a)
}

/// The types a schema can take, when it says (absent `type` means any type: `None`).
fn type_set(schema: &Map<String, Value>) -> Option<Vec<&str>> {
    if let Some(values) = value_set(schema) {
        return Some(values.iter().map(json_type).collect());
    }
    schema.get("type").map(|_| node::types_of(schema))
}

/// The values a schema allows, when it lists them (`const` or `enum`).
fn value_set(schema: &Map<String, Value>) -> Option<Vec<&Value>> {
    if let Some(value) = schema.get("const") {
        return Some(vec![value]);
    }
    match schema.get("enum") {
        Some(Value::Array(values)) => Some(values.iter().collect()),
        _ => None,
    }
}

/// The JSON Schema type of a value.
pub(super) fn json_type(value: &&Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Whether two object schemas require a common property to take values no value shares
/// (the discriminator of a tagged enum).
fn tags_differ(a: &Map<String, Value>, b: &Map<String, Value>) -> bool {
    let (Some(Value::Object(a_props)), Some(Value::Object(b_props))) =
        (a.get("properties"), b.get("properties"))
    else {
        return false;
    };
    a_props.iter().any(|(name, a_sub)| {
        let Some(b_sub) = b_props.get(name) else {
            return false;
        };
        let (Value::Object(a_sub), Value::Object(b_sub)) = (a_sub, b_sub) else {
            return false;
        };
        match (value_set(a_sub), value_set(b_sub)) {
            (Some(x), Some(y)) => {
                required_of(a).contains(&name.as_str())
                    && required_of(b).contains(&name.as_str())
                    && x.iter().all(|v| !y.contains(v))
            }
            _ => false,
        }
    })
}

/// Whether `a` requires a key that the closed object `b` does not allow (externally tagged variants:
/// `{"Card": ..}` against `{"Cash": ..}`), both being objects.
fn keys_exclude(a: &Map<String, Value>, b: &Map<String, Value>) -> bool {
    let objects = |schema: &Map<String, Value>| node::types_of(schema) == ["object"];
    if !(objects(a) && objects(b)) || b.get("additionalProperties") != Some(&Value::Bool(false)) {
        return false;
    }
    if b.contains_key("patternProperties") {
        return false;
    }
    let allowed = b.get("properties").and_then(Value::as_object);
    required_of(a)
        .iter()
        .any(|name| !allowed.is_some_and(|props| props.contains_key(*name)))
}

#[cfg(test)]
mod tests;

/// How many nodes (objects, arrays, scalars) `value` holds, counting no further than `limit`.
fn nodes_up_to(value: &Value, limit: usize) -> usize {
    let mut count = 0;
    let mut pending = vec![value];
    while let Some(next) = pending.pop() {
        count += 1;
        if count >= limit {
            return count;
        }
        match next {
            Value::Object(map) => pending.extend(map.values()),
            Value::Array(items) => pending.extend(items),
            _ => {}
        }
    }
    count
}
