//! Every rule a user can break, each reported on the exact offending tokens with what to do instead.
//! All rules run; `Ctxt` collects the errors so one compile shows every mistake.

use crate::ast::{Enum, Field, Input, Repr, Struct, Style, Variant};
use crate::attr::{Attrs, Example, Json, Number, Setting, Stream};
use crate::ctxt::Ctxt;
use crate::ty::{self, Kind};
use regex_syntax::hir::{Hir, HirKind, Look};
use std::collections::HashSet;
use syn::{GenericParam, LitStr};

/// Checks the whole input.
pub fn check(cx: &Ctxt, input: &Input) {
    check_generics(cx, input.original());
    match input {
        Input::Struct(input) => check_struct(cx, input),
        Input::Enum(input) => check_enum(cx, input),
    }
}

fn check_generics(cx: &Ctxt, input: &syn::DeriveInput) {
    for param in &input.generics.params {
        let message = match param {
            GenericParam::Type(_) => continue,
            GenericParam::Lifetime(_) => {
                "`#[derive(Extract)]` does not support lifetime parameters: extraction deserializes owned \
                 values (`DeserializeOwned`); use owned field types such as `String`"
            }
            GenericParam::Const(_) => {
                "`#[derive(Extract)]` does not support const parameters: a schema cannot depend on a \
                 number the macro cannot see; use a type parameter or a concrete type"
            }
        };
        cx.error_spanned_by(param, message);
    }
}

fn check_struct(cx: &Ctxt, input: &Struct) {
    let ident = &input.original.ident;
    let serde = &input.attrs.serde;
    check_container_attrs(cx, &input.attrs, "a struct");
    match input.style {
        Style::Named => {}
        Style::Tuple(_) => {
            if let Some(tag) = &serde.tag {
                cx.error_spanned_by(
                    tag,
                    "`#[serde(tag = \"...\")]` applies to enums and structs with named fields (serde \
                     rejects it on a tuple struct); remove it",
                );
            }
        }
        Style::Unit => cx.error_spanned_by(
            ident,
            "unit structs are not supported: there is nothing to extract (serde reads only `null`); \
             add fields",
        ),
    }
    if let Some(transparent) = &serde.transparent {
        if input.inner().is_none() {
            cx.error_spanned_by(
                transparent,
                "`#[serde(transparent)]` needs exactly one field that is not skipped: its JSON is the \
                 struct's; skip the others (`#[serde(skip)]`)",
            );
        }
    }
    for field in &input.fields {
        check_field(cx, field);
        check_stream(cx, field, serde.default.is_some());
    }
    let tag = serde.tag.as_ref().map(LitStr::value);
    check_json_names(cx, &input.fields, tag.as_deref());
}

