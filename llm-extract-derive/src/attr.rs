//! Parses the attributes the derive reads, once, into plain structs: doc comments, `#[extract(...)]`
//! and the `#[serde(...)]` settings that change what serde accepts.
//!
//! Parsing is position-agnostic: every key is read wherever it appears, and `valid.rs` decides
//! whether it belongs there. Malformed values are reported and parsing goes on, so one run shows
//! every mistake.

use crate::case::RenameRule;
use crate::ctxt::Ctxt;
use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use syn::meta::ParseNestedMeta;
use syn::punctuated::Punctuated;
use syn::{Attribute, Expr, Lit, LitStr, Token, UnOp};

/// Every key `#[extract(...)]` understands, in the order the docs list them.
pub const EXTRACT_KEYS: &[&str] = &[
    "description",
    "pattern",
    "min_length",
    "max_length",
    "min_items",
    "max_items",
    "minimum",
    "maximum",
    "examples",
    "schemars",
    "grounded",
    "key",
    "stream",
    "example",
    "check",
];

/// A value from an attribute and the tokens that wrote it, for error spans.
pub struct Setting<T> {
    /// The parsed value.
    pub value: T,
    /// `key = value` as written (or just `key` for a flag).
    pub tokens: TokenStream,
}

/// Everything the derive reads from one item's attributes.
pub struct Attrs {
    /// The doc comment, lines joined (see [`description_from_doc`]).
    pub doc: Option<String>,
    /// `#[extract(...)]`.
    pub extract: ExtractAttrs,
    /// The `#[serde(...)]` settings we mirror or reject.
    pub serde: SerdeAttrs,
}

impl Attrs {
    /// The description: `#[extract(description = "...")]` if given, else the doc comment.
    pub fn description(&self) -> Option<&str> {
        match &self.extract.description {
            Some(setting) => Some(&setting.value),
            None => self.doc.as_deref(),
        }
    }
}

/// A number as written in an attribute.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Number {
    /// An integer literal.
    Int(i128),
    /// A float literal (finite).
    Float(f64),
}

impl Number {
    /// The value as a float, for comparisons.
    pub fn as_f64(self) -> f64 {
        match self {
            Number::Int(int) => int as f64,
            Number::Float(float) => float,
        }
    }
}

impl std::fmt::Display for Number {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Number::Int(int) => write!(f, "{int}"),
            Number::Float(float) => write!(f, "{float:?}"),
        }
    }
}

/// A literal in `examples`.
pub enum Json {
    /// `"text"`
    String(String),
    /// `1`, `-2.5`
    Number(Number),
    /// `true`
    Bool(bool),
    /// `[...]`
    Array(Vec<Example>),
}

/// When a field appears in a partial value while the answer streams (`stream = "..."`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    /// `"done"`: only once its value is complete.
    Done,
    /// `"required"`: its object appears only once this field does.
    Required,
}

/// One example and the tokens that wrote it.
pub struct Example {
    /// The literal.
    pub value: Json,
    /// Its tokens, for error spans.
    pub tokens: TokenStream,
}

/// `#[extract(...)]`: description override and field constraints.
#[derive(Default)]
pub struct ExtractAttrs {
    /// `description = "..."`
    pub description: Option<Setting<String>>,
    /// `pattern = "^...$"`
    pub pattern: Option<Setting<LitStr>>,
    /// `min_length = N`
    pub min_length: Option<Setting<u64>>,
    /// `max_length = N`
    pub max_length: Option<Setting<u64>>,
    /// `min_items = N`
    pub min_items: Option<Setting<u64>>,
    /// `max_items = N`
    pub max_items: Option<Setting<u64>>,
    /// `minimum = X`
    pub minimum: Option<Setting<Number>>,
    /// `maximum = X`
    pub maximum: Option<Setting<Number>>,
    /// `examples = [..]` or `examples(..)`
    pub examples: Option<Setting<Vec<Example>>>,
    /// `schemars`
    pub schemars: Option<Setting<()>>,
    /// `grounded`: the value must be a verbatim span of the source text.
    pub grounded: Option<Setting<()>>,
    /// `key`: the field is part of an item's identity when items are merged.
    pub key: Option<Setting<()>>,
    /// `stream = "done"` or `stream = "required"`
    pub stream: Option<Setting<Stream>>,
    /// `example(text = "...", value = ...)`, each (types only; see `example_attr.rs`)
    pub example: Vec<crate::example_attr::TypeExample>,
    /// `check`: the type's `Check` implementation runs on every value extracted (types only).
    pub check: Option<Setting<()>>,
}

