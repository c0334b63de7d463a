//! What the partial code's unit tests share: a derive input expanded to its partial form and parsed
//! back as a Rust file, and views of that file (its items, a type's fields or variants, an impl's
//! methods) to assert on.

use crate::ast::Input;
use crate::ctxt::Ctxt;
use crate::valid;
use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};
use quote::ToTokens;

/// The partial form of the valid derive input `input`, parsed as a file (so it is Rust).
pub fn expanded(input: TokenStream) -> syn::File {
    let input: syn::DeriveInput = syn::parse2(input).expect("a derive input");
    let cx = Ctxt::new();
    let model = Input::from_syn(&cx, &input).expect("a model");
    valid::check(&cx, &model);
    if let Err(error) = cx.check() {
        panic!("{}: {error}", input.ident);
    }
    let tokens = parsable(super::expand(&model));
    syn::parse2(tokens.clone()).unwrap_or_else(|error| panic!("{error}: {tokens}"))
}

/// `tokens` with the value of each `break 'label ::path(..)` in parentheses: syn takes the first `:`
/// of the path for a label's colon (rustc reads the code as written), so the untagged form, whose
/// choice breaks out of a labelled block with `::core::option::Option::Some(..)`, would not parse.
fn parsable(tokens: TokenStream) -> TokenStream {
    let mut out = Vec::new();
    let mut tokens = tokens.into_iter().peekable();
    while let Some(token) = tokens.next() {
        match token {
            TokenTree::Group(group) => {
                let mut inner = Group::new(group.delimiter(), parsable(group.stream()));
                inner.set_span(group.span());
                out.push(TokenTree::Group(inner));
            }
            TokenTree::Punct(quote) if quote.as_char() == '\'' && breaks(&out) => {
                out.push(TokenTree::Punct(quote));
                out.extend(tokens.next());
                let mut value = Vec::new();
                while let Some(token) = tokens.next_if(|t| !is_punct(t, ';')) {
                    value.push(token);
                }
                let value = parsable(value.into_iter().collect());
                out.push(TokenTree::Group(Group::new(Delimiter::Parenthesis, value)));
            }
            other => out.push(other),
        }
    }
    out.into_iter().collect()
}

/// Whether the last token is `break`.
fn breaks(out: &[TokenTree]) -> bool {
    matches!(out.last(), Some(TokenTree::Ident(ident)) if ident == "break")
}

/// Whether `token` is the punctuation `c`.
fn is_punct(token: &TokenTree, c: char) -> bool {
    matches!(token, TokenTree::Punct(punct) if punct.as_char() == c)
}

/// The file's tokens as one string, spaced as `TokenStream`'s `Display` spaces them.
pub fn normalized(file: &syn::File) -> String {
    file.to_token_stream().to_string()
}

/// Whether the file holds `tokens`, compared as `normalized` writes both.
pub fn has(file: &syn::File, tokens: TokenStream) -> bool {
    normalized(file).contains(&tokens.to_string())
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
    find(file, name, |item| match item {
        syn::Item::Struct(item) => Some((&item.ident, item)),
        _ => None,
    })
}

/// The enum `name` of the file.
pub fn enumeration<'f>(file: &'f syn::File, name: &str) -> &'f syn::ItemEnum {
    find(file, name, |item| match item {
        syn::Item::Enum(item) => Some((&item.ident, item)),
        _ => None,
    })
}

/// The item of the file named `name` that `pick` takes (with its name).
fn find<'f, T>(
    file: &'f syn::File,
    name: &str,
    pick: impl Fn(&'f syn::Item) -> Option<(&'f syn::Ident, &'f T)>,
) -> &'f T {
    file.items
        .iter()
        .filter_map(pick)
        .find_map(|(ident, item)| (ident == name).then_some(item))
        .unwrap_or_else(|| panic!("no {name} in {}", normalized(file)))
}

/// The names of `fields` (positions as their index).
pub fn field_names(fields: &syn::Fields) -> Vec<String> {
    fields
        .iter()
        .enumerate()
        .map(|(i, field)| match &field.ident {
            Some(ident) => ident.to_string(),
            None => i.to_string(),
        })
        .collect()
}

/// The `#[serde(..)]` attributes among `attrs`, spaced as `normalized` writes them.
pub fn serde_attrs(attrs: &[syn::Attribute]) -> Vec<String> {
    attrs
        .iter()
        .filter(|attr| attr.path().is_ident("serde"))
        .map(|attr| attr.to_token_stream().to_string())
        .collect()
}

/// The names of the variants of `item`, each with its field names.
pub fn variants(item: &syn::ItemEnum) -> Vec<(String, Vec<String>)> {
    item.variants
        .iter()
        .map(|variant| (variant.ident.to_string(), field_names(&variant.fields)))
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

/// The methods of `PartialValue` a struct's partial form writes, in order.
pub const STRUCT_METHODS: &[&str] = &[
    "shown",
    "fits",
    "keys",
    "reads",
    "build",
    "update",
    "update_below",
    "growing",
    "grow_at",
    "update_at",
    "growing_at",
];
