//! The partial form of a derived type, shown while its JSON streams: for `T`, a type `TPartial`
//! (every field an `Option` of its type's partial form) and `impl PartialValue for T`, which builds and
//! updates it from the runtime's partial tree (`llm_extract::parse::PartialValue` documents when each
//! kind of value is shown).
//!
//! - struct `T` -> struct `TPartial`, deriving `Debug, Clone, Default, PartialEq, Serialize`;
//! - internally tagged enum of struct, unit and newtype variants -> enum `TPartial` with the same tag
//!   and variants, each field optional, a newtype variant holding its content's partial form (read
//!   from the same object, `None` until shown and serialized as no member then), known once the tag
//!   is read (any other string names the `#[serde(other)]` variant; no `Default`, since no variant is
//!   a default);
//! - fieldless enum -> a copy of it (`Copy` too), shown once its string is complete;
//! - newtype or `#[serde(transparent)]` struct -> its field's partial form (a type alias);
//! - externally tagged enum with data, or with a `#[serde(other)]` variant -> an enum of the same
//!   variants, known once the name or the one key is read (any other name the `other` variant): a
//!   newtype variant holds its field's partial form, a struct variant its fields each an `Option`, a
//!   tuple variant its positions each an `Option` ([`tuple`]);
//! - adjacently tagged enum -> an enum of the same variants with the same tag and content keys, known
//!   once the tag is read (any other string names the `#[serde(other)]` variant), its content held
//!   as an externally tagged variant's data is ([`adjacent`]);
//! - untagged enum -> an enum of the same variants, untagged too, showing the first variant in
//!   declaration order that the JSON written so far fits ([`untagged`] says when JSON fits);
//! - generic enum -> as the same enum without type parameters, the partial form taking them, bounded
//!   as a generic struct's ([`frame`]);
//! - tuple struct -> a tuple struct of its positions, each an `Option` of its field's partial form,
//!   serialized as an array with `null` at the positions not shown yet ([`tuple`]);
//! - any other enum (tagged with an `#[serde(untagged)]` variant, internally tagged with a tuple
//!   variant, generic with a type parameter only skipped fields name) -> `serde_json::Value`, the JSON
//!   written so far (a type alias).
//!
//! It serializes with the JSON names serde reads, fields not yet shown left out, so a UI can take it as
//! JSON. Generated locals start with `__` so field names cannot shadow them.

mod adjacent;
mod frame;
mod tuple;
mod untagged;

use crate::ast::{Enum, Field, Input, Repr, Struct, Style, Variant};
use crate::attr::Stream;
use crate::ty;
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::Ident;

fn private() -> TokenStream {
    quote!(::llm_extract::__private)
}

/// The name of `ident`'s partial form.
pub fn name(ident: &Ident) -> Ident {
    format_ident!("{}Partial", ident.unraw())
}

/// The partial type and its `PartialValue` impl.
pub fn expand(input: &Input) -> TokenStream {
    match input {
        Input::Struct(input) => match input.inner() {
            Some(inner) if inner.attrs.extract.schemars.is_none() => expand_newtype(input, inner),
            Some(_) => expand_json(input.original, "the JSON written so far"),
            None if matches!(input.style, Style::Tuple(_)) => tuple::expand_struct(input),
            None => expand_struct(input),
        },
        Input::Enum(input) => {
            let live = input.live();
            let plain = live.iter().all(|v| !v.other() && !v.untagged());
            let tagged = live.iter().all(|v| !v.untagged());
            let internal_shapes = live
                .iter()
                .all(|v| matches!(v.style, Style::Named | Style::Unit) || newtype(v).is_some());
            match input.repr() {
                // A type parameter no live field names would be unused by the partial form.
                _ if !frame::params_used(input) => {
                    expand_json(input.original, "the JSON written so far")
                }
                Repr::Internal { .. } if tagged && internal_shapes => expand_tagged(input),
                Repr::External if plain && input.fieldless() && !generic(input) => {
                    expand_fieldless(input)
                }
                Repr::External if tagged => expand_external(input),
                Repr::Adjacent { tag, content } if tagged => {
                    adjacent::expand(input, &tag, &content)
                }
                Repr::Untagged => untagged::expand(input),
                _ => expand_json(input.original, "the JSON written so far"),
            }
        }
    }
}

/// Whether the enum has type parameters.
fn generic(input: &Enum) -> bool {
    input.original.generics.type_params().next().is_some()
}

