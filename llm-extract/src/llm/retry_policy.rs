//! The one retry policy for transient transport failures, shared by every HTTP backend and the
//! [`Retry`](super::Retry) layer; it gives way when a [`Fallback`](super::Fallback) has another backend
//! to ask.
//!
//! It is separate from the extraction's repair budget: a retry re-sends the *same* request because the
//! network or the server hiccuped; a repair sends a *new* request because the answer was unusable.

use super::LlmError;
use std::future::Future;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Capped exponential backoff with jitter, for failures where [`LlmError::is_transient`] holds
/// (connection errors, timeouts, HTTP 408, 409, 429 and 5xx, an answer stream that breaks or ends
/// before the server finished, a body that is not what the request asked for). One budget covers a
/// request: the retries of its send and of its stream together.
///
/// Permanent failures (401, 403, 404 and the other 4xx) are never retried. A `Retry-After` header, in seconds or
/// as an HTTP date, is honoured up to the maximum backoff.
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

    /// How many times a request is re-sent after a transient failure.
    pub(crate) fn retries(&self) -> u32 {
        self.max_retries
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
        let mut retries = self.start();
        loop {
            match op().await {
                Ok(value) => return Ok(value),
                Err(err) => {
                    if !retries.again(what, &err).await {
                        return Err(err);
                    }
                }
            }
        }
    }

    /// A count of the retries one request has used, for a request whose failures happen in several
    /// places (sending it, then reading its stream) but share one budget.
    pub(crate) fn start(&self) -> Retries {
        Retries {
            policy: self.clone(),
            used: 0,
        }
    }
}

/// The retries one request has used so far under a [`RetryPolicy`].
#[derive(Debug, Clone)]
pub(crate) struct Retries {
    policy: RetryPolicy,
    used: u32,
}

tokio::task_local! {
    /// Set while a [`Fallback`](super::Fallback) asks a backend that is not its last.
    static ANOTHER_CAN_ANSWER: ();
}

/// Runs `request` knowing that another backend can answer it if this one cannot: a server that asks
/// to be left alone (HTTP 429, or a `Retry-After`) is then not waited out, and the failure returned.
pub(crate) async fn with_another<F: Future>(request: F) -> F::Output {
    ANOTHER_CAN_ANSWER.scope((), request).await
}

/// Whether `err` asks the client to wait (a rate limit, or a `Retry-After`) while another backend
/// can answer instead.
fn another_answers_sooner(err: &LlmError) -> bool {
    let asks_to_wait = matches!(
        err,
        LlmError::Http { status: 429, .. }
            | LlmError::Http {
                retry_after: Some(_),
                ..
            }
    );
    asks_to_wait && ANOTHER_CAN_ANSWER.try_with(|_| ()).is_ok()
}

impl Retries {
    /// After `err`: whether to send the request again. When it is, the wait (the backoff, or the
    /// server's `Retry-After` up to the maximum backoff) has passed and the failure is logged; `err`
    /// must be scrubbed of credentials already. A server that asks to wait is not waited for when
    /// another backend can answer ([`with_another`]).
    pub(crate) async fn again(&mut self, what: &str, err: &LlmError) -> bool {
        let policy = &self.policy;
        if !err.is_transient() || self.used >= policy.max_retries || another_answers_sooner(err) {
            return false;
        }
        let mut wait = policy.backoff(self.used);
        if let LlmError::Http {
            retry_after: Some(asked),
            ..
        } = err
        {
            wait = wait.max((*asked).min(policy.max_backoff));
        }
        self.used += 1;
        tracing::warn!(
            target: "llm_extract::retry",
            retry = self.used,
            of = policy.max_retries,
            wait_ms = wait.as_millis() as u64,
            error = %err,
            "{what} failed transiently; retrying"
        );
        tokio::time::sleep(wait).await;
        true
    }
}

/// How long a `Retry-After` header asks to wait (RFC 9110 §10.2.3): a number of seconds, or an HTTP
/// date (the IMF-fixdate `Sun, 06 Nov 1994 08:49:37 GMT`, and the obsolete RFC 850
/// `Sunday, 06-Nov-94 08:49:37 GMT` and asctime `Sun Nov  6 08:49:37 1994` forms every recipient must
/// accept), counted from `now`; a date in the past asks for no wait. `None` when it is neither.
pub(crate) fn retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        // More digits than a u64 holds is still "a very long time".
        return Some(Duration::from_secs(value.parse().unwrap_or(u64::MAX)));
    }
    let now = now.duration_since(UNIX_EPOCH).ok()?.as_secs();
    let at = http_date(value, now)?;
    Some(Duration::from_secs(at.saturating_sub(now)))
}

