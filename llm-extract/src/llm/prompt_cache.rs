//! [`PromptCache`]: where a backend with an explicit prompt cache (Anthropic's `cache_control`) marks
//! the end of the prefix every request of a run shares, so the provider reads it from its cache
//! instead of billing it again in full.
//!
//! The prefix is, in the provider's order, the tool (a schema sent as one), the system prompt with the
//! format instructions, the worked examples ([`ChatRequest::stable_messages`]), the shared context at
//! the start of the input's message ([`ChatRequest::stable_input`]: the template's text before the
//! document, the same for every chunk of a document and every record of a batch), and optionally the
//! input's own message (then a repair, a continuation or another sample of the same input reads it).
//! A breakpoint goes at the end of each part that is long enough to be cached at all (the provider's
//! minimum, by model), at most the four the API allows; TTLs must not grow from one breakpoint to the
//! next (the API refuses a longer TTL after a shorter one).

use super::{ChatRequest, LlmError, MediaSource};

/// How long a cached prefix lives at the provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
#[non_exhaustive]
pub enum CacheTtl {
    /// Five minutes, renewed by each read (Anthropic's default; writes cost 1.25 times the input
    /// price).
    #[default]
    FiveMinutes,
    /// One hour (writes cost twice the input price): for runs whose requests come further apart.
    OneHour,
}

impl CacheTtl {
    /// The `cache_control` object of a breakpoint with this TTL.
    pub(crate) fn control(self) -> serde_json::Value {
        match self {
            CacheTtl::FiveMinutes => serde_json::json!({"type": "ephemeral"}),
            CacheTtl::OneHour => serde_json::json!({"type": "ephemeral", "ttl": "1h"}),
        }
    }
}

/// Where a backend puts its prompt-cache breakpoints (see the module description): at the end of the
/// system prompt, of the worked examples, of the input's shared context, and (off by default) of the
/// input's message, each with its TTL, once the prefix up to it is long enough.
///
/// ```
/// use llm_extract::llm::{Anthropic, CacheTtl, PromptCache};
///
/// # fn main() -> Result<(), llm_extract::llm::LlmError> {
/// let cache = PromptCache::new()
///     .system(Some(CacheTtl::OneHour))
///     .examples(Some(CacheTtl::OneHour))
///     .input(Some(CacheTtl::FiveMinutes));
/// let claude = Anthropic::builder("claude-sonnet-4-5").api_key("k").prompt_cache(cache).build()?;
/// # let _ = claude;
/// // A longer TTL after a shorter one is refused when the backend is built.
/// let wrong = PromptCache::new().system(Some(CacheTtl::FiveMinutes)).examples(Some(CacheTtl::OneHour));
/// assert!(Anthropic::builder("claude-sonnet-4-5").api_key("k").prompt_cache(wrong).build().is_err());
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PromptCache {
    system: Option<CacheTtl>,
    examples: Option<CacheTtl>,
    /// `None` until set: then it follows the others (see [`PromptCache::context`]).
    context: Option<Option<CacheTtl>>,
    input: Option<CacheTtl>,
    min_tokens: Option<u64>,
}

impl Default for PromptCache {
    fn default() -> Self {
        PromptCache::new()
    }
}

/// Bytes per token in the estimate of a prefix's length: on the generous side (English runs about
/// four), since a breakpoint on a prefix the provider finds too short is ignored, while one left out
/// loses the saving.
const BYTES_PER_TOKEN: u64 = 3;

impl PromptCache {
    /// Breakpoints after the system prompt, after the worked examples and after the input's shared
    /// context, five minutes each; none after the input; the minimum length the model's documentation
    /// gives.
    pub fn new() -> Self {
        PromptCache {
            system: Some(CacheTtl::FiveMinutes),
            examples: Some(CacheTtl::FiveMinutes),
            context: None,
            input: None,
            min_tokens: None,
        }
    }

    /// No breakpoints: every request is billed in full.
    pub fn off() -> Self {
        PromptCache {
            system: None,
            examples: None,
            context: Some(None),
            input: None,
            min_tokens: None,
        }
    }

    /// The breakpoint after the system prompt (and the tool), or none.
    pub fn system(mut self, ttl: Option<CacheTtl>) -> Self {
        self.system = ttl;
        self
    }

    /// The breakpoint after the worked examples, or none.
    pub fn examples(mut self, ttl: Option<CacheTtl>) -> Self {
        self.examples = ttl;
        self
    }

    /// The breakpoint after the input's shared context ([`ChatRequest::stable_input`]: the prompt
    /// template's text before `{{text}}`, such as a long context every chunk of a document is sent
    /// with), or none. Its text goes as a block of its own at the start of the input's message; an
    /// input with images or PDFs has none (they come first, and differ from one input to the next).
    /// Until set, it is on, with the TTL of the input's breakpoint if there is one, else that of the
    /// last breakpoint before it (so that TTLs set on the others stay in order).
    pub fn context(mut self, ttl: Option<CacheTtl>) -> Self {
        self.context = Some(ttl);
        self
    }