fn check_enum(cx: &Ctxt, input: &Enum) {
    let ident = &input.original.ident;
    let serde = &input.attrs.serde;
    check_container_attrs(cx, &input.attrs, "an enum");
    if let (Some(untagged), Some(_)) = (&serde.untagged, &serde.tag) {
        cx.error_spanned_by(
            untagged,
            "`untagged` and `tag` contradict each other (serde rejects the pair): an untagged enum \
             writes no tag; remove one",
        );
    }
    if let (None, Some(content)) = (&serde.tag, &serde.content) {
        cx.error_spanned_by(
            content,
            "`content` needs `tag` (serde rejects it alone): write `#[serde(tag = \"t\", content = \"c\")]` \
             for an adjacently tagged enum",
        );
    }
    if let Some(transparent) = &serde.transparent {
        cx.error_spanned_by(
            transparent,
            "`#[serde(transparent)]` applies to structs with one field (serde rejects it on an enum)",
        );
    }
    let live = input.live();
    if live.is_empty() {
        cx.error_spanned_by(
            ident,
            "an enum without (deserializable) variants has no values to extract; add a variant",
        );
    }
    let repr = input.repr();
    let mut names = HashSet::new();
    let mut others = 0;
    let mut untagged_seen: Option<&Variant> = None;
    for variant in &input.variants {
        check_variant(cx, variant, &repr);
        if variant.skipped() {
            continue;
        }
        if variant.other() {
            others += 1;
            if others > 1 {
                if let Some(other) = &variant.attrs.serde.other {
                    cx.error_spanned_by(other, "only one variant can be `#[serde(other)]`");
                }
            }
        }
        if variant.untagged() {
            untagged_seen = Some(variant);
        } else if let Some(before) = untagged_seen {
            cx.error_spanned_by(
                &variant.original.ident,
                format!(
                    "variant `{}` comes after the untagged variant `{}`: serde needs untagged \
                     variants last (it tries them after every tagged one); move them to the end",
                    variant.original.ident, before.original.ident
                ),
            );
        }
        if matches!(repr, Repr::Untagged) {
            continue;
        }
        let mut variant_names = vec![(variant.name.clone(), None)];
        variant_names.extend(
            variant
                .attrs
                .serde
                .aliases
                .iter()
                .map(|a| (a.value(), Some(a))),
        );
        for (name, alias) in variant_names {
            if !names.insert(name.clone()) {
                let message = format!(
                    "another variant is also called `{name}` in JSON; give each a distinct name with \
                     `#[serde(rename = \"...\")]`"
                );
                match alias {
                    Some(alias) => cx.error_spanned_by(alias, message),
                    None => cx.error_spanned_by(&variant.original.ident, message),
                }
            }
        }
    }
}

fn check_variant(cx: &Ctxt, variant: &Variant, repr: &Repr) {
    check_serde_unsupported(cx, &variant.attrs);
    crate::example_attr::check_not_here(cx, &variant.attrs.extract.example, "a variant");
    check_not_on_type(cx, &variant.attrs, "a variant");
    for (key, tokens) in variant.attrs.extract.field_only_keys() {
        cx.error_spanned_by(
            tokens,
            format!("`{key}` constrains a field's value; put it on a field (a variant takes only `description`)"),
        );
    }
    if variant.skipped() {
        return;
    }
    if let Some(other) = &variant.attrs.serde.other {
        let why = if !matches!(variant.style, Style::Unit) {
            Some("`#[serde(other)]` must be on a unit variant (serde rejects it elsewhere): it keeps no data")
        } else if matches!(repr, Repr::Untagged) || variant.untagged() {
            Some("`#[serde(other)]` needs a tag to compare (serde rejects it in an untagged enum)")
        } else {
            None
        };
        if let Some(why) = why {
            cx.error_spanned_by(other, why);
        }
    }
    if let Some(untagged) = &variant.attrs.serde.untagged {
        if matches!(repr, Repr::Untagged) {
            cx.error_spanned_by(
                untagged,
                "`#[serde(untagged)]` on a variant of an enum that is itself untagged says nothing; \
                 remove it",
            );
        }
    }
    if let (Style::Tuple(fields), Repr::Internal { .. }) = (&variant.style, repr) {
        if fields.unnamed.len() != 1 && !variant.untagged() {
            cx.error_spanned_by(
                fields,
                format!(
                    "tuple variants cannot be internally tagged (serde rejects them: an array has no \
                     place for the tag); use a struct variant, e.g. `{} {{ value: T }}`, or make the \
                     enum adjacently tagged with `content = \"...\"`",
                    variant.original.ident
                ),
            );
        }
    }
    for field in &variant.fields {
        check_field(cx, field);
        check_stream(cx, field, false);
    }
    let tag = match repr {
        Repr::Internal { tag } if !variant.untagged() => Some(tag.as_str()),
        _ => None,
    };
    check_json_names(cx, &variant.fields, tag);
}

fn check_container_attrs(cx: &Ctxt, attrs: &Attrs, what: &str) {
    check_serde_unsupported(cx, attrs);
    for (key, tokens) in attrs.extract.field_only_keys() {
        cx.error_spanned_by(
            tokens,
            format!("`{key}` constrains a field's value; put it on a field ({what} takes only `description`)"),
        );
    }
}

