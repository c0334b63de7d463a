//! The partial form of a derived type, shown while its JSON streams: for `T`, a type `TPartial`
//! (every field an `Option` of its type's partial form) and `impl PartialValue for T`, which builds and
//! updates it from the runtime's partial tree (`llm_extract::parse::PartialValue` documents when each
//! kind of value is shown).
//!
//! - struct `T` -> struct `TPartial`, deriving `Debug, Clone, Default, PartialEq, Serialize`;
//! - internally tagged enum of struct, unit and newtype variants -> enum `TPartial` with the same tag
//!   and variants, each field optional, a newtype variant holding its content's partial form (read
//!   from the same object, `None` until shown and serialized as no member then), known once the tag
//!   is read (any other string names the `#[serde(other)]` variant; no `Default`, since no variant is
//!   a default);
//! - fieldless enum -> a copy of it (`Copy` too), shown once its string is complete;
//! - newtype or `#[serde(transparent)]` struct -> its field's partial form (a type alias);
//! - externally tagged enum with data, or with a `#[serde(other)]` variant -> an enum of the same
//!   variants, known once the name or the one key is read (any other name the `other` variant): a
//!   newtype variant holds its field's partial form, a struct variant its fields each an `Option`, a
//!   tuple variant its positions each an `Option` ([`tuple`]);
//! - adjacently tagged enum -> an enum of the same variants with the same tag and content keys, known
//!   once the tag is read (any other string names the `#[serde(other)]` variant), its content held
//!   as an externally tagged variant's data is ([`adjacent`]);
//! - untagged enum -> an enum of the same variants, untagged too, showing the first variant in
//!   declaration order that the JSON written so far fits ([`untagged`] says when JSON fits);
//! - generic enum -> as the same enum without type parameters, the partial form taking them, bounded
//!   as a generic struct's ([`enums`]);
//! - tuple struct -> a tuple struct of its positions, each an `Option` of its field's partial form,
//!   serialized as an array with `null` at the positions not shown yet ([`tuple`]);
//! - any other enum (tagged with an `#[serde(untagged)]` variant, internally tagged with a tuple
//!   variant, generic with a type parameter only skipped fields name) -> `serde_json::Value`, the JSON
//!   written so far (a type alias).
//!
//! It serializes with the JSON names serde reads, fields not yet shown left out, so a UI can take it as
//! JSON. Generated locals start with `__` so field names cannot shadow them.

//!
//! The code is laid out as the rest of the crate is (read, checked, emitted): `model_view.rs` reads the
//! model (live fields, flattened ones, newtype variants), `form.rs` decides which of the forms above
//! a type gets, and one file per form emits it (`alias.rs`: newtypes and the JSON written so far,
//! `structs.rs`, `tuple.rs`, `fieldless.rs`, `external.rs`, `internal.rs`, `adjacent.rs`,
//! `untagged.rs`), from the pieces they share: `fields.rs` (what each field's slot is and how it is
//! synced), `walk.rs` (the walks to a growing string or a changed level), `variant.rs` (the variants
//! of tagged enums), `enums.rs` (an enum's declaration and impls), `derives.rs` and `bounds.rs`
//! (the attributes, hand-written derives and bounds of a partial type).

mod adjacent;
mod alias;
mod bounds;
mod derives;
mod enums;
mod external;
mod fieldless;
mod fields;
mod form;
mod internal;
mod model_view;
mod structs;
#[cfg(test)]
mod testing;
mod tuple;
mod untagged;
mod variant;
mod walk;

use crate::ast::Input;
use form::Form;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::ext::IdentExt;
use syn::Ident;

/// The one path generated code reaches the runtime through.
fn private() -> TokenStream {
    quote!(::llm_extract::__private)
}

/// The name of `ident`'s partial form.
pub fn name(ident: &Ident) -> Ident {
    format_ident!("{}Partial", ident.unraw())
}

/// The partial type and its `PartialValue` impl, in the form [`Form::of`] chooses.
pub fn expand(input: &Input) -> TokenStream {
    match Form::of(input) {
        Form::Newtype(input, inner) => alias::newtype(input, inner),
        Form::Json(input) => alias::json(input),
        Form::Struct(input) => structs::expand(input),
        Form::TupleStruct(input) => tuple::expand_struct(input),
        Form::Fieldless(input) => fieldless::expand(input),
        Form::External(input) => external::expand(input),
        Form::Internal(input, tag) => internal::expand(input, &tag),
        Form::Adjacent(input, tag, content) => adjacent::expand(input, &tag, &content),
        Form::Untagged(input) => untagged::expand(input),
    }
}

/// What the fallback writes when the input has errors: an impl that cannot run, so uses of the
/// partial form do not add errors of their own.
pub fn fallback(input: &syn::DeriveInput) -> TokenStream {
    let p = private();
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    quote! {
        #[automatically_derived]
        impl #impl_generics #p::PartialField for #ident #ty_generics #where_clause {}

        #[automatically_derived]
        impl #impl_generics #p::PartialValue for #ident #ty_generics #where_clause {
            type Partial = ();

            fn shown(_: #p::Node<'_>) -> bool {
                ::core::unreachable!()
            }

            fn build(_: #p::Node<'_>) -> ::core::option::Option<()> {
                ::core::unreachable!()
            }

            fn update(_: &mut (), _: #p::Node<'_>, _: u64) -> bool {
                ::core::unreachable!()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::{expanded, item_names, normalized};
    use quote::quote;

    #[test]
    fn the_fallback_names_no_partial_type_and_cannot_run() {
        let input: syn::DeriveInput = syn::parse_quote! { struct Unit; };
        let file: syn::File = syn::parse2(super::fallback(&input)).unwrap();
        assert_eq!(
            item_names(&file),
            ["impl PartialField for Unit", "impl PartialValue for Unit"]
        );
        let text = normalized(&file);
        assert!(
            text.contains(
                &quote!(
                    type Partial = ();
                )
                .to_string()
            ),
            "{text}"
        );
        assert_eq!(text.matches("unreachable").count(), 3, "{text}");
    }

    #[test]
    fn every_form_is_one_type_and_two_impls_at_least() {
        for input in [
            quote! { struct Point { x: f64 } },
            quote! { struct Pair(u8, String); },
            quote! { struct Email(String); },
            quote! { enum Mood { Up, Down } },
            quote! { enum Shape { Dot, Circle(f64) } },
            quote! { #[serde(tag = "t")] enum Shape { Dot, Circle { r: f64 } } },
            quote! { #[serde(tag = "t", content = "c")] enum Shape { Dot, Circle(f64) } },
            quote! { #[serde(untagged)] enum Shape { Dot, Circle(f64) } },
        ] {
            let names = item_names(&expanded(input.clone()));
            let partial = names
                .iter()
                .filter(|n| !n.starts_with("impl ") && n.ends_with("Partial"))
                .count();
            assert_eq!(partial, 1, "{input}: {names:?}");
            assert!(
                names
                    .iter()
                    .any(|n| n.starts_with("impl PartialField for ")),
                "{input}"
            );
            assert!(
                names
                    .iter()
                    .any(|n| n.starts_with("impl PartialValue for ")),
                "{input}"
            );
        }
    }
}
