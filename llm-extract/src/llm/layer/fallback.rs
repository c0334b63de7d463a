//! [`Fallback`]: several backends in an order, the next one asked when a failure's
//! [`ErrorClass`] says another backend may answer.

use super::{ErrorClass, ErrorClasses};
use crate::llm::retry_policy::with_another;
use crate::llm::{BoxFuture, ChatRequest, ChatResponse, ChatStream, Description, Llm, LlmError};
use crate::schema::Dialect;
use std::sync::{Arc, Mutex};
use tokio::time::Instant;

/// Backends in an order: a request goes to the first that can take it, and when that one fails with
/// a class in [`Fallback::on`] (by default transient, rate-limited, refused and context too long), to
/// the next, without waiting.
///
/// - A backend can take a request when it enforces the same schema [dialect](Llm::dialect) as the
///   first (the request's schema was rendered for it; a request without a schema goes anywhere),
///   for a JSON Lines request, constrains JSON Lines, and [accepts](Llm::accepts) its images and
///   PDFs (their forms and its limits). A request that asks for log-probabilities goes only to the
///   backends that [give them](Llm::gives_logprobs) while one of them does. The fallback itself
///   reports the first's dialect, and constrains JSON Lines or grounding only when all its backends
///   do.
/// - A request does not wait out one backend while another can answer: a backend that asks to wait
///   (HTTP 429, or a `Retry-After`) is not retried by its own [`RetryPolicy`](crate::llm::RetryPolicy)
///   (nor a [`Retry`](super::Retry) layer over it) while a backend after it can take the request, and
///   one that said `Retry-After` is passed over until that time, as long as another can take it.
/// - The backend that answered is written to the current span (`gen_ai.provider.name`,
///   `server.address`, `gen_ai.request.model`: an extraction's attempt span has them) and logged at
///   debug level, as its [`Llm::describe`] tells.
///
/// Each backend keeps its own retries for the other transient failures (a 503, a broken connection):
/// a small [`RetryPolicy`](crate::llm::RetryPolicy) on each lets the fallback move on sooner.
///
/// ```
/// use llm_extract::llm::{from_fn, ChatRequest, ChatResponse, ErrorClass, Fallback, Llm, LlmError};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let busy = from_fn(|_request: ChatRequest| async {
///     Err(LlmError::Http { status: 429, message: "slow down".into(), retry_after: None })
/// });
/// let spare = from_fn(|_request: ChatRequest| async { Ok(ChatResponse::new("{}")) });
/// let llm = Fallback::new(busy).or_else(spare).on(ErrorClass::Transient | ErrorClass::RateLimited);
/// assert_eq!(llm.chat(ChatRequest::new("hi")).await?.text, "{}");
/// # Ok::<(), LlmError>(())
/// # }).unwrap();
/// ```
pub struct Fallback {
    backends: Vec<Member>,
    on: ErrorClasses,
}

struct Member {
    llm: Arc<dyn Llm>,
    /// Until when the backend asked not to be sent requests (its last `Retry-After`).
    resting_until: Mutex<Option<Instant>>,
}

impl Member {
    fn resting(&self, now: Instant) -> bool {
        self.resting_until
            .lock()
            .map(|until| until.is_some_and(|until| until > now))
            .unwrap_or(false)
    }

    fn rest(&self, err: &LlmError) {
        if let LlmError::Http {
            retry_after: Some(wait),
            ..
        } = err
        {
            if let Ok(mut until) = self.resting_until.lock() {
                *until = Instant::now().checked_add(*wait);
            }
        }
    }
}

impl Fallback {
    /// A fallback that asks `first` first.
    pub fn new(first: impl Llm + 'static) -> Self {
        Fallback::empty().or_else(first)
    }

    fn empty() -> Self {
        Fallback {
            backends: Vec::new(),
            on: ErrorClass::Transient
                | ErrorClass::RateLimited
                | ErrorClass::Refused
                | ErrorClass::ContextTooLong,
        }
    }

