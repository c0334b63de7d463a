//! Runtime schemas: a JSON Schema held in a value or a file, or a signature shorthand, with the same
//! capabilities a derived type has (dialects, instructions, parsing, validation, extraction).

use super::node;
use super::signature::{self, SignatureError};
use super::{Dialect, SchemaSet, Shape};
use crate::error::SchemaError;
use crate::validate::{Formats, Validator};
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::rc::Rc;
use std::sync::Arc;

/// Keywords of the generation schema whose value is one schema.
const ONE_SCHEMA: &[&str] = &[
    "additionalProperties",
    "items",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
    "unevaluatedItems",
    "unevaluatedProperties",
];

/// Keywords of the generation schema whose value is a map of schemas.
const SCHEMA_MAP: &[&str] = &["properties", "patternProperties", "dependentSchemas"];

/// Keywords of the generation schema whose value is a list of schemas.
const SCHEMA_LIST: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];

/// Keywords of the generation schema whose value is data, copied as written: assertions, `format`,
/// and the annotations a prompt may show.
const COPIED: &[&str] = &[
    "type",
    "enum",
    "const",
    "required",
    "dependentRequired",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minContains",
    "maxContains",
    "minProperties",
    "maxProperties",
    "format",
    "description",
    "title",
    "default",
    "examples",
];

/// Keywords beside which an object's properties may be completed elsewhere (another schema may
/// admit a key its `properties` do not list): such an object is not closed for generation.
const OPENING: &[&str] = &[
    "patternProperties",
    "additionalProperties",
    "unevaluatedProperties",
    "allOf",
    "anyOf",
    "oneOf",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "dependencies",
    "$ref",
    "$dynamicRef",
    "$recursiveRef",
];

/// Keywords that constrain objects: beside them, an alternative (`anyOf`, `oneOf`) or a `$ref`
/// target is not closed for generation (the object's own properties would be forbidden).
const OBJECT_KEYWORDS: &[&str] = &[
    "properties",
    "required",
    "patternProperties",
    "additionalProperties",
    "unevaluatedProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
];

/// The mark of a reference expanded where its target may not be closed.
const OPEN: &str = "\u{1}open";

/// Deepest nesting the generation schema is built to; deeper subschemas are sent unconstrained (the
/// validator still checks them).
const MAX_DEPTH: usize = 64;

/// The most schema nodes the generation schema may copy when it inlines `$ref`s (refs that each use
/// another ref twice double the size at every level); beyond it, a definition stays a `$ref` into
/// the generation schema's `$defs`.
const MAX_EXPANDED: usize = 100_000;

/// A schema loaded at run time.
///
/// ```
/// use llm_extract::schema::DynamicSchema;
/// let schema = DynamicSchema::from_signature("(text :string) -> {sentiment (positive | negative), score :float}")?;
/// assert_eq!(schema.inputs(), ["text"]);
/// assert!(schema.schema_set().format_instructions().contains("\"positive\""));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct DynamicSchema {
    set: Arc<SchemaSet>,
    inputs: Vec<String>,
}

/// A runtime schema being configured: its name, the other documents its `$ref`s point at, and
/// which `format`s its validator asserts.
///
/// ```
/// use llm_extract::schema::DynamicSchema;
/// use serde_json::json;
/// let schema = DynamicSchema::builder(json!({"$ref": "https://example.com/person.json"}))
///     .name("Person")
///     .register("https://example.com/person.json", json!({"type": "object", "required": ["name"]}))
///     .build()?;
/// let validator = schema.schema_set().validator()?;
/// assert!(validator.is_valid(&json!({"name": "Ada", "born": 1815})));
/// assert!(!validator.is_valid(&json!({"born": 1815})));
/// # Ok::<(), llm_extract::SchemaError>(())
/// ```
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct DynamicSchemaBuilder {
    schema: Value,
    name: String,
    base_uri: Option<String>,
    documents: Vec<(String, Value)>,
    formats: Formats,
}

impl DynamicSchemaBuilder {
    /// The name sent as OpenAI's `json_schema.name` (`DynamicSchema` unless set).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The schema's own URI (where it is published: `https://example.com/schemas/order.json`):
    /// its relative `$ref`s (`address.json`) resolve against it when the schema has no `$id`.
    pub fn base_uri(mut self, uri: impl Into<String>) -> Self {
        self.base_uri = Some(uri.into());
        self
    }

    /// Registers `document` as the one a `$ref` to `uri` (`https://example.com/address.json`,
    /// optionally with a fragment: `...address.json#/$defs/Street`) points at. Nothing is ever
    /// fetched: a `$ref` to a document that is not registered is [`SchemaError::RemoteRef`].
    pub fn register(mut self, uri: impl Into<String>, document: Value) -> Self {
        let uri: String = uri.into();
        let uri = uri.trim_end_matches('#').to_owned();
        self.documents.retain(|(known, _)| known != &uri);
        self.documents.push((uri, document));
        self
    }

