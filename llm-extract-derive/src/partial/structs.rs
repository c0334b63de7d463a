//! The partial form of a struct with named fields (every field an `Option`, filled in as the model
//! writes it), and the `PartialField` and `PartialValue` impls it shares with a tuple struct's
//! (`tuple.rs`): built from the default by `update`, walked below by `walk.rs`.

use super::bounds::generics;
use super::derives::{attributes, doc, hand_derives, params_marker, HandBodies};
use super::fields::{any_shown, declarations, needed_present, reads, required_shown, update_loop};
use super::model_view::{keys, live};
use super::walk::{
    grow_at_fn, growing_at_fn, growing_match, growing_signature, step_match, update_at_fn,
    update_below_body, At, Walk,
};
use super::{name, private};
use crate::ast::{Field, Struct};
use crate::ty;
use proc_macro2::TokenStream;
use quote::quote;
use syn::ext::IdentExt;
use syn::Ident;

/// What a struct's or a tuple struct's partial form is written from.
pub struct Head<'f, 'a> {
    /// The live fields.
    pub fields: Vec<&'f Field<'a>>,
    /// The partial type's name.
    pub ident: Ident,
    /// Its generics and bounds (see `bounds.rs`).
    pub generics: syn::Generics,
    /// Its doc, saying `what` it shows.
    pub doc: String,
}

impl<'f, 'a> Head<'f, 'a> {
    /// The head of `input`'s partial form, whose doc says it shows `what`.
    pub fn of(input: &'f Struct<'a>, what: &str) -> Self {
        let own = &input.original.ident;
        let fields = live(&input.fields);
        let generics = generics(input.original, own, &fields);
        Head {
            fields,
            ident: name(own),
            generics,
            doc: doc(own, what),
        }
    }

    /// The partial type with its type parameters (`PagePartial<T>`).
    pub fn partial(&self) -> TokenStream {
        let ident = &self.ident;
        let (_, ty_generics, _) = self.generics.split_for_impl();
        quote!(#ident #ty_generics)
    }
}

/// What differs between a struct's and a tuple struct's `PartialValue` impl (see [`value_impls`]).
pub struct ValueBody<'s> {
    /// The body of `shown`.
    pub shown: TokenStream,
    /// The methods only one of them writes (`fits`, `keys`, `reads`).
    pub more: TokenStream,
    /// The statements that bring `__partial` up to date with `__node`, setting `__changed`.
    pub update: TokenStream,
    /// Where its fields stand in its JSON.
    pub at: At,
    /// The slot of the field at a position among the live fields (`__partial.name`, `__partial.0`).
    pub slot: &'s dyn Fn(usize, &Field) -> TokenStream,
}

