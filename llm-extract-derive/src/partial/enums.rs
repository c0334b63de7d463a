//! What the partial forms of enums share: the enum's declaration with its doc and derives, and the
//! `PartialField` and `PartialValue` impls around the methods each form writes. A generic enum's
//! partial form takes the enum's type parameters, bounded as a generic struct's (see `bounds.rs`),
//! and implements `Debug`, `Clone` and `PartialEq` by hand, as a generic struct's does (see
//! `structs.rs`).

use super::bounds::generics;
use super::derives::{attributes, doc, generic_attributes};
use super::model_view::{all_held, live, newtype};
use super::{name, private};
use crate::ast::{Enum, Style, Variant};
use crate::ty;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::ext::IdentExt;
use syn::Ident;

/// A variant of an enum's partial form, as the hand-written impls of a generic one match it.
struct Shape<'a> {
    /// The variant's name in Rust.
    ident: &'a Ident,
    /// How it holds its data.
    held: Held,
}

/// How a variant of a partial form holds its data.
enum Held {
    /// Nothing.
    Unit,
    /// This many unnamed fields (a newtype variant's one, a tuple variant's positions).
    Tuple(usize),
    /// Fields with these names.
    Named(Vec<Ident>),
}

impl Held {
    /// How many fields it holds.
    fn count(&self) -> usize {
        match self {
            Held::Unit => 0,
            Held::Tuple(count) => *count,
            Held::Named(idents) => idents.len(),
        }
    }
}

impl<'a> Shape<'a> {
    /// The shape of `variant`'s partial form: a struct variant keeps its live fields, a newtype
    /// variant holds its field's partial form, a tuple variant a position per live field.
    fn of(variant: &'a Variant) -> Self {
        let held = match variant.style {
            Style::Unit => Held::Unit,
            Style::Tuple(_) if newtype(variant).is_some() => Held::Tuple(1),
            Style::Tuple(_) => Held::Tuple(live(&variant.fields).len()),
            Style::Named => Held::Named(
                live(&variant.fields)
                    .iter()
                    .filter_map(|field| field.original.ident.clone())
                    .collect(),
            ),
        };
        Shape {
            ident: &variant.original.ident,
            held,
        }
    }
}

/// The parts of an enum's partial form that differ from one representation to another.
pub struct Form<'a> {
    /// What it shows, for its doc (see `derives::doc`).
    pub what: &'a str,
    /// The `#[serde(..)]` attributes that make it serialize as the enum reads (its tag, if any).
    pub serde: TokenStream,
    /// The live variants' declarations, in order.
    pub declarations: Vec<TokenStream>,
    /// The methods of the `PartialValue` impl (naming the partial form `Self::Partial`).
    pub methods: TokenStream,
}

/// The partial form's enum, its derives, and the `PartialField` and `PartialValue` impls.
pub fn items(input: &Enum, form: Form) -> TokenStream {
    let p = private();
    let ident = &input.original.ident;
    let vis = &input.original.vis;
    let partial = name(ident);
    let doc = doc(ident, form.what);
    let variants = input.live();
    // The fields whose partial forms the variants hold (see `read::held`).
    let fields = all_held(&variants);
    let generics = generics(input.original, ident, &fields);
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let field_generics = ty::bounded(input.original, &fields, quote!(#p::PartialField + 'static));
    let (_, _, field_where) = field_generics.split_for_impl();
    let (attributes, derived) = if input.original.generics.params.is_empty() {
        (attributes(&doc, TokenStream::new()), TokenStream::new())
    } else {
        let shapes: Vec<Shape> = variants.iter().map(|v| Shape::of(v)).collect();
        derives(&doc, &partial, &generics, &shapes)
    };
    let Form {
        serde,
        declarations,
        methods,
        ..
    } = form;
    quote! {
        #attributes
        #serde
        #vis enum #partial #impl_generics #where_clause {
            #(#declarations,)*
        }

        #derived

        #[automatically_derived]
        impl #impl_generics #p::PartialField for #ident #ty_generics #field_where {}

        #[automatically_derived]
        impl #impl_generics #p::PartialValue for #ident #ty_generics #where_clause {
            type Partial = #partial #ty_generics;

            #methods
        }
    }
}

/// A generic enum's partial form derives `Serialize` with its own bounds only, and implements
/// `Debug`, `Clone` and `PartialEq` by hand, bounded as the enum is: the std derives would ask the
/// same of each type parameter, which the partial form, holding only partial forms, does not need.
fn derives(
    doc: &str,
    partial: &Ident,
    generics: &syn::Generics,
    shapes: &[Shape],
) -> (TokenStream, TokenStream) {
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let attributes = generic_attributes(doc);
    let clone_arms = shapes.iter().map(|shape| shape.clone_arm(partial));
    let debug_arms = shapes.iter().map(|shape| shape.debug_arm(partial));
    let eq_arms = shapes.iter().map(|shape| shape.eq_arm(partial));
    let impls = quote! {
        #[automatically_derived]
        impl #impl_generics ::core::clone::Clone for #partial #ty_generics #where_clause {
            fn clone(&self) -> Self {
                match self {
                    #(#clone_arms)*
                }
            }
        }

        #[automatically_derived]
        impl #impl_generics ::core::fmt::Debug for #partial #ty_generics #where_clause {
            fn fmt(&self, __f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                match self {
                    #(#debug_arms)*
                }
            }
        }

        #[automatically_derived]
        impl #impl_generics ::core::cmp::PartialEq for #partial #ty_generics #where_clause {
            #[allow(unreachable_patterns)]
            fn eq(&self, __other: &Self) -> bool {
                match (self, __other) {
                    #(#eq_arms)*
                    _ => false,
                }
            }
        }
    };
    (attributes, impls)
}

