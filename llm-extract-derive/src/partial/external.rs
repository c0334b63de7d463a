//! The partial form of an externally tagged enum with data (serde's default representation): an enum
//! of the same variants, known once the name or the one key is read.

use super::fields::{required_shown, sync_expr};
use super::model_view::{live, newtype};
use super::variant::{struct_update, tag_names, tag_names_list, tagged_declaration};
use super::{enums, name, private, tuple};
use crate::ast::{Enum, Style, Variant};
use proc_macro2::TokenStream;
use quote::quote;
use syn::Ident;

/// An externally tagged enum with data: an enum of the same variants, known once the name (a unit
/// variant's string) or the one key (any other variant's) is read; a newtype variant holds its field's
/// partial form, a struct variant its fields each an `Option`, a tuple variant its positions each an
/// `Option`. Any other complete string names the `#[serde(other)]` variant, if there is one.
pub fn expand(input: &Enum) -> TokenStream {
    let p = private();
    let ident = &input.original.ident;
    let partial = name(ident);
    let variants = input.live();
    let declarations = variants.iter().map(|variant| tagged_declaration(variant));
    let by_name = by_name(&partial, &variants);
    let by_key = variants
        .iter()
        .filter(|v| !matches!(v.style, Style::Unit))
        .map(|variant| by_key(&partial, variant));
    let update_arms = variants.iter().map(|variant| update_arm(&partial, variant));
    let methods = quote! {
        fn shown(__node: #p::Node<'_>) -> bool {
            <Self as #p::PartialValue>::build(__node).is_some()
        }

        #[allow(unreachable_code)]
        fn build(__node: #p::Node<'_>) -> ::core::option::Option<Self::Partial> {
            if let ::core::option::Option::Some(__name) =
                #p::complete_str(::core::option::Option::Some(__node))
            {
                return #by_name;
            }
            if !__node.is_object() {
                return ::core::option::Option::None;
            }
            #(#by_key)*
            ::core::option::Option::None
        }

        #[allow(unused_variables)]
        fn update(__partial: &mut Self::Partial, __node: #p::Node<'_>, __since: u64) -> bool {
            match __partial {
                #(#update_arms)*
            }
        }
    };
    enums::items(
        input,
        enums::Form {
            what: "known once its name or its key is read, a variant's fields each an `Option`",
            serde: TokenStream::new(),
            declarations: declarations.collect(),
            methods,
        },
    )
}

