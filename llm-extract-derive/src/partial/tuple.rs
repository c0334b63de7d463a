//! The positions of a tuple struct's or a tuple variant's partial form: one per live field, in order,
//! each an `Option` of its field's partial form (`None` until its item is shown), read from the items
//! of the JSON array as a struct's fields are from an object's members (a skipped field has no item,
//! so position `i` is the array's item `i`). Each position is synced, descended into and walked as a
//! struct's field is (`fields.rs`, `walk.rs`), its index standing for the key.
//!
//! The partial form is a tuple struct (or tuple variant) of these `Option`s, so it serializes as an
//! array of the same length as the value's, `null` at each position not shown yet.

use super::derives::{attributes, hand_derives, params_marker, HandBodies};
use super::fields::{field_type, shown_expr, sync_expr};

use super::fields::bindings;
use super::model_view::{live, required};
use super::structs::{value_impls, Head, ValueBody};
use super::walk::index;
use super::walk::At;
use crate::ast::{Field, Struct, Variant};
use proc_macro2::TokenStream;
use quote::quote;
use syn::Ident;

/// The positions' declarations: each `pub` or not as the original field (with `with_vis`). A lone
/// position (the other fields skipped; `alone`) is serialized as an array of one item, as serde
/// writes the value, not as a newtype's bare item.
pub fn declarations(fields: &[&Field], with_vis: bool, alone: bool) -> Vec<TokenStream> {
    let serialize = (alone && fields.len() == 1)
        .then(|| quote!(#[serde(serialize_with = "::llm_extract::__private::one_item")]));
    fields
        .iter()
        .map(|field| {
            let vis = with_vis.then_some(&field.original.vis);
            let ty = field_type(field);
            quote!(#serialize #vis #ty)
        })
        .collect()
}

/// `true` when `__node` is an array whose `#[extract(stream = "required")]` positions are all shown:
/// a tuple is shown as soon as its array begins, as a list is.
pub fn shown(fields: &[&Field]) -> TokenStream {
    let checks = fields
        .iter()
        .enumerate()
        .filter(|(_, field)| required(field))
        .map(|(i, field)| {
            let i = index(i);
            shown_expr(field, quote!(__node.item(#i)))
        });
    quote!((__node.is_array() #(&& #checks)*))
}

/// The loop over the items of the array `__node` changed since `__since`, syncing each into its
/// position (bound by `slot`, a `&mut Option<_>`) and setting `__changed`; items past the last
/// position are not read (serde refuses them).
pub fn update_loop(fields: &[&Field], slot: impl Fn(usize, &Field) -> TokenStream) -> TokenStream {
    let arms = fields.iter().enumerate().map(|(i, field)| {
        let sync = sync_expr(field, slot(i, field));
        let i = index(i);
        quote!(#i => #sync,)
    });
    quote! {
        for __index in __node.first_changed_item(__since)..__node.len() {
            let ::core::option::Option::Some(__value) = __node.item(__index) else {
                break;
            };
            __changed |= match __index {
                #(#arms)*
                _ => false,
            };
        }
    }
}

/// A tuple struct's partial form: a tuple struct of its positions, deriving `Debug, Clone, Default,
/// PartialEq, Serialize` (by hand for a generic one, as a generic struct's; its type parameters held
/// by a last, skipped marker position), shown once its array begins.
pub fn expand_struct(input: &Struct) -> TokenStream {
    let head = Head::of(
        input,
        "an array of its positions, each an `Option` filled in as the model writes it",
    );
    let fields = &head.fields;
    let partial = &head.ident;
    let (impl_generics, _, where_clause) = head.generics.split_for_impl();
    let vis = &input.original.vis;
    let generic = !input.original.generics.params.is_empty();
    // A generic one holds a skipped marker after its positions: serde writes it as an array already.
    let declarations = declarations(fields, true, !generic);
    let slot = |i: usize, _: &Field| {
        let i = syn::Index::from(i);
        quote!(__partial.#i)
    };
    let update = update_loop(fields, |i, field| {
        let slot = slot(i, field);
        quote!(&mut #slot)
    });
    let (attributes, derived) = if generic {
        derives(&head.doc, partial, &head.generics, fields.len())
    } else {
        let attributes = attributes(&head.doc, quote!(::core::default::Default));
        (attributes, TokenStream::new())
    };
    let marker = params_marker(input.original, TokenStream::new());
    let value_impls = value_impls(
        input.original,
        &head,
        ValueBody {
            shown: shown(fields),
            more: TokenStream::new(),
            update,
            at: At::Index,
            slot: &slot,
        },
    );
    quote! {
        #attributes
        #vis struct #partial #impl_generics (
            #(#declarations,)*
            #marker
        ) #where_clause;

        #derived

        #value_impls
    }
}

/// A generic tuple struct's partial form implements `Debug`, `Clone`, `PartialEq` and `Default` by
/// hand (see `structs.rs`) over its `count` positions and the marker after them.
fn derives(
    doc: &str,
    partial: &Ident,
    generics: &syn::Generics,
    count: usize,
) -> (TokenStream, TokenStream) {
    let indices: Vec<syn::Index> = (0..count).map(syn::Index::from).collect();
    let nones = indices.iter().map(|_| quote!(::core::option::Option::None));
    let name = partial.to_string();
    hand_derives(
        doc,
        partial,
        generics,
        &indices,
        HandBodies {
            clone: quote! {
                Self(
                    #(::core::clone::Clone::clone(&self.#indices),)*
                    ::core::marker::PhantomData,
                )
            },
            fmt: quote! {
                __f.debug_tuple(#name)
                    #(.field(&self.#indices))*
                    .finish()
            },
            default: quote!(Self(#(#nones,)* ::core::marker::PhantomData)),
        },
    )
}

/// The tuple variant's partial form with no position shown.
pub fn empty(partial: &Ident, variant: &Variant) -> TokenStream {
    let variant_ident = &variant.original.ident;
    let nones = live(&variant.fields)
        .into_iter()
        .map(|_| quote!(::core::option::Option::None));
    quote!(#partial::#variant_ident(#(#nones,)*))
}

/// The pattern that binds the tuple variant's positions (`__f0`, ...), and the block that brings them
/// up to date with the array `__node` (or with anything else, which shows nothing) and is whether
/// anything visible changed.
pub fn variant_update(partial: &Ident, variant: &Variant) -> (TokenStream, TokenStream) {
    let variant_ident = &variant.original.ident;
    let fields = live(&variant.fields);
    let bindings = bindings(fields.len());
    let update = update_loop(&fields, |i, _| {
        let binding = &bindings[i];
        quote!(#binding)
    });
    let pattern = quote!(#partial::#variant_ident(#(#bindings,)*));
    let block = quote! {{
        let mut __changed = false;
        #update
        __changed
    }};
    (pattern, block)
}

/// The tuple variant's partial form of the array `__node`, built from its items (an `Option`, `None`
/// when `__node` is not an array).
pub fn variant_build(partial: &Ident, variant: &Variant) -> TokenStream {
    let variant_ident = &variant.original.ident;
    let fields = live(&variant.fields);
    let bindings = bindings(fields.len());
    let update = update_loop(&fields, |i, _| {
        let binding = &bindings[i];
        quote!(&mut #binding)
    });
    quote! {
        if __node.is_array() {
            #(let mut #bindings = ::core::option::Option::None;)*
            let __since = 0;
            let mut __changed = false;
            #update
            ::core::option::Option::Some(#partial::#variant_ident(#(#bindings,)*))
        } else {
            ::core::option::Option::None
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::partial::testing::{
        expanded, field_names, has, item_names, methods, structure, STRUCT_METHODS,
    };
    use quote::quote;

    #[test]
    fn positions_are_options_read_from_the_array_items() {
        let file = expanded(quote! { struct Pair(u8, Vec<String>); });
        assert_eq!(
            item_names(&file),
            [
                "struct PairPartial",
                "impl PartialField for Pair",
                "impl PartialValue for Pair"
            ]
        );
        let partial = structure(&file, "PairPartial");
        assert_eq!(field_names(&partial.fields), ["0", "1"]);
        assert!(has(
            &file,
            quote! { fn shown(__node: ::llm_extract::__private::Node<'_>) -> bool { (__node.is_array()) } }
        ));
        assert!(has(
            &file,
            quote! { 1 => ::llm_extract::__private::sync_field::<Vec<String> >(&mut __partial.1, __value, __since, false), }
        ));
        // A tuple struct has no keys of its own: `fits`, `keys` and `reads` are the defaults.
        let expected: Vec<&str> = STRUCT_METHODS
            .iter()
            .copied()
            .filter(|m| !["fits", "keys", "reads"].contains(m))
            .collect();
        assert_eq!(methods(&file, "PartialValue"), expected);
    }

    #[test]
    fn a_lone_position_serializes_as_an_array_of_one() {
        let file = expanded(quote! { struct One(u8, #[serde(skip)] u8); });
        let partial = structure(&file, "OnePartial");
        assert_eq!(field_names(&partial.fields), ["0"]);
        assert!(has(
            &file,
            quote! { #[serde(serialize_with = "::llm_extract::__private::one_item")] }
        ));
    }

    #[test]
    fn a_generic_tuple_struct_holds_its_parameters_last() {
        let file = expanded(quote! { struct Wrap<T>(T, u8); });
        let partial = structure(&file, "WrapPartial");
        assert_eq!(field_names(&partial.fields), ["0", "1", "2"]);
        assert!(has(
            &file,
            quote! { #[doc(hidden)] #[serde(skip)] ::core::marker::PhantomData<fn() -> (T,)>, }
        ));
        assert!(has(
            &file,
            quote! { Self(::core::option::Option::None, ::core::option::Option::None, ::core::marker::PhantomData) }
        ));
        assert_eq!(item_names(&file).len(), 7, "{:?}", item_names(&file));
        // Not a newtype: the one-item form is for a lone position of a type without parameters.
        assert!(!has(&file, quote! { one_item }));
    }
}
