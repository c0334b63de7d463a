//! The variants of a tagged enum's partial form (externally, internally and adjacently tagged):
//! their declarations under their JSON names, the match arms and bindings that reach their fields,
//! and `shown` and `build` of an enum known once its tag is read.

use super::fields::{bindings, declarations, field_type, update_loop};
use super::model_view::{live, newtype, variant_fields};
use super::private;
use super::tuple;
use crate::ast::{Field, Style, Variant};
use proc_macro2::TokenStream;
use quote::quote;
use syn::Ident;

/// One match arm per variant of a tagged enum's partial form: its fields bound to `__f0`, `__f1`, ...,
/// and `body` of its fields, each field's slot the binding the closure it is given names.
pub fn variant_arms(
    partial: &Ident,
    variants: &[&Variant],
    body: impl Fn(&[&Field], &dyn Fn(usize, &Field) -> TokenStream) -> TokenStream,
) -> Vec<TokenStream> {
    variants
        .iter()
        .map(|variant| {
            let fields = variant_fields(variant);
            let (pattern, bindings) = struct_pattern(partial, variant);
            let slot = |i: usize, _: &Field| {
                let binding = &bindings[i];
                quote!(#binding)
            };
            let body = body(&fields, &slot);
            quote! {
                #pattern => { #body }
            }
        })
        .collect()
}

/// The pattern (an expression too) of a struct variant's partial form whose fields are its
/// bindings (see `fields::bindings`), and those bindings.
pub fn struct_pattern(partial: &Ident, variant: &Variant) -> (TokenStream, Vec<Ident>) {
    let variant_ident = &variant.original.ident;
    let fields = variant_fields(variant);
    let bindings = bindings(fields.len());
    let idents = fields.iter().map(|f| &f.original.ident);
    let pattern = quote!(#partial::#variant_ident { #(#idents: #bindings,)* });
    (pattern, bindings)
}

/// The pattern of a struct variant's partial form (see [`struct_pattern`]), its bindings, and the
/// statements that bring them up to date with the object `__node`, setting `__changed`: each binding
/// a `&mut Option` into the partial form, or (with `owned`) an `Option` of its own.
pub fn struct_update(
    partial: &Ident,
    variant: &Variant,
    owned: bool,
) -> (TokenStream, Vec<Ident>, TokenStream) {
    let (pattern, bindings) = struct_pattern(partial, variant);
    let update = update_loop(&variant_fields(variant), |i, _| {
        let binding = &bindings[i];
        if owned {
            quote!(&mut #binding)
        } else {
            quote!(#binding)
        }
    });
    (pattern, bindings, update)
}

/// `shown` and `build` of an enum whose partial form is known once its tag `tag` is read whole and
/// names a variant (any other string names the `#[serde(other)]` variant, if there is one): shown as
/// `shown` says of that variant, built from its `empty` partial form brought up to date.
pub fn known_by_tag(
    tag: &str,
    variants: &[&Variant],
    shown: impl Fn(&Variant) -> TokenStream,
    empty: impl Fn(&Variant) -> TokenStream,
) -> TokenStream {
    let p = private();
    let named: Vec<&Variant> = variants.iter().copied().filter(|v| !v.other()).collect();
    let shown_arms = named.iter().map(|variant| {
        let names = tag_names(variant);
        let shown = shown(variant);
        quote!(::core::option::Option::Some(#names) => #shown,)
    });
    let empty_arms = named.iter().map(|variant| {
        let names = tag_names(variant);
        let empty = empty(variant);
        quote!(#names => #empty,)
    });
    let (other_shown, other_empty) = match variants.iter().find(|variant| variant.other()) {
        Some(variant) => (quote!(true), empty(variant)),
        None => (quote!(false), quote!(return ::core::option::Option::None)),
    };
    quote! {
        fn shown(__node: #p::Node<'_>) -> bool {
            match #p::complete_str(__node.get(#tag)) {
                #(#shown_arms)*
                ::core::option::Option::Some(_) => #other_shown,
                ::core::option::Option::None => false,
            }
        }

        #[allow(unreachable_code)]
        fn build(__node: #p::Node<'_>) -> ::core::option::Option<Self::Partial> {
            if !<Self as #p::PartialValue>::shown(__node) {
                return ::core::option::Option::None;
            }
            let mut __partial = match #p::complete_str(__node.get(#tag))? {
                #(#empty_arms)*
                _ => #other_empty,
            };
            <Self as #p::PartialValue>::update(&mut __partial, __node, 0);
            ::core::option::Option::Some(__partial)
        }
    }
}

/// The declaration of a variant of a tagged enum's partial form, under its JSON name: a unit variant
/// stays one, a newtype variant holds its field's partial form, a struct variant its fields each an
/// `Option`, a tuple variant its positions each an `Option`.
pub fn tagged_declaration(variant: &Variant) -> TokenStream {
    let name = &variant.name;
    let variant_ident = &variant.original.ident;
    let doc = format!("`{name}`.");
    let body = variant_body(variant, field_type);
    quote! {
        #[doc = #doc]
        #[serde(rename = #name)]
        #variant_ident #body
    }
}

/// What follows a variant's name in its partial form's declaration: nothing for a unit variant,
/// `(ty)` for a newtype variant (`ty` of its field), a struct variant's fields each an `Option`, a
/// tuple variant's positions each an `Option`.
pub fn variant_body(variant: &Variant, ty: impl Fn(&Field) -> TokenStream) -> TokenStream {
    match (&variant.style, newtype(variant)) {
        (Style::Unit, _) => TokenStream::new(),
        (_, Some(field)) => {
            let ty = ty(field);
            quote!((#ty))
        }
        (Style::Tuple(_), None) => {
            let positions = tuple::declarations(&live(&variant.fields), false, true);
            quote!((#(#positions,)*))
        }
        (Style::Named, _) => {
            let fields = declarations(&live(&variant.fields), false);
            quote!({ #(#fields,)* })
        }
    }
}

/// A variant's JSON name and aliases (its tag values), as a match pattern.
pub fn tag_names(variant: &Variant) -> TokenStream {
    let name = &variant.name;
    let aliases = variant.aliases();
    quote!(#name #(| #aliases)*)
}

/// A variant's JSON name and aliases, as a slice of `&str`.
pub fn tag_names_list(variant: &Variant) -> TokenStream {
    let name = &variant.name;
    let aliases = variant.aliases();
    quote!(&[#name #(, #aliases)*])
}
