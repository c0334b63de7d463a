//! The partial form of an untagged enum (`#[serde(untagged)]`): an enum of the same variants,
//! serialized untagged too, showing the first variant, in declaration order, that the JSON written so
//! far fits, as serde takes the first variant that deserializes. JSON fits
//! - a unit variant if it is `null`;
//! - a newtype variant if it fits the field's type (`PartialValue::fits`: what the type shows, a
//!   string as it grows, a list once it begins, a number once complete and in range, a derived struct
//!   as a struct variant below), held as that type's partial form;
//! - a struct variant if it is an object one of whose fields is shown (after its
//!   `#[extract(stream = "required")]` fields), or a complete `{}`; once the object is complete,
//!   only if it holds every field serde needs (not an `Option`, no `#[serde(default)]`);
//! - a tuple variant if it is an array, shown position by position.
//!
//! An object does not fit a struct variant, or a newtype variant of a derived struct, while it holds a
//! key that another variant reads and this one does not (`PartialValue::keys`, `PartialValue::reads`):
//! a derived object is closed, so such an answer would not validate as it. So the keys decide between
//! variants of objects, and a key both read (a `label`) shows the first of them until a key only the
//! other reads is written. When no variant fits (keys of two variants mixed), the first variant that
//! shows the JSON is shown.
//!
//! A key counts once its value is read (a number, once it ends).
//!
//! The variant is chosen afresh from the JSON after each chunk that changed it (the value rebuilt
//! when the choice changes, brought up to date in place when not), so what is shown depends on the
//! text alone, never on how it was cut into chunks. Choosing costs, per variant, what its `shown`
//! looks at (the members it names, along the open path) and a lookup per key the other variants
//! read, not the length of the answer; a variant comes to fit at most once and stops at most once,
//! so a value is rebuilt at most twice per variant, and once more when whole. The variant shown can
//! change as the JSON grows, and what serde takes is known only once the value is whole; the final
//! value is serde's.

use super::fields::{any_shown, needed_present, partial_type, reads, required_shown, shown_expr};
use super::model_view::{done, keys, live, newtype};
use super::variant::{struct_update, variant_body};
use super::{enums, name, private, tuple};
use crate::ast::{Enum, Field, Style, Variant};
use proc_macro2::{Literal, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::Ident;

/// The partial form of the untagged enum `input` and its impls.
pub fn expand(input: &Enum) -> TokenStream {
    let p = private();
    let ident = &input.original.ident;
    let partial = name(ident);
    let variants = input.live();
    let declarations = variants.iter().map(|variant| declaration(variant));
    let tests = Tests::of(&variants);
    let Tests { fits, loose } = &tests;
    let keys = variants.iter().map(|v| reads_expr(v, quote!(__key)));
    let chosen = chosen(&partial, &variants, &tests);
    let methods = quote! {
        fn shown(__node: #p::Node<'_>) -> bool {
            false #(|| #loose)*
        }

        fn fits(__node: #p::Node<'_>) -> bool {
            false #(|| #fits)*
        }

        fn reads(__key: &str) -> bool {
            false #(|| #keys)*
        }

        #chosen
    };
    enums::items(
        input,
        enums::Form {
            what: "the first variant, in declaration order, that the JSON written so far fits",
            serde: quote!(#[serde(untagged)]),
            declarations: declarations.collect(),
            methods,
        },
    )
}

/// For each variant, in order, whether `__node` fits it (and is not ruled out by another's keys),
/// and whether the variant shows it.
struct Tests {
    /// Whether the JSON fits the variant (see the module's doc).
    fits: Vec<TokenStream>,
    /// Whether the variant shows it.
    loose: Vec<TokenStream>,
}

impl Tests {
    fn of(variants: &[&Variant]) -> Self {
        let fits = variants
            .iter()
            .map(|v| {
                let fits = fit_expr(v, Fit::Exact);
                let ruled_out = ruled_out(v, variants);
                quote!((#fits && !#ruled_out))
            })
            .collect();
        let loose = variants.iter().map(|v| fit_expr(v, Fit::Loose)).collect();
        Tests { fits, loose }
    }
}

/// `build` and `update`: the variant to show chosen afresh from `__node` (the first that fits, else
/// the first that shows it), the value rebuilt when the choice changes and brought up to date in
/// place when not.
fn chosen(partial: &Ident, variants: &[&Variant], tests: &Tests) -> TokenStream {
    let p = private();
    let Tests { fits, loose } = tests;
    let built: Vec<TokenStream> = variants.iter().map(|v| build(partial, v)).collect();
    let positions: Vec<Literal> = (0..variants.len()).map(Literal::usize_unsuffixed).collect();
    let patterns = variants.iter().map(|variant| {
        let variant_ident = &variant.original.ident;
        quote!(#partial::#variant_ident { .. })
    });
    let update_arms = variants.iter().map(|v| update_arm(partial, v));
    // The position of the variant to show: the first that fits, else the first that shows it.
    let choose = quote! {
        'found: {
            #(
                if #fits {
                    break 'found ::core::option::Option::Some(#positions);
                }
            )*
            #(
                if #loose {
                    break 'found ::core::option::Option::Some(#positions);
                }
            )*
            ::core::option::Option::None
        }
    };
    quote! {
        #[allow(unused_variables, unused_mut, unused_assignments, unreachable_code)]
        fn build(__node: #p::Node<'_>) -> ::core::option::Option<Self::Partial> {
            let __at: ::core::option::Option<usize> = #choose;
            match __at? {
                #(#positions => #built,)*
                _ => ::core::option::Option::None,
            }
        }

        #[allow(unused_variables, unused_mut, unused_assignments, unreachable_code)]
        fn update(__partial: &mut Self::Partial, __node: #p::Node<'_>, __since: u64) -> bool {
            let __shown: usize = match __partial {
                #(#patterns => #positions,)*
            };
            let __at: ::core::option::Option<usize> = #choose;
            if let ::core::option::Option::Some(__at) = __at.filter(|&__at| __at != __shown) {
                let __new = match __at {
                    #(#positions => #built,)*
                    _ => ::core::option::Option::None,
                };
                if let ::core::option::Option::Some(__new) = __new {
                    *__partial = __new;
                    return true;
                }
            }
            match __partial {
                #(#update_arms)*
            }
        }
    }
}