impl ExtractAttrs {
    /// Every key given except `description`, with its tokens: the keys only a field may carry.
    pub fn field_only_keys(&self) -> Vec<(&'static str, &TokenStream)> {
        [
            ("pattern", self.pattern.as_ref().map(|s| &s.tokens)),
            ("min_length", self.min_length.as_ref().map(|s| &s.tokens)),
            ("max_length", self.max_length.as_ref().map(|s| &s.tokens)),
            ("min_items", self.min_items.as_ref().map(|s| &s.tokens)),
            ("max_items", self.max_items.as_ref().map(|s| &s.tokens)),
            ("minimum", self.minimum.as_ref().map(|s| &s.tokens)),
            ("maximum", self.maximum.as_ref().map(|s| &s.tokens)),
            ("examples", self.examples.as_ref().map(|s| &s.tokens)),
            ("schemars", self.schemars.as_ref().map(|s| &s.tokens)),
            ("grounded", self.grounded.as_ref().map(|s| &s.tokens)),
            ("key", self.key.as_ref().map(|s| &s.tokens)),
            ("stream", self.stream.as_ref().map(|s| &s.tokens)),
        ]
        .into_iter()
        .filter_map(|(name, tokens)| Some((name, tokens?)))
        .collect()
    }

    /// Every key given, with its tokens.
    pub fn all_keys(&self) -> Vec<(&'static str, &TokenStream)> {
        let mut keys = Vec::new();
        if let Some(description) = &self.description {
            keys.push(("description", &description.tokens));
        }
        keys.extend(self.field_only_keys());
        keys
    }
}

/// A name that may differ between serialization and deserialization.
#[derive(Default)]
pub struct Names {
    /// `rename(serialize = "...")` or `rename = "..."`
    pub serialize: Option<LitStr>,
    /// `rename(deserialize = "...")` or `rename = "..."`
    pub deserialize: Option<LitStr>,
}

/// The `#[serde(...)]` settings that change which JSON serde accepts.
#[derive(Default)]
pub struct SerdeAttrs {
    /// `rename`
    pub rename: Names,
    /// `rename_all`: the rule names are *deserialized* with (what the schema follows).
    pub rename_all: RenameRule,
    /// Whether `rename_all` was given at all (a variant's own rule overrides `rename_all_fields`).
    pub has_rename_all: bool,
    /// `rename_all_fields` (enums), for deserialization.
    pub rename_all_fields: RenameRule,
    /// `tag = "..."`
    pub tag: Option<LitStr>,
    /// `content = "..."` (adjacent tagging, with `tag`)
    pub content: Option<LitStr>,
    /// `untagged` (on an enum, or on a variant of an externally tagged enum)
    pub untagged: Option<TokenStream>,
    /// `transparent` (a struct with one field)
    pub transparent: Option<TokenStream>,
    /// `other` (the catch-all unit variant of a tagged enum)
    pub other: Option<TokenStream>,
    /// `default` or `default = "..."`
    pub default: Option<TokenStream>,
    /// `skip` or `skip_deserializing`
    pub skip: Option<TokenStream>,
    /// `alias = "..."`, each
    pub aliases: Vec<LitStr>,
    /// `flatten` (a field whose members are merged into the object)
    pub flatten: Option<TokenStream>,
    /// Settings we cannot mirror faithfully, by key (`from`, `remote`, ...); `valid.rs` words
    /// the error.
    pub unsupported: Vec<(String, TokenStream)>,
}