/// `check` runs the type's `Check` implementation on a whole value: it belongs on the type.
fn check_not_on_type(cx: &Ctxt, attrs: &Attrs, what: &str) {
    if let Some(check) = &attrs.extract.check {
        cx.error_spanned_by(
            &check.tokens,
            format!("`check` runs the type's `Check` implementation on a whole value; put it on the type, not on {what}"),
        );
    }
}

fn check_serde_unsupported(cx: &Ctxt, attrs: &Attrs) {
    for (key, tokens) in &attrs.serde.unsupported {
        let message = match key.as_str() {
            "flatten" => {
                "`#[serde(flatten)]` is not supported: the object could not be closed \
                 (`additionalProperties: false`) around keys the macro cannot see; write the fields \
                 out, or keep the inner type as a normal (nested) field"
                    .to_owned()
            }
            "from" | "try_from" | "remote" => format!(
                "`#[serde({key} = \"...\")]` is not supported: the JSON would be another type's; \
                 derive `Extract` on that type and convert after extracting"
            ),
            "deserialize_with" | "with" => format!(
                "`#[serde({key} = \"...\")]` is not supported: the macro cannot know the JSON a \
                 custom function reads; give the field a type whose JSON it is (deriving `Extract`, \
                 or a foreign type marked `#[extract(schemars)]`) and convert after extracting"
            ),
            _ => format!(
                "`#[serde({key})]` is not supported; use a plain enum (fieldless variants become a \
                 string enum)"
            ),
        };
        cx.error_spanned_by(tokens, message);
    }
}

fn check_field(cx: &Ctxt, field: &Field) {
    let attrs = &field.attrs;
    check_serde_unsupported(cx, attrs);
    crate::example_attr::check_not_here(cx, &attrs.extract.example, "a field");
    check_not_on_type(cx, attrs, "a field");
    if let Some(skip) = &attrs.serde.skip {
        for (key, tokens) in attrs.extract.all_keys() {
            cx.error_spanned_by(
                tokens,
                format!(
                    "`{key}` has no effect: `#[serde({})]` leaves this field out of the schema; \
                     remove one of them",
                    skip
                ),
            );
        }
        return;
    }
    if let Some((part, why)) = ty::unsupported(field.ty) {
        cx.error_spanned_by(part, why);
    }
    if let Some(flatten) = &attrs.serde.flatten {
        check_flatten(cx, field, flatten);
        return;
    }
    check_constraints(cx, field);
}

/// A `#[serde(flatten)]` field has no key and no value of its own: its members are the object's. So
/// nothing that describes or constrains one value applies; whether its type has members to merge
/// (a struct or a map) is a trait bound in the generated code (`Flatten`).
fn check_flatten(cx: &Ctxt, field: &Field, flatten: &proc_macro2::TokenStream) {
    for (key, tokens) in field.attrs.extract.all_keys() {
        cx.error_spanned_by(
            tokens,
            format!(
                "`{key}` does not apply to a `#[serde(flatten)]` field, whose members are merged into \
                 the object: put it on the fields of the flattened type"
            ),
        );
    }
    if let Some(rename) = &field.attrs.serde.rename.deserialize {
        cx.error_spanned_by(
            rename,
            "a `#[serde(flatten)]` field has no JSON key of its own, so `rename` does nothing; remove it",
        );
    }
    if ty::kind(field.ty) == ty::Kind::Json {
        cx.error_spanned_by(
            flatten,
            "`#[serde(flatten)]` of a `serde_json::Value` takes any members, which no schema of the \
             object can list; flatten a `HashMap<String, serde_json::Value>` to keep the unknown keys",
        );
    }
}

