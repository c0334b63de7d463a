//! The schemas a type yields ([`Schema`]): the generic JSON Schema and the list schema, their renderings
//! per provider [`Dialect`], and compact format instructions for prompts.
//!
//! Everything starts from one *generic* schema (draft 2020-12, key order preserved, recursion as
//! `$defs` + `$ref`) built by the derive or from a runtime schema: what instructions and dialects read.
//! Validation reads the *validation* schema: the generic one for a derived type, the schema as its
//! author wrote it for a runtime one ([`DynamicSchema`]). [`SchemaSet`] derives the rest once and
//! caches it.
//!
//! - [`dialect`]: what each provider enforces, and how the generic schema is rendered for it;
//! - [`instructions`]: the compact format instructions put in the prompt;
//! - [`dynamic`]: [`DynamicSchema`], a schema given at run time (JSON, a file or a signature);
//! - [`signature`]: the signature shorthand (`{name :string, born :int?}`);
//! - `builder.rs`: what the derive's generated code calls to build a type's generic schema, and
//!   `foreign.rs`, the generic schemas of well-known types of `std` and other crates;
//! - `node.rs`: reading one node of a schema (local `$ref`s, the types it admits, JSON pointers);
//! - `plan.rs`: a schema compiled for checking values while serde deserializes them.
//!
//! Next in the flow: [`llm`](crate::llm) sends a request with the rendering its backend asks for
//! ([`Llm::dialect`](crate::llm::Llm::dialect)).

pub(crate) mod builder;
pub mod dialect;
pub mod dynamic;
mod foreign;
pub mod instructions;
pub(crate) mod node;
pub(crate) mod plan;
pub mod signature;

pub use dynamic::{DynamicSchema, DynamicSchemaError};

use crate::error::SchemaError;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use std::sync::OnceLock;

/// A Rust type with a schema: everything the parser needs to read, validate and deserialize its
/// values.
///
/// `#[derive(Extract)]` implements it, together with [`Extract`](crate::Extract), which adds the
/// extraction methods on top (as serde keeps `Deserialize` below `serde_json::from_str`). The parse
/// functions ([`from_str`](crate::from_str), [`lines_from_str`](crate::parse::lines_from_str),
/// [`LineDecoder`](crate::parse::LineDecoder)) need only this trait. The schema is computed once per type (a
/// static) and then returned by reference.
pub trait Schema: DeserializeOwned + Send + 'static {
    /// Everything derived from the type's schema: dialects, instructions, validators.
    fn schema() -> &'static SchemaSet;

    /// The JSON Schema (draft 2020-12) of one value (also what each line of a JSON Lines answer
    /// must satisfy).
    fn json_schema() -> &'static Value {
        Self::schema().generic()
    }

    /// Many items as one JSON value: `{"items": [...]}`.
    fn list_schema() -> &'static Value {
        Self::schema().list()
    }

    /// Compact type definitions for a prompt asking for one value.
    fn format_instructions() -> &'static str {
        Self::schema().format_instructions()
    }

    /// Compact type definitions for a prompt asking for JSON Lines.
    fn line_format_instructions() -> &'static str {
        Self::schema().line_format_instructions()
    }
}

/// Which flavour of JSON Schema a server accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Dialect {
    /// Full draft 2020-12: what we validate locally, and what the embedded engine's llguidance grammar
    /// enforces.
    Generic,
    /// llama.cpp's JSON-Schema-to-GBNF converter, used by Ollama and llama-server: the subset of JSON
    /// Schema it turns into a grammar.
    Gbnf,
    /// OpenAI structured outputs with `strict: true`.
    OpenAiStrict,
    /// Anthropic's structured outputs (`output_config.format`) and tool input schemas.
    Anthropic,
    /// Gemini's `responseJsonSchema`.
    Gemini,
}

impl Dialect {
    /// All dialects, for iteration.
    pub const ALL: [Dialect; 5] = [
        Dialect::Generic,
        Dialect::Gbnf,
        Dialect::OpenAiStrict,
        Dialect::Anthropic,
        Dialect::Gemini,
    ];

