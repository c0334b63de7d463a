//! One compiled validator per schema; every violation carries the JSON pointer of the value at fault
//! and a message a person (or a model asked to repair its answer) can act on.
//!
//! - Paths are RFC 6901 JSON pointers into the instance: `/analysis/subjects/0/name`; the root is
//!   the empty pointer `""` (so `instance.pointer(&violation.path)` finds the value), shown as
//!   "the root" by [`Violation`]'s `Display`.
//! - Messages quote the offending value, shortened when long (`"aaaa…" (12000 characters) is longer
//!   than 10000 characters`), and state the rule: `1.5 is greater than the maximum of 1`.
//! - A value that fails a tagged union (an internally tagged enum's `oneOf`) is explained by the
//!   variant its tag selects, or by its missing or unknown tag, not by a dump of every branch.
//! - `format` is asserted (`date-time`, `email`, `uuid`, ...), as the dialects that send it do:
//!   every format a draft defines, whichever draft the schema names ([`Formats::AnyDraft`]; an
//!   author who writes `"format": "uuid"` in a draft-4 schema means a UUID, though draft 4 does not
//!   define it). A format the schema's draft defines is read as that draft defines it (`hostname`
//!   of drafts 4 and 6 is RFC 1034's); a name no draft defines is ignored. [`Formats::PerDraft`]
//!   asserts only the formats of the schema's draft, the strict reading.
//! - Draft 4 asserts `const` as drafts 6+ define it (equal JSON, numbers by value: `1` is `1.0`),
//!   though draft 4 itself lacks the keyword: that is what its authors mean, and what the
//!   validators they test with (ajv) do.
//! - The draft is the one the schema's `$schema` names (4, 6, 7, 2019-09, 2020-12; 2020-12 when it
//!   names none or one we do not know). References to other documents resolve only to documents the
//!   caller registered: nothing is ever fetched, and a reference to any other document is
//!   [`SchemaError::RemoteRef`] naming it.
//!
//! Next in the flow: [`extract`](crate::extract) shows the violations to the model when an answer
//! fails, and [`ground`](crate::ground) finds quoted values in the source text.

use crate::error::SchemaError;
use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::json::cmp;
use jsonschema::{Draft, Registry, Retrieve, Uri};
use jsonschema::{Keyword, ValidationError};
use serde_json::Value;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// Which `format` values a validator asserts. A format it does not assert is an annotation: any
/// string passes it.
///
/// ```
/// use llm_extract::validate::{Formats, Validator};
/// use serde_json::json;
///
/// let schema = json!({ "$schema": "http://json-schema.org/draft-04/schema#", "format": "uuid" });
/// let any = Validator::with_formats(&schema, None, &[], Formats::AnyDraft)?;
/// assert!(!any.is_valid(&json!("not-a-uuid")));
/// let strict = Validator::with_formats(&schema, None, &[], Formats::PerDraft)?;
/// assert!(strict.is_valid(&json!("not-a-uuid")));
/// # Ok::<(), llm_extract::SchemaError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Formats {
    /// Every format a draft from 4 to 2020-12 defines, whichever draft the schema names (the
    /// default): `uuid`, `duration`, `json-pointer`, `uri-reference`, `iri`, ... in a draft-4
    /// schema are checked as 2020-12 defines them. A format the schema's draft defines is checked
    /// as that draft defines it.
    #[default]
    AnyDraft,
    /// Only the formats the schema's draft defines; any other is an annotation, as the draft reads
    /// it (`"format": "uuid"` in a draft-4 schema accepts any string).
    PerDraft,
}

/// The formats drafts 4 to 2020-12 define (2020-12's list holds every earlier draft's).
const DEFINED_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// A check of a string against one format, as draft 2020-12 defines it.
type FormatCheck = Arc<jsonschema::Validator>;

/// Each format of [`DEFINED_FORMATS`] the validator checks under 2020-12, with its check.
fn latest_format_checks() -> &'static [(&'static str, FormatCheck)] {
    static CHECKS: OnceLock<Vec<(&'static str, FormatCheck)>> = OnceLock::new();
    CHECKS.get_or_init(|| {
        DEFINED_FORMATS
            .iter()
            .filter_map(|name| {
                let check = jsonschema::options()
                    .with_draft(Draft::Draft202012)
                    .should_validate_formats(true)
                    .should_ignore_unknown_formats(false)
                    .build(&serde_json::json!({ "format": name }))
                    .ok()?;
                Some((*name, Arc::new(check)))
            })
            .collect()
    })
}

/// A compiled JSON Schema validator (the draft its `$schema` names, 2020-12 by default).
///
/// ```
/// use llm_extract::validate::Validator;
/// use serde_json::json;
///
/// let validator = Validator::new(&json!({
///     "type": "object",
///     "properties": { "score": { "type": "number", "minimum": 0, "maximum": 1 } },
///     "required": ["score"],
///     "additionalProperties": false
/// }))?;
/// let violations = validator.violations(&json!({ "score": 1.5 }));
/// assert_eq!(violations[0].to_string(), "at /score: 1.5 is greater than the maximum of 1");
/// assert!(validator.is_valid(&json!({ "score": 0.5 })));
/// # Ok::<(), llm_extract::SchemaError>(())
/// ```
pub struct Validator {
    inner: jsonschema::Validator,
    /// The schema, to read the branches of a union when explaining why a value fails it.
    schema: Value,
}

impl fmt::Debug for Validator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Validator")
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

/// One violation: where, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// JSON pointer into the instance (e.g. `/analysis/subjects/0/name`); `""` is the root.
    pub path: String,
    /// What is wrong, for a person.
    pub message: String,
}

