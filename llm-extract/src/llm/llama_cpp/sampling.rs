//! Choosing the next token: greedy argmax, Ollama's repeat penalty, and seeds for llama.cpp's samplers.

use llama_cpp_2::token::LlamaToken;

/// The highest-scoring token whose id `allowed` accepts (the first of equals); `None` when there is none.
pub(super) fn argmax(
    scored: impl Iterator<Item = (i32, f32)>,
    allowed: impl Fn(i32) -> bool,
) -> Option<LlamaToken> {
    let mut best: Option<(i32, f32)> = None;
    for (id, logit) in scored {
        if best.is_none_or(|(_, top)| logit > top) && allowed(id) {
            best = Some((id, logit));
        }
    }
    best.map(|(id, _)| LlamaToken(id))
}

/// The natural log of `chosen`'s probability under a softmax of the raw `logits` over the token ids
/// `over` (the whole vocabulary, or the tokens a grammar allows); `None` when `chosen` has no score or
/// the set gives no finite normaliser. Two passes over `over`: its maximum, then the sum of exponentials.
pub(super) fn log_softmax(
    logits: &[f32],
    over: impl Iterator<Item = i32> + Clone,
    chosen: i32,
) -> Option<f32> {
    let score = |id: i32| {
        usize::try_from(id)
            .ok()
            .and_then(|i| logits.get(i))
            .copied()
    };
    let top = over
        .clone()
        .filter_map(score)
        .filter(|l| l.is_finite())
        .fold(f32::NEG_INFINITY, f32::max);
    if !top.is_finite() {
        return None;
    }
    let sum: f64 = over
        .filter_map(score)
        .filter(|l| l.is_finite())
        .map(|l| f64::from(l - top).exp())
        .sum();
    let logprob = f64::from(score(chosen)? - top) - sum.ln();
    logprob.is_finite().then_some(logprob.min(0.0) as f32)
}

/// Ollama's repeat penalty over the last tokens generated (a sliding window with a count per token).
pub(super) struct RepeatPenalty {
    factor: f32,
    window: usize,
    recent: std::collections::VecDeque<i32>,
    counts: Vec<u16>,
}

impl RepeatPenalty {
    pub(super) fn new(factor: f32, window: usize, n_vocab: i32) -> Self {
        let on = factor.is_finite() && factor > 0.0 && factor != 1.0 && window > 0;
        RepeatPenalty {
            factor,
            window,
            recent: std::collections::VecDeque::with_capacity(window),
            counts: if on {
                vec![0; usize::try_from(n_vocab).unwrap_or(0)]
            } else {
                Vec::new()
            },
        }
    }

    /// `logit` of token `id`, penalised if the token is in the window.
    pub(super) fn apply(&self, id: i32, logit: f32) -> f32 {
        let seen = usize::try_from(id)
            .ok()
            .and_then(|i| self.counts.get(i))
            .is_some_and(|&c| c > 0);
        match (seen, logit > 0.0) {
            (false, _) => logit,
            (true, true) => logit / self.factor,
            (true, false) => logit * self.factor,
        }
    }

    /// Records a generated token.
    pub(super) fn push(&mut self, id: i32) {
        let Ok(index) = usize::try_from(id) else {
            return;
        };
        if index >= self.counts.len() {
            return;
        }
        if self.recent.len() == self.window {
            if let Some(old) = self.recent.pop_front() {
                if let Some(count) = usize::try_from(old)
                    .ok()
                    .and_then(|i| self.counts.get_mut(i))
                {
                    *count = count.saturating_sub(1);
                }
            }
        }
        self.recent.push_back(id);
        self.counts[index] = self.counts[index].saturating_add(1);
    }
}

/// A 64-bit seed folded into llama.cpp's 32 bits (`u32::MAX` means "random" there, so it is avoided).
pub(super) fn fold_seed(seed: u64) -> u32 {
    let folded = (seed ^ (seed >> 32)) as u32;
    if folded == u32::MAX {
        0
    } else {
        folded
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_softmax_normalises_over_the_given_tokens_only() {
        let logits = [1.0_f32, 2.0, 3.0, f32::NEG_INFINITY];
        let all = log_softmax(&logits, 0..4, 2).unwrap();
        let expected = 3.0 - (1.0_f64.exp() + 2.0_f64.exp() + 3.0_f64.exp()).ln();
        assert!((f64::from(all) - expected).abs() < 1e-6);
        // Over the two tokens a grammar allows, the better one is more likely than over all.
        let allowed = log_softmax(&logits, [1, 2].into_iter(), 2).unwrap();
        assert!(allowed > all);
        assert!((f64::from(allowed) - (3.0 - (2.0_f64.exp() + 3.0_f64.exp()).ln())).abs() < 1e-6);
        // One allowed token is certain.
        assert_eq!(log_softmax(&logits, [0].into_iter(), 0), Some(0.0));
        // A token without a score, or a set without a finite score, gives none.
        assert_eq!(log_softmax(&logits, 0..4, 9), None);
        assert_eq!(log_softmax(&logits, [3].into_iter(), 3), None);
    }

    #[test]
    fn seeds_fold_into_32_bits_without_hitting_random() {
        assert_eq!(fold_seed(7), 7);
        assert_ne!(fold_seed(u64::from(u32::MAX)), u32::MAX);
        assert_ne!(fold_seed(1 << 40), fold_seed(1 << 41));
    }
}
