//! Compact format instructions for prompts: the type a model must write, not a schema dump.
//!
//! The text reads like a JSON value with types in place of values, close to TypeScript, written
//! as tightly as JSON itself (`"key":type`, no space after `:` or `,`) since every space and line
//! break costs a token:
//!
//! ```text
//! {"name":2-50 char string matching P1,"tags":array of up to 3 string matching P1,"score":number 0..1}
//! P1 = ^[a-z0-9]+(-[a-z0-9]+)*$
//! ```
//!
//! - Types: `string`, `integer`, `number`, `boolean`, `null`, literal values for `const`, small and large
//!   enums inline (`"a"|"b"`), `array of T`, `object mapping string keys to T` for maps,
//!   `X or null` for optional values, `any JSON value` for `{}`.
//! - Constraints stay next to the type, tersely: `2-50 char string matching ^[a-z]+$`,
//!   `up to 20 char string`, `number 0..1`, `integer >= 0`, `array of up to 3 T`,
//!   `array of 1-5 unique T`, `string in date-time format`.
//! - A pattern written two or more times in one rendering is written once, as a definition
//!   (`P1 = ...`) on a line after the type, and by its name (`matching P1`) where it applies;
//!   `P2`, ... name further repeated patterns in the order they first appear. A pattern written
//!   once stays in place.
//! - Keys stay quoted: a model imitates the template, and unquoted keys would invite invalid JSON.
//! - An object with no comments inside is written on one line. Descriptions become `//` comments
//!   at the end of the line that opens the value, so an object with comments inside takes one
//!   line per key; examples follow them (`e.g. "acme"`); a key the value may leave out (a
//!   `#[serde(default)]` field) says `optional`:
//!
//! ```text
//! {
//!   "sentiment":"positive"|"negative"|"neutral", // The overall polarity.
//!   "score":number 0..1, // How strongly the text expresses it.
//!   "nickname":up to 20 char string or null
//! }
//! ```
//!
//! - A union of objects (a tagged enum) lists its variants one after another, each with its
//!   discriminator written as a literal (`"type":"definition"`); so does a union of objects and
//!   other values (an externally tagged enum: `"cash"|"check"` on a line, then `{"card":{...}}`).
//!   A catch-all variant's tag is `any other string`.
//! - A tuple is written as its elements in brackets: `[string,integer >= 0]`.
//!
//! - A `$ref` is written as the name of what it points at (`Section`, the last token of its
//!   pointer; `#` is the whole value), and each name used is defined once, on lines after the type,
//!   in order of first use: `Section = {"title":string,"sections":array of Section}`. So a recursive
//!   schema has finite instructions, each of its types written once.
//!
//! [`render_one`] is meant to follow a phrase such as "Answer with JSON of this form:" in a prompt.
//! [`render_lines`] says itself that the answer is JSON Lines.

use super::node;
use crate::validate::number_text;
use serde_json::{Map, Value};
use std::fmt::Write as _;

/// Instructions for one value: the type definition of `schema` (a generic schema).
///
/// ```
/// use llm_extract::schema::instructions::render_one;
/// use serde_json::json;
///
/// let schema = json!({
///     "type": "object",
///     "properties": {
///         "person": { "type": ["string", "null"] },
///         "age": { "type": "integer", "minimum": 0, "maximum": 150 }
///     },
///     "required": ["age"],
///     "additionalProperties": false
/// });
/// assert_eq!(render_one(&schema), r#"{"person":string or null,"age":integer 0..150}"#);
/// ```
pub fn render_one(schema: &Value) -> String {
    render(schema, |renderer| renderer.one(schema))
}

/// Instructions for JSON Lines: one value of `schema` (a generic schema) per line.
///
/// An object whose keys all have one-line types is shown on one line, as each line of the answer
/// must be written, with the descriptions of its keys on comment lines below it.
///
/// ```
/// use llm_extract::schema::instructions::render_lines;
/// use serde_json::json;
///
/// let schema = json!({
///     "type": "object",
///     "properties": {
///         "name": { "type": "string", "description": "Full name." },
///         "age": { "type": "integer", "minimum": 0 }
///     },
///     "required": ["name", "age"],
///     "additionalProperties": false
/// });
/// assert_eq!(
///     render_lines(&schema),
///     "One JSON object per line, nothing else (no array, no prose):\n\
///      {\"name\":string,\"age\":integer >= 0}\n\
///      // name: Full name."
/// );
/// ```
pub fn render_lines(schema: &Value) -> String {
    render(schema, |renderer| renderer.lines(schema))
}

/// Runs `write` and appends the definitions of the patterns it wrote more than once.
///
/// Whether a pattern repeats is known only once the whole type is written, so a type with a
/// repeated pattern is written twice: the first time finds the patterns, the second names them.
fn render<'a>(root: &'a Value, write: impl Fn(&mut Renderer<'a>) -> String) -> String {
    let mut finder = Renderer::new(root);
    let mut first = write(&mut finder);
    first.push_str(&finder.definitions());
    let named = finder.repeated_patterns();
    if named.is_empty() {
        return first;
    }
    let mut renderer = Renderer {
        named,
        ..Renderer::new(root)
    };
    let mut out = write(&mut renderer);
    out.push_str(&renderer.definitions());
    for (i, pattern) in renderer.named.iter().enumerate() {
        let _ = write!(out, "\n{} = {pattern}", pattern_name(i));
    }
    out
}

