//! What a provider's batch API needs of an HTTP backend, type-erased: the body of a whole chat
//! request exactly as the online call writes it, the reading of a whole answer exactly as the online
//! call reads it, and plain requests (JSON, a file upload, a download) with the backend's key, retry
//! policy, timeouts and error rule. [`crate::batch`] builds its jobs on it; nothing here knows a
//! batch format.

use super::backend::{Backend, Protocol};
use super::{BoxFuture, ChatRequest, ChatResponse, Description, LlmError, RetryPolicy};
use crate::schema::Dialect;
use serde_json::Value;

/// An HTTP backend as a batch job sees it.
pub(crate) trait BatchWire: std::fmt::Debug + Send + Sync {
    /// The schema dialect the server enforces.
    fn dialect(&self) -> Dialect;
    /// The API root, credentials included (show it through [`super::redact_url`]).
    fn base(&self) -> &str;
    /// The model's name.
    fn model(&self) -> &str;
    /// Who the backend is.
    fn description(&self) -> Description;
    /// The URL of an online (non-streamed) chat request.
    fn chat_url(&self) -> String;
    /// The retry policy of the backend's requests.
    fn retry_policy(&self) -> &RetryPolicy;
    /// The body of `request` as the online call sends it (media checked against the limits).
    fn body(&self, request: &ChatRequest) -> Result<Value, LlmError>;
    /// A whole answer, read as the online call reads it.
    fn read(&self, answer: &Value) -> Result<ChatResponse, LlmError>;
    /// `GET url` (`body` `None`) or `POST url` with a JSON body: the response's bytes.
    fn send<'a>(
        &'a self,
        url: &'a str,
        body: Option<&'a Value>,
    ) -> BoxFuture<'a, Result<Vec<u8>, LlmError>>;
    /// `POST url` with `bytes` of type `content_type`: the response's bytes.
    fn upload<'a>(
        &'a self,
        url: &'a str,
        content_type: &'a str,
        bytes: &'a [u8],
    ) -> BoxFuture<'a, Result<Vec<u8>, LlmError>>;
}

impl<P: Protocol> BatchWire for Backend<P> {
    fn dialect(&self) -> Dialect {
        Backend::dialect(self)
    }

    fn base(&self) -> &str {
        Backend::base(self)
    }

    fn model(&self) -> &str {
        Backend::model(self)
    }

    fn description(&self) -> Description {
        Backend::description(self)
    }

    fn chat_url(&self) -> String {
        Backend::chat_url(self)
    }

    fn retry_policy(&self) -> &RetryPolicy {
        Backend::retry_policy(self)
    }

    fn body(&self, request: &ChatRequest) -> Result<Value, LlmError> {
        self.chat_body(request)
    }

    fn read(&self, answer: &Value) -> Result<ChatResponse, LlmError> {
        self.read_answer(answer)
    }

    fn send<'a>(
        &'a self,
        url: &'a str,
        body: Option<&'a Value>,
    ) -> BoxFuture<'a, Result<Vec<u8>, LlmError>> {
        Box::pin(self.call(url, body, |bytes| Ok(bytes.to_vec())))
    }

    fn upload<'a>(
        &'a self,
        url: &'a str,
        content_type: &'a str,
        bytes: &'a [u8],
    ) -> BoxFuture<'a, Result<Vec<u8>, LlmError>> {
        Box::pin(self.call_raw(url, content_type, bytes, |bytes| Ok(bytes.to_vec())))
    }
}