/// The `PartialField` and `PartialValue` impls of the struct or tuple struct `input`, whose partial
/// form `head` describes: built from the default by `update`, walked below field by field.
pub fn value_impls(input: &syn::DeriveInput, head: &Head, body: ValueBody) -> TokenStream {
    let p = private();
    let ident = &input.ident;
    let fields = &head.fields;
    let partial = &head.partial();
    let (impl_generics, ty_generics, where_clause) = head.generics.split_for_impl();
    let field_generics = ty::bounded(input, fields, quote!(#p::PartialField + 'static));
    let (_, _, field_where) = field_generics.split_for_impl();
    let ValueBody {
        shown,
        more,
        update,
        at,
        slot,
    } = body;
    let update_below = update_below_body(fields, at, slot);
    let growing = growing_match(fields, at, slot);
    let steps = |walk| step_match(fields, slot, walk);
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

/// A struct with named fields: a struct of its live fields, each an `Option` of its type's partial
/// form, shown once a field is (and its required fields are).
pub fn expand(input: &Struct) -> TokenStream {
    let head = Head::of(
        input,
        "every field an `Option`, filled in as the model writes it",
    );
    let fields = &head.fields;
    let partial = &head.ident;
    let (impl_generics, _, where_clause) = head.generics.split_for_impl();
    let vis = &input.original.vis;
    let declarations = declarations(fields, true);
    let slot = |_: usize, field: &Field| {
        let field = &field.original.ident;
        quote!(__partial.#field)
    };
    let update = update_loop(fields, |i, field| {
        let slot = slot(i, field);
        quote!(&mut #slot)
    });
    let (attributes, derived) = if input.original.generics.params.is_empty() {
        let attributes = attributes(&head.doc, quote!(::core::default::Default));
        (attributes, TokenStream::new())
    } else {
        generic_derives(&head.doc, partial, &head.generics, fields)
    };
    let marker = params_marker(input.original, quote!(__params:));
    let value_impls = value_impls(
        input.original,
        &head,
        ValueBody {
            shown: shown(fields),
            more: object_methods(fields, input.attrs.serde.default.is_some()),
            update,
            at: At::Key,
            slot: &slot,
        },
    );
    quote! {
        #attributes
        #vis struct #partial #impl_generics #where_clause {
            #(#declarations,)*
            #marker
        }

        #derived

        #value_impls
    }
}

/// Whether the object `__node` shows the struct: once a field is (an empty `{` is not a value yet),
/// and its required fields are.
fn shown(fields: &[&Field]) -> TokenStream {
    let required = required_shown(fields);
    let any_shown = any_shown(fields);
    quote! {
        __node.is_object()
            && #required
            && (__node.is_complete() #(|| #any_shown)*)
    }
}

/// `fits`, `keys` and `reads` of an object of `fields` (every field defaulted with `all_default`):
/// what an untagged enum asks to choose among variants of objects.
fn object_methods(fields: &[&Field], all_default: bool) -> TokenStream {
    let p = private();
    let needed = needed_present(fields, all_default);
    let keys = keys(fields);
    let reads = reads(fields, quote!(__key));
    quote! {
        fn fits(__node: #p::Node<'_>) -> bool {
            <Self as #p::PartialValue>::shown(__node) && (!__node.is_complete() || #needed)
        }

        fn keys() -> &'static [&'static str] {
            &[#(#keys,)*]
        }

        fn reads(__key: &str) -> bool {
            #reads
        }
    }
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

#[cfg(test)]
mod tests {
    use crate::partial::testing::{
        expanded, field_names, has, item_names, methods, serde_attrs, structure, STRUCT_METHODS,
    };
    use quote::quote;

    #[test]
    fn fields_are_options_under_their_json_names() {
        let file = expanded(quote! {
            struct Person {
                #[serde(rename = "full_name", alias = "n")]
                name: String,
                age: Option<u8>,
                tags: Vec<String>,
                #[serde(skip)]
                cache: u8,
                #[serde(flatten)]
                extra: std::collections::HashMap<String, String>,
                next: Option<Box<Person>>,
            }
        });
        assert_eq!(
            item_names(&file),
            [
                "struct PersonPartial",
                "impl PartialField for Person",
                "impl PartialValue for Person"
            ]
        );
        assert_eq!(methods(&file, "PartialValue"), STRUCT_METHODS);
        let partial = structure(&file, "PersonPartial");
        assert_eq!(
            field_names(&partial.fields),
            ["name", "age", "tags", "extra", "next"]
        );
        let attrs: Vec<Vec<String>> = partial
            .fields
            .iter()
            .map(|f| serde_attrs(&f.attrs))
            .collect();
        assert_eq!(
            attrs[0],
            [quote!(#[serde(rename = "full_name", skip_serializing_if = "::core::option::Option::is_none")]).to_string()]
        );
        assert_eq!(attrs[3], [quote!(#[serde(flatten)]).to_string()]);
        let age = &partial.fields.iter().nth(1).unwrap().ty;
        assert_eq!(
            quote!(#age).to_string(),
            quote! { ::core::option::Option< <Option<u8> as ::llm_extract::__private::PartialValue>::Partial> }.to_string()
        );
        // The keys read by name (the alias too, the flattened map's none); a map takes the others.
        assert!(has(
            &file,
            quote!(&["full_name", "n", "age", "tags", "next",])
        ));
        assert!(has(
            &file,
            quote!(::core::matches!(
                __key,
                "full_name" | "n" | "age" | "tags" | "next"
            ))
        ));
        assert!(has(
            &file,
            quote!(::llm_extract::__private::without_keys(
                __map,
                &["full_name", "age", "tags", "next", "n",]
            ))
        ));
        // A type holding itself is not bounded by itself; the other field types are.
        assert!(has(
            &file,
            quote!(for<'__p> Vec<String> : ::llm_extract::__private::PartialField)
        ));
        let bounds = &partial.generics.where_clause.as_ref().unwrap().predicates;
        assert_eq!(bounds.len(), 4, "{}", quote!(#bounds));
    }

    #[test]
    fn only_fields_serde_needs_make_a_complete_object_fit() {
        let file = expanded(quote! {
            struct S { a: String, b: Option<String>, #[serde(default)] c: u8 }
        });
        assert!(has(
            &file,
            quote!((true && ::llm_extract::__private::member(__node, &["a"]).is_some()))
        ));
        let file = expanded(quote! {
            #[serde(default)]
            struct S { a: String }
        });
        assert!(has(&file, quote!((!__node.is_complete() || (true)))));
    }

    #[test]
    fn stream_settings_gate_what_is_shown() {
        let file = expanded(quote! {
            struct S {
                #[extract(stream = "required")]
                id: String,
                #[extract(stream = "done")]
                code: String,
                note: String,
            }
        });
        // Shown once `id` is; `code` synced only once complete, and never grown.
        assert!(has(
            &file,
            quote!(
                __node.is_object()
                    && true
                    && ::llm_extract::__private::field_shown::<String>(
                        ::llm_extract::__private::member(__node, &["id"]),
                        false
                    )
            )
        ));
        assert!(has(
            &file,
            quote!("code" => ::llm_extract::__private::sync_field::<String>(&mut __partial.code, __value, __since, true),)
        ));
        assert!(has(&file, quote!(__path.push(0u32);)));
        assert!(!has(&file, quote!(__path.push(1u32);)));
        assert!(has(&file, quote!(__path.push(2u32);)));
    }

    #[test]
    fn a_generic_struct_derives_by_hand_and_holds_its_parameters() {
        let file = expanded(quote! {
            struct Page<T> { items: Vec<T>, total: u32 }
        });
        assert_eq!(
            item_names(&file),
            [
                "struct PagePartial",
                "impl Clone for PagePartial",
                "impl Debug for PagePartial",
                "impl PartialEq for PagePartial",
                "impl Default for PagePartial",
                "impl PartialField for Page",
                "impl PartialValue for Page"
            ]
        );
        let partial = structure(&file, "PagePartial");
        assert_eq!(field_names(&partial.fields), ["items", "total", "__params"]);
        assert!(serde_attrs(&partial.attrs).contains(
            &quote!(#[serde(crate = "::llm_extract::__private::serde", bound = "")]).to_string()
        ));
        assert!(has(
            &file,
            quote!(__params: ::core::marker::PhantomData<fn() -> (T,)>)
        ));
        assert!(has(
            &file,
            quote!(T: ::llm_extract::__private::PartialField + 'static)
        ));
        assert!(has(
            &file,
            quote!(true && self.items == __other.items && self.total == __other.total)
        ));
    }
}
