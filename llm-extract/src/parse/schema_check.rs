//! The last steps of every frame, once it is read (`pipeline`): validation against the compiled
//! schema and, only where it fails, an echoed schema refused, coercion (`coerce`) and validation
//! again. Also the two choices only the schema can make between readings of one text: a string cut
//! off at the end kept where the schema wants free text (else dropped with its key), and the longer
//! reading of an object closed too early (`{"a": 1}, "b": 2}`). What it hands back, a value that
//! passed or why there is none, is the frame's result.

use super::lenient::{Cut, Fixed, Step};
use super::{coerce, Fix, FixKind, ParseError, ParseOptions, SkipReason};
use crate::error::SchemaError;
use crate::schema::node::resolve;
use crate::schema::SchemaSet;
use crate::validate::{Validator, Violation};
use serde_json::Value;

/// A value that passed.
#[derive(Debug)]
pub(crate) struct Accepted {
    pub(crate) value: Value,
    pub(crate) fixes: Vec<Fix>,
}

/// Why a frame gave no value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Rejection {
    NotJson,
    Syntax { message: String, offset: usize },
    Truncated { offset: usize },
    Schema(Vec<Violation>),
}

impl Rejection {
    pub(crate) fn into_error(self, raw: &str) -> ParseError {
        let raw = raw.to_owned();
        match self {
            Rejection::NotJson => ParseError::NoJson { raw },
            Rejection::Syntax { message, offset } => ParseError::Syntax {
                message,
                offset,
                raw,
            },
            Rejection::Truncated { offset } => ParseError::Truncated { offset, raw },
            Rejection::Schema(violations) => ParseError::Schema { violations, raw },
        }
    }

    pub(crate) fn into_reason(self) -> SkipReason {
        match self {
            Rejection::NotJson => SkipReason::NotJson,
            Rejection::Syntax { message, .. } => SkipReason::Syntax(message),
            Rejection::Truncated { .. } => SkipReason::Truncated,
            Rejection::Schema(violations) => SkipReason::Schema(violations),
        }
    }
}

/// One schema and one set of options, ready to check values as read.
pub(crate) struct SchemaCheck<'s> {
    schema: &'s SchemaSet,
    validator: Option<&'s Validator>,
    options: ParseOptions,
}

impl<'s> SchemaCheck<'s> {
    pub(crate) fn new(schema: &'s SchemaSet, options: ParseOptions) -> Result<Self, SchemaError> {
        let validator = if options.validate {
            Some(schema.validator()?)
        } else {
            None
        };
        Ok(SchemaCheck {
            schema,
            validator,
            options,
        })
    }

