//! The signature shorthand: `(text :string) -> {sentiment :string, score :float}`.
//!
//! Grammar (whitespace is free between tokens):
//! ```text
//! signature := [ "(" inputs ")" "->" ] type
//! inputs    := [ name [":" ident] { "," name [":" ident] } ]
//! type      := scalar | "[" type "]" | "{" [ field { "," field } ] "}" | enum
//! field     := name type [ "?" ]            (a trailing `?` makes the field optional: `... or null`)
//! scalar    := ":string" | ":int" | ":float" | ":bool" | ":any"
//! enum      := ":enum" "[" word { "," word } "]"   or   "(" word { "|" word } ")"
//! ```
//! Names are letters, digits, `_` and `-`; enum words may also be double-quoted.

use serde_json::{json, Map, Value};

/// A signature that does not parse; `column` is 1-based and counts characters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("signature error at column {column}: {message}\n  {signature}\n  {marker}^")]
pub struct SignatureError {
    /// 1-based character column of the problem.
    pub column: usize,
    /// What is wrong and what was expected.
    pub message: String,
    /// The signature text.
    pub signature: String,
    marker: String,
}

/// A parsed signature: the template variables it names and the generic schema of its output.
#[derive(Debug, Clone, PartialEq)]
pub struct Signature {
    /// The names before `->`: the variables the prompt template needs.
    pub inputs: Vec<String>,
    /// The output type as a generic JSON Schema (closed objects, all fields required unless marked `?`).
    pub output: Value,
}

/// Parses a signature.
pub fn parse(text: &str) -> Result<Signature, SignatureError> {
    let mut p = Parser {
        chars: text.chars().collect(),
        pos: 0,
        text,
        depth: 0,
    };
    p.skip_ws();
    let inputs = if p.peek() == Some('(') && p.has_arrow() {
        let inputs = p.inputs()?;
        p.skip_ws();
        p.expect_str("->")?;
        inputs
    } else {
        Vec::new()
    };
    let output = p.ty()?;
    p.skip_ws();
    if p.pos < p.chars.len() {
        return Err(p.error("unexpected text after the output type"));
    }
    Ok(Signature { inputs, output })
}

/// The deepest nesting of lists and objects a signature may have (the parser recurses once per
/// level; any real signature is far shallower).
pub const MAX_DEPTH: usize = 64;

struct Parser<'a> {
    chars: Vec<char>,
    pos: usize,
    text: &'a str,
    /// Lists and objects open at `pos`.
    depth: usize,
}

