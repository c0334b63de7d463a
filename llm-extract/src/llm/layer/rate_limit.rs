//! [`RateLimit`]: requests-per-minute and tokens-per-minute limits on one backend, held by every caller
//! sharing it (a small reservation bucket on tokio's clock, so tests can pause time), and a pause of
//! every caller when the server itself says it is rate-limited and for how long.

use crate::llm::{BoxFuture, ChatEvent, ChatRequest, ChatResponse, ChatStream, Llm, LlmError};
use futures_util::StreamExt;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

/// Holds a backend under requests-per-minute and tokens-per-minute limits, however many tasks share it:
/// a request waits until both allow it. Each limit lets a minute's worth through at once, then one
/// more as each share of the minute passes (a request every `60 s / n`).
///
/// Tokens are counted before a request as its prompt (the backend's own count when it has one, else
/// one token per four bytes) plus its `max_tokens`, then corrected by what the answer's usage says:
/// an answer that used more than counted makes the next requests wait longer.
///
/// When the server answers that it is rate-limited (HTTP 429) and says for how long (`Retry-After`,
/// or the providers' rate-limit reset headers, which the HTTP backends read into
/// [`LlmError::Http::retry_after`](crate::llm::LlmError::Http)), every caller sharing the limit waits
/// that long before its next request, not only the one that was told.
///
/// ```
/// use llm_extract::llm::{from_fn, ChatRequest, ChatResponse, Llm, RateLimit};
///
/// let llm = RateLimit::new(from_fn(|_request: ChatRequest| async { Ok(ChatResponse::new("{}")) }))
///     .requests_per_minute(60)
///     .tokens_per_minute(100_000);
/// # let _ = llm;
/// ```
pub struct RateLimit<L> {
    inner: L,
    requests: Option<Arc<Bucket>>,
    tokens: Option<Arc<Bucket>>,
    /// Until when the server asked every caller to wait.
    paused_until: Arc<Mutex<Option<Instant>>>,
}

impl<L> RateLimit<L> {
    /// `inner` without limits yet.
    pub fn new(inner: L) -> Self {
        RateLimit {
            inner,
            requests: None,
            tokens: None,
            paused_until: Arc::new(Mutex::new(None)),
        }
    }

    /// At most `n` requests a minute (0: none at all is not a limit, and is ignored).
    pub fn requests_per_minute(self, n: u32) -> Self {
        self.requests_per(n, MINUTE)
    }

    /// At most `n` tokens (prompt and answer) a minute (0 is ignored).
    pub fn tokens_per_minute(self, n: u64) -> Self {
        self.tokens_per(n, MINUTE)
    }

    /// At most `n` requests every `period` (a provider's per-second limit, say): `n` at once, then one
    /// more each `period / n` (0, or a zero period, is ignored).
    pub fn requests_per(mut self, n: u32, period: Duration) -> Self {
        self.requests = Bucket::new(u64::from(n), period);
        self
    }

    /// At most `n` tokens every `period` (0, or a zero period, is ignored).
    pub fn tokens_per(mut self, n: u64, period: Duration) -> Self {
        self.tokens = Bucket::new(n, period);
        self
    }

    /// The backend under the limits.
    pub fn inner(&self) -> &L {
        &self.inner
    }
}

impl<L: std::fmt::Debug> std::fmt::Debug for RateLimit<L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimit")
            .field("inner", &self.inner)
            .field(
                "requests",
                &self.requests.as_ref().map(|b| (b.units, b.period)),
            )
            .field("tokens", &self.tokens.as_ref().map(|b| (b.units, b.period)))
            .finish()
    }
}

/// A limit of `units` units every `period`, as a generic cell rate: the time at which the bucket would
/// be empty again (`full_at`) moves forward by `period / units` per unit taken, and a take waits
/// until that time is at most a period ahead.
#[derive(Debug)]
struct Bucket {
    units: u64,
    period: Duration,
    full_at: Mutex<Option<Instant>>,
}

const MINUTE: Duration = Duration::from_secs(60);

impl Bucket {
    fn new(units: u64, period: Duration) -> Option<Arc<Bucket>> {
        (units > 0 && !period.is_zero()).then(|| {
            Arc::new(Bucket {
                units,
                period,
                full_at: Mutex::new(None),
            })
        })
    }