/// The match on a complete string `__name`: a unit variant's name builds it, a name of a variant
/// with data is none of them (its data is an object), any other names the catch-all, if any.
fn by_name(partial: &Ident, variants: &[&Variant]) -> TokenStream {
    let (units, with_data): (Vec<&Variant>, Vec<&Variant>) = variants
        .iter()
        .partition(|v| matches!(v.style, Style::Unit));
    let unit_arms = units.iter().map(|variant| {
        let variant_ident = &variant.original.ident;
        let names = tag_names(variant);
        quote!(#names => ::core::option::Option::Some(#partial::#variant_ident),)
    });
    let data_names: Vec<TokenStream> = with_data.iter().map(|variant| tag_names(variant)).collect();
    let data_arm =
        (!data_names.is_empty()).then(|| quote!(#(#data_names)|* => ::core::option::Option::None,));
    let other = match variants.iter().find(|variant| variant.other()) {
        Some(variant) => {
            let variant_ident = &variant.original.ident;
            quote!(::core::option::Option::Some(#partial::#variant_ident))
        }
        None => quote!(::core::option::Option::None),
    };
    quote! {
        match __name {
            #(#unit_arms)*
            #data_arm
            _ => #other,
        }
    }
}

/// The statement of `build` that builds the variant with data `variant` from its key in the object
/// `__node`, once its value shows it.
fn by_key(partial: &Ident, variant: &Variant) -> TokenStream {
    let p = private();
    let variant_ident = &variant.original.ident;
    let names = tag_names_list(variant);
    let readable = quote!(<#p::Value as #p::PartialValue>::shown(__value));
    let (empty, shown) = match (&variant.style, newtype(variant)) {
        (Style::Named, _) => {
            let fields = live(&variant.fields);
            let idents = fields.iter().map(|f| &f.original.ident);
            let required = required_shown(&fields);
            (
                quote!(#partial::#variant_ident { #(#idents: ::core::option::Option::None,)* }),
                quote!(__value.is_object() && { let __node = __value; #required }),
            )
        }
        // Shown once its value has begun, as the tree shows it: not while it is a number or a
        // word not yet ended (no chunk would show the variant then).
        (Style::Tuple(_), None) => (tuple::empty(partial, variant), readable),
        _ => (
            quote!(#partial::#variant_ident(::core::option::Option::None)),
            readable,
        ),
    };
    quote! {
        if let ::core::option::Option::Some(__value) = #p::member(__node, #names) {
            if !(#shown) {
                return ::core::option::Option::None;
            }
            let mut __partial = #empty;
            <Self as #p::PartialValue>::update(&mut __partial, __node, 0);
            return ::core::option::Option::Some(__partial);
        }
    }
}

/// The arm of `update` that brings `variant`'s partial form up to date with the value of its key.
fn update_arm(partial: &Ident, variant: &Variant) -> TokenStream {
    let p = private();
    let variant_ident = &variant.original.ident;
    let names = tag_names_list(variant);
    match (&variant.style, newtype(variant)) {
        (Style::Unit, _) => quote!(#partial::#variant_ident => false,),
        (_, Some(field)) => {
            let sync = sync_expr(field, quote!(__slot));
            quote! {
                #partial::#variant_ident(__slot) => match #p::member(__node, #names) {
                    ::core::option::Option::Some(__value) => #sync,
                    ::core::option::Option::None => false,
                },
            }
        }
        (Style::Tuple(_), None) => {
            let (pattern, update) = tuple::variant_update(partial, variant);
            quote! {
                #pattern => match #p::member(__node, #names) {
                    ::core::option::Option::Some(__node) => #update,
                    ::core::option::Option::None => false,
                },
            }
        }
        (Style::Named, _) => {
            let (pattern, _, update) = struct_update(partial, variant, false);
            quote! {
                #pattern => {
                    match #p::member(__node, #names) {
                        ::core::option::Option::Some(__node) => {
                            let mut __changed = false;
                            #update
                            __changed
                        }
                        ::core::option::Option::None => false,
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::partial::testing::{enumeration, expanded, has, item_names, methods, variants};
    use quote::quote;

    #[test]
    fn variants_keep_their_shapes_each_field_an_option() {
        let file = expanded(quote! {
            enum Shape {
                Dot,
                #[serde(alias = "circle")]
                Circle(f64),
                Rect { w: f64, #[serde(skip)] cache: u8, h: f64 },
                Line(f64, f64),
            }
        });
        assert_eq!(
            item_names(&file),
            [
                "enum ShapePartial",
                "impl PartialField for Shape",
                "impl PartialValue for Shape"
            ]
        );
        let partial = enumeration(&file, "ShapePartial");
        let names = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            variants(partial),
            [
                ("Dot".to_string(), names(&[])),
                ("Circle".to_string(), names(&["0"])),
                ("Rect".to_string(), names(&["w", "h"])),
                ("Line".to_string(), names(&["0", "1"])),
            ]
        );
        assert_eq!(methods(&file, "PartialValue"), ["shown", "build", "update"]);
        // A unit variant is its name; a variant with data is the one key of an object.
        assert!(has(
            &file,
            quote! { "Dot" => ::core::option::Option::Some(ShapePartial::Dot), }
        ));
        assert!(has(
            &file,
            quote! { "Circle" | "circle" | "Rect" | "Line" => ::core::option::Option::None, _ => ::core::option::Option::None, }
        ));
        assert!(has(
            &file,
            quote! { ::llm_extract::__private::member(__node, &["Circle", "circle"]) }
        ));
    }

    #[test]
    fn any_other_name_is_the_catch_all() {
        let file = expanded(quote! { enum E { A(u8), #[serde(other)] Z } });
        assert!(has(
            &file,
            quote! { "A" => ::core::option::Option::None, _ => ::core::option::Option::Some(EPartial::Z), }
        ));
        // A fieldless enum with a catch-all takes this form too, not a copy of the enum.
        let file = expanded(quote! { enum F { A, #[serde(other)] Z } });
        assert!(has(
            &file,
            quote! { "A" => ::core::option::Option::Some(FPartial::A), "Z" => ::core::option::Option::Some(FPartial::Z), _ => ::core::option::Option::Some(FPartial::Z), }
        ));
        assert!(!has(&file, quote! { ::core::marker::Copy }));
    }
}
