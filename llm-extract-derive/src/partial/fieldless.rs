//! The partial form of a fieldless enum (externally tagged, unit variants only, none the
//! `#[serde(other)]` one): a copy of it, shown once its string is complete.

use super::derives::{attributes, doc};
use super::{name, private};
use crate::ast::{Enum, Variant};
use proc_macro2::TokenStream;
use quote::quote;

/// A fieldless enum: a copy of it (`Copy` and `Eq` too), a variant shown once its name is
/// written whole.
pub fn expand(input: &Enum) -> TokenStream {
    let p = private();
    let ident = &input.original.ident;
    let vis = &input.original.vis;
    let partial = name(ident);
    let doc = doc(ident, "shown once its name is written whole");
    let variants: Vec<&Variant> = input.variants.iter().filter(|v| !v.skipped()).collect();
    let declarations = variants.iter().map(|variant| {
        let name = &variant.name;
        let variant_ident = &variant.original.ident;
        let doc = format!("`{name}`.");
        quote!(#[doc = #doc] #[serde(rename = #name)] #variant_ident)
    });
    let arms = variants.iter().map(|variant| {
        let name = &variant.name;
        let variant_ident = &variant.original.ident;
        quote!(#name => ::core::option::Option::Some(#partial::#variant_ident),)
    });
    let attributes = attributes(&doc, quote!(::core::marker::Copy, ::core::cmp::Eq));
    quote! {
        #attributes
        #vis enum #partial {
            #(#declarations,)*
        }

        #[automatically_derived]
        impl #p::PartialField for #ident {}

        #[automatically_derived]
        impl #p::PartialValue for #ident {
            type Partial = #partial;

            fn shown(__node: #p::Node<'_>) -> bool {
                <Self as #p::PartialValue>::build(__node).is_some()
            }

            fn build(__node: #p::Node<'_>) -> ::core::option::Option<#partial> {
                match #p::complete_str(::core::option::Option::Some(__node))? {
                    #(#arms)*
                    _ => ::core::option::Option::None,
                }
            }

            fn update(_: &mut #partial, _: #p::Node<'_>, _: u64) -> bool {
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::partial::testing::{expanded, normalized};
    use quote::quote;

    #[test]
    fn a_fieldless_enum_is_copied_under_its_json_names() {
        let file = expanded(quote! {
            #[serde(rename_all = "lowercase")]
            enum Mood { Up, #[serde(rename = "DOWN", alias = "down")] Down, #[serde(skip)] Gone }
        });
        let expected = quote! {
            #[doc = "The partial form of [`Mood`] while its JSON streams (shown once its name is written whole); see `llm_extract::parse::PartialValue`."]
            #[derive(
                ::core::fmt::Debug,
                ::core::clone::Clone,
                ::core::cmp::PartialEq,
                ::llm_extract::__private::Serialize,
                ::core::marker::Copy,
                ::core::cmp::Eq
            )]
            #[serde(crate = "::llm_extract::__private::serde")]
            #[allow(clippy::box_collection, clippy::vec_box, clippy::type_complexity)]
            enum MoodPartial {
                #[doc = "`up`."]
                #[serde(rename = "up")]
                Up,
                #[doc = "`DOWN`."]
                #[serde(rename = "DOWN")]
                Down,
            }

            #[automatically_derived]
            impl ::llm_extract::__private::PartialField for Mood {}

            #[automatically_derived]
            impl ::llm_extract::__private::PartialValue for Mood {
                type Partial = MoodPartial;

                fn shown(__node: ::llm_extract::__private::Node<'_>) -> bool {
                    <Self as ::llm_extract::__private::PartialValue>::build(__node).is_some()
                }

                fn build(__node: ::llm_extract::__private::Node<'_>) -> ::core::option::Option<MoodPartial> {
                    match ::llm_extract::__private::complete_str(::core::option::Option::Some(__node))? {
                        "up" => ::core::option::Option::Some(MoodPartial::Up),
                        "DOWN" => ::core::option::Option::Some(MoodPartial::Down),
                        _ => ::core::option::Option::None,
                    }
                }

                fn update(_: &mut MoodPartial, _: ::llm_extract::__private::Node<'_>, _: u64) -> bool {
                    false
                }
            }
        };
        let expected: syn::File = syn::parse2(expected).unwrap();
        assert_eq!(normalized(&file), normalized(&expected));
    }
}