/// `stream = "required"` needs a field the model always writes: on a field it may leave out or write as
/// `null`, its object would never be shown.
fn check_stream(cx: &Ctxt, field: &Field, all_default: bool) {
    let Some(stream) = &field.attrs.extract.stream else {
        return;
    };
    if stream.value != Stream::Required || field.skipped() {
        return;
    }
    let why = if ty::option_inner(field.ty).is_some() {
        "this field is optional: whenever the model writes `null` for it"
    } else if field.attrs.serde.default.is_some() || all_default {
        "this field has a default (`#[serde(default)]`): whenever the model leaves it out"
    } else {
        return;
    };
    cx.error_spanned_by(
        &stream.tokens,
        format!(
            "`stream = \"required\"` cannot apply here: {why}, its object would never be shown in \
             a partial value; use `stream = \"done\"` or make the field required"
        ),
    );
}

/// The checks a constraint's field type allows; `Kind::Unknown` types are checked by a trait bound
/// in the generated code instead.
fn check_constraints(cx: &Ctxt, field: &Field) {
    let extract = &field.attrs.extract;
    let kind = if extract.schemars.is_some() {
        Kind::Unknown
    } else {
        ty::kind(field.ty)
    };
    let is = |allowed: &[Kind]| kind == Kind::Unknown || allowed.contains(&kind);
    let numeric = matches!(kind, Kind::Int(_) | Kind::Float | Kind::Unknown);
    let hint = match kind {
        Kind::String => "; for a string use `min_length`/`max_length`",
        Kind::Char => "; a `char` is always exactly one character",
        Kind::Sequence | Kind::Set => "; for a sequence use `min_items`/`max_items`",
        Kind::Int(_) | Kind::Float => "; for a number use `minimum`/`maximum`",
        _ => "",
    };
    let mismatch = |key: &str, tokens: &proc_macro2::TokenStream, applies_to: &str| {
        cx.error_spanned_by(
            tokens,
            format!(
                "`{key}` applies to {applies_to}, but this field is {}{hint}",
                kind.describe()
            ),
        );
    };
    for (key, setting) in [
        ("min_length", &extract.min_length),
        ("max_length", &extract.max_length),
    ] {
        if let Some(setting) = setting.as_ref().filter(|_| !is(&[Kind::String])) {
            mismatch(key, &setting.tokens, "strings");
        }
    }
    for (key, setting) in [
        ("min_items", &extract.min_items),
        ("max_items", &extract.max_items),
    ] {
        if let Some(setting) = setting
            .as_ref()
            .filter(|_| !is(&[Kind::Sequence, Kind::Set]))
        {
            mismatch(key, &setting.tokens, "sequences and sets");
        }
    }
    for (key, setting) in [("minimum", &extract.minimum), ("maximum", &extract.maximum)] {
        let Some(setting) = setting else { continue };
        if !numeric {
            mismatch(key, &setting.tokens, "numbers");
        } else if let Kind::Int(int) = kind {
            check_integer_bound(cx, key, setting, int);
        }
    }
    if let Some(pattern) = &extract.pattern {
        if is(&[Kind::String]) {
            check_pattern(cx, &pattern.value);
        } else {
            mismatch("pattern", &pattern.tokens, "strings");
        }
    }
    check_grounding(cx, field, kind);
    check_order(
        cx,
        "min_length",
        &extract.min_length,
        "max_length",
        &extract.max_length,
    );
    check_order(
        cx,
        "min_items",
        &extract.min_items,
        "max_items",
        &extract.max_items,
    );
    if let (Some(min), Some(max)) = (&extract.minimum, &extract.maximum) {
        if min.value.as_f64() > max.value.as_f64() {
            cx.error_spanned_by(
                &min.tokens,
                format!(
                    "`minimum` ({}) is greater than `maximum` ({}): no value could satisfy both",
                    min.value, max.value
                ),
            );
        }
    }
    if let Some(examples) = &extract.examples {
        for example in &examples.value {
            check_example(cx, field, kind, example);
        }
    }
}

