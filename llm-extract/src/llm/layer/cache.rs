//! [`Cache`]: a response cache as a layer over any backend. An answer is looked up by a digest of the
//! request and of who it goes to; one that is not there is asked of the backend, and stored only once
//! the extraction accepts it (`verdict.rs`), so an answer that failed validation is never stored and a
//! rerun asks again for exactly the documents that failed. The answers live in a [`ResponseStore`].

use super::cache_store::{hex, ResponseStore};
use super::CacheError;
use crate::llm::{
    verdict, Accumulator, BoxFuture, ChatEvent, ChatRequest, ChatResponse, ChatStream, Description,
    Llm, LlmError, MediaSource, Merged,
};
use futures_util::StreamExt;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::sync::Arc;

/// Answers a request it has seen (and whose answer an extraction accepted) from disk, without asking
/// the backend; asks the backend otherwise.
///
/// The key of an answer is the SHA-256 of the request as the backend would get it (system prompt,
/// messages with a digest of their media, schema, sampling, every setting) and of who it goes to: the
/// backend's [`describe`](Llm::describe) (provider, address with credentials redacted, model) and the
/// digest of its credentials mixed with the cache's salt. Neither the key of a backend nor its digest
/// is ever written: a cache directory holds answers under names that cannot be traced back to a key.
///
/// Only accepted answers are stored: inside an extraction, the answer whose value validated (the
/// loop tells the layer); outside one, nothing, unless stored with [`Cache::store`]. An answer from
/// the cache has [`ChatResponse::cached`] set and zero usage, and so has its
/// [`Attempt::cached`](crate::report::Attempt::cached) in the report.
///
/// Put it outermost, over [`Retry`](super::Retry) and [`Fallback`](super::Fallback): a hit then
/// waits for nothing. Over a fallback, answers are keyed by the backend the fallback describes itself
/// as (its first), whichever one answered.
///
/// ```
/// use llm_extract::llm::{from_fn, ChatRequest, ChatResponse, Llm, LlmExt, ResponseStore};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// let store = ResponseStore::open(dir.path())?;
/// let llm = from_fn(|_request: ChatRequest| async { Ok(ChatResponse::new("{}")) }).with_cache(store);
/// # let _ = llm;
/// # Ok(())
/// # }
/// ```
pub struct Cache<L> {
    inner: Arc<L>,
    store: ResponseStore,
    /// Who requests go to, as the key holds it: the backend's description and its salted credentials.
    whom: Value,
}

impl<L: Llm> Cache<L> {
    /// `inner`, answering from `store` what it holds.
    pub fn new(inner: L, store: ResponseStore) -> Self {
        let described = inner.describe();
        let whom = match &described {
            Some(Description {
                provider,
                url,
                model,
                credentials,
                ..
            }) => {
                let credentials = credentials.map(|digest| {
                    let mut hasher = Sha256::new();
                    hasher.update(store.salt());
                    hasher.update(digest.as_bytes());
                    hex(&hasher.finalize())
                });
                json!({"provider": provider, "url": url, "model": model, "credentials": credentials})
            }
            None => Value::Null,
        };
        Cache {
            inner: Arc::new(inner),
            store,
            whom,
        }
    }

    /// Adds `identity` to who the requests go to, for what the backend's description does not tell
    /// apart (the file of an embedded model, replaced under the same name). Never a secret: it goes
    /// into the keys (hashed, but unsalted).
    pub fn with_identity(mut self, identity: impl AsRef<[u8]>) -> Self {
        let digest = hex(&Sha256::digest(identity.as_ref()));
        self.whom = json!({"described": self.whom, "identity": digest});
        self
    }

    /// The backend it asks on a miss.
    pub fn inner(&self) -> &L {
        &self.inner
    }

    /// The store the answers are in.
    pub fn store_dir(&self) -> &std::path::Path {
        self.store.dir()
    }

    /// The answer stored for `request`, if any (marked [`ChatResponse::cached`], with zero usage).
    pub fn lookup(&self, request: &ChatRequest) -> Option<ChatResponse> {
        self.store.get(&self.key(request))
    }

    /// Stores `response` as the answer to `request` (what an extraction does with an answer it
    /// accepts; for a caller that uses the layer outside one).
    pub fn store(&self, request: &ChatRequest, response: &ChatResponse) -> Result<(), CacheError> {
        self.store.put(&self.key(request), response)
    }

    /// The key of `request`.
    fn key(&self, request: &ChatRequest) -> [u8; 32] {
        let material = json!({"to": self.whom, "request": canonical(request)});
        let mut hasher = Sha256::new();
        hasher.update(material.to_string().as_bytes());
        hasher.finalize().into()
    }
}

/// `request` as the key holds it: every field, media by their digest. Written by destructuring so
/// that a field added to the request cannot be left out of the key.
fn canonical(request: &ChatRequest) -> Value {
    let ChatRequest {
        system,
        messages,
        schema,
        schema_name,
        schema_relaxed,
        temperature,
        max_tokens,
        seed,
        repeat_penalty,
        stop,
        json_lines,
        tool_call,
        grounding,
        logprobs,
        stable_messages: _, // where a prompt cache breaks the prompt, not what the model reads
        stable_input: _,    // the same
    } = request;
    let messages: Vec<Value> = messages
        .iter()
        .map(|m| {
            let media: Vec<Value> = m
                .media
                .iter()
                .map(|media| {
                    let source = match media.source() {
                        MediaSource::Bytes(bytes) => json!({"sha256": hex(&Sha256::digest(bytes))}),
                        MediaSource::Url(url) => json!({"url": url}),
                    };
                    json!({"type": media.media_type().as_str(), "name": media.name(), "source": source})
                })
                .collect();
            json!({"role": m.role, "content": m.content, "media": media})
        })
        .collect();
    json!({
        "system": system,
        "messages": messages,
        "schema": schema,
        "schema_name": schema_name,
        "schema_relaxed": schema_relaxed,
        "temperature": temperature,
        "max_tokens": max_tokens,
        "seed": seed,
        "repeat_penalty": repeat_penalty,
        "stop": stop,
        "json_lines": json_lines,
        "tool_call": tool_call,
        "grounding": grounding.as_deref(),
        "logprobs": logprobs,
    })
}