    /// Which `format`s the validator asserts: by default [`Formats::AnyDraft`], every format a
    /// draft defines whatever draft the schema names (`"format": "uuid"` in a draft-4 schema is
    /// checked, and a model's answer that is no UUID is repaired); [`Formats::PerDraft`] for the
    /// strict reading, where a format the schema's draft does not define is an annotation.
    ///
    /// ```
    /// use llm_extract::schema::DynamicSchema;
    /// use llm_extract::validate::Formats;
    /// use serde_json::json;
    /// let schema = json!({"$schema": "http://json-schema.org/draft-04/schema#", "format": "uuid"});
    /// let any = DynamicSchema::from_json(schema.clone())?;
    /// assert!(!any.schema_set().validator()?.is_valid(&json!("42")));
    /// let strict = DynamicSchema::builder(schema).formats(Formats::PerDraft).build()?;
    /// assert!(strict.schema_set().validator()?.is_valid(&json!("42")));
    /// # Ok::<(), llm_extract::SchemaError>(())
    /// ```
    pub fn formats(mut self, formats: Formats) -> Self {
        self.formats = formats;
        self
    }

    /// Compiles the schema: its validator (any error is the schema's), then the generation schema.
    pub fn build(self) -> Result<DynamicSchema, SchemaError> {
        let schema = encode_refs(self.schema);
        let base = self.base_uri.as_deref();
        let validator = Validator::with_formats(&schema, base, &self.documents, self.formats)?;
        let generic = generation(&schema, base, &self.documents);
        let set = SchemaSet::with_validation(self.name, generic, schema, validator);
        Ok(DynamicSchema {
            set: Arc::new(set),
            inputs: Vec::new(),
        })
    }
}

/// A runtime schema could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DynamicSchemaError {
    /// The file could not be read.
    #[error("cannot read schema file {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not JSON.
    #[error("schema file {path} is not valid JSON: {source}")]
    Json {
        /// The file.
        path: String,
        /// The JSON error.
        source: serde_json::Error,
    },
    /// The schema is not a valid JSON Schema, or refers to a document that is not registered.
    #[error(transparent)]
    Schema(#[from] SchemaError),
    /// The signature does not parse.
    #[error(transparent)]
    Signature(#[from] SignatureError),
}

impl AsRef<SchemaSet> for DynamicSchema {
    fn as_ref(&self) -> &SchemaSet {
        &self.set
    }
}

impl DynamicSchema {
    /// Loads a JSON Schema value, of the draft its `$schema` names (4, 6, 7, 2019-09 or 2020-12;
    /// 2020-12 when it names none).
    ///
    /// Values are validated against the schema as written: a value is valid exactly when it is
    /// valid for the schema (`{"type": "object"}` accepts any object), every `format` a draft
    /// defines asserted whatever draft the schema names (see [`DynamicSchemaBuilder::formats`] for
    /// the strict per-draft reading). Every schema the validator compiles is taken; annotations and unknown keywords (`$comment`, `example`, `readOnly`,
    /// vendor extensions, ...) are ignored. A `$ref` to another document is
    /// [`SchemaError::RemoteRef`] unless the document is registered (see
    /// [`DynamicSchema::builder`]); nothing is fetched. An invalid schema is
    /// [`SchemaError::Invalid`].
    ///
    /// What instructions and dialects read is the *generation* schema
    /// ([`SchemaSet::generic`]), draft 2020-12: local `$ref`s inlined within a size budget,
    /// recursive ones kept as `$ref` into its `$defs`; an object that lists `properties`, says
    /// nothing of other keys and has no other schema that could admit them is closed (a model must
    /// not invent keys; the validator still accepts what the author's schema accepts); an object
    /// without properties stays open.
    pub fn from_json(schema: Value) -> Result<Self, SchemaError> {
        Self::builder(schema).build()
    }

    /// Like [`DynamicSchema::from_json`], with the name sent as OpenAI's `json_schema.name`.
    pub fn named(name: impl Into<String>, schema: Value) -> Result<Self, SchemaError> {
        Self::builder(schema).name(name).build()
    }

    /// A runtime schema to configure before it is compiled: its name, the documents its `$ref`s
    /// point at, which `format`s are asserted.
    pub fn builder(schema: Value) -> DynamicSchemaBuilder {
        DynamicSchemaBuilder {
            schema,
            name: "DynamicSchema".to_owned(),
            base_uri: None,
            documents: Vec::new(),
            formats: Formats::default(),
        }
    }

    /// Loads a JSON Schema file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, DynamicSchemaError> {
        let path = path.as_ref();
        let shown = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|source| DynamicSchemaError::Io {
            path: shown.clone(),
            source,
        })?;
        let value: Value =
            serde_json::from_str(&text).map_err(|source| DynamicSchemaError::Json {
                path: shown,
                source,
            })?;
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("DynamicSchema")
            .to_owned();
        Ok(Self::named(name, value)?)
    }

    /// Parses the signature shorthand (see [`crate::schema::signature`]):
    /// `(text :string) -> {sentiment :string, score :float}`.
    pub fn from_signature(signature: &str) -> Result<Self, DynamicSchemaError> {
        let parsed = signature::parse(signature)?;
        let mut schema = Self::from_json(parsed.output)?;
        schema.inputs = parsed.inputs;
        Ok(schema)
    }

    /// The template variables a signature names (empty for a JSON Schema).
    pub fn inputs(&self) -> &[String] {
        &self.inputs
    }

    /// Everything derived from the schema: dialects, instructions, validator.
    pub fn schema_set(&self) -> &SchemaSet {
        &self.set
    }

    /// A shareable handle on the schema set.
    pub fn shared(&self) -> Arc<SchemaSet> {
        Arc::clone(&self.set)
    }

    /// The schema of `shape` rendered for `dialect`.
    pub fn for_dialect(&self, dialect: Dialect, shape: Shape) -> Result<&Value, SchemaError> {
        self.set.for_dialect(dialect, shape)
    }
}

