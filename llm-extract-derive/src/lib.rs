//! `#[derive(Extract)]` for llm-extract. OWNER: derive helper. Placeholder.

use proc_macro::TokenStream;

/// Derives `llm_extract::Extract`.
#[proc_macro_derive(Extract, attributes(extract))]
pub fn derive_extract(input: TokenStream) -> TokenStream {
    let _ = input;
    TokenStream::new()
}