    /// A short lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Generic => "generic",
            Dialect::Gbnf => "gbnf",
            Dialect::OpenAiStrict => "openai-strict",
            Dialect::Anthropic => "anthropic",
            Dialect::Gemini => "gemini",
        }
    }

    fn index(self) -> usize {
        match self {
            Dialect::Generic => 0,
            Dialect::Gbnf => 1,
            Dialect::OpenAiStrict => 2,
            Dialect::Anthropic => 3,
            Dialect::Gemini => 4,
        }
    }

    /// Whether a schema sent in this dialect may carry `maxItems` (the list shape bounds its items with
    /// it when `max_items` is set); Anthropic rejects the keyword.
    pub(crate) fn carries_max_items(self) -> bool {
        !matches!(self, Dialect::Anthropic)
    }
}

impl std::fmt::Display for Dialect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Which answer shape a schema describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Shape {
    /// One value.
    One,
    /// One line of a JSON Lines answer (whose schema is that of one value).
    Line,
    /// Many items as one value: `{"items": [...]}`.
    List,
}

impl Shape {
    fn index(self) -> usize {
        match self {
            Shape::One => 0,
            Shape::Line => 1,
            Shape::List => 2,
        }
    }
}

type Rendered = OnceLock<Result<dialect::Lowering, SchemaError>>;

/// Everything derived from one generic schema, computed lazily once and cached.
///
/// A derived type holds one in a static (see [`Schema::schema`]); a runtime schema owns one.
pub struct SchemaSet {
    name: String,
    generic: Value,
    /// The schema values are validated against, when it is not `generic`.
    validation: Option<Value>,
    list: Value,
    instructions: OnceLock<String>,
    line_instructions: OnceLock<String>,
    rendered: [[Rendered; 3]; Dialect::ALL.len()],
    /// The generic and GBNF dialects with the grounding marks kept, per shape.
    grounded: [[Rendered; 3]; 2],
    validator: OnceLock<Result<crate::validate::Validator, SchemaError>>,
    plan: OnceLock<Option<plan::Plan>>,
    wants_container: OnceLock<bool>,
}

impl std::fmt::Debug for SchemaSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SchemaSet")
            .field("name", &self.name)
            .field("generic", &self.generic)
            .finish_non_exhaustive()
    }
}

/// The list shape of `generic`: `{"items": [...]}` around it. Its definitions (`$defs`,
/// `definitions`) move to the list's root, where their references point; every other local reference
/// (`#`, `#/properties/..`) is rewritten to point into the items' schema where it now lies.
fn list_of(generic: &Value) -> Value {
    const ITEMS: &str = "/properties/items/items";
    let mut items = generic.clone();
    let mut definitions = Vec::new();
    if let Value::Object(map) = &mut items {
        for key in ["$defs", "definitions"] {
            if let Some(defs) = map.remove(key) {
                definitions.push((key, defs));
            }
        }
    }
    rebase(&mut items, ITEMS);
    for (_, defs) in &mut definitions {
        rebase(defs, ITEMS);
    }
    let mut list = json!({
        "type": "object",
        "properties": { "items": { "type": "array", "items": items } },
        "required": ["items"],
        "additionalProperties": false
    });
    if let Value::Object(map) = &mut list {
        for (key, defs) in definitions {
            map.insert(key.into(), defs);
        }
    }
    list
}

/// Prefixes with `base` each local `$ref` in `schema` that does not point into the definitions.
/// Values (`const`, `enum`, `examples`, `default`) are data, not schemas, and are left alone.
fn rebase(schema: &mut Value, base: &str) {
    match schema {
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                match (key.as_str(), child) {
                    ("$ref", Value::String(reference)) => {
                        let Some(pointer) = reference.strip_prefix('#') else {
                            continue;
                        };
                        let into_definitions = ["/$defs/", "/definitions/"]
                            .iter()
                            .any(|prefix| pointer.starts_with(prefix));
                        if !into_definitions && (pointer.is_empty() || pointer.starts_with('/')) {
                            *reference = format!("#{base}{pointer}");
                        }
                    }
                    ("const" | "enum" | "examples" | "default", _) => {}
                    (_, child) => rebase(child, base),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| rebase(item, base)),
        _ => {}
    }
}

