//! `#[derive(Extract)]` for [llm-extract](https://docs.rs/llm-extract). Use it through
//! `llm_extract::Extract`; this crate is an implementation detail.
//!
//! The macro runs parse -> model -> validate -> expand, one module each: `attr` reads the
//! attributes, `ast` builds a typed model with serde's JSON names resolved, `valid` checks every
//! rule (collecting all errors, each spanned on the offending tokens), `expand` writes the code.
//! Beside them: `ctxt` collects the errors, `case` holds serde's `rename_all` rules, `ty` tells what a
//! field's type is from its tokens, `example_attr` reads, checks and expands
//! `#[extract(example(...))]`, and `partial/` writes the partial form.

mod ast;
mod attr;
mod case;
mod ctxt;
mod example_attr;
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
/// serde's data model, each shape with the schema of exactly the JSON serde writes (closed objects
/// aside: an object lists its keys and allows no others), close to what `schemars` 1.x generates:
///
/// - **Structs with named fields**: a closed object (`additionalProperties: false`), properties in
///   declaration order. `Option<T>` fields and `#[serde(default)]` fields (or every field, with
///   `#[serde(default)]` on the struct) are not required.
/// - **Newtype structs** (`struct Email(String)`) and **`#[serde(transparent)]`** structs: the field's
///   schema, with the struct's description if the field has none.
/// - **Tuple structs** (`struct Point(i32, i32)`), tuple variants and tuple or array field types:
///   `{"type": "array", "prefixItems": [...], "items": false, "minItems": n, "maxItems": n}`
///   (`[T; N]`: `items`, `minItems` and `maxItems` `N`).
/// - **Enums**, in serde's four representations; a skipped variant is left out:
///   - *externally tagged* (serde's default): unit variants are strings (a fieldless enum is
///     `{"type": "string", "enum": [...]}`), every other variant an object with the variant's name
///     as its one key, `{"type": "object", "properties": {"Card": ...}, "required": ["Card"],
///     "additionalProperties": false}`; together a `oneOf`, the unit variants one string `enum`;
///   - *internally tagged* (`#[serde(tag = "type")]`, any tag name), with struct, unit and newtype
///     variants (a newtype variant holds a struct: its properties follow the tag): a `oneOf` of
///     closed objects whose first property is the tag, `{"const": "name"}`;
///   - *adjacently tagged* (`#[serde(tag = "t", content = "c")]`): a `oneOf` of closed objects, the
///     tag `const` first, then the content (required, except for a unit variant, which has none);
///   - *untagged* (`#[serde(untagged)]`): an `anyOf` of the variants' data in declaration order (a
///     unit variant is `null`). serde takes the **first** variant that deserializes, the schema
///     accepts a value any of them accepts: put the most specific variants first, as serde needs.
///     Untagged variants of a tagged enum come last (as serde requires): `anyOf` of the tagged
///     enum's schema, then theirs.
/// - **Recursive and mutually recursive types** (a comment's replies, an org chart, a folder's files
///   and a file's folder), through `Box`, `Option<Box<_>>`, `Vec`, maps or other derived types: the
///   type that recurs has one entry in the schema's root `$defs`, and each place that holds it is
///   `{"$ref": "#/$defs/Name"}`. Types that do not recur stay inlined. Format instructions name such
///   a type and define it once (`Section = {"title":string,"sections":array of Section}`).
/// - **Generic types**, structs and enums (`Page<T>`, `Either<L, R>`, `OneOrMany<T>`): a schema per
///   instantiation (`Page<Person>` and `Page<Invoice>` differ, each computed once), named
///   `Page_Person`. The impls bound each type parameter that a field's type names by what they need
///   of it (`FieldSchema`, `PartialField`), and `Schema` holds where the instantiation is
///   `Deserialize`. A generic type's partial form takes its type parameters too (`EitherPartial<L, R>`).
/// - **`#[serde(flatten)]`**, in a struct or in a struct variant of a tagged enum, of a struct that
///   derives `Extract` (its properties and aliases merged in place, its required ones kept unless the field is an `Option`), or of a map: a
///   `HashMap<String, T>` opens the object (`additionalProperties` is `T`'s schema); a map keyed by
///   a fieldless enum adds each of its names as an optional property.
/// - Field types: `String`, `char`, `bool`, every integer (8/16/32-bit ones carry their range),
///   `f32`/`f64`, `Option<T>`, `Box<T>`, `Vec<T>`, `VecDeque<T>`, `HashSet<T>`/`BTreeSet<T>`
///   (`uniqueItems`), `HashMap<K, T>`/`BTreeMap<K, T>` with `String` keys or keys of a fieldless
///   enum that derives `Extract` (`propertyNames: {"enum": [...]}`), tuples (up to 12 elements),
///   arrays `[T; N]`, `serde_json::Value`, any type that derives `Extract`, the well-known types below,
///   and foreign types implementing `schemars::JsonSchema` (see below).
/// - Well-known types, with serde's form: `std::net::{IpAddr, Ipv4Addr, Ipv6Addr}` (strings of
///   format `ipv4`/`ipv6`), `SocketAddr`/`SocketAddrV4`/`SocketAddrV6` (a pattern), `PathBuf` (a
///   string), `std::time::Duration` (`{"secs": .., "nanos": ..}`, both required). Behind
///   `llm-extract`'s cargo features, named as schemars 1.x names its own: `chrono04` (`NaiveDate`:
///   format `date`; `DateTime<Utc>`, `DateTime<FixedOffset>`: `date-time`; `NaiveTime`,
///   `NaiveDateTime`: an anchored pattern, having no offset), `uuid1` (`Uuid`: `uuid`), `url2`
///   (`Url`: `uri`), `rust_decimal1` (`Decimal`: a decimal string, or a number, which serde reads
///   too), `jiff02` (`civil::Date`: `date`; `Timestamp`: `date-time`; `civil::Time`,
///   `civil::DateTime`: a pattern). Formats are asserted by validation.
///
/// # serde attributes it mirrors
///
/// `rename` (including `rename(deserialize = "..")`: the schema follows what serde *reads*),
/// `rename_all` (every serde case convention), `rename_all_fields`, `tag`, `content`, `untagged` (on
/// the enum or on trailing variants), `transparent`, `alias` (on a field: recorded as `"x-aliases"`
/// on the object; on a variant: on its tag's `const`, its string `enum` or its one-key object; the
/// schema asks for canonical names, and the lenient reader maps an alias back), `other` (the
/// catch-all unit variant: its tag is `{"type": "string", "not": {"enum": [the other names]}}`),
/// `skip` / `skip_deserializing` (the field or variant is left out), `default` (on a field or a
/// struct: not required; on a tuple struct: trailing elements may be left out).
/// `deny_unknown_fields` changes nothing (objects are closed anyway). Attributes that only affect
/// serialization (`skip_serializing_if`, `serialize_with`, `into`, ...) or code generation (`bound`,
/// `crate`) are ignored. On a struct, `tag` adds the tag as an optional first property, since serde
/// writes it.
///
/// What cannot be mirrored faithfully is a compile error that names the alternative: unit structs,
/// `from`/`try_from`, `remote`, `deserialize_with`/`with` (the JSON a custom function reads is
/// unknown to the macro), unions, lifetime and const parameters, `flatten` of anything
/// but a struct or a map (an enum, a sequence, a scalar, a `serde_json::Value`: nothing a closed
/// object can list) and reference field types. So is every combination serde itself rejects
/// (`untagged` with `tag`, `content` without `tag`, tuple variants of an internally tagged enum,
/// `other` on a variant with data or in an untagged enum, untagged variants before tagged ones, two
/// variants or aliases with one name), with serde's reason.
///
/// # `#[extract(...)]`
///
/// On a struct, an enum or a variant: `description = "..."` (overrides the doc comment). Doc
/// comments become `"description"`: lines trimmed and joined with spaces, paragraphs with a newline.
///
/// On a struct or an enum: `check` runs the type's `llm_extract::check::Check` implementation on
/// every value and item extracted (documents included, never a partial value): its hard issues are
/// repaired like schema violations, its soft ones returned in `Report::issues`. A type marked `check`
/// without a `Check` implementation does not compile.
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
/// (`Extractor::extract_grounded`, `Extractor::extract_document`) find each such value in the text and
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
/// For `T` the derive also generates `TPartial` (same visibility; name it
/// `llm_extract::parse::Partial<T>`), the value as it streams (`Extractor::extract_partial`): every
/// field an `Option` of its type's partial form, nested derived types partial, `Vec<U>` a `Vec` of
/// partial `U`s; an internally tagged enum becomes an enum of the same variants with optional
/// fields (a newtype variant holding its content's partial form, `None` until shown), any other tag
/// naming its `#[serde(other)]` variant, a fieldless enum a copy of it, an externally tagged enum
/// with data an enum of the same variants known once the name or the key is read (any other name
/// naming its `#[serde(other)]` variant; a newtype variant holding its field's partial form, a
/// struct variant optional fields, a tuple variant its positions, each an `Option`), an adjacently
/// tagged enum the same once its tag is read, its content growing as the variant's partial form. An
/// untagged enum shows the first variant, in declaration order, that the JSON written so far fits
/// (`null` a unit variant; what the field's type shows a newtype variant; an object one of whose
/// fields is shown a struct variant and, once the object is complete, only if it holds every field
/// serde needs; an array a tuple variant), an object fitting no variant of objects while it holds a
/// key another reads and it does not: as the JSON grows the variant shown can change, as serde
/// takes the first variant that deserializes. A generic enum's partial form takes its type
/// parameters (`Partial<Either<L, R>>` is `EitherPartial<L, R>`), implementing `Debug`, `Clone` and
/// `PartialEq` by hand so that they ask nothing of the parameters. Structs derive `Debug`, `Clone`,
/// `Default`, `PartialEq` and `Serialize` (with serde's JSON names, fields not yet shown left out);
/// enums all but `Default`. A newtype or transparent struct's partial form is its field's
/// (`TPartial` is an alias of it); a tuple struct's is a tuple struct of its positions (`struct
/// Point(f64, f64)` gives `struct PointPartial(pub Option<f64>, pub Option<f64>)`), each `None`
/// until its item is shown, shown once its array begins and serialized as an array with `null` at
/// the positions not shown yet; a tuple `(A, B)` is shown the same way, as `(Option<Partial<A>>,
/// Option<Partial<B>>)`, and an array `[T; N]` as a list of its items so far. Any other enum's
/// (tagged with an `#[serde(untagged)]` variant) is `serde_json::Value`, the JSON written so far.
/// The well-known types are shown once complete. `llm_extract::parse::PartialValue` says when each
/// kind of value is shown. A field marked `#[extract(schemars)]` is a `serde_json::Value`, the JSON
/// written so far.
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
/// A type that contains itself derives like any other; its schema refers to itself:
///
/// ```
/// use llm_extract::{Extract, Schema};
/// use serde::Deserialize;
///
/// #[derive(Extract, Deserialize)]
/// struct Node {
///     name: String,
///     children: Vec<Node>,
/// }
///
/// let schema = Node::json_schema();
/// assert_eq!(schema["properties"]["children"]["items"]["$ref"], "#/$defs/Node");
/// assert_eq!(schema["$defs"]["Node"]["properties"], schema["properties"]);
/// ```
///
/// Its partial form holds itself the same way (`Box<T>`'s partial form is a `Box` of `T`'s). A
/// recursive schema bounds no answer's length, so extractions use the default `max_tokens`.
#[proc_macro_derive(Extract, attributes(extract))]
pub fn derive_extract(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand::derive(&input).into()
}
