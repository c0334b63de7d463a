//! [`Exchange`]: one HTTP request an HTTP backend sent and the response it got, handed to the
//! [`ExchangeHook`] a builder's `on_exchange` installs, and the [`Recording`] the transport (`http.rs`)
//! fills in while the request goes out and its body comes back.
//!
//! Nothing secret reaches a hook: the URL's credentials are redacted ([`redact_url`]), the header
//! that carries the key shows `[redacted]`, and the key and the URL's credentials are replaced in
//! every text the exchange holds (the request body, the response body, headers, the error). The bytes
//! of images and PDFs in the request body are replaced by their [`Media::summary`] (media type, size,
//! SHA-256), so a dump holds no file and stays small.

use super::credentials::{redact_url, url_credential_values, Secret};
use super::{LlmError, Media};
use serde_json::Value;
use std::sync::Arc;

/// What [`redact`]ed text shows in place of a secret.
const REDACTED: &str = "[redacted]";

/// One request sent to a server and what came back (see the module description for what is left out).
/// A request sent again under the retry policy is another exchange.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct Exchange {
    /// `POST`, or `GET` for a request without a body.
    pub method: String,
    /// Where the request went, credentials redacted.
    pub url: String,
    /// The headers the backend set (the key's header with `[redacted]` as its value).
    pub request_headers: Vec<(String, String)>,
    /// The request's JSON body, media bytes replaced by their summary; `None` for a `GET`.
    pub request: Option<Value>,
    /// The response's status; `None` when no response came (a connection failure, a timeout).
    pub status: Option<u16>,
    /// The response's headers (a `set-cookie` shows `[redacted]`).
    pub response_headers: Vec<(String, String)>,
    /// The response body as it arrived (the raw event stream of a streamed answer), as far as it was
    /// read: a stream the caller dropped early shows what had arrived.
    pub response: String,
    /// Whether the answer was asked for as a stream.
    pub streamed: bool,
    /// Why the exchange failed, if it did (a transport error, an error status, a broken stream).
    pub error: Option<String>,
}

/// A function that receives every [`Exchange`] of a backend, called once per exchange when its
/// response has been read, or the stream dropped (on the task that read it: keep it short, or hand the
/// exchange to a channel).
///
/// ```
/// use llm_extract::llm::{Exchange, ExchangeHook, OpenAiCompatible};
/// use std::sync::{Arc, Mutex};
///
/// let seen: Arc<Mutex<Vec<Exchange>>> = Arc::default();
/// let keep = Arc::clone(&seen);
/// let llm = OpenAiCompatible::builder("http://127.0.0.1:8080/v1", "m")
///     .on_exchange(ExchangeHook::new(move |exchange: &Exchange| {
///         keep.lock().unwrap().push(exchange.clone());
///     }))
///     .build()?;
/// # let _ = llm;
/// # Ok::<(), llm_extract::llm::LlmError>(())
/// ```
#[derive(Clone)]
pub struct ExchangeHook(Arc<dyn Fn(&Exchange) + Send + Sync>);

impl ExchangeHook {
    /// A hook calling `hook`.
    pub fn new(hook: impl Fn(&Exchange) + Send + Sync + 'static) -> Self {
        ExchangeHook(Arc::new(hook))
    }
}

impl std::fmt::Debug for ExchangeHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ExchangeHook")
    }
}

/// An exchange being recorded: handed to its hook, redacted, when dropped.
pub(crate) struct Recording {
    hook: ExchangeHook,
    exchange: Exchange,
    body: Vec<u8>,
    secrets: Vec<String>,
}

