//! What an extraction is given: its settings ([`Config`], [`Mode`], the document settings) and its input
//! ([`Input`]).

use crate::extract::loops::LoopGuard;
use crate::extract::loops::Recovery;
use crate::extract::prompts::template::{TemplateError, DEFAULT_TEMPLATE};
use crate::extract::prompts::wording::DEFAULT_INSTRUCTIONS;
use crate::extract::setup::example::Example;
use crate::llm::{Media, MediaError};
use crate::parse::ParseOptions;
use serde::Serialize;
use serde_json::{Map, Value};

/// How the wanted shape is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Mode {
    /// Send the schema (Ollama's `format`, OpenAI's `response_format`) so the server constrains decoding,
    /// and still describe the type in the prompt, as Ollama advises. The default.
    #[default]
    Constrained,
    /// Describe the type in the prompt only, for models or servers without schema support.
    Prompted,
    /// Send the schema as one tool the model must call (OpenAI-compatible `tools` with a forced
    /// `tool_choice`, Anthropic's forced tool); the call's arguments are the answer, streamed into the
    /// same parser. For servers that call tools but ignore `response_format`. A backend without a tool
    /// mode sends the schema as in [`Mode::Constrained`]; a server that answers with text instead of a
    /// call still goes through the lenient parser and the repair loop.
    Tool,
}

/// How one value is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Strategy {
    /// The whole value in one answer, validated and repaired as a whole. The default.
    #[default]
    OneAnswer,
    /// One short question per field, walking the schema: a string the text holds is a span copied from
    /// the text (by construction on the embedded engine, checked on the others) or null; an enum or a
    /// boolean is the option the model finds most likely (on a backend that can score options:
    /// [`Llm::likelihood`](crate::llm::Llm::likelihood); else written under the schema), its
    /// probability the field's confidence; a number, a date or a time is copied and read by code (an
    /// ISO date, an amount without its currency symbol and separators); an object field by field; a list
    /// of objects first by its items' key field, then each item's fields from the text around the item;
    /// a list of strings as a list of copies; free text as one short written answer. See
    /// [`Extractor::strategy`](crate::extract::Extractor::strategy).
    PerField,
}

/// What a prompt template is filled from: a text (the `{{text}}` variable) or a context of variables;
/// and the images and PDF documents sent with it ([`Input::with_media`]).
///
/// ```
/// use llm_extract::extract::Input;
/// use llm_extract::llm::Media;
/// use serde_json::json;
///
/// let from_text: Input = "Ada Lovelace worked with Babbage.".into();
/// let from_context = Input::context(&json!({"text": "...", "language": "French"}));
/// let with_extra = Input::text("...").var("language", "French");
/// let with_scan = Input::text("The receipt is attached.").with_media(Media::jpeg(vec![0xFF, 0xD8, 0xFF]));
/// ```
///
/// # Media
///
/// The parts go with the filled template, in the user message, before its text; every backend sends
/// them in its own wire form or refuses the whole request before sending it
/// ([`LlmError::Media`](crate::llm::LlmError::Media)): the embedded llama.cpp engine takes none,
/// Ollama no PDF and no URL, the OpenAI-compatible backend no PDF by URL, and each checks its
/// provider's documented limits ([`MediaLimits`](crate::llm::MediaLimits)). A backend made with
/// [`from_fn`](crate::llm::from_fn) gets them in [`Message::media`](crate::llm::Message::media) and
/// decides itself.
///
/// They are sent with every request of the extraction: `extract`, `extract_all`, `extract_stream`,
/// `extract_partial`, and the repair turns too, which keep the first user message with its parts,
/// because the model must look at the image again to correct a value it read from it (a repair
/// that only saw its own bad answer could fix the JSON, not the reading). A batch sends each record's
/// parts with that record.
///
/// Grounding looks values up in the text: a value read from an image alone has no span in it and
/// stays ungrounded.
#[derive(Debug, Clone)]
pub struct Input {
    vars: Result<Map<String, Value>, TemplateError>,
    media: Vec<Media>,
}

impl Input {
    /// The variable `text`.
    pub fn text(text: impl Into<String>) -> Self {
        let mut vars = Map::new();
        vars.insert("text".into(), Value::String(text.into()));
        Input {
            vars: Ok(vars),
            media: Vec::new(),
        }
    }

    /// An image or a PDF document to send with the text (see [Media](#media)); call it again for more,
    /// sent in this order.
    pub fn with_media(mut self, media: Media) -> Self {
        self.media.push(media);
        self
    }

    /// The image or PDF file at `path` to send with the text, its type read from its first bytes
    /// ([`Media::from_path`]).
    pub fn with_file(self, path: impl AsRef<std::path::Path>) -> Result<Self, MediaError> {
        Ok(self.with_media(Media::from_path(path)?))
    }

    /// The images and PDF documents sent with the text, in order.
    pub fn media(&self) -> &[Media] {
        &self.media
    }