/// A variant of the partial form: a unit variant stays one, a newtype variant holds its field's
/// partial form, a struct variant its fields each an `Option`, a tuple variant its positions each an
/// `Option`.
fn declaration(variant: &Variant) -> TokenStream {
    let variant_ident = &variant.original.ident;
    let doc = format!("`{variant_ident}`.");
    let body = variant_body(variant, partial_type);
    quote! {
        #[doc = #doc]
        #variant_ident #body
    }
}

/// Which test [`fit_expr`] writes.
#[derive(Clone, Copy, PartialEq)]
enum Fit {
    /// Whether the JSON fits the variant (see the module's doc).
    Exact,
    /// Whether the variant shows it, even if complete it lacks a field serde needs.
    Loose,
}

/// Whether `__node` fits the variant, or (`Fit::Loose`) the variant shows it.
fn fit_expr(variant: &Variant, fit: Fit) -> TokenStream {
    match (&variant.style, newtype(variant)) {
        (Style::Unit, _) => quote!(__node.is_null()),
        (_, Some(field)) if fit == Fit::Loose => {
            shown_expr(field, quote!(::core::option::Option::Some(__node)))
        }
        (_, Some(field)) => {
            let value = value_of(field);
            let done = if done(field) {
                quote!(__node.is_complete())
            } else {
                quote!(true)
            };
            quote!((#done && #value::fits(__node)))
        }
        (Style::Tuple(_), None) => tuple::shown(&live(&variant.fields)),
        (Style::Named, _) => {
            let fields = live(&variant.fields);
            let required = required_shown(&fields);
            let any_shown = any_shown(&fields);
            let needed = match fit {
                Fit::Exact => needed_present(&fields, false),
                Fit::Loose => quote!(true),
            };
            quote! {
                (__node.is_object()
                    && #required
                    && ((__node.is_complete() && __node.last_entry().is_none()) #(|| #any_shown)*)
                    && (!__node.is_complete() || #needed))
            }
        }
    }
}

/// Whether an object of the variant reads `key` (an `&str` expression): a struct variant's fields, a
/// newtype variant's type (see `PartialValue::reads`); no other variant is an object.
fn reads_expr(variant: &Variant, key: TokenStream) -> TokenStream {
    match (&variant.style, newtype(variant)) {
        (Style::Named, _) => reads(&live(&variant.fields), key),
        (_, Some(field)) => {
            let value = value_of(field);
            quote!(#value::reads(#key))
        }
        _ => quote!(false),
    }
}

/// Whether the object `__node` holds a key another variant reads and this one does not (see the
/// module's doc): one lookup per key the other variants read.
fn ruled_out(variant: &Variant, variants: &[&Variant]) -> TokenStream {
    let p = private();
    if !matches!(variant.style, Style::Named) && newtype(variant).is_none() {
        return quote!(false);
    }
    let checks = variants
        .iter()
        .filter(|other| other.original.ident != variant.original.ident)
        .filter_map(|other| match (&other.style, newtype(other)) {
            (Style::Named, _) => {
                let checks = keys(&live(&other.fields)).into_iter().map(|key| {
                    let reads = reads_expr(variant, quote!(#key));
                    quote!((!#reads && #p::written(__node, #key)))
                });
                Some(quote!((false #(|| #checks)*)))
            }
            (_, Some(field)) => {
                let value = value_of(field);
                let reads = reads_expr(variant, quote!(__key));
                Some(quote! {
                    #value::keys()
                        .iter()
                        .any(|&__key| !#reads && #p::written(__node, __key))
                })
            }
            _ => None,
        });
    quote!((false #(|| #checks)*))
}

/// `<T as PartialValue>` for the field's type (`serde_json::Value` for a schemars field).
fn value_of(field: &Field) -> TokenStream {
    let p = private();
    let ty = field.ty;
    if field.attrs.extract.schemars.is_some() {
        quote!(<#p::Value as #p::PartialValue>)
    } else {
        quote_spanned!(ty.span()=> <#ty as #p::PartialValue>)
    }
}

/// The variant's partial form of `__node`, which it shows (an `Option`, `None` only if it does not).
fn build(partial: &Ident, variant: &Variant) -> TokenStream {
    let variant_ident = &variant.original.ident;
    match (&variant.style, newtype(variant)) {
        (Style::Unit, _) => quote!(::core::option::Option::Some(#partial::#variant_ident)),
        (_, Some(field)) => {
            let value = value_of(field);
            quote!(#value::build(__node).map(#partial::#variant_ident))
        }
        (Style::Tuple(_), None) => tuple::variant_build(partial, variant),
        (Style::Named, _) => {
            let (built, bindings, update) = struct_update(partial, variant, true);
            quote! {{
                #(let mut #bindings = ::core::option::Option::None;)*
                let __since = 0;
                let mut __changed = false;
                #update
                ::core::option::Option::Some(#built)
            }}
        }
    }
}

/// The arm of `update` that brings the shown variant up to date with `__node`.
fn update_arm(partial: &Ident, variant: &Variant) -> TokenStream {
    let variant_ident = &variant.original.ident;
    match (&variant.style, newtype(variant)) {
        (Style::Unit, _) => quote!(#partial::#variant_ident => false,),
        (_, Some(field)) => {
            let value = value_of(field);
            quote!(#partial::#variant_ident(__slot) => #value::update(__slot, __node, __since),)
        }
        (Style::Tuple(_), None) => {
            let (pattern, update) = tuple::variant_update(partial, variant);
            quote!(#pattern => #update,)
        }
        (Style::Named, _) => {
            let (pattern, _, update) = struct_update(partial, variant, false);
            quote! {
                #pattern => {
                    let mut __changed = false;
                    #update
                    __changed
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::partial::testing::{enumeration, expanded, has, methods, serde_attrs, variants};
    use quote::quote;

    #[test]
    fn the_first_variant_the_json_fits() {
        let file = expanded(quote! {
            #[serde(untagged)]
            enum Value { Nothing, Number(f64), Named { name: String }, Tagged { label: String, id: u8 }, Pair(u8, u8) }
        });
        let partial = enumeration(&file, "ValuePartial");
        assert!(serde_attrs(&partial.attrs).contains(&quote! { #[serde(untagged)] }.to_string()));
        // Untagged, its variants have no JSON names.
        assert!(partial
            .variants
            .iter()
            .all(|v| serde_attrs(&v.attrs).is_empty()));
        let names: Vec<String> = variants(partial)
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        assert_eq!(names, ["Nothing", "Number", "Named", "Tagged", "Pair"]);
        assert_eq!(
            methods(&file, "PartialValue"),
            ["shown", "fits", "reads", "build", "update"]
        );
        // A unit variant is `null`; a newtype variant fits as its type does.
        assert!(has(&file, quote! { if (__node.is_null() && !false) }));
        assert!(has(
            &file,
            quote! { (true && <f64 as ::llm_extract::__private::PartialValue>::fits(__node)) }
        ));
        // An object holding a key only `Tagged` reads is not `Named`.
        assert!(has(
            &file,
            quote! { (!(::core::matches!("id", "name")) && ::llm_extract::__private::written(__node, "id")) }
        ));
        // The variant is chosen afresh after each change, rebuilt when the choice changes.
        assert!(has(
            &file,
            quote! { let __at: ::core::option::Option<usize> = 'found: }
        ));
        assert!(has(&file, quote! { *__partial = __new; return true; }));
    }
}