/// The generation schema of `schema` (see [`DynamicSchema::from_json`]), whose `$ref`s may point into
/// `documents`.
fn generation(schema: &Value, base_uri: Option<&str>, documents: &[(String, Value)]) -> Value {
    let mut generation = Generation {
        documents,
        draft: crate::validate::draft_of(schema),
        budget: MAX_EXPANDED,
        stack: Vec::new(),
        recursive: HashSet::new(),
        done: HashMap::new(),
        names: HashMap::new(),
        defs: Map::new(),
    };
    let id = schema.get("$id").or_else(|| schema.get("id"));
    let uri = match (id.and_then(Value::as_str), base_uri) {
        (Some(id), base) if !id.starts_with('#') => join(base.unwrap_or(""), id),
        (_, Some(base)) => base.to_owned(),
        _ => String::new(),
    };
    let root = Doc {
        uri: Rc::from(uri.trim_end_matches('#')),
        root: schema,
    };
    let mut out = match generation.reference("#", &root, 0, true) {
        Value::Object(map) => map,
        Value::Bool(true) => Map::new(),
        _ => {
            let mut never = Map::new();
            never.insert("not".into(), Value::Object(Map::new()));
            never
        }
    };
    if !generation.defs.is_empty() {
        out.insert("$defs".into(), Value::Object(generation.defs));
    }
    Value::Object(out)
}

/// A document `$ref`s resolve in: the schema itself (URI `""`), a registered one, or a subschema
/// with an `$id` of its own.
#[derive(Clone)]
struct Doc<'a> {
    uri: Rc<str>,
    root: &'a Value,
}

/// The state of one generation schema being built.
struct Generation<'a> {
    documents: &'a [(String, Value)],
    /// The root's draft: older drafts' keywords are written as 2020-12 ones.
    draft: jsonschema::Draft,
    /// Nodes left to copy; inlining stops when it runs out.
    budget: usize,
    /// The references being expanded, outermost first.
    stack: Vec<String>,
    /// The references met again while being expanded.
    recursive: HashSet<String>,
    /// The generation schema of each reference expanded (copied again where inlined again).
    done: HashMap<String, Value>,
    /// The name in `$defs` of each reference kept as a `$ref`.
    names: HashMap<String, String>,
    defs: Map<String, Value>,
}

impl<'a> Generation<'a> {
    /// What a `$ref` to `reference` becomes: its target inlined, a `$ref` into `$defs` (recursive,
    /// or too large to copy again), or `{}` when the generation schema cannot follow it (an
    /// anchor, a base changed by an `$id` it does not track): the validator still checks it.
    ///
    /// `closable` says whether the target may be closed for generation (see [`Generation::node`]);
    /// a target is expanded once for each answer.
    fn reference(&mut self, reference: &str, doc: &Doc<'a>, depth: usize, closable: bool) -> Value {
        let Some((mut key, target_doc, target)) = self.locate(reference, doc) else {
            return Value::Object(Map::new());
        };
        if !closable {
            key.push_str(OPEN);
        }
        if let Some(name) = self.names.get(&key) {
            return reference_to(name);
        }
        if self.stack.contains(&key) {
            self.recursive.insert(key.clone());
            return reference_to(&self.name_for(&key));
        }
        if let Some(done) = self.done.get(&key) {
            let size = size_up_to(done, self.budget);
            if size <= self.budget {
                self.budget -= size;
                return done.clone();
            }
            let value = self.done.remove(&key).unwrap_or_default();
            let name = self.name_for(&key);
            self.defs.insert(name.clone(), value);
            return reference_to(&name);
        }
        if depth > MAX_DEPTH {
            return Value::Object(Map::new());
        }
        self.stack.push(key.clone());
        let value = self.node(target, &target_doc, depth + 1, closable);
        self.stack.pop();
        // Inlining keeps a second copy (one is cached for the next use): pay for it.
        let size = size_up_to(&value, self.budget);
        if self.recursive.contains(&key) || size > self.budget {
            let name = self.name_for(&key);
            self.defs.insert(name.clone(), value);
            return reference_to(&name);
        }
        self.budget -= size;
        self.done.insert(key, value.clone());
        value
    }

    /// The key, document and target of `reference` read in `doc`.
    fn locate(&self, reference: &str, doc: &Doc<'a>) -> Option<(String, Doc<'a>, &'a Value)> {
        let (base, fragment) = reference.split_once('#').unwrap_or((reference, ""));
        let absolute = join(&doc.uri, base);
        let doc = if base.is_empty() || *absolute == *doc.uri {
            doc.clone()
        } else {
            let (uri, root) = self.documents.iter().find(|(uri, _)| *uri == absolute)?;
            Doc {
                uri: Rc::from(uri.as_str()),
                root,
            }
        };
        let target = node::target(doc.root, &format!("#{fragment}"))?;
        // A document is keyed by where it sits, so two `$id`s spelled alike cannot meet.
        let key = format!("{}@{:p}#{fragment}", doc.uri, doc.root);
        Some((key, doc, target))
    }

    /// A name in `$defs` for the target of `key`, distinct from every other.
    fn name_for(&mut self, key: &str) -> String {
        if let Some(name) = self.names.get(key) {
            return name.clone();
        }
        let (core, open) = match key.strip_suffix(OPEN) {
            Some(core) => (core, "Open"),
            None => (key, ""),
        };
        let fragment = core.rsplit_once('#').map_or("", |(_, f)| f);
        let last = fragment.rsplit('/').next().unwrap_or("");
        let stem = match last.replace("~1", "/").replace("~0", "~") {
            empty if empty.is_empty() => format!("Root{open}"),
            named => format!("{named}{open}"),
        };
        let taken: HashSet<&String> = self.names.values().collect();
        let mut name = stem.clone();
        let mut n = 2;
        while taken.contains(&name) {
            name = format!("{stem}_{n}");
            n += 1;
        }
        self.names.insert(key.to_owned(), name.clone());
        name
    }

