//! One request from its prompt to its last token: sampling under the constraint, forced tokens, stop
//! strings and the text streamed out. A [`Sequence`] only chooses tokens; the scheduler
//! (`scheduler.rs`) decodes them, together with the tokens of the other sequences of the batch.

use super::grammar::{forced_tokens, Constraint};
use super::sampling::{argmax, log_softmax, RepeatPenalty};
use super::stop::StopScanner;
use super::utf8::Utf8Decoder;
use super::LlamaCppError;
use crate::llm::{ChatResponse, Finish, TokenLogprob, Usage};
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use llama_cpp_2::token::LlamaToken;
use std::time::{Duration, Instant};

/// Tokens decoded per llama.cpp call (all sequences of a step together).
pub(super) const BATCH: u32 = 512;

/// One finished generation, with timings (see [`LlamaCpp::generate`](super::LlamaCpp::generate)).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Generation {
    /// The answer, as [`Llm::chat`](crate::Llm::chat) returns it.
    pub response: ChatResponse,
    /// Time spent waiting for a free sequence slot of the model's context.
    pub wait_time: Duration,
    /// Time spent reading the prompt (from taking a slot to the first answer token's scores), including
    /// creating the context when this request was the one that needed it.
    pub prompt_time: Duration,
    /// Time spent generating the answer (sampling, grammar masks and decoding, in batches shared with the
    /// other sequences decoded at the same time).
    pub generation_time: Duration,
    /// How many of the prompt tokens were not read, because their keys and values were already cached
    /// from an earlier request with the same prompt prefix.
    pub reused_prompt_tokens: u64,
    /// How many of the completion tokens the grammar forced (decoded in batches, not sampled).
    pub forced_tokens: u64,
}

impl Generation {
    /// Generated tokens per second (0 when nothing was generated).
    pub fn tokens_per_second(&self) -> f64 {
        let secs = self.generation_time.as_secs_f64();
        if secs > 0.0 {
            self.response.usage.completion_tokens as f64 / secs
        } else {
            0.0
        }
    }
}

/// What a sequence tells its reader.
pub(super) enum Out {
    /// A piece of answer text (possibly empty: then only "do you still want more?").
    Text(String),
    /// The end: the generation, or what went wrong (with the text generated so far); boxed, as it is
    /// sent once and is much larger than a piece.
    Done(Box<Result<Generation, LlamaCppError>>),
}

/// Where a sequence's output goes; `false` means the reader wants no more (the generation is cancelled).
pub(super) type Sink = Box<dyn FnMut(Out) -> bool + Send>;

/// What a sequence does after reading the scores of its last token.
pub(super) enum Advance {
    /// Decode these tokens next (one sampled token, then any the grammar forces).
    Decode(Vec<LlamaToken>),
    /// The answer is finished.
    Finish(Finish),
    /// Something failed; the answer so far is in the error.
    Fail(LlamaCppError),
}

/// Per-request settings that shape the token loop.
pub(super) struct Limits {
    /// At most this many answer tokens.
    pub(super) max_new: u32,
    /// Positions available to the sequence (prompt plus answer).
    pub(super) n_ctx: u32,
    pub(super) ignore_eos: bool,
    pub(super) fast_forward: bool,
    /// Record each token's log-probability ([`ChatRequest::logprobs`](crate::llm::ChatRequest::logprobs)).
    pub(super) logprobs: bool,
}

/// One request between its prompt and its last token.
pub(super) struct Sequence {
    pub(super) prompt: Vec<LlamaToken>,
    constraint: Constraint,
    /// `None`: greedy decoding.
    sampler: Option<LlamaSampler>,
    penalty: RepeatPenalty,
    stops: StopScanner,
    utf8: Utf8Decoder,
    limits: Limits,
    sink: Sink,
    model_name: String,
    text: String,
    generated: u32,
    forced: u64,
    reused: u64,
    piece: Vec<u8>,
    /// Each token's bytes and log-probabilities, when the request asked for them.
    logprobs: Option<Vec<TokenLogprob>>,
    candidates: Vec<LlamaTokenData>,
    mask_ids: Vec<i32>,
    submitted: Instant,
    admitted: Option<Instant>,
    first_scores: Option<Instant>,
}

