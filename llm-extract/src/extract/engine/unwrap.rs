//! The answer to a wrapped schema ([`Lowering::is_wrapped`](crate::schema::dialect::Lowering::is_wrapped)),
//! `{"value": X}`, read as `X` while it streams: the head `{"value":` is taken off, then `X` is handed on
//! up to the brace that closes the wrapper, found by counting brackets outside strings. An answer that
//! does not open with the wrapper's head is handed on as it is (the local parser judges it). Linear in
//! the answer's length; a piece is held back only while it may still be the head.

use crate::schema::dialect::WRAPPER_KEY;

/// Where the reader is in the answer.
#[derive(Debug)]
enum State {
    /// Before `X`: the text so far, all of it a prefix of the wrapper's head.
    Head(String),
    /// Inside `X`: the depth of open brackets, and whether inside a string (and after a backslash).
    Body {
        depth: usize,
        string: bool,
        escaped: bool,
    },
    /// After the wrapper's closing brace: the rest is dropped.
    Closed,
    /// Not a wrapped answer: everything is handed on.
    Plain,
}

/// Reads one streamed answer to a wrapped schema.
#[derive(Debug)]
pub(super) struct Unwrap {
    state: State,
}

impl Default for Unwrap {
    fn default() -> Self {
        Unwrap {
            state: State::Head(String::new()),
        }
    }
}

/// How far `text` matches the wrapper's head `{ "value" :` (whitespace allowed between the tokens).
enum Head {
    /// All of `text` is a prefix of the head.
    Partial,
    /// The head ends at this byte offset.
    Complete(usize),
    /// `text` does not open with the head.
    Mismatch,
}

fn head(text: &str) -> Head {
    let key = format!("\"{WRAPPER_KEY}\"");
    let tokens = ["{", key.as_str(), ":"];
    let mut rest = text;
    for token in tokens {
        rest = rest.trim_start();
        if rest.len() < token.len() {
            return if token.starts_with(rest) {
                Head::Partial
            } else {
                Head::Mismatch
            };
        }
        match rest.strip_prefix(token) {
            Some(after) => rest = after,
            None => return Head::Mismatch,
        }
    }
    Head::Complete(text.len() - rest.len())
}

impl Unwrap {
    /// The part of `X` that `piece` completes (may be empty).
    pub fn push(&mut self, piece: &str) -> String {
        let mut out = String::new();
        let body = match &mut self.state {
            State::Head(seen) => {
                seen.push_str(piece);
                match head(seen) {
                    Head::Partial => return out,
                    Head::Mismatch => {
                        out = std::mem::take(seen);
                        self.state = State::Plain;
                        return out;
                    }
                    Head::Complete(at) => {
                        let rest = seen.get(at..).unwrap_or_default().to_owned();
                        self.state = State::Body {
                            depth: 0,
                            string: false,
                            escaped: false,
                        };
                        rest
                    }
                }
            }
            State::Plain => return piece.to_owned(),
            State::Closed => return out,
            State::Body { .. } => piece.to_owned(),
        };
        self.body(&body, &mut out);
        out
    }

    /// Hands on `text` of `X` up to the wrapper's closing brace.
    fn body(&mut self, text: &str, out: &mut String) {
        let State::Body {
            depth,
            string,
            escaped,
        } = &mut self.state
        else {
            return;
        };
        for (at, c) in text.char_indices() {
            if *string {
                match c {
                    _ if *escaped => *escaped = false,
                    '\\' => *escaped = true,
                    '"' => *string = false,
                    _ => {}
                }
            } else {
                match c {
                    '"' => *string = true,
                    '{' | '[' => *depth += 1,
                    '}' if *depth == 0 => {
                        out.push_str(text.get(..at).unwrap_or_default());
                        self.state = State::Closed;
                        return;
                    }
                    '}' | ']' => *depth = depth.saturating_sub(1),
                    _ => {}
                }
            }
        }
        out.push_str(text);
    }

    /// What is left when the answer ends: a held head that never completed is handed on as it is.
    pub fn finish(&mut self) -> String {
        match std::mem::replace(&mut self.state, State::Closed) {
            State::Head(seen) => seen,
            _ => String::new(),
        }
    }
}

/// `X` of a whole answer `{"value": X}` (an answer not in that form, as it is).
pub(super) fn unwrap(text: &str) -> String {
    let mut reader = Unwrap::default();
    let mut out = reader.push(text);
    out.push_str(&reader.finish());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_wrapper_is_taken_off() {
        assert_eq!(
            unwrap(r#"{"value": ["a", {"b": "}"}]}"#),
            r#" ["a", {"b": "}"}]"#
        );
        assert_eq!(unwrap("{ \"value\" :\n\"x\\\"}\" }\n"), "\n\"x\\\"}\" ");
        assert_eq!(unwrap(r#"{"value":3}"#), "3");
    }

    #[test]
    fn an_answer_without_the_wrapper_is_kept() {
        for text in [
            "[1, 2]",
            "\"value\"",
            r#"{"values": 1}"#,
            "```json\n{\"value\": 1}\n```",
            "{",
        ] {
            assert_eq!(unwrap(text), text);
        }
    }

    #[test]
    fn a_cut_answer_keeps_what_arrived() {
        assert_eq!(unwrap(r#"{"value": {"a": [1, 2"#), r#" {"a": [1, 2"#);
    }

    proptest! {
        /// However the answer is cut into pieces, the pieces hand on what the whole answer does.
        #[test]
        fn pieces_hand_on_what_the_whole_does(
            inner in r#"[ \[\]{}"\\a-c:,]{0,40}"#,
            cuts in proptest::collection::vec(0usize..60, 0..6),
        ) {
            let text = format!("{{ \"value\": {inner} }}");
            let mut cuts: Vec<usize> = cuts.into_iter().filter(|&c| c <= text.len()).collect();
            cuts.sort_unstable();
            let mut reader = Unwrap::default();
            let mut out = String::new();
            let mut from = 0;
            for cut in cuts.into_iter().chain([text.len()]) {
                out.push_str(&reader.push(&text[from..cut]));
                from = cut;
            }
            out.push_str(&reader.finish());
            prop_assert_eq!(out, unwrap(&text));
        }

        /// A value written by serde comes back whole.
        #[test]
        fn a_written_value_comes_back(inner in proptest::collection::vec("[a-z\"\\\\{}\\[\\]]{0,5}", 0..5)) {
            let value = serde_json::json!({ "list": inner });
            let text = serde_json::json!({ "value": value }).to_string();
            let back: serde_json::Value = serde_json::from_str(&unwrap(&text)).unwrap();
            prop_assert_eq!(back, value);
        }
    }
}