    /// The generation schema of one schema node. `closable`: whether the node stands alone, so
    /// that closing it (see [`closes`]) cannot forbid a key another schema beside it admits; not
    /// so for a branch of `allOf`, `if`/`then`/`else`, `not`, a dependent schema, an alternative
    /// of an object that has properties of its own, or a `$ref` target combined with keywords
    /// beside the `$ref`.
    fn node(&mut self, schema: &'a Value, doc: &Doc<'a>, depth: usize, closable: bool) -> Value {
        self.budget = self.budget.saturating_sub(1);
        let map = match schema {
            Value::Object(map) => map,
            Value::Bool(b) => return Value::Bool(*b),
            _ => return Value::Object(Map::new()),
        };
        if depth > MAX_DEPTH {
            return Value::Object(Map::new());
        }
        let id_keyword = match self.draft {
            jsonschema::Draft::Draft4 => "id",
            _ => "$id",
        };
        let doc = match map.get(id_keyword).and_then(Value::as_str) {
            Some(id) if depth > 0 && !id.starts_with('#') => Doc {
                uri: Rc::from(join(&doc.uri, id.trim_end_matches('#'))),
                root: schema,
            },
            _ => doc.clone(),
        };
        let mut out = Map::new();
        let legacy_items = map.get("items").is_some_and(Value::is_array);
        let object = OBJECT_KEYWORDS.iter().any(|k| map.contains_key(*k));
        for (key, value) in map {
            let key = key.as_str();
            let alone = match key {
                "not" | "if" | "then" | "else" | "allOf" | "dependentSchemas" => false,
                "anyOf" | "oneOf" => !object,
                _ => true,
            };
            if ONE_SCHEMA.contains(&key) && !(key == "items" && legacy_items) {
                out.insert(key.to_owned(), self.node(value, &doc, depth + 1, alone));
            } else if SCHEMA_MAP.contains(&key) {
                if let Some(entries) = value.as_object() {
                    out.insert(key.to_owned(), self.map(entries, &doc, depth, alone));
                }
            } else if SCHEMA_LIST.contains(&key) || key == "items" {
                if let Some(items) = value.as_array() {
                    let key = if key == "items" { "prefixItems" } else { key };
                    out.insert(key.to_owned(), self.list(items, &doc, depth, alone));
                }
            } else if key == "additionalItems" {
                if legacy_items {
                    out.insert("items".to_owned(), self.node(value, &doc, depth + 1, true));
                }
            } else if key == "dependencies" {
                self.dependencies(value, &doc, depth, &mut out);
            } else if COPIED.contains(&key) || key.starts_with("x-") {
                self.budget = self.budget.saturating_sub(size_up_to(value, self.budget));
                out.insert(key.to_owned(), value.clone());
            }
        }
        exclusive_bounds(&mut out);
        if closable && closes(map) {
            out.insert("additionalProperties".into(), Value::Bool(false));
        }
        let Some(reference) = map.get("$ref").and_then(Value::as_str) else {
            return Value::Object(out);
        };
        // Up to draft 7, keywords beside a `$ref` are ignored.
        let ignored = self.draft <= jsonschema::Draft::Draft7;
        let target = self.reference(reference, &doc, depth, closable && (ignored || !object));
        if ignored || out.is_empty() {
            return target;
        }
        match target {
            Value::Object(mut merged)
                if !merged.contains_key("$ref") && out.keys().all(|k| !merged.contains_key(k)) =>
            {
                merged.extend(out);
                Value::Object(merged)
            }
            Value::Object(empty) if empty.is_empty() => Value::Object(out),
            target => {
                let mut both = Map::new();
                both.insert(
                    "allOf".into(),
                    Value::Array(vec![target, Value::Object(out)]),
                );
                Value::Object(both)
            }
        }
    }

    fn map(
        &mut self,
        entries: &'a Map<String, Value>,
        doc: &Doc<'a>,
        depth: usize,
        closable: bool,
    ) -> Value {
        let mut out = Map::new();
        for (name, sub) in entries {
            out.insert(name.clone(), self.node(sub, doc, depth + 1, closable));
        }
        Value::Object(out)
    }

    fn list(&mut self, items: &'a [Value], doc: &Doc<'a>, depth: usize, closable: bool) -> Value {
        Value::Array(
            items
                .iter()
                .map(|b| self.node(b, doc, depth + 1, closable))
                .collect(),
        )
    }

    /// Draft 4–7's `dependencies`, as `dependentRequired` (lists) and `dependentSchemas` (schemas).
    fn dependencies(
        &mut self,
        value: &'a Value,
        doc: &Doc<'a>,
        depth: usize,
        out: &mut Map<String, Value>,
    ) {
        let Some(entries) = value.as_object() else {
            return;
        };
        let mut required = Map::new();
        let mut schemas = Map::new();
        for (name, dependency) in entries {
            if dependency.is_array() {
                required.insert(name.clone(), dependency.clone());
            } else {
                schemas.insert(name.clone(), self.node(dependency, doc, depth + 1, false));
            }
        }
        if !required.is_empty() {
            out.insert("dependentRequired".into(), Value::Object(required));
        }
        if !schemas.is_empty() {
            out.insert("dependentSchemas".into(), Value::Object(schemas));
        }
    }
}