/// The serde keys that cannot be mirrored in a schema; everything else serde reads either maps onto
/// a field above or does not change what deserialization accepts.
const SERDE_UNSUPPORTED: &[&str] = &[
    "from",
    "try_from",
    "remote",
    "deserialize_with",
    "with",
    "variant_identifier",
    "field_identifier",
];

/// Parses the attributes of one item.
pub fn get(cx: &Ctxt, attrs: &[Attribute]) -> Attrs {
    let mut doc = Vec::new();
    let mut extract = ExtractAttrs::default();
    let mut serde = SerdeAttrs::default();
    for attr in attrs {
        if attr.path().is_ident("doc") {
            if let syn::Meta::NameValue(nv) = &attr.meta {
                if let Expr::Lit(syn::ExprLit {
                    lit: Lit::Str(text),
                    ..
                }) = &nv.value
                {
                    doc.push(text.value());
                }
            }
        } else if attr.path().is_ident("extract") {
            if let Err(err) = attr.parse_nested_meta(|meta| parse_extract(cx, &mut extract, meta)) {
                cx.syn_error(err);
            }
        } else if attr.path().is_ident("serde") {
            // A malformed #[serde] is serde_derive's to report; we read what we can.
            let _ = attr.parse_nested_meta(|meta| parse_serde(&mut serde, meta));
        }
    }
    Attrs {
        doc: description_from_doc(&doc),
        extract,
        serde,
    }
}

/// Joins doc comment lines into a description: each line trimmed, the lines of a paragraph joined
/// with spaces, paragraphs with a newline; `None` when there is no text.
pub fn description_from_doc(lines: &[String]) -> Option<String> {
    let text = lines.join("\n");
    let mut paragraphs = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() {
            if !current.is_empty() {
                paragraphs.push(current.join(" "));
                current.clear();
            }
        } else {
            current.push(line);
        }
    }
    if !current.is_empty() {
        paragraphs.push(current.join(" "));
    }
    (!paragraphs.is_empty()).then(|| paragraphs.join("\n"))
}

