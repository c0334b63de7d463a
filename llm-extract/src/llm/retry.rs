//! The one retry policy for transient transport failures, shared by every HTTP backend.
//!
//! It is separate from the extraction's repair budget: a retry re-sends the *same* request because the
//! network or the server hiccuped; a repair sends a *new* request because the answer was unusable.

use super::LlmError;
use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Capped exponential backoff with jitter, for failures where [`LlmError::is_transient`] holds
/// (connection errors, connect and response timeouts, HTTP 429, 502, 503, 504 and 529).
///
/// Permanent failures (400, 401, 403, 404, ...) are never retried. A `Retry-After` header is honoured up to
/// the maximum backoff.
///
/// ```
/// use llm_extract::llm::RetryPolicy;
/// use std::time::Duration;
///
/// let policy = RetryPolicy::new()
///     .max_retries(5)
///     .initial_backoff(Duration::from_millis(100))
///     .max_backoff(Duration::from_secs(2));
/// assert!(policy.backoff(10) <= Duration::from_secs(2));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    max_retries: u32,
    initial_backoff: Duration,
    max_backoff: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 3,
            initial_backoff: Duration::from_millis(250),
            max_backoff: Duration::from_secs(8),
        }
    }
}

impl RetryPolicy {
    /// The default: up to 3 retries, backoff starting at 250 ms, doubling, capped at 8 s.
    pub fn new() -> Self {
        Self::default()
    }

    /// No retries at all.
    pub fn none() -> Self {
        RetryPolicy {
            max_retries: 0,
            ..Self::default()
        }
    }

    /// How many times a request is re-sent after a transient failure (so at most `n + 1` sends).
    pub fn max_retries(mut self, n: u32) -> Self {
        self.max_retries = n;
        self
    }

    /// The backoff before the first retry (before jitter).
    pub fn initial_backoff(mut self, backoff: Duration) -> Self {
        self.initial_backoff = backoff;
        self
    }

    /// The cap on any one backoff, including a server's `Retry-After`.
    pub fn max_backoff(mut self, backoff: Duration) -> Self {
        self.max_backoff = backoff;
        self
    }

    /// The wait before retry number `retry` (0-based): `initial * 2^retry` capped at the maximum, of which
    /// the upper half is random ("equal jitter") so that many clients do not retry in lockstep.
    pub fn backoff(&self, retry: u32) -> Duration {
        let factor = 2u32.saturating_pow(retry.min(30));
        let base = self
            .initial_backoff
            .saturating_mul(factor)
            .min(self.max_backoff);
        let half = base / 2;
        half + half.mul_f64(random_unit())
    }

    /// Runs `op` until it succeeds, fails permanently, or the retries are spent; returns its last result.
    pub(crate) async fn run<T, F, Fut>(&self, what: &str, mut op: F) -> Result<T, LlmError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, LlmError>>,
    {
        let mut retry = 0;
        loop {
            match op().await {
                Ok(value) => return Ok(value),
                Err(err) if err.is_transient() && retry < self.max_retries => {
                    let mut wait = self.backoff(retry);
                    if let LlmError::Http {
                        retry_after: Some(asked),
                        ..
                    } = &err
                    {
                        wait = wait.max((*asked).min(self.max_backoff));
                    }
                    tracing::warn!(
                        target: "llm_extract::retry",
                        retry = retry + 1,
                        of = self.max_retries,
                        wait_ms = wait.as_millis() as u64,
                        error = %err,
                        "{what} failed transiently; retrying"
                    );
                    tokio::time::sleep(wait).await;
                    retry += 1;
                }
                Err(err) => return Err(err),
            }
        }
    }
}

/// A pseudo-random number in `[0, 1)`, good enough for jitter (no extra dependency): std's randomly
/// keyed SipHash over a process-wide counter.
fn random_unit() -> f64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    #[test]
    fn backoff_grows_and_is_capped() {
        let policy = RetryPolicy::new()
            .initial_backoff(Duration::from_millis(100))
            .max_backoff(Duration::from_millis(1000));
        for retry in 0..40 {
            let wait = policy.backoff(retry);
            let base = Duration::from_millis(100)
                .saturating_mul(2u32.saturating_pow(retry.min(30)))
                .min(Duration::from_millis(1000));
            assert!(wait >= base / 2 && wait <= base, "retry {retry}: {wait:?}");
        }
    }

    #[test]
    fn jitter_varies() {
        let waits: std::collections::HashSet<_> = (0..20)
            .map(|_| RetryPolicy::new().backoff(3).as_nanos())
            .collect();
        assert!(waits.len() > 1);
    }

    #[tokio::test]
    async fn retries_transient_then_stops_at_permanent() {
        let policy = RetryPolicy::new()
            .max_retries(5)
            .initial_backoff(Duration::from_millis(1));
        let calls = AtomicU32::new(0);
        let result: Result<(), _> = policy
            .run("test", || {
                let n = calls.fetch_add(1, Ordering::SeqCst);
                async move {
                    Err(LlmError::Http {
                        status: if n < 2 { 503 } else { 404 },
                        message: "x".into(),
                        retry_after: None,
                    })
                }
            })
            .await;
        assert!(matches!(result, Err(LlmError::Http { status: 404, .. })));
        assert_eq!(calls.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn gives_up_after_max_retries() {
        let policy = RetryPolicy::new()
            .max_retries(2)
            .initial_backoff(Duration::from_millis(1));
        let calls = AtomicU32::new(0);
        let result: Result<(), _> = policy
            .run("test", || {
                calls.fetch_add(1, Ordering::SeqCst);
                async {
                    Err(LlmError::Http {
                        status: 429,
                        message: "slow down".into(),
                        retry_after: Some(Duration::from_millis(1)),
                    })
                }
            })
            .await;
        assert!(matches!(result, Err(LlmError::Http { status: 429, .. })));
        assert_eq!(calls.load(Ordering::SeqCst), 3);
    }
}