/// How long a rate-limited server (HTTP 429) asks to wait when it sends no `Retry-After`, from the
/// providers' rate-limit headers (`header` looks one up by its lower-case name): `retry-after-ms`
/// (milliseconds); OpenAI's `x-ratelimit-reset-requests` and `x-ratelimit-reset-tokens` (durations such
/// as `1s`, `6m0s`, `20ms`); Anthropic's `anthropic-ratelimit-{requests,tokens,input-tokens,
/// output-tokens}-reset` (an RFC 3339 time, counted from `now`). Of several limits, those whose
/// `remaining` header says 0 (all of them when none says) count, and the longest wait wins.
pub(crate) fn rate_limit_reset<'h>(
    header: impl Fn(&str) -> Option<&'h str>,
    now: SystemTime,
) -> Option<Duration> {
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok()) {
        if ms.is_finite() && ms >= 0.0 {
            return Some(Duration::from_secs_f64((ms / 1000.0).min(1e9)));
        }
    }
    let limits = [
        (
            "x-ratelimit-remaining-requests",
            "x-ratelimit-reset-requests",
        ),
        ("x-ratelimit-remaining-tokens", "x-ratelimit-reset-tokens"),
        (
            "anthropic-ratelimit-requests-remaining",
            "anthropic-ratelimit-requests-reset",
        ),
        (
            "anthropic-ratelimit-tokens-remaining",
            "anthropic-ratelimit-tokens-reset",
        ),
        (
            "anthropic-ratelimit-input-tokens-remaining",
            "anthropic-ratelimit-input-tokens-reset",
        ),
        (
            "anthropic-ratelimit-output-tokens-remaining",
            "anthropic-ratelimit-output-tokens-reset",
        ),
    ];
    let resets: Vec<(bool, Duration)> = limits
        .iter()
        .filter_map(|(remaining, reset)| {
            let wait = header(reset).and_then(|v| reset_wait(v, now))?;
            let spent = header(remaining).is_some_and(|v| v.trim() == "0");
            Some((spent, wait))
        })
        .collect();
    let any_spent = resets.iter().any(|(spent, _)| *spent);
    resets
        .into_iter()
        .filter(|(spent, _)| *spent || !any_spent)
        .map(|(_, wait)| wait)
        .max()
}

/// A reset header's wait: a duration (`1h2m3.5s`, `20ms`) or an RFC 3339 time.
fn reset_wait(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    duration_text(value).or_else(|| {
        let at = rfc3339(value)?;
        let now = now.duration_since(UNIX_EPOCH).ok()?.as_secs();
        Some(Duration::from_secs(at.saturating_sub(now)))
    })
}

/// A duration written as numbers with units, `h`, `m`, `s` and `ms` (`6m0s`, `1.5s`, `20ms`).
fn duration_text(value: &str) -> Option<Duration> {
    let mut total = 0.0f64;
    let mut rest = value;
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let amount: f64 = rest.get(..digits)?.parse().ok()?;
        rest = rest.get(digits..)?;
        let (unit, len) = if rest.starts_with("ms") {
            (0.001, 2)
        } else if rest.starts_with('h') {
            (3600.0, 1)
        } else if rest.starts_with('m') {
            (60.0, 1)
        } else if rest.starts_with('s') {
            (1.0, 1)
        } else {
            return None;
        };
        total += amount * unit;
        rest = rest.get(len..)?;
    }
    (total.is_finite() && total >= 0.0).then(|| Duration::from_secs_f64(total.min(1e9)))
}

/// An RFC 3339 time (`2026-12-05T20:31:00Z`, fractions and offsets allowed) as whole seconds since
/// the Unix epoch, rounded up.
fn rfc3339(value: &str) -> Option<u64> {
    let (date, time) = value.split_once(['T', 't', ' '])?;
    let mut parts = date.split('-');
    let year = number(parts.next()?, 4, 4)?;
    let month = number(parts.next()?, 2, 2)?;
    let day = number(parts.next()?, 2, 2)?;
    if parts.next().is_some() || !(1..=12).contains(&month) || year < 1970 {
        return None;
    }
    if day == 0 || day > days_in_month(year, month) {
        return None;
    }
    let (clock, offset) = match time.find(['Z', 'z', '+', '-']) {
        Some(at) => (time.get(..at)?, time.get(at..)?),
        None => return None,
    };
    let (clock, fraction) = match clock.split_once('.') {
        Some((clock, fraction)) => (clock, !fraction.trim_end_matches('0').is_empty()),
        None => (clock, false),
    };
    let mut hms = clock.split(':');
    let hour = number(hms.next()?, 2, 2)?;
    let minute = number(hms.next()?, 2, 2)?;
    let second = number(hms.next()?, 2, 2)?;
    if hms.next().is_some() || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let local = days_since_epoch(year, month, day) * 86_400
        + hour * 3_600
        + minute * 60
        + second
        + u64::from(fraction);
    match offset {
        "Z" | "z" => Some(local),
        _ => {
            let sign = offset.get(..1)?;
            let (h, m) = offset.get(1..)?.split_once(':')?;
            let shift = number(h, 2, 2)? * 3_600 + number(m, 2, 2)? * 60;
            if sign == "+" {
                local.checked_sub(shift)
            } else {
                Some(local + shift)
            }
        }
    }
}

