//! [`Retry`]: the [`RetryPolicy`] of the HTTP backends as a layer over any backend (a custom one built
//! with [`from_fn`](crate::llm::from_fn), the embedded engine, another layer).

use crate::llm::retry_policy::Retries;
use crate::llm::{
    BoxFuture, ChatEvent, ChatRequest, ChatResponse, ChatStream, Llm, LlmError, RetryPolicy, Usage,
};
use futures_util::StreamExt;
use std::sync::Arc;

/// Re-sends a request whose failure is transient ([`LlmError::is_transient`]: the classes
/// [`Transient`](super::ErrorClass::Transient) and [`RateLimited`](super::ErrorClass::RateLimited)),
/// under a [`RetryPolicy`] (by default [`RetryPolicy::new`]); a server's `Retry-After` is honoured up
/// to the policy's maximum backoff. A stream that breaks is sent again too, within the same budget,
/// and says so with a [`ChatEvent::Restart`].
///
/// The HTTP backends retry by themselves already; over one of them, give it
/// [`RetryPolicy::none`] so the two budgets do not multiply.
///
/// ```
/// use llm_extract::llm::{from_fn, ChatRequest, ChatResponse, Llm, LlmError, Retry, RetryPolicy};
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use std::time::Duration;
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let calls = AtomicU32::new(0);
/// let flaky = from_fn(move |_request: ChatRequest| {
///     let first = calls.fetch_add(1, Ordering::SeqCst) == 0;
///     async move {
///         if first {
///             Err(LlmError::Http { status: 503, message: "busy".into(), retry_after: None })
///         } else {
///             Ok(ChatResponse::new("{}"))
///         }
///     }
/// });
/// let llm = Retry::new(flaky).policy(RetryPolicy::new().initial_backoff(Duration::from_millis(1)));
/// assert_eq!(llm.chat(ChatRequest::new("hi")).await?.text, "{}");
/// # Ok::<(), LlmError>(())
/// # }).unwrap();
/// ```
pub struct Retry<L> {
    inner: Arc<L>,
    policy: RetryPolicy,
}

impl<L> Retry<L> {
    /// `inner` under the default [`RetryPolicy`].
    pub fn new(inner: L) -> Self {
        Retry {
            inner: Arc::new(inner),
            policy: RetryPolicy::new(),
        }
    }

    /// Sets the policy.
    pub fn policy(mut self, policy: RetryPolicy) -> Self {
        self.policy = policy;
        self
    }
}

impl<L: std::fmt::Debug> std::fmt::Debug for Retry<L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Retry")
            .field("inner", &self.inner)
            .field("policy", &self.policy)
            .finish()
    }
}

/// Opens a stream of `request` on `llm`, sending it again while its failures are transient and the
/// budget lasts.
async fn open<L: Llm + ?Sized>(
    llm: &L,
    request: &ChatRequest,
    retries: &mut Retries,
) -> Result<ChatStream, LlmError> {
    loop {
        match llm.chat_stream(request.clone()).await {
            Ok(stream) => return Ok(stream),
            Err(err) => {
                if !retries.again("a request", &err).await {
                    return Err(err);
                }
            }
        }
    }
}

/// A stream being read under a retry budget.
struct Retrying<L> {
    inner: Arc<L>,
    request: ChatRequest,
    retries: Retries,
    stream: Option<ChatStream>,
}

impl<L: Llm + 'static> Retrying<L> {
    /// The next event: the stream's own, or after a transient break, a restart on a new stream.
    async fn next(mut self) -> Option<(Result<ChatEvent, LlmError>, Self)> {
        let stream = self.stream.as_mut()?;
        match stream.next().await? {
            Ok(ChatEvent::Done(done)) => {
                self.stream = None;
                Some((Ok(ChatEvent::Done(done)), self))
            }
            Ok(event) => Some((Ok(event), self)),
            Err(err) => {
                if !self.retries.again("an answer stream", &err).await {
                    self.stream = None;
                    return Some((Err(err), self));
                }
                match open(&*self.inner, &self.request, &mut self.retries).await {
                    Ok(stream) => {
                        self.stream = Some(stream);
                        let restart = ChatEvent::Restart {
                            error: err,
                            usage: Usage::default(),
                        };
                        Some((Ok(restart), self))
                    }
                    Err(again) => {
                        self.stream = None;
                        Some((Err(again), self))
                    }
                }
            }
        }
    }
}

