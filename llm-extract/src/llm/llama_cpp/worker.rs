//! [`Llm`] for [`LlamaCpp`]: each request waits its turn in the queue, then generates on a blocking
//! thread that streams its text through a channel.

use super::exit::Inside;
use super::{LlamaCpp, LlamaCppError};
use crate::llm::{BoxFuture, ChatEvent, ChatRequest, ChatStream, Llm, LlmError};
use crate::schema::Dialect;
use std::sync::Arc;

impl Llm for LlamaCpp {
    fn dialect(&self) -> Dialect {
        Dialect::Ollama
    }

    fn constrains_json_lines(&self) -> bool {
        true
    }

    fn chat_stream(&self, request: ChatRequest) -> BoxFuture<'_, Result<ChatStream, LlmError>> {
        let engine = Arc::clone(&self.engine);
        Box::pin(async move {
            let permit = Arc::clone(&engine.queue)
                .acquire_owned()
                .await
                .map_err(|_| LlamaCppError::engine("the request queue is closed"))?;
            // Unbounded: generation must never wait for the reader while it holds a queue slot.
            let (events, receiver) =
                tokio::sync::mpsc::unbounded_channel::<Result<ChatEvent, LlmError>>();
            let (ready, started) = tokio::sync::oneshot::channel::<Result<(), LlmError>>();
            let job = move || {
                // Everything this job does inside llama.cpp (the context, the samplers, its share of
                // the model) ends before the last event is sent: a caller that got its answer and
                // exits finds no thread of ours inside llama.cpp (see `exit.rs`).
                let last = {
                    let _inside = match Inside::enter() {
                        Ok(inside) => inside,
                        Err(e) => {
                            let _ = ready.send(Err(e.into()));
                            return;
                        }
                    };
                    let mut run = match engine.prepare(&request) {
                        Ok(run) => run,
                        Err(e) => {
                            let _ = ready.send(Err(e.into()));
                            return;
                        }
                    };
                    if ready.send(Ok(())).is_err() {
                        return; // the caller is gone
                    }
                    let mut on_text = |text: &str| {
                        if text.is_empty() {
                            !events.is_closed()
                        } else {
                            events.send(Ok(ChatEvent::Delta(text.to_owned()))).is_ok()
                        }
                    };
                    let last = match run.generate(&mut on_text) {
                        Ok(generation) => Ok(ChatEvent::Done(generation.response)),
                        Err(e) => Err(e.into()),
                    };
                    drop(run);
                    drop(engine);
                    drop(permit);
                    last
                };
                let _ = events.send(last);
            };
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => drop(runtime.spawn_blocking(job)),
                Err(_) => drop(std::thread::spawn(job)),
            }
            started.await.map_err(|_| {
                LlamaCppError::engine("the generation thread stopped before starting")
            })??;
            let stream = futures_util::stream::unfold(receiver, |mut receiver| async move {
                receiver.recv().await.map(|event| (event, receiver))
            });
            Ok(Box::pin(stream) as ChatStream)
        })
    }
}