impl Recording {
    /// Starts recording a request to `url` with `headers` (besides the key, which goes in `key_header`,
    /// `Authorization` when `None`, if `key` is set), `body` and the `media` its body carries.
    #[allow(clippy::too_many_arguments)]
    pub fn start(
        hook: &ExchangeHook,
        url: &str,
        key: Option<&Secret>,
        key_header: Option<&str>,
        headers: &[(&'static str, String)],
        body: Option<&Value>,
        media: &[Media],
        streamed: bool,
    ) -> Self {
        let mut secrets: Vec<String> = url_credential_values(url);
        if let Some(key) = key {
            secrets.push(key.expose().to_owned());
        }
        secrets.retain(|s| !s.is_empty());
        let mut request_headers: Vec<(String, String)> = Vec::new();
        if key.is_some() {
            request_headers.push((
                key_header.unwrap_or("authorization").to_owned(),
                REDACTED.to_owned(),
            ));
        }
        for (name, value) in headers {
            request_headers.push(((*name).to_owned(), redact(value, &secrets)));
        }
        let request = body.map(|body| without_media(body, media, &secrets));
        Recording {
            hook: hook.clone(),
            exchange: Exchange {
                method: if body.is_some() { "POST" } else { "GET" }.to_owned(),
                url: redact_url(url),
                request_headers,
                request,
                status: None,
                response_headers: Vec::new(),
                response: String::new(),
                streamed,
                error: None,
            },
            body: Vec::new(),
            secrets,
        }
    }

    /// The response's status and headers arrived.
    pub fn response(&mut self, status: u16, headers: &reqwest::header::HeaderMap) {
        self.exchange.status = Some(status);
        self.exchange.response_headers = headers
            .iter()
            .map(|(name, value)| {
                let value = if name == reqwest::header::SET_COOKIE {
                    REDACTED.to_owned()
                } else {
                    redact(&String::from_utf8_lossy(value.as_bytes()), &self.secrets)
                };
                (name.as_str().to_owned(), value)
            })
            .collect();
    }

    /// More of the response body arrived.
    pub fn body(&mut self, bytes: &[u8]) {
        self.body.extend_from_slice(bytes);
    }

    /// The exchange failed with `err` (the first failure is kept).
    pub fn failed(&mut self, err: &LlmError) {
        if self.exchange.error.is_none() {
            self.exchange.error = Some(redact(&err.to_string(), &self.secrets));
        }
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        self.exchange.response = redact(&String::from_utf8_lossy(&self.body), &self.secrets);
        (self.hook.0)(&self.exchange);
    }
}

/// `text` with every one of `secrets` replaced by `[redacted]`.
fn redact(text: &str, secrets: &[String]) -> String {
    let mut text = text.to_owned();
    for secret in secrets {
        if text.contains(secret.as_str()) {
            text = text.replace(secret.as_str(), REDACTED);
        }
    }
    text
}

/// `body` with every string that carries the bytes of one of `media` (as its base64, or a `data:` URL
/// of it) replaced by the part's [`Media::summary`], and `secrets` redacted in every other string.
fn without_media(body: &Value, media: &[Media], secrets: &[String]) -> Value {
    let encoded: Vec<(String, &Media)> = media
        .iter()
        .filter_map(|part| part.base64().map(|b64| (b64, part)))
        .filter(|(b64, _)| !b64.is_empty())
        .collect();
    let mut body = body.clone();
    replace_strings(&mut body, &mut |text: &str| {
        let carried = encoded.iter().find(|(b64, _)| {
            text == b64.as_str()
                || (text.starts_with("data:") && text.ends_with(&format!(",{b64}")))
        });
        match carried {
            Some((_, part)) => Some(serde_json::json!({ "omitted_media": part.summary() })),
            None if secrets.iter().any(|s| text.contains(s.as_str())) => {
                Some(Value::String(redact(text, secrets)))
            }
            None => None,
        }
    });
    body
}

/// Replaces each string of `value` for which `with` gives a replacement (object keys are kept).
fn replace_strings(value: &mut Value, with: &mut impl FnMut(&str) -> Option<Value>) {
    match value {
        Value::String(text) => {
            if let Some(replacement) = with(text) {
                *value = replacement;
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|item| replace_strings(item, with)),
        Value::Object(map) => map
            .values_mut()
            .for_each(|item| replace_strings(item, with)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Mutex;

    #[test]
    fn a_recording_redacts_every_secret_and_replaces_media_bytes() {
        let seen: Arc<Mutex<Vec<Exchange>>> = Arc::default();
        let keep = Arc::clone(&seen);
        let hook = ExchangeHook::new(move |e: &Exchange| keep.lock().unwrap().push(e.clone()));
        let key = Secret::new("sk-key-0123456789");
        let png = Media::png(b"\x89PNG-bytes-of-the-image".to_vec());
        let b64 = png.base64().unwrap();
        let body = json!({
            "messages": [{"content": [
                {"type": "image_url", "image_url": {"url": png.data_url()}},
                {"type": "text", "text": "echo sk-key-0123456789 and pw-987654"}
            ]}],
            "images": [b64],
        });
        let mut recording = Recording::start(
            &hook,
            "http://user:pw-987654@127.0.0.1:1/v1?key=q-55555&x=1",
            Some(&key),
            Some("x-api-key"),
            &[("anthropic-version", "2023-06-01".to_owned())],
            Some(&body),
            std::slice::from_ref(&png),
            false,
        );
        recording.body(b"{\"echo\": \"sk-key-0123456789 q-55555\"}");
        recording.failed(&LlmError::Config {
            message: "pw-987654".into(),
        });
        drop(recording);
        let seen = seen.lock().unwrap();
        let exchange = &seen[0];
        let all = serde_json::to_string(exchange).unwrap();
        for secret in ["sk-key-0123456789", "pw-987654", "q-55555", &b64] {
            assert!(!all.contains(secret), "{secret} in {all}");
        }
        let request = exchange.request.as_ref().unwrap();
        let summary = &request["images"][0]["omitted_media"];
        assert_eq!(summary["bytes"], 23);
        assert_eq!(
            request["messages"][0]["content"][0]["image_url"]["url"]["omitted_media"],
            *summary
        );
        assert_eq!(
            exchange.request_headers[0],
            ("x-api-key".to_owned(), REDACTED.to_owned())
        );
        assert!(exchange.url.contains("x=1"), "{}", exchange.url);
        assert_eq!(exchange.method, "POST");
    }
}