impl fmt::Display for Violation {
    /// `at /score: 1.5 is greater than the maximum of 1`, or `at the root: ...`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "at the root: {}", self.message)
        } else {
            write!(f, "at {}: {}", self.path, self.message)
        }
    }
}

impl Validator {
    /// Compiles `schema` (the draft its `$schema` names, 2020-12 by default; `format` asserted). A
    /// reference to another document is [`SchemaError::RemoteRef`]: see [`Validator::with_documents`].
    pub fn new(schema: &Value) -> Result<Self, SchemaError> {
        Self::with_documents(schema, None, &[])
    }

    /// Compiles `schema` with other documents its `$ref`s may point at, each under its URI
    /// (`https://example.com/address.json`). `base_uri` is the schema's own URI, against which its
    /// relative references (`address.json`) resolve when it has no `$id`. Nothing is fetched: a
    /// reference to a document that is neither `schema` itself (its own `$id`s included) nor one of
    /// `documents` is [`SchemaError::RemoteRef`] naming it.
    pub fn with_documents(
        schema: &Value,
        base_uri: Option<&str>,
        documents: &[(String, Value)],
    ) -> Result<Self, SchemaError> {
        Self::with_formats(schema, base_uri, documents, Formats::AnyDraft)
    }

    /// Like [`Validator::with_documents`], asserting the `format`s `formats` says (see [`Formats`]).
    pub fn with_formats(
        schema: &Value,
        base_uri: Option<&str>,
        documents: &[(String, Value)],
        formats: Formats,
    ) -> Result<Self, SchemaError> {
        let refused = Arc::new(Mutex::new(None));
        let retriever = Refuse {
            refused: Arc::clone(&refused),
        };
        let remote = |refused: &Mutex<Option<String>>| {
            let uri = refused
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            uri.map(|uri| SchemaError::RemoteRef { uri })
        };
        let registry = if documents.is_empty() {
            None
        } else {
            let draft = draft_of(schema);
            let resources = documents.iter().map(|(uri, document)| {
                let own = match draft.detect(document) {
                    Draft::Unknown => draft,
                    named => named,
                };
                (uri.as_str(), own.create_resource(document.clone()))
            });
            let built = Registry::new()
                .retriever(retriever.clone())
                .extend(resources)
                .and_then(|builder| builder.prepare());
            match built {
                Ok(registry) => Some(registry),
                Err(error) => {
                    return Err(remote(&refused).unwrap_or_else(|| SchemaError::Invalid {
                        path: "/".into(),
                        message: format!("a registered document: {error}"),
                    }))
                }
            }
        };
        let mut options = jsonschema::options()
            .should_validate_formats(true)
            .with_retriever(retriever);
        // A meta-schema among the documents is read from there (its vocabularies say which keywords
        // apply); any other that is not a draft's is read as 2020-12.
        let meta = schema.get("$schema").and_then(Value::as_str);
        let registered_meta = meta.is_some_and(|meta| {
            let meta = meta.trim_end_matches('#');
            Draft::from_schema_uri(meta) == Draft::Unknown
                && documents.iter().any(|(uri, _)| uri == meta)
        });
        // The draft of a registered meta-schema is the one it names itself.
        let draft = match meta.filter(|_| registered_meta) {
            Some(meta) => documents
                .iter()
                .find(|(uri, _)| uri == meta.trim_end_matches('#'))
                .map_or(Draft::Draft202012, |(_, document)| draft_of(document)),
            None => draft_of(schema),
        };
        if formats == Formats::AnyDraft {
            for (name, check) in latest_format_checks() {
                if !options.is_known_format(draft, name) {
                    let check = Arc::clone(check);
                    options =
                        options.with_format(*name, move |text| check.is_valid(&Value::from(text)));
                }
            }
        }
        if !registered_meta {
            options = options.with_draft(draft);
            if draft == Draft::Draft4 {
                options = options.with_keyword("const", |_, expected, _| {
                    Ok(Box::new(Const {
                        expected: expected.clone(),
                    }))
                });
            }
        }
        if let Some(registry) = &registry {
            options = options.with_registry(registry);
        }
        if let Some(base) = base_uri {
            options = options.with_base_uri(base);
        }
        let inner = options.build(schema).map_err(|e| {
            // A schema is checked against its draft's meta-schema: the "instance" at fault is the
            // part of the schema that is wrong.
            remote(&refused).unwrap_or_else(|| SchemaError::Invalid {
                path: match e.instance_path().as_str() {
                    "" => "/".to_owned(),
                    path => path.to_owned(),
                },
                message: e.to_string(),
            })
        })?;
        Ok(Validator {
            inner,
            schema: schema.clone(),
        })
    }

