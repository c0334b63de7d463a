//! One streamed answer merged event by event: the text and reasoning received so far, a
//! [`ChatEvent::Restart`] voiding them, and the [`ChatEvent::Done`] summary completed with what streamed.
//! Every reader of a [`ChatStream`] goes through it: the default [`Llm::chat`](super::Llm::chat) (through
//! [`collect`]), and the extraction loop, which watches each piece as it arrives.

use super::{ChatEvent, ChatResponse, ChatStream, LlmError, Usage};
use futures_util::StreamExt;

/// The answer received so far.
#[derive(Debug, Default)]
pub(crate) struct Accumulator {
    text: String,
    thinking: String,
}

/// What one event did to the answer.
#[derive(Debug)]
pub(crate) enum Merged {
    /// Answer text arrived: it is [`Accumulator::text`] from byte `from` on.
    Text {
        /// Where the new text starts.
        from: usize,
    },
    /// Reasoning text arrived.
    Thinking,
    /// The stream broke and the backend sent the request again: the answer so far is void and the
    /// accumulator starts from nothing. `text` and `thinking` are what the dropped answer had received.
    Restart {
        /// Why the answer was dropped.
        error: LlmError,
        /// What the dropped answer cost, as far as the server said.
        usage: Usage,
        /// The dropped answer's text.
        text: String,
        /// The dropped answer's reasoning text.
        thinking: String,
    },
    /// The end. When no text streamed before it, the summary's text moved into the accumulator (so
    /// [`Accumulator::text`] holds the answer whichever way it came) and `text_in_summary` is set:
    /// the whole text arrived at once. [`Accumulator::complete`] gives the finished answer.
    Done {
        /// The backend's summary.
        summary: ChatResponse,
        /// The text arrived only in the summary, as one piece.
        text_in_summary: bool,
    },
}

impl Accumulator {
    /// An empty answer.
    pub(crate) fn new() -> Self {
        Accumulator::default()
    }

    /// The answer text received so far.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// Merges the next event.
    pub(crate) fn merge(&mut self, event: ChatEvent) -> Merged {
        match event {
            ChatEvent::Delta(delta) => {
                let from = self.text.len();
                self.text.push_str(&delta);
                Merged::Text { from }
            }
            ChatEvent::Thinking(more) => {
                self.thinking.push_str(&more);
                Merged::Thinking
            }
            ChatEvent::Restart { error, usage } => Merged::Restart {
                error,
                usage,
                text: std::mem::take(&mut self.text),
                thinking: std::mem::take(&mut self.thinking),
            },
            ChatEvent::Done(mut summary) => {
                let text_in_summary = self.text.is_empty() && !summary.text.is_empty();
                if text_in_summary {
                    self.text = std::mem::take(&mut summary.text);
                }
                Merged::Done {
                    summary,
                    text_in_summary,
                }
            }
        }
    }

    /// The finished answer: `summary` with the text and reasoning that streamed where it has none of
    /// its own (servers mostly send their text as deltas and only the counts at the end).
    pub(crate) fn complete(self, mut summary: ChatResponse) -> ChatResponse {
        if summary.text.is_empty() {
            summary.text = self.text;
        }
        if summary.thinking.is_none() && !self.thinking.is_empty() {
            summary.thinking = Some(self.thinking);
        }
        summary
    }

    /// The answer so far as a response of its own (a stream stopped before its end): the text, the
    /// reasoning if any, no counts, a stop finish.
    pub(crate) fn into_response(self) -> ChatResponse {
        ChatResponse {
            text: self.text,
            thinking: Some(self.thinking).filter(|t| !t.is_empty()),
            ..ChatResponse::default()
        }
    }

    /// The answer text and reasoning received so far.
    pub(crate) fn into_parts(self) -> (String, String) {
        (self.text, self.thinking)
    }

    /// The error of a stream that ended without its summary, with the text received so far.
    pub(crate) fn unfinished(self) -> LlmError {
        LlmError::Stream {
            message: "the stream ended without a final summary".into(),
            received: self.text,
        }
    }
}

