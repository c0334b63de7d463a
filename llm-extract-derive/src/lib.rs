//! `#[derive(Extract)]` for [llm-extract](https://docs.rs/llm-extract). Use it through
//! `llm_extract::Extract`; this crate is an implementation detail.
//!
//! The macro runs parse -> model -> validate -> expand, one module each: `attr` reads the
//! attributes, `ast` builds a typed model with serde's JSON names resolved, `valid` checks every
//! rule (collecting all errors, each spanned on the offending tokens), `expand` writes the code.

mod ast;
mod attr;
mod case;
mod ctxt;
mod example;
mod expand;
mod partial;
mod ty;
mod valid;

use proc_macro::TokenStream;
use syn::{parse_macro_input, DeriveInput};

/// Derives `llm_extract::Extract`: the type's JSON Schema, computed once, plus everything built on
/// it (dialects, format instructions, a validator).
///
/// The type must also derive (or implement) `serde::Deserialize`; serde is the source of truth and
/// the schema accepts what serde accepts.
///
/// ```
/// use llm_extract::{Extract, Schema};
/// use serde::Deserialize;
///
/// /// The sentiment of a text.
/// #[derive(Extract, Deserialize)]
/// struct Sentiment {
///     /// The overall polarity.
///     sentiment: Polarity,
///     #[extract(minimum = 0.0, maximum = 1.0)]
///     score: f64,
/// }
///
/// #[derive(Extract, Deserialize)]
/// #[serde(rename_all = "lowercase")]
/// enum Polarity { Positive, Negative, Neutral }
///
/// let schema = Sentiment::json_schema();
/// assert_eq!(schema["properties"]["sentiment"]["enum"][0], "positive");
/// assert_eq!(schema["properties"]["score"]["maximum"], 1.0);
/// assert_eq!(schema["additionalProperties"], false);
/// ```
///
/// # What it accepts
///
/// - **Structs with named fields**: a closed object (`additionalProperties: false`), properties in
///   declaration order. `Option<T>` fields and `#[serde(default)]` fields are not required.
/// - **Fieldless enums**: `{"type": "string", "enum": [...]}`.
/// - **Internally tagged enums** (`#[serde(tag = "type")]`, any tag name) with struct and unit
///   variants: a `oneOf` of closed objects whose first property is the tag, `{"const": "name"}`.
/// - Field types: `String`, `char`, `bool`, every integer (8/16/32-bit ones carry their range),
///   `f32`/`f64`, `Option<T>`, `Box<T>`, `Vec<T>`, `VecDeque<T>`, `HashSet<T>`/`BTreeSet<T>`
///   (`uniqueItems`), `HashMap<String, T>`/`BTreeMap<String, T>`, `serde_json::Value`, any type
///   that derives `Extract`, and foreign types implementing `schemars::JsonSchema` (see below).
///
/// # serde attributes it mirrors
///
/// `rename` (including `rename(deserialize = "..")`: the schema follows what serde *reads*),
/// `rename_all` (every serde case convention), `rename_all_fields`, `tag`, `alias` (recorded as
/// `"x-aliases"` on the object, for parsers to map back), `skip` / `skip_deserializing` (the field or
/// variant is left out), `default` (on a field or a struct: not required). `deny_unknown_fields`
/// changes nothing (objects are closed anyway). Attributes that only affect serialization
/// (`skip_serializing_if`, `serialize_with`, `into`, ...) or code generation (`bound`, `crate`) are
/// ignored. On a struct, `tag` adds the tag as an optional first property, since serde writes it.
///
/// What cannot be mirrored faithfully is a compile error that names the alternative: `untagged`,
/// `flatten`, externally tagged data enums (the serde default for an enum with data: add
/// `#[serde(tag = "type")]`), adjacently tagged enums (`tag` + `content`), tuple and unit structs,
/// tuple variants, `transparent`, `from`/`try_from`, `remote`, `other`, `deserialize_with`/`with`,
/// unions, generic types (a schema lives in a `static`, which cannot be generic: derive on a
/// concrete type) and tuple, array and reference field types. Variant `alias`es are accepted by
/// serde but not listed in the schema, which asks for canonical names.
///
/// # `#[extract(...)]`
///
/// On a struct, an enum or a variant: `description = "..."` (overrides the doc comment). Doc
/// comments become `"description"`: lines trimmed and joined with spaces, paragraphs with a newline.
///
/// On a field, besides `description`:
///
/// | key | schema keyword | allowed on |
/// |---|---|---|
/// | `pattern = "^...$"` | `pattern` | strings; must be a valid regex anchored with `^` and `$` |
/// | `min_length = N`, `max_length = N` | `minLength`, `maxLength` | strings |
/// | `min_items = N`, `max_items = N` | `minItems`, `maxItems` | `Vec`, `VecDeque`, sets |
/// | `minimum = X`, `maximum = X` | `minimum`, `maximum` | numbers; integer literals in range on integer fields |
/// | `examples = [..]` or `examples(..)` | `examples` | any; literals that fit the field and its bounds |
/// | `schemars` | the type's schemars schema | a foreign type implementing `schemars::JsonSchema` |
/// | `grounded` | `"x-grounded": true` on the string (on the items of a list) | `String`, `Option<String>`, `Vec<String>` |
/// | `key` | `"x-key": true` | a field holding one value: string, number, `bool`, fieldless enum |
/// | `stream = "done"` | (none: partial values) | any field |
/// | `stream = "required"` | (none: partial values) | a field the model always writes (not `Option`, no `#[serde(default)]`) |
///
/// `stream` changes only the partial form (below): with `"done"` the field appears only once its value is
/// complete (an identifier, a code, anything that must not be shown half-written); with `"required"` its
/// object appears only once this field does.
///
/// `grounded` means the value must be a verbatim span of the source text: grounded extractions
/// (`Extractor::extract_grounded_all`, `Extractor::extract_document`) find each such value in the text and
/// report its spans, and ask the model again about a value that does not occur. `key` marks the fields
/// that identify an item: copies of one item (equal key fields, strings compared without case and
/// whitespace runs) become one in `Extractor::extract_all` and `Extractor::extract_stream` (a stream
/// hands on the first copy only) and across the chunks and passes of `Extractor::extract_document`;
/// where copies disagree, the first non-empty value is kept and the other reported in the report's
/// `conflicts`. A type without `key` fields is not merged by `extract_all` and `extract_stream` (every
/// item the model lists is kept); a document merges its exact duplicates only.
///
/// "Strings" includes `Option<String>` and `Box<String>` (the same holds for the other kinds). A
/// pair must satisfy `min <= max`; unknown and repeated keys are errors. Patterns are checked with
/// `regex-syntax` and must be anchored as a whole (`^(a|b)$`, not `^a|b$`), because JSON Schema
/// patterns match anywhere in the string and llama.cpp's grammar converter (Ollama) refuses
/// unanchored ones. Constraints land next to the schema's `"type"`; for a nullable `anyOf` they go
/// into the non-null branch.
///
/// Type checks read the **last path segment** of the field's type (`String`, `Vec`, `u8`, ...), as
/// any proc macro must. A type the macro cannot classify (a type alias, a foreign type) is instead
/// checked by a trait bound in the generated code, reported on the field's type; the integer-range
/// and example checks need a type they can read, so a type alias skips them.
///
/// # The partial form
///
/// For `T` the derive also generates `TPartial` (same visibility; name it `llm_extract::parse::Partial<T>`),
/// the value as it streams (`Extractor::extract_partial`): every field an `Option` of its type's partial
/// form, nested derived types partial, `Vec<U>` a `Vec` of partial `U`s; a tagged enum becomes an enum of
/// the same variants with optional fields, a fieldless enum a copy of it. Structs derive `Debug`, `Clone`,
/// `Default`, `PartialEq` and `Serialize` (with serde's JSON names, fields not yet shown left out); enums
/// all but `Default`. `llm_extract::parse::PartialValue` says when each kind of value is shown. A field
/// marked `#[extract(schemars)]` is a `serde_json::Value`, the JSON written so far.
///
/// # Foreign types via schemars
///
/// A field whose type comes from another crate and implements `schemars::JsonSchema` (schemars 1.x,
/// e.g. `chrono` with its `schemars` feature, or your own impl) can be marked
/// `#[extract(schemars)]`. Its schema is generated by schemars for deserialization with subschemas
/// inlined, then brought to this crate's convention (no `$schema`/`title`, objects closed). Generated
/// code reaches schemars through `llm_extract`, so you need schemars as a dependency only to write a
/// `JsonSchema` impl yourself. `Option<Foreign>` works too (the schemars schema is made nullable).
///
/// # Recursive types
///
/// Not supported: a schema is fully inlined. A field that names its own type (unqualified, or as
/// `Self`) is a compile error naming the field; a cycle through other derived types (or through a
/// qualified path to the type itself) is a compile error too, the compiler's cycle error on the
/// types' `FieldSchema::NESTING` constants, whose notes list the fields along the cycle.
///
/// ```compile_fail
/// use llm_extract::{Extract, Schema};
/// use serde::Deserialize;
///
/// #[derive(Extract, Deserialize)]
/// struct Node {
///     children: Vec<Node>, // error: `Node` contains itself through this field
/// }
/// ```
#[proc_macro_derive(Extract, attributes(extract))]
pub fn derive_extract(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::derive(&input).into()
}