/// What [`Extractor::with_schema`](crate::Extractor::with_schema) takes: a schema set, or a
/// [`DynamicSchema`].
impl AsRef<SchemaSet> for SchemaSet {
    fn as_ref(&self) -> &SchemaSet {
        self
    }
}

impl SchemaSet {
    /// Builds the set from a generic schema, which is also the one values are validated against.
    /// `name` names the type (used as the `response_format` name).
    pub fn new(name: impl Into<String>, generic: Value) -> Self {
        Self::build(name.into(), generic, None)
    }

    /// Builds the set from a generic schema (what is sent and shown) and the schema values are
    /// validated against (as its author wrote it, any draft), with its compiled validator.
    pub(crate) fn with_validation(
        name: impl Into<String>,
        generic: Value,
        validation: Value,
        validator: crate::validate::Validator,
    ) -> Self {
        let set = Self::build(name.into(), generic, Some(validation));
        // A new cell is empty: the value is always stored.
        let _ = set.validator.set(Ok(validator));
        set
    }

    fn build(name: String, generic: Value, validation: Option<Value>) -> Self {
        let list = list_of(&generic);
        SchemaSet {
            name,
            generic,
            validation,
            list,
            instructions: OnceLock::new(),
            line_instructions: OnceLock::new(),
            rendered: Default::default(),
            grounded: Default::default(),
            validator: OnceLock::new(),
            plan: OnceLock::new(),
            wants_container: OnceLock::new(),
        }
    }

    /// The type's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The generic schema of one value.
    pub fn generic(&self) -> &Value {
        &self.generic
    }

    /// The schema one value is validated against: the generic one, or for a runtime schema the
    /// schema as its author wrote it.
    pub fn validation(&self) -> &Value {
        match &self.validation {
            Some(schema) => schema,
            None => &self.generic,
        }
    }

    /// The schema of many items as one value: `{"items": [...]}`.
    pub fn list(&self) -> &Value {
        &self.list
    }

    /// The schema of `shape`.
    pub fn shape(&self, shape: Shape) -> &Value {
        match shape {
            Shape::One | Shape::Line => &self.generic,
            Shape::List => &self.list,
        }
    }

    /// The schema of `shape` as `dialect` must receive it, or why the dialect cannot express it.
    pub fn for_dialect(&self, dialect: Dialect, shape: Shape) -> Result<&Value, SchemaError> {
        self.lowering(dialect, shape).map(dialect::Lowering::schema)
    }

