//! What the partial forms of enums share: the fields they hold, the enum's declaration with its
//! derives, and the `PartialField` and `PartialValue` impls around the methods each form writes. A
//! generic enum's partial form takes the enum's type parameters, bounded as a generic struct's (see
//! `super::generics`), and implements `Debug`, `Clone` and `PartialEq` by hand, as a generic
//! struct's does (see `super::generic_derives`).

use super::{attributes, generic_attributes, generics, live, name, newtype, private};
use crate::ast::{Enum, Field, Style, Variant};
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

/// The fields whose partial forms a variant's partial form holds: a struct or tuple variant's live
/// fields, a newtype variant's field.
fn held<'v, 'a>(variant: &'v Variant<'a>) -> Vec<&'v Field<'a>> {
    match (&variant.style, newtype(variant)) {
        (_, Some(field)) => vec![field],
        (Style::Unit, _) => Vec::new(),
        _ => live(&variant.fields),
    }
}

/// The fields held by all the live variants.
fn all_held<'v, 'a>(variants: &[&'v Variant<'a>]) -> Vec<&'v Field<'a>> {
    variants.iter().flat_map(|variant| held(variant)).collect()
}

/// Whether every type parameter of the enum is named by a field whose partial form its partial form
/// holds (a parameter named elsewhere only would be unused there).
pub fn params_used(input: &Enum) -> bool {
    let variants = input.live();
    let fields: Vec<&Field> = all_held(&variants)
        .into_iter()
        .filter(|field| field.attrs.extract.schemars.is_none())
        .collect();
    input
        .original
        .generics
        .type_params()
        .all(|param| fields.iter().any(|field| ty::names(field.ty, &param.ident)))
}

/// The parts of an enum's partial form that differ from one representation to another.
pub struct Form<'a> {
    /// What the doc says it is.
    pub doc: &'a str,
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
    let variants = input.live();
    // The fields whose partial forms the variants hold (see [`held`]).
    let fields = all_held(&variants);
    let generics = generics(input.original, ident, &fields);
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let field_generics = ty::bounded(input.original, &fields, quote!(#p::PartialField + 'static));
    let (_, _, field_where) = field_generics.split_for_impl();
    let (attributes, derived) = if input.original.generics.params.is_empty() {
        (attributes(form.doc, TokenStream::new()), TokenStream::new())
    } else {
        let shapes: Vec<Shape> = variants.iter().map(|v| Shape::of(v)).collect();
        derives(form.doc, &partial, &generics, &shapes)
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
    let bound = |prefix: &str, count: usize| -> Vec<Ident> {
        (0..count).map(|i| format_ident!("__{prefix}{i}")).collect()
    };
    // A variant's pattern, its fields bound to `__{prefix}0`, `__{prefix}1`, ...
    let pattern = |shape: &Shape, prefix: &str| {
        let variant = shape.ident;
        match &shape.held {
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
    };
    let count = |shape: &Shape| shape.held.count();
    let clone_arms = shapes.iter().map(|shape| {
        let variant = shape.ident;
        let from = pattern(shape, "a");
        let bindings = bound("a", count(shape));
        let to = match &shape.held {
            Held::Unit => quote!(#partial::#variant),
            Held::Tuple(_) => {
                quote!(#partial::#variant(#(::core::clone::Clone::clone(#bindings),)*))
            }
            Held::Named(idents) => quote! {
                #partial::#variant { #(#idents: ::core::clone::Clone::clone(#bindings),)* }
            },
        };
        quote!(#from => #to,)
    });
    let debug_arms = shapes.iter().map(|shape| {
        let from = pattern(shape, "a");
        let name = shape.ident.unraw().to_string();
        let bindings = bound("a", count(shape));
        let body = match &shape.held {
            Held::Unit => quote!(__f.write_str(#name)),
            Held::Tuple(_) => quote!(__f.debug_tuple(#name)#(.field(#bindings))*.finish()),
            Held::Named(idents) => {
                let labels = idents.iter().map(|ident| ident.unraw().to_string());
                quote!(__f.debug_struct(#name)#(.field(#labels, #bindings))*.finish())
            }
        };
        quote!(#from => #body,)
    });
    let eq_arms = shapes.iter().map(|shape| {
        let left = pattern(shape, "a");
        let right = pattern(shape, "b");
        let lefts = bound("a", count(shape));
        let rights = bound("b", count(shape));
        quote!((#left, #right) => true #(&& #lefts == #rights)*,)
    });
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
