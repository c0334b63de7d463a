//! What a field of a partial struct or variant is, and how its slot follows the JSON: its
//! declaration (an `Option` of its type's partial form, renamed to its JSON name), the expressions
//! that say whether it is shown and sync it with its node, and the loop over an object's changed
//! members that syncs each into its field (a flattened field from the whole object).

use super::model_view::{done, flattened, keyed, keys, required};
use super::private;
use crate::ast::Field;
use crate::ty;
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::Ident;

/// A field's JSON name and aliases, as a match pattern.
pub fn names(field: &Field) -> TokenStream {
    let name = &field.name;
    let aliases = field.attrs.serde.aliases.iter();
    quote!(#name #(| #aliases)*)
}

/// A field's JSON name and aliases, as a slice of `&str`.
pub fn names_list(field: &Field) -> TokenStream {
    let name = &field.name;
    let aliases = field.attrs.serde.aliases.iter();
    quote!(&[#name #(, #aliases)*])
}

/// The type of a field in the partial form.
pub fn field_type(field: &Field) -> TokenStream {
    let ty = partial_type(field);
    quote!(::core::option::Option<#ty>)
}

/// The partial form of a field's type (a schemars field's is the JSON written so far).
pub fn partial_type(field: &Field) -> TokenStream {
    let p = private();
    let ty = field.ty;
    if field.attrs.extract.schemars.is_some() {
        quote!(#p::Value)
    } else {
        quote_spanned!(ty.span()=> <#ty as #p::PartialValue>::Partial)
    }
}

/// Whether the field, found at `node` (an `Option<Node>`), would be shown.
pub fn shown_expr(field: &Field, node: TokenStream) -> TokenStream {
    let p = private();
    let ty = field.ty;
    let done = done(field);
    if field.attrs.extract.schemars.is_some() {
        quote!(#p::json_shown(#node, #done))
    } else {
        quote_spanned!(ty.span()=> #p::field_shown::<#ty>(#node, #done))
    }
}

/// Syncs `slot` (a `&mut Option<_>`) with the field's node `__value`.
pub fn sync_expr(field: &Field, slot: TokenStream) -> TokenStream {
    let p = private();
    let ty = field.ty;
    let done = done(field);
    if field.attrs.extract.schemars.is_some() {
        quote!(#p::sync_json(#slot, __value, __since, #done))
    } else {
        quote_spanned!(ty.span()=> #p::sync_field::<#ty>(#slot, __value, __since, #done))
    }
}

/// The fields of a partial struct or variant: `pub` or not as the original.
pub fn declarations(fields: &[&Field], with_vis: bool) -> Vec<TokenStream> {
    fields
        .iter()
        .map(|field| {
            let ident = &field.original.ident;
            let vis = with_vis.then_some(&field.original.vis);
            let ty = field_type(field);
            let name = &field.name;
            if flattened(field) {
                return quote! {
                    #[doc = "The flattened members, once one is shown."]
                    #[serde(flatten)]
                    #vis #ident: #ty
                };
            }
            let doc = format!("`{name}`, once it is shown.");
            quote! {
                #[doc = #doc]
                #[serde(rename = #name, skip_serializing_if = "::core::option::Option::is_none")]
                #vis #ident: #ty
            }
        })
        .collect()
}

/// `true` when every required field is shown (`__node` is the object).
pub fn required_shown(fields: &[&Field]) -> TokenStream {
    let p = private();
    let checks = fields.iter().filter(|f| required(f)).map(|field| {
        let names = names_list(field);
        shown_expr(field, quote!(#p::member(__node, #names)))
    });
    quote!(true #(&& #checks)*)
}

/// `true` when the object `__node` holds every field serde needs to read it (each not an `Option`,
/// without `#[serde(default)]`, nor every field defaulted by the container's `all_default`); a
/// flattened field's own fields are not looked for.
pub fn needed_present(fields: &[&Field], all_default: bool) -> TokenStream {
    let p = private();
    let checks = keyed(fields)
        .into_iter()
        .filter(|field| {
            !all_default
                && field.attrs.serde.default.is_none()
                && ty::option_inner(field.ty).is_none()
        })
        .map(|field| {
            let names = names_list(field);
            quote!(#p::member(__node, #names).is_some())
        });
    quote!((true #(&& #checks)*))
}

/// Whether an object of these fields reads `key` (an `&str` expression): one of their names or
/// aliases, or a key a flattened field's type reads.
pub fn reads(fields: &[&Field], key: TokenStream) -> TokenStream {
    let p = private();
    let names = keys(fields);
    let flattened = fields.iter().filter(|field| flattened(field)).map(|field| {
        let ty = field.ty;
        if field.attrs.extract.schemars.is_some() {
            quote!(<#p::Value as #p::PartialValue>::reads(#key))
        } else {
            quote_spanned!(ty.span()=> <#ty as #p::PartialValue>::reads(#key))
        }
    });
    let listed = if names.is_empty() {
        quote!(false)
    } else {
        quote!(::core::matches!(#key, #(#names)|*))
    };
    quote!((#listed #(|| #flattened)*))
}

/// For each field, whether it is shown in the object `__node`: field by field, each looked up by
/// name (in constant time), never a scan of the members written, which a flood of unknown keys would
/// make quadratic over the chunks.
pub fn any_shown(fields: &[&Field]) -> Vec<TokenStream> {
    let p = private();
    fields
        .iter()
        .map(|field| {
            if flattened(field) {
                return shown_expr(field, quote!(::core::option::Option::Some(__node)));
            }
            let names = names_list(field);
            shown_expr(field, quote!(#p::member(__node, #names)))
        })
        .collect()
}

/// The loop over the members changed since `__since`, syncing each into its field (bound by `slot`);
/// then each flattened field, from the whole object (its members are the object's).
pub fn update_loop(fields: &[&Field], slot: impl Fn(usize, &Field) -> TokenStream) -> TokenStream {
    let arms = fields
        .iter()
        .enumerate()
        .filter(|(_, field)| !flattened(field))
        .map(|(i, field)| {
            let names = names(field);
            let sync = sync_expr(field, slot(i, field));
            quote!(#names => #sync,)
        });
    let p = private();
    // serde gives a flattened map the keys no field reads: its partial form leaves them out too.
    let own: Vec<&String> = keyed(fields).iter().map(|field| &field.name).collect();
    let aliases: Vec<String> = keyed(fields)
        .iter()
        .flat_map(|field| field.attrs.serde.aliases.iter().map(syn::LitStr::value))
        .collect();
    let flattened = fields
        .iter()
        .enumerate()
        .filter(|(_, field)| flattened(field))
        .map(|(i, field)| {
            let sync = sync_expr(field, slot(i, field));
            let own_keys = (ty::kind(field.ty) == ty::Kind::Map).then(|| {
                let slot = slot(i, field);
                quote! {
                    if let ::core::option::Option::Some(__map) = (#slot).as_mut() {
                        #p::without_keys(__map, &[#(#own,)* #(#aliases,)*]);
                    }
                }
            });
            quote! {{
                let __value = __node;
                __changed |= #sync;
                #own_keys
            }}
        });
    quote! {
        for (__key, __value) in __node.changed_entries(__since) {
            __changed |= match __key {
                #(#arms)*
                _ => false,
            };
        }
        #(#flattened)*
    }
}

/// The bindings of a variant's fields in a match: `__f0`, `__f1`, ...
pub fn bindings(count: usize) -> Vec<Ident> {
    (0..count).map(|i| format_ident!("__f{i}")).collect()
}
