//! The attributes and derives of a partial type: its doc, the std derives and `Serialize` of a
//! partial form (serialized with the JSON names serde reads), and, for a generic one, `Serialize`
//! with its own bounds only and `Clone`, `Debug`, `PartialEq` and `Default` written by hand, so that
//! they ask nothing of the type parameters.

use super::private;
use proc_macro2::TokenStream;
use quote::{quote, ToTokens};
use syn::Ident;

/// The attributes on a partial type: its doc, its derives (`Debug`, `Clone`, `PartialEq`, `Serialize`
/// and `more`) and how it serializes.
pub fn attributes(doc: &str, more: TokenStream) -> TokenStream {
    let p = private();
    // The fields name the user's types inside `<T as PartialValue>::Partial`, which lints about the
    // types (a `Box<String>` field) would flag a second time.
    quote! {
        #[doc = #doc]
        #[derive(
            ::core::fmt::Debug,
            ::core::clone::Clone,
            ::core::cmp::PartialEq,
            #p::Serialize,
            #more
        )]
        #[serde(crate = "::llm_extract::__private::serde")]
        #[allow(clippy::box_collection, clippy::vec_box, clippy::type_complexity)]
    }
}

/// The doc of `ident`'s partial form: what it is, and `what` it shows.
pub fn doc(ident: &Ident, what: &str) -> String {
    format!(
        "The partial form of [`{ident}`] while its JSON streams ({what}); see \
         `llm_extract::parse::PartialValue`."
    )
}

/// The bodies of the hand-written `clone`, `fmt` (`Debug`, its formatter `__f`) and `default` of a
/// generic struct's or tuple struct's partial form.
pub struct HandBodies {
    /// The body of `clone`.
    pub clone: TokenStream,
    /// The body of `fmt`.
    pub fmt: TokenStream,
    /// The body of `default`.
    pub default: TokenStream,
}

/// The attributes of a generic partial form, which derives `Serialize` with its own bounds only.
pub fn generic_attributes(doc: &str) -> TokenStream {
    let p = private();
    quote! {
        #[doc = #doc]
        #[derive(#p::Serialize)]
        #[serde(crate = "::llm_extract::__private::serde", bound = "")]
        #[allow(clippy::box_collection, clippy::vec_box, clippy::type_complexity)]
    }
}

/// The attributes of a generic struct's or tuple struct's partial form (see [`generic_derives`]),
/// and its `Clone`, `Debug`, `PartialEq` (comparing `members`) and `Default` impls.
pub fn hand_derives(
    doc: &str,
    partial: &Ident,
    generics: &syn::Generics,
    members: &[impl ToTokens],
    bodies: HandBodies,
) -> (TokenStream, TokenStream) {
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let HandBodies {
        clone,
        fmt,
        default,
    } = bodies;
    let impls = quote! {
        #[automatically_derived]
        impl #impl_generics ::core::clone::Clone for #partial #ty_generics #where_clause {
            fn clone(&self) -> Self {
                #clone
            }
        }

        #[automatically_derived]
        impl #impl_generics ::core::fmt::Debug for #partial #ty_generics #where_clause {
            fn fmt(&self, __f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                #fmt
            }
        }

        #[automatically_derived]
        impl #impl_generics ::core::cmp::PartialEq for #partial #ty_generics #where_clause {
            fn eq(&self, __other: &Self) -> bool {
                true #(&& self.#members == __other.#members)*
            }
        }

        #[automatically_derived]
        impl #impl_generics ::core::default::Default for #partial #ty_generics #where_clause {
            fn default() -> Self {
                #default
            }
        }
    };
    (generic_attributes(doc), impls)
}

/// The skipped member that holds a generic partial form's type parameters (a parameter only
/// skipped fields name is used nowhere else), after `label` (`__params:`, or nothing for a
/// position), or `None` for a type without parameters.
pub fn params_marker(input: &syn::DeriveInput, label: TokenStream) -> Option<TokenStream> {
    let params = input.generics.type_params().map(|param| &param.ident);
    (!input.generics.params.is_empty()).then(|| {
        quote! {
            #[doc(hidden)]
            #[serde(skip)]
            #label ::core::marker::PhantomData<fn() -> (#(#params,)*)>,
        }
    })
}