fn parse_extract(cx: &Ctxt, attrs: &mut ExtractAttrs, meta: ParseNestedMeta) -> syn::Result<()> {
    let path = meta.path.clone();
    let Some(key) = path.get_ident().map(ToString::to_string) else {
        cx.error_spanned_by(
            &path,
            unknown_key_message(&path.to_token_stream().to_string()),
        );
        return skip_value(&meta);
    };
    match key.as_str() {
        "example" => {
            if let Some(example) = crate::example_attr::parse(cx, &meta)? {
                attrs.example.push(example);
            }
        }
        "schemars" | "grounded" | "key" | "check" => {
            if meta.input.peek(Token![=]) || meta.input.peek(syn::token::Paren) {
                cx.error_spanned_by(
                    &path,
                    format!("`{key}` takes no value: write `#[extract({key})]`"),
                );
                skip_value(&meta)?;
            }
            let setting = Setting {
                value: (),
                tokens: path.to_token_stream(),
            };
            let slot = match key.as_str() {
                "schemars" => &mut attrs.schemars,
                "grounded" => &mut attrs.grounded,
                "check" => &mut attrs.check,
                _ => &mut attrs.key,
            };
            set(cx, slot, &key, setting);
        }
        "examples" => {
            let (exprs, tokens) = if meta.input.peek(syn::token::Paren) {
                let content;
                syn::parenthesized!(content in meta.input);
                let exprs = Punctuated::<Expr, Token![,]>::parse_terminated(&content)?;
                (
                    exprs.into_iter().collect::<Vec<_>>(),
                    path.to_token_stream(),
                )
            } else {
                let expr: Expr = meta.value()?.parse()?;
                let tokens = quote!(#path = #expr);
                match peel(&expr) {
                    Expr::Array(array) => (array.elems.iter().cloned().collect(), tokens),
                    other => {
                        cx.error_spanned_by(
                            other,
                            "`examples` expects a list: `examples = [\"a\", \"b\"]` or `examples(\"a\", \"b\")`",
                        );
                        return Ok(());
                    }
                }
            };
            let examples = exprs.iter().filter_map(|expr| example(cx, expr)).collect();
            set(
                cx,
                &mut attrs.examples,
                &key,
                Setting {
                    value: examples,
                    tokens,
                },
            );
        }
        "stream" => {
            let expr: Expr = meta.value()?.parse()?;
            let tokens = quote!(#path = #expr);
            if let Some(text) = string_literal(cx, &key, &expr) {
                let value = match text.value().as_str() {
                    "done" => Stream::Done,
                    "required" => Stream::Required,
                    other => {
                        cx.error_spanned_by(
                            &text,
                            format!(
                                "unknown `stream` value `{other}`: write `stream = \"done\"` (the field \
                                 appears in a partial value only once complete) or `stream = \"required\"` \
                                 (its object appears only once this field does)"
                            ),
                        );
                        return Ok(());
                    }
                };
                set(cx, &mut attrs.stream, &key, Setting { value, tokens });
            }
        }
        "description" | "pattern" | "min_length" | "max_length" | "min_items" | "max_items"
        | "minimum" | "maximum" => {
            let expr: Expr = meta.value()?.parse()?;
            let tokens = quote!(#path = #expr);
            match key.as_str() {
                "description" => {
                    if let Some(text) = string_literal(cx, &key, &expr) {
                        let setting = Setting {
                            value: text.value(),
                            tokens,
                        };
                        set(cx, &mut attrs.description, &key, setting);
                    }
                }
                "pattern" => {
                    if let Some(text) = string_literal(cx, &key, &expr) {
                        let setting = Setting {
                            value: text,
                            tokens,
                        };
                        set(cx, &mut attrs.pattern, &key, setting);
                    }
                }
                "minimum" | "maximum" => {
                    let Some(value) = number(&expr) else {
                        cx.error_spanned_by(
                            &expr,
                            format!("`{key}` expects a number literal, e.g. `{key} = 0` or `{key} = 0.5`"),
                        );
                        return Ok(());
                    };
                    let slot = if key == "minimum" {
                        &mut attrs.minimum
                    } else {
                        &mut attrs.maximum
                    };
                    set(cx, slot, &key, Setting { value, tokens });
                }
                _ => {
                    let Some(value) = count(&expr) else {
                        cx.error_spanned_by(
                            &expr,
                            format!("`{key}` expects a non-negative integer, e.g. `{key} = 1`"),
                        );
                        return Ok(());
                    };
                    let slot = match key.as_str() {
                        "min_length" => &mut attrs.min_length,
                        "max_length" => &mut attrs.max_length,
                        "min_items" => &mut attrs.min_items,
                        _ => &mut attrs.max_items,
                    };
                    set(cx, slot, &key, Setting { value, tokens });
                }
            }
        }
        _ => {
            cx.error_spanned_by(&path, unknown_key_message(&key));
            skip_value(&meta)?;
        }
    }
    Ok(())
}

fn unknown_key_message(key: &str) -> String {
    format!(
        "unknown key `{key}` in #[extract]; known keys: {}",
        EXTRACT_KEYS.join(", ")
    )
}

fn set<T>(cx: &Ctxt, slot: &mut Option<Setting<T>>, key: &str, setting: Setting<T>) {
    if slot.is_some() {
        cx.error_spanned_by(
            &setting.tokens,
            format!("duplicate key `{key}` in #[extract]; give each key once"),
        );
    } else {
        *slot = Some(setting);
    }
}

fn string_literal(cx: &Ctxt, key: &str, expr: &Expr) -> Option<LitStr> {
    match peel(expr) {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(text),
            ..
        }) => Some(text.clone()),
        other => {
            cx.error_spanned_by(
                other,
                format!("`{key}` expects a string literal, e.g. `{key} = \"...\"`"),
            );
            None
        }
    }
}

/// Removes the invisible groups and parentheses a macro_rules expansion may add.
fn peel(expr: &Expr) -> &Expr {
    match expr {
        Expr::Group(group) => peel(&group.expr),
        Expr::Paren(paren) => peel(&paren.expr),
        other => other,
    }
}

fn number(expr: &Expr) -> Option<Number> {
    match peel(expr) {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Int(int), ..
        }) => int.base10_parse::<i128>().ok().map(Number::Int),
        Expr::Lit(syn::ExprLit {
            lit: Lit::Float(float),
            ..
        }) => float
            .base10_parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .map(Number::Float),
        Expr::Unary(unary) if matches!(unary.op, UnOp::Neg(_)) => match number(&unary.expr)? {
            Number::Int(int) => int.checked_neg().map(Number::Int),
            Number::Float(float) => Some(Number::Float(-float)),
        },
        _ => None,
    }
}

