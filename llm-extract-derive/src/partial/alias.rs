//! The partial forms that are another type's, as type aliases: a newtype or `#[serde(transparent)]`
//! struct's is its field's, and a type no other form covers is shown as the JSON written so far
//! (`serde_json::Value`'s partial form). Their `PartialValue` impls pass every question on.

use super::bounds::bounds;
use super::derives::doc;
use super::{name, private};
use crate::ast::{Field, Struct};
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

/// A newtype or `#[serde(transparent)]` struct is shown as its field is: its partial form is the
/// field's.
pub fn newtype(input: &Struct, inner: &Field) -> TokenStream {
    let p = private();
    let ident = &input.original.ident;
    let vis = &input.original.vis;
    let partial = name(ident);
    let ty = inner.ty;
    let doc = doc(ident, "shown as its field is: the field's partial form");
    let bounds = bounds(ident, &[inner]);
    let inner = quote_spanned!(ty.span()=> <#ty as #p::PartialValue>);
    let methods = delegated(inner.clone());
    quote! {
        #[doc = #doc]
        #[allow(clippy::box_collection, clippy::vec_box, clippy::type_complexity)]
        #vis type #partial = #inner::Partial;

        #[automatically_derived]
        impl #p::PartialField for #ident {}

        #[automatically_derived]
        impl #p::PartialValue for #ident #bounds {
            type Partial = #inner::Partial;
            #methods
        }
    }
}

/// A type shown as the JSON written so far (`serde_json::Value`'s partial form): the enums no other
/// form covers (see the module's doc). Its partial form names no type parameter,
/// so the impls bound none.
pub fn json(input: &syn::DeriveInput) -> TokenStream {
    let p = private();
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let vis = &input.vis;
    let partial = name(ident);
    let doc = doc(ident, "the JSON written so far");
    let methods = delegated(quote!(<#p::Value as #p::PartialValue>));
    quote! {
        #[doc = #doc]
        #vis type #partial = #p::Value;

        #[automatically_derived]
        impl #impl_generics #p::PartialField for #ident #ty_generics #where_clause {}

        #[automatically_derived]
        impl #impl_generics #p::PartialValue for #ident #ty_generics #where_clause {
            type Partial = #p::Value;
            #methods
        }
    }
}

/// Every method of `PartialValue`, each passing the question on to `target` (`<X as PartialValue>`),
/// whose partial form is the same type.
fn delegated(target: TokenStream) -> TokenStream {
    let p = private();
    quote! {
        #[inline]
        fn shown(__node: #p::Node<'_>) -> bool {
            #target::shown(__node)
        }

        #[inline]
        fn fits(__node: #p::Node<'_>) -> bool {
            #target::fits(__node)
        }

        #[inline]
        fn keys() -> &'static [&'static str] {
            #target::keys()
        }

        #[inline]
        fn reads(__key: &str) -> bool {
            #target::reads(__key)
        }

        #[inline]
        fn build(__node: #p::Node<'_>) -> ::core::option::Option<Self::Partial> {
            #target::build(__node)
        }

        #[inline]
        fn update(__partial: &mut Self::Partial, __node: #p::Node<'_>, __since: u64) -> bool {
            #target::update(__partial, __node, __since)
        }

        #[inline]
        fn update_below(
            __partial: &mut Self::Partial,
            __node: #p::Node<'_>,
            __since: u64,
            __depth: usize,
        ) -> bool {
            #target::update_below(__partial, __node, __since, __depth)
        }

        #[inline]
        fn growing<'__p, '__n>(
            __partial: &'__p mut Self::Partial,
            __node: #p::Node<'__n>,
            __path: &mut ::std::vec::Vec<u32>,
        ) -> ::core::option::Option<(&'__p mut ::std::string::String, &'__n str)> {
            #target::growing(__partial, __node, __path)
        }

        #[inline]
        fn grow_at<'__p>(
            __partial: &'__p mut Self::Partial,
            __path: &[u32],
        ) -> ::core::option::Option<&'__p mut ::std::string::String> {
            #target::grow_at(__partial, __path)
        }

        #[inline]
        fn update_at(
            __partial: &mut Self::Partial,
            __route: &[u32],
            __node: #p::Node<'_>,
            __since: u64,
            __depth: usize,
        ) -> ::core::option::Option<bool> {
            #target::update_at(__partial, __route, __node, __since, __depth)
        }

        #[inline]
        fn growing_at<'__p, '__n>(
            __partial: &'__p mut Self::Partial,
            __path: &mut ::std::vec::Vec<u32>,
            __next: usize,
            __node: #p::Node<'__n>,
        ) -> ::core::option::Option<(&'__p mut ::std::string::String, &'__n str)> {
            #target::growing_at(__partial, __path, __next, __node)
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::partial::testing::{expanded, has, item_names, methods, normalized, STRUCT_METHODS};
    use quote::quote;

    #[test]
    fn a_newtype_is_shown_as_its_field() {
        let file = expanded(quote! { struct Email(String); });
        assert_eq!(
            item_names(&file),
            [
                "type EmailPartial",
                "impl PartialField for Email",
                "impl PartialValue for Email"
            ]
        );
        assert!(has(
            &file,
            quote! { type EmailPartial = <String as ::llm_extract::__private::PartialValue>::Partial; }
        ));
        // Every method passes the question on, `keys` and `reads` too (an untagged enum asks).
        let mut all = STRUCT_METHODS.to_vec();
        all.retain(|m| *m != "build" && *m != "update");
        all.splice(4..4, ["build", "update"]);
        assert_eq!(methods(&file, "PartialValue"), all);
        let text = normalized(&file);
        let passed = text
            .matches("< String as :: llm_extract :: __private :: PartialValue > ::")
            .count();
        // The alias, `type Partial` and one call per method.
        assert_eq!(passed, 2 + all.len(), "{text}");
    }

    #[test]
    fn a_transparent_struct_is_shown_as_its_live_field() {
        let file = expanded(quote! {
            #[serde(transparent)]
            struct Id { value: Vec<u64>, #[serde(skip)] cache: u8 }
        });
        assert!(has(
            &file,
            quote! { type IdPartial = <Vec<u64> as ::llm_extract::__private::PartialValue>::Partial; }
        ));
        assert!(has(
            &file,
            quote! { for<'__p> Vec<u64> : ::llm_extract::__private::PartialField }
        ));
        assert!(!has(&file, quote! { cache }));
    }

    #[test]
    fn a_schemars_newtype_is_the_json_written_so_far() {
        let file = expanded(quote! { struct When(#[extract(schemars)] chrono::NaiveDate); });
        assert!(has(
            &file,
            quote! { type WhenPartial = ::llm_extract::__private::Value; }
        ));
        assert!(has(
            &file,
            quote! { <::llm_extract::__private::Value as ::llm_extract::__private::PartialValue>::build(__node) }
        ));
        assert!(!has(&file, quote! { NaiveDate }));
    }
}