/// `grounded` needs text it can find in the source: a string, an optional string or a list of strings;
/// `key` needs a scalar to compare.
fn check_grounding(cx: &Ctxt, field: &Field, kind: Kind) {
    let extract = &field.attrs.extract;
    if let Some(grounded) = &extract.grounded {
        let text_list = kind == Kind::Sequence
            && ty::sequence_element(field.ty).map(ty::kind) == Some(Kind::String);
        if extract.schemars.is_some() || !(kind == Kind::String || text_list) {
            cx.error_spanned_by(
                &grounded.tokens,
                format!(
                    "`grounded` applies to `String`, `Option<String>` and `Vec<String>` fields (a \
                     value quoted from the text), but this field is {}",
                    kind.describe()
                ),
            );
        }
    }
    if let Some(key) = &extract.key {
        if matches!(kind, Kind::Sequence | Kind::Set | Kind::Map | Kind::Json)
            || extract.schemars.is_some()
        {
            cx.error_spanned_by(
                &key.tokens,
                format!(
                    "`key` applies to a field holding one value (a string, number, `bool` or \
                     fieldless enum) that identifies an item, but this field is {}",
                    kind.describe()
                ),
            );
        }
    }
}

fn check_integer_bound(cx: &Ctxt, key: &str, setting: &Setting<Number>, int: ty::IntType) {
    match setting.value {
        Number::Float(float) if float.fract() == 0.0 => cx.error_spanned_by(
            &setting.tokens,
            format!(
                "`{key}` of an integer field must be an integer literal: write `{key} = {}`",
                float as i128
            ),
        ),
        Number::Float(float) => cx.error_spanned_by(
            &setting.tokens,
            format!(
                "`{key} = {float}` is not an integer, and this field is `{}`",
                int.name
            ),
        ),
        Number::Int(value) if value < int.min || value > int.max => cx.error_spanned_by(
            &setting.tokens,
            format!(
                "`{key} = {value}` is outside the range of `{}` ({}..={})",
                int.name, int.min, int.max
            ),
        ),
        Number::Int(_) => {}
    }
}

fn check_order(
    cx: &Ctxt,
    min_key: &str,
    min: &Option<Setting<u64>>,
    max_key: &str,
    max: &Option<Setting<u64>>,
) {
    if let (Some(min), Some(max)) = (min, max) {
        if min.value > max.value {
            cx.error_spanned_by(
                &min.tokens,
                format!(
                    "`{min_key}` ({}) is greater than `{max_key}` ({}): no value could satisfy both",
                    min.value, max.value
                ),
            );
        }
    }
}

/// The pattern must compile, and be anchored as a whole: JSON Schema patterns match anywhere in a
/// string unless anchored, and llama.cpp's grammar converter rejects unanchored ones outright.
fn check_pattern(cx: &Ctxt, literal: &LitStr) {
    let pattern = literal.value();
    let hir = match regex_syntax::Parser::new().parse(&pattern) {
        Ok(hir) => hir,
        Err(err) => {
            cx.error_spanned_by(
                literal,
                format!(
                    "`pattern` is not a valid regular expression: {}",
                    regex_error(&err, &pattern)
                ),
            );
            return;
        }
    };
    let inner = pattern.strip_prefix('^').unwrap_or(&pattern);
    let inner = inner.strip_suffix('$').unwrap_or(inner);
    if !pattern.starts_with('^') || !pattern.ends_with('$') {
        cx.error_spanned_by(
            literal,
            format!(
                "`pattern` must be anchored: start it with `^` and end it with `$` (`\"^{inner}$\"`); \
                 JSON Schema patterns match anywhere in a string unless anchored, and llama.cpp's \
                 grammar converter (Ollama) rejects unanchored patterns"
            ),
        );
    } else if matches!(hir.kind(), HirKind::Alternation(_)) {
        cx.error_spanned_by(
            literal,
            format!(
                "`pattern` is not anchored as a whole: its top-level `|` anchors only the first and \
                 the last alternative; group the alternatives: `\"^({inner})$\"`"
            ),
        );
    } else if !anchored_at_both_ends(&hir) {
        cx.error_spanned_by(
            literal,
            "`pattern` must end with an unescaped `$` that anchors the end of the string",
        );
    }
}

