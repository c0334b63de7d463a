//! How likely the model finds each of a few continuations of a prompt: the log-probability of every
//! token of each, read from the logits, nothing sampled.
//!
//! Runs on the calling thread, in a context of its own sized to the prompt (the scheduler's context
//! and its cached prefixes are left alone): the prompt is decoded once, then each continuation after
//! it, the continuation before it removed from the cache.

use super::engine::{backend, Engine};
use super::exit::Inside;
use super::{LlamaCpp, LlamaCppError};
use crate::llm::{BoxFuture, ChatRequest, Likelihood, LlmError};
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::token::LlamaToken;
use std::num::NonZeroU32;

impl Engine {
    /// The log-probability (natural log, summed over its tokens) of each of `continuations` following
    /// the answer `request` opens (its prompt, with a last assistant message as the answer's start).
    pub(super) fn log_likelihoods(
        &self,
        request: &ChatRequest,
        continuations: &[String],
    ) -> Result<Vec<f64>, LlamaCppError> {
        let _inside = Inside::enter()?;
        let (prompt, _) = self.prompt(request)?;
        if prompt.is_empty() {
            return Err(LlamaCppError::InvalidRequest {
                message: "the prompt is empty".into(),
            });
        }
        let vocab = self.model.vocab();
        let options: Vec<Vec<LlamaToken>> = continuations
            .iter()
            .map(|text| vocab.tokenize(text.as_bytes(), false, false))
            .collect();
        if let Some(at) = options.iter().position(Vec::is_empty) {
            return Err(LlamaCppError::InvalidRequest {
                message: format!("continuation {at} is empty: it has no tokens to score"),
            });
        }
        let longest = options.iter().map(Vec::len).max().unwrap_or(0);
        let needed = prompt.len() + longest;
        if needed >= self.settings.context_size as usize {
            return Err(LlamaCppError::ContextOverflow {
                prompt_tokens: needed,
                context_size: self.settings.context_size,
                trained: self.model.n_ctx_train(),
            });
        }
        let n_ctx = u32::try_from(needed + 1).unwrap_or(u32::MAX);
        let params = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(n_ctx))
            .with_n_batch(n_ctx)
            .with_n_ubatch(n_ctx)
            .with_n_threads(self.settings.threads)
            .with_n_threads_batch(self.settings.threads);
        let mut context = self
            .model
            .new_context(backend()?, params)
            .map_err(|e| LlamaCppError::engine(format!("cannot create a scoring context: {e}")))?;
        let mut batch = LlamaBatch::new(needed + 1, 1);
        let last = prompt.len() - 1;
        for (at, token) in prompt.iter().enumerate() {
            add(&mut batch, *token, at, at == last)?;
        }
        context
            .decode(&mut batch)
            .map_err(|e| LlamaCppError::engine(format!("cannot read the prompt: {e}")))?;
        let first = log_softmax_at(
            context.get_logits_ith(batch.n_tokens() - 1),
            options.iter().map(|o| o[0]),
        );
        let mut scores = Vec::with_capacity(options.len());
        for (option, first) in options.iter().zip(first) {
            let mut total = first;
            if option.len() > 1 {
                let _ = context.clear_kv_cache_seq(Some(0), u32::try_from(prompt.len()).ok(), None);
                batch.clear();
                for (at, token) in option.iter().enumerate() {
                    add(&mut batch, *token, prompt.len() + at, true)?;
                }
                context.decode(&mut batch).map_err(|e| {
                    LlamaCppError::engine(format!("cannot read a continuation: {e}"))
                })?;
                for (at, next) in option.iter().enumerate().skip(1) {
                    let index = i32::try_from(at - 1).unwrap_or(i32::MAX);
                    total += log_softmax_at(context.get_logits_ith(index), [*next])[0];
                }
            }
            scores.push(total);
        }
        Ok(scores)
    }
}

impl Likelihood for LlamaCpp {
    /// Decodes on the calling thread; on a multi-threaded tokio runtime the worker thread hands its
    /// other tasks to another thread meanwhile ([`tokio::task::block_in_place`]).
    fn log_likelihoods<'a>(
        &'a self,
        request: &'a ChatRequest,
        continuations: &'a [String],
    ) -> BoxFuture<'a, Result<Vec<f64>, LlmError>> {
        Box::pin(async move {
            let score = || self.engine.log_likelihoods(request, continuations);
            let scores = match tokio::runtime::Handle::try_current().map(|r| r.runtime_flavor()) {
                Ok(tokio::runtime::RuntimeFlavor::MultiThread) => {
                    tokio::task::block_in_place(score)
                }
                _ => score(),
            };
            Ok(scores?)
        })
    }
}

fn add(
    batch: &mut LlamaBatch<'_>,
    token: LlamaToken,
    at: usize,
    logits: bool,
) -> Result<(), LlamaCppError> {
    let pos = i32::try_from(at).unwrap_or(i32::MAX);
    batch
        .add(token, pos, &[0], logits)
        .map_err(|e| LlamaCppError::engine(format!("cannot batch the tokens to score: {e}")))
}

/// The log-probabilities of `tokens` under `logits` (log-softmax over the whole vocabulary).
fn log_softmax_at(logits: &[f32], tokens: impl IntoIterator<Item = LlamaToken>) -> Vec<f64> {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let sum: f64 = logits.iter().map(|&l| f64::from(l - max).exp()).sum();
    let log_z = f64::from(max) + sum.ln();
    tokens
        .into_iter()
        .map(|LlamaToken(id)| {
            usize::try_from(id)
                .ok()
                .and_then(|i| logits.get(i))
                .map_or(f64::NEG_INFINITY, |&l| f64::from(l) - log_z)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_softmax_normalises_over_the_vocabulary() {
        let logits = [0.0_f32, (2.0_f32).ln(), 0.0, 0.0];
        let got = log_softmax_at(&logits, [LlamaToken(1), LlamaToken(0), LlamaToken(9)]);
        assert!((got[0] - (2.0_f64 / 5.0).ln()).abs() < 1e-6, "{got:?}");
        assert!((got[1] - (1.0_f64 / 5.0).ln()).abs() < 1e-6, "{got:?}");
        assert_eq!(
            got[2],
            f64::NEG_INFINITY,
            "a token outside the vocabulary is impossible"
        );
    }
}