    /// Every violation of `instance`; empty when it is valid.
    pub fn violations(&self, instance: &Value) -> Vec<Violation> {
        let mut out = Vec::new();
        for error in self.inner.iter_errors(instance) {
            self.explain(&error, &mut out);
        }
        out
    }

    /// Whether `instance` is valid.
    pub fn is_valid(&self, instance: &Value) -> bool {
        self.inner.is_valid(instance)
    }

    fn explain(&self, error: &ValidationError<'_>, out: &mut Vec<Violation>) {
        let path = error.instance_path().as_str().to_owned();
        let instance = error.instance();
        let message = match error.kind() {
            ValidationErrorKind::AnyOf { context }
            | ValidationErrorKind::OneOfNotValid { context } => {
                self.explain_union(error, context, out);
                return;
            }
            kind => message(kind, instance).unwrap_or_else(|| shorten(&error.to_string())),
        };
        out.push(Violation { path, message });
    }

    /// Why a value fails every branch of a union: by the branch it was meant for when that is
    /// clear (the variant its tag names, the non-null branch of an optional value), else in one line.
    fn explain_union(
        &self,
        error: &ValidationError<'_>,
        context: &[Vec<ValidationError<'static>>],
        out: &mut Vec<Violation>,
    ) {
        let path = error.instance_path().as_str();
        let instance = error.instance();
        let branches = self
            .schema
            .pointer(error.schema_path().as_str())
            .and_then(Value::as_array);
        let Some(branches) = branches else {
            out.push(Violation {
                path: path.to_owned(),
                message: format!(
                    "{} matches none of the allowed alternatives",
                    shown(instance)
                ),
            });
            return;
        };

        let chosen = match intended_branch(branches, instance) {
            Intended::Branch(index) => index,
            Intended::MissingTag { tag, values } => {
                out.push(Violation {
                    path: path.to_owned(),
                    message: format!("missing required property \"{tag}\" (one of {values})"),
                });
                return;
            }
            Intended::UnknownTag { tag, values } => {
                let value = instance.get(&tag).map(shown).unwrap_or_default();
                out.push(Violation {
                    path: format!("{path}/{}", escape(&tag)),
                    message: format!("{value} is not one of {values}"),
                });
                return;
            }
            Intended::Unclear => {
                out.push(Violation {
                    path: path.to_owned(),
                    message: format!(
                        "{} matches none of the {} allowed alternatives",
                        shown(instance),
                        branches.len()
                    ),
                });
                return;
            }
        };
        match context.get(chosen) {
            Some(errors) if !errors.is_empty() => {
                for inner in errors {
                    self.explain(inner, out);
                }
            }
            _ => out.push(Violation {
                path: path.to_owned(),
                message: format!(
                    "{} matches none of the allowed alternatives",
                    shown(instance)
                ),
            }),
        }
    }
}

/// The draft a schema's `$schema` names; 2020-12 when it names none, or one that is not a draft
/// (a custom meta-schema is never fetched).
pub(crate) fn draft_of(schema: &Value) -> Draft {
    match Draft::default().detect(schema) {
        Draft::Unknown => Draft::Draft202012,
        draft => draft,
    }
}

/// The retriever of every validator: it fetches nothing, and remembers the first document asked for.
#[derive(Clone)]
struct Refuse {
    refused: Arc<Mutex<Option<String>>>,
}

impl Retrieve for Refuse {
    fn retrieve(
        &self,
        uri: &Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        let mut refused = self.refused.lock().unwrap_or_else(PoisonError::into_inner);
        refused.get_or_insert_with(|| uri.as_str().to_owned());
        Err(format!("{uri} is not registered, and documents are never fetched").into())
    }
}

/// `const` in a draft-4 schema, asserted as drafts 6+ define it: the value equals the expected
/// one as JSON, numbers compared by value.
struct Const {
    expected: Value,
}

impl<'i> Keyword<'i> for Const {
    fn validate(&self, instance: &'i Value) -> Result<(), ValidationError<'i>> {
        if self.is_valid(instance) {
            Ok(())
        } else {
            Err(ValidationError::custom(not_constant(
                instance,
                &self.expected,
            )))
        }
    }

    fn is_valid(&self, instance: &'i Value) -> bool {
        cmp::equal(instance, &self.expected)
    }
}

/// The message of a value that is not the one `const` names.
fn not_constant(instance: &Value, expected: &Value) -> String {
    format!("{} is not the expected {expected}", shown(instance))
}

/// The branch of a union a value was meant for.
enum Intended {
    Branch(usize),
    MissingTag { tag: String, values: String },
    UnknownTag { tag: String, values: String },
    Unclear,
}

fn intended_branch(branches: &[Value], instance: &Value) -> Intended {
    let non_null: Vec<usize> = branches
        .iter()
        .enumerate()
        .filter(|(_, branch)| branch.get("type").and_then(Value::as_str) != Some("null"))
        .map(|(index, _)| index)
        .collect();
    if let ([only], false) = (non_null.as_slice(), instance.is_null()) {
        if non_null.len() < branches.len() {
            return Intended::Branch(*only);
        }
    }
    let Some(tag) = tag_of(branches) else {
        return Intended::Unclear;
    };
    let tag_values: Vec<&Value> = branches
        .iter()
        .filter_map(|branch| tag_value(branch, &tag))
        .collect();
    let values = list(&tag_values);
    let Value::Object(object) = instance else {
        return Intended::Unclear;
    };
    match object.get(&tag) {
        None => Intended::MissingTag { tag, values },
        Some(value) => match branches
            .iter()
            .position(|branch| tag_value(branch, &tag) == Some(value))
        {
            Some(index) => Intended::Branch(index),
            None => Intended::UnknownTag { tag, values },
        },
    }
}

/// The property every branch fixes with a `const` (the tag of an internally tagged enum).
fn tag_of(branches: &[Value]) -> Option<String> {
    let first = branches.first()?.get("properties")?.as_object()?;
    first
        .keys()
        .find(|name| {
            branches
                .iter()
                .all(|branch| tag_value(branch, name).is_some())
        })
        .cloned()
}

fn tag_value<'a>(branch: &'a Value, tag: &str) -> Option<&'a Value> {
    branch.get("properties")?.get(tag)?.get("const")
}