/// `reference` (a URI reference without its fragment) resolved against `base`: an absolute one as
/// it is, a relative one beside the last segment of `base`'s path. Enough for the generation schema
/// to follow the references of documents laid out side by side; the validator resolves every
/// reference by the book.
fn join(base: &str, reference: &str) -> String {
    let absolute = reference.contains("://") || reference.starts_with("urn:");
    if absolute || reference.is_empty() {
        return if reference.is_empty() {
            base.to_owned()
        } else {
            reference.to_owned()
        };
    }
    match base.rfind('/') {
        Some(end) => format!("{}{reference}", &base[..=end]),
        None => reference.to_owned(),
    }
}

/// `schema` with the characters a URI may not hold (`<`, `>`, spaces, non-ASCII, ...) in its
/// `$ref`s percent-encoded: `#/definitions/Page<Item>` is the pointer its author meant, which the
/// validator reads only as `#/definitions/Page%3CItem%3E`.
fn encode_refs(mut schema: Value) -> Value {
    fn walk(node: &mut Value, depth: usize) {
        let Value::Object(map) = node else {
            return;
        };
        if depth > MAX_DEPTH {
            return;
        }
        for (key, value) in map.iter_mut() {
            match key.as_str() {
                "$ref" => {
                    if let Value::String(reference) = value {
                        if reference.bytes().any(needs_encoding) {
                            *reference = percent_encode(reference);
                        }
                    }
                }
                "properties" | "patternProperties" | "definitions" | "$defs"
                | "dependentSchemas" | "dependencies" => {
                    if let Value::Object(entries) = value {
                        entries.values_mut().for_each(|v| walk(v, depth + 1));
                    }
                }
                "allOf" | "anyOf" | "oneOf" | "prefixItems" | "items" => match value {
                    Value::Array(items) => items.iter_mut().for_each(|v| walk(v, depth + 1)),
                    other => walk(other, depth + 1),
                },
                "additionalProperties"
                | "additionalItems"
                | "contains"
                | "propertyNames"
                | "not"
                | "if"
                | "then"
                | "else"
                | "unevaluatedItems"
                | "unevaluatedProperties"
                | "contentSchema" => walk(value, depth + 1),
                _ => {}
            }
        }
    }
    walk(&mut schema, 0);
    schema
}

/// Whether a byte may not stand in a URI reference as it is.
fn needs_encoding(byte: u8) -> bool {
    !byte.is_ascii_graphic()
        || matches!(
            byte,
            b'<' | b'>' | b'"' | b'{' | b'}' | b'|' | b'\\' | b'^' | b'`'
        )
}

fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if needs_encoding(byte) {
            out.push_str(&format!("%{byte:02X}"));
        } else {
            out.push(char::from(byte));
        }
    }
    out
}

/// A `$ref` to `name` in the generation schema's `$defs`.
fn reference_to(name: &str) -> Value {
    let token = node::escape_token(name).replace('%', "%25");
    let mut map = Map::new();
    map.insert("$ref".into(), Value::String(format!("#/$defs/{token}")));
    Value::Object(map)
}

/// Draft 4's boolean `exclusiveMinimum`/`exclusiveMaximum` (which qualify `minimum`/`maximum`), as
/// 2020-12's numbers.
fn exclusive_bounds(out: &mut Map<String, Value>) {
    for (exclusive, bound) in [
        ("exclusiveMinimum", "minimum"),
        ("exclusiveMaximum", "maximum"),
    ] {
        match out.get(exclusive) {
            Some(Value::Bool(true)) => {
                out.remove(exclusive);
                if let Some(limit) = out.remove(bound) {
                    out.insert(exclusive.into(), limit);
                }
            }
            Some(Value::Bool(false)) => {
                out.remove(exclusive);
            }
            _ => {}
        }
    }
}

/// Whether an object schema lists its properties, says nothing of other keys, and has no other
/// schema that could admit one: closing it for generation keeps every value it describes with the
/// keys it lists.
fn closes(map: &Map<String, Value>) -> bool {
    let Some(Value::Object(properties)) = map.get("properties") else {
        return false;
    };
    let object = match map.get("type") {
        None => true,
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        Some(_) => false,
    };
    let required_listed = match map.get("required") {
        Some(Value::Array(names)) => names
            .iter()
            .all(|n| n.as_str().is_some_and(|n| properties.contains_key(n))),
        _ => true,
    };
    object && required_listed && !OPENING.iter().any(|k| map.contains_key(*k))
}