/// Reads `stream` to its end and returns the whole answer: the first error ends it, and a stream that
/// ends without its summary is an [`LlmError::Stream`] with the text received.
pub(crate) async fn collect(mut stream: ChatStream) -> Result<ChatResponse, LlmError> {
    let mut answer = Accumulator::new();
    while let Some(event) = stream.next().await {
        if let Merged::Done { summary, .. } = answer.merge(event?) {
            return Ok(answer.complete(summary));
        }
    }
    Err(answer.unfinished())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Finish;

    fn stream(events: Vec<Result<ChatEvent, LlmError>>) -> ChatStream {
        Box::pin(futures_util::stream::iter(events))
    }

    fn block<T>(future: impl std::future::Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(future)
    }

    fn broke() -> LlmError {
        LlmError::Stream {
            message: "connection reset".into(),
            received: String::new(),
        }
    }

    #[test]
    fn deltas_and_thinking_fill_a_summary_without_text() {
        let events = vec![
            Ok(ChatEvent::Thinking("hm".into())),
            Ok(ChatEvent::Delta("{\"a\":".into())),
            Ok(ChatEvent::Thinking(", ok".into())),
            Ok(ChatEvent::Delta("1}".into())),
            Ok(ChatEvent::Done(
                ChatResponse::default()
                    .with_usage(3, 4)
                    .with_finish(Finish::Length),
            )),
        ];
        let response = block(collect(stream(events))).unwrap();
        assert_eq!(response.text, "{\"a\":1}");
        assert_eq!(response.thinking.as_deref(), Some("hm, ok"));
        assert_eq!(response.usage.completion_tokens, 4);
        assert_eq!(response.finish, Finish::Length);
    }

    #[test]
    fn a_summary_keeps_its_own_text_and_thinking() {
        let mut summary = ChatResponse::new("whole");
        summary.thinking = Some("own".into());
        let events = vec![
            Ok(ChatEvent::Delta("streamed".into())),
            Ok(ChatEvent::Thinking("streamed thought".into())),
            Ok(ChatEvent::Done(summary)),
        ];
        let response = block(collect(stream(events))).unwrap();
        assert_eq!(response.text, "whole");
        assert_eq!(response.thinking.as_deref(), Some("own"));
    }

    #[test]
    fn a_restart_voids_what_came_before_it() {
        let mut answer = Accumulator::new();
        answer.merge(ChatEvent::Delta("[1,".into()));
        answer.merge(ChatEvent::Thinking("first".into()));
        let usage = Usage {
            completion_tokens: 2,
            ..Usage::default()
        };
        match answer.merge(ChatEvent::Restart {
            error: broke(),
            usage,
        }) {
            Merged::Restart {
                error,
                usage: dropped,
                text,
                thinking,
            } => {
                assert_eq!(error.to_string(), broke().to_string());
                assert_eq!(dropped, usage);
                assert_eq!(text, "[1,");
                assert_eq!(thinking, "first");
            }
            other => panic!("expected a restart, got {other:?}"),
        }
        assert_eq!(answer.text(), "");
        assert!(matches!(
            answer.merge(ChatEvent::Delta("[2]".into())),
            Merged::Text { from: 0 }
        ));
        let response = answer.complete(ChatResponse::default());
        assert_eq!(response.text, "[2]");
        assert_eq!(response.thinking, None);
    }

    #[test]
    fn text_points_at_each_new_piece() {
        let mut answer = Accumulator::new();
        assert!(matches!(
            answer.merge(ChatEvent::Delta("ab".into())),
            Merged::Text { from: 0 }
        ));
        let Merged::Text { from } = answer.merge(ChatEvent::Delta("cé".into())) else {
            panic!("expected text");
        };
        assert_eq!(answer.text().get(from..), Some("cé"));
        assert!(matches!(
            answer.merge(ChatEvent::Thinking("x".into())),
            Merged::Thinking
        ));
        assert_eq!(answer.into_parts(), ("abcé".to_owned(), "x".to_owned()));
    }

    #[test]
    fn text_only_in_the_summary_arrives_as_one_piece() {
        let mut answer = Accumulator::new();
        let Merged::Done {
            summary,
            text_in_summary,
        } = answer.merge(ChatEvent::Done(ChatResponse::new("{}")))
        else {
            panic!("expected the end");
        };
        assert!(text_in_summary);
        assert_eq!(answer.text(), "{}");
        assert_eq!(answer.complete(summary).text, "{}");

        let mut answer = Accumulator::new();
        answer.merge(ChatEvent::Delta("{".into()));
        let Merged::Done {
            summary,
            text_in_summary,
        } = answer.merge(ChatEvent::Done(ChatResponse::new("{}")))
        else {
            panic!("expected the end");
        };
        assert!(!text_in_summary);
        assert_eq!(answer.text(), "{");
        assert_eq!(answer.complete(summary).text, "{}");
    }

    #[test]
    fn a_stream_without_a_summary_is_an_error_with_its_text() {
        let events = vec![
            Ok(ChatEvent::Delta("par".into())),
            Ok(ChatEvent::Delta("tial".into())),
        ];
        match block(collect(stream(events))) {
            Err(LlmError::Stream { message, received }) => {
                assert_eq!(message, "the stream ended without a final summary");
                assert_eq!(received, "partial");
            }
            other => panic!("expected a stream error, got {other:?}"),
        }
    }

    #[test]
    fn the_first_error_ends_the_answer() {
        let events = vec![
            Ok(ChatEvent::Delta("a".into())),
            Err(broke()),
            Ok(ChatEvent::Done(ChatResponse::new("never"))),
        ];
        let err = block(collect(stream(events))).unwrap_err();
        assert_eq!(err.to_string(), broke().to_string());
    }

    #[test]
    fn into_response_keeps_text_and_reasoning() {
        let mut answer = Accumulator::new();
        answer.merge(ChatEvent::Delta("x".into()));
        let response = answer.into_response();
        assert_eq!(response.text, "x");
        assert_eq!(response.thinking, None);
        assert_eq!(response.finish, Finish::Stop);
    }
}
