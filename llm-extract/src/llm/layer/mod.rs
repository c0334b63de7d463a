//! Layers over any backend, in the manner of tower: [`Retry`], [`Fallback`], [`RateLimit`] and [`Cache`] (and,
//! with the feature `pdf`, `ConvertMedia`: PDFs a backend refuses sent as their text) each wrap
//! an [`Llm`] and are one, so they compose in any order, over the HTTP backends, the embedded engine
//! and a [`from_fn`](crate::llm::from_fn) closure alike. [`LlmExt`] writes them as method calls.
//!
//! What a failure means to them is its [`ErrorClass`] (`class.rs`), the same reading of the status rule
//! the HTTP backends retry by.
//!
//! One file per layer: `retry.rs`, `fallback.rs`, `rate_limit.rs`, `cache.rs` (with its store on disk,
//! `cache_store.rs`) and `convert.rs`.

/// The methods of [`Llm`] a layer passes unchanged to the backend it wraps (`self.inner`), written
/// once: a layer's `impl Llm` names those it does not change, and writes the others itself.
macro_rules! pass_through {
    ($($method:ident)*) => { $(pass_through!(@one $method);)* };
    (@one dialect) => {
        fn dialect(&self) -> crate::schema::Dialect {
            self.inner.dialect()
        }
    };
    (@one constrains_json_lines) => {
        fn constrains_json_lines(&self) -> bool {
            self.inner.constrains_json_lines()
        }
    };
    (@one constrains_grounding) => {
        fn constrains_grounding(&self) -> bool {
            self.inner.constrains_grounding()
        }
    };
    (@one count_tokens) => {
        fn count_tokens(&self, text: &str) -> Option<usize> {
            self.inner.count_tokens(text)
        }
    };
    (@one describe) => {
        fn describe(&self) -> Option<crate::llm::Description> {
            self.inner.describe()
        }
    };
    (@one accepts) => {
        fn accepts(&self, request: &crate::llm::ChatRequest) -> Result<(), crate::llm::LlmError> {
            self.inner.accepts(request)
        }
    };
    (@one gives_logprobs) => {
        fn gives_logprobs(&self) -> bool {
            self.inner.gives_logprobs()
        }
    };
    (@one likelihood) => {
        fn likelihood(&self) -> Option<&dyn crate::llm::Likelihood> {
            self.inner.likelihood()
        }
    };
}

mod cache;
mod cache_store;
mod class;
#[cfg(feature = "pdf")]
mod convert;
mod fallback;
mod rate_limit;
mod retry;

pub use cache::Cache;
pub use cache_store::{CacheError, ResponseStore};
pub use class::{ErrorClass, ErrorClasses};
#[cfg(feature = "pdf")]
#[cfg_attr(docsrs, doc(cfg(feature = "pdf")))]
pub use convert::ConvertMedia;
pub use fallback::Fallback;
pub use rate_limit::RateLimit;
pub use retry::Retry;

use super::{Llm, RetryPolicy};

/// The layers as methods of every backend.
///
/// ```
/// use llm_extract::llm::{from_fn, ChatRequest, ChatResponse, Llm, LlmExt, RetryPolicy};
///
/// let local = from_fn(|_request: ChatRequest| async { Ok(ChatResponse::new("{}")) });
/// let spare = from_fn(|_request: ChatRequest| async { Ok(ChatResponse::new("{}")) });
/// let llm = local
///     .with_rate_limit(60, 100_000)
///     .with_retry(RetryPolicy::new().max_retries(2))
///     .or_else(spare);
/// # let _ = llm;
/// ```
pub trait LlmExt: Llm + Sized + 'static {
    /// This backend, re-sending transient failures under `policy` (see [`Retry`]).
    fn with_retry(self, policy: RetryPolicy) -> Retry<Self> {
        Retry::new(self).policy(policy)
    }

    /// This backend, held to `requests` requests and `tokens` tokens a minute (0: no limit of that
    /// kind; see [`RateLimit`]).
    fn with_rate_limit(self, requests: u32, tokens: u64) -> RateLimit<Self> {
        RateLimit::new(self)
            .requests_per_minute(requests)
            .tokens_per_minute(tokens)
    }

    /// This backend, answering from `store` the requests whose answers an extraction accepted before
    /// (see [`Cache`]).
    fn with_cache(self, store: ResponseStore) -> Cache<Self> {
        Cache::new(self, store)
    }

    /// This backend, then `next` when it fails with a class a [`Fallback`] moves on by.
    fn or_else(self, next: impl Llm + 'static) -> Fallback {
        Fallback::new(self).or_else(next)
    }
}

impl<L: Llm + Sized + 'static> LlmExt for L {}
