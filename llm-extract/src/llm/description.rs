//! [`Description`]: who a backend is (its provider, its address with credentials redacted, its model),
//! as [`Llm::describe`](super::Llm::describe) tells it to telemetry and to a fallback's log.

/// Who a backend is, safe to log: never a key, and its address with any credentials redacted.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Description {
    /// The provider, as the OpenTelemetry GenAI conventions name it (`gen_ai.provider.name`):
    /// `openai`, `anthropic`, `gcp.gemini`, `ollama`, or a name of the backend's own.
    pub provider: String,
    /// The API root requests go to, credentials redacted ([`redact_url`](super::redact_url)); `None` for
    /// a backend without one.
    pub url: Option<String>,
    /// The model requests ask for; `None` when the backend does not say.
    pub model: Option<String>,
    /// A digest of the credentials requests carry (the key, and any in the address), which tells two
    /// callers of one server apart (a [`Cache`](super::Cache) keys answers by it, salted); `None`
    /// without credentials or when the backend does not say.
    pub credentials: Option<CredentialDigest>,
}

/// The SHA-256 digest of a backend's credentials: never the credentials, and not shown by `Debug`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct CredentialDigest([u8; 32]);

impl CredentialDigest {
    /// The digest of `parts` (each ended by a zero byte, so no two lists of parts share one).
    pub fn of<'a>(parts: impl IntoIterator<Item = &'a str>) -> Self {
        use sha2::Digest;
        let mut hasher = sha2::Sha256::new();
        for part in parts {
            hasher.update(part.as_bytes());
            hasher.update([0]);
        }
        CredentialDigest(hasher.finalize().into())
    }

    /// The digest's bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl std::fmt::Debug for CredentialDigest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CredentialDigest([redacted])")
    }
}

impl Description {
    /// A backend of `provider`, with no address and no model.
    pub fn new(provider: impl Into<String>) -> Self {
        Description {
            provider: provider.into(),
            url: None,
            model: None,
            credentials: None,
        }
    }

    /// Sets the address; any credentials in it are redacted here.
    pub fn with_url(mut self, url: &str) -> Self {
        self.url = Some(super::redact_url(url));
        self
    }

    /// Sets the model.
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }
    /// Sets the digest of the credentials requests carry (see [`Description::credentials`]).
    pub fn with_credentials(mut self, credentials: CredentialDigest) -> Self {
        self.credentials = Some(credentials);
        self
    }
}

tokio::task_local! {
    /// Who answered the last request of the task, where [`noting_who_answers`] set a slot for it.
    static ANSWERED: std::cell::RefCell<Option<Description>>;
}

/// Runs `task` with a slot noting which backend answers each of its requests ([`answered`],
/// [`take_answered`]); a request made outside one notes nothing.
/// The slot for the verdict on each answer (`verdict.rs`) lives as long.
pub(crate) async fn noting_who_answers<F: std::future::Future>(task: F) -> F::Output {
    let task = super::verdict::scoped(task);
    ANSWERED.scope(std::cell::RefCell::new(None), task).await
}

/// Notes that `described` answers the request under way (a [`Fallback`](super::Fallback) notes the
/// backend it chose after the caller noted the fallback itself).
pub(crate) fn answered(described: Option<Description>) {
    let _ = ANSWERED.try_with(|slot| *slot.borrow_mut() = described);
}

/// Who answered the last request noted, once.
pub(crate) fn take_answered() -> Option<Description> {
    ANSWERED
        .try_with(|slot| slot.borrow_mut().take())
        .ok()
        .flatten()
}

impl Description {
    /// Writes who answers on `span`, under the names of the OpenTelemetry GenAI conventions:
    /// `gen_ai.provider.name`, `server.address`, `gen_ai.request.model`, and `otel.name` as
    /// `chat {model}` (a span that does not declare a field ignores it).
    pub(crate) fn record(&self, span: &tracing::Span) {
        self.record_backend(span);
        if let Some(model) = &self.model {
            span.record("otel.name", format!("chat {model}").as_str());
        }
    }

    /// [`Description::record`] without `otel.name`: for a span named after what it does rather than
    /// after the request to the model (the extraction's).
    pub(crate) fn record_backend(&self, span: &tracing::Span) {
        span.record("gen_ai.provider.name", self.provider.as_str());
        if let Some(url) = &self.url {
            span.record("server.address", url.as_str());
        }
        if let Some(model) = &self.model {
            span.record("gen_ai.request.model", model.as_str());
        }
    }
}

impl std::fmt::Display for Description {
    /// `provider model at url`, leaving out what is unknown.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.provider)?;
        if let Some(model) = &self.model {
            write!(f, " {model}")?;
        }
        if let Some(url) = &self.url {
            write!(f, " at {url}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_url_is_redacted_and_the_display_names_what_is_known() {
        let described = Description::new("openai")
            .with_url("https://user:hunter2@api.example.com/v1?key=sk-1")
            .with_model("gpt-x");
        let shown = described.to_string();
        assert!(
            !shown.contains("hunter2") && !shown.contains("sk-1"),
            "{shown}"
        );
        assert!(shown.starts_with("openai gpt-x at https://"), "{shown}");
        assert_eq!(Description::new("mine").to_string(), "mine");
    }
}
