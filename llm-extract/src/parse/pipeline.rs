//! The pipeline every frame goes through, whether it is a whole answer, a line, an array element or
//! a candidate value the envelope found: serde straight, else the lenient parser; then validation,
//! and coercion only if validation fails. It takes a frame's text and hands back a checked value or
//! why there is none; where the frame is (the envelope, the framer) is decided before it, which
//! value is the answer after it (`choice`). The candidates of a text go through it in one loop
//! ([`Pipeline::each_candidate`]), which also reads an object closed too early with the members
//! after its brace, when the schema prefers that reading.

use super::envelope::Candidate;
use super::lenient::{self, Cut, Failure, Fixed, Settings, Step};
use super::{coerce, Fix, FixKind, ParseError, ParseOptions, SkipReason, Skipped};
use crate::error::SchemaError;
use crate::schema::node::resolve;
use crate::schema::SchemaSet;
use crate::validate::{Validator, Violation};
use serde::de::DeserializeOwned;
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

/// One schema and one set of options, ready to check frames.
pub(crate) struct Pipeline<'s> {
    schema: &'s SchemaSet,
    validator: Option<&'s Validator>,
    options: ParseOptions,
}

impl<'s> Pipeline<'s> {
    pub(crate) fn new(schema: &'s SchemaSet, options: ParseOptions) -> Result<Self, SchemaError> {
        let validator = if options.validate {
            Some(schema.validator()?)
        } else {
            None
        };
        Ok(Pipeline {
            schema,
            validator,
            options,
        })
    }

    pub(crate) fn options(&self) -> &ParseOptions {
        &self.options
    }

