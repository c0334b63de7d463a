//! Which partial form a derived type gets (the forms `super`'s doc lists), decided from the model
//! alone: a newtype is shown as its field, a struct field by field, an enum by its representation,
//! and an enum no form covers (tagged with an `#[serde(untagged)]` variant, internally tagged with a
//! tuple variant, generic with a type parameter only skipped fields name) as the JSON written so far.

use super::model_view::{all_held, newtype};
use crate::ast::{Enum, Field, Input, Repr, Struct, Style};
use crate::ty;
use syn::DeriveInput;

/// The partial form of one derived type, with what its code is written from.
pub enum Form<'i, 'a> {
    /// A newtype or `#[serde(transparent)]` struct (not a schemars field): its field's partial form.
    Newtype(&'i Struct<'a>, &'i Field<'a>),
    /// The JSON written so far (`serde_json::Value`).
    Json(&'a DeriveInput),
    /// A struct with named fields: each field an `Option`.
    Struct(&'i Struct<'a>),
    /// A tuple struct: each position an `Option`.
    TupleStruct(&'i Struct<'a>),
    /// An externally tagged enum of unit variants only, none of them `#[serde(other)]`: a copy of it.
    Fieldless(&'i Enum<'a>),
    /// An externally tagged enum with data (or a `#[serde(other)]` variant).
    External(&'i Enum<'a>),
    /// An internally tagged enum of struct, unit and newtype variants, with its tag key.
    Internal(&'i Enum<'a>, String),
    /// An adjacently tagged enum, with its tag and content keys.
    Adjacent(&'i Enum<'a>, String, String),
    /// An untagged enum.
    Untagged(&'i Enum<'a>),
}

impl<'i, 'a> Form<'i, 'a> {
    /// The form `input` gets.
    pub fn of(input: &'i Input<'a>) -> Self {
        match input {
            Input::Struct(input) => match input.inner() {
                Some(inner) if inner.attrs.extract.schemars.is_none() => {
                    Form::Newtype(input, inner)
                }
                Some(_) => Form::Json(input.original),
                None if matches!(input.style, Style::Tuple(_)) => Form::TupleStruct(input),
                None => Form::Struct(input),
            },
            Input::Enum(input) => Form::of_enum(input),
        }
    }

    /// The form of an enum, by its representation and its variants' shapes.
    fn of_enum(input: &'i Enum<'a>) -> Self {
        let live = input.live();
        let plain = live.iter().all(|v| !v.other() && !v.untagged());
        let tagged = live.iter().all(|v| !v.untagged());
        let internal_shapes = live
            .iter()
            .all(|v| matches!(v.style, Style::Named | Style::Unit) || newtype(v).is_some());
        match input.repr() {
            // A type parameter no live field names would be unused by the partial form.
            _ if !params_used(input) => Form::Json(input.original),
            Repr::Internal { tag } if tagged && internal_shapes => Form::Internal(input, tag),
            Repr::External if plain && input.fieldless() && !generic(input) => {
                Form::Fieldless(input)
            }
            Repr::External if tagged => Form::External(input),
            Repr::Adjacent { tag, content } if tagged => Form::Adjacent(input, tag, content),
            Repr::Untagged => Form::Untagged(input),
            _ => Form::Json(input.original),
        }
    }
}

/// Whether the enum has type parameters.
fn generic(input: &Enum) -> bool {
    input.original.generics.type_params().next().is_some()
}

/// Whether every type parameter of the enum is named by a field whose partial form its partial form
/// holds (a parameter named elsewhere only would be unused there).
fn params_used(input: &Enum) -> bool {
    let variants = input.live();
    let fields: Vec<&Field> = all_held(&variants)
        .into_iter()
        .filter(|field| field.attrs.extract.schemars.is_none())
        .collect();
    input
        .original
        .generics
        .type_params()
        .all(|param| fields.iter().any(|field| ty::names(field.ty, &param.ident)))
}

#[cfg(test)]
mod tests {
    use super::Form;
    use crate::ast::Input;
    use crate::ctxt::Ctxt;
    use proc_macro2::TokenStream;
    use quote::quote;

    /// The name of the form `input` gets.
    fn form(input: TokenStream) -> &'static str {
        let input: syn::DeriveInput = syn::parse2(input).unwrap();
        let cx = Ctxt::new();
        let model = Input::from_syn(&cx, &input).unwrap();
        cx.check().unwrap();
        match Form::of(&model) {
            Form::Newtype(..) => "newtype",
            Form::Json(_) => "json",
            Form::Struct(_) => "struct",
            Form::TupleStruct(_) => "tuple struct",
            Form::Fieldless(_) => "fieldless",
            Form::External(_) => "external",
            Form::Internal(_, tag) => {
                assert_eq!(tag, "t");
                "internal"
            }
            Form::Adjacent(_, tag, content) => {
                assert_eq!((tag.as_str(), content.as_str()), ("t", "c"));
                "adjacent"
            }
            Form::Untagged(_) => "untagged",
        }
    }

    #[test]
    fn structs_by_their_style() {
        assert_eq!(form(quote! { struct S { a: u8 } }), "struct");
        assert_eq!(form(quote! { struct S(u8, u8); }), "tuple struct");
        assert_eq!(form(quote! { struct S(u8); }), "newtype");
        assert_eq!(
            form(quote! { struct S(u8, #[serde(skip)] u8); }),
            "tuple struct"
        );
        assert_eq!(
            form(quote! { #[serde(transparent)] struct S { a: u8, #[serde(skip)] b: u8 } }),
            "newtype"
        );
        assert_eq!(
            form(quote! { struct S(#[extract(schemars)] Foreign); }),
            "json"
        );
    }

    #[test]
    fn enums_by_their_representation() {
        assert_eq!(form(quote! { enum E { A, B } }), "fieldless");
        assert_eq!(
            form(quote! { enum E { A, #[serde(skip)] B(u8) } }),
            "fieldless"
        );
        assert_eq!(form(quote! { enum E { A, #[serde(other)] B } }), "external");
        assert_eq!(form(quote! { enum E<T> { A, B(T) } }), "external");
        assert_eq!(
            form(quote! { enum E { A, B(u8), C { x: u8 } } }),
            "external"
        );
        assert_eq!(
            form(quote! { #[serde(tag = "t")] enum E { A, B(Inner), C { x: u8 } } }),
            "internal"
        );
        assert_eq!(
            form(quote! { #[serde(tag = "t", content = "c")] enum E { A, B(u8, u8) } }),
            "adjacent"
        );
        assert_eq!(
            form(quote! { #[serde(untagged)] enum E { A, B(u8) } }),
            "untagged"
        );
    }

    #[test]
    fn what_no_form_covers_is_the_json_written_so_far() {
        assert_eq!(
            form(quote! { enum E { A, #[serde(untagged)] B(u8) } }),
            "json"
        );
        assert_eq!(
            form(
                quote! { #[serde(tag = "t", content = "c")] enum E { A, #[serde(untagged)] B(u8) } }
            ),
            "json"
        );
        assert_eq!(
            form(quote! { enum E<T> { A, #[serde(skip)] B(T) } }),
            "json"
        );
        assert_eq!(
            form(quote! { enum E<T> { A(#[extract(schemars)] T) } }),
            "json"
        );
    }
}
