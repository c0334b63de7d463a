//! The partial form of an adjacently tagged enum (`#[serde(tag = "t", content = "c")]`): an enum of
//! the same variants, serialized with the same tag and content keys, known once the tag is read whole
//! and names a variant (any other string names the `#[serde(other)]` variant, if there is one). The
//! content, written before the tag or after it, then grows as the variant's partial form: a newtype
//! variant's as its field's, a struct variant's field by field, a tuple variant's position by
//! position. A struct variant with `#[extract(stream = "required")]` fields waits for them too.

use super::{
    doc, frame, live, name, newtype, private, required_shown, sync_expr, tagged_declaration, tuple,
    update_loop,
};
use crate::ast::{Enum, Style, Variant};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::Ident;

/// The partial form of the adjacently tagged enum `input` (tag key `tag`, content key `content`) and
/// its impls.
pub fn expand(input: &Enum, tag: &str, content: &str) -> TokenStream {
    let p = private();
    let ident = &input.original.ident;
    let partial = name(ident);
    let doc = doc(
        ident,
        "known once its tag is read, its content growing as the variant's partial form",
    );
    let variants = input.live();
    let other = variants.iter().find(|variant| variant.other());
    let named: Vec<&&Variant> = variants.iter().filter(|v| !v.other()).collect();
    let names_of = |variant: &Variant| {
        let name = &variant.name;
        let aliases = variant.aliases();
        quote!(#name #(| #aliases)*)
    };
    let shown_arms = named.iter().map(|variant| {
        let names = names_of(variant);
        let fields = live(&variant.fields);
        let waits =
            matches!(variant.style, Style::Named) && fields.iter().any(|f| super::required(f));
        let shown = if waits {
            let required = required_shown(&fields);
            quote!(__node.get(#content).is_some_and(|__node| __node.is_object() && #required))
        } else {
            quote!(true)
        };
        quote!(::core::option::Option::Some(#names) => #shown,)
    });
    let empty = |variant: &Variant| {
        let variant_ident = &variant.original.ident;
        match variant.style {
            Style::Unit => quote!(#partial::#variant_ident),
            Style::Tuple(_) if newtype(variant).is_none() => tuple::empty(&partial, variant),
            Style::Tuple(_) => quote!(#partial::#variant_ident(::core::option::Option::None)),
            Style::Named => {
                let idents = live(&variant.fields)
                    .into_iter()
                    .map(|field| &field.original.ident);
                quote!(#partial::#variant_ident { #(#idents: ::core::option::Option::None,)* })
            }
        }
    };
    let empty_arms = named.iter().map(|variant| {
        let names = names_of(variant);
        let empty = empty(variant);
        quote!(#names => #empty,)
    });
    let (other_shown, other_empty) = match other {
        Some(variant) => {
            let empty = empty(variant);
            (quote!(true), quote!(#empty))
        }
        None => (quote!(false), quote!(return ::core::option::Option::None)),
    };
    let update_arms = variants.iter().map(|variant| update_arm(&partial, variant));
    let methods = quote! {
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

        #[allow(unused_variables)]
        fn update(__partial: &mut Self::Partial, __node: #p::Node<'_>, __since: u64) -> bool {
            let ::core::option::Option::Some(__value) = __node.get(#content) else {
                return false;
            };
            match __partial {
                #(#update_arms)*
            }
        }
    };
    frame::items(
        input,
        frame::Form {
            doc: &doc,
            serde: quote!(#[serde(tag = #tag, content = #content)]),
            declarations: variants.iter().map(|v| tagged_declaration(v)).collect(),
            shapes: variants.iter().map(|v| frame::Shape::of(v)).collect(),
            fields: frame::all_held(&variants),
            methods,
        },
    )
}

/// The arm of `update` that brings `variant`'s partial form up to date with the content `__value`.
fn update_arm(partial: &Ident, variant: &Variant) -> TokenStream {
    let variant_ident = &variant.original.ident;
    match (&variant.style, newtype(variant)) {
        (Style::Unit, _) => quote!(#partial::#variant_ident => false,),
        (_, Some(field)) => {
            let sync = sync_expr(field, quote!(__slot));
            quote!(#partial::#variant_ident(__slot) => #sync,)
        }
        (Style::Tuple(_), None) => {
            let (pattern, update) = tuple::variant_update(partial, variant);
            let bindings = (0..live(&variant.fields).len()).map(|i| format_ident!("__f{i}"));
            // Content written again starts over, as a struct variant's does.
            quote! {
                #pattern => {
                    let __node = __value;
                    let mut __cleared = false;
                    if __node.created() > __since {
                        #(__cleared |= #bindings.take().is_some();)*
                    }
                    let __grew = #update;
                    __grew || __cleared
                }
            }
        }
        (Style::Named, _) => {
            let fields = live(&variant.fields);
            let bindings: Vec<Ident> = (0..fields.len()).map(|i| format_ident!("__f{i}")).collect();
            let idents = fields.iter().map(|f| &f.original.ident);
            let update = update_loop(&fields, |i, _| {
                let binding = &bindings[i];
                quote!(#binding)
            });
            // Content written again (a key repeated, which serde reads as the last) starts over:
            // every member of the new one has changed since, the fields it lacks are cleared.
            quote! {
                #partial::#variant_ident { #(#idents: #bindings,)* } => {
                    if !__value.is_object() {
                        return false;
                    }
                    let __node = __value;
                    let mut __changed = false;
                    if __node.created() > __since {
                        #(__changed |= #bindings.take().is_some();)*
                    }
                    #update
                    __changed
                }
            }
        }
    }
}
