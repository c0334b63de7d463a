//! What the partial code reads of the model: the fields and variants serde reads (live ones, by
//! their key or flattened), the `#[extract(stream = ..)]` of a field, a newtype variant's field, and
//! the fields whose partial forms an enum's partial form holds.

use crate::ast::{Field, Style, Variant};
use crate::attr::Stream;

/// The live (not skipped) fields.
pub fn live<'f, 'a>(fields: &'f [Field<'a>]) -> Vec<&'f Field<'a>> {
    fields.iter().filter(|f| !f.skipped()).collect()
}

/// Whether the field is `#[serde(flatten)]`: it has no key, its members are the object's.
pub fn flattened(field: &Field) -> bool {
    field.attrs.serde.flatten.is_some()
}

/// The fields read by their key (all but the flattened ones).
pub fn keyed<'f, 'a>(fields: &[&'f Field<'a>]) -> Vec<&'f Field<'a>> {
    fields.iter().copied().filter(|f| !flattened(f)).collect()
}

/// Whether the field is shown only once its value is complete (`#[extract(stream = "done")]`).
pub fn done(field: &Field) -> bool {
    field
        .attrs
        .extract
        .stream
        .as_ref()
        .is_some_and(|s| s.value == Stream::Done)
}

/// Whether its object is shown only once the field is (`#[extract(stream = "required")]`).
pub fn required(field: &Field) -> bool {
    field
        .attrs
        .extract
        .stream
        .as_ref()
        .is_some_and(|s| s.value == Stream::Required)
}

/// The JSON names and aliases of the fields read by their key.
pub fn keys(fields: &[&Field]) -> Vec<String> {
    keyed(fields)
        .into_iter()
        .flat_map(|field| {
            let aliases = field.attrs.serde.aliases.iter().map(syn::LitStr::value);
            std::iter::once(field.name.clone()).chain(aliases)
        })
        .collect()
}

/// The live fields of a struct variant (none for any other variant).
pub fn variant_fields<'v, 'a>(variant: &'v Variant<'a>) -> Vec<&'v Field<'a>> {
    match variant.style {
        Style::Named => live(&variant.fields),
        _ => Vec::new(),
    }
}

/// The field of a newtype variant.
pub fn newtype<'v, 'a>(variant: &'v Variant<'a>) -> Option<&'v Field<'a>> {
    match variant.style {
        Style::Tuple(fields) if fields.unnamed.len() == 1 => variant.fields.first(),
        _ => None,
    }
}

/// The fields whose partial forms a variant's partial form holds: a struct or tuple variant's live
/// fields, a newtype variant's field.
pub fn held<'v, 'a>(variant: &'v Variant<'a>) -> Vec<&'v Field<'a>> {
    match (&variant.style, newtype(variant)) {
        (_, Some(field)) => vec![field],
        (Style::Unit, _) => Vec::new(),
        _ => live(&variant.fields),
    }
}

/// The fields held by all the live variants.
pub fn all_held<'v, 'a>(variants: &[&'v Variant<'a>]) -> Vec<&'v Field<'a>> {
    variants.iter().flat_map(|variant| held(variant)).collect()
}
