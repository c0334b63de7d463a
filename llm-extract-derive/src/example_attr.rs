//! `#[extract(example(text = "...", value = EXPR))]` on a type: its worked examples.
//!
//! Checked here, at compile time: the key sits on the type (not a field or variant), it is written
//! `example(...)`, `text` is a non-empty string literal, `value` is given, and nothing else is. The
//! compiler then checks that `value` is a `Self` and that the type implements `serde::Serialize` (both
//! errors point at the value). Whether the value satisfies the schema (bounds, patterns) is checked at
//! run time, when an extraction first asks for the examples; see `Extract::examples`.

use crate::ctxt::Ctxt;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned, ToTokens};
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{Expr, Lit, LitStr};

/// One `example(...)` as written.
pub struct TypeExample {
    /// The text the value is read from.
    pub text: LitStr,
    /// An expression of type `Self`.
    pub value: Expr,
    /// `example(...)` as written, for error spans.
    pub tokens: TokenStream,
}

const FORM: &str =
    "write `#[extract(example(text = \"...\", value = ...))]`, where `value` is a value of \
                    this type";

/// Parses the `(...)` after `example`; `None` (with the errors recorded) when it is malformed.
pub fn parse(cx: &Ctxt, meta: &ParseNestedMeta) -> syn::Result<Option<TypeExample>> {
    let path = meta.path.clone();
    if !meta.input.peek(syn::token::Paren) {
        cx.error_spanned_by(&path, format!("`example` takes parentheses: {FORM}"));
        if meta.input.peek(syn::Token![=]) {
            let _: Expr = meta.value()?.parse()?;
        }
        return Ok(None);
    }
    let mut text: Option<LitStr> = None;
    let mut value: Option<Expr> = None;
    let mut ok = true;
    let mut inner_tokens = TokenStream::new();
    meta.parse_nested_meta(|inner| {
        let key = inner.path.clone();
        let name = key.get_ident().map(ToString::to_string).unwrap_or_default();
        let expr: Expr = match inner.value() {
            Ok(stream) => stream.parse()?,
            Err(_) => {
                cx.error_spanned_by(&key, format!("`{name}` needs a value: {FORM}"));
                ok = false;
                return Ok(());
            }
        };
        inner_tokens.extend(quote!(#key = #expr,));
        match name.as_str() {
            "text" | "value" if (name == "text" && text.is_some()) || (name == "value" && value.is_some()) => {
                cx.error_spanned_by(
                    quote!(#key = #expr),
                    format!("duplicate `{name}` in `example(...)`; each example has one text and one value"),
                );
                ok = false;
            }
            "text" => match &expr {
                Expr::Lit(syn::ExprLit {
                    lit: Lit::Str(lit), ..
                }) if lit.value().trim().is_empty() => {
                    cx.error_spanned_by(
                        lit,
                        "the example's `text` is empty; give the text the value is read from",
                    );
                    ok = false;
                }
                Expr::Lit(syn::ExprLit {
                    lit: Lit::Str(lit), ..
                }) => text = Some(lit.clone()),
                other => {
                    cx.error_spanned_by(
                        other,
                        "the example's `text` must be a string literal, e.g. `text = \"Invoice 12 was paid.\"`",
                    );
                    ok = false;
                }
            },
            "value" => value = Some(expr),
            _ => {
                cx.error_spanned_by(
                    &key,
                    format!("unknown key `{}` in `example(...)`; it takes `text` and `value`", key.to_token_stream()),
                );
                ok = false;
            }
        }
        Ok(())
    })?;
    let tokens = quote!(#path(#inner_tokens));
    let missing = match (&text, &value) {
        (None, _) if ok => Some("text"),
        (_, None) if ok => Some("value"),
        _ => None,
    };
    if let Some(missing) = missing {
        cx.error_spanned_by(&path, format!("`example(...)` needs `{missing}`: {FORM}"));
        return Ok(None);
    }
    match (text, value) {
        (Some(text), Some(value)) if ok => Ok(Some(TypeExample {
            text,
            value,
            tokens,
        })),
        _ => Ok(None),
    }
}

/// Reports `example` written on a field or variant (`what`), where it means nothing.
pub fn check_not_here(cx: &Ctxt, examples: &[TypeExample], what: &str) {
    for example in examples {
        cx.error_spanned_by(
            &example.tokens,
            format!(
                "`example` belongs on the type, not on {what}: it shows a whole value of the type"
            ),
        );
    }
}

/// The `Extract::examples` method for the type's examples; nothing when it has none.
pub fn expand(examples: &[TypeExample]) -> TokenStream {
    if examples.is_empty() {
        return TokenStream::new();
    }
    let made = examples.iter().map(|example| {
        let text = &example.text;
        let value = &example.value;
        // Spanned on the value: a value of another type, or a type without `Serialize`, is reported there.
        quote_spanned! {value.span()=>
            ::llm_extract::extract::Example::new::<Self>(#text, { let value: Self = #value; value })?
        }
    });
    quote! {
        fn examples() -> ::std::result::Result<
            ::std::vec::Vec<::llm_extract::extract::Example>,
            ::llm_extract::extract::ExampleError,
        > {
            ::std::result::Result::Ok(::std::vec![#(#made),*])
        }
    }
}