fn anchored_at_both_ends(hir: &Hir) -> bool {
    let is_look = |hir: Option<&Hir>, look: Look| matches!(hir.map(Hir::kind), Some(HirKind::Look(found)) if *found == look);
    match hir.kind() {
        HirKind::Concat(parts) => {
            is_look(parts.first(), Look::Start) && is_look(parts.last(), Look::End)
        }
        _ => false,
    }
}

fn regex_error(err: &regex_syntax::Error, pattern: &str) -> String {
    let (kind, span) = match err {
        regex_syntax::Error::Parse(err) => (err.kind().to_string(), *err.span()),
        regex_syntax::Error::Translate(err) => (err.kind().to_string(), *err.span()),
        other => return other.to_string(),
    };
    match pattern.get(span.start.offset..span.end.offset) {
        Some(fragment) if !fragment.is_empty() => format!("{kind} (at `{fragment}`)"),
        _ => format!("{kind} (at offset {})", span.start.offset),
    }
}

fn check_example(cx: &Ctxt, field: &Field, kind: Kind, example: &Example) {
    let extract = &field.attrs.extract;
    let problem = match (kind, &example.value) {
        (Kind::Unknown | Kind::Json | Kind::Map, _) => None,
        (Kind::String, Json::String(text)) => outside(
            "its length",
            text.chars().count() as u64,
            ("min_length", &extract.min_length),
            ("max_length", &extract.max_length),
        ),
        (Kind::Char, Json::String(text)) => {
            (text.chars().count() != 1).then(|| "a `char` holds exactly one character".to_owned())
        }
        (Kind::Bool, Json::Bool(_)) => None,
        (Kind::Int(int), Json::Number(Number::Int(value))) => {
            if *value < int.min || *value > int.max {
                Some(format!(
                    "`{value}` does not fit in `{}` ({}..={})",
                    int.name, int.min, int.max
                ))
            } else {
                outside_bounds(Number::Int(*value), extract)
            }
        }
        (Kind::Float, Json::Number(number)) => outside_bounds(*number, extract),
        (Kind::Sequence | Kind::Set, Json::Array(items)) => outside(
            "its item count",
            items.len() as u64,
            ("min_items", &extract.min_items),
            ("max_items", &extract.max_items),
        ),
        _ => {
            cx.error_spanned_by(
                &example.tokens,
                format!(
                    "this example is {}, but the field is {}",
                    describe_json(&example.value),
                    kind.describe()
                ),
            );
            return;
        }
    };
    if let Some(problem) = problem {
        cx.error_spanned_by(
            &example.tokens,
            format!("this example does not fit the field: {problem}"),
        );
    }
}

/// Why `value` is outside its bounds, if it is.
fn outside(
    what: &str,
    value: u64,
    (min_key, min): (&str, &Option<Setting<u64>>),
    (max_key, max): (&str, &Option<Setting<u64>>),
) -> Option<String> {
    if let Some(min) = min.as_ref().filter(|min| value < min.value) {
        return Some(format!(
            "{what} ({value}) is below `{min_key}` ({})",
            min.value
        ));
    }
    if let Some(max) = max.as_ref().filter(|max| value > max.value) {
        return Some(format!(
            "{what} ({value}) is above `{max_key}` ({})",
            max.value
        ));
    }
    None
}

fn outside_bounds(value: Number, extract: &crate::attr::ExtractAttrs) -> Option<String> {
    if let Some(min) = extract
        .minimum
        .as_ref()
        .filter(|min| value.as_f64() < min.value.as_f64())
    {
        return Some(format!("{value} is below `minimum` ({})", min.value));
    }
    if let Some(max) = extract
        .maximum
        .as_ref()
        .filter(|max| value.as_f64() > max.value.as_f64())
    {
        return Some(format!("{value} is above `maximum` ({})", max.value));
    }
    None
}

fn describe_json(value: &Json) -> &'static str {
    match value {
        Json::String(_) => "a string",
        Json::Number(Number::Int(_)) => "an integer",
        Json::Number(Number::Float(_)) => "a floating-point number",
        Json::Bool(_) => "a boolean",
        Json::Array(_) => "an array",
    }
}

