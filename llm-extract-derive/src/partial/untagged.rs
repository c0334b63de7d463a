//! The partial form of an untagged enum (`#[serde(untagged)]`): an enum of the same variants,
//! serialized untagged too, showing the first variant, in declaration order, whose partial form shows
//! the JSON written so far:
//! - a unit variant shows `null`;
//! - a newtype variant shows what its field's type shows (a string as it grows, a list once it begins,
//!   a number once complete and in range, ...), held as that type's partial form;
//! - a struct variant shows an object once one of its own fields is shown (after its
//!   `#[extract(stream = "required")]` fields), or a complete `{}`; so keys decide between struct
//!   variants, as serde's reading of them does;
//! - a tuple variant shows an array, as the JSON written so far.
//!
//! This mirrors serde, which takes the first variant that deserializes. Showing is monotone (what is
//! shown stays shown as more is written), so as the JSON grows the variant shown can only move to an
//! earlier one: a later key may bring an earlier struct variant to show, and the value is then that
//! variant's, built from the JSON written so far. So what is shown depends on the text alone, never
//! on how it was cut into chunks, and each chunk asks only the variants before the one shown, each as
//! far as its partial form's `shown` looks (the members it names, down the open path). serde's
//! choice is known only once the value is whole: it can still differ from the one shown (a variant
//! shown first can lack a field serde requires), and the final value is serde's.

use super::{
    any_shown, declarations, doc, frame, live, name, needed_present, newtype, partial_type,
    private, required_shown, shown_expr, update_loop,
};
use crate::ast::{Enum, Style, Variant};
use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::Ident;

pub fn expand(input: &Enum) -> TokenStream {
    let p = private();
    let ident = &input.original.ident;
    let partial = name(ident);
    let doc = doc(
        ident,
        "the first variant, in declaration order, that the JSON written so far fits",
    );
    let variants = input.live();
    let declarations = variants.iter().map(|variant| declaration(variant));
    let fits: Vec<TokenStream> = variants.iter().map(|v| fit_expr(v, Fit::Exact)).collect();
    let loose: Vec<TokenStream> = variants.iter().map(|v| fit_expr(v, Fit::Loose)).collect();
    let built: Vec<TokenStream> = variants.iter().map(|v| build(&partial, v)).collect();
    let positions: Vec<Literal> = (0..variants.len()).map(Literal::usize_unsuffixed).collect();
    let patterns = variants.iter().map(|variant| {
        let variant_ident = &variant.original.ident;
        quote!(#partial::#variant_ident { .. })
    });
    let update_arms = variants.iter().map(|v| update_arm(&partial, v));
    let methods = quote! {
        fn shown(__node: #p::Node<'_>) -> bool {
            <Self as #p::PartialValue>::fits(__node)
                || (__node.is_complete() #(|| #loose)*)
        }

        fn fits(__node: #p::Node<'_>) -> bool {
            false #(|| #fits)*
        }

        #[allow(unused_variables, unused_mut, unused_assignments)]
        fn build(__node: #p::Node<'_>) -> ::core::option::Option<Self::Partial> {
            #(
                if #fits {
                    return #built;
                }
            )*
            // Whole, and no variant fits (serde reads none): the first that shows it.
            if __node.is_complete() {
                #(
                    if #loose {
                        return #built;
                    }
                )*
            }
            ::core::option::Option::None
        }

        #[allow(unused_variables, unused_mut, unused_assignments)]
        fn update(__partial: &mut Self::Partial, __node: #p::Node<'_>, __since: u64) -> bool {
            let __shown: usize = match __partial {
                #(#patterns => #positions,)*
            };
            if __node.is_complete() {
                // Whole (it will not change again): the variant is decided afresh, once.
                let __whole: ::core::option::Option<usize> = 'found: {
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
                };
                let __new = match __whole {
                    ::core::option::Option::Some(__at) if __at != __shown => match __at {
                        #(#positions => #built,)*
                        _ => ::core::option::Option::None,
                    },
                    _ => ::core::option::Option::None,
                };
                if let ::core::option::Option::Some(__new) = __new {
                    *__partial = __new;
                    return true;
                }
            } else {
                // While open, fitting is showing, which is monotone: only a variant before the
                // one shown can come to fit.
                #(
                    if __shown > #positions && #fits {
                        if let ::core::option::Option::Some(__new) = #built {
                            *__partial = __new;
                            return true;
                        }
                    }
                )*
            }
            match __partial {
                #(#update_arms)*
            }
        }
    };
    frame::items(
        input,
        frame::Form {
            doc: &doc,
            serde: quote!(#[serde(untagged)]),
            declarations: declarations.collect(),
            shapes: variants.iter().map(|v| frame::Shape::of(v)).collect(),
            fields: frame::all_held(&variants),
            methods,
        },
    )
}

