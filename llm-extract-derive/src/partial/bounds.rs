//! The bounds of a partial type and of its impls: every field type has a partial form (a bound the
//! compiler checks where the partial type is used), and each type parameter a field names is
//! bounded by `PartialField + 'static`.

use super::private;
use crate::ast::Field;
use crate::ty;
use proc_macro2::TokenStream;
use quote::quote;
use syn::spanned::Spanned;
use syn::Ident;

/// The `where` clause of a partial type and of its `PartialValue` impl: every field type has a partial
/// form. Written `for<'__p> F: PartialField`, a bound on a concrete type that the compiler checks where
/// the partial type is used, not where it is defined: so a field type with no schema yields the errors
/// of the schema code (`FieldSchema`, at the field's type) and one more (the derived type's
/// `PartialField` impl), not one per item of the partial code (the struct, each of its derives, the
/// impl's methods). A bound that holds changes nothing: the compiler still takes the field types' own
/// impls. `PartialField` rather than `PartialValue`, whose derived impls carry these bounds: proving
/// them for types that contain each other would loop. Types naming the derived type itself are left
/// out: a recursive type's bound on itself would ask the compiler to prove what it is proving.
pub fn bounds(own: &Ident, fields: &[&Field]) -> TokenStream {
    let predicates = field_bounds(own, fields);
    quote!(where #(#predicates,)*)
}

pub fn field_bounds(own: &Ident, fields: &[&Field]) -> Vec<syn::WherePredicate> {
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
pub fn generics(input: &syn::DeriveInput, own: &Ident, fields: &[&Field]) -> syn::Generics {
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