/// The message of a non-union violation, or `None` to fall back on the validator's own.
fn message(kind: &ValidationErrorKind, instance: &Value) -> Option<String> {
    let value = shown(instance);
    let text = match kind {
        ValidationErrorKind::Type { kind } => {
            let names: Vec<String> = match kind {
                TypeKind::Single(one) => vec![one.to_string()],
                TypeKind::Multiple(many) => many.iter().map(|t| t.to_string()).collect(),
            };
            // "a string or null" reads better than the set's own order, "null or a string".
            let mut names = names;
            names.sort_by_key(|name| name == "null");
            let expected: Vec<String> = names.iter().map(|name| with_article(name)).collect();
            format!("{value} is not {}", expected.join(" or "))
        }
        ValidationErrorKind::Required { property } => {
            format!("missing required property {property}")
        }
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let names: Vec<String> = unexpected.iter().map(|name| format!("{name:?}")).collect();
            let noun = if names.len() == 1 {
                "property"
            } else {
                "properties"
            };
            format!(
                "unexpected {noun} {} (the object is closed)",
                names.join(", ")
            )
        }
        ValidationErrorKind::Enum { options } => {
            let options: Vec<&Value> = options.as_array()?.iter().collect();
            format!("{value} is not one of {}", list(&options))
        }
        ValidationErrorKind::Constant { expected_value } => not_constant(instance, expected_value),
        // The one keyword added to a draft ([`Const`]) words its message itself.
        ValidationErrorKind::Custom { message, .. } => message.clone(),
        ValidationErrorKind::MinLength { limit } => {
            format!(
                "{value} is shorter than {limit} {}",
                plural(*limit, "character")
            )
        }
        ValidationErrorKind::MaxLength { limit } => {
            format!(
                "{value} is longer than {limit} {}",
                plural(*limit, "character")
            )
        }
        ValidationErrorKind::Pattern { pattern } => format!("{value} does not match {pattern}"),
        ValidationErrorKind::Format { format } => format!("{value} is not a valid {format}"),
        ValidationErrorKind::Minimum { limit } => {
            format!("{value} is less than the minimum of {}", number_text(limit))
        }
        ValidationErrorKind::Maximum { limit } => {
            format!(
                "{value} is greater than the maximum of {}",
                number_text(limit)
            )
        }
        ValidationErrorKind::ExclusiveMinimum { limit } => {
            format!("{value} is not greater than {}", number_text(limit))
        }
        ValidationErrorKind::ExclusiveMaximum { limit } => {
            format!("{value} is not less than {}", number_text(limit))
        }
        ValidationErrorKind::MultipleOf { multiple_of } => {
            format!("{value} is not a multiple of {multiple_of}")
        }
        ValidationErrorKind::MinItems { limit } => format!(
            "has {} items, fewer than the minimum of {limit}",
            instance.as_array()?.len()
        ),
        ValidationErrorKind::MaxItems { limit } => format!(
            "has {} items, more than the maximum of {limit}",
            instance.as_array()?.len()
        ),
        ValidationErrorKind::UniqueItems => "has duplicate items".to_owned(),
        ValidationErrorKind::MinProperties { limit } => format!(
            "has {} properties, fewer than the minimum of {limit}",
            instance.as_object()?.len()
        ),
        ValidationErrorKind::MaxProperties { limit } => format!(
            "has {} properties, more than the maximum of {limit}",
            instance.as_object()?.len()
        ),
        ValidationErrorKind::OneOfMultipleValid { .. } => {
            format!("{value} matches more than one of the alternatives, exactly one is allowed")
        }
        ValidationErrorKind::FalseSchema => format!("{value} is not allowed here"),
        ValidationErrorKind::Not { .. } => format!("{value} is not allowed here"),
        _ => return None,
    };
    Some(text)
}