/// The name of the `index`-th repeated pattern: `P1`, `P2`, ...
fn pattern_name(index: usize) -> String {
    format!("P{}", index + 1)
}

/// The variants of a union of objects, one after another; a `null` branch is written last.
fn push_variants(out: &mut String, schema: &Value, blocks: Vec<String>) {
    out.push_str(&blocks.join("\n"));
    if union_branches(schema).is_some_and(|branches| branches.iter().any(is_null)) {
        out.push_str("\nnull");
    }
}

/// Appends `lines`, with `comment` on the first line and `suffix` (a comma) on the last.
fn push_lines(out: &mut String, mut lines: Vec<String>, comment: Option<&str>, suffix: &str) {
    if let Some(last) = lines.last_mut() {
        last.push_str(suffix);
    }
    if let (Some(first), Some(comment)) = (lines.first_mut(), comment) {
        // A one-line value takes its comma before the comment.
        let _ = write!(first, " // {comment}");
    }
    out.push_str(&lines.join("\n"));
}

/// The branches of a union of two or more non-null branches of which one at least is an object (a
/// tagged enum, an optional one, an externally tagged enum with its unit variants' names), or `None`.
fn object_variants(schema: &Value) -> Option<Vec<&Value>> {
    let branches = union_branches(schema)?;
    let variants: Vec<&Value> = branches.iter().filter(|branch| !is_null(branch)).collect();
    let any_object = variants.iter().any(|variant| is_object(variant));
    (any_object && variants.len() > 1).then_some(variants)
}

fn union_branches(schema: &Value) -> Option<&Vec<Value>> {
    schema
        .get("oneOf")
        .or_else(|| schema.get("anyOf"))
        .and_then(Value::as_array)
}

fn is_null(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("null")
        || schema.get("const").is_some_and(Value::is_null)
}

fn is_object(schema: &Value) -> bool {
    schema.get("properties").is_some()
        || schema.get("type").and_then(Value::as_str) == Some("object")
}

/// Whether `schema` is written as alternatives (`"a"|"b"`, `string or null`), which an array
/// of them must put in parentheses: `array of ("a"|"b")`, not `array of "a"|"b"`.
fn is_alternatives(schema: &Value) -> bool {
    if schema.get("const").is_some() {
        return false;
    }
    if let Some(Value::Array(values)) = schema.get("enum") {
        return values.len() > 1;
    }
    if let Some(branches) = union_branches(schema) {
        return branches.len() > 1;
    }
    matches!(schema.get("type"), Some(Value::Array(types)) if types.len() > 1)
}

fn description(schema: &Value) -> Option<String> {
    let text = schema.get("description")?.as_str()?;
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    (!collapsed.is_empty()).then_some(collapsed)
}

/// The comment of a value: `optional`, its description, its examples.
fn comment(schema: &Value, optional: bool) -> Option<String> {
    let mut parts = Vec::new();
    if optional {
        parts.push("optional".to_owned());
    }
    if let Some(description) = description(schema) {
        parts.push(description);
    }
    if let Some(Value::Array(examples)) = schema.get("examples") {
        if !examples.is_empty() {
            let shown: Vec<String> = examples.iter().map(Value::to_string).collect();
            parts.push(format!("e.g. {}", shown.join(", ")));
        }
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// The comment of a property: its own, or else that of the items of the sequence it holds.
fn property_comment(object: &Map<String, Value>, name: &str, schema: &Value) -> Option<String> {
    comment(schema, is_optional_key(object, name, schema))
        .or_else(|| schema.get("items").and_then(|items| comment(items, false)))
}

/// Whether a value's rendering carries a comment anywhere inside (then it cannot fit on one line).
fn has_comments(schema: &Value) -> bool {
    match schema {
        Value::Object(map) => {
            map.contains_key("description")
                || map.contains_key("examples")
                || map
                    .get("properties")
                    .and_then(Value::as_object)
                    .is_some_and(|properties| {
                        properties
                            .iter()
                            .any(|(name, sub)| has_comments(sub) || is_optional_key(map, name, sub))
                    })
                || ["items", "additionalProperties"]
                    .iter()
                    .filter_map(|key| map.get(*key))
                    .any(has_comments)
                || union_branches(schema).is_some_and(|branches| branches.iter().any(has_comments))
        }
        _ => false,
    }
}

/// A key the value may leave out although it cannot be `null` (a `#[serde(default)]` field).
fn is_optional_key(object: &Map<String, Value>, name: &str, schema: &Value) -> bool {
    let required = object
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|names| names.iter().any(|n| n == name));
    !required && !accepts_null(schema)
}

fn accepts_null(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) if t == "null" => return true,
        Some(Value::Array(types)) if types.iter().any(|t| t == "null") => return true,
        _ => {}
    }
    schema
        .get("enum")
        .and_then(Value::as_array)
        .is_some_and(|values| values.iter().any(Value::is_null))
        || union_branches(schema).is_some_and(|branches| branches.iter().any(accepts_null))
}