/// The nodes of `value`, counting no further than `limit + 1`.
fn size_up_to(value: &Value, limit: usize) -> usize {
    let mut count = 0;
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        count += 1;
        if count > limit {
            break;
        }
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.values()),
            _ => {}
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn valid(schema: &DynamicSchema, value: Value) -> bool {
        schema.schema_set().validator().unwrap().is_valid(&value)
    }

    #[test]
    fn finite_refs_are_inlined_and_listed_objects_closed_for_generation_only() {
        let schema = DynamicSchema::from_json(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {"who": {"$ref": "#/$defs/Person"}},
            "required": ["who"],
            "$defs": {"Person": {"type": "object", "properties": {"name": {"type": "string"}}}}
        }))
        .unwrap();
        assert_eq!(
            schema.schema_set().generic(),
            &json!({
                "type": "object",
                "properties": {"who": {"type": "object", "properties": {"name": {"type": "string"}}, "additionalProperties": false}},
                "required": ["who"],
                "additionalProperties": false
            })
        );
        // The author did not close the objects: validation does not either.
        assert!(valid(
            &schema,
            json!({"who": {"name": "Ada", "born": 1815}, "note": 1})
        ));
        assert!(!valid(&schema, json!({"who": {"name": 3}})));
    }

    #[test]
    fn an_open_object_stays_open() {
        let schema = DynamicSchema::from_json(json!({"type": "object"})).unwrap();
        assert_eq!(schema.schema_set().generic(), &json!({"type": "object"}));
        assert!(valid(&schema, json!({"anything": [1, 2], "at": "all"})));
        assert!(!valid(&schema, json!([])));
        // An object whose required keys are not all listed is not closed for generation either.
        let schema = DynamicSchema::from_json(json!({
            "type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "b"]
        }))
        .unwrap();
        assert!(schema
            .schema_set()
            .generic()
            .get("additionalProperties")
            .is_none());
    }

    #[test]
    fn parts_of_a_combined_object_are_not_closed() {
        let schema = DynamicSchema::from_json(json!({
            "$defs": {"Base": {"type": "object", "properties": {"id": {"type": "integer"}}}},
            "type": "object",
            "properties": {
                "both": {"allOf": [
                    {"properties": {"a": {"type": "string"}}},
                    {"properties": {"b": {"type": "string"}}}
                ]},
                "tagged": {
                    "properties": {"kind": {"type": "string"}},
                    "oneOf": [{"properties": {"x": {"type": "integer"}}}, {"properties": {"y": {"type": "integer"}}}]
                },
                "either": {"anyOf": [{"properties": {"x": {"type": "integer"}}}, {"type": "null"}]},
                "extended": {"$ref": "#/$defs/Base", "properties": {"extra": {"type": "string"}}},
                "plain": {"$ref": "#/$defs/Base"}
            }
        }))
        .unwrap();
        let generic = schema.schema_set().generic();
        let properties = &generic["properties"];
        for branch in 0..2 {
            assert!(properties["both"]["allOf"][branch]
                .get("additionalProperties")
                .is_none());
            assert!(properties["tagged"]["oneOf"][branch]
                .get("additionalProperties")
                .is_none());
        }
        // An alternative that stands alone, and a reference used as it is, are closed.
        assert_eq!(
            properties["either"]["anyOf"][0]["additionalProperties"],
            json!(false)
        );
        assert_eq!(properties["plain"]["additionalProperties"], json!(false));
        let extended = &properties["extended"];
        assert!(
            extended["allOf"][0].get("additionalProperties").is_none(),
            "{extended}"
        );
        assert!(valid(
            &schema,
            json!({"both": {"a": "1", "b": "2"}, "extended": {"id": 1, "extra": "e"}})
        ));
    }

    #[test]
    fn an_additional_properties_schema_is_respected() {
        let schema = DynamicSchema::from_json(json!({
            "type": "object",
            "properties": {"id": {"type": "integer"}},
            "additionalProperties": {"type": "number", "maximum": 1}
        }))
        .unwrap();
        assert_eq!(
            schema.schema_set().generic()["additionalProperties"],
            json!({"type": "number", "maximum": 1})
        );
        assert!(valid(&schema, json!({"id": 7, "score": 0.5})));
        assert!(!valid(&schema, json!({"id": 7, "score": 2})));
        assert!(!valid(&schema, json!({"id": 7, "label": "x"})));
    }

    #[test]
    fn draft_4_exclusive_bounds_are_booleans() {
        let schema = DynamicSchema::from_json(json!({
            "$schema": "http://json-schema.org/draft-04/schema#",
            "type": "number",
            "maximum": 10,
            "exclusiveMaximum": true,
            "minimum": 0,
            "exclusiveMinimum": false
        }))
        .unwrap();
        assert!(valid(&schema, json!(9.5)));
        assert!(!valid(&schema, json!(10)));
        assert!(valid(&schema, json!(0)));
        // The generation schema says the same in 2020-12's words.
        assert_eq!(
            schema.schema_set().generic(),
            &json!({"type": "number", "exclusiveMaximum": 10, "minimum": 0})
        );
        // Draft 4 does not count 1.0 as an integer; 2020-12 does.
        let integer = |draft: &str| {
            DynamicSchema::from_json(json!({"$schema": draft, "type": "integer"})).unwrap()
        };
        assert!(!valid(
            &integer("http://json-schema.org/draft-04/schema#"),
            json!(1.0)
        ));
        assert!(valid(
            &integer("https://json-schema.org/draft/2020-12/schema"),
            json!(1.0)
        ));
    }

    #[test]
    fn draft_4_const_is_kept_and_asserted() {
        let schema = DynamicSchema::from_json(json!({
            "$schema": "http://json-schema.org/draft-04/schema#",
            "oneOf": [
                {"type": "object", "properties": {"kind": {"const": "a"}}, "required": ["kind"]},
                {"type": "object", "properties": {"kind": {"const": "b"}}, "required": ["kind"]}
            ]
        }))
        .unwrap();
        assert!(valid(&schema, json!({"kind": "a"})));
        assert!(valid(&schema, json!({"kind": "b"})));
        assert!(!valid(&schema, json!({"kind": "c"})));
        let generic = schema.schema_set().generic();
        for (index, kind) in ["a", "b"].into_iter().enumerate() {
            assert_eq!(
                generic.pointer(&format!("/oneOf/{index}/properties/kind/const")),
                Some(&json!(kind)),
                "{generic}"
            );
        }
    }

    #[test]
    fn a_remote_ref_is_an_error_naming_the_url() {
        let err = DynamicSchema::from_json(json!({
            "type": "object",
            "properties": {"address": {"$ref": "https://example.com/schemas/address.json"}}
        }))
        .unwrap_err();
        assert_eq!(
            err,
            SchemaError::RemoteRef {
                uri: "https://example.com/schemas/address.json".into()
            }
        );
        assert!(
            err.to_string()
                .contains("https://example.com/schemas/address.json"),
            "{err}"
        );
        assert!(err.to_string().contains("register"), "{err}");
    }

    #[test]
    fn a_registered_remote_document_is_used() {
        let address = json!({
            "$defs": {"street": {"type": "string", "minLength": 2}},
            "type": "object",
            "properties": {"street": {"$ref": "#/$defs/street"}},
            "required": ["street"]
        });
        let schema = DynamicSchema::builder(json!({
            "type": "object",
            "properties": {
                "home": {"$ref": "https://example.com/address.json"},
                "street": {"$ref": "https://example.com/address.json#/$defs/street"}
            }
        }))
        .register("https://example.com/address.json", address)
        .build()
        .unwrap();
        assert!(valid(
            &schema,
            json!({"home": {"street": "Main St"}, "street": "Elm"})
        ));
        assert!(!valid(&schema, json!({"home": {"street": "M"}})));
        assert!(!valid(&schema, json!({"home": {}})));
        assert!(!valid(&schema, json!({"street": "E"})));
        // The generation schema follows the registered document too.
        assert_eq!(
            schema.schema_set().generic()["properties"]["home"]["properties"]["street"],
            json!({"type": "string", "minLength": 2})
        );
    }

    #[test]
    fn relative_refs_resolve_against_the_base_uri() {
        let build = |base: Option<&str>| {
            let mut builder = DynamicSchema::builder(
                json!({"properties": {"a": {"$ref": "other.json#/$defs/A"}}}),
            )
            .register(
                "https://example.com/schemas/other.json",
                json!({"$defs": {"A": {"type": "integer"}}}),
            );
            if let Some(base) = base {
                builder = builder.base_uri(base);
            }
            builder.build()
        };
        let schema = build(Some("https://example.com/schemas/main.json")).unwrap();
        assert!(valid(&schema, json!({"a": 1})) && !valid(&schema, json!({"a": "1"})));
        assert_eq!(
            schema.schema_set().generic()["properties"]["a"],
            json!({"type": "integer"})
        );
        // Without a base, the reference names a document nobody registered.
        assert!(
            matches!(build(None), Err(SchemaError::RemoteRef { uri }) if uri.ends_with("other.json"))
        );
    }

    #[test]
    fn refs_with_characters_a_uri_cannot_hold_mean_their_pointer() {
        let schema = DynamicSchema::from_json(json!({
            "$ref": "#/definitions/Page<Item>",
            "definitions": {
                "Page<Item>": {"type": "object", "properties": {"items": {"type": "array", "items": {"$ref": "#/definitions/Item name"}}}},
                "Item name": {"type": "string"}
            }
        }))
        .unwrap();
        assert!(valid(&schema, json!({"items": ["a"]})));
        assert!(!valid(&schema, json!({"items": [1]})));
        assert_eq!(
            schema.schema_set().generic()["properties"]["items"]["items"],
            json!({"type": "string"})
        );
    }

    #[test]
    fn id_based_refs_inside_the_document_work() {
        let schema = DynamicSchema::from_json(json!({
            "$id": "https://example.com/root.json",
            "type": "object",
            "properties": {"tag": {"$ref": "tag.json"}},
            "$defs": {"tag": {"$id": "tag.json", "type": "string", "maxLength": 3}}
        }))
        .unwrap();
        assert!(valid(&schema, json!({"tag": "abc"})));
        assert!(!valid(&schema, json!({"tag": "abcd"})));
    }

    #[test]
    fn recursion_is_kept_as_a_ref() {
        let schema = DynamicSchema::from_json(json!({
            "$ref": "#/$defs/Node",
            "$defs": {"Node": {"type": "object", "properties": {
                "value": {"type": "integer"},
                "next": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]}
            }}}
        }))
        .unwrap();
        assert_eq!(
            schema.schema_set().generic(),
            &json!({
                "$ref": "#/$defs/Node",
                "$defs": {"Node": {"type": "object", "properties": {
                    "value": {"type": "integer"},
                    "next": {"anyOf": [{"$ref": "#/$defs/Node"}, {"type": "null"}]}
                }, "additionalProperties": false}}
            })
        );
        assert!(valid(
            &schema,
            json!({"value": 1, "next": {"value": 2, "next": null, "x": 0}})
        ));
        assert!(!valid(
            &schema,
            json!({"value": 1, "next": {"value": "two"}})
        ));
        // A root that refers to itself.
        let tree = DynamicSchema::from_json(json!({
            "type": "object",
            "properties": {"children": {"type": "array", "items": {"$ref": "#"}}}
        }))
        .unwrap();
        let generic = tree.schema_set().generic();
        assert_eq!(generic["$ref"], json!("#/$defs/Root"));
        assert_eq!(
            generic["$defs"]["Root"]["properties"]["children"]["items"],
            json!({"$ref": "#/$defs/Root"})
        );
        assert!(valid(&tree, json!({"children": [{"children": []}]})));
        assert!(!valid(&tree, json!({"children": [{"children": 3}]})));
    }

    #[test]
    fn annotations_and_unknown_keywords_are_ignored() {
        let schema = DynamicSchema::from_json(json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "$comment": "a note",
            "type": "object",
            "javaType": "com.example.Person",
            "properties": {
                "name": {"type": "string", "example": "Ada", "readOnly": true, "$comment": "x",
                         "deprecated": false, "$id": "#name", "esriDocumentation": {"a": 1}},
                "links": {"type": "array", "items": {"type": "string", "id": "item", "self": {}}}
            },
            "required": ["name"]
        }))
        .unwrap();
        assert_eq!(
            schema.schema_set().generic(),
            &json!({
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "links": {"type": "array", "items": {"type": "string"}}
                },
                "required": ["name"],
                "additionalProperties": false
            })
        );
        assert!(valid(
            &schema,
            json!({"name": "Ada", "links": ["x"], "more": true})
        ));
        assert!(!valid(&schema, json!({"links": ["x"]})));
    }

    #[test]
    fn constraining_keywords_are_taken_and_kept_for_the_dialects() {
        let schema = DynamicSchema::from_json(json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "n": {"type": "number", "multipleOf": 5, "not": {"const": 10}},
                "pair": {"type": "array", "items": [{"type": "string"}], "additionalItems": {"type": "integer"}}
            },
            "patternProperties": {"^x-": {"type": "string"}},
            "minProperties": 1,
            "dependencies": {"n": ["pair"], "pair": {"required": ["n"]}},
            "allOf": [{"if": {"required": ["n"]}, "then": {"properties": {"n": {"minimum": 5}}}}]
        }))
        .unwrap();
        assert!(valid(&schema, json!({"n": 15, "pair": ["a", 1, 2]})));
        assert!(!valid(&schema, json!({"n": 10, "pair": ["a"]})));
        assert!(!valid(&schema, json!({"n": 15})));
        assert!(!valid(&schema, json!({"pair": ["a", "b"], "n": 5})));
        assert!(!valid(&schema, json!({"x-a": 1})));
        assert!(!valid(&schema, json!({})));
        let generic = schema.schema_set().generic();
        assert_eq!(
            generic["properties"]["pair"],
            json!({"type": "array", "prefixItems": [{"type": "string"}], "items": {"type": "integer"}})
        );
        assert_eq!(generic["dependentRequired"], json!({"n": ["pair"]}));
        assert_eq!(
            generic["dependentSchemas"],
            json!({"pair": {"required": ["n"]}})
        );
        assert_eq!(generic["minProperties"], json!(1));
        assert!(generic.get("allOf").is_some() && generic.get("patternProperties").is_some());
        // Other keys are admitted by patternProperties: the object is not closed.
        assert!(generic.get("additionalProperties").is_none());
    }

    #[test]
    fn an_invalid_schema_is_an_error() {
        let err = DynamicSchema::from_json(json!({"type": "strng"})).unwrap_err();
        assert!(matches!(err, SchemaError::Invalid { .. }), "{err}");
        assert!(DynamicSchema::from_json(json!(3)).is_err());
        assert!(DynamicSchema::from_json(json!({"$ref": "#/$defs/Missing"})).is_err());
    }

    #[test]
    fn refs_that_multiply_stay_refs_past_the_budget() {
        // D0 is a string; each D(k+1) holds two D(k): D30 would expand to 2^30 strings.
        let mut defs = serde_json::Map::new();
        defs.insert("D0".into(), json!({"type": "string"}));
        for k in 0..30 {
            let inner = json!({"$ref": format!("#/$defs/D{k}"), "description": "x"});
            defs.insert(
                format!("D{}", k + 1),
                json!({"type": "object", "properties": {"a": inner, "b": inner}}),
            );
        }
        let root = |top: usize| {
            json!({"type": "object", "properties": {"x": {"$ref": format!("#/$defs/D{top}")}},
                   "$defs": defs})
        };
        let big = DynamicSchema::from_json(root(30)).unwrap();
        let generic = big.schema_set().generic();
        assert!(
            generic.to_string().len() < 20 * MAX_EXPANDED,
            "{}",
            generic.to_string().len()
        );
        assert!(generic["$defs"].as_object().is_some_and(|d| !d.is_empty()));
        // Ten levels (1,024 strings) are inlined whole.
        let small = DynamicSchema::from_json(root(10)).unwrap();
        let text = small.schema_set().generic().to_string();
        assert_eq!(text.matches("string").count(), 1024);
        assert!(!text.contains("$ref"));
    }

    #[test]
    fn signature_schema_validates_like_a_derived_one() {
        let schema = DynamicSchema::from_signature(
            "(text :string) -> {sentiment (positive | negative | neutral), score :float}",
        )
        .unwrap();
        let validator = schema.schema_set().validator().unwrap();
        assert!(validator.is_valid(&json!({"sentiment": "positive", "score": 0.5})));
        assert!(!validator.is_valid(&json!({"sentiment": "happy", "score": 0.5})));
        assert!(!validator.is_valid(&json!({"sentiment": "positive", "score": 0.5, "extra": 1})));
        assert!(!validator.is_valid(&json!({"sentiment": "positive"})));
    }

    #[test]
    fn file_errors_name_the_file() {
        let err = DynamicSchema::from_file("/nonexistent/schema.json").unwrap_err();
        assert!(err.to_string().contains("/nonexistent/schema.json"));
    }
}