/// An HTTP date in any of its three forms, as seconds since the Unix epoch (`now` places a two-digit
/// year).
fn http_date(value: &str, now: u64) -> Option<u64> {
    let words: Vec<&str> = value.split_ascii_whitespace().collect();
    let (day, month, year, time) = match words.as_slice() {
        // IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`.
        [weekday, day, month, year, time, "GMT"] if weekday.ends_with(',') => (
            number(day, 1, 2)?,
            month_number(month)?,
            number(year, 4, 4)?,
            *time,
        ),
        // RFC 850: `Sunday, 06-Nov-94 08:49:37 GMT`.
        [weekday, date, time, "GMT"] if weekday.ends_with(',') => {
            let mut parts = date.split('-');
            let day = number(parts.next()?, 2, 2)?;
            let month = month_number(parts.next()?)?;
            let year = number(parts.next()?, 2, 2)?;
            if parts.next().is_some() {
                return None;
            }
            (day, month, rfc850_year(year, now), *time)
        }
        // asctime: `Sun Nov  6 08:49:37 1994`.
        [_weekday, month, day, time, year] => (
            number(day, 1, 2)?,
            month_number(month)?,
            number(year, 4, 4)?,
            *time,
        ),
        _ => return None,
    };
    let mut clock = time.split(':');
    let hour = number(clock.next()?, 2, 2)?;
    let minute = number(clock.next()?, 2, 2)?;
    let second = number(clock.next()?, 2, 2)?;
    // 60: a leap second.
    if clock.next().is_some() || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    if day == 0 || day > days_in_month(year, month) || year < 1970 {
        return None;
    }
    let days = days_since_epoch(year, month, day);
    Some(days * 86_400 + hour * 3_600 + minute * 60 + second)
}