impl Parser<'_> {
    fn error(&self, message: impl Into<String>) -> SignatureError {
        SignatureError {
            column: self.pos + 1,
            message: message.into(),
            signature: self.text.to_owned(),
            marker: " ".repeat(self.pos),
        }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    /// Whether an `->` follows at depth 0, which tells an input list from a `(a | b)` enum.
    fn has_arrow(&self) -> bool {
        let mut depth = 0usize;
        let mut i = self.pos;
        while let Some(&c) = self.chars.get(i) {
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth = depth.saturating_sub(1),
                '-' if depth == 0 && self.chars.get(i + 1) == Some(&'>') => return true,
                _ => {}
            }
            i += 1;
        }
        false
    }

    fn eat(&mut self, c: char) -> bool {
        self.skip_ws();
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: char, what: &str) -> Result<(), SignatureError> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.error(format!("expected `{c}` {what}")))
        }
    }

    fn expect_str(&mut self, s: &str) -> Result<(), SignatureError> {
        self.skip_ws();
        for expected in s.chars() {
            if self.peek() != Some(expected) {
                return Err(self.error(format!("expected `{s}`")));
            }
            self.pos += 1;
        }
        Ok(())
    }

    fn name(&mut self) -> Result<String, SignatureError> {
        self.skip_ws();
        if self.peek() == Some('"') {
            return self.quoted();
        }
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '-')
        {
            self.pos += 1;
        }
        if start == self.pos {
            return Err(self.error("expected a name"));
        }
        Ok(self.chars[start..self.pos].iter().collect())
    }

    fn quoted(&mut self) -> Result<String, SignatureError> {
        let open = self.pos;
        self.pos += 1;
        let mut out = String::new();
        loop {
            match self.peek() {
                None => {
                    self.pos = open;
                    return Err(self.error("unterminated quoted name"));
                }
                Some('"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(c) => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    fn inputs(&mut self) -> Result<Vec<String>, SignatureError> {
        self.expect('(', "to open the inputs")?;
        let mut inputs = Vec::new();
        if self.eat(')') {
            return Ok(inputs);
        }
        loop {
            let name = self.name()?;
            if inputs.contains(&name) {
                return Err(self.error(format!("input `{name}` is named twice")));
            }
            self.skip_ws();
            if self.peek() == Some(':') {
                // The input's type documents the template variable; it does not constrain output.
                self.scalar()?;
            }
            inputs.push(name);
            if self.eat(')') {
                return Ok(inputs);
            }
            self.expect(',', "or `)` after an input")?;
        }
    }

    fn ty(&mut self) -> Result<Value, SignatureError> {
        self.skip_ws();
        if self.depth >= MAX_DEPTH && matches!(self.peek(), Some('[' | '{')) {
            return Err(self.error(format!(
                "the type nests deeper than {MAX_DEPTH} lists and objects"
            )));
        }
        self.depth += 1;
        let ty = self.nested_ty();
        self.depth -= 1;
        ty
    }

    fn nested_ty(&mut self) -> Result<Value, SignatureError> {
        match self.peek() {
            Some(':') => self.scalar(),
            Some('[') => {
                self.pos += 1;
                let items = self.ty()?;
                self.expect(']', "to close the list type")?;
                Ok(json!({"type": "array", "items": items}))
            }
            Some('{') => self.object(),
            Some('(') => self.paren_enum(),
            _ => Err(self.error(
                "expected a type: :string, :int, :float, :bool, :any, [:type], {field :type} or (a | b)",
            )),
        }
    }

    fn scalar(&mut self) -> Result<Value, SignatureError> {
        let at = self.pos;
        self.expect(':', "before a type name")?;
        let name = self.name()?;
        Ok(match name.as_str() {
            "string" | "str" => json!({"type": "string"}),
            "int" | "integer" => json!({"type": "integer"}),
            "float" | "number" => json!({"type": "number"}),
            "bool" | "boolean" => json!({"type": "boolean"}),
            "any" => json!({}),
            "enum" => {
                self.expect('[', "after :enum")?;
                let words = self.words(',', ']')?;
                json!({"type": "string", "enum": words})
            }
            other => {
                self.pos = at;
                return Err(self.error(format!(
                    "unknown type `:{other}`; use :string, :int, :float, :bool, :any or :enum[a, b]"
                )));
            }
        })
    }

    fn paren_enum(&mut self) -> Result<Value, SignatureError> {
        self.expect('(', "to open an enum")?;
        let words = self.words('|', ')')?;
        Ok(json!({"type": "string", "enum": words}))
    }

    fn words(&mut self, separator: char, close: char) -> Result<Vec<String>, SignatureError> {
        let mut words: Vec<String> = Vec::new();
        loop {
            let word = self.name()?;
            if words.contains(&word) {
                return Err(self.error(format!("enum value `{word}` is listed twice")));
            }
            words.push(word);
            if self.eat(close) {
                return Ok(words);
            }
            if !self.eat(separator) {
                return Err(self.error(format!("expected `{separator}` or `{close}` in an enum")));
            }
        }
    }

    fn object(&mut self) -> Result<Value, SignatureError> {
        self.expect('{', "to open an object")?;
        let mut properties = Map::new();
        let mut required = Vec::new();
        if !self.eat('}') {
            loop {
                let at = self.pos;
                let name = self.name()?;
                if properties.contains_key(&name) {
                    self.pos = at;
                    return Err(self.error(format!("field `{name}` is declared twice")));
                }
                let mut schema = self.ty()?;
                if self.eat('?') {
                    schema = nullable(schema);
                } else {
                    required.push(Value::String(name.clone()));
                }
                properties.insert(name, schema);
                if self.eat('}') {
                    break;
                }
                self.expect(',', "or `}` after a field")?;
            }
        }
        Ok(json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false
        }))
    }
}