fn indent(level: usize) -> String {
    "  ".repeat(level)
}

/// `"key":`, the way every key is introduced.
fn key(name: &str) -> String {
    format!("{}:", Value::from(name))
}

/// Writes the instructions of one rendering, and keeps what must be consistent across it: the
/// names of repeated patterns, and of the references written.
struct Renderer<'a> {
    /// The schema being rendered, which `$ref`s point into.
    root: &'a Value,
    /// Every pattern written so far, repeats included, in order of writing.
    written: Vec<String>,
    /// The patterns written by name: the first is `P1`.
    named: Vec<String>,
    /// The references written, by name, in order of first use, each with what it points at.
    references: Vec<(String, &'a Value)>,
}

impl<'a> Renderer<'a> {
    fn new(root: &'a Value) -> Self {
        Renderer {
            root,
            written: Vec::new(),
            named: Vec::new(),
            references: Vec::new(),
        }
    }

    /// A `$ref` as written where it applies: the name of its target (see the module documentation),
    /// remembered to be defined after the type. A reference that points nowhere is any value.
    fn reference(&mut self, reference: &str) -> String {
        let Some(target) = node::target(self.root, reference) else {
            return "any JSON value".to_owned();
        };
        if std::ptr::eq(target, self.root) {
            return "the whole value".to_owned();
        }
        // The pointer's last token, unescaped (`~1` is `/`, `~0` is `~`).
        let last = reference.rsplit('/').next().unwrap_or(reference);
        let name = last.replace("~1", "/").replace("~0", "~");
        let name = match self
            .references
            .iter()
            .find(|(_, seen)| std::ptr::eq(*seen, target))
        {
            Some((known, _)) => known.clone(),
            None => {
                // Two targets with the same last token: the later is numbered.
                let mut unique = name.clone();
                let mut n = 2;
                while self.references.iter().any(|(known, _)| *known == unique) {
                    unique = format!("{name}{n}");
                    n += 1;
                }
                self.references.push((unique.clone(), target));
                unique
            }
        };
        name
    }

    /// The definitions of the references written, `Name = type`, one after another; those their
    /// own types write are defined after them, each once.
    fn definitions(&mut self) -> String {
        let mut out = String::new();
        let mut next = 0;
        while let Some((name, target)) = self.references.get(next).cloned() {
            next += 1;
            let text = self.type_lines(target, 0);
            out.push('\n');
            push_lines(
                &mut out,
                prefix(&format!("{name} = "), text),
                comment(target, false).as_deref(),
                "",
            );
        }
        out
    }

    /// The patterns written more than once, in order of first use.
    fn repeated_patterns(&self) -> Vec<String> {
        let mut repeated: Vec<String> = Vec::new();
        for pattern in &self.written {
            let uses = self.written.iter().filter(|p| *p == pattern).count();
            if uses > 1 && !repeated.contains(pattern) {
                repeated.push(pattern.clone());
            }
        }
        repeated
    }

    /// `pattern` as written where it applies: its name if it has one, else itself.
    fn pattern(&mut self, pattern: &str) -> String {
        self.written.push(pattern.to_owned());
        match self.named.iter().position(|named| named == pattern) {
            Some(index) => pattern_name(index),
            None => pattern.to_owned(),
        }
    }

    /// See [`render_one`].
    fn one(&mut self, schema: &Value) -> String {
        let mut out = String::new();
        if let Some(variants) = object_variants(schema) {
            if let Some(description) = description(schema) {
                let _ = writeln!(out, "// {description}");
            }
            out.push_str("One of:\n");
            let blocks = variants.iter().map(|variant| self.block(variant)).collect();
            push_variants(&mut out, schema, blocks);
        } else {
            out.push_str(&self.block(schema));
        }
        out
    }

    /// See [`render_lines`].
    fn lines(&mut self, schema: &Value) -> String {
        let mut out = String::new();
        if let Some(variants) = object_variants(schema) {
            out.push_str(
                "One JSON object per line, nothing else (no array, no prose). Each line is one of:\n",
            );
            if let Some(description) = description(schema) {
                let _ = writeln!(out, "// {description}");
            }
            let blocks = variants.iter().map(|variant| self.line(variant)).collect();
            push_variants(&mut out, schema, blocks);
        } else {
            let what = if is_object(schema) { "object" } else { "value" };
            let _ = writeln!(
                out,
                "One JSON {what} per line, nothing else (no array, no prose):"
            );
            out.push_str(&self.line(schema));
        }
        out
    }

    /// A top-level value (the root, or one variant of it) as a block, its description on its first line.
    fn block(&mut self, schema: &Value) -> String {
        let mut out = String::new();
        let lines = self.type_lines(schema, 0);
        push_lines(&mut out, lines, comment(schema, false).as_deref(), "");
        out
    }

