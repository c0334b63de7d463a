//! [`from_fn`] and [`from_stream_fn`]: an async closure as an [`Llm`], for tests and custom providers.
//!
//! The closure gets the whole request, the images and PDFs of its messages included
//! ([`Message::media`](super::Message::media)): it sends them, converts them or refuses them itself
//! (with [`LlmError::Media`]); nothing is checked or dropped before it is called.

use super::{BoxFuture, ChatEvent, ChatRequest, ChatResponse, ChatStream, Llm, LlmError};
use crate::schema::Dialect;
use std::future::Future;

/// An [`Llm`] made from a closure; see [`from_fn`].
#[derive(Clone)]
pub struct FnLlm<F> {
    f: F,
    dialect: Dialect,
    delta_chars: usize,
}

/// An [`Llm`] made from a closure that streams; see [`from_stream_fn`].
#[derive(Clone)]
pub struct StreamFnLlm<F> {
    f: F,
    dialect: Dialect,
}

/// Turns an async closure returning a whole [`ChatResponse`] into an [`Llm`].
///
/// Streaming callers get the text split into small deltas (a few characters each, never inside a
/// character), so code that consumes streams can be tested with a plain closure. The dialect defaults to
/// [`Dialect::Generic`]; set another with [`FnLlm::with_dialect`].
///
/// ```
/// use llm_extract::llm::{from_fn, ChatRequest, ChatResponse, Llm};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let llm = from_fn(|request: ChatRequest| async move {
///     let asked = request.messages.last().map(|m| m.content.len()).unwrap_or(0);
///     Ok(ChatResponse::new(format!("{{\"length\": {asked}}}")).with_usage(asked as u64, 5))
/// });
/// let answer = llm.chat(ChatRequest::new("hello")).await?;
/// assert_eq!(answer.text, r#"{"length": 5}"#);
/// # Ok::<(), llm_extract::llm::LlmError>(())
/// # }).unwrap();
/// ```
pub fn from_fn<F, Fut>(f: F) -> FnLlm<F>
where
    F: Fn(ChatRequest) -> Fut + Send + Sync,
    Fut: Future<Output = Result<ChatResponse, LlmError>> + Send + 'static,
{
    FnLlm {
        f,
        dialect: Dialect::Generic,
        delta_chars: 4,
    }
}

/// Turns an async closure returning a [`ChatStream`] into an [`Llm`] (its `chat` collects the stream).
///
/// Use it to script exactly how an answer arrives: the deltas, an error in the middle, a missing end.
///
/// ```
/// use futures_util::stream;
/// use llm_extract::llm::{from_stream_fn, ChatEvent, ChatRequest, ChatResponse, ChatStream, Llm};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let llm = from_stream_fn(|_request: ChatRequest| async move {
///     let events = vec![
///         Ok(ChatEvent::Delta("{\"a\":".into())),
///         Ok(ChatEvent::Delta(" 1}".into())),
///         Ok(ChatEvent::Done(ChatResponse::new(""))),
///     ];
///     Ok(Box::pin(stream::iter(events)) as ChatStream)
/// });
/// assert_eq!(llm.chat(ChatRequest::new("hi")).await?.text, r#"{"a": 1}"#);
/// # Ok::<(), llm_extract::llm::LlmError>(())
/// # }).unwrap();
/// ```
pub fn from_stream_fn<F, Fut>(f: F) -> StreamFnLlm<F>
where
    F: Fn(ChatRequest) -> Fut + Send + Sync,
    Fut: Future<Output = Result<ChatStream, LlmError>> + Send + 'static,
{
    StreamFnLlm {
        f,
        dialect: Dialect::Generic,
    }
}

impl<F> FnLlm<F> {
    /// Sets the schema dialect the closure claims to enforce.
    pub fn with_dialect(mut self, dialect: Dialect) -> Self {
        self.dialect = dialect;
        self
    }

    /// Sets how many characters each streamed delta holds (at least 1; default 4).
    pub fn with_delta_chars(mut self, chars: usize) -> Self {
        self.delta_chars = chars.max(1);
        self
    }
}

impl<F> StreamFnLlm<F> {
    /// Sets the schema dialect the closure claims to enforce.
    pub fn with_dialect(mut self, dialect: Dialect) -> Self {
        self.dialect = dialect;
        self
    }
}

impl<F> std::fmt::Debug for FnLlm<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FnLlm")
            .field("dialect", &self.dialect)
            .finish_non_exhaustive()
    }
}

impl<F> std::fmt::Debug for StreamFnLlm<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamFnLlm")
            .field("dialect", &self.dialect)
            .finish_non_exhaustive()
    }
}

impl<F, Fut> Llm for FnLlm<F>
where
    F: Fn(ChatRequest) -> Fut + Send + Sync,
    Fut: Future<Output = Result<ChatResponse, LlmError>> + Send + 'static,
{
    fn dialect(&self) -> Dialect {
        self.dialect
    }

    fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, LlmError>> {
        Box::pin((self.f)(request))
    }

    fn chat_stream(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatStream, LlmError>> {
        let answer = (self.f)(request);
        let delta_chars = self.delta_chars;
        Box::pin(async move {
            let response = answer.await?;
            let mut events: Vec<Result<ChatEvent, LlmError>> = Vec::new();
            if let Some(thinking) = &response.thinking {
                events.push(Ok(ChatEvent::Thinking(thinking.clone())));
            }
            events.extend(
                split_chars(&response.text, delta_chars)
                    .map(|piece| Ok(ChatEvent::Delta(piece.to_owned()))),
            );
            events.push(Ok(ChatEvent::Done(response)));
            Ok(Box::pin(futures_util::stream::iter(events)) as ChatStream)
        })
    }
}

impl<F, Fut> Llm for StreamFnLlm<F>
where
    F: Fn(ChatRequest) -> Fut + Send + Sync,
    Fut: Future<Output = Result<ChatStream, LlmError>> + Send + 'static,
{
    fn dialect(&self) -> Dialect {
        self.dialect
    }

    fn chat_stream(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatStream, LlmError>> {
        Box::pin((self.f)(request))
    }
}

/// Splits `text` into pieces of at most `chars` characters.
fn split_chars(text: &str, chars: usize) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = rest
            .char_indices()
            .nth(chars)
            .map_or(rest.len(), |(i, _)| i);
        let (piece, tail) = rest.split_at(end);
        rest = tail;
        Some(piece)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;

    #[test]
    fn split_respects_char_boundaries() {
        let pieces: Vec<_> = split_chars("héllo wörld", 3).collect();
        assert_eq!(pieces.concat(), "héllo wörld");
        assert!(pieces.iter().all(|p| p.chars().count() <= 3));
        assert_eq!(split_chars("", 3).count(), 0);
    }

    #[tokio::test]
    async fn stream_of_a_closure_ends_with_the_summary() {
        let llm = from_fn(|_req| async { Ok(ChatResponse::new("abcdefghij").with_usage(3, 4)) })
            .with_delta_chars(3);
        let mut stream = llm.chat_stream(ChatRequest::new("x")).await.unwrap();
        let mut deltas = Vec::new();
        let mut done = None;
        while let Some(event) = stream.next().await {
            match event.unwrap() {
                ChatEvent::Delta(d) => deltas.push(d),
                ChatEvent::Done(r) => done = Some(r),
                ChatEvent::Thinking(_) | ChatEvent::Restart { .. } => {}
            }
        }
        assert_eq!(deltas, ["abc", "def", "ghi", "j"]);
        assert_eq!(done.unwrap().usage.completion_tokens, 4);
    }
}