/// A newtype or `#[serde(transparent)]` struct is shown as its field is: its partial form is the
/// field's.
fn expand_newtype(input: &Struct, inner: &Field) -> TokenStream {
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
fn expand_json(input: &syn::DeriveInput, what: &str) -> TokenStream {
    let p = private();
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let vis = &input.vis;
    let partial = name(ident);
    let doc = doc(ident, what);
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

/// The attributes on a partial type: its doc, its derives (`Debug`, `Clone`, `PartialEq`, `Serialize`
/// and `more`) and how it serializes.
fn attributes(doc: &str, more: TokenStream) -> TokenStream {
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

fn doc(ident: &Ident, what: &str) -> String {
    format!(
        "The partial form of [`{ident}`] while its JSON streams ({what}); see \
         `llm_extract::parse::PartialValue`."
    )
}

/// The live (not skipped) fields.
fn live<'f, 'a>(fields: &'f [Field<'a>]) -> Vec<&'f Field<'a>> {
    fields.iter().filter(|f| !f.skipped()).collect()
}

/// Whether the field is `#[serde(flatten)]`: it has no key, its members are the object's.
fn flattened(field: &Field) -> bool {
    field.attrs.serde.flatten.is_some()
}

/// The fields read by their key (all but the flattened ones).
fn keyed<'f, 'a>(fields: &[&'f Field<'a>]) -> Vec<&'f Field<'a>> {
    fields.iter().copied().filter(|f| !flattened(f)).collect()
}

/// A field's JSON name and aliases, as a match pattern.
fn names(field: &Field) -> TokenStream {
    let name = &field.name;
    let aliases = field.attrs.serde.aliases.iter();
    quote!(#name #(| #aliases)*)
}

fn names_list(field: &Field) -> TokenStream {
    let name = &field.name;
    let aliases = field.attrs.serde.aliases.iter();
    quote!(&[#name #(, #aliases)*])
}

fn done(field: &Field) -> bool {
    field
        .attrs
        .extract
        .stream
        .as_ref()
        .is_some_and(|s| s.value == Stream::Done)
}

fn required(field: &Field) -> bool {
    field
        .attrs
        .extract
        .stream
        .as_ref()
        .is_some_and(|s| s.value == Stream::Required)
}

/// The `where` clause of a partial type and of its `PartialValue` impl: every field type has a partial
/// form. Written `for<'__p> F: PartialField`, a bound on a concrete type that the compiler checks where
/// the partial type is used, not where it is defined: so a field type with no schema yields the errors
/// of the schema code (`FieldSchema`, at the field's type) and one more (the derived type's
/// `PartialField` impl), not one per item of the partial code (the struct, each of its derives, the
/// impl's methods). A bound that holds changes nothing: the compiler still takes the field types' own
/// impls. `PartialField` rather than `PartialValue`, whose derived impls carry these bounds: proving
/// them for types that contain each other would loop. Types naming the derived type itself are left
/// out: a recursive type's bound on itself would ask the compiler to prove what it is proving.
fn bounds(own: &Ident, fields: &[&Field]) -> TokenStream {
    let predicates = field_bounds(own, fields);
    quote!(where #(#predicates,)*)
}

fn field_bounds(own: &Ident, fields: &[&Field]) -> Vec<syn::WherePredicate> {
    let p = private();
    fields
        .iter()
        .filter(|f| f.attrs.extract.schemars.is_none() && ty::self_reference(f.ty, own).is_none())
        .map(|field| {
            let ty = field.ty;
            syn::parse_quote_spanned!(ty.span()=> for<'__p> #ty: #p::PartialField)
        })
        .collect()
}

/// The generics of a struct's partial form and of its `PartialValue` impl: the type's, each type
/// parameter a field names bounded by `PartialField + 'static` (the partial form names its partial
/// form and is `'static`), and the field bounds of [`bounds`].
fn generics(input: &syn::DeriveInput, own: &Ident, fields: &[&Field]) -> syn::Generics {
    let p = private();
    // The `PartialField` impl of a generic type bounds only the parameters its fields name, so that
    // proving it never loops through types that contain each other.
    let mut generics = ty::bounded(input, fields, quote!(#p::PartialField + 'static));
    generics
        .make_where_clause()
        .predicates
        .extend(field_bounds(own, fields));
    generics
}

/// A generic struct's partial form implements `Debug`, `Clone`, `PartialEq` and `Default` by hand,
/// bounded as the struct is: the std derives would ask the same of each type parameter (a `Person`
/// in `Page<Person>` that is not `Default`), which the partial form, holding only partial forms,
/// does not need. `Serialize` is derived, with the struct's own bounds only. The type parameters
/// are held by a `__params` marker (a parameter only skipped fields name is used nowhere else).
fn generic_derives(
    doc: &str,
    partial: &Ident,
    generics: &syn::Generics,
    fields: &[&Field],
) -> (TokenStream, TokenStream) {
    let idents: Vec<&Option<Ident>> = fields.iter().map(|f| &f.original.ident).collect();
    let labels = idents.iter().map(|ident| {
        ident
            .as_ref()
            .map(|i| i.unraw().to_string())
            .unwrap_or_default()
    });
    let name = partial.to_string();
    hand_derives(
        doc,
        partial,
        generics,
        &idents,
        HandBodies {
            clone: quote! {
                Self {
                    #(#idents: ::core::clone::Clone::clone(&self.#idents),)*
                    __params: ::core::marker::PhantomData,
                }
            },
            fmt: quote! {
                __f.debug_struct(#name)
                    #(.field(#labels, &self.#idents))*
                    .finish()
            },
            default: quote! {
                Self {
                    #(#idents: ::core::option::Option::None,)*
                    __params: ::core::marker::PhantomData,
                }
            },
        },
    )
}

/// The bodies of the hand-written `clone`, `fmt` (`Debug`, its formatter `__f`) and `default` of a
/// generic struct's or tuple struct's partial form.
struct HandBodies {
    clone: TokenStream,
    fmt: TokenStream,
    default: TokenStream,
}

/// The attributes of a generic partial form, which derives `Serialize` with its own bounds only.
fn generic_attributes(doc: &str) -> TokenStream {
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
fn hand_derives(
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

/// The type of a field in the partial form.
fn field_type(field: &Field) -> TokenStream {
    let ty = partial_type(field);
    quote!(::core::option::Option<#ty>)
}

/// The partial form of a field's type (a schemars field's is the JSON written so far).
fn partial_type(field: &Field) -> TokenStream {
    let p = private();
    let ty = field.ty;
    if field.attrs.extract.schemars.is_some() {
        quote!(#p::Value)
    } else {
        quote_spanned!(ty.span()=> <#ty as #p::PartialValue>::Partial)
    }
}

/// Whether the field, found at `node` (an `Option<Node>`), would be shown.
fn shown_expr(field: &Field, node: TokenStream) -> TokenStream {
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
fn sync_expr(field: &Field, slot: TokenStream) -> TokenStream {
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
fn declarations(fields: &[&Field], with_vis: bool) -> Vec<TokenStream> {
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
fn required_shown(fields: &[&Field]) -> TokenStream {
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
fn needed_present(fields: &[&Field], all_default: bool) -> TokenStream {
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

/// The JSON names and aliases of the fields read by their key.
fn keys(fields: &[&Field]) -> Vec<String> {
    keyed(fields)
        .into_iter()
        .flat_map(|field| {
            let aliases = field.attrs.serde.aliases.iter().map(syn::LitStr::value);
            std::iter::once(field.name.clone()).chain(aliases)
        })
        .collect()
}

/// Whether an object of these fields reads `key` (an `&str` expression): one of their names or
/// aliases, or a key a flattened field's type reads.
fn reads(fields: &[&Field], key: TokenStream) -> TokenStream {
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
fn any_shown(fields: &[&Field]) -> Vec<TokenStream> {
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
fn update_loop(fields: &[&Field], slot: impl Fn(usize, &Field) -> TokenStream) -> TokenStream {
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

/// Where the slots of a partial form stand in its JSON: a struct's fields at their members' keys, a
/// tuple's positions at their items' indices.
#[derive(Clone, Copy)]
enum At {
    /// An object's members, by key.
    Key,
    /// An array's items, by index.
    Index,
}

impl At {
    /// The pattern of the field at `i` among the live fields, in a match on its key or index.
    fn label(self, i: usize, field: &Field) -> TokenStream {
        match self {
            At::Key => names(field),
            At::Index => {
                let i = tuple::index(i);
                quote!(#i)
            }
        }
    }

    /// The binding of the last member's key (`__key`) or the last item's index (`__index`), and the
    /// call that gives it with its value.
    fn last(self) -> (TokenStream, TokenStream) {
        match self {
            At::Key => (quote!(__key), quote!(__node.last_entry())),
            At::Index => (quote!(__index), quote!(__node.last_item())),
        }
    }
}

/// The body of `PartialValue::update_below` for a struct (or, `At::Index`, a tuple struct): the
/// field of the last member (or item), bound by `slot`, if the change is below it and it can be
/// descended into (see `descend_field`), else the struct's own update.
fn update_below_body(
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
fn growable<'f, 'a>(
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
fn growing_match(
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
fn step_match(
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
enum Walk {
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
    fn passed_on(self) -> (Ident, TokenStream) {
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
    fn call(self) -> (Ident, TokenStream) {
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
fn grow_at_fn(partial: impl ToTokens, step_match: TokenStream) -> TokenStream {
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
fn update_at_fn(partial: impl ToTokens, step_match: TokenStream) -> TokenStream {
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
fn growing_at_fn(partial: impl ToTokens, step_match: TokenStream) -> TokenStream {
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
fn growing_signature(partial: impl ToTokens) -> TokenStream {
    let p = private();
    quote! {
        fn growing<'__p, '__n>(
            __partial: &'__p mut #partial,
            __node: #p::Node<'__n>,
            __path: &mut ::std::vec::Vec<u32>,
        ) -> ::core::option::Option<(&'__p mut ::std::string::String, &'__n str)>
    }
}

/// What differs between a struct's and a tuple struct's `PartialValue` impl (see [`value_impls`]).
struct ValueBody<'s> {
    /// The body of `shown`.
    shown: TokenStream,
    /// The methods only one of them writes (`fits`, `keys`, `reads`).
    more: TokenStream,
    /// The statements that bring `__partial` up to date with `__node`, setting `__changed`.
    update: TokenStream,
    /// The body of `update_below`.
    update_below: TokenStream,
    /// The body of `growing`.
    growing: TokenStream,
    /// Each walk's step match.
    steps: &'s dyn Fn(Walk) -> TokenStream,
}

/// The `PartialField` and `PartialValue` impls of the struct or tuple struct `input` with the live
/// `fields`, whose partial form is `partial` with `generics`: built from the default by `update`.
fn value_impls(
    input: &syn::DeriveInput,
    fields: &[&Field],
    generics: &syn::Generics,
    partial: &TokenStream,
    body: ValueBody,
) -> TokenStream {
    let p = private();
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let field_generics = ty::bounded(input, fields, quote!(#p::PartialField + 'static));
    let (_, _, field_where) = field_generics.split_for_impl();
    let ValueBody {
        shown,
        more,
        update,
        update_below,
        growing,
        steps,
    } = body;
    let growing_signature = growing_signature(partial);
    let grow_at = grow_at_fn(partial, steps(Walk::Grow));
    let update_at = update_at_fn(partial, steps(Walk::Update));
    let growing_at = growing_at_fn(partial, steps(Walk::Growing));
    quote! {
        #[automatically_derived]
        impl #impl_generics #p::PartialField for #ident #ty_generics #field_where {}

        #[automatically_derived]
        impl #impl_generics #p::PartialValue for #ident #ty_generics #where_clause {
            type Partial = #partial;

            fn shown(__node: #p::Node<'_>) -> bool {
                #shown
            }

            #more

            fn build(__node: #p::Node<'_>) -> ::core::option::Option<#partial> {
                if !<Self as #p::PartialValue>::shown(__node) {
                    return ::core::option::Option::None;
                }
                let mut __partial: #partial = ::core::default::Default::default();
                <Self as #p::PartialValue>::update(&mut __partial, __node, 0);
                ::core::option::Option::Some(__partial)
            }

            #[allow(unused_variables, unused_mut)]
            fn update(__partial: &mut #partial, __node: #p::Node<'_>, __since: u64) -> bool {
                let mut __changed = false;
                #update
                __changed
            }

            #[allow(unused_variables)]
            fn update_below(
                __partial: &mut #partial,
                __node: #p::Node<'_>,
                __since: u64,
                __depth: usize,
            ) -> bool {
                #update_below
            }

            #[inline]
            #[allow(unused_variables, unreachable_code)]
            #growing_signature {
                #growing
            }

            #grow_at

            #update_at

            #growing_at
        }
    }
}

fn expand_struct(input: &Struct) -> TokenStream {
    let p = private();
    let ident = &input.original.ident;
    let vis = &input.original.vis;
    let partial_ident = name(ident);
    let fields = live(&input.fields);
    let generics = generics(input.original, ident, &fields);
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let partial = quote!(#partial_ident #ty_generics);
    let doc = doc(
        ident,
        "every field an `Option`, filled in as the model writes it",
    );
    let declarations = declarations(&fields, true);
    let required = required_shown(&fields);
    let any_shown = any_shown(&fields);
    let needed = needed_present(&fields, input.attrs.serde.default.is_some());
    let keys = keys(&fields);
    let reads = reads(&fields, quote!(__key));
    let update = update_loop(&fields, |_, field| {
        let field = &field.original.ident;
        quote!(&mut __partial.#field)
    });
    let slot = |_: usize, field: &Field| {
        let field = &field.original.ident;
        quote!(__partial.#field)
    };
    let growing = growing_match(&fields, At::Key, slot);
    let update_below = update_below_body(&fields, At::Key, slot);
    let steps = |walk| step_match(&fields, slot, walk);
    let (attributes, derived) = if input.original.generics.params.is_empty() {
        let attributes = attributes(&doc, quote!(::core::default::Default));
        (attributes, TokenStream::new())
    } else {
        generic_derives(&doc, &partial_ident, &generics, &fields)
    };
    let params = input
        .original
        .generics
        .type_params()
        .map(|param| &param.ident);
    let marker = (!input.original.generics.params.is_empty()).then(|| {
        quote! {
            #[doc(hidden)]
            #[serde(skip)]
            __params: ::core::marker::PhantomData<fn() -> (#(#params,)*)>,
        }
    });
    let value_impls = value_impls(
        input.original,
        &fields,
        &generics,
        &partial,
        ValueBody {
            // Shown once a field is (an empty `{` is not a value yet), and its required fields are.
            shown: quote! {
                __node.is_object()
                    && #required
                    && (__node.is_complete() #(|| #any_shown)*)
            },
            more: quote! {
                fn fits(__node: #p::Node<'_>) -> bool {
                    <Self as #p::PartialValue>::shown(__node) && (!__node.is_complete() || #needed)
                }

                fn keys() -> &'static [&'static str] {
                    &[#(#keys,)*]
                }

                fn reads(__key: &str) -> bool {
                    #reads
                }
            },
            update,
            update_below,
            growing,
            steps: &steps,
        },
    );
    quote! {
        #attributes
        #vis struct #partial_ident #impl_generics #where_clause {
            #(#declarations,)*
            #marker
        }

        #derived

        #value_impls
    }
}

fn variant_fields<'v, 'a>(variant: &'v Variant<'a>) -> Vec<&'v Field<'a>> {
    match variant.style {
        Style::Named => live(&variant.fields),
        _ => Vec::new(),
    }
}

/// One match arm per variant of a tagged enum's partial form: its fields bound to `__f0`, `__f1`, ...,
/// and `body` of its fields, each field's slot the binding the closure it is given names.
fn variant_arms(
    partial: &Ident,
    variants: &[&Variant],
    body: impl Fn(&[&Field], &dyn Fn(usize, &Field) -> TokenStream) -> TokenStream,
) -> Vec<TokenStream> {
    variants
        .iter()
        .map(|variant| {
            let fields = variant_fields(variant);
            let (pattern, bindings) = struct_pattern(partial, variant);
            let slot = |i: usize, _: &Field| {
                let binding = &bindings[i];
                quote!(#binding)
            };
            let body = body(&fields, &slot);
            quote! {
                #pattern => { #body }
            }
        })
        .collect()
}

/// The bindings of a variant's fields in a match: `__f0`, `__f1`, ...
fn bindings(count: usize) -> Vec<Ident> {
    (0..count).map(|i| format_ident!("__f{i}")).collect()
}

/// The pattern (an expression too) of a struct variant's partial form whose fields are its
/// bindings (see [`bindings`]), and those bindings.
fn struct_pattern(partial: &Ident, variant: &Variant) -> (TokenStream, Vec<Ident>) {
    let variant_ident = &variant.original.ident;
    let fields = variant_fields(variant);
    let bindings = bindings(fields.len());
    let idents = fields.iter().map(|f| &f.original.ident);
    let pattern = quote!(#partial::#variant_ident { #(#idents: #bindings,)* });
    (pattern, bindings)
}

/// The pattern of a struct variant's partial form (see [`struct_pattern`]), its bindings, and the
/// statements that bring them up to date with the object `__node`, setting `__changed`: each binding
/// a `&mut Option` into the partial form, or (with `owned`) an `Option` of its own.
fn struct_update(
    partial: &Ident,
    variant: &Variant,
    owned: bool,
) -> (TokenStream, Vec<Ident>, TokenStream) {
    let (pattern, bindings) = struct_pattern(partial, variant);
    let update = update_loop(&variant_fields(variant), |i, _| {
        let binding = &bindings[i];
        if owned {
            quote!(&mut #binding)
        } else {
            quote!(#binding)
        }
    });
    (pattern, bindings, update)
}

/// `shown` and `build` of an enum whose partial form is known once its tag `tag` is read whole and
/// names a variant (any other string names the `#[serde(other)]` variant, if there is one): shown as
/// `shown` says of that variant, built from its `empty` partial form brought up to date.
fn known_by_tag(
    tag: &str,
    variants: &[&Variant],
    shown: impl Fn(&Variant) -> TokenStream,
    empty: impl Fn(&Variant) -> TokenStream,
) -> TokenStream {
    let p = private();
    let named: Vec<&Variant> = variants.iter().copied().filter(|v| !v.other()).collect();
    let names_of = |variant: &Variant| {
        let name = &variant.name;
        let aliases = variant.aliases();
        quote!(#name #(| #aliases)*)
    };
    let shown_arms = named.iter().map(|variant| {
        let names = names_of(variant);
        let shown = shown(variant);
        quote!(::core::option::Option::Some(#names) => #shown,)
    });
    let empty_arms = named.iter().map(|variant| {
        let names = names_of(variant);
        let empty = empty(variant);
        quote!(#names => #empty,)
    });
    let (other_shown, other_empty) = match variants.iter().find(|variant| variant.other()) {
        Some(variant) => (quote!(true), empty(variant)),
        None => (quote!(false), quote!(return ::core::option::Option::None)),
    };
    quote! {
        fn shown(__node: #p::Node<'_>) -> bool {
            match #p::complete_str(__node.get(#tag)) {
                #(#shown_arms)*
                ::core::option::Option::Some(_) => #other_shown,
                ::core::option::Option::None => false,
            }
        }

        #[allow(unreachable_code)]
        fn build(__node: #p::Node<'_>) -> ::core::option::Option<Self::Partial> {
            if !<Self as #p::PartialValue>::shown(__node) {
                return ::core::option::Option::None;
            }
            let mut __partial = match #p::complete_str(__node.get(#tag))? {
                #(#empty_arms)*
                _ => #other_empty,
            };
            <Self as #p::PartialValue>::update(&mut __partial, __node, 0);
            ::core::option::Option::Some(__partial)
        }
    }
}

/// An internally tagged enum: an enum of the same variants with the same tag, known once the tag is
/// read whole and names a variant (any other string names the `#[serde(other)]` variant, if there is
/// one). A struct variant's fields are each an `Option`; a newtype variant holds its content's partial
/// form, read from the same object (the tag aside), `None` until shown, serialized as `{}` then.
fn expand_tagged(input: &Enum) -> TokenStream {
    let p = private();
    let ident = &input.original.ident;
    let partial = name(ident);
    let tag = input
        .attrs
        .serde
        .tag
        .as_ref()
        .map(|t| t.value())
        .unwrap_or_default();
    let doc = doc(ident, "known once its tag is read, every field an `Option`");
    let variants = input.live();
    // The struct and unit variants, and the newtype variants with their field.
    let with_fields: Vec<&Variant> = variants
        .iter()
        .copied()
        .filter(|v| newtype(v).is_none())
        .collect();
    let newtypes: Vec<(&Variant, &Field)> = variants
        .iter()
        .filter_map(|v| Some((*v, newtype(v)?)))
        .collect();
    let declarations = variants.iter().map(|variant| {
        let name = &variant.name;
        let variant_ident = &variant.original.ident;
        let doc = format!("`{name}`.");
        // A unit variant stays one (`V {}` still builds and matches it below).
        let body = match (&variant.style, newtype(variant)) {
            (_, Some(field)) => {
                let ty = field_type(field);
                quote!((#[serde(serialize_with = "::llm_extract::__private::content_or_empty")] #ty))
            }
            (Style::Named, _) => {
                let fields = declarations(&variant_fields(variant), false);
                quote!({ #(#fields,)* })
            }
            _ => TokenStream::new(),
        };
        quote! {
            #[doc = #doc]
            #[serde(rename = #name)]
            #variant_ident #body
        }
    });
    let empty = |variant: &Variant| {
        let variant_ident = &variant.original.ident;
        if newtype(variant).is_some() {
            return quote!(#partial::#variant_ident(::core::option::Option::None));
        }
        let fields = variant_fields(variant);
        let idents = fields.iter().map(|f| &f.original.ident);
        quote!(#partial::#variant_ident { #(#idents: ::core::option::Option::None,)* })
    };
    let known = known_by_tag(
        &tag,
        &variants,
        |variant| required_shown(&variant_fields(variant)),
        empty,
    );
    let update_arms = variant_arms(&partial, &with_fields, |fields, slot| {
        update_loop(fields, slot)
    });
    let newtype_update_arms = newtypes.iter().map(|(variant, field)| {
        let variant_ident = &variant.original.ident;
        let sync = sync_expr(field, quote!(__f0));
        // serde reads the content from the object without the tag: a map does not hold it.
        let strip = (ty::kind(field.ty) == ty::Kind::Map).then(|| {
            quote! {
                if let ::core::option::Option::Some(__map) = __f0.as_mut() {
                    #p::without_keys(__map, &[#tag]);
                }
            }
        });
        quote! {
            #partial::#variant_ident(__f0) => {
                let __value = __node;
                __changed |= #sync;
                #strip
            }
        }
    });
    let growing_arms = variant_arms(&partial, &with_fields, |fields, slot| {
        growing_match(fields, At::Key, slot)
    });
    // A newtype variant takes no step of its own: its content is the same object.
    let passed_on = |walk: Option<Walk>| {
        newtypes
            .iter()
            .map(|(variant, field)| {
                let variant_ident = &variant.original.ident;
                let ty = field.ty;
                let grows = !done(field) && field.attrs.extract.schemars.is_none();
                let (method, args) = match walk {
                    None => (format_ident!("growing"), quote!(__node, __path)),
                    Some(walk) => walk.passed_on(),
                };
                let call = if grows {
                    quote_spanned!(ty.span()=> <#ty as #p::PartialValue>::#method(__f0.as_mut()?, #args))
                } else {
                    quote!(::core::option::Option::None)
                };
                quote!(#partial::#variant_ident(__f0) => #call,)
            })
            .collect::<Vec<_>>()
    };
    let growing_newtypes = passed_on(None);
    // Each walk's step match, inside a match on the variant.
    let steps = |walk| {
        let arms = variant_arms(&partial, &with_fields, |fields, slot| {
            step_match(fields, slot, walk)
        });
        let newtypes = passed_on(Some(walk));
        quote!(match __partial { #(#arms)* #(#newtypes)* })
    };
    let own = quote!(Self::Partial);
    let grow_at = grow_at_fn(&own, steps(Walk::Grow));
    let update_at = update_at_fn(&own, steps(Walk::Update));
    let growing_at = growing_at_fn(&own, steps(Walk::Growing));
    let growing_signature = growing_signature(&own);
    let methods = quote! {
        #known

        #[allow(unused_variables, unused_mut)]
        fn update(__partial: &mut Self::Partial, __node: #p::Node<'_>, __since: u64) -> bool {
            let mut __changed = false;
            match __partial {
                #(#update_arms)*
                #(#newtype_update_arms)*
            }
            __changed
        }

        #[inline]
        #[allow(unused_variables, unreachable_code)]
        #growing_signature {
            match __partial {
                #(#growing_arms)*
                #(#growing_newtypes)*
            }
        }

        #grow_at

        #update_at

        #growing_at
    };
    frame::items(
        input,
        frame::Form {
            doc: &doc,
            serde: quote!(#[serde(tag = #tag)]),
            declarations: declarations.collect(),
            methods,
        },
    )
}

/// The declaration of a variant of a tagged enum's partial form, under its JSON name: a unit variant
/// stays one, a newtype variant holds its field's partial form, a struct variant its fields each an
/// `Option`, a tuple variant its positions each an `Option`.
fn tagged_declaration(variant: &Variant) -> TokenStream {
    let name = &variant.name;
    let variant_ident = &variant.original.ident;
    let doc = format!("`{name}`.");
    let body = variant_body(variant, field_type);
    quote! {
        #[doc = #doc]
        #[serde(rename = #name)]
        #variant_ident #body
    }
}

/// What follows a variant's name in its partial form's declaration: nothing for a unit variant,
/// `(ty)` for a newtype variant (`ty` of its field), a struct variant's fields each an `Option`, a
/// tuple variant's positions each an `Option`.
fn variant_body(variant: &Variant, ty: impl Fn(&Field) -> TokenStream) -> TokenStream {
    match (&variant.style, newtype(variant)) {
        (Style::Unit, _) => TokenStream::new(),
        (_, Some(field)) => {
            let ty = ty(field);
            quote!((#ty))
        }
        (Style::Tuple(_), None) => {
            let positions = tuple::declarations(&live(&variant.fields), false, true);
            quote!((#(#positions,)*))
        }
        (Style::Named, _) => {
            let fields = declarations(&live(&variant.fields), false);
            quote!({ #(#fields,)* })
        }
    }
}

/// The field of a newtype variant.
fn newtype<'v, 'a>(variant: &'v Variant<'a>) -> Option<&'v Field<'a>> {
    match variant.style {
        Style::Tuple(fields) if fields.unnamed.len() == 1 => variant.fields.first(),
        _ => None,
    }
}

/// An externally tagged enum with data: an enum of the same variants, known once the name (a unit
/// variant's string) or the one key (any other variant's) is read; a newtype variant holds its field's
/// partial form, a struct variant its fields each an `Option`, a tuple variant its positions each an
/// `Option`. Any other complete string names the `#[serde(other)]` variant, if there is one.
fn expand_external(input: &Enum) -> TokenStream {
    let p = private();
    let ident = &input.original.ident;
    let partial = name(ident);
    let doc = doc(
        ident,
        "known once its name or its key is read, a variant's fields each an `Option`",
    );
    let variants = input.live();
    let names_of = |variant: &Variant| {
        let name = &variant.name;
        let aliases = variant.aliases();
        quote!(&[#name #(, #aliases)*])
    };
    let declarations = variants.iter().map(|variant| tagged_declaration(variant));
    let unit_arms = variants
        .iter()
        .filter(|v| matches!(v.style, Style::Unit))
        .map(|variant| {
            let variant_ident = &variant.original.ident;
            let name = &variant.name;
            let aliases = variant.aliases();
            quote!(#name #(| #aliases)* => ::core::option::Option::Some(#partial::#variant_ident),)
        });
    // A string naming a variant with data is none of them; any other names the catch-all, if any.
    let data_names: Vec<TokenStream> = variants
        .iter()
        .filter(|v| !matches!(v.style, Style::Unit))
        .map(|variant| {
            let name = &variant.name;
            let aliases = variant.aliases();
            quote!(#name #(| #aliases)*)
        })
        .collect();
    let data_arm =
        (!data_names.is_empty()).then(|| quote!(#(#data_names)|* => ::core::option::Option::None,));
    let other = match variants.iter().find(|variant| variant.other()) {
        Some(variant) => {
            let variant_ident = &variant.original.ident;
            quote!(::core::option::Option::Some(#partial::#variant_ident))
        }
        None => quote!(::core::option::Option::None),
    };
    let readable = quote!(<#p::Value as #p::PartialValue>::shown(__value));
    let keyed = variants.iter().filter(|v| !matches!(v.style, Style::Unit)).map(|variant| {
        let variant_ident = &variant.original.ident;
        let names = names_of(variant);
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
            (Style::Tuple(_), None) => (tuple::empty(&partial, variant), readable.clone()),
            _ => (
                quote!(#partial::#variant_ident(::core::option::Option::None)),
                readable.clone(),
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
    });
    let update_arms = variants.iter().map(|variant| {
        let variant_ident = &variant.original.ident;
        let names = names_of(variant);
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
                let (pattern, update) = tuple::variant_update(&partial, variant);
                quote! {
                    #pattern => match #p::member(__node, #names) {
                        ::core::option::Option::Some(__node) => #update,
                        ::core::option::Option::None => false,
                    },
                }
            }
            (Style::Named, _) => {
                let (pattern, _, update) = struct_update(&partial, variant, false);
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
    });
    let methods = quote! {
        fn shown(__node: #p::Node<'_>) -> bool {
            <Self as #p::PartialValue>::build(__node).is_some()
        }

        #[allow(unreachable_code)]
        fn build(__node: #p::Node<'_>) -> ::core::option::Option<Self::Partial> {
            if let ::core::option::Option::Some(__name) =
                #p::complete_str(::core::option::Option::Some(__node))
            {
                return match __name {
                    #(#unit_arms)*
                    #data_arm
                    _ => #other,
                };
            }
            if !__node.is_object() {
                return ::core::option::Option::None;
            }
            #(#keyed)*
            ::core::option::Option::None
        }

        #[allow(unused_variables)]
        fn update(__partial: &mut Self::Partial, __node: #p::Node<'_>, __since: u64) -> bool {
            match __partial {
                #(#update_arms)*
            }
        }
    };
    frame::items(
        input,
        frame::Form {
            doc: &doc,
            serde: TokenStream::new(),
            declarations: declarations.collect(),
            methods,
        },
    )
}

fn expand_fieldless(input: &Enum) -> TokenStream {
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

/// What the fallback writes when the input has errors: an impl that cannot run, so uses of the
/// partial form do not add errors of their own.
pub fn fallback(input: &syn::DeriveInput) -> TokenStream {
    let p = private();
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    quote! {
        #[automatically_derived]
        impl #impl_generics #p::PartialField for #ident #ty_generics #where_clause {}

        #[automatically_derived]
        impl #impl_generics #p::PartialValue for #ident #ty_generics #where_clause {
            type Partial = ();

            fn shown(_: #p::Node<'_>) -> bool {
                ::core::unreachable!()
            }

            fn build(_: #p::Node<'_>) -> ::core::option::Option<()> {
                ::core::unreachable!()
            }

            fn update(_: &mut (), _: #p::Node<'_>, _: u64) -> bool {
                ::core::unreachable!()
            }
        }
    }
}