impl<L: std::fmt::Debug> std::fmt::Debug for Cache<L> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache")
            .field("inner", &self.inner)
            .field("dir", &self.store.dir())
            .finish()
    }
}

impl<L: Llm + 'static> Llm for Cache<L> {
    pass_through!(dialect constrains_json_lines constrains_grounding count_tokens describe accepts gives_logprobs likelihood);

    fn chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            let key = self.key(&request);
            if let Some(hit) = self.store.get(&key) {
                return Ok(hit);
            }
            let response = self.inner.chat(request).await?;
            leave(&self.store, key, response.clone());
            Ok(response)
        })
    }

    fn chat_stream(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatStream, LlmError>> {
        Box::pin(async move {
            let key = self.key(&request);
            if let Some(hit) = self.store.get(&key) {
                // The whole answer at once, in the summary: nothing streamed, nothing estimated.
                let done: ChatStream =
                    Box::pin(futures_util::stream::iter([Ok(ChatEvent::Done(hit))]));
                return Ok(done);
            }
            let stream = self.inner.chat_stream(request).await?;
            let store = self.store.clone();
            let mut answer = Accumulator::new();
            let watched = stream.inspect(move |event| {
                let Ok(event) = event else { return };
                if let Merged::Done { summary, .. } = answer.merge(event.clone()) {
                    let whole = std::mem::take(&mut answer).complete(summary);
                    leave(&store, key, whole);
                }
            });
            Ok(Box::pin(watched) as ChatStream)
        })
    }
}

/// Leaves the store of `response` under `key` to the extraction's verdict.
fn leave(store: &ResponseStore, key: [u8; 32], response: ChatResponse) {
    let store = store.clone();
    verdict::awaiting(Box::new(move || {
        if let Err(err) = store.put(&key, &response) {
            tracing::warn!(error = %err, "response cache: the answer was not stored");
        }
    }));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{from_fn, LlmExt, OpenAiCompatible};
    use std::sync::atomic::{AtomicU32, Ordering};

    /// A backend answering `text`, counting its calls.
    fn counting(calls: &Arc<AtomicU32>, text: &'static str) -> impl Llm + 'static {
        let calls = Arc::clone(calls);
        from_fn(move |_request: ChatRequest| {
            calls.fetch_add(1, Ordering::SeqCst);
            async move { Ok(ChatResponse::new(text).with_usage(100, 5)) }
        })
    }

    #[tokio::test]
    async fn an_accepted_answer_is_served_again_and_an_unaccepted_one_never() {
        let dir = tempfile::tempdir().unwrap();
        let store = ResponseStore::open(dir.path()).unwrap();
        let calls = Arc::new(AtomicU32::new(0));
        let llm = counting(&calls, "{\"a\":1}").with_cache(store);
        let request = ChatRequest::new("doc");
        // Not accepted: asked again.
        verdict::scoped(async {
            llm.chat(request.clone()).await.unwrap();
            verdict::discard();
            llm.chat(request.clone()).await.unwrap();
        })
        .await;
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        // Accepted (streamed, as the extraction asks): stored, then answered from the cache.
        verdict::scoped(async {
            let stream = llm.chat_stream(request.clone()).await.unwrap();
            let answer = crate::llm::accumulate::collect(stream).await.unwrap();
            assert!(!answer.cached);
            verdict::accept();
        })
        .await;
        let hit = llm.chat(request.clone()).await.unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        assert!(hit.cached);
        assert_eq!((hit.text.as_str(), hit.usage.total()), ("{\"a\":1}", 0));
        // The marks of a prompt cache are not part of the question.
        let mut marked = request.clone();
        marked.stable_messages = 1;
        assert!(llm.lookup(&marked).is_some());
        assert!(llm.lookup(&request.clone().with_seed(1)).is_none());
        // Another identity (another model file under the same name) is another cache.
        let store = ResponseStore::open(dir.path()).unwrap();
        let other = counting(&calls, "{}")
            .with_cache(store)
            .with_identity("model.gguf 2");
        assert!(other.lookup(&request).is_none());
    }

    #[test]
    fn another_key_is_another_cache_and_no_key_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let store = ResponseStore::open(dir.path()).unwrap();
        let server = |key: &str| {
            OpenAiCompatible::builder("http://127.0.0.1:9/v1", "m")
                .api_key(key)
                .build()
                .unwrap()
                .with_cache(store.clone())
        };
        let (mine, theirs) = (server("sk-mine-0123456789"), server("sk-theirs-0123456789"));
        let request = ChatRequest::new("doc");
        mine.store(&request, &ChatResponse::new("{}")).unwrap();
        assert!(mine.lookup(&request).is_some());
        assert!(
            theirs.lookup(&request).is_none(),
            "another key read my answer"
        );
        let mut files = vec![dir.path().join("salt")];
        let fans = std::fs::read_dir(dir.path().join("answers")).unwrap();
        for fan in fans {
            for entry in std::fs::read_dir(fan.unwrap().path()).unwrap() {
                files.push(entry.unwrap().path());
            }
        }
        assert_eq!(files.len(), 2);
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            assert!(!text.contains("sk-mine"), "{}: {text}", file.display());
            assert!(!format!("{:?}", mine).contains("sk-mine"));
        }
    }
}
