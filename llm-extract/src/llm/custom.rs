//! [`HttpBackend`]: an HTTP backend over a provider [`Protocol`] of the caller's own, and its builder,
//! with the same client, key rules, redaction, retries and exchange hook as the built-in providers
//! (the generic backend of `backend.rs` under a public name).

use super::backend::{normalize_base, Backend, Common, Protocol};
use super::http::http_builder_methods;
use super::{BoxFuture, ChatRequest, ChatResponse, ChatStream, Description, Llm, LlmError};
use crate::schema::Dialect;

/// A backend speaking a [`Protocol`] of the caller's own over HTTP. Cheap to clone.
///
/// ```no_run
/// use llm_extract::llm::{HttpBackend, Protocol};
/// # fn build<P: Protocol>(my_protocol: P) -> Result<(), llm_extract::llm::LlmError> {
/// let llm = HttpBackend::builder(my_protocol, "https://api.example.com/v1", "small-model")
///     .api_key_env("EXAMPLE_API_KEY")
///     .build()?;
/// # let _ = llm;
/// # Ok(()) }
/// ```
pub struct HttpBackend<P> {
    backend: Backend<P>,
}

impl<P> Clone for HttpBackend<P> {
    fn clone(&self) -> Self {
        HttpBackend {
            backend: self.backend.clone(),
        }
    }
}

impl<P: Protocol> std::fmt::Debug for HttpBackend<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&self.backend, f)
    }
}

/// Builds an [`HttpBackend`]: the protocol, the API root and the model, then the same settings as
/// every HTTP backend's builder.
pub struct HttpBuilder<P> {
    protocol: P,
    base_url: String,
    common: Common,
}

impl<P: Protocol> std::fmt::Debug for HttpBuilder<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpBuilder")
            .field("protocol", &self.protocol)
            .field("base_url", &super::redact_url(&self.base_url))
            .field("common", &self.common)
            .finish()
    }
}

impl<P: Protocol> HttpBackend<P> {
    /// A builder for `model` at the API root `base_url` (an `http` or `https` URL; a trailing slash is
    /// dropped), speaking `protocol`.
    pub fn builder(
        protocol: P,
        base_url: impl Into<String>,
        model: impl Into<String>,
    ) -> HttpBuilder<P> {
        HttpBuilder {
            protocol,
            base_url: base_url.into(),
            common: Common::new(None, model.into()),
        }
    }

    /// The model's name.
    pub fn model(&self) -> &str {
        self.backend.model()
    }

    /// The API root requests go to, credentials included (show it through
    /// [`redact_url`](super::redact_url)).
    pub fn base_url(&self) -> &str {
        self.backend.base()
    }

    /// Whether requests carry an API key.
    pub fn has_key(&self) -> bool {
        self.backend.has_key()
    }
}

impl<P: Protocol> HttpBuilder<P> {
    http_builder_methods!();

    /// The API key, sent as `Authorization: Bearer`, or in the protocol's
    /// [`KEY_HEADER`](Protocol::KEY_HEADER).
    pub fn api_key(mut self, key: impl Into<super::Secret>) -> Self {
        self.common.key.key = Some(key.into());
        self
    }

    /// Reads the API key from the environment variable `name` when the backend is built (an error if
    /// it is unset). Without this or [`api_key`](Self::api_key), the protocol's
    /// [`API`](Protocol::API) variable is read for that API's own host only, and any other server
    /// gets no key.
    pub fn api_key_env(mut self, name: impl Into<String>) -> Self {
        self.common.key.key_env = Some(name.into());
        self
    }

    super::backend::insecure_key_builder_method!();

    super::env::env_builder_method!();

    /// The backend, its key chosen and checked by the rules of [`Protocol`] (a key or URL credentials
    /// over plain `http` to another machine fail here with [`LlmError::InsecureKey`] unless allowed).
    pub fn build(self) -> Result<HttpBackend<P>, LlmError> {
        let base = normalize_base(&self.base_url, None, "https://api.example.com/v1")?;
        Ok(HttpBackend {
            backend: Backend::build(self.protocol, base, self.common)?,
        })
    }
}

impl<P: Protocol> Llm for HttpBackend<P> {
    fn dialect(&self) -> Dialect {
        self.backend.dialect()
    }

    fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, LlmError>> {
        Box::pin(self.backend.chat(request))
    }

    fn chat_stream(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatStream, LlmError>> {
        Box::pin(self.backend.chat_stream(request))
    }

    fn describe(&self) -> Option<Description> {
        Some(self.backend.description())
    }

    fn accepts(&self, request: &ChatRequest) -> Result<(), LlmError> {
        self.backend.accepts(request)
    }

    fn gives_logprobs(&self) -> bool {
        self.backend.gives_logprobs()
    }
}
