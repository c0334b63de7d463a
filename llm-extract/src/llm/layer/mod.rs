//! Layers over any backend, in the manner of tower: [`Retry`], [`Fallback`], [`RateLimit`] and [`Cache`] (and,
//! with the feature `pdf`, `ConvertMedia`: PDFs a backend refuses sent as their text) each wrap
//! an [`Llm`] and are one, so they compose in any order, over the HTTP backends, the embedded engine
//! and a [`from_fn`](crate::llm::from_fn) closure alike. [`LlmExt`] writes them as method calls.
//!
//! What a failure means to them is its [`ErrorClass`] (`class.rs`), the same reading of the status rule
//! the HTTP backends retry by.

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