    /// The time `units` take, at this rate.
    fn span(&self, units: u64) -> Duration {
        let nanos = u128::from(units) * self.period.as_nanos() / u128::from(self.units);
        Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
    }

    /// Reserves `units` now and returns when they may be used (now or later); reservations are served
    /// in the order they were made.
    fn reserve(&self, units: u64) -> Instant {
        let now = Instant::now();
        let Ok(mut full_at) = self.full_at.lock() else {
            return now;
        };
        let from = full_at.map_or(now, |at| at.max(now));
        let next = from + self.span(units);
        *full_at = Some(next);
        next.checked_sub(self.period).map_or(now, |at| at.max(now))
    }

    /// Takes `units` back (`more` false) or charges `units` more (`more` true) once a request's real
    /// cost is known.
    fn adjust(&self, units: u64, more: bool) {
        if units == 0 {
            return;
        }
        if let Ok(mut full_at) = self.full_at.lock() {
            let now = Instant::now();
            let at = full_at.map_or(now, |at| at.max(now));
            *full_at = Some(if more {
                at + self.span(units)
            } else {
                at.checked_sub(self.span(units)).unwrap_or(now).max(now)
            });
        }
    }
}

impl<L: Llm> RateLimit<L> {
    /// The tokens `request` is counted for before it is sent.
    fn estimate(&self, request: &ChatRequest) -> u64 {
        let mut prompt = String::new();
        if let Some(system) = &request.system {
            prompt.push_str(system);
        }
        for message in &request.messages {
            prompt.push_str(&message.content);
        }
        let prompt = self
            .inner
            .count_tokens(&prompt)
            .map_or(prompt.len().div_ceil(4) as u64, |n| n as u64);
        prompt + u64::from(request.max_tokens.unwrap_or(0))
    }

    /// Waits until both limits allow `request`; returns the tokens it was counted for.
    async fn admit(&self, request: &ChatRequest) -> u64 {
        let tokens = self.tokens.as_ref().map_or(0, |_| self.estimate(request));
        let mut at = Instant::now();
        if let Some(bucket) = &self.requests {
            at = at.max(bucket.reserve(1));
        }
        if let Some(bucket) = &self.tokens {
            at = at.max(bucket.reserve(tokens));
        }
        tokio::time::sleep_until(at).await;
        // The server asked every caller to wait (a request may have been told so while this one
        // waited its turn).
        loop {
            let paused = self.paused_until.lock().ok().and_then(|until| *until);
            match paused {
                Some(until) if until > Instant::now() => tokio::time::sleep_until(until).await,
                _ => break,
            }
        }
        tokens
    }

    /// A failure that says the server is rate-limited for a while pauses every caller that long.
    fn told(&self, err: &LlmError) {
        if let LlmError::Http {
            status: 429,
            retry_after: Some(wait),
            ..
        } = err
        {
            if let (Ok(mut until), Some(at)) =
                (self.paused_until.lock(), Instant::now().checked_add(*wait))
            {
                *until = Some(until.map_or(at, |until| until.max(at)));
            }
        }
    }
}

/// Corrects the token count of a request counted for `counted` tokens once its answer says it `used`.
fn settle(bucket: Option<&Arc<Bucket>>, counted: u64, used: u64) {
    if let Some(bucket) = bucket {
        match used.cmp(&counted) {
            std::cmp::Ordering::Greater => bucket.adjust(used - counted, true),
            std::cmp::Ordering::Less => bucket.adjust(counted - used, false),
            std::cmp::Ordering::Equal => {}
        }
    }
}

impl<L: Llm> Llm for RateLimit<L> {
    pass_through!(dialect constrains_json_lines constrains_grounding count_tokens describe accepts gives_logprobs likelihood);

    fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            let counted = self.admit(&request).await;
            let answer = self
                .inner
                .chat(request)
                .await
                .inspect_err(|e| self.told(e))?;
            settle(self.tokens.as_ref(), counted, answer.usage.total());
            Ok(answer)
        })
    }

    fn chat_stream(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatStream, LlmError>> {
        Box::pin(async move {
            let counted = self.admit(&request).await;
            let stream = self
                .inner
                .chat_stream(request)
                .await
                .inspect_err(|e| self.told(e))?;
            let Some(bucket) = self.tokens.clone() else {
                return Ok(stream);
            };
            let settled = stream.inspect(move |event| {
                if let Ok(ChatEvent::Done(done)) = event {
                    settle(Some(&bucket), counted, done.usage.total());
                }
            });
            Ok(Box::pin(settled) as ChatStream)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::from_fn;

    /// A backend that writes down when each call reached it, answering with `used` tokens.
    fn recording(seen: &Arc<Mutex<Vec<Duration>>>, start: Instant, used: u64) -> impl Llm {
        let seen = Arc::clone(seen);
        from_fn(move |_request: ChatRequest| {
            if let Ok(mut seen) = seen.lock() {
                seen.push(start.elapsed());
            }
            async move { Ok(ChatResponse::new("{}").with_usage(used, 0)) }
        })
    }

    fn sorted(seen: &Mutex<Vec<Duration>>) -> Vec<u64> {
        let mut secs: Vec<u64> = seen.lock().unwrap().iter().map(|d| d.as_secs()).collect();
        secs.sort_unstable();
        secs
    }

    #[tokio::test(start_paused = true)]
    async fn sixteen_concurrent_calls_keep_to_the_requests_per_minute() {
        let start = Instant::now();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let llm = Arc::new(RateLimit::new(recording(&seen, start, 1)).requests_per_minute(4));
        let calls: Vec<_> = (0..16)
            .map(|_| {
                let llm = Arc::clone(&llm);
                tokio::spawn(
                    async move { llm.chat_stream(ChatRequest::new("x")).await.map(|_| ()) },
                )
            })
            .collect();
        for call in calls {
            call.await.unwrap().unwrap();
        }
        // A minute's worth (4) at once, then one every 15 s: the bucket holds 4, and refills one
        // each 15 s.
        let expected: Vec<u64> = [0, 0, 0, 0]
            .into_iter()
            .chain((1..=12).map(|k| k * 15))
            .collect();
        assert_eq!(sorted(&seen), expected);
    }

    #[tokio::test(start_paused = true)]
    async fn a_rate_limited_answer_pauses_every_caller_for_its_retry_after() {
        let start = Instant::now();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let calls = Arc::new(std::sync::atomic::AtomicU32::new(0));
        let backend = {
            let (seen, calls) = (Arc::clone(&seen), Arc::clone(&calls));
            from_fn(move |_request: ChatRequest| {
                let first = calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0;
                if let Ok(mut seen) = seen.lock() {
                    seen.push(start.elapsed());
                }
                async move {
                    if first {
                        Err(LlmError::Http {
                            status: 429,
                            message: "slow down".into(),
                            retry_after: Some(Duration::from_secs(20)),
                        })
                    } else {
                        Ok(ChatResponse::new("{}"))
                    }
                }
            })
        };
        let llm = RateLimit::new(backend).requests_per(100, Duration::from_secs(1));
        assert!(llm.chat(ChatRequest::new("x")).await.is_err());
        for _ in 0..3 {
            llm.chat(ChatRequest::new("x")).await.unwrap();
        }
        // Told to wait 20 s, nobody asked again before then.
        assert_eq!(sorted(&seen), vec![0, 20, 20, 20]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_limit_over_any_period() {
        let start = Instant::now();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let llm =
            RateLimit::new(recording(&seen, start, 1)).requests_per(2, Duration::from_secs(10));
        for _ in 0..5 {
            llm.chat(ChatRequest::new("x")).await.unwrap();
        }
        assert_eq!(sorted(&seen), vec![0, 0, 5, 10, 15]);
    }

    #[tokio::test(start_paused = true)]
    async fn tokens_per_minute_count_the_prompt_and_settle_on_the_usage() {
        let start = Instant::now();
        let seen = Arc::new(Mutex::new(Vec::new()));
        // Each request is counted 100 tokens (400 bytes of prompt: 10 s at 0.1 s a token), then its
        // answer says 300 (20 s more). Counted only as estimated, all five (500 of 600) would go at
        // once; settled, the bucket is 30 s from full after the first, 60 s after the second, and the
        // third waits until its 70 s are a minute: at 10 s, the fourth at 40 s, the fifth at 70 s.
        let llm = RateLimit::new(recording(&seen, start, 300)).tokens_per_minute(600);
        let prompt = "x".repeat(400);
        for _ in 0..5 {
            llm.chat(ChatRequest::new(prompt.clone())).await.unwrap();
        }
        assert_eq!(sorted(&seen), vec![0, 0, 10, 40, 70]);
    }
}