    pub(crate) fn schema(&self) -> &'s SchemaSet {
        self.schema
    }

    /// Whether the wanted value is an object or an array (found by its brackets), rather than a scalar.
    pub(crate) fn wants_container(&self) -> bool {
        self.schema.wants_container()
    }

    /// Whether the wanted value may also be a scalar (see [`SchemaSet::admits_scalar`]).
    pub(crate) fn admits_scalar(&self) -> bool {
        self.schema.admits_scalar()
    }

    /// One frame: serde straight, else (unless strict) the lenient parser; then [`Pipeline::check`].
    pub(crate) fn frame(&self, text: &str, base: usize) -> Result<Accepted, Rejection> {
        match self.straight(text, base) {
            Some(result) => result,
            None => self
                .lenient(text, base, false)
                .map(|(accepted, _)| accepted),
        }
    }

    /// `text` through serde straight, then [`Pipeline::check`]; in strict mode, serde's refusal;
    /// `None` when serde refuses a text the lenient parser may still read.
    pub(crate) fn straight(&self, text: &str, base: usize) -> Option<Result<Accepted, Rejection>> {
        match serde_json::from_str::<Value>(text) {
            Ok(value) => Some(self.check(value, Vec::new(), base)),
            Err(e) if self.options.strict => Some(Err(serde_rejection(&e, text, base))),
            Err(_) => None,
        }
    }

    /// Every candidate value of `text` (found by the envelope), each through the pipeline, handed
    /// to `each` in order as it is evaluated (so a caller keeps only what it needs: a thousand
    /// copies of one value are not all held at once). An object whose members go on after its
    /// brace is read to their end when the schema prefers it (`{"a": 1}, "b": 2}`); values found
    /// inside a value cut off at the end are its parts, not candidates of their own, and are left
    /// out. `base` is the offset of `text` in the whole input.
    pub(crate) fn each_candidate(
        &self,
        text: &str,
        candidates: Vec<Candidate>,
        base: usize,
        mut each: impl FnMut(Candidate, Result<Accepted, Rejection>),
    ) {
        // The end of a candidate that took in the members after it: candidates inside those are
        // its parts.
        let mut taken_to = 0;
        for mut candidate in candidates {
            if candidate.start < taken_to {
                continue;
            }
            let slice = text.get(candidate.start..candidate.end).unwrap_or_default();
            let mut result = self.frame(slice, base + candidate.start);
            if let Some((longer, longer_result)) = self.continued(text, candidate, base, &result) {
                candidate = longer;
                result = longer_result;
                taken_to = candidate.end;
            }
            // A value cut off at the end that reads as the start of a real value (not prose): the
            // candidates after it start inside it.
            let cut = !candidate.closed
                && !matches!(result, Err(Rejection::Syntax { .. } | Rejection::NotJson));
            each(candidate, result);
            if cut {
                break;
            }
        }
    }

    /// An object closed too early, whose members go on after its brace (`{"a": 1}, "b": 2}`): the
    /// longer reading, when the schema prefers it (see [`prefers_longer`]).
    fn continued(
        &self,
        text: &str,
        candidate: Candidate,
        base: usize,
        closed: &Result<Accepted, Rejection>,
    ) -> Option<(Candidate, Result<Accepted, Rejection>)> {
        if self.options.strict || !candidate.closed || !candidate.members_follow {
            return None;
        }
        let (longer, end) = self
            .reopened(text.get(candidate.start..)?, base + candidate.start)
            .ok()?;
        let end = candidate.start + end;
        if end <= candidate.end || !prefers_longer(self.schema, closed, &longer) {
            return None;
        }
        let longer_candidate = Candidate {
            end,
            reopened: true,
            ..candidate
        };
        Some((longer_candidate, Ok(longer)))
    }

    /// A candidate span of `text` read again as [`Pipeline::each_candidate`] read it (for a value
    /// not kept, to compare).
    pub(crate) fn reread(&self, text: &str, candidate: Candidate) -> Result<Accepted, Rejection> {
        let slice = text.get(candidate.start..candidate.end).unwrap_or_default();
        match candidate.reopened {
            true => self
                .reopened(slice, candidate.start)
                .map(|(accepted, _)| accepted),
            false => self.frame(slice, candidate.start),
        }
    }

    /// The lenient parser on `text`, then [`Pipeline::check`]; also where the value ended in `text`.
    fn lenient(
        &self,
        text: &str,
        base: usize,
        reopen: bool,
    ) -> Result<(Accepted, usize), Rejection> {
        let settings = Settings {
            salvage: self.options.salvage,
            // The field is public, so the limit is applied where it is used.
            max_depth: self.options.max_depth.min(super::MAX_DEPTH_LIMIT),
            reopen,
        };
        match lenient::parse(text, base, settings) {
            Ok(Fixed {
                value,
                fixes,
                cut: Some(cut),
                end,
            }) => self.with_cut(value, fixes, cut, base).map(|a| (a, end)),
            Ok(fixed) => self
                .check(fixed.value, fixed.fixes, base)
                .map(|a| (a, fixed.end)),
            Err(Failure::Syntax { message, offset }) => Err(Rejection::Syntax { message, offset }),
            Err(Failure::Truncated { offset }) => Err(Rejection::Truncated { offset }),
            Err(Failure::Empty) => Err(Rejection::NotJson),
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
                if let Ok(accepted) = self.check(kept, kept_fixes, base) {
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
        self.check(value, fixes, base)
    }

    /// Validates; if that fails (and fixes are allowed), rejects an echoed schema, coerces and
    /// validates again.
    pub(crate) fn check(
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

    /// The lenient parser with members that follow the root object's closing brace read as its own
    /// (`{"a": 1}, "b": 2}`, see [`Settings::reopen`]), then [`Pipeline::check`]; also where the
    /// value ended in `text`. Whether that reading is the one meant is [`prefers_longer`]'s call.
    fn reopened(&self, text: &str, base: usize) -> Result<(Accepted, usize), Rejection> {
        self.lenient(text, base, true)
    }
}

/// Whether the longer reading of an object closed too early (`{"a": 1}, "b": 2}`) is the one the
/// schema prefers: when the object as closed fails and the longer one passes, or when both pass and
/// the longer one adds only keys the schema declares (it wants them); keys it does not know say the
/// text after the brace was something else. Without a schema nothing tells, and the object as
/// closed stands.
fn prefers_longer(
    schema: &SchemaSet,
    closed: &Result<Accepted, Rejection>,
    longer: &Accepted,
) -> bool {
    let Ok(closed) = closed else {
        return true;
    };
    let generic = schema.generic();
    let declared = resolve(generic, generic).get("properties");
    let (Some(shorter), Some(longer)) = (closed.value.as_object(), longer.value.as_object()) else {
        return false;
    };
    let mut added = longer
        .keys()
        .filter(|k| !shorter.contains_key(*k))
        .peekable();
    added.peek().is_some() && added.all(|k| declared.and_then(|d| d.get(k)).is_some())
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

/// A strict-mode rejection from serde's error.
pub(crate) fn serde_rejection(e: &serde_json::Error, text: &str, base: usize) -> Rejection {
    if e.is_eof() {
        return Rejection::Truncated {
            offset: base + text.len(),
        };
    }
    // serde counts lines from 1 and columns in bytes from 1.
    let line_start: usize = text
        .split_inclusive('\n')
        .take(e.line().saturating_sub(1))
        .map(str::len)
        .sum();
    let offset = (line_start + e.column().saturating_sub(1)).min(text.len());
    Rejection::Syntax {
        message: e.to_string(),
        offset: base + offset,
    }
}

/// Builds `T` from validated JSON; on failure, the serde path and message.
pub(crate) fn deserialize<T: DeserializeOwned>(json: &Value) -> Result<T, (String, String)> {
    match T::deserialize(json) {
        Ok(value) => Ok(value),
        // Track the path only on failure, so the success path pays nothing for it.
        Err(_) => match serde_path_to_error::deserialize::<_, T>(json) {
            Ok(value) => Ok(value),
            Err(e) => Err((e.path().to_string(), e.into_inner().to_string())),
        },
    }
}

/// An item's validated JSON as a `T`; when serde refuses it, the item is skipped with serde's path
/// and message. The one adapter from validated JSON to `T`, for the decoder and the extraction loop.
pub(crate) fn typed_item<T: DeserializeOwned>(json: &Value, line: usize) -> Result<T, Skipped> {
    deserialize::<T>(json).map_err(|(path, message)| Skipped {
        line,
        raw: json.to_string(),
        reason: SkipReason::Schema(vec![Violation { path, message }]),
    })
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

    #[test]
    fn serde_errors_point_at_the_byte() {
        let text = "{\"a\":1,\n \"b\": x}";
        let e = serde_json::from_str::<Value>(text).unwrap_err();
        match serde_rejection(&e, text, 10) {
            Rejection::Syntax { offset, .. } => assert_eq!(offset, 10 + text.find('x').unwrap()),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn deserialize_errors_carry_the_path() {
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Inner {
            n: u8,
        }
        #[derive(Debug, serde::Deserialize)]
        #[allow(dead_code)]
        struct Outer {
            items: Vec<Inner>,
        }
        let (path, message) =
            deserialize::<Outer>(&json!({"items":[{"n":1},{"n":300}]})).unwrap_err();
        assert_eq!(path, "items[1].n");
        assert!(message.contains("300"), "{message}");
        assert!(typed_item::<Outer>(&json!({"items":[]}), 1).is_ok());
        let skipped = typed_item::<Outer>(&json!({"items":[{"n":-1}]}), 7).unwrap_err();
        assert_eq!(skipped.line, 7);
        assert_eq!(skipped.raw, r#"{"items":[{"n":-1}]}"#);
        assert!(
            matches!(&skipped.reason, SkipReason::Schema(v) if v[0].path == "items[0].n"),
            "{skipped:?}"
        );
    }
}