fn count(expr: &Expr) -> Option<u64> {
    match peel(expr) {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Int(int), ..
        }) => int.base10_parse::<u64>().ok(),
        _ => None,
    }
}

fn example(cx: &Ctxt, expr: &Expr) -> Option<Example> {
    let tokens = expr.to_token_stream();
    let value = match peel(expr) {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(text),
            ..
        }) => Json::String(text.value()),
        Expr::Lit(syn::ExprLit {
            lit: Lit::Bool(flag),
            ..
        }) => Json::Bool(flag.value),
        Expr::Array(array) => Json::Array(
            array
                .elems
                .iter()
                .filter_map(|item| example(cx, item))
                .collect(),
        ),
        other => match number(other) {
            Some(number) => Json::Number(number),
            None => {
                cx.error_spanned_by(
                    other,
                    "an example must be a literal: a string, a number, `true`/`false`, or an array of those",
                );
                return None;
            }
        },
    };
    Some(Example { value, tokens })
}

fn parse_serde(attrs: &mut SerdeAttrs, meta: ParseNestedMeta) -> syn::Result<()> {
    let path = meta.path.clone();
    let key = path
        .get_ident()
        .map(ToString::to_string)
        .unwrap_or_default();
    let path_tokens = path.to_token_stream();
    match key.as_str() {
        "rename" => attrs.rename = names(&meta)?,
        "rename_all" => {
            attrs.rename_all = rule(&meta)?;
            attrs.has_rename_all = true;
        }
        "rename_all_fields" => attrs.rename_all_fields = rule(&meta)?,
        "alias" => attrs.aliases.push(meta.value()?.parse()?),
        "tag" => attrs.tag = Some(meta.value()?.parse()?),
        "content" => attrs.content = Some(meta.value()?.parse()?),
        "untagged" => attrs.untagged = Some(path_tokens),
        "transparent" => attrs.transparent = Some(path_tokens),
        "other" => attrs.other = Some(path_tokens),
        "default" => {
            skip_value(&meta)?;
            attrs.default = Some(path_tokens);
        }
        "skip" | "skip_deserializing" => attrs.skip = Some(path_tokens),
        "flatten" => attrs.flatten = Some(path_tokens),
        _ if SERDE_UNSUPPORTED.contains(&key.as_str()) => {
            skip_value(&meta)?;
            attrs.unsupported.push((key, path_tokens));
        }
        // Serialization-only or shape-neutral: skip_serializing(_if), serialize_with, into, bound,
        // borrow, crate, expecting, getter, deny_unknown_fields (our objects are closed anyway).
        _ => skip_value(&meta)?,
    }
    Ok(())
}

/// `rename = "x"` or `rename(serialize = "x", deserialize = "y")`.
fn names(meta: &ParseNestedMeta) -> syn::Result<Names> {
    let mut names = Names::default();
    if meta.input.peek(Token![=]) {
        let name: LitStr = meta.value()?.parse()?;
        names.serialize = Some(name.clone());
        names.deserialize = Some(name);
    } else {
        meta.parse_nested_meta(|inner| {
            let name: LitStr = inner.value()?.parse()?;
            if inner.path.is_ident("serialize") {
                names.serialize = Some(name);
            } else if inner.path.is_ident("deserialize") {
                names.deserialize = Some(name);
            }
            Ok(())
        })?;
    }
    Ok(names)
}

