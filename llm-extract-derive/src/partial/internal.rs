//! The partial form of an internally tagged enum (`#[serde(tag = "t")]`) of struct, unit and newtype
//! variants: an enum of the same variants with the same tag, known once the tag is read.

use super::fields::{declarations, field_type, required_shown, sync_expr, update_loop};
use super::model_view::{done, newtype, variant_fields};
use super::variant::{known_by_tag, variant_arms};
use super::walk::{
    grow_at_fn, growing_at_fn, growing_match, growing_signature, step_match, update_at_fn, At, Walk,
};
use super::{enums, name, private};
use crate::ast::{Enum, Field, Style, Variant};
use crate::ty;
use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::Ident;
/// An internally tagged enum (tag key `tag`): an enum of the same variants with the same tag, known
/// once the tag is read whole and names a variant (any other string names the `#[serde(other)]`
/// variant, if there is one). A struct variant's fields are each an `Option`; a newtype variant holds
/// its content's partial form, read from the same object (the tag aside), `None` until shown,
/// serialized as `{}` then.
pub fn expand(input: &Enum, tag: &str) -> TokenStream {
    let ident = &input.original.ident;
    let partial = name(ident);
    let variants = input.live();
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
        tag,
        &variants,
        |variant| required_shown(&variant_fields(variant)),
        empty,
    );
    let walks = walks(&partial, &variants, tag);
    enums::items(
        input,
        enums::Form {
            what: "known once its tag is read, every field an `Option`",
            serde: quote!(#[serde(tag = #tag)]),
            declarations: variants.iter().map(|v| declaration(v)).collect(),
            methods: quote!(#known #walks),
        },
    )
}

/// The declaration of a variant, under its JSON name: a unit variant stays one (`V {}` still builds
/// and matches it), a struct variant's fields are each an `Option`, a newtype variant holds its
/// content's partial form, serialized as `{}` while it is `None`.
fn declaration(variant: &Variant) -> TokenStream {
    let name = &variant.name;
    let variant_ident = &variant.original.ident;
    let doc = format!("`{name}`.");
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
}

/// The struct and unit variants among `variants`, and the newtype variants with their field.
fn split<'v, 'a>(
    variants: &[&'v Variant<'a>],
) -> (Vec<&'v Variant<'a>>, Vec<(&'v Variant<'a>, &'v Field<'a>)>) {
    let with_fields = variants
        .iter()
        .copied()
        .filter(|v| newtype(v).is_none())
        .collect();
    let newtypes = variants
        .iter()
        .filter_map(|v| Some((*v, newtype(v)?)))
        .collect();
    (with_fields, newtypes)
}

/// `update`, `growing` and the walks that follow recorded steps: a struct variant's fields as a
/// struct's, a newtype variant's content passed the question on (it is the same object).
fn walks(partial: &Ident, variants: &[&Variant], tag: &str) -> TokenStream {
    let p = private();
    let (with_fields, newtypes) = split(variants);
    let update_arms = variant_arms(partial, &with_fields, |fields, slot| {
        update_loop(fields, slot)
    });
    let newtype_update_arms = newtypes
        .iter()
        .map(|(variant, field)| newtype_update_arm(partial, variant, field, tag));
    let growing_arms = variant_arms(partial, &with_fields, |fields, slot| {
        growing_match(fields, At::Key, slot)
    });
    let growing_newtypes = passed_on(partial, &newtypes, None);
    // Each walk's step match, inside a match on the variant.
    let steps = |walk| {
        let arms = variant_arms(partial, &with_fields, |fields, slot| {
            step_match(fields, slot, walk)
        });
        let newtypes = passed_on(partial, &newtypes, Some(walk));
        quote!(match __partial { #(#arms)* #(#newtypes)* })
    };
    let own = quote!(Self::Partial);
    let grow_at = grow_at_fn(&own, steps(Walk::Grow));
    let update_at = update_at_fn(&own, steps(Walk::Update));
    let growing_at = growing_at_fn(&own, steps(Walk::Growing));
    let growing_signature = growing_signature(&own);
    quote! {
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
    }
}

/// The arm of `update` for a newtype variant: its content synced from the whole object, which for a
/// map leaves out the tag (serde reads the content from the object without it).
fn newtype_update_arm(partial: &Ident, variant: &Variant, field: &Field, tag: &str) -> TokenStream {
    let p = private();
    let variant_ident = &variant.original.ident;
    let sync = sync_expr(field, quote!(__f0));
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
}

/// The arms that pass `growing` (`walk` `None`) or a walk on to each newtype variant's content: a
/// newtype variant takes no step of its own, its content is the same object.
fn passed_on(
    partial: &Ident,
    newtypes: &[(&Variant, &Field)],
    walk: Option<Walk>,
) -> Vec<TokenStream> {
    let p = private();
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
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::partial::testing::{
        enumeration, expanded, has, methods, serde_attrs, variants, STRUCT_METHODS,
    };
    use quote::quote;

    #[test]
    fn known_once_its_tag_names_a_variant() {
        let file = expanded(quote! {
            #[serde(tag = "kind", rename_all = "snake_case")]
            enum Event {
                Start,
                Move { x: i32, #[extract(stream = "required")] y: i32 },
                Note(Inner),
                #[serde(other)]
                Other,
            }
        });
        let partial = enumeration(&file, "EventPartial");
        assert!(
            serde_attrs(&partial.attrs).contains(&quote! { #[serde(tag = "kind")] }.to_string())
        );
        let names: Vec<String> = variants(partial)
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        assert_eq!(names, ["Start", "Move", "Note", "Other"]);
        // A newtype variant's content is serialized as `{}` while it is not shown.
        assert!(has(
            &file,
            quote! { Note(#[serde(serialize_with = "::llm_extract::__private::content_or_empty")] ::core::option::Option< <Inner as ::llm_extract::__private::PartialValue>::Partial>) }
        ));
        // Shown once the tag is read (and a struct variant's required fields are); any other tag
        // names the catch-all.
        assert!(has(
            &file,
            quote! { match ::llm_extract::__private::complete_str(__node.get("kind")) }
        ));
        assert!(has(
            &file,
            quote! { ::core::option::Option::Some("start") => true, }
        ));
        assert!(has(
            &file,
            quote! { ::core::option::Option::Some(_) => true, }
        ));
        assert!(has(
            &file,
            quote! { "move" => EventPartial::Move { x: ::core::option::Option::None, y: ::core::option::Option::None, }, }
        ));
        assert!(has(
            &file,
            quote! { "note" => EventPartial::Note(::core::option::Option::None), }
        ));
        // It grows as a struct does, the newtype variant's content passed the walks on.
        let mut expected = vec!["shown", "build", "update"];
        expected.extend(&STRUCT_METHODS[7..]);
        assert_eq!(methods(&file, "PartialValue"), expected);
        assert!(has(
            &file,
            quote! { EventPartial::Note(__f0) => <Inner as ::llm_extract::__private::PartialValue>::grow_at(__f0.as_mut()?, __path), }
        ));
    }

    #[test]
    fn a_map_content_leaves_out_the_tag() {
        let file = expanded(quote! {
            #[serde(tag = "t")]
            enum E { M(std::collections::HashMap<String, String>), N { a: u8 } }
        });
        assert!(has(
            &file,
            quote! { ::llm_extract::__private::without_keys(__map, &["t"]); }
        ));
        let file = expanded(quote! { #[serde(tag = "t")] enum E { M(Inner) } });
        assert!(!has(&file, quote! { without_keys }));
    }
}