/// A variant of the partial form: a unit variant stays one, a newtype variant holds its field's
/// partial form, a struct variant its fields each an `Option`, a tuple variant the JSON written so far.
fn declaration(variant: &Variant) -> TokenStream {
    let p = private();
    let variant_ident = &variant.original.ident;
    let doc = format!("`{variant_ident}`.");
    let body = match (&variant.style, newtype(variant)) {
        (Style::Unit, _) => TokenStream::new(),
        (_, Some(field)) => {
            let ty = partial_type(field);
            quote!((#ty))
        }
        (Style::Tuple(_), None) => quote!((#p::Value)),
        (Style::Named, _) => {
            let fields = declarations(&live(&variant.fields), false);
            quote!({ #(#fields,)* })
        }
    };
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
    let p = private();
    match (&variant.style, newtype(variant)) {
        (Style::Unit, _) => quote!(__node.is_null()),
        (_, Some(field)) if fit == Fit::Loose => {
            shown_expr(field, quote!(::core::option::Option::Some(__node)))
        }
        (_, Some(field)) => {
            let ty = field.ty;
            let value = if field.attrs.extract.schemars.is_some() {
                quote!(<#p::Value as #p::PartialValue>)
            } else {
                quote_spanned!(ty.span()=> <#ty as #p::PartialValue>)
            };
            let done = if super::done(field) {
                quote!(__node.is_complete())
            } else {
                quote!(true)
            };
            quote!((#done && #value::fits(__node)))
        }
        (Style::Tuple(_), None) => quote!(__node.is_array()),
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

/// The variant's partial form of `__node`, which it shows (an `Option`, `None` only if it does not).
fn build(partial: &Ident, variant: &Variant) -> TokenStream {
    let p = private();
    let variant_ident = &variant.original.ident;
    match (&variant.style, newtype(variant)) {
        (Style::Unit, _) => quote!(::core::option::Option::Some(#partial::#variant_ident)),
        (_, Some(field)) => {
            let ty = field.ty;
            let value = if field.attrs.extract.schemars.is_some() {
                quote!(<#p::Value as #p::PartialValue>)
            } else {
                quote_spanned!(ty.span()=> <#ty as #p::PartialValue>)
            };
            quote!(#value::build(__node).map(#partial::#variant_ident))
        }
        (Style::Tuple(_), None) => quote! {
            <#p::Value as #p::PartialValue>::build(__node).map(#partial::#variant_ident)
        },
        (Style::Named, _) => {
            let fields = live(&variant.fields);
            let bindings: Vec<Ident> = (0..fields.len()).map(|i| format_ident!("__f{i}")).collect();
            let idents = fields.iter().map(|f| &f.original.ident);
            let update = update_loop(&fields, |i, _| {
                let binding = &bindings[i];
                quote!(&mut #binding)
            });
            quote! {{
                #(let mut #bindings = ::core::option::Option::None;)*
                let __since = 0;
                let mut __changed = false;
                #update
                ::core::option::Option::Some(#partial::#variant_ident { #(#idents: #bindings,)* })
            }}
        }
    }
}

/// The arm of `update` that brings the shown variant up to date with `__node`.
fn update_arm(partial: &Ident, variant: &Variant) -> TokenStream {
    let p = private();
    let variant_ident = &variant.original.ident;
    match (&variant.style, newtype(variant)) {
        (Style::Unit, _) => quote!(#partial::#variant_ident => false,),
        (_, Some(field)) => {
            let ty = field.ty;
            let value = if field.attrs.extract.schemars.is_some() {
                quote!(<#p::Value as #p::PartialValue>)
            } else {
                quote_spanned!(ty.span()=> <#ty as #p::PartialValue>)
            };
            quote!(#partial::#variant_ident(__slot) => #value::update(__slot, __node, __since),)
        }
        (Style::Tuple(_), None) => quote! {
            #partial::#variant_ident(__slot) => {
                <#p::Value as #p::PartialValue>::update(__slot, __node, __since)
            }
        },
        (Style::Named, _) => {
            let fields = live(&variant.fields);
            let bindings: Vec<Ident> = (0..fields.len()).map(|i| format_ident!("__f{i}")).collect();
            let idents = fields.iter().map(|f| &f.original.ident);
            let update = update_loop(&fields, |i, _| {
                let binding = &bindings[i];
                quote!(#binding)
            });
            quote! {
                #partial::#variant_ident { #(#idents: #bindings,)* } => {
                    let mut __changed = false;
                    #update
                    __changed
                }
            }
        }
    }
}