    /// A top-level value as one line when its keys all have one-line types, the descriptions of the
    /// keys on comment lines below it; otherwise as a block.
    fn line(&mut self, schema: &Value) -> String {
        let Some(Value::Object(properties)) = schema.get("properties") else {
            return self.block(schema);
        };
        let object = schema.as_object().map_or_else(Map::new, Clone::clone);
        // A fallback to a block writes the patterns again: count only those of what is kept.
        let written = self.written.len();
        let mut parts = Vec::with_capacity(properties.len());
        let mut notes = Vec::new();
        for (name, sub) in properties {
            let lines = self.type_lines(sub, 0);
            let [line] = lines.as_slice() else {
                self.written.truncate(written);
                return self.block(schema);
            };
            parts.push(format!("{}{line}", key(name)));
            if let Some(comment) = property_comment(&object, name, sub) {
                notes.push(format!("// {name}: {comment}"));
            }
        }
        let mut out = format!("{{{}}}", parts.join(","));
        if let Some(comment) = comment(schema, false) {
            let _ = write!(out, " // {comment}");
        }
        for note in notes {
            out.push('\n');
            out.push_str(&note);
        }
        out
    }

    /// The type of `schema` as lines; the first continues the line that introduces the value, the
    /// others start with their own indentation (`level` is the indentation of the introducing line).
    fn type_lines(&mut self, schema: &Value, level: usize) -> Vec<String> {
        if let Some(reference) = node::reference_of(schema) {
            return vec![self.reference(reference)];
        }
        let Value::Object(map) = schema else {
            return vec![if schema == &Value::Bool(false) {
                "nothing".to_owned()
            } else {
                "any JSON value".to_owned()
            }];
        };
        if let Some(value) = map.get("const") {
            return vec![value.to_string()];
        }
        if let Some(Value::Array(values)) = map.get("enum") {
            let shown: Vec<String> = values.iter().map(Value::to_string).collect();
            return vec![shown.join("|")];
        }
        if let Some(branches) = union_branches(schema) {
            return self.union_lines(schema, branches, level);
        }

        let types: Vec<&str> = match map.get("type") {
            Some(Value::String(one)) => vec![one.as_str()],
            Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
            _ if map.contains_key("properties") => vec!["object"],
            _ => return vec!["any JSON value".to_owned()],
        };
        let nullable = types.contains(&"null");
        let mut alternatives: Vec<Vec<String>> = types
            .iter()
            .filter(|t| **t != "null")
            .map(|t| self.single_type_lines(map, t, level))
            .collect();
        if alternatives.is_empty() {
            return vec!["null".to_owned()];
        }
        if nullable {
            alternatives.push(vec!["null".to_owned()]);
        }
        join_alternatives(alternatives)
    }

    fn union_lines(&mut self, schema: &Value, branches: &[Value], level: usize) -> Vec<String> {
        if let Some(variants) = object_variants(schema) {
            // A union of objects inside a value: "one of:" then each variant on its own lines.
            let mut lines = vec!["one of:".to_owned()];
            for variant in variants {
                let mut block = String::new();
                let variant_lines = prefix(&indent(level + 1), self.type_lines(variant, level + 1));
                push_lines(
                    &mut block,
                    variant_lines,
                    comment(variant, false).as_deref(),
                    "",
                );
                lines.extend(block.split('\n').map(str::to_owned));
            }
            if branches.iter().any(is_null) {
                lines.push(format!("{}null", indent(level + 1)));
            }
            return lines;
        }
        let alternatives = branches
            .iter()
            .map(|branch| self.type_lines(branch, level))
            .collect();
        join_alternatives(alternatives)
    }

    /// One JSON type of a schema (which may list several), with its constraints.
    fn single_type_lines(
        &mut self,
        map: &Map<String, Value>,
        ty: &str,
        level: usize,
    ) -> Vec<String> {
        match ty {
            "object" => self.object_lines(map, level),
            "array" => self.array_lines(map, level),
            "string" => vec![self.string_type(map)],
            "integer" | "number" => vec![format!("{ty}{}", number_constraints(map))],
            other => vec![other.to_owned()],
        }
    }

    fn object_lines(&mut self, map: &Map<String, Value>, level: usize) -> Vec<String> {
        let properties = match map.get("properties") {
            Some(Value::Object(properties)) => properties,
            _ => {
                return match map.get("additionalProperties") {
                    Some(value @ Value::Object(_)) => prefix(
                        "object mapping string keys to ",
                        self.type_lines(value, level),
                    ),
                    Some(Value::Bool(false)) => vec!["{}".to_owned()],
                    _ => vec!["object".to_owned()],
                };
            }
        };
        if properties.is_empty() {
            return vec!["{}".to_owned()];
        }

        let inline = !properties
            .iter()
            .any(|(name, sub)| has_comments(sub) || is_optional_key(map, name, sub));
        if inline {
            // A fallback to one key per line writes the patterns again: count only those kept.
            let written = self.written.len();
            let parts: Option<Vec<String>> = properties
                .iter()
                .map(|(name, sub)| match self.type_lines(sub, level).as_slice() {
                    [line] => Some(format!("{}{line}", key(name))),
                    _ => None,
                })
                .collect();
            if let Some(parts) = parts {
                return vec![format!("{{{}}}", parts.join(","))];
            }
            self.written.truncate(written);
        }

        let mut lines = vec!["{".to_owned()];
        let count = properties.len();
        for (i, (name, sub)) in properties.iter().enumerate() {
            let mut out = String::new();
            let value_lines = prefix(
                &format!("{}{}", indent(level + 1), key(name)),
                self.type_lines(sub, level + 1),
            );
            let suffix = if i + 1 < count { "," } else { "" };
            let comment = property_comment(map, name, sub);
            push_lines(&mut out, value_lines, comment.as_deref(), suffix);
            lines.extend(out.split('\n').map(str::to_owned));
        }
        lines.push(format!("{}}}", indent(level)));
        lines
    }