    /// The TTL of the breakpoint after the shared context, or none.
    fn context_ttl(&self) -> Option<CacheTtl> {
        self.context.unwrap_or_else(|| {
            Some(
                self.input
                    .or(self.examples)
                    .or(self.system)
                    .unwrap_or_default(),
            )
        })
    }

    /// The breakpoint after the input's message (the first after the worked examples), or none (the
    /// default): worth its write price when each input is asked more than once (repairs,
    /// continuations, `samples` above 1, a document's passes).
    pub fn input(mut self, ttl: Option<CacheTtl>) -> Self {
        self.input = ttl;
        self
    }

    /// The shortest prefix, in tokens, that gets a breakpoint (default: the minimum the provider
    /// documents for the model, see [`PromptCache::min_tokens_for`]).
    pub fn min_tokens(mut self, tokens: u64) -> Self {
        self.min_tokens = Some(tokens);
        self
    }

    /// Anthropic's documented minimum cacheable prompt for `model`: 4,096 tokens for Claude Opus 4.5
    /// and Haiku 4.5, 2,048 for the earlier Haiku models, 1,024 for the others.
    pub fn min_tokens_for(model: &str) -> u64 {
        let model = model.to_ascii_lowercase();
        if model.contains("haiku-4") || model.contains("opus-4-5") || model.contains("opus-4.5") {
            4096
        } else if model.contains("haiku") {
            2048
        } else {
            1024
        }
    }

    /// Refuses TTLs that grow from one breakpoint to the next (the API answers such a request 400).
    pub(crate) fn validate(&self) -> Result<(), LlmError> {
        let ttls: Vec<CacheTtl> = [self.system, self.examples, self.context_ttl(), self.input]
            .into_iter()
            .flatten()
            .collect();
        if ttls.windows(2).any(|pair| matches!(pair, [a, b] if a < b)) {
            return Err(LlmError::Config {
                message:
                    "prompt cache: a longer TTL cannot follow a shorter one (the provider reads \
                          breakpoints in order: system prompt, worked examples, shared context, \
                          input); give the earlier breakpoints the longer TTL"
                        .into(),
            });
        }
        Ok(())
    }

    /// Where `request` to `model` gets its breakpoints: after the system prompt (with `tool_bytes` of
    /// tool definitions before it), after message `stable_messages - 1`, after the first
    /// `stable_input` bytes of message `stable_messages` and after that message; each only when the
    /// prefix up to it reaches the minimum length.
    pub(crate) fn breakpoints(
        &self,
        request: &ChatRequest,
        model: &str,
        tool_bytes: usize,
    ) -> Breakpoints {
        let min = self
            .min_tokens
            .unwrap_or_else(|| PromptCache::min_tokens_for(model));
        let long_enough = |bytes: usize| (bytes as u64) / BYTES_PER_TOKEN >= min;
        let mut bytes = tool_bytes + request.system.as_ref().map_or(0, String::len);
        let mut found = Breakpoints::default();
        if request.system.is_some() && long_enough(bytes) {
            found.system = self.system;
        }
        let stable = request.stable_messages.min(request.messages.len());
        bytes += request
            .messages
            .iter()
            .take(stable)
            .map(|m| m.content.len())
            .sum::<usize>();
        if stable > 0 && long_enough(bytes) {
            found.message = self.examples.map(|ttl| (stable - 1, ttl));
        }
        if let Some(input) = request.messages.get(stable) {
            let head = request.stable_input;
            let splits = input.media.is_empty()
                && head > 0
                && head < input.content.len()
                && input.content.is_char_boundary(head);
            if splits && long_enough(bytes + head) {
                found.context = self.context_ttl().map(|ttl| (stable, ttl));
            }
            // Media count by their size: an image or a PDF is a long part of a prefix.
            let media = input.media.iter().map(|m| match m.source() {
                MediaSource::Bytes(data) => data.len(),
                MediaSource::Url(url) => url.len(),
            });
            bytes += input.content.len() + media.sum::<usize>();
            if request.messages.len() > stable && long_enough(bytes) {
                found.input = self.input.map(|ttl| (stable, ttl));
            }
        }
        found
    }
}

/// The breakpoints of one request: on the system prompt, and on messages by their position.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Breakpoints {
    /// After the system prompt.
    pub system: Option<CacheTtl>,
    /// After the last worked example: its position.
    pub message: Option<(usize, CacheTtl)>,
    /// After the shared context at the start of the input's message ([`ChatRequest::stable_input`]
    /// bytes of it): the message's position.
    pub context: Option<(usize, CacheTtl)>,
    /// After the input's message: its position.
    pub input: Option<(usize, CacheTtl)>,
}

impl Breakpoints {
    /// The TTL of the breakpoint after message `index`, if it has one.
    pub fn after_message(&self, index: usize) -> Option<CacheTtl> {
        [self.message, self.input]
            .into_iter()
            .flatten()
            .find(|(at, _)| *at == index)
            .map(|(_, ttl)| ttl)
    }