    /// A fallback over `backends`, in order (`Arc<dyn Llm>` for backends of different types).
    pub fn from_backends<L: Llm + 'static>(backends: impl IntoIterator<Item = L>) -> Self {
        backends
            .into_iter()
            .fold(Fallback::empty(), |fallback, backend| {
                fallback.or_else(backend)
            })
    }

    /// Adds `next`, asked after those before it.
    pub fn or_else(mut self, next: impl Llm + 'static) -> Self {
        self.backends.push(Member {
            llm: Arc::new(next),
            resting_until: Mutex::new(None),
        });
        self
    }

    /// The failures after which the next backend is asked (the others are returned at once).
    pub fn on(mut self, classes: impl Into<ErrorClasses>) -> Self {
        self.on = classes.into();
        self
    }

    /// Whether `member` can take `request`, whose schema (if any) was rendered for the fallback's
    /// dialect, the first backend's; `logprobs_needed` when some backend gives the log-probabilities
    /// the request asks for.
    fn can_take(&self, member: &Member, request: &ChatRequest, logprobs_needed: bool) -> bool {
        let llm = &member.llm;
        let schema_fits = request.schema.is_none() || Some(llm.dialect()) == self.first_dialect();
        schema_fits
            && (!request.json_lines || llm.constrains_json_lines())
            && (!logprobs_needed || llm.gives_logprobs())
            && llm.accepts(request).is_ok()
    }

    fn first_dialect(&self) -> Option<Dialect> {
        self.backends.first().map(|m| m.llm.dialect())
    }

    /// The backends that can take `request`, in the order to ask them: those not resting first.
    fn order(&self, request: &ChatRequest) -> Vec<&Member> {
        let now = Instant::now();
        let logprobs_needed =
            request.logprobs && self.backends.iter().any(|m| m.llm.gives_logprobs());
        let (awake, resting): (Vec<&Member>, Vec<&Member>) = self
            .backends
            .iter()
            .filter(|m| self.can_take(m, request, logprobs_needed))
            .partition(|m| !m.resting(now));
        awake.into_iter().chain(resting).collect()
    }

    /// Asks each backend that can take `request` in turn with `ask`, until one answers or fails with a
    /// class that does not move on.
    async fn ask<'a, T>(
        &'a self,
        request: ChatRequest,
        ask: impl Fn(&'a dyn Llm, ChatRequest) -> BoxFuture<'a, Result<T, LlmError>>,
    ) -> Result<T, LlmError> {
        let order = self.order(&request);
        let Some((last, before)) = order.split_last() else {
            // The first backend's own refusal says best what no backend could take.
            if let Some(Err(err)) = self.backends.first().map(|m| m.llm.accepts(&request)) {
                return Err(err);
            }
            return Err(LlmError::Config {
                message: format!(
                    "no backend of the fallback can take this request: each of its {} backends \
                     enforces another schema dialect than the first ({}){}; put backends of one \
                     dialect together",
                    self.backends.len(),
                    self.first_dialect().map_or("none", Dialect::name),
                    if request.json_lines {
                        ", or cannot constrain JSON Lines"
                    } else {
                        ""
                    }
                ),
            });
        };
        for member in before {
            match with_another(ask(&*member.llm, request.clone())).await {
                Ok(answer) => {
                    answered(&*member.llm);
                    return Ok(answer);
                }
                Err(err) if self.on.contains(err.class()) => {
                    member.rest(&err);
                    tracing::warn!(
                        target: "llm_extract::fallback",
                        backend = %describe(&*member.llm),
                        class = %err.class(),
                        error = %err,
                        "backend failed; asking the next one"
                    );
                }
                Err(err) => return Err(err),
            }
        }
        let result = ask(&*last.llm, request).await;
        match &result {
            Ok(_) => answered(&*last.llm),
            Err(err) => last.rest(err),
        }
        result
    }
}

fn describe(llm: &dyn Llm) -> String {
    llm.describe()
        .map_or_else(|| "a backend".to_owned(), |d| d.to_string())
}

/// Writes who answered to the current span and the log.
fn answered(llm: &dyn Llm) {
    let Some(described) = llm.describe() else {
        return;
    };
    described.record(&tracing::Span::current());
    crate::llm::answered(Some(described.clone()));
    tracing::debug!(target: "llm_extract::fallback", backend = %described, "backend answered");
}