    fn array_lines(&mut self, map: &Map<String, Value>, level: usize) -> Vec<String> {
        let count = match (
            uint(map, "minItems").filter(|n| *n > 0),
            uint(map, "maxItems"),
        ) {
            (Some(min), Some(max)) if min == max => format!("exactly {min} "),
            (Some(min), Some(max)) => format!("{min}-{max} "),
            (Some(min), None) => format!("at least {min} "),
            (None, Some(max)) => format!("up to {max} "),
            (None, None) => String::new(),
        };
        let unique = if map.get("uniqueItems") == Some(&Value::Bool(true)) {
            "unique "
        } else {
            ""
        };
        if let Some(Value::Array(elements)) = map.get("prefixItems") {
            return self.tuple_lines(map, elements, level);
        }
        let item_lines = match map.get("items") {
            Some(items) => match self.type_lines(items, level).as_slice() {
                [line] if is_alternatives(items) => vec![format!("({line})")],
                lines => lines.to_vec(),
            },
            None => vec!["any JSON value".to_owned()],
        };
        prefix(&format!("array of {count}{unique}"), item_lines)
    }

    /// A fixed-length array (a tuple): its elements in brackets, `[string,integer]`, one per line
    /// when one of them takes several; `or a shorter start of it` when trailing elements may be
    /// left out.
    fn tuple_lines(
        &mut self,
        map: &Map<String, Value>,
        elements: &[Value],
        level: usize,
    ) -> Vec<String> {
        let written = self.written.len();
        let parts: Option<Vec<String>> = elements
            .iter()
            .map(|element| match self.type_lines(element, level).as_slice() {
                [line] => Some(line.clone()),
                _ => None,
            })
            .collect();
        let shorter = uint(map, "minItems").unwrap_or(0) < elements.len() as u64;
        let suffix = if shorter {
            " or a shorter start of it"
        } else {
            ""
        };
        if let Some(parts) = parts {
            return vec![format!("[{}]{suffix}", parts.join(","))];
        }
        self.written.truncate(written);
        let mut lines = vec!["[".to_owned()];
        for (i, element) in elements.iter().enumerate() {
            let comma = if i + 1 < elements.len() { "," } else { "" };
            let mut element_lines = prefix(&indent(level + 1), self.type_lines(element, level + 1));
            if let Some(last) = element_lines.last_mut() {
                last.push_str(comma);
            }
            lines.extend(element_lines);
        }
        lines.push(format!("{}]{suffix}", indent(level)));
        lines
    }

    /// A string type with its constraints: `2-50 char string matching ^[a-z]+$`.
    fn string_type(&mut self, map: &Map<String, Value>) -> String {
        if map.get("not").and_then(|not| not.get("enum")).is_some() {
            // The tag of a catch-all variant: anything but the names listed beside it.
            return "any other string".to_owned();
        }
        let mut out = match (
            uint(map, "minLength").filter(|n| *n > 0),
            uint(map, "maxLength"),
        ) {
            (Some(min), Some(max)) if min == max => format!("{min} char string"),
            (Some(min), Some(max)) => format!("{min}-{max} char string"),
            (Some(min), None) => format!("{min}+ char string"),
            (None, Some(max)) => format!("up to {max} char string"),
            (None, None) => "string".to_owned(),
        };
        if let Some(pattern) = map.get("pattern").and_then(Value::as_str) {
            let _ = write!(out, " matching {}", self.pattern(pattern));
        }
        if let Some(format) = map.get("format").and_then(Value::as_str) {
            let _ = write!(out, " in {format} format");
        }
        out
    }
}

/// Joins alternatives with " or ": multi-line ones continue on their last line.
fn join_alternatives(alternatives: Vec<Vec<String>>) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for alternative in alternatives {
        match lines.last_mut() {
            None => lines = alternative,
            Some(last) => {
                let mut rest = alternative.into_iter();
                if let Some(first) = rest.next() {
                    let _ = write!(last, " or {first}");
                }
                lines.extend(rest);
            }
        }
    }
    lines
}

fn prefix(head: &str, mut lines: Vec<String>) -> Vec<String> {
    if let Some(first) = lines.first_mut() {
        first.insert_str(0, head);
    }
    lines
}

