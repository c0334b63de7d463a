//! The walks of `PartialValue` that go below the level a chunk changed: `update_below` (into the
//! field of the last member or item), `growing` (to the string being written, recording the steps
//! taken) and the walks that follow recorded steps (`grow_at`, `update_at`, `growing_at`), for the
//! fields of a struct, the positions of a tuple and the variants of an enum.

use super::fields::names;
use super::model_view::{done, flattened};
use super::private;
use crate::ast::Field;
use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::spanned::Spanned;
use syn::Ident;

/// Where the slots of a partial form stand in its JSON: a struct's fields at their members' keys, a
/// tuple's positions at their items' indices.
#[derive(Clone, Copy)]
pub enum At {
    /// An object's members, by key.
    Key,
    /// An array's items, by index.
    Index,
}

impl At {
    /// The pattern of the field at `i` among the live fields, in a match on its key or index.
    pub fn label(self, i: usize, field: &Field) -> TokenStream {
        match self {
            At::Key => names(field),
            At::Index => {
                let i = index(i);
                quote!(#i)
            }
        }
    }

    /// The binding of the last member's key (`__key`) or the last item's index (`__index`), and the
    /// call that gives it with its value.
    pub fn last(self) -> (TokenStream, TokenStream) {
        match self {
            At::Key => (quote!(__key), quote!(__node.last_entry())),
            At::Index => (quote!(__index), quote!(__node.last_item())),
        }
    }
}

/// The body of `PartialValue::update_below` for a struct (or, `At::Index`, a tuple struct): the
/// field of the last member (or item), bound by `slot`, if the change is below it and it can be
/// descended into (see `descend_field`), else the struct's own update.
pub fn update_below_body(
    fields: &[&Field],
    at: At,
    slot: impl Fn(usize, &Field) -> TokenStream,
) -> TokenStream {
    let p = private();
    let arms = fields
        .iter()
        .enumerate()
        .filter(|(_, field)| !flattened(field))
        .map(|(i, field)| {
            let label = at.label(i, field);
            let done = done(field);
            let ty = if field.attrs.extract.schemars.is_some() {
                quote!(#p::Value)
            } else {
                let ty = field.ty;
                quote_spanned!(ty.span()=> #ty)
            };
            let slot = slot(i, field);
            quote! {
                #label => #p::descend_field::<#ty>(&mut #slot, __value, __since, #done, __below),
            }
        });
    let (label, last) = at.last();
    quote! {
        if let (::core::option::Option::Some(__below), ::core::option::Option::Some((#label, __value))) =
            (__depth.checked_sub(1), #last)
        {
            let __descended = match #label {
                #(#arms)*
                _ => ::core::option::Option::None,
            };
            if let ::core::option::Option::Some(__changed) = __descended {
                return __changed;
            }
        }
        <Self as #p::PartialValue>::update(__partial, __node, __since)
    }
}

/// The fields whose strings are shown as they grow (not `stream = "done"`, not schemars), each with
/// its position and its step number on `PartialValue::growing`'s path (the same number).
pub fn growable<'f, 'a>(
    fields: &'f [&'f Field<'a>],
) -> impl Iterator<Item = (usize, u32, &'f Field<'a>)> + 'f {
    fields
        .iter()
        .enumerate()
        .filter(|(_, field)| {
            !done(field) && !flattened(field) && field.attrs.extract.schemars.is_none()
        })
        .map(|(i, field)| (i, i as u32, *field))
}

/// The match that finds the string being written in the last member (or, `At::Index`, item) of
/// `__node` (see `PartialValue::growing`), each field's slot bound by `slot`: a field shown as it
/// grows passes the question on; a `stream = "done"` field, a schemars field and any other key
/// answer `None`.
pub fn growing_match(
    fields: &[&Field],
    at: At,
    slot: impl Fn(usize, &Field) -> TokenStream,
) -> TokenStream {
    let p = private();
    let arms = growable(fields).map(|(i, step, field)| {
        let label = at.label(i, field);
        let ty = field.ty;
        let slot = slot(i, field);
        quote_spanned! {ty.span()=>
            #label => {
                __path.push(#step);
                <#ty as #p::PartialValue>::growing(#slot.as_mut()?, __value, __path)
            }
        }
    });
    let (label, last) = at.last();
    quote! {
        let (#label, __value) = #last?;
        match #label {
            #(#arms)*
            _ => ::core::option::Option::None,
        }
    }
}

/// The match on `__step` (a field's number, as `growing_match` pushed it) that follows it to the
/// field's slot, bound by `slot`, and goes on there with `walk`.
pub fn step_match(
    fields: &[&Field],
    slot: impl Fn(usize, &Field) -> TokenStream,
    walk: Walk,
) -> TokenStream {
    let p = private();
    let (method, args) = walk.call();
    let arms = growable(fields).map(|(i, step, field)| {
        let ty = field.ty;
        let slot = slot(i, field);
        quote_spanned! {ty.span()=>
            #step => <#ty as #p::PartialValue>::#method(#slot.as_mut()?, #args),
        }
    });
    quote! {
        match __step {
            #(#arms)*
            _ => ::core::option::Option::None,
        }
    }
}

/// The walks of `PartialValue` that follow remembered steps (see `step_match`).
#[derive(Clone, Copy)]
pub enum Walk {
    /// `grow_at`: to the string being written.
    Grow,
    /// `update_at`: to the level a chunk changed.
    Update,
    /// `growing_at`: to the deepest level whose steps are known, to find the string from there.
    Growing,
}

impl Walk {
    /// The method, and the arguments a level that takes no step of its own (an internally tagged
    /// newtype variant) passes on after the slot: the path or route as it was given.
    pub fn passed_on(self) -> (Ident, TokenStream) {
        match self {
            Walk::Grow => (format_ident!("grow_at"), quote!(__path)),
            Walk::Update => (
                format_ident!("update_at"),
                quote!(__route, __node, __since, __depth),
            ),
            Walk::Growing => (format_ident!("growing_at"), quote!(__path, __next, __node)),
        }
    }

    /// The method, and the arguments it passes on after the slot.
    pub fn call(self) -> (Ident, TokenStream) {
        match self {
            Walk::Grow => (format_ident!("grow_at"), quote!(__rest)),
            Walk::Update => (
                format_ident!("update_at"),
                quote!(__rest, __node, __since, __depth),
            ),
            Walk::Growing => (
                format_ident!("growing_at"),
                quote!(__path, __next + 1, __node),
            ),
        }
    }
}

/// `PartialValue::grow_at` for the partial type `partial`: `step_match` on the path's first step,
/// `__step`, with `__rest` after it.
pub fn grow_at_fn(partial: impl ToTokens, step_match: TokenStream) -> TokenStream {
    quote! {
        #[inline]
        #[allow(unused_variables, unreachable_code)]
        fn grow_at<'__p>(
            __partial: &'__p mut #partial,
            __path: &[u32],
        ) -> ::core::option::Option<&'__p mut ::std::string::String> {
            let (&__step, __rest) = __path.split_first()?;
            #step_match
        }
    }
}

/// `PartialValue::update_at` for the partial type `partial`: `step_match` (which follows the route's
/// first step, `__step`, with `__rest` after it) or, where the route ends, `update_below`.
pub fn update_at_fn(partial: impl ToTokens, step_match: TokenStream) -> TokenStream {
    let p = private();
    quote! {
        #[inline]
        #[allow(unused_variables, unreachable_code)]
        fn update_at(
            __partial: &mut #partial,
            __route: &[u32],
            __node: #p::Node<'_>,
            __since: u64,
            __depth: usize,
        ) -> ::core::option::Option<bool> {
            let ::core::option::Option::Some((&__step, __rest)) = __route.split_first() else {
                return ::core::option::Option::Some(
                    <Self as #p::PartialValue>::update_below(__partial, __node, __since, __depth),
                );
            };
            #step_match
        }
    }
}

/// `PartialValue::growing_at` for the partial type `partial`: `step_match` (which follows the step
/// `__step` at `__next`) or, where the known steps end, `growing`.
pub fn growing_at_fn(partial: impl ToTokens, step_match: TokenStream) -> TokenStream {
    let p = private();
    quote! {
        #[inline]
        #[allow(unused_variables, unreachable_code)]
        fn growing_at<'__p, '__n>(
            __partial: &'__p mut #partial,
            __path: &mut ::std::vec::Vec<u32>,
            __next: usize,
            __node: #p::Node<'__n>,
        ) -> ::core::option::Option<(&'__p mut ::std::string::String, &'__n str)> {
            let ::core::option::Option::Some(&__step) = __path.get(__next) else {
                return <Self as #p::PartialValue>::growing(__partial, __node, __path);
            };
            #step_match
        }
    }
}

/// The signature of `PartialValue::growing` for the partial type `partial`.
pub fn growing_signature(partial: impl ToTokens) -> TokenStream {
    let p = private();
    quote! {
        fn growing<'__p, '__n>(
            __partial: &'__p mut #partial,
            __node: #p::Node<'__n>,
            __path: &mut ::std::vec::Vec<u32>,
        ) -> ::core::option::Option<(&'__p mut ::std::string::String, &'__n str)>
    }
}

/// The index of position `i`, as a literal.
pub fn index(i: usize) -> Literal {
    Literal::usize_unsuffixed(i)
}