impl std::fmt::Debug for Fallback {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let backends: Vec<String> = self.backends.iter().map(|m| describe(&*m.llm)).collect();
        f.debug_struct("Fallback")
            .field("backends", &backends)
            .field("on", &self.on)
            .finish()
    }
}

impl Llm for Fallback {
    fn dialect(&self) -> Dialect {
        self.first_dialect().unwrap_or(Dialect::Generic)
    }

    fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, LlmError>> {
        Box::pin(self.ask(request, |llm, request| llm.chat(request)))
    }

    fn chat_stream(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatStream, LlmError>> {
        Box::pin(self.ask(request, |llm, request| llm.chat_stream(request)))
    }

    fn constrains_json_lines(&self) -> bool {
        self.backends.iter().all(|m| m.llm.constrains_json_lines())
    }

    fn constrains_grounding(&self) -> bool {
        self.backends.iter().all(|m| m.llm.constrains_grounding())
    }

    fn count_tokens(&self, text: &str) -> Option<usize> {
        self.backends.first()?.llm.count_tokens(text)
    }

    fn describe(&self) -> Option<Description> {
        self.backends.first()?.llm.describe()
    }

    fn accepts(&self, request: &ChatRequest) -> Result<(), LlmError> {
        let mut first_refusal = None;
        for member in &self.backends {
            match member.llm.accepts(request) {
                Ok(()) => return Ok(()),
                Err(err) => {
                    first_refusal.get_or_insert(err);
                }
            }
        }
        first_refusal.map_or(Ok(()), Err)
    }

    fn gives_logprobs(&self) -> bool {
        self.backends.iter().any(|m| m.llm.gives_logprobs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{from_fn, Retry};
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::time::Duration;

    /// A backend that fails with `err` (when given) and counts its calls.
    fn backend(
        calls: &Arc<AtomicU32>,
        err: Option<LlmError>,
        answer: &'static str,
    ) -> Arc<dyn Llm> {
        let calls = Arc::clone(calls);
        Arc::new(from_fn(move |_request: ChatRequest| {
            calls.fetch_add(1, Ordering::SeqCst);
            let err = err.clone();
            async move {
                match err {
                    Some(err) => Err(err),
                    None => Ok(ChatResponse::new(answer)),
                }
            }
        }))
    }

    fn http(status: u16, message: &str, retry_after: Option<Duration>) -> LlmError {
        LlmError::Http {
            status,
            message: message.into(),
            retry_after,
        }
    }

    #[tokio::test]
    async fn each_class_in_the_set_moves_on_and_the_others_return() {
        let moving = [
            http(503, "busy", None),
            http(429, "slow down", None),
            http(400, "maximum context length is 4096 tokens", None),
            http(422, "schema not supported", None),
        ];
        for err in moving {
            let (a, b) = (Arc::new(AtomicU32::new(0)), Arc::new(AtomicU32::new(0)));
            let llm = Fallback::from_backends([
                backend(&a, Some(err.clone()), ""),
                backend(&b, None, "second"),
            ]);
            let answer = llm.chat_stream(ChatRequest::new("x")).await;
            assert!(answer.is_ok(), "{err}");
            assert_eq!((a.load(Ordering::SeqCst), b.load(Ordering::SeqCst)), (1, 1));
        }
        let (a, b) = (Arc::new(AtomicU32::new(0)), Arc::new(AtomicU32::new(0)));
        let auth = LlmError::Auth {
            status: 401,
            message: "bad key".into(),
        };
        let llm = Fallback::from_backends([backend(&a, Some(auth), ""), backend(&b, None, "")]);
        let err = llm.chat(ChatRequest::new("x")).await.unwrap_err();
        assert_eq!(err.class(), ErrorClass::Auth);
        assert_eq!(b.load(Ordering::SeqCst), 0);

        // A narrower set: a refusal is returned.
        let (a, b) = (Arc::new(AtomicU32::new(0)), Arc::new(AtomicU32::new(0)));
        let llm = Fallback::from_backends([
            backend(&a, Some(http(422, "no", None)), ""),
            backend(&b, None, ""),
        ])
        .on(ErrorClass::Transient | ErrorClass::RateLimited);
        assert!(llm.chat(ChatRequest::new("x")).await.is_err());
        assert_eq!(b.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn the_last_failure_is_returned_when_every_backend_fails() {
        let (a, b) = (Arc::new(AtomicU32::new(0)), Arc::new(AtomicU32::new(0)));
        let llm = Fallback::from_backends([
            backend(&a, Some(http(503, "first", None)), ""),
            backend(&b, Some(http(502, "second", None)), ""),
        ]);
        let err = llm.chat(ChatRequest::new("x")).await.unwrap_err();
        assert!(err.to_string().contains("second"), "{err}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_rate_limited_backend_rests_for_its_retry_after() {
        let (a, b) = (Arc::new(AtomicU32::new(0)), Arc::new(AtomicU32::new(0)));
        let limited = http(429, "slow down", Some(Duration::from_secs(30)));
        let llm =
            Fallback::from_backends([backend(&a, Some(limited), ""), backend(&b, None, "second")]);
        let started = Instant::now();
        for _ in 0..3 {
            let answer = llm.chat(ChatRequest::new("x")).await.unwrap();
            assert_eq!(answer.text, "second");
        }
        // Asked once, then passed over while it rests; nobody waited.
        assert_eq!((a.load(Ordering::SeqCst), b.load(Ordering::SeqCst)), (1, 3));
        assert_eq!(started.elapsed(), Duration::ZERO);
        tokio::time::advance(Duration::from_secs(31)).await;
        llm.chat(ChatRequest::new("x")).await.unwrap();
        assert_eq!(a.load(Ordering::SeqCst), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_backend_that_asks_to_wait_is_not_retried_while_another_can_answer() {
        let (a, b) = (Arc::new(AtomicU32::new(0)), Arc::new(AtomicU32::new(0)));
        let policy = crate::llm::RetryPolicy::new().max_retries(3);
        let limited =
            Retry::new(backend(&a, Some(http(429, "slow down", None)), "")).policy(policy.clone());
        let llm = Fallback::new(limited).or_else(backend(&b, None, "second"));
        let started = Instant::now();
        assert!(llm.chat_stream(ChatRequest::new("x")).await.is_ok());
        assert_eq!((a.load(Ordering::SeqCst), b.load(Ordering::SeqCst)), (1, 1));
        assert_eq!(started.elapsed(), Duration::ZERO);
        // A 503 without a Retry-After is still retried by the backend's own policy first.
        let (a, b) = (Arc::new(AtomicU32::new(0)), Arc::new(AtomicU32::new(0)));
        let busy =
            Retry::new(backend(&a, Some(http(503, "busy", None)), "")).policy(policy.clone());
        let llm = Fallback::new(busy).or_else(backend(&b, None, "second"));
        llm.chat(ChatRequest::new("x")).await.unwrap();
        assert_eq!((a.load(Ordering::SeqCst), b.load(Ordering::SeqCst)), (4, 1));
        // The last backend has nobody after it: it waits and retries as its policy says.
        let (a, b) = (Arc::new(AtomicU32::new(0)), Arc::new(AtomicU32::new(0)));
        let limited =
            Retry::new(backend(&b, Some(http(429, "slow down", None)), "")).policy(policy);
        let llm = Fallback::new(backend(&a, Some(http(503, "busy", None)), "")).or_else(limited);
        assert!(llm.chat(ChatRequest::new("x")).await.is_err());
        assert_eq!((a.load(Ordering::SeqCst), b.load(Ordering::SeqCst)), (1, 4));
    }

    /// A backend answering `answer`, counting its calls, refusing media and giving log-probabilities
    /// as told.
    struct Capable {
        calls: Arc<AtomicU32>,
        answer: &'static str,
        media: bool,
        logprobs: bool,
    }

    impl Llm for Capable {
        fn dialect(&self) -> Dialect {
            Dialect::OpenAiStrict
        }
        fn chat_stream(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatStream, LlmError>> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            let answer = self.answer;
            Box::pin(async move {
                from_fn(move |_: ChatRequest| async move { Ok(ChatResponse::new(answer)) })
                    .chat_stream(request)
                    .await
            })
        }
        fn accepts(&self, request: &ChatRequest) -> Result<(), LlmError> {
            if request.has_media() && !self.media {
                return Err(LlmError::Config {
                    message: "no media here".into(),
                });
            }
            Ok(())
        }
        fn gives_logprobs(&self) -> bool {
            self.logprobs
        }
    }

    #[tokio::test]
    async fn media_and_logprobs_go_only_to_a_backend_that_takes_them() {
        let calls: Vec<Arc<AtomicU32>> = (0..3).map(|_| Arc::new(AtomicU32::new(0))).collect();
        let member = |i: usize, answer, media, logprobs| Capable {
            calls: Arc::clone(&calls[i]),
            answer,
            media,
            logprobs,
        };
        let llm = Fallback::new(member(0, "text only", false, false))
            .or_else(member(1, "no logprobs", true, false))
            .or_else(member(2, "everything", true, true));
        let image = crate::llm::Message::user("x").with_media([crate::llm::Media::png(vec![1])]);
        let with_image = ChatRequest::default().with_message(image);
        assert_eq!(
            llm.chat(with_image.clone()).await.unwrap().text,
            "no logprobs"
        );
        let with_logprobs = ChatRequest::new("x").with_logprobs(true);
        assert_eq!(llm.chat(with_logprobs).await.unwrap().text, "everything");
        let both = with_image.with_logprobs(true);
        assert_eq!(llm.chat(both).await.unwrap().text, "everything");
        let counts: Vec<u32> = calls.iter().map(|c| c.load(Ordering::SeqCst)).collect();
        assert_eq!(counts, vec![0, 1, 2]);
        assert!(llm.gives_logprobs());
        // No backend takes media: the first one's refusal, before anything is sent.
        let llm = Fallback::new(member(0, "text only", false, true));
        let image = crate::llm::Message::user("x").with_media([crate::llm::Media::png(vec![1])]);
        let err = llm
            .chat(ChatRequest::default().with_message(image))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("no media here"), "{err}");
        // Log-probabilities asked of backends that give none: they answer without.
        let llm = Fallback::new(member(1, "no logprobs", true, false));
        let answer = llm.chat(ChatRequest::new("x").with_logprobs(true)).await;
        assert_eq!(answer.unwrap().text, "no logprobs");
    }

    #[tokio::test]
    async fn a_backend_that_cannot_take_the_request_is_not_asked() {
        let (a, b, c) = (
            Arc::new(AtomicU32::new(0)),
            Arc::new(AtomicU32::new(0)),
            Arc::new(AtomicU32::new(0)),
        );
        let other_dialect: Arc<dyn Llm> = {
            let b = Arc::clone(&b);
            Arc::new(
                from_fn(move |_request: ChatRequest| {
                    b.fetch_add(1, Ordering::SeqCst);
                    async { Ok(ChatResponse::new("wrong dialect")) }
                })
                .with_dialect(Dialect::Anthropic),
            )
        };
        let llm = Fallback::from_backends([
            backend(&a, Some(http(503, "busy", None)), ""),
            other_dialect,
            backend(&c, None, "same dialect"),
        ]);
        let with_schema =
            ChatRequest::new("x").with_schema("t", serde_json::json!({"type": "object"}));
        let answer = llm.chat(with_schema).await.unwrap();
        assert_eq!(answer.text, "same dialect");
        assert_eq!(b.load(Ordering::SeqCst), 0);
        // Free text goes anywhere.
        let (a, b) = (Arc::new(AtomicU32::new(0)), Arc::new(AtomicU32::new(0)));
        let llm = Fallback::from_backends([
            backend(&a, Some(http(503, "busy", None)), ""),
            Arc::new(
                from_fn(|_: ChatRequest| async { Ok(ChatResponse::new("free")) })
                    .with_dialect(Dialect::Anthropic),
            ),
        ]);
        assert_eq!(llm.chat(ChatRequest::new("x")).await.unwrap().text, "free");
        let _ = b;
        // No backend can take a JSON Lines request: a configuration error that says why.
        let llm = Fallback::from_backends([backend(&a, None, "")]);
        let err = llm
            .chat(ChatRequest::new("x").with_json_lines(true))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("JSON Lines"), "{err}");
    }
}
