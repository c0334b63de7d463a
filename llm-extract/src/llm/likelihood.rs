//! Scoring instead of sampling: how likely a model finds each of a few given continuations of a
//! prompt. A backend that can read its model's token probabilities implements [`Likelihood`] (the
//! embedded llama.cpp engine); `extract::choose` builds on it to pick one value of an enum.

use super::{BoxFuture, ChatRequest, LlmError};

/// A model that can score given continuations of a prompt rather than write its own.
pub trait Likelihood: Send + Sync {
    /// The log-probability (natural log, summed over its tokens) of each of `continuations` as the
    /// start of the answer to `request`. A last assistant message in `request` is the answer's start,
    /// which each continuation then follows. Nothing is sampled, so the scores are the same each time.
    fn log_likelihoods<'a>(
        &'a self,
        request: &'a ChatRequest,
        continuations: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<f64>, LlmError>>;
}

impl<T: Likelihood + ?Sized> Likelihood for &T {
    fn log_likelihoods<'a>(
        &'a self,
        request: &'a ChatRequest,
        continuations: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<f64>, LlmError>> {
        (**self).log_likelihoods(request, continuations)
    }
}