/// The digits of `text` as a number, if there are `min..=max` of them and nothing else.
fn number(text: &str, min: usize, max: usize) -> Option<u64> {
    if text.len() < min || text.len() > max || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

fn month_number(name: &str) -> Option<u64> {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    MONTHS.iter().position(|m| *m == name).map(|i| i as u64 + 1)
}

/// A two-digit RFC 850 year, in the century of `now` unless that puts it more than 50 years ahead: RFC
/// 9110 then reads it as the latest past year with those digits.
fn rfc850_year(two_digits: u64, now: u64) -> u64 {
    // The year `now` falls in, near enough for a 50-year window (365.2425 days a year).
    let this_year = 1970 + now / 31_556_952;
    let year = this_year / 100 * 100 + two_digits;
    if year > this_year + 50 {
        year - 100
    } else {
        year
    }
}

fn days_in_month(year: u64, month: u64) -> u64 {
    let leap = (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400);
    match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to the date (proleptic Gregorian calendar; the year is 1970 or later).
fn days_since_epoch(year: u64, month: u64, day: u64) -> u64 {
    // Howard Hinnant's days_from_civil, with the year starting in March.
    let year = if month <= 2 { year - 1 } else { year };
    let era = year / 400;
    let year_of_era = year - era * 400;
    let month_from_march = (month + 9) % 12;
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    (era * 146_097 + day_of_era).saturating_sub(719_468)
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

    #[test]
    fn retry_after_reads_seconds_and_every_http_date_form() {
        // 1994-11-06 08:49:37 UTC.
        let at = UNIX_EPOCH + Duration::from_secs(784_111_777);
        let now = at - Duration::from_secs(90);
        for date in [
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
            "  Sun, 06 Nov 1994 08:49:37 GMT ",
        ] {
            assert_eq!(
                retry_after(date, now),
                Some(Duration::from_secs(90)),
                "{date}"
            );
        }
        assert_eq!(retry_after("120", now), Some(Duration::from_secs(120)));
        assert_eq!(retry_after("0", now), Some(Duration::ZERO));
        assert_eq!(
            retry_after("99999999999999999999999", now),
            Some(Duration::from_secs(u64::MAX))
        );
        // A date already past asks for no wait.
        assert_eq!(
            retry_after("Sun, 06 Nov 1994 08:49:37 GMT", at + Duration::from_secs(5)),
            Some(Duration::ZERO)
        );
        for bad in [
            "",
            "-5",
            "1.5",
            "soon",
            "Sun, 06 Nov 1994 08:49:37 UTC",
            "Sun, 31 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 1994 24:00:00 GMT",
            "Sun, 06 Foo 1994 08:49:37 GMT",
            "Sun, 06 Nov 94 08:49:37 GMT",
            "Sunday, 06-Nov-1994 08:49:37 GMT",
            "Sun, 06 Nov 1960 08:49:37 GMT",
        ] {
            assert_eq!(retry_after(bad, now), None, "{bad:?}");
        }
    }

    #[test]
    fn http_dates_agree_with_the_calendar() {
        let cases = [
            ("Thu, 01 Jan 1970 00:00:00 GMT", 0),
            ("Tue, 29 Feb 2000 12:00:00 GMT", 951_825_600),
            ("Fri, 31 Dec 2100 23:59:59 GMT", 4_133_980_799),
            ("Wed, 01 Mar 2023 00:00:00 GMT", 1_677_628_800),
        ];
        for (date, seconds) in cases {
            assert_eq!(http_date(date, 0), Some(seconds), "{date}");
        }
        assert_eq!(http_date("Sat, 29 Feb 2100 00:00:00 GMT", 0), None);
        // Two-digit years: in this century unless that is more than 50 years ahead.
        let in_2026 = 1_780_000_000;
        let year_of = |date: &str| http_date(date, in_2026).map(|s| 1970 + s / 31_556_952);
        assert_eq!(year_of("Monday, 01-Jun-76 00:00:00 GMT"), Some(2076));
        assert_eq!(year_of("Wednesday, 01-Jun-77 00:00:00 GMT"), Some(1977));
    }

    #[tokio::test]
    async fn a_server_s_wait_is_capped_at_the_maximum_backoff() {
        let policy = RetryPolicy::new()
            .max_retries(1)
            .initial_backoff(Duration::from_millis(1))
            .max_backoff(Duration::from_millis(20));
        let mut retries = policy.start();
        let err = LlmError::Http {
            status: 429,
            message: "slow down".into(),
            retry_after: Some(Duration::from_secs(3600)),
        };
        let started = std::time::Instant::now();
        assert!(retries.again("test", &err).await);
        let waited = started.elapsed();
        assert!(
            waited >= Duration::from_millis(20) && waited < Duration::from_secs(5),
            "{waited:?}"
        );
        assert!(!retries.again("test", &err).await, "the budget is spent");
    }

    #[test]
    fn rate_limit_headers_say_how_long_to_wait() {
        let now = UNIX_EPOCH + Duration::from_secs(1_780_000_000);
        let reset = |pairs: &'static [(&'static str, &'static str)]| {
            rate_limit_reset(
                |name| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| *v),
                now,
            )
        };
        assert_eq!(
            reset(&[("retry-after-ms", "1500")]),
            Some(Duration::from_millis(1500))
        );
        // OpenAI: the spent limit's reset, not the other.
        assert_eq!(
            reset(&[
                ("x-ratelimit-remaining-requests", "12"),
                ("x-ratelimit-reset-requests", "1s"),
                ("x-ratelimit-remaining-tokens", "0"),
                ("x-ratelimit-reset-tokens", "6m0s"),
            ]),
            Some(Duration::from_secs(360))
        );
        assert_eq!(
            reset(&[("x-ratelimit-reset-requests", "20ms")]),
            Some(Duration::from_millis(20))
        );
        assert_eq!(
            reset(&[("x-ratelimit-reset-tokens", "1h2m3.5s")]),
            Some(Duration::from_millis(3_723_500))
        );
        // Anthropic: an RFC 3339 time.
        let at = 1_780_000_000 + 42;
        let days = at / 86_400;
        assert_eq!(days_since_epoch(2026, 5, 28), days);
        let text: &'static str = Box::leak(
            format!(
                "2026-05-28T{:02}:{:02}:{:02}Z",
                at % 86_400 / 3600,
                at % 3600 / 60,
                at % 60
            )
            .into_boxed_str(),
        );
        let pairs: &'static [(&'static str, &'static str)] = Box::leak(Box::new([
            ("anthropic-ratelimit-requests-remaining", "0"),
            ("anthropic-ratelimit-requests-reset", text),
        ]));
        assert_eq!(reset(pairs), Some(Duration::from_secs(42)));
        assert_eq!(reset(&[("x-ratelimit-reset-requests", "soon")]), None);
        assert_eq!(reset(&[]), None);
        assert_eq!(
            rfc3339("2026-05-28T00:00:00+01:00"),
            Some(days * 86_400 - 3_600)
        );
        assert_eq!(rfc3339("2026-02-30T00:00:00Z"), None);
    }
}