/// The same nullable shape the derive gives `Option<T>`.
fn nullable(schema: Value) -> Value {
    match schema {
        Value::Object(mut map) => match map.get("type").cloned() {
            Some(Value::String(t)) => {
                map.insert("type".into(), json!([t, "null"]));
                if let Some(Value::Array(values)) = map.get_mut("enum") {
                    values.push(Value::Null);
                }
                Value::Object(map)
            }
            _ if map.is_empty() => Value::Object(map),
            _ => json!({"anyOf": [Value::Object(map), {"type": "null"}]}),
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `f` on a thread with the 2 MiB stack threads get by default.
    fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(f)
            .unwrap()
            .join()
            .unwrap()
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let lists = format!("{}:string{}", "[".repeat(100_000), "]".repeat(100_000));
        let objects = format!("{}:int{}", "{a ".repeat(100_000), "}".repeat(100_000));
        for text in [lists, objects] {
            let err = on_small_stack(move || parse(&text)).unwrap_err();
            assert!(
                err.message.contains("nests deeper than 64"),
                "{}",
                err.message
            );
            assert_eq!(
                err.column,
                MAX_DEPTH * if err.signature.starts_with('[') { 1 } else { 3 } + 1
            );
        }
        let ok = format!("{}:string{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(on_small_stack(move || parse(&ok)).is_ok());
    }

    #[test]
    fn inputs_and_object_output() {
        let sig = parse("(text :string) -> {sentiment :string, score :float}").unwrap();
        assert_eq!(sig.inputs, vec!["text"]);
        assert_eq!(
            sig.output,
            json!({
                "type": "object",
                "properties": {"sentiment": {"type": "string"}, "score": {"type": "number"}},
                "required": ["sentiment", "score"],
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn lists_nested_maps_enums_and_optionals() {
        let sig = parse(
            "(a, b :string) -> {tags [:string], who {name :string, age :int?}, mood (happy | sad), k :enum[x, \"y z\"]?}",
        )
        .unwrap();
        assert_eq!(sig.inputs, vec!["a", "b"]);
        let props = &sig.output["properties"];
        assert_eq!(
            props["tags"],
            json!({"type": "array", "items": {"type": "string"}})
        );
        assert_eq!(
            props["who"]["properties"]["age"],
            json!({"type": ["integer", "null"]})
        );
        assert_eq!(props["who"]["required"], json!(["name"]));
        assert_eq!(
            props["mood"],
            json!({"type": "string", "enum": ["happy", "sad"]})
        );
        assert_eq!(
            props["k"],
            json!({"type": ["string", "null"], "enum": ["x", "y z", null]})
        );
        assert_eq!(sig.output["required"], json!(["tags", "who", "mood"]));
    }

    #[test]
    fn output_only_and_bare_types() {
        assert_eq!(parse(":bool").unwrap().output, json!({"type": "boolean"}));
        assert_eq!(
            parse("(yes | no)").unwrap().output,
            json!({"type": "string", "enum": ["yes", "no"]})
        );
        assert!(parse("() -> [:int]").unwrap().inputs.is_empty());
    }

    #[test]
    fn errors_point_at_the_column() {
        let err = parse("(text :string) -> {score :flot}").unwrap_err();
        assert_eq!(err.column, 26);
        assert!(err.message.contains("unknown type `:flot`"), "{err}");
        let shown = err.to_string();
        assert!(shown.contains("                         ^"), "{shown}");

        let err = parse("{a :int b :int}").unwrap_err();
        assert_eq!(err.column, 9, "{err}");
        let err = parse("{a :int, a :int}").unwrap_err();
        assert!(err.message.contains("declared twice"));
        assert!(parse("{a :int} trailing").is_err());
        assert!(parse("(x) -> ").is_err());
        assert!(parse("{\"open :int}").is_err());
    }

    #[test]
    fn never_panics_on_prefixes() {
        let text = "(text :string, n :int) -> {a [:string], b {c (x | y)}?, d :enum[p, q]}";
        for (i, _) in text.char_indices() {
            let _ = parse(&text[..i]);
        }
    }
}
