//! The partial form of an adjacently tagged enum (`#[serde(tag = "t", content = "c")]`): an enum of
//! the same variants, serialized with the same tag and content keys, known once the tag is read whole
//! and names a variant (any other string names the `#[serde(other)]` variant, if there is one). The
//! content, written before the tag or after it, then grows as the variant's partial form: a newtype
//! variant's as its field's, a struct variant's field by field, a tuple variant's position by
//! position. A struct variant with `#[extract(stream = "required")]` fields waits for them too.

use super::fields::bindings;
use super::fields::{required_shown, sync_expr};
use super::model_view::{live, newtype, required};
use super::variant::{known_by_tag, struct_update, tagged_declaration};
use super::{enums, name, private, tuple};
use crate::ast::{Enum, Style, Variant};
use proc_macro2::TokenStream;
use quote::quote;
use syn::Ident;

/// The partial form of the adjacently tagged enum `input` (tag key `tag`, content key `content`) and
/// its impls.
pub fn expand(input: &Enum, tag: &str, content: &str) -> TokenStream {
    let p = private();
    let ident = &input.original.ident;
    let partial = name(ident);
    let variants = input.live();
    let shown = |variant: &Variant| {
        let fields = live(&variant.fields);
        let waits = matches!(variant.style, Style::Named) && fields.iter().any(|f| required(f));
        if waits {
            let required = required_shown(&fields);
            quote!(__node.get(#content).is_some_and(|__node| __node.is_object() && #required))
        } else {
            quote!(true)
        }
    };
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
    let known = known_by_tag(tag, &variants, shown, empty);
    let update_arms = variants.iter().map(|variant| update_arm(&partial, variant));
    let methods = quote! {
        #known

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
    enums::items(
        input,
        enums::Form {
            what: "known once its tag is read, its content growing as the variant's partial form",
            serde: quote!(#[serde(tag = #tag, content = #content)]),
            declarations: variants.iter().map(|v| tagged_declaration(v)).collect(),
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
            let bindings = bindings(live(&variant.fields).len());
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
            let (pattern, bindings, update) = struct_update(partial, variant, false);
            // Content written again (a key repeated, which serde reads as the last) starts over:
            // every member of the new one has changed since, the fields it lacks are cleared.
            quote! {
                #pattern => {
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

#[cfg(test)]
mod tests {
    use crate::partial::testing::{
        enumeration, expanded, has, methods, normalized, serde_attrs, variants,
    };
    use quote::quote;

    #[test]
    fn known_once_its_tag_is_read_its_content_growing() {
        let file = expanded(quote! {
            #[serde(tag = "t", content = "c")]
            enum Msg { Ping, Text(String), Pair(u8, u8), Card { #[extract(stream = "required")] id: String } }
        });
        let partial = enumeration(&file, "MsgPartial");
        assert!(serde_attrs(&partial.attrs)
            .contains(&quote! { #[serde(tag = "t", content = "c")] }.to_string()));
        let shapes: Vec<usize> = variants(partial)
            .iter()
            .map(|(_, fields)| fields.len())
            .collect();
        assert_eq!(shapes, [0, 1, 2, 1]);
        assert_eq!(methods(&file, "PartialValue"), ["shown", "build", "update"]);
        assert!(has(
            &file,
            quote! { let ::core::option::Option::Some(__value) = __node.get("c") else { return false; }; }
        ));
        // Content written again starts over.
        assert!(has(
            &file,
            quote! { if __node.created() > __since { __cleared |= __f0.take().is_some(); __cleared |= __f1.take().is_some(); } }
        ));
        // A struct variant with a required field waits for it in the content.
        let waits = quote! { __node.get("c").is_some_and(|__node| __node.is_object() && true) };
        let waits = waits.to_string();
        let waits = waits.trim_end_matches(" true)");
        assert!(normalized(&file).contains(waits), "{waits}");
    }
}