    /// `shape` lowered for `dialect`: the schema sent, whether the provider's strict mode takes it, and
    /// the keywords the provider will not enforce (see [`dialect::lower`]).
    pub fn lowering(
        &self,
        dialect: Dialect,
        shape: Shape,
    ) -> Result<&dialect::Lowering, SchemaError> {
        self.rendered[dialect.index()][shape.index()]
            .get_or_init(|| dialect::lower(self.shape(shape), dialect))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The schema of `shape` as `dialect` must receive it, keeping the marks of the strings that must be
    /// spans of the source where the dialect is one the embedded engine reads (see
    /// [`dialect::lower_grounded`]): what is sent to a backend that grounds values while decoding.
    pub fn for_dialect_grounded(
        &self,
        dialect: Dialect,
        shape: Shape,
    ) -> Result<&Value, SchemaError> {
        self.lowering_grounded(dialect, shape)
            .map(dialect::Lowering::schema)
    }

    /// [`SchemaSet::lowering`] with the grounding marks kept (see [`SchemaSet::for_dialect_grounded`]).
    pub fn lowering_grounded(
        &self,
        dialect: Dialect,
        shape: Shape,
    ) -> Result<&dialect::Lowering, SchemaError> {
        let slot = match dialect {
            Dialect::Generic => 0,
            Dialect::Gbnf => 1,
            _ => return self.lowering(dialect, shape),
        };
        self.grounded[slot][shape.index()]
            .get_or_init(|| dialect::lower_grounded(self.shape(shape), dialect))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Compact type definitions for a prompt asking for one value.
    pub fn format_instructions(&self) -> &str {
        self.instructions
            .get_or_init(|| instructions::render_one(&self.generic))
    }

    /// Compact type definitions for a prompt asking for JSON Lines.
    pub fn line_format_instructions(&self) -> &str {
        self.line_instructions
            .get_or_init(|| instructions::render_lines(&self.generic))
    }

    /// The compiled validator of one value (also used for each line), built once.
    pub fn validator(&self) -> Result<&crate::validate::Validator, SchemaError> {
        self.validator
            .get_or_init(|| crate::validate::Validator::new(self.validation()))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The plan that validates clean JSON while it is deserialized, built once from the validation
    /// schema; `None` when that schema uses something the plan does not model, or is not a draft
    /// 2020-12 one (the plan reads keywords as 2020-12 does): its values then take the full path.
    pub(crate) fn plan(&self) -> Option<&plan::Plan> {
        self.plan
            .get_or_init(|| {
                self.validator().ok()?;
                let schema = self.validation();
                if crate::validate::draft_of(schema) != jsonschema::Draft::Draft202012 {
                    return None;
                }
                plan::Plan::compile(schema)
            })
            .as_ref()
    }

    /// Whether one value is an object or an array (found by its brackets), rather than a scalar.
    pub(crate) fn wants_container(&self) -> bool {
        *self
            .wants_container
            .get_or_init(|| plan::wants_container(&self.generic))
    }

    /// Whether one value may also be a scalar (a union with a string branch, say), which an answer
    /// may give alone.
    pub(crate) fn admits_scalar(&self) -> bool {
        plan::admits_scalar(&self.generic)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate::Validator;

    #[test]
    fn a_runtime_schema_validates_and_plans_from_the_schema_as_written() {
        let dynamic = DynamicSchema::from_json(json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}}
        }))
        .unwrap();
        let set = dynamic.schema_set();
        // What is sent is closed; what is validated, and the plan that stands in for it, is not.
        assert_eq!(set.generic()["additionalProperties"], json!(false));
        assert!(set.validation().get("additionalProperties").is_none());
        assert!(set.validator().unwrap().is_valid(&json!({"a": 1, "b": 2})));
        let plan = set.plan().unwrap();
        assert!(!plan.closed());
        // The plan reads keywords as 2020-12 does: another draft's schema has none.
        let draft4 = DynamicSchema::from_json(json!({
            "$schema": "http://json-schema.org/draft-04/schema#",
            "type": "integer"
        }))
        .unwrap();
        assert!(draft4.schema_set().plan().is_none());
        // A derived type's schema is both.
        let derived = SchemaSet::new("T", json!({"type": "string"}));
        assert_eq!(derived.validation(), derived.generic());
        assert!(derived.plan().is_some());
    }

    #[test]
    fn the_list_shape_keeps_references_pointing_where_they_did() {
        let generic = json!({
            "type": "object",
            "properties": {
                "next": {"anyOf": [{"$ref": "#"}, {"type": "null"}]},
                "parts": {"type": "array", "items": {"$ref": "#/$defs/Part"}},
                "same": {"$ref": "#/properties/next"}
            },
            "required": ["next"],
            "additionalProperties": false,
            "$defs": {"Part": {"type": "object", "properties": {"up": {"$ref": "#"}}}},
            "examples": [{"$ref": "#"}]
        });
        let set = SchemaSet::new("Chain", generic);
        let list = set.list();
        assert_eq!(
            list["$defs"]["Part"]["properties"]["up"]["$ref"],
            "#/properties/items/items"
        );
        let items = &list["properties"]["items"]["items"];
        assert_eq!(
            items["properties"]["parts"]["items"]["$ref"],
            "#/$defs/Part"
        );
        assert_eq!(
            items["properties"]["same"]["$ref"],
            "#/properties/items/items/properties/next"
        );
        assert_eq!(items["examples"], json!([{"$ref": "#"}]));
        let validator = Validator::new(list).unwrap();
        assert!(validator.is_valid(&json!({"items": [{"next": {"next": null}}]})));
        assert!(!validator.is_valid(&json!({"items": [{"next": {"next": 1}}]})));
        assert!(!validator.is_valid(&json!({"items": [{"next": null, "parts": [{"up": 1}]}]})));
        assert!(validator
            .is_valid(&json!({"items": [{"next": null, "parts": [{"up": {"next": null}}]}]})));
    }
}
