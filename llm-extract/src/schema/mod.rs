//! The schemas a type yields: the generic JSON Schema, the per-line and list schemas, their renderings
//! per provider [`Dialect`], and compact format instructions for prompts.
//!
//! Everything starts from one *generic* schema (draft 2020-12, fully inlined, closed objects, key order
//! preserved) built by the derive (or given at run time). [`SchemaSet`] derives the rest once and caches it.

pub mod builder;
pub mod dialect;
pub mod dynamic;
pub mod instructions;
pub mod signature;

pub use dynamic::{DynamicSchema, DynamicSchemaError};

use crate::error::SchemaError;
use serde_json::{json, Value};
use std::sync::OnceLock;

/// Which flavour of JSON Schema a server accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Dialect {
    /// Full draft 2020-12: what we validate locally.
    Generic,
    /// The subset llama.cpp's JSON-Schema-to-grammar converter enforces (Ollama, llama-server).
    Ollama,
    /// OpenAI structured outputs with `strict: true`.
    OpenAiStrict,
}

impl Dialect {
    /// All dialects, for iteration.
    pub const ALL: [Dialect; 3] = [Dialect::Generic, Dialect::Ollama, Dialect::OpenAiStrict];

    /// A short lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::Generic => "generic",
            Dialect::Ollama => "ollama",
            Dialect::OpenAiStrict => "openai-strict",
        }
    }

    fn index(self) -> usize {
        match self {
            Dialect::Generic => 0,
            Dialect::Ollama => 1,
            Dialect::OpenAiStrict => 2,
        }
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
    /// One line of a JSON Lines answer.
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

type Rendered = OnceLock<Result<Value, SchemaError>>;

/// Everything derived from one generic schema, computed lazily once and cached.
///
/// A derived type holds one in a static (see [`crate::Extract::schema`]); a runtime schema owns one.
pub struct SchemaSet {
    name: String,
    generic: Value,
    line: Value,
    list: Value,
    instructions: OnceLock<String>,
    line_instructions: OnceLock<String>,
    rendered: [[Rendered; 3]; 3],
    validator: OnceLock<Result<crate::validate::Validator, SchemaError>>,
    plan: OnceLock<Option<crate::parse::typed::Plan>>,
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
        let line = generic.clone();
        let list = json!({
            "type": "object",
            "properties": { "items": { "type": "array", "items": line.clone() } },
            "required": ["items"],
            "additionalProperties": false
        });
        SchemaSet {
            name: name.into(),
            generic,
            line,
            list,
            instructions: OnceLock::new(),
            line_instructions: OnceLock::new(),
            rendered: Default::default(),
            validator: OnceLock::new(),
            plan: OnceLock::new(),
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

    /// The schema of one JSON Lines line (for a tagged enum, a `oneOf` of closed objects).
    pub fn line(&self) -> &Value {
        &self.line
    }

    /// The schema of many items as one value: `{"items": [...]}`.
    pub fn list(&self) -> &Value {
        &self.list
    }

    /// The schema of `shape`.
    pub fn shape(&self, shape: Shape) -> &Value {
        match shape {
            Shape::One => &self.generic,
            Shape::Line => &self.line,
            Shape::List => &self.list,
        }
    }

    /// The schema of `shape` as `dialect` must receive it, or why the dialect cannot express it.
    pub fn for_dialect(&self, dialect: Dialect, shape: Shape) -> Result<&Value, SchemaError> {
        self.rendered[dialect.index()][shape.index()]
            .get_or_init(|| dialect::render(self.shape(shape), dialect))
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
            .get_or_init(|| instructions::render_lines(&self.line))
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
    pub(crate) fn plan(&self) -> Option<&crate::parse::typed::Plan> {
        self.plan
            .get_or_init(|| {
                self.validator().ok()?;
                crate::parse::typed::Plan::compile(&self.generic)
            })
            .as_ref()
    }
}