fn uint(map: &Map<String, Value>, key: &str) -> Option<u64> {
    map.get(key).and_then(Value::as_u64)
}
/// What bounds that only restate the range of a Rust integer type still say to a model:
/// nothing for a signed type, `>= 0` for an unsigned one. `None` for other bounds.
fn machine_range(min: &Value, max: &Value) -> Option<&'static str> {
    const SIGNED: &[(i64, i64)] = &[
        (i8::MIN as i64, i8::MAX as i64),
        (i16::MIN as i64, i16::MAX as i64),
        (i32::MIN as i64, i32::MAX as i64),
    ];
    const UNSIGNED: &[i64] = &[u8::MAX as i64, u16::MAX as i64, u32::MAX as i64];
    let (min, max) = (min.as_i64()?, max.as_i64()?);
    if SIGNED.contains(&(min, max)) {
        Some("")
    } else if min == 0 && UNSIGNED.contains(&max) {
        Some(" >= 0")
    } else {
        None
    }
}

fn number_constraints(map: &Map<String, Value>) -> String {
    let min = map.get("minimum");
    let max = map.get("maximum");
    let exclusive_min = map.get("exclusiveMinimum");
    let exclusive_max = map.get("exclusiveMaximum");
    let mut out = String::new();
    match (min, max) {
        (Some(min), Some(max)) => match machine_range(min, max) {
            Some(said) => out.push_str(said),
            None => {
                let _ = write!(out, " {}..{}", number_text(min), number_text(max));
            }
        },
        (Some(min), None) => {
            let _ = write!(out, " >= {}", number_text(min));
        }
        (None, Some(max)) => {
            let _ = write!(out, " <= {}", number_text(max));
        }
        (None, None) => {}
    }
    if let Some(bound) = exclusive_min {
        let _ = write!(out, " > {}", number_text(bound));
    }
    if let Some(bound) = exclusive_max {
        let _ = write!(out, " < {}", number_text(bound));
    }
    if let Some(step) = map.get("multipleOf") {
        let _ = write!(out, " multiple of {}", number_text(step));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn closed(properties: Value, required: &[&str]) -> Value {
        json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false
        })
    }

    #[test]
    fn a_flat_object_without_comments_fits_on_one_line() {
        let schema = closed(
            json!({
                "sentiment": { "type": "string", "enum": ["positive", "negative", "neutral"] },
                "score": { "type": "number", "minimum": 0.0, "maximum": 1.0 }
            }),
            &["sentiment", "score"],
        );
        assert_eq!(
            render_one(&schema),
            r#"{"sentiment":"positive"|"negative"|"neutral","score":number 0..1}"#
        );
    }

    #[test]
    fn an_object_without_comments_stays_on_one_line_however_long() {
        let names = (0..30).map(|i| format!("field_number_{i}"));
        let properties: Map<String, Value> = names
            .clone()
            .map(|name| (name, json!({ "type": "string" })))
            .collect();
        let required: Vec<String> = names.collect();
        let required: Vec<&str> = required.iter().map(String::as_str).collect();
        let rendered = render_one(&closed(Value::Object(properties), &required));
        assert!(rendered.len() > 500, "{rendered}");
        assert!(!rendered.contains('\n'), "{rendered}");
    }

    #[test]
    fn descriptions_become_comments_after_the_comma() {
        let schema = json!({
            "type": "object",
            "description": "A person.",
            "properties": {
                "name": { "type": "string", "description": "Full\n   name." },
                "age": { "type": ["integer", "null"], "minimum": 0, "maximum": 255, "examples": [42] }
            },
            "required": ["name"],
            "additionalProperties": false
        });
        assert_eq!(
            render_one(&schema),
            "{ // A person.\n  \"name\":string, // Full name.\n  \"age\":integer >= 0 or null // e.g. 42\n}"
        );
    }

    #[test]
    fn constraints_are_terse() {
        let schema = closed(
            json!({
                "slug": { "type": "string", "pattern": "^[a-z]+$", "minLength": 2, "maxLength": 50 },
                "letter": { "type": "string", "minLength": 1, "maxLength": 1 },
                "code": { "type": "string", "minLength": 3, "maxLength": 3 },
                "long": { "type": "string", "minLength": 10 },
                "short": { "type": "string", "maxLength": 20 },
                "count": { "type": "integer", "minimum": 0 },
                "small": { "type": "integer", "minimum": -128, "maximum": 127 },
                "tags": { "type": "array", "items": { "type": "string" }, "maxItems": 3, "uniqueItems": true },
                "when": { "type": "string", "format": "date" }
            }),
            &[
                "slug", "letter", "code", "long", "short", "count", "small", "tags", "when",
            ],
        );
        assert_eq!(
            render_one(&schema),
            "{\"slug\":2-50 char string matching ^[a-z]+$,\"letter\":1 char string,\"code\":3 char string,\
             \"long\":10+ char string,\"short\":up to 20 char string,\"count\":integer >= 0,\"small\":integer,\
             \"tags\":array of up to 3 unique string,\"when\":string in date format}"
        );
    }

    #[test]
    fn optional_keys_and_nullable_values() {
        let schema = closed(
            json!({
                "tags": { "type": "array", "items": { "type": "string", "enum": ["a", "b"] } },
                "mood": { "type": ["string", "null"], "enum": ["up", "down", null] },
                "inner": { "anyOf": [closed(json!({ "x": { "type": "boolean" } }), &["x"]), { "type": "null" }] }
            }),
            &[],
        );
        assert_eq!(
            render_one(&schema),
            "{\n  \"tags\":array of (\"a\"|\"b\"), // optional\n  \"mood\":\"up\"|\"down\"|null,\n  \
             \"inner\":{\"x\":boolean} or null\n}"
        );
    }

    #[test]
    fn array_items_are_parenthesised_only_when_they_are_alternatives() {
        let schema = closed(
            json!({
                "maybe": { "type": "array", "items": { "type": ["string", "null"] } },
                "either": { "type": "array", "items": { "anyOf": [{ "type": "string" }, { "type": "integer" }] } },
                "one": { "type": "array", "items": { "const": "a|b" } },
                "slugs": { "type": "array", "items": { "type": "string", "pattern": "^(a|b)$" } }
            }),
            &["maybe", "either", "one", "slugs"],
        );
        assert_eq!(
            render_one(&schema),
            r#"{"maybe":array of (string or null),"either":array of (string or integer),"one":array of "a|b","slugs":array of string matching ^(a|b)$}"#
        );
    }

    #[test]
    fn nested_objects_are_indented_and_carry_their_comment_on_the_opening_line() {
        let keyword = closed(
            json!({
                "term": { "type": "string", "description": "The term." },
                "confidence": { "type": "number", "minimum": 0.0, "maximum": 1.0 }
            }),
            &["term", "confidence"],
        );
        let schema = closed(
            json!({
                "keywords": { "type": "array", "items": keyword, "maxItems": 10, "description": "Keywords." },
                "done": { "type": "boolean" }
            }),
            &["keywords", "done"],
        );
        assert_eq!(
            render_one(&schema),
            "{\n  \"keywords\":array of up to 10 { // Keywords.\n    \"term\":string, // The term.\n    \
             \"confidence\":number 0..1\n  },\n  \"done\":boolean\n}"
        );
    }

    fn tagged() -> Value {
        json!({
            "oneOf": [
                closed(json!({ "type": { "const": "definition" }, "entity": { "type": "string" } }), &["type", "entity"]),
                {
                    "type": "object",
                    "description": "A relation.",
                    "properties": {
                        "type": { "const": "relationship" },
                        "subject": { "type": "string", "description": "Who." }
                    },
                    "required": ["type", "subject"],
                    "additionalProperties": false
                }
            ],
            "description": "A fact."
        })
    }

    #[test]
    fn tagged_variants_are_listed_with_their_discriminator() {
        assert_eq!(
            render_one(&tagged()),
            "// A fact.\nOne of:\n{\"type\":\"definition\",\"entity\":string}\n\
             { // A relation.\n  \"type\":\"relationship\",\n  \"subject\":string // Who.\n}"
        );
        assert_eq!(
            render_lines(&tagged()),
            "One JSON object per line, nothing else (no array, no prose). Each line is one of:\n// A fact.\n\
             {\"type\":\"definition\",\"entity\":string}\n\
             {\"type\":\"relationship\",\"subject\":string} // A relation.\n// subject: Who."
        );
    }

    #[test]
    fn a_union_of_objects_inside_a_value() {
        let schema = closed(json!({ "fact": tagged() }), &["fact"]);
        assert_eq!(
            render_one(&schema),
            "{\n  \"fact\":one of: // A fact.\n    {\"type\":\"definition\",\"entity\":string}\n    \
             { // A relation.\n      \"type\":\"relationship\",\n      \"subject\":string // Who.\n    }\n}"
        );
    }

    #[test]
    fn tuples_are_written_in_brackets() {
        let pair = json!({
            "type": "array",
            "prefixItems": [{ "type": "string" }, { "type": "integer", "minimum": 0 }],
            "items": false, "minItems": 2, "maxItems": 2
        });
        assert_eq!(render_one(&pair), "[string,integer >= 0]");
        let mut prefix = pair.clone();
        prefix["minItems"] = json!(0);
        assert_eq!(
            render_one(&prefix),
            "[string,integer >= 0] or a shorter start of it"
        );
        let nested = json!({
            "type": "array",
            "prefixItems": [{ "oneOf": [
                closed(json!({ "a": { "type": "string" } }), &["a"]),
                closed(json!({ "b": { "type": "string" } }), &["b"])
            ] }],
            "items": false, "minItems": 1, "maxItems": 1
        });
        assert_eq!(
            render_one(&nested),
            "[\n  one of:\n    {\"a\":string}\n    {\"b\":string}\n]"
        );
    }

    #[test]
    fn a_union_of_names_and_objects_lists_each() {
        let schema = json!({ "oneOf": [
            { "type": "string", "enum": ["cash"] },
            closed(json!({ "card": closed(json!({ "last4": { "type": "string" } }), &["last4"]) }), &["card"]),
            { "type": "string", "not": { "enum": ["cash", "card"] } }
        ] });
        assert_eq!(
            render_one(&schema),
            "One of:\n\"cash\"\n{\"card\":{\"last4\":string}}\nany other string"
        );
    }

    #[test]
    fn maps_and_any_values() {
        let schema = closed(
            json!({
                "scores": { "type": "object", "additionalProperties": { "type": "number" } },
                "extra": {}
            }),
            &["scores", "extra"],
        );
        assert_eq!(
            render_one(&schema),
            r#"{"scores":object mapping string keys to number,"extra":any JSON value}"#
        );
    }

    #[test]
    fn lines_instructions_say_one_object_per_line() {
        let schema = closed(json!({ "name": { "type": "string" } }), &["name"]);
        assert_eq!(
            render_lines(&schema),
            "One JSON object per line, nothing else (no array, no prose):\n{\"name\":string}"
        );
    }

    const SLUG: &str = "^[a-z0-9]+(-[a-z0-9]+)*$";
    const DIGITS: &str = "^[0-9]+$";

    fn matching(pattern: &str) -> Value {
        json!({ "type": "string", "pattern": pattern })
    }

    #[test]
    fn a_pattern_written_twice_is_named_once() {
        let keyword = closed(json!({ "term": matching(SLUG) }), &["term"]);
        let schema = closed(
            json!({
                "name": { "type": "string", "pattern": SLUG, "minLength": 2, "maxLength": 50 },
                "keywords": { "type": "array", "items": keyword, "maxItems": 10 }
            }),
            &["name", "keywords"],
        );
        assert_eq!(
            render_one(&schema),
            format!(
                "{{\"name\":2-50 char string matching P1,\"keywords\":array of up to 10 \
                 {{\"term\":string matching P1}}}}\nP1 = {SLUG}"
            )
        );
    }

    #[test]
    fn a_pattern_written_once_stays_in_place() {
        let schema = closed(
            json!({ "name": matching(SLUG), "code": matching(DIGITS) }),
            &["name", "code"],
        );
        assert_eq!(
            render_one(&schema),
            format!("{{\"name\":string matching {SLUG},\"code\":string matching {DIGITS}}}")
        );
    }

    #[test]
    fn repeated_patterns_are_numbered_in_order_of_first_use() {
        let schema = closed(
            json!({
                "code": matching(DIGITS),
                "name": matching(SLUG),
                "alias": matching(SLUG),
                "zip": matching(DIGITS),
                "other": matching("^x$")
            }),
            &["code", "name", "alias", "zip", "other"],
        );
        assert_eq!(
            render_one(&schema),
            "{\"code\":string matching P1,\"name\":string matching P2,\"alias\":string matching P2,\
             \"zip\":string matching P1,\"other\":string matching ^x$}\n\
             P1 = ^[0-9]+$\nP2 = ^[a-z0-9]+(-[a-z0-9]+)*$"
        );
    }

    #[test]
    fn pattern_names_follow_the_comment_lines_of_json_lines() {
        let schema = closed(
            json!({
                "name": { "type": "string", "pattern": SLUG, "description": "A slug." },
                "parent": matching(SLUG)
            }),
            &["name", "parent"],
        );
        assert_eq!(
            render_lines(&schema),
            format!(
                "One JSON object per line, nothing else (no array, no prose):\n\
                 {{\"name\":string matching P1,\"parent\":string matching P1}}\n// name: A slug.\n\
                 P1 = {SLUG}"
            )
        );
    }

    #[test]
    fn pattern_names_are_shared_by_the_variants_of_a_tagged_enum() {
        let variant = |tag: &str, field: &str| {
            closed(
                json!({ "type": { "const": tag }, field: matching(SLUG) }),
                &["type", field],
            )
        };
        let schema =
            json!({ "oneOf": [variant("entity", "entity"), variant("relation", "subject")] });
        assert_eq!(
            render_one(&schema),
            format!(
                "One of:\n{{\"type\":\"entity\",\"entity\":string matching P1}}\n\
                 {{\"type\":\"relation\",\"subject\":string matching P1}}\nP1 = {SLUG}"
            )
        );
        assert_eq!(
            render_lines(&schema),
            format!(
                "One JSON object per line, nothing else (no array, no prose). Each line is one of:\n\
                 {{\"type\":\"entity\",\"entity\":string matching P1}}\n\
                 {{\"type\":\"relation\",\"subject\":string matching P1}}\nP1 = {SLUG}"
            )
        );
    }

    #[test]
    fn a_value_written_again_in_another_layout_counts_its_patterns_once() {
        // The key holding a union of objects cannot go on one line, so the object is written
        // again one key per line: the pattern it wrote on the way is still written only once.
        let bare_variant = |tag: &str| closed(json!({ "type": { "const": tag } }), &["type"]);
        let schema = closed(
            json!({
                "name": matching(SLUG),
                "fact": { "oneOf": [bare_variant("definition"), bare_variant("relationship")] }
            }),
            &["name", "fact"],
        );
        let rendered = render_one(&schema);
        assert!(
            rendered.contains(&format!("\"name\":string matching {SLUG},")),
            "{rendered}"
        );
        assert!(!rendered.contains("P1"), "{rendered}");
        assert_eq!(render_lines(&schema).matches(SLUG).count(), 1);
    }
}