fn with_article(type_name: &str) -> String {
    match type_name {
        "null" => "null".to_owned(),
        "integer" | "object" | "array" => format!("an {type_name}"),
        other => format!("a {other}"),
    }
}

fn plural(count: u64, noun: &str) -> String {
    if count == 1 {
        noun.to_owned()
    } else {
        format!("{noun}s")
    }
}

/// `"a", "b" or "c"`; long lists end with how many more there are.
fn list(values: &[&Value]) -> String {
    const SHOWN: usize = 10;
    let mut names: Vec<String> = values.iter().take(SHOWN).map(|v| v.to_string()).collect();
    if values.len() > SHOWN {
        names.push(format!("{} more", values.len() - SHOWN));
    }
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        Some((last, _)) => last.clone(),
        None => "nothing".to_owned(),
    }
}

/// Longest quoted value, in characters, before it is shortened.
const SHOWN_CHARS: usize = 60;

/// A value as a message quotes it: whole when short, else its start and its size.
fn shown(value: &Value) -> String {
    match value {
        Value::String(text) => {
            let count = text.chars().count();
            if count <= SHOWN_CHARS {
                value.to_string()
            } else {
                let start: String = text.chars().take(SHOWN_CHARS / 2).collect();
                let quoted = Value::String(start).to_string();
                format!(
                    "{}…\" ({count} characters)",
                    quoted.strip_suffix('"').unwrap_or(&quoted)
                )
            }
        }
        Value::Array(items) => {
            let text = value.to_string();
            if text.chars().count() <= SHOWN_CHARS {
                text
            } else {
                format!("an array of {} items", items.len())
            }
        }
        Value::Object(entries) => {
            let text = value.to_string();
            if text.chars().count() <= SHOWN_CHARS {
                text
            } else {
                let keys: Vec<String> = entries.keys().take(5).map(|k| format!("{k:?}")).collect();
                let more = if entries.len() > 5 { ", ..." } else { "" };
                format!("an object with keys {}{more}", keys.join(", "))
            }
        }
        other => other.to_string(),
    }
}

/// A fallback message, cut to a readable length.
fn shorten(message: &str) -> String {
    const LIMIT: usize = 300;
    if message.chars().count() <= LIMIT {
        message.to_owned()
    } else {
        let start: String = message.chars().take(LIMIT).collect();
        format!("{start}…")
    }
}

fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// A bound as a person writes it: `1`, not `1.0`.
pub(crate) fn number_text(value: &Value) -> String {
    match value.as_f64() {
        Some(f) if value.is_f64() && f.fract() == 0.0 && f.abs() < 1e15 => format!("{f:.0}"),
        _ => value.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sentiment() -> Value {
        json!({
            "type": "object",
            "properties": {
                "sentiment": { "type": "string", "enum": ["positive", "negative", "neutral"] },
                "score": { "type": "number", "minimum": 0.0, "maximum": 1.0 },
                "note": { "type": ["string", "null"], "minLength": 3, "pattern": "^[a-z ]+$" },
                "when": { "type": "string", "format": "date" }
            },
            "required": ["sentiment", "score"],
            "additionalProperties": false
        })
    }

    fn fact() -> Value {
        json!({
            "oneOf": [
                {
                    "type": "object",
                    "properties": { "kind": { "const": "definition" }, "entity": { "type": "string" } },
                    "required": ["kind", "entity"],
                    "additionalProperties": false
                },
                {
                    "type": "object",
                    "properties": {
                        "kind": { "const": "relationship" },
                        "subject": { "type": "string", "maxLength": 5 },
                        "object-entity": { "type": "boolean" }
                    },
                    "required": ["kind", "subject", "object-entity"],
                    "additionalProperties": false
                }
            ]
        })
    }

    fn shown_violations(schema: &Value, instance: Value) -> Vec<String> {
        let validator = Validator::new(schema).unwrap();
        assert_eq!(
            validator.is_valid(&instance),
            validator.violations(&instance).is_empty()
        );
        validator
            .violations(&instance)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn valid_values_have_no_violations() {
        let instance =
            json!({ "sentiment": "neutral", "score": 1, "note": null, "when": "2024-02-29" });
        assert!(shown_violations(&sentiment(), instance).is_empty());
        let relationship =
            json!({ "kind": "relationship", "subject": "ann", "object-entity": true });
        assert!(shown_violations(&fact(), relationship).is_empty());
    }

    #[test]
    fn each_rule_reads_well_and_points_at_the_value() {
        let mut got = shown_violations(
            &sentiment(),
            json!({ "sentiment": "happy", "score": 1.5, "note": "Hi", "when": "2024-13-01", "extra": 1 }),
        );
        got.sort();
        assert_eq!(
            got,
            [
                "at /note: \"Hi\" does not match ^[a-z ]+$",
                "at /note: \"Hi\" is shorter than 3 characters",
                "at /score: 1.5 is greater than the maximum of 1",
                "at /sentiment: \"happy\" is not one of \"positive\", \"negative\" or \"neutral\"",
                "at /when: \"2024-13-01\" is not a valid date",
                "at the root: unexpected property \"extra\" (the object is closed)",
            ]
        );
        assert_eq!(
            shown_violations(&sentiment(), json!({ "score": "high" })),
            [
                "at the root: missing required property \"sentiment\"",
                "at /score: \"high\" is not a number",
            ]
        );
        assert_eq!(
            shown_violations(
                &sentiment(),
                json!({ "sentiment": "positive", "score": 0, "note": 7 })
            ),
            ["at /note: 7 is not a string or null"]
        );
    }

    #[test]
    fn long_values_are_shortened() {
        let schema = json!({ "type": "string", "maxLength": 10 });
        let long = "a".repeat(12_000);
        assert_eq!(
            shown_violations(&schema, json!(long)),
            [format!(
                "at the root: \"{}…\" (12000 characters) is longer than 10 characters",
                "a".repeat(30)
            )]
        );
        let array = json!({ "type": "array", "items": { "type": "integer" }, "maxItems": 2 });
        assert_eq!(
            shown_violations(&array, json!([1, 2, 3])),
            ["at the root: has 3 items, more than the maximum of 2"]
        );
    }

    #[test]
    fn a_tagged_union_is_explained_by_the_variant_its_tag_names() {
        assert_eq!(
            shown_violations(
                &fact(),
                json!({ "kind": "relationship", "subject": "too long", "extra": 1 })
            ),
            [
                "at the root: missing required property \"object-entity\"",
                "at /subject: \"too long\" is longer than 5 characters",
                "at the root: unexpected property \"extra\" (the object is closed)",
            ]
        );
        assert_eq!(
            shown_violations(&fact(), json!({ "entity": "x" })),
            ["at the root: missing required property \"kind\" (one of \"definition\" or \"relationship\")"]
        );
        assert_eq!(
            shown_violations(&fact(), json!({ "kind": "opinion" })),
            ["at /kind: \"opinion\" is not one of \"definition\" or \"relationship\""]
        );
        assert_eq!(
            shown_violations(&fact(), json!("text")),
            ["at the root: \"text\" matches none of the 2 allowed alternatives"]
        );
    }

    #[test]
    fn nested_unions_keep_the_full_path() {
        let schema = json!({
            "type": "object",
            "properties": {
                "items": { "type": "array", "items": fact() },
                "best": { "anyOf": [fact(), { "type": "null" }] }
            },
            "required": ["items"],
            "additionalProperties": false
        });
        let instance = json!({
            "items": [{ "kind": "definition", "entity": "e" }, { "kind": "definition", "entity": 3 }],
            "best": { "kind": "definition" }
        });
        let validator = Validator::new(&schema).unwrap();
        let violations = validator.violations(&instance);
        assert_eq!(
            violations,
            [
                Violation {
                    path: "/items/1/entity".into(),
                    message: "3 is not a string".into()
                },
                Violation {
                    path: "/best".into(),
                    message: "missing required property \"entity\"".into()
                },
            ]
        );
        for violation in &violations {
            assert!(instance.pointer(&violation.path).is_some(), "{violation}");
        }
    }

    #[test]
    fn an_invalid_schema_is_an_error() {
        let error = Validator::new(&json!({ "type": "strng" })).unwrap_err();
        assert!(matches!(error, SchemaError::Invalid { .. }), "{error}");
        for (schema, path) in [
            (
                json!({ "properties": { "a": { "allOf": [] } } }),
                "/properties/a/allOf",
            ),
            (
                json!({ "properties": { "a": { "pattern": "(" } } }),
                "/properties/a/pattern",
            ),
        ] {
            let error = Validator::new(&schema).unwrap_err();
            assert!(
                matches!(&error, SchemaError::Invalid { path: at, .. } if at == path),
                "{error}"
            );
        }
    }

    #[test]
    fn the_draft_is_the_one_schema_names() {
        let draft4 = json!({
            "$schema": "http://json-schema.org/draft-04/schema#",
            "maximum": 3,
            "exclusiveMaximum": true
        });
        let validator = Validator::new(&draft4).unwrap();
        assert!(validator.is_valid(&json!(2)) && !validator.is_valid(&json!(3)));
        assert_eq!(
            validator.violations(&json!(3))[0].to_string(),
            "at the root: 3 is not less than 3"
        );
        // The boolean form is not 2020-12's: without `$schema`, the schema is invalid.
        let mut latest = draft4;
        latest.as_object_mut().unwrap().remove("$schema");
        assert!(Validator::new(&latest).is_err());
        // A meta-schema that is not a draft is never fetched: the schema is read as 2020-12.
        let custom = json!({ "$schema": "https://example.com/meta", "type": "integer" });
        let validator = Validator::new(&custom).unwrap();
        assert!(validator.is_valid(&json!(1)) && !validator.is_valid(&json!("1")));
        // Explanations follow references and keywords of any draft.
        let draft7 = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "definitions": { "kind": { "enum": ["a", "b"] } },
            "properties": { "k": { "$ref": "#/definitions/kind" } },
            "dependencies": { "k": ["n"] }
        });
        let mut got: Vec<String> = Validator::new(&draft7)
            .unwrap()
            .violations(&json!({ "k": "c" }))
            .iter()
            .map(ToString::to_string)
            .collect();
        got.sort();
        assert_eq!(
            got,
            [
                "at /k: \"c\" is not one of \"a\" or \"b\"",
                "at the root: missing required property \"n\"",
            ]
        );
    }

    /// A union told apart by `const`, as SchemaStore's draft-4 schemas write them, under `draft`.
    fn shapes(draft: &str) -> Value {
        json!({
            "$schema": draft,
            "type": "object",
            "properties": {
                "version": { "const": 1 },
                "shape": {
                    "oneOf": [
                        {
                            "type": "object",
                            "properties": { "kind": { "const": "circle" }, "radius": { "type": "number" } },
                            "required": ["kind"]
                        },
                        {
                            "type": "object",
                            "properties": { "kind": { "const": "square" }, "side": { "type": "number" } },
                            "required": ["kind"]
                        }
                    ]
                }
            }
        })
    }

    const DRAFT_4: &str = "http://json-schema.org/draft-04/schema#";
    const DRAFT_7: &str = "http://json-schema.org/draft-07/schema#";

    #[test]
    fn draft_4_asserts_const_as_later_drafts_define_it() {
        let draft4 = Validator::new(&shapes(DRAFT_4)).unwrap();
        // Each branch's value matches that branch alone (ignoring `const`, it matches both).
        for kind in ["circle", "square"] {
            let instance = json!({ "version": 1, "shape": { "kind": kind } });
            assert!(draft4.is_valid(&instance), "{kind}");
            assert!(draft4.violations(&instance).is_empty(), "{kind}");
        }
        assert_eq!(
            shown_violations(
                &shapes(DRAFT_4),
                json!({ "version": 2, "shape": { "kind": "triangle" } })
            ),
            [
                "at /version: 2 is not the expected 1",
                "at /shape/kind: \"triangle\" is not one of \"circle\" or \"square\"",
            ]
        );
        // An optional value is explained by the `const` of its non-null branch.
        let optional = json!({
            "$schema": DRAFT_4,
            "properties": { "mode": { "anyOf": [{ "const": "fast" }, { "type": "null" }] } }
        });
        assert_eq!(
            shown_violations(&optional, json!({ "mode": "slow" })),
            ["at /mode: \"slow\" is not the expected \"fast\""]
        );
        // Numbers are compared by value, at any depth.
        let one = json!({ "$schema": DRAFT_4, "const": { "n": [1] } });
        let validator = Validator::new(&one).unwrap();
        assert!(validator.is_valid(&json!({ "n": [1.0] })));
        assert!(!validator.is_valid(&json!({ "n": [1.5] })));
        let one = Validator::new(&json!({ "$schema": DRAFT_4, "const": 1 })).unwrap();
        assert!(one.is_valid(&json!(1.0)) && one.is_valid(&json!(1)));
        assert!(!one.is_valid(&json!("1")) && !one.is_valid(&json!(true)));
    }

    #[test]
    fn const_reads_the_same_in_every_draft() {
        let draft7 = shapes(DRAFT_7);
        for instance in [
            json!({ "version": 1.0, "shape": { "kind": "circle" } }),
            json!({ "version": 2, "shape": { "kind": "triangle" } }),
            json!({ "version": "1", "shape": { "kind": "square", "side": "big" } }),
            json!({ "shape": {} }),
        ] {
            assert_eq!(
                shown_violations(&shapes(DRAFT_4), instance.clone()),
                shown_violations(&draft7, instance.clone()),
                "{instance}"
            );
        }
        assert_eq!(
            shown_violations(&draft7, json!({ "version": 2 })),
            ["at /version: 2 is not the expected 1"]
        );
    }

    /// A format each of drafts 4 to 7 lacks, with a string it rejects and one it accepts.
    const LATER_FORMATS: &[(&str, &str, &str)] = &[
        (
            "uuid",
            "2eb8aa08-aa98-11ea-b4aa-73b441d1638",
            "2eb8aa08-aa98-11ea-b4aa-73b441d16380",
        ),
        ("duration", "P1", "P4DT12H30M5S"),
        ("json-pointer", "/foo/bar~", "/foo/bar~0"),
        ("relative-json-pointer", "/foo/bar", "0/foo/bar"),
        ("uri-reference", "\\\\WINDOWS\\fileshare", "/abc"),
        (
            "uri-template",
            "http://example.com/dictionary/{term:1}/{term",
            "http://example.com/{id}",
        ),
        (
            "iri",
            "http://2001:0db8:85a3:0000:0000:8a2e:0370:7334",
            "http://ƒøø.ßår/?∂éœ=πîx#πîüx",
        ),
        (
            "iri-reference",
            "\\\\WINDOWS\\filëßåré",
            "//ƒøø.ßår/?∂éœ=πîx#πîüx",
        ),
        ("idn-hostname", "〮실례.테스트", "실례.테스트"),
    ];

    #[test]
    fn every_drafts_formats_are_asserted_whatever_draft_the_schema_names() {
        for draft in [
            "http://json-schema.org/draft-04/schema#",
            "http://json-schema.org/draft-06/schema#",
            DRAFT_7,
            "https://json-schema.org/draft/2019-09/schema",
            "https://json-schema.org/draft/2020-12/schema",
        ] {
            for (format, wrong, right) in LATER_FORMATS {
                let schema = json!({
                    "$schema": draft,
                    "properties": { "id": { "type": "string", "format": format } }
                });
                let validator = Validator::new(&schema).unwrap();
                assert!(
                    validator.is_valid(&json!({ "id": right })),
                    "{draft} {format} {right}"
                );
                assert_eq!(
                    shown_violations(&schema, json!({ "id": wrong })),
                    [format!("at /id: {} is not a valid {format}", json!(wrong))],
                    "{draft}"
                );
                // A value that is not a string is not the format's business.
                let bare = Validator::new(&json!({ "$schema": draft, "format": format })).unwrap();
                assert!(bare.is_valid(&json!(7)) && !bare.is_valid(&json!(wrong)));
            }
        }
    }

    #[test]
    fn the_strict_reading_asserts_only_the_drafts_own_formats() {
        let strict = |draft: &str, format: &str| {
            let schema = json!({ "$schema": draft, "format": format });
            Validator::with_formats(&schema, None, &[], Formats::PerDraft).unwrap()
        };
        // Draft 4 defines none of them: each is an annotation.
        for (format, wrong, _) in LATER_FORMATS {
            assert!(strict(DRAFT_4, format).is_valid(&json!(wrong)), "{format}");
        }
        // 2020-12 defines them all.
        for (format, wrong, _) in LATER_FORMATS {
            let validator = strict("https://json-schema.org/draft/2020-12/schema", format);
            assert!(!validator.is_valid(&json!(wrong)), "{format}");
        }
        // The draft's own formats are asserted in both readings, each as its draft defines it.
        assert!(!strict(DRAFT_4, "email").is_valid(&json!("no at sign")));
        assert!(!strict(DRAFT_7, "json-pointer").is_valid(&json!("a")));
        assert!(strict(DRAFT_4, "json-pointer").is_valid(&json!("a")));
        // A name no draft defines is ignored in both readings.
        let custom = json!({ "$schema": DRAFT_4, "format": "color" });
        assert!(Validator::new(&custom)
            .unwrap()
            .is_valid(&json!("not a colour")));
    }

    #[test]
    fn a_format_the_schemas_draft_defines_keeps_that_drafts_meaning() {
        // Drafts 4 and 6 read `hostname` by RFC 1034, which takes hyphens in a label's third and
        // fourth places; 2020-12 by RFC 5891, which keeps them for `xn--` labels.
        let host = json!("ab--cd.example");
        for draft in [DRAFT_4, "http://json-schema.org/draft-06/schema#"] {
            let schema = json!({ "$schema": draft, "format": "hostname" });
            assert!(Validator::new(&schema).unwrap().is_valid(&host), "{draft}");
            let strict = Validator::with_formats(&schema, None, &[], Formats::PerDraft).unwrap();
            assert!(strict.is_valid(&host) && !strict.is_valid(&json!("-a.example")));
        }
        let latest = json!({ "format": "hostname" });
        assert!(!Validator::new(&latest).unwrap().is_valid(&host));
    }

    #[test]
    fn a_remote_document_is_refused_unless_given() {
        let schema = json!({ "items": { "$ref": "https://example.com/item.json#/$defs/id" } });
        assert_eq!(
            Validator::new(&schema).unwrap_err(),
            SchemaError::RemoteRef {
                uri: "https://example.com/item.json".into()
            }
        );
        let item = json!({ "$defs": { "id": { "type": "integer" } } });
        let validator = Validator::with_documents(
            &schema,
            None,
            &[("https://example.com/item.json".to_owned(), item)],
        )
        .unwrap();
        assert!(validator.is_valid(&json!([1, 2])) && !validator.is_valid(&json!(["x"])));
    }
}