impl Sequence {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        prompt: Vec<LlamaToken>,
        constraint: Constraint,
        sampler: Option<LlamaSampler>,
        penalty: RepeatPenalty,
        stops: StopScanner,
        limits: Limits,
        model_name: String,
        sink: Sink,
    ) -> Self {
        Sequence {
            prompt,
            constraint,
            sampler,
            penalty,
            stops,
            utf8: Utf8Decoder::default(),
            logprobs: limits.logprobs.then(Vec::new),
            limits,
            sink,
            model_name,
            text: String::new(),
            generated: 0,
            forced: 0,
            reused: 0,
            piece: Vec::new(),
            candidates: Vec::new(),
            mask_ids: Vec::new(),
            submitted: Instant::now(),
            admitted: None,
            first_scores: None,
        }
    }

    /// Positions (prompt plus answer) this sequence may need.
    pub(super) fn needs(&self) -> u32 {
        u32::try_from(self.prompt.len())
            .unwrap_or(u32::MAX)
            .saturating_add(self.limits.max_new)
    }

    /// Called when the sequence gets a slot, with how many prompt tokens are already cached there.
    pub(super) fn admit(&mut self, reused: usize) {
        self.admitted = Some(Instant::now());
        self.reused = reused as u64;
    }

    /// Whether the reader still wants the answer.
    pub(super) fn wanted(&mut self) -> bool {
        (self.sink)(Out::Text(String::new()))
    }

    /// Chooses what to decode after the scores (`logits`) of the token at position `pos - 1`.
    pub(super) fn advance(&mut self, logits: &[f32], pos: u32, model: &LlamaModel) -> Advance {
        if self.first_scores.is_none() {
            self.first_scores = Some(Instant::now());
        }
        match self.choose(logits, pos, model) {
            Ok(advance) => advance,
            Err(message) => Advance::Fail(LlamaCppError::Engine {
                message,
                received: self.text.clone(),
            }),
        }
    }

    fn choose(&mut self, logits: &[f32], pos: u32, model: &LlamaModel) -> Result<Advance, String> {
        let limits = &self.limits;
        if self.generated >= limits.max_new || pos >= limits.n_ctx {
            return Ok(Advance::Finish(Finish::Length));
        }
        let vocab = model.vocab();
        let ignore_eos = limits.ignore_eos;
        let allowed = |id: i32| !(ignore_eos && vocab.is_eog(LlamaToken(id)));
        let penalty = &self.penalty;
        let token = match (&mut self.constraint, &mut self.sampler) {
            // Greedy: the best allowed token, without building a candidate array.
            (Constraint::None, None) => argmax(
                (0..)
                    .zip(logits)
                    .map(|(id, &logit)| (id, penalty.apply(id, logit))),
                allowed,
            ),
            (Constraint::Guidance(matcher), None) => {
                let mask = matcher
                    .compute_mask()
                    .map_err(|e| format!("the grammar failed: {e}"))?;
                self.mask_ids.clear();
                let ids = &mut self.mask_ids;
                mask.iter_set_entries(|id| ids.extend(i32::try_from(id).ok()));
                let scored = self
                    .mask_ids
                    .iter()
                    .filter_map(|&id| Some((id, *logits.get(usize::try_from(id).ok()?)?)))
                    .map(|(id, logit)| (id, penalty.apply(id, logit)));
                argmax(scored, allowed)
            }
            // Everything else goes through llama.cpp's samplers on a candidate array.
            (constraint, sampler) => {
                let candidates = &mut self.candidates;
                candidates.clear();
                self.mask_ids.clear();
                if let Constraint::Guidance(matcher) = constraint {
                    let mask = matcher
                        .compute_mask()
                        .map_err(|e| format!("the grammar failed: {e}"))?;
                    let ids = &mut self.mask_ids;
                    mask.iter_set_entries(|id| {
                        if let (Some(&logit), Ok(id)) = (logits.get(id), i32::try_from(id)) {
                            ids.push(id);
                            let logit = penalty.apply(id, logit);
                            candidates.push(LlamaTokenData::new(LlamaToken(id), logit, 0.0));
                        }
                    });
                } else {
                    candidates.extend((0..).zip(logits).map(|(id, &logit)| {
                        LlamaTokenData::new(LlamaToken(id), penalty.apply(id, logit), 0.0)
                    }));
                }
                if ignore_eos {
                    candidates.retain(|c| allowed(c.id().0));
                }
                let mut array = LlamaTokenDataArray::new(std::mem::take(candidates), false);
                if let Constraint::Gbnf(grammar) = constraint {
                    array.apply_sampler(grammar);
                    // The tokens the grammar left a score: those it allows.
                    if self.logprobs.is_some() {
                        self.mask_ids.extend(
                            array
                                .data
                                .iter()
                                .filter(|c| c.logit().is_finite())
                                .map(|c| c.id().0),
                        );
                    }
                }
                array.apply_sampler(sampler.get_or_insert_with(LlamaSampler::greedy));
                let token = array.selected_token();
                self.candidates = array.data;
                token
            }
        };
        let Some(token) = token else {
            return Ok(Advance::Finish(Finish::Stop)); // nothing may follow: the grammar is done
        };
        if vocab.is_eog(token) {
            return Ok(Advance::Finish(Finish::Stop));
        }
        let scored = self.logprobs.is_some().then(|| {
            let vocabulary =
                log_softmax(logits, 0..i32::try_from(logits.len()).unwrap_or(0), token.0);
            let allowed = match &self.constraint {
                Constraint::None => vocabulary,
                _ => log_softmax(logits, self.mask_ids.iter().copied(), token.0),
            };
            (allowed, vocabulary)
        });
        // `apply` does not accept: this is the one accept of this token (accepting twice aborts).
        match &mut self.constraint {
            Constraint::Guidance(matcher) => matcher
                .consume_token(token.0.cast_unsigned())
                .map_err(|e| format!("the grammar refused its own token: {e}"))?,
            Constraint::Gbnf(grammar) => grammar
                .try_accept(token)
                .map_err(|e| format!("the grammar refused its own token: {e}"))?,
            Constraint::None => {}
        }
        let mut step = vec![token];
        // Tokens the grammar leaves no choice about go in with it, decoded in the same batch.
        if self.limits.fast_forward {
            if let Constraint::Guidance(matcher) = &mut self.constraint {
                let room = (self.limits.max_new - self.generated - 1)
                    .min(self.limits.n_ctx.saturating_sub(pos + 1));
                let room = (room as usize).min(BATCH as usize / 4);
                let forced = forced_tokens(matcher, room, &vocab)
                    .map_err(|e| format!("the grammar refused its forced tokens: {e}"))?;
                self.forced += forced.len() as u64;
                step.extend(forced);
            }
        }
        for (position, token) in step.iter().enumerate() {
            self.generated += 1;
            self.penalty.push(token.0);
            self.piece.clear();
            vocab.token_to_piece_into(*token, &mut self.piece, false, None);
            if let Some(logprobs) = &mut self.logprobs {
                // The sampled token is scored; the ones the grammar forced after it are certain.
                let (allowed, vocabulary) = scored.filter(|_| position == 0).unwrap_or_default();
                let mut scored = TokenLogprob::new(self.piece.clone(), allowed.unwrap_or(0.0));
                scored.vocabulary_logprob = vocabulary;
                logprobs.push(scored);
            }
            let decoded = self.utf8.push(&self.piece);
            let (emit, stopped) = self.stops.push(&decoded);
            self.text.push_str(&emit);
            if !(self.sink)(Out::Text(emit)) {
                return Ok(Advance::Finish(Finish::Other("cancelled".into())));
            }
            if stopped {
                return Ok(Advance::Finish(Finish::Stop));
            }
        }
        if self.constraint.is_complete() {
            return Ok(Advance::Finish(Finish::Stop));
        }
        Ok(Advance::Decode(step))
    }

    /// Ends the sequence: frees its samplers (llama.cpp objects) and only then sends the last event, so a
    /// caller that got its answer finds nothing of its request left inside llama.cpp (see `exit.rs`).
    pub(super) fn conclude(self, end: Result<Finish, LlamaCppError>) {
        let Sequence {
            constraint,
            sampler,
            mut stops,
            mut utf8,
            mut sink,
            mut text,
            logprobs,
            model_name,
            prompt,
            generated,
            forced,
            reused,
            submitted,
            admitted,
            first_scores,
            ..
        } = self;
        drop(constraint);
        drop(sampler);
        let tail = stops.finish(&utf8.finish());
        if !tail.is_empty() {
            text.push_str(&tail);
            let _ = sink(Out::Text(tail));
        }
        let now = Instant::now();
        let admitted = admitted.unwrap_or(now);
        let first_scores = first_scores.unwrap_or(now);
        let result = match end {
            Ok(finish) => Ok(Generation {
                response: ChatResponse {
                    text,
                    thinking: None,
                    usage: Usage {
                        prompt_tokens: prompt.len() as u64,
                        completion_tokens: u64::from(generated),
                        estimated: false,
                        ..Usage::default()
                    },
                    finish,
                    model: Some(model_name),
                    logprobs,
                    cached: false,
                },
                wait_time: admitted.saturating_duration_since(submitted),
                prompt_time: first_scores.saturating_duration_since(admitted),
                generation_time: now.saturating_duration_since(first_scores),
                reused_prompt_tokens: reused,
                forced_tokens: forced,
            }),
            Err(LlamaCppError::Engine { message, received }) if received.is_empty() => {
                Err(LlamaCppError::Engine {
                    message,
                    received: text,
                })
            }
            Err(e) => Err(e),
        };
        let _ = sink(Out::Done(Box::new(result)));
    }
}