    pub(crate) fn schema(&self) -> &'s SchemaSet {
        self.schema
    }

    /// A frame as read (or why it could not be), checked; with `longer`, its reading with the
    /// members after its brace, kept instead when it passes and the schema prefers it
    /// ([`SchemaCheck::prefers_longer`]): then also where that reading ended.
    pub(crate) fn checked(
        &self,
        read: Result<Fixed, Rejection>,
        longer: Option<Fixed>,
        base: usize,
    ) -> (Result<Accepted, Rejection>, Option<usize>) {
        let closed = read.and_then(|read| self.validated_reading(read, base));
        let Some(longer) = longer else {
            return (closed, None);
        };
        let end = longer.end;
        match self.validated_reading(longer, base) {
            Ok(longer) if self.prefers_longer(&closed, &longer) => (Ok(longer), Some(end)),
            _ => (closed, None),
        }
    }

    /// A value as read: a string cut off at its end kept or dropped ([`SchemaCheck::with_cut`]),
    /// then [`SchemaCheck::validated`].
    fn validated_reading(&self, read: Fixed, base: usize) -> Result<Accepted, Rejection> {
        match read.cut {
            Some(cut) => self.with_cut(read.value, read.fixes, cut, base),
            None => self.validated(read.value, read.fixes, base),
        }
    }

    /// A salvaged value whose last member, a string, was cut off at the end: the string is kept
    /// as far as it was read where the schema wants free text there (a string with no `enum`,
    /// `const`, `pattern` or `format`, which a cut could turn into another valid value) and the
    /// value validates with it; otherwise it is dropped with its key, as any cut scalar.
    fn with_cut(
        &self,
        value: Value,
        mut fixes: Vec<Fix>,
        cut: Cut,
        base: usize,
    ) -> Result<Accepted, Rejection> {
        let end = cut.offset;
        if free_text_at(self.schema.generic(), &cut.path) {
            let mut kept = value.clone();
            if insert_at(&mut kept, &cut.path, Value::String(cut.text.clone())) {
                let mut kept_fixes = fixes.clone();
                kept_fixes.push(Fix::new(
                    FixKind::CutString,
                    end,
                    format!(
                        "kept the text at {} cut off at the end of the input after {} \
                         character(s): it is incomplete",
                        pointer(&cut.path),
                        cut.text.chars().count()
                    ),
                ));
                if let Ok(accepted) = self.validated(kept, kept_fixes, base) {
                    return Ok(accepted);
                }
            }
        }
        fixes.push(Fix::new(
            FixKind::DroppedIncomplete,
            end,
            format!(
                "dropped the string at {}, cut off at the end of the input",
                pointer(&cut.path)
            ),
        ));
        self.validated(value, fixes, base)
    }

    /// Validates; if that fails (and fixes are allowed), rejects an echoed schema, coerces and
    /// validates again.
    pub(crate) fn validated(
        &self,
        mut value: Value,
        mut fixes: Vec<Fix>,
        base: usize,
    ) -> Result<Accepted, Rejection> {
        let schema = self.schema.generic();
        let Some(validator) = self.validator else {
            if !self.options.strict {
                coerce::coerce(&mut value, schema, base, &mut fixes);
            }
            return Ok(Accepted { value, fixes });
        };
        if validator.is_valid(&value) {
            return Ok(Accepted { value, fixes });
        }
        if self.options.strict {
            return Err(Rejection::Schema(validator.violations(&value)));
        }
        if coerce::is_schema_echo(&value, schema) {
            return Err(Rejection::Schema(vec![Violation {
                path: String::new(),
                message: "the answer is a JSON Schema, not data: the model echoed the schema \
                          instead of filling it in"
                    .into(),
            }]));
        }
        coerce::coerce(&mut value, schema, base, &mut fixes);
        let violations = validator.violations(&value);
        if violations.is_empty() {
            Ok(Accepted { value, fixes })
        } else {
            Err(Rejection::Schema(violations))
        }
    }

    /// Whether the longer reading of an object closed too early (`{"a": 1}, "b": 2}`) is the one the
    /// schema prefers: when the object as closed fails and the longer one passes, or when both pass and
    /// the longer one adds only keys the schema declares (it wants them); keys it does not know say the
    /// text after the brace was something else. Without a schema nothing tells, and the object as
    /// closed stands.
    fn prefers_longer(&self, closed: &Result<Accepted, Rejection>, longer: &Accepted) -> bool {
        let Ok(closed) = closed else {
            return true;
        };
        let generic = self.schema.generic();
        let declared = resolve(generic, generic).get("properties");
        let (Some(shorter), Some(longer)) = (closed.value.as_object(), longer.value.as_object())
        else {
            return false;
        };
        let mut added = longer
            .keys()
            .filter(|k| !shorter.contains_key(*k))
            .peekable();
        added.peek().is_some() && added.all(|k| declared.and_then(|d| d.get(k)).is_some())
    }
}

/// Whether `schema` wants free text at `path`, an object member: a string with no `enum`, `const`,
/// `pattern` or `format` (an optional one, too: `null` is the other choice of `anyOf` or `type`).
fn free_text_at(schema: &Value, path: &[Step]) -> bool {
    if !matches!(path.last(), Some(Step::Key(_))) {
        return false;
    }
    // One step of the path per schema step, each `$ref` followed: the walk ends with the path.
    let node_at = |node| resolve(schema, one_branch(schema, resolve(schema, node)));
    let mut at = Some(schema);
    for step in path {
        at = at.map(node_at).and_then(|node| match step {
            Step::Key(key) => node.get("properties")?.get(key),
            Step::Index(_) => node.get("items"),
        });
    }
    let Some(node) = at.map(node_at) else {
        return false;
    };
    let is_string = match node.get("type") {
        Some(Value::String(t)) => t == "string",
        Some(Value::Array(types)) => {
            types.iter().any(|t| t == "string")
                && types.iter().all(|t| t == "string" || t == "null")
        }
        _ => false,
    };
    is_string
        && ["enum", "const", "pattern", "format"]
            .iter()
            .all(|k| node.get(k).is_none())
}