    /// The TTL of the breakpoint after the shared context at the start of message `index`, if it has
    /// one.
    pub fn within_message(&self, index: usize) -> Option<CacheTtl> {
        self.context
            .filter(|(at, _)| *at == index)
            .map(|(_, ttl)| ttl)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Message;

    fn request(system: usize, examples: &[usize], input: usize) -> ChatRequest {
        let mut request = ChatRequest::default().with_system("s".repeat(system));
        for len in examples {
            request.messages.push(Message::user("e".repeat(*len)));
        }
        request.stable_messages = examples.len();
        request.messages.push(Message::user("i".repeat(input)));
        request
    }

    #[test]
    fn the_shared_context_gets_a_breakpoint_once_the_prefix_through_it_is_long_enough() {
        let cache = PromptCache::new().min_tokens(100);
        // 30 bytes of system prompt, then 300 of shared context at the start of a 400-byte input.
        let mut shared = request(30, &[], 400);
        shared.stable_input = 300;
        let found = cache.breakpoints(&shared, "m", 0);
        assert_eq!(found.system, None);
        assert_eq!(found.context, Some((0, CacheTtl::FiveMinutes)));
        assert_eq!(found.within_message(0), Some(CacheTtl::FiveMinutes));
        assert_eq!(
            found.after_message(0),
            None,
            "within the input, not after it"
        );
        // Too short, the whole input (nothing after it), or turned off: none.
        shared.stable_input = 30;
        assert_eq!(cache.breakpoints(&shared, "m", 0).context, None);
        shared.stable_input = 400;
        assert_eq!(cache.breakpoints(&shared, "m", 0).context, None);
        shared.stable_input = 300;
        let off = cache.context(None);
        assert_eq!(off.breakpoints(&shared, "m", 0).context, None);
        // All four breakpoints at once, the API's most.
        let mut all = request(300, &[10, 10], 400);
        all.stable_input = 300;
        let four = cache
            .input(Some(CacheTtl::FiveMinutes))
            .breakpoints(&all, "m", 0);
        assert!(four.system.is_some() && four.message.is_some());
        assert_eq!(four.context, Some((2, CacheTtl::FiveMinutes)));
        assert_eq!(four.input, Some((2, CacheTtl::FiveMinutes)));
        // The context's TTL sits between the examples' and the input's; until set, it follows them.
        let hour = Some(CacheTtl::OneHour);
        let five = Some(CacheTtl::FiveMinutes);
        assert!(PromptCache::new().context(hour).validate().is_err());
        let all_hour = PromptCache::new().system(hour).examples(hour).input(hour);
        assert_eq!(all_hour.context_ttl(), hour);
        assert!(all_hour.validate().is_ok());
        let longer_first = PromptCache::new().system(hour).examples(five);
        assert_eq!(longer_first.context_ttl(), five);
        assert_eq!(PromptCache::off().context_ttl(), None);
        assert!(PromptCache::new()
            .system(hour)
            .examples(hour)
            .context(hour)
            .validate()
            .is_ok());
    }

    #[test]
    fn breakpoints_go_where_the_prefix_is_long_enough() {
        let cache = PromptCache::new()
            .min_tokens(100)
            .input(Some(CacheTtl::FiveMinutes));
        // 300 bytes of system prompt are 100 tokens: long enough alone.
        let all = cache.breakpoints(&request(300, &[10, 10], 10), "m", 0);
        assert_eq!(all.system, Some(CacheTtl::FiveMinutes));
        assert_eq!(all.message, Some((1, CacheTtl::FiveMinutes)));
        assert_eq!(all.input, Some((2, CacheTtl::FiveMinutes)));
        // A short system prompt gets none, but the examples after it reach the minimum together.
        let later = cache.breakpoints(&request(30, &[150, 150], 0), "m", 0);
        assert_eq!(later.system, None);
        assert_eq!(later.message, Some((1, CacheTtl::FiveMinutes)));
        // The tool counts: it comes first in the prefix.
        assert!(cache
            .breakpoints(&request(30, &[], 0), "m", 300)
            .system
            .is_some());
        // Nothing long enough: no breakpoint at all.
        assert_eq!(
            cache.breakpoints(&request(30, &[30], 30), "m", 0),
            Breakpoints::default()
        );
        assert_eq!(
            PromptCache::off().breakpoints(&request(3000, &[3000], 3000), "m", 0),
            Breakpoints::default()
        );
    }

    #[test]
    fn the_minimum_follows_the_model_and_ttls_may_only_shrink() {
        assert_eq!(PromptCache::min_tokens_for("claude-haiku-4-5"), 4096);
        assert_eq!(PromptCache::min_tokens_for("claude-3-5-haiku-latest"), 2048);
        assert_eq!(PromptCache::min_tokens_for("claude-sonnet-4-5"), 1024);
        let hour = Some(CacheTtl::OneHour);
        let five = Some(CacheTtl::FiveMinutes);
        assert!(PromptCache::new()
            .system(hour)
            .examples(five)
            .validate()
            .is_ok());
        assert!(PromptCache::new()
            .system(five)
            .examples(None)
            .input(hour)
            .validate()
            .is_err());
        assert!(PromptCache::new()
            .system(None)
            .examples(hour)
            .input(hour)
            .validate()
            .is_ok());
    }
}
