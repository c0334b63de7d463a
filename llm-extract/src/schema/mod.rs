//! The schemas a type yields ([`Schema`]): the generic JSON Schema and the list schema, their renderings
//! per provider [`Dialect`], and compact format instructions for prompts.
//!
//! Everything starts from one *generic* schema (draft 2020-12, fully inlined, closed objects, key order
//! preserved) built by the derive (or given at run time). [`SchemaSet`] derives the rest once and caches it.

pub(crate) mod builder;
pub mod dialect;
pub mod dynamic;
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
/// functions ([`from_str`](crate::from_str), [`lines_from_str`](crate::lines_from_str),
/// [`LineDecoder`](crate::LineDecoder)) need only this trait. The schema is computed once per type (a
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
    /// The subset llama.cpp's JSON-Schema-to-grammar converter enforces (Ollama, llama-server).
    Ollama,
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
        Dialect::Ollama,
        Dialect::OpenAiStrict,
        Dialect::Anthropic,
        Dialect::Gemini,
    ];

    /// A short lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Generic => "generic",
            Dialect::Ollama => "ollama",
            Dialect::OpenAiStrict => "openai-strict",
            Dialect::Anthropic => "anthropic",
            Dialect::Gemini => "gemini",
        }
    }

    fn index(self) -> usize {
        match self {
            Dialect::Generic => 0,
            Dialect::Ollama => 1,
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

/// Where the list shape holds the schema of one value.
const LIST_ITEM: &str = "/properties/items/items";

/// `schema` with its local references pointing where it sits inside another document (at `at`, a JSON
/// pointer): `#/$defs/Node` becomes `#<at>/$defs/Node`, so the list shape's items keep their `$defs`.
fn rebased(schema: &Value, at: &str) -> Value {
    match schema {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, value)| {
                    let value = match (key.as_str(), value) {
                        ("$ref", Value::String(reference)) => match reference.strip_prefix('#') {
                            Some(pointer) => Value::String(format!("#{at}{pointer}")),
                            None => value.clone(),
                        },
                        ("const" | "enum" | "default" | "examples", _) => value.clone(),
                        _ => rebased(value, at),
                    };
                    (key.clone(), value)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|item| rebased(item, at)).collect()),
        other => other.clone(),
    }
}

type Rendered = OnceLock<Result<dialect::Lowering, SchemaError>>;

/// Everything derived from one generic schema, computed lazily once and cached.
///
/// A derived type holds one in a static (see [`Schema::schema`]); a runtime schema owns one.
pub struct SchemaSet {
    name: String,
    generic: Value,
    list: Value,
    instructions: OnceLock<String>,
    line_instructions: OnceLock<String>,
    rendered: [[Rendered; 3]; Dialect::ALL.len()],
    /// The generic and Ollama dialects with the grounding marks kept, per shape.
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

impl SchemaSet {
    /// Builds the set from a generic schema. `name` names the type (used as the `response_format` name).
    pub fn new(name: impl Into<String>, generic: Value) -> Self {
        let list = json!({
            "type": "object",
            "properties": { "items": { "type": "array", "items": rebased(&generic, LIST_ITEM) } },
            "required": ["items"],
            "additionalProperties": false
        });
        SchemaSet {
            name: name.into(),
            generic,
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
            Dialect::Ollama => 1,
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
            .get_or_init(|| crate::validate::Validator::new(&self.generic))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The plan that validates clean JSON while it is deserialized, built once; `None` when the
    /// schema uses something the plan does not model (its values then take the full path).
    pub(crate) fn plan(&self) -> Option<&plan::Plan> {
        self.plan
            .get_or_init(|| {
                self.validator().ok()?;
                plan::Plan::compile(&self.generic)
            })
            .as_ref()
    }

    /// Whether one value is an object or an array (found by its brackets), rather than a scalar.
    pub(crate) fn wants_container(&self) -> bool {
        *self
            .wants_container
            .get_or_init(|| plan::wants_container(&self.generic))
    }
}