/// The one branch of an `anyOf`/`oneOf` that is not `null` (an optional value), or the schema;
/// `root` is the schema its `$ref`s point into.
fn one_branch<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    let branches = schema
        .get("anyOf")
        .or_else(|| schema.get("oneOf"))
        .and_then(Value::as_array);
    let Some(branches) = branches else {
        return schema;
    };
    let mut other = branches
        .iter()
        .filter(|b| resolve(root, b).get("type").is_none_or(|t| t != "null"));
    match (other.next(), other.next()) {
        (Some(one), None) => one,
        _ => schema,
    }
}

/// Puts `item` at `path` in `value`; whether every container on the way was there.
fn insert_at(value: &mut Value, path: &[Step], item: Value) -> bool {
    let Some((last, above)) = path.split_last() else {
        return false;
    };
    let mut at = value;
    for step in above {
        let next = match (step, at) {
            (Step::Key(key), Value::Object(map)) => map.get_mut(key),
            (Step::Index(i), Value::Array(items)) => items.get_mut(*i),
            _ => None,
        };
        match next {
            Some(next) => at = next,
            None => return false,
        }
    }
    match (last, at) {
        (Step::Key(key), Value::Object(map)) => {
            map.insert(key.clone(), item);
            true
        }
        _ => false,
    }
}

/// A path as a JSON pointer (`/a/0/b`), `the root` when empty; long paths shortened.
fn pointer(path: &[Step]) -> String {
    if path.is_empty() {
        return "the root".into();
    }
    let mut out = String::new();
    for step in path {
        out.push('/');
        match step {
            Step::Key(key) => out.push_str(&crate::schema::node::escape_token(key)),
            Step::Index(i) => out.push_str(&i.to_string()),
        }
        if out.len() > 200 {
            out.push_str("...");
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn free_text_is_a_plain_string_member() {
        let key = |k: &str| Step::Key(k.into());
        let schema = json!({"type": "object", "properties": {
            "bio": {"type": "string", "maxLength": 500},
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "alt": {"type": ["string", "null"]},
            "mood": {"type": "string", "enum": ["up", "down"]},
            "url": {"type": "string", "format": "uri"},
            "code": {"type": "string", "pattern": "^[A-Z]+$"},
            "n": {"type": "integer"},
            "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "people": {"type": "array", "items": {"type": "object", "properties": {
                "name": {"type": "string"}
            }}},
            "tags": {"type": "array", "items": {"type": "string"}}
        }});
        for field in ["bio", "note", "alt"] {
            assert!(free_text_at(&schema, &[key(field)]), "{field}");
        }
        for field in ["mood", "url", "code", "n", "either", "missing"] {
            assert!(!free_text_at(&schema, &[key(field)]), "{field}");
        }
        assert!(free_text_at(
            &schema,
            &[key("people"), Step::Index(3), key("name")]
        ));
        assert!(!free_text_at(&schema, &[key("tags"), Step::Index(0)]));
        assert!(!free_text_at(&json!({}), &[key("bio")]));
    }

    #[test]
    fn a_value_goes_in_only_where_its_containers_are() {
        let mut value = json!({"a": [{"b": 1}]});
        let path = [Step::Key("a".into()), Step::Index(0), Step::Key("c".into())];
        assert!(insert_at(&mut value, &path, json!("x")));
        assert_eq!(value, json!({"a": [{"b": 1, "c": "x"}]}));
        let missing = [Step::Key("a".into()), Step::Index(1), Step::Key("c".into())];
        assert!(!insert_at(&mut value, &missing, json!("x")));
        assert!(!insert_at(&mut value, &[], json!("x")));
        assert_eq!(pointer(&path), "/a/0/c");
        assert_eq!(pointer(&[Step::Key("a/b~".into())]), "/a~1b~0");
    }
}
