//! What the partial code's unit tests share: a derive input expanded to its partial form and parsed
//! back as a Rust file, and views of that file (its items, a type's fields or variants, an impl's
//! methods) to assert on.

use crate::ast::Input;
use crate::ctxt::Ctxt;
use crate::valid;
use proc_macro2::TokenStream;
use quote::{quote, ToTokens};

/// The partial form of the valid derive input `input`, parsed as a file (so it is Rust).
pub fn expanded(input: TokenStream) -> syn::File {
    let input: syn::DeriveInput = syn::parse2(input).expect("a derive input");
    let cx = Ctxt::new();
    let model = Input::from_syn(&cx, &input).expect("a model");
    valid::check(&cx, &model);
    if let Err(error) = cx.check() {
        panic!("{}: {error}", input.ident);
    }
    let tokens = super::expand(&model);
    syn::parse2(tokens.clone()).unwrap_or_else(|error| panic!("{error}: {tokens}"))
}

/// The file's tokens as one string, spaced as `TokenStream`'s `Display` spaces them.
pub fn normalized(file: &syn::File) -> String {
    file.to_token_stream().to_string()
}

/// `tokens` as `normalized` writes them.
pub fn spaced(tokens: TokenStream) -> String {
    tokens.to_string()
}

/// The file's items, named by what they are: `struct XPartial`, `enum XPartial`, `type XPartial`,
/// `impl Trait for X` (the last segments of the paths, no generics).
pub fn item_names(file: &syn::File) -> Vec<String> {
    file.items
        .iter()
        .map(|item| match item {
            syn::Item::Struct(item) => format!("struct {}", item.ident),
            syn::Item::Enum(item) => format!("enum {}", item.ident),
            syn::Item::Type(item) => format!("type {}", item.ident),
            syn::Item::Impl(item) => {
                let last = |path: &syn::Path| path.segments.last().map(|s| s.ident.to_string());
                let trait_ = item.trait_.as_ref().and_then(|(_, path, _)| last(path));
                let self_ty = match &*item.self_ty {
                    syn::Type::Path(ty) => last(&ty.path),
                    _ => None,
                };
                format!(
                    "impl {} for {}",
                    trait_.unwrap_or_default(),
                    self_ty.unwrap_or_default()
                )
            }
            other => panic!("unexpected item: {}", other.to_token_stream()),
        })
        .collect()
}

/// The struct `name` of the file.
pub fn structure<'f>(file: &'f syn::File, name: &str) -> &'f syn::ItemStruct {
    file.items
        .iter()
        .find_map(|item| match item {
            syn::Item::Struct(item) if item.ident == name => Some(item),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no struct {name} in {}", normalized(file)))
}

/// The enum `name` of the file.
pub fn enumeration<'f>(file: &'f syn::File, name: &str) -> &'f syn::ItemEnum {
    file.items
        .iter()
        .find_map(|item| match item {
            syn::Item::Enum(item) if item.ident == name => Some(item),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no enum {name} in {}", normalized(file)))
}

/// Each field of `fields` as `name: type` (positions as `type`), spaced as tokens are.
pub fn field_list(fields: &syn::Fields) -> Vec<String> {
    fields
        .iter()
        .map(|field| {
            let ty = &field.ty;
            match &field.ident {
                Some(ident) => format!("{ident}: {}", quote!(#ty)),
                None => quote!(#ty).to_string(),
            }
        })
        .collect()
}

/// The `#[serde(..)]` attributes among `attrs`, each spaced as tokens are.
pub fn serde_attrs(attrs: &[syn::Attribute]) -> Vec<String> {
    attrs
        .iter()
        .filter(|attr| attr.path().is_ident("serde"))
        .map(|attr| attr.to_token_stream().to_string())
        .collect()
}

/// The names of the methods of the file's impl of `trait_` (its last segment).
pub fn methods(file: &syn::File, trait_: &str) -> Vec<String> {
    let item = file
        .items
        .iter()
        .find_map(|item| match item {
            syn::Item::Impl(item)
                if item.trait_.as_ref().is_some_and(|(_, path, _)| {
                    path.segments.last().is_some_and(|s| s.ident == trait_)
                }) =>
            {
                Some(item)
            }
            _ => None,
        })
        .unwrap_or_else(|| panic!("no impl of {trait_} in {}", normalized(file)));
    item.items
        .iter()
        .filter_map(|item| match item {
            syn::ImplItem::Fn(method) => Some(method.sig.ident.to_string()),
            _ => None,
        })
        .collect()
}

/// The methods every partial form of a struct, a tuple struct or an internally tagged enum writes
/// (each walk included).
pub const WALKS: &[&str] = &["growing", "grow_at", "update_at", "growing_at"];