/// The deserialization rule of `rename_all = "rule"` or `rename_all(deserialize = "..")`. An
/// unknown rule is serde_derive's to report; we read it as no rule.
fn rule(meta: &ParseNestedMeta) -> syn::Result<RenameRule> {
    Ok(names(meta)?
        .deserialize
        .and_then(|name| RenameRule::from_name(&name.value()))
        .unwrap_or(RenameRule::None))
}

/// Consumes whatever value a key we do not read has: `= expr`, `(...)` or nothing.
fn skip_value(meta: &ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        meta.value()?.parse::<Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in meta.input);
        content.parse::<TokenStream>()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(attrs: TokenStream) -> (Attrs, Result<(), syn::Error>) {
        let item: syn::DeriveInput = syn::parse2(quote!(#attrs struct S;)).unwrap();
        let cx = Ctxt::new();
        let attrs = get(&cx, &item.attrs);
        (attrs, cx.check())
    }

    #[test]
    fn doc_lines_become_paragraphs() {
        let (attrs, result) = parse(quote! {
            /// First line
            ///   continues here.
            ///
            /// Second paragraph.
        });
        assert!(result.is_ok());
        assert_eq!(
            attrs.doc.as_deref(),
            Some("First line continues here.\nSecond paragraph.")
        );
        assert_eq!(description_from_doc(&[" ".into()]), None);
    }

    #[test]
    fn extract_keys_are_parsed() {
        let (attrs, result) = parse(quote! {
            #[extract(pattern = "^a$", min_length = 1, maximum = -2.5, examples("a", 3, [true]))]
            #[extract(schemars, description = "Over.")]
        });
        assert!(result.is_ok());
        let extract = &attrs.extract;
        assert_eq!(extract.pattern.as_ref().unwrap().value.value(), "^a$");
        assert_eq!(extract.min_length.as_ref().unwrap().value, 1);
        assert_eq!(extract.maximum.as_ref().unwrap().value, Number::Float(-2.5));
        assert_eq!(extract.examples.as_ref().unwrap().value.len(), 3);
        assert!(extract.schemars.is_some());
        assert_eq!(attrs.description(), Some("Over."));
    }

    #[test]
    fn mistakes_are_all_reported() {
        let (_, result) = parse(quote! {
            #[extract(min_len = 1, pattern = 3, min_items = -1, pattern = "^a$", pattern = "^b$")]
        });
        let messages: Vec<String> = result
            .unwrap_err()
            .into_iter()
            .map(|e| e.to_string())
            .collect();
        assert_eq!(messages.len(), 4, "{messages:?}");
        assert!(messages[0].starts_with("unknown key `min_len`"));
        assert!(messages[1].contains("expects a string literal"));
        assert!(messages[2].contains("non-negative integer"));
        assert!(messages[3].starts_with("duplicate key `pattern`"));
    }

    #[test]
    fn serde_settings_are_mirrored() {
        let (attrs, _) = parse(quote! {
            #[serde(rename(serialize = "out", deserialize = "in"), rename_all = "camelCase")]
            #[serde(tag = "kind", alias = "a", alias = "b", default, flatten, bound = "T: X", from = "X")]
            #[serde(skip_serializing_if = "Option::is_none", crate = "serde")]
        });
        let serde = &attrs.serde;
        assert_eq!(serde.rename.deserialize.as_ref().unwrap().value(), "in");
        assert_eq!(serde.rename.serialize.as_ref().unwrap().value(), "out");
        assert_eq!(serde.rename_all, RenameRule::CamelCase);
        assert_eq!(serde.tag.as_ref().unwrap().value(), "kind");
        assert_eq!(serde.aliases.len(), 2);
        assert!(serde.default.is_some());
        assert!(serde.flatten.is_some());
        assert_eq!(serde.unsupported.len(), 1);
        assert_eq!(serde.unsupported[0].0, "from");
    }
}