/// No two fields may read the same JSON key (names and aliases), nor the enum's tag.
fn check_json_names(cx: &Ctxt, fields: &[Field], tag: Option<&str>) {
    let mut seen = HashSet::new();
    let keyed = |f: &&Field| !f.skipped() && !f.name.is_empty() && f.attrs.serde.flatten.is_none();
    for field in fields.iter().filter(keyed) {
        let ident = &field.original.ident;
        let mut names = vec![(field.name.clone(), quote::quote!(#ident))];
        if let Some(renamed) = &field.attrs.serde.rename.deserialize {
            names[0].1 = quote::quote!(#renamed);
        }
        names.extend(
            field
                .attrs
                .serde
                .aliases
                .iter()
                .map(|alias| (alias.value(), quote::quote!(#alias))),
        );
        for (name, tokens) in names {
            if Some(name.as_str()) == tag {
                cx.error_spanned_by(
                    tokens,
                    format!("this field's JSON key `{name}` is also the tag's; rename the field or the tag"),
                );
            } else if !seen.insert(name.clone()) {
                cx.error_spanned_by(
                    tokens,
                    format!(
                        "another field also reads the JSON key `{name}`; give each field distinct \
                         names (`#[serde(rename = \"...\")]`, `alias`)"
                    ),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ast::Input;
    use crate::ctxt::Ctxt;
    use syn::DeriveInput;

    /// Every error message `check` reports for `input`.
    fn errors(input: DeriveInput) -> Vec<String> {
        let cx = Ctxt::new();
        if let Some(model) = Input::from_syn(&cx, &input) {
            super::check(&cx, &model);
        }
        match cx.check() {
            Ok(()) => Vec::new(),
            Err(err) => err.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    fn pattern_errors(pattern: &str) -> Vec<String> {
        errors(syn::parse_quote! {
            struct S { #[extract(pattern = #pattern)] s: String }
        })
    }

    #[test]
    fn anchored_patterns_pass() {
        for pattern in [
            "^$",
            "^[a-z0-9]+(-[a-z0-9]+)*$",
            "^(yes|no)$",
            r"^\d{4}-\d{2}$",
            r"^a\$$",
        ] {
            assert_eq!(pattern_errors(pattern), Vec::<String>::new(), "{pattern}");
        }
    }

    #[test]
    fn unanchored_patterns_fail_with_a_fix() {
        let cases = [
            (
                "[a-z]+",
                "start it with `^` and end it with `$` (`\"^[a-z]+$\"`)",
            ),
            (
                "^[a-z]+",
                "start it with `^` and end it with `$` (`\"^[a-z]+$\"`)",
            ),
            ("(?m)^a$", "start it with `^`"),
            ("^yes|no$", "group the alternatives: `\"^(yes|no)$\"`"),
            (r"^a\$", "unescaped `$`"),
            ("^(a$", "not a valid regular expression: unclosed group"),
        ];
        for (pattern, expected) in cases {
            let errors = pattern_errors(pattern);
            assert_eq!(errors.len(), 1, "{pattern}: {errors:?}");
            assert!(errors[0].contains(expected), "{pattern}: {}", errors[0]);
        }
    }

    #[test]
    fn valid_input_has_no_errors() {
        let input = syn::parse_quote! {
            #[serde(tag = "kind", rename_all = "snake_case")]
            enum E {
                /// Doc.
                #[extract(description = "Over.")]
                A {
                    #[extract(min_length = 1, max_length = 2, examples("a"))]
                    s: Option<String>,
                    #[extract(min_items = 0, max_items = 0)]
                    v: Vec<u8>,
                    #[extract(minimum = -1, maximum = 1, examples(0))]
                    n: i8,
                    #[extract(minimum = 0.5)]
                    alias_checked_later: Score,
                },
                B,
                #[serde(skip)]
                C(u8),
            }
        };
        assert_eq!(errors(input), Vec::<String>::new());
    }

    #[test]
    fn serde_shapes_are_accepted() {
        let inputs: Vec<syn::DeriveInput> = vec![
            syn::parse_quote! { enum E { A, B(u8), C(u8, String), D { x: bool } } },
            syn::parse_quote! {
                #[serde(tag = "t", content = "c")]
                enum E { A, B(u8), C(u8, String), D { x: bool }, #[serde(other)] Z }
            },
            syn::parse_quote! { #[serde(untagged)] enum E { A, B(u8), C { x: bool } } },
            syn::parse_quote! {
                #[serde(tag = "t")]
                enum E { A(Inner), #[serde(alias = "b")] B, #[serde(other)] Z, #[serde(untagged)] U(u8, u8) }
            },
            syn::parse_quote! { struct Email(String); },
            syn::parse_quote! { struct Pair(u8, (String, [u8; 4])); },
            syn::parse_quote! { #[serde(transparent)] struct Id { value: u64, #[serde(skip)] cache: u8 } },
        ];
        for input in inputs {
            let shown = quote::quote!(#input).to_string();
            assert_eq!(errors(input), Vec::<String>::new(), "{shown}");
        }
    }

    #[test]
    fn what_serde_rejects_is_an_error_with_its_reason() {
        let cases: Vec<(syn::DeriveInput, &str)> = vec![
            (
                syn::parse_quote! { #[serde(untagged, tag = "t")] enum E { A } },
                "`untagged` and `tag` contradict each other",
            ),
            (
                syn::parse_quote! { #[serde(content = "c")] enum E { A } },
                "`content` needs `tag`",
            ),
            (
                syn::parse_quote! { #[serde(tag = "t")] enum E { A(u8, u8) } },
                "tuple variants cannot be internally tagged",
            ),
            (
                syn::parse_quote! { enum E { A, #[serde(other)] B(u8) } },
                "must be on a unit variant",
            ),
            (
                syn::parse_quote! { #[serde(untagged)] enum E { A(u8), #[serde(other)] B } },
                "needs a tag to compare",
            ),
            (
                syn::parse_quote! { enum E { #[serde(untagged)] A(u8), B } },
                "comes after the untagged variant `A`",
            ),
            (
                syn::parse_quote! { enum E { A, #[serde(alias = "A")] B } },
                "another variant is also called `A`",
            ),
            (
                syn::parse_quote! { #[serde(transparent)] struct S { a: u8, b: u8 } },
                "needs exactly one field that is not skipped",
            ),
            (
                syn::parse_quote! { #[serde(transparent)] enum E { A(u8) } },
                "applies to structs with one field",
            ),
            (
                syn::parse_quote! { #[serde(tag = "t")] struct S(u8); },
                "applies to enums and structs with named fields",
            ),
            (
                syn::parse_quote! { enum E { A, #[serde(other)] B, #[serde(other)] C } },
                "only one variant can be `#[serde(other)]`",
            ),
        ];
        for (input, expected) in cases {
            let errors = errors(input);
            assert_eq!(errors.len(), 1, "{expected}: {errors:?}");
            assert!(errors[0].contains(expected), "{}", errors[0]);
        }
    }

    #[test]
    fn every_mistake_is_reported_at_once() {
        let input = syn::parse_quote! {
            struct S<'a, T> {
                #[extract(min_length = 3, max_length = 1)]
                a: String,
                #[extract(minimum = 1.5)]
                b: u8,
                #[serde(flatten)]
                #[extract(description = "merged")]
                c: Inner,
                d: Option<Box<S<'a, T>>>,
                #[serde(rename = "a")]
                e: bool,
            }
        };
        let errors = errors(input);
        let expected = [
            "does not support lifetime parameters",
            "`min_length` (3) is greater than `max_length` (1)",
            "`minimum = 1.5` is not an integer",
            "`description` does not apply to a `#[serde(flatten)]` field",
            "another field also reads the JSON key `a`",
        ];
        assert_eq!(errors.len(), expected.len(), "{errors:#?}");
        for (error, expected) in errors.iter().zip(expected) {
            assert!(error.contains(expected), "{error}");
        }
    }
}