/// `__{prefix}0`, `__{prefix}1`, ...: the bindings of `count` fields of a variant.
fn bound(prefix: &str, count: usize) -> Vec<Ident> {
    (0..count).map(|i| format_ident!("__{prefix}{i}")).collect()
}

impl Shape<'_> {
    /// The pattern of this variant of `partial`, its fields bound to `__{prefix}0`, `__{prefix}1`, ...
    fn pattern(&self, partial: &Ident, prefix: &str) -> TokenStream {
        let variant = self.ident;
        match &self.held {
            Held::Unit => quote!(#partial::#variant),
            Held::Tuple(count) => {
                let bindings = bound(prefix, *count);
                quote!(#partial::#variant(#(#bindings,)*))
            }
            Held::Named(idents) => {
                let bindings = bound(prefix, idents.len());
                quote!(#partial::#variant { #(#idents: #bindings,)* })
            }
        }
    }

    /// The arm of `Clone::clone` for this variant.
    fn clone_arm(&self, partial: &Ident) -> TokenStream {
        let variant = self.ident;
        let from = self.pattern(partial, "a");
        let bindings = bound("a", self.held.count());
        let to = match &self.held {
            Held::Unit => quote!(#partial::#variant),
            Held::Tuple(_) => {
                quote!(#partial::#variant(#(::core::clone::Clone::clone(#bindings),)*))
            }
            Held::Named(idents) => quote! {
                #partial::#variant { #(#idents: ::core::clone::Clone::clone(#bindings),)* }
            },
        };
        quote!(#from => #to,)
    }

    /// The arm of `Debug::fmt` for this variant (its formatter `__f`).
    fn debug_arm(&self, partial: &Ident) -> TokenStream {
        let from = self.pattern(partial, "a");
        let name = self.ident.unraw().to_string();
        let bindings = bound("a", self.held.count());
        let body = match &self.held {
            Held::Unit => quote!(__f.write_str(#name)),
            Held::Tuple(_) => quote!(__f.debug_tuple(#name)#(.field(#bindings))*.finish()),
            Held::Named(idents) => {
                let labels = idents.iter().map(|ident| ident.unraw().to_string());
                quote!(__f.debug_struct(#name)#(.field(#labels, #bindings))*.finish())
            }
        };
        quote!(#from => #body,)
    }

    /// The arm of `PartialEq::eq` for this variant on both sides.
    fn eq_arm(&self, partial: &Ident) -> TokenStream {
        let left = self.pattern(partial, "a");
        let right = self.pattern(partial, "b");
        let lefts = bound("a", self.held.count());
        let rights = bound("b", self.held.count());
        quote!((#left, #right) => true #(&& #lefts == #rights)*,)
    }
}

#[cfg(test)]
mod tests {
    use crate::partial::testing::{expanded, has, item_names};
    use quote::quote;

    #[test]
    fn a_generic_enum_takes_its_parameters_and_derives_by_hand() {
        let file = expanded(quote! { enum Either<L, R> { Left(L), Right { value: R }, Neither } });
        assert_eq!(
            item_names(&file),
            [
                "enum EitherPartial",
                "impl Clone for EitherPartial",
                "impl Debug for EitherPartial",
                "impl PartialEq for EitherPartial",
                "impl PartialField for Either",
                "impl PartialValue for Either"
            ]
        );
        assert!(has(
            &file,
            quote! { #[serde(crate = "::llm_extract::__private::serde", bound = "")] }
        ));
        assert!(has(
            &file,
            quote! { L: ::llm_extract::__private::PartialField + 'static }
        ));
        assert!(has(&file, quote! { type Partial = EitherPartial<L, R>; }));
        assert!(has(
            &file,
            quote! { EitherPartial::Right { value: __a0, } => EitherPartial::Right { value: ::core::clone::Clone::clone(__a0), }, }
        ));
        assert!(has(
            &file,
            quote! { EitherPartial::Left(__a0,) => __f.debug_tuple("Left").field(__a0).finish(), }
        ));
        assert!(has(
            &file,
            quote! { (EitherPartial::Neither, EitherPartial::Neither) => true, }
        ));
    }

    #[test]
    fn an_enum_without_parameters_derives() {
        let file = expanded(quote! { enum Shape { Dot, Circle(f64) } });
        assert!(has(
            &file,
            quote! { #[derive(::core::fmt::Debug, ::core::clone::Clone, ::core::cmp::PartialEq, ::llm_extract::__private::Serialize,)] }
        ));
        assert_eq!(item_names(&file).len(), 3);
    }
}