impl<L: Llm + 'static> Llm for Retry<L> {
    pass_through!(dialect constrains_json_lines constrains_grounding count_tokens describe accepts gives_logprobs likelihood);

    fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            self.policy
                .run("a request", || self.inner.chat(request.clone()))
                .await
        })
    }

    fn chat_stream(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatStream, LlmError>> {
        Box::pin(async move {
            let mut retries = self.policy.start();
            let stream = open(&*self.inner, &request, &mut retries).await?;
            let state = Retrying {
                inner: Arc::clone(&self.inner),
                request,
                retries,
                stream: Some(stream),
            };
            Ok(Box::pin(futures_util::stream::unfold(state, Retrying::next)) as ChatStream)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{from_fn, from_stream_fn};
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::time::Duration;

    fn fast() -> RetryPolicy {
        RetryPolicy::new()
            .max_retries(3)
            .initial_backoff(Duration::from_millis(1))
    }

    fn failing(calls: Arc<AtomicU32>, fails: u32, status: u16) -> impl Llm {
        from_fn(move |_request: ChatRequest| {
            let n = calls.fetch_add(1, Ordering::SeqCst);
            async move {
                if n < fails {
                    Err(LlmError::Http {
                        status,
                        message: "no".into(),
                        retry_after: None,
                    })
                } else {
                    Ok(ChatResponse::new("{\"ok\": true}"))
                }
            }
        })
    }

    #[tokio::test]
    async fn a_transient_failure_is_sent_again_and_a_refusal_is_not() {
        let calls = Arc::new(AtomicU32::new(0));
        let llm = Retry::new(failing(Arc::clone(&calls), 2, 503)).policy(fast());
        let answer = llm.chat(ChatRequest::new("x")).await.unwrap();
        assert_eq!(answer.text, "{\"ok\": true}");
        assert_eq!(calls.load(Ordering::SeqCst), 3);

        let calls = Arc::new(AtomicU32::new(0));
        let llm = Retry::new(failing(Arc::clone(&calls), 2, 400)).policy(fast());
        let err = llm.chat_stream(ChatRequest::new("x")).await.err().unwrap();
        assert!(matches!(err, LlmError::Http { status: 400, .. }), "{err}");
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn the_budget_is_spent_then_the_failure_returned() {
        let calls = Arc::new(AtomicU32::new(0));
        let llm = Retry::new(failing(Arc::clone(&calls), 10, 429)).policy(fast());
        let err = llm.chat_stream(ChatRequest::new("x")).await.err().unwrap();
        assert!(matches!(err, LlmError::Http { status: 429, .. }), "{err}");
        assert_eq!(calls.load(Ordering::SeqCst), 4);
    }

    #[tokio::test]
    async fn a_broken_stream_restarts_within_the_same_budget() {
        let calls = Arc::new(AtomicU32::new(0));
        let counted = Arc::clone(&calls);
        let llm = from_stream_fn(move |_request: ChatRequest| {
            let n = counted.fetch_add(1, Ordering::SeqCst);
            async move {
                let events = if n == 0 {
                    vec![
                        Ok(ChatEvent::Delta("{\"a\"".into())),
                        Err(LlmError::Stream {
                            message: "connection reset".into(),
                            received: "{\"a\"".into(),
                        }),
                    ]
                } else {
                    vec![
                        Ok(ChatEvent::Delta("{\"a\": 1}".into())),
                        Ok(ChatEvent::Done(ChatResponse::new(""))),
                    ]
                };
                Ok(Box::pin(futures_util::stream::iter(events)) as ChatStream)
            }
        });
        let llm = Retry::new(llm).policy(fast());
        let events: Vec<_> = llm
            .chat_stream(ChatRequest::new("x"))
            .await
            .unwrap()
            .collect()
            .await;
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        assert!(
            matches!(events.get(1), Some(Ok(ChatEvent::Restart { .. }))),
            "{events:?}"
        );
        assert!(
            matches!(events.last(), Some(Ok(ChatEvent::Done(_)))),
            "{events:?}"
        );
        // Collected, the restart voids the broken part.
        let whole = llm.chat(ChatRequest::new("x")).await.unwrap();
        assert_eq!(whole.text, "{\"a\": 1}");
    }
}