    /// Every field of `context` (which must serialize to a JSON object) as a variable.
    pub fn context<C: Serialize + ?Sized>(context: &C) -> Self {
        let vars = match serde_json::to_value(context) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(other) => Err(TemplateError::NotAnObject {
                found: match other {
                    Value::Null => "null",
                    Value::Bool(_) => "a boolean",
                    Value::Number(_) => "a number",
                    Value::String(_) => "a string",
                    Value::Array(_) => "an array",
                    Value::Object(_) => "an object",
                },
            }),
            Err(e) => Err(TemplateError::Serialize {
                message: e.to_string(),
            }),
        };
        Input {
            vars,
            media: Vec::new(),
        }
    }

    /// Adds (or replaces) the variable `name`.
    pub fn var(mut self, name: impl Into<String>, value: impl Serialize) -> Self {
        if let Ok(vars) = &mut self.vars {
            match serde_json::to_value(value) {
                Ok(value) => {
                    vars.insert(name.into(), value);
                }
                Err(e) => {
                    self.vars = Err(TemplateError::Serialize {
                        message: e.to_string(),
                    })
                }
            }
        }
        self
    }

    /// The variable `text`, if it is a string: the text grounded values must come from.
    pub(crate) fn text_var(&self) -> Option<&str> {
        self.vars.as_ref().ok()?.get("text")?.as_str()
    }

    /// The variables, unless the input could not be read as an object.
    pub(crate) fn vars(&self) -> Option<&Map<String, Value>> {
        self.vars.as_ref().ok()
    }

    pub(crate) fn into_vars(self) -> Result<Map<String, Value>, TemplateError> {
        self.vars
    }

    /// The variables and the media, apart.
    pub(crate) fn into_parts(self) -> (Result<Map<String, Value>, TemplateError>, Vec<Media>) {
        (self.vars, self.media)
    }
}

impl From<&str> for Input {
    fn from(text: &str) -> Self {
        Input::text(text)
    }
}

impl From<String> for Input {
    fn from(text: String) -> Self {
        Input::text(text)
    }
}

impl From<&String> for Input {
    fn from(text: &String) -> Self {
        Input::text(text.as_str())
    }
}

/// The settings of an extraction.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub instructions: String,
    pub template: String,
    pub max_attempts: u32,
    pub max_continuations: u32,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f32>,
    pub seed: Option<u64>,
    pub mode: Mode,
    pub max_items: Option<usize>,
    pub token_budget: Option<u64>,
    pub parse: ParseOptions,
    pub loop_guard: LoopGuard,
    /// What the attempt after a loop changes.
    pub recovery: Recovery,
    pub max_echo_chars: usize,
    /// How many answers one request gets, merged by vote (`samples.rs`; 1: one answer).
    pub samples: usize,
    pub examples: Vec<Example>,
    pub default_examples: bool,
    /// Drop items whose grounded values stay ungrounded (see `Extractor::require_grounding`).
    pub require_grounding: bool,
    /// How long documents are chunked and read.
    pub document: DocumentConfig,
    /// Ask for token log-probabilities and score each leaf with this rule (`Extractor::confidence`).
    pub confidence: Option<crate::extract::confidence::logprobs::ConfidenceRule>,
    /// Leaves under this confidence become soft issues (`Extractor::min_confidence`).
    pub min_confidence: Option<f32>,
    /// Return a value whose hard issues outlast the attempts, with them as soft ones
    /// (`Extractor::keep_doubtful`).
    pub keep_doubtful: bool,
    /// How one value is asked for (`Extractor::strategy`).
    pub strategy: Strategy,
    /// The per-field strategy's own questions, by JSON pointer (`Extractor::question`).
    pub questions: std::collections::BTreeMap<String, String>,
    /// Record the messages of each attempt on its span (`Extractor::trace_content`).
    pub trace_content: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            instructions: DEFAULT_INSTRUCTIONS.to_owned(),
            template: DEFAULT_TEMPLATE.to_owned(),
            max_attempts: 3,
            max_continuations: 2,
            max_tokens: None,
            temperature: None,
            seed: None,
            mode: Mode::Constrained,
            max_items: None,
            token_budget: None,
            parse: ParseOptions::default(),
            loop_guard: LoopGuard::default(),
            recovery: Recovery::default(),
            max_echo_chars: 8000,
            samples: 1,
            examples: Vec::new(),
            default_examples: true,
            require_grounding: false,
            document: Default::default(),
            confidence: None,
            min_confidence: None,
            keep_doubtful: false,
            strategy: Strategy::default(),
            questions: Default::default(),
            trace_content: false,
        }
    }
}

/// The default largest chunk, in bytes: about 1,500 tokens of English prose (a token is 3 to 4 bytes
/// of English, 1 to 3 bytes of CJK), which leaves room for the instructions and the answer in a
/// 4,096-token context.
pub const DEFAULT_CHUNK_BYTES: usize = 6000;

/// The settings of a document extraction.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DocumentConfig {
    pub chunk_bytes: usize,
    pub chunk_tokens: Option<usize>,
    pub overlap: Option<usize>,
    pub passes: u32,
    pub concurrency: usize,
}

impl Default for DocumentConfig {
    fn default() -> Self {
        DocumentConfig {
            chunk_bytes: DEFAULT_CHUNK_BYTES,
            chunk_tokens: None,
            overlap: None,
            passes: 1,
            concurrency: 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn inputs_become_variables() {
        let vars = Input::text("t").var("n", 2).into_vars().unwrap();
        assert_eq!(Value::Object(vars), json!({"text": "t", "n": 2}));
        assert!(matches!(
            Input::context(&[1, 2]).into_vars(),
            Err(TemplateError::NotAnObject { found: "an array" })
        ));
    }
}
