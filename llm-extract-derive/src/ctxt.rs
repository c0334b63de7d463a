//! Collects every error found in one derive input, so a user sees all their mistakes at once
//! (serde_derive's `Ctxt`).

use proc_macro2::TokenStream;
use quote::ToTokens;
use std::cell::RefCell;
use std::fmt::Display;

/// The errors found so far.
#[derive(Default)]
pub struct Ctxt {
    errors: RefCell<Vec<syn::Error>>,
}

impl Ctxt {
    /// An empty collection.
    pub fn new() -> Self {
        Ctxt::default()
    }

    /// Records `message`, spanning `tokens` (the exact offending tokens).
    pub fn error_spanned_by(&self, tokens: impl ToTokens, message: impl Display) {
        let tokens: TokenStream = tokens.into_token_stream();
        self.errors
            .borrow_mut()
            .push(syn::Error::new_spanned(tokens, message));
    }

    /// Records an error from `syn`.
    pub fn syn_error(&self, error: syn::Error) {
        self.errors.borrow_mut().push(error);
    }

    /// All errors combined into one, if there were any.
    pub fn check(self) -> Result<(), syn::Error> {
        let mut errors = self.errors.into_inner().into_iter();
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for error in errors {
            combined.combine(error);
        }
        Err(combined)
    }
}
