//! One request from its prompt to its last token: sampling under the constraint, forced tokens, stop
//! strings and the text streamed out.

use super::engine::{Engine, BATCH};
use super::exit::stopping;
use super::grammar::{forced_tokens, Constraint};
use super::sampling::{argmax, RepeatPenalty};
use super::stop::StopScanner;
use super::utf8::Utf8Decoder;
use super::LlamaCppError;
use crate::llm::{ChatResponse, Finish, Usage};
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use llama_cpp_2::token::LlamaToken;
use std::time::{Duration, Instant};

/// One finished generation, with timings (see [`LlamaCpp::generate`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Generation {
    /// The answer, as [`Llm::chat`] returns it.
    pub response: ChatResponse,
    /// Time spent reading the prompt.
    pub prompt_time: Duration,
    /// Time spent generating the answer (sampling, grammar masks and decoding).
    pub generation_time: Duration,
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

/// One request between its prompt and its last token.
pub(super) struct Run<'a> {
    pub(super) engine: &'a Engine,
    pub(super) context: LlamaContext<'a>,
    pub(super) batch: LlamaBatch<'static>,
    pub(super) constraint: Constraint,
    /// `None`: greedy decoding.
    pub(super) sampler: Option<LlamaSampler>,
    pub(super) logits_index: i32,
    pub(super) pos: u32,
    pub(super) n_ctx: u32,
    pub(super) max_new: u32,
    pub(super) prompt_tokens: usize,
    pub(super) stops: StopScanner,
    pub(super) prompt_time: Duration,
    pub(super) repeat_penalty: (f32, usize),
}

impl Run<'_> {
    pub(super) fn generate(
        &mut self,
        on_text: &mut dyn FnMut(&str) -> bool,
    ) -> Result<Generation, LlamaCppError> {
        let started = Instant::now();
        let vocab = self.engine.model.vocab();
        let mut text = String::new();
        let mut utf8 = Utf8Decoder::default();
        let mut candidates: Vec<LlamaTokenData> = Vec::new();
        let mut generated: u32 = 0;
        let mut piece = Vec::new();
        let mut step: Vec<LlamaToken> = Vec::new();
        let mut mask_ids: Vec<i32> = Vec::new();
        let (factor, last_n) = self.repeat_penalty;
        let mut penalty = RepeatPenalty::new(factor, last_n, self.engine.model.n_vocab());
        let mut forced_count: u64 = 0;
        let fail = |message: String, text: &str| LlamaCppError::Engine {
            message,
            partial: text.to_owned(),
        };
        let finish = loop {
            if generated >= self.max_new || self.pos >= self.n_ctx {
                break Finish::Length;
            }
            if stopping() {
                break Finish::Other("the process is exiting".into());
            }
            let ignore_eos = self.engine.settings.ignore_eos;
            let allowed = |id: i32| !(ignore_eos && vocab.is_eog(LlamaToken(id)));
            let logits = self.context.get_logits_ith(self.logits_index);
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
                        .map_err(|e| fail(format!("the grammar failed: {e}"), &text))?;
                    mask_ids.clear();
                    mask.iter_set_entries(|id| mask_ids.extend(i32::try_from(id).ok()));
                    let scored = mask_ids
                        .iter()
                        .filter_map(|&id| Some((id, *logits.get(usize::try_from(id).ok()?)?)))
                        .map(|(id, logit)| (id, penalty.apply(id, logit)));
                    argmax(scored, allowed)
                }
                // Everything else goes through llama.cpp's samplers on a candidate array.
                (constraint, sampler) => {
                    candidates.clear();
                    if let Constraint::Guidance(matcher) = constraint {
                        let mask = matcher
                            .compute_mask()
                            .map_err(|e| fail(format!("the grammar failed: {e}"), &text))?;
                        mask.iter_set_entries(|id| {
                            if let (Some(&logit), Ok(id)) = (logits.get(id), i32::try_from(id)) {
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
                    let mut array =
                        LlamaTokenDataArray::new(std::mem::take(&mut candidates), false);
                    if let Constraint::Gbnf(grammar) = constraint {
                        array.apply_sampler(grammar);
                    }
                    array.apply_sampler(sampler.get_or_insert_with(LlamaSampler::greedy));
                    let token = array.selected_token();
                    candidates = array.data;
                    token
                }
            };
            let Some(token) = token else {
                break Finish::Stop; // nothing may follow: the grammar is done
            };
            if vocab.is_eog(token) {
                break Finish::Stop;
            }
            // `apply` does not accept: this is the one accept of this token (accepting twice aborts).
            match &mut self.constraint {
                Constraint::Guidance(matcher) => matcher
                    .consume_token(token.0.cast_unsigned())
                    .map_err(|e| fail(format!("the grammar refused its own token: {e}"), &text))?,
                Constraint::Gbnf(grammar) => grammar
                    .try_accept(token)
                    .map_err(|e| fail(format!("the grammar refused its own token: {e}"), &text))?,
                Constraint::None => {}
            }
            step.clear();
            step.push(token);
            // Tokens the grammar leaves no choice about go in with it, decoded in the same batch.
            if self.engine.settings.fast_forward {
                if let Constraint::Guidance(matcher) = &mut self.constraint {
                    let room = (self.max_new - generated - 1).min(self.n_ctx - self.pos - 1);
                    let room = (room as usize).min(BATCH as usize - 1);
                    let forced = forced_tokens(matcher, room, &vocab).map_err(|e| {
                        fail(format!("the grammar refused its forced tokens: {e}"), &text)
                    })?;
                    forced_count += forced.len() as u64;
                    step.extend(forced);
                }
            }
            let mut ended = None;
            for token in &step {
                generated += 1;
                penalty.push(token.0);
                piece.clear();
                vocab.token_to_piece_into(*token, &mut piece, false, None);
                let decoded = utf8.push(&piece);
                let (emit, stopped) = self.stops.push(&decoded);
                text.push_str(&emit);
                if !on_text(&emit) {
                    ended = Some(Finish::Other("cancelled".into()));
                    break;
                }
                if stopped {
                    ended = Some(Finish::Stop);
                    break;
                }
            }
            if let Some(finish) = ended {
                break finish;
            }
            if self.constraint.is_complete() {
                break Finish::Stop;
            }
            self.batch.clear();
            let last = step.len() - 1;
            for (i, token) in step.iter().enumerate() {
                let pos = i32::try_from(self.pos as usize + i).unwrap_or(i32::MAX);
                self.batch
                    .add(*token, pos, &[0], i == last)
                    .map_err(|e| fail(e.to_string(), &text))?;
            }
            self.context
                .decode(&mut self.batch)
                .map_err(|e| fail(format!("decoding failed: {e}"), &text))?;
            self.logits_index = i32::try_from(last).unwrap_or(0);
            self.pos += step.len() as u32;
        };
        let tail = self.stops.finish(&utf8.finish());
        if !tail.is_empty() {
            text.push_str(&tail);
            let _ = on_text(&tail);
        }
        let response = ChatResponse {
            text,
            thinking: None,
            usage: Usage {
                prompt_tokens: self.prompt_tokens as u64,
                completion_tokens: u64::from(generated),
                estimated: false,
                ..Usage::default()
            },
            finish,
            model: Some(self.engine.name.clone()),
        };
        Ok(Generation {
            response,
            prompt_time: self.prompt_time,
            generation_time: started.elapsed(),
            forced_tokens: forced_count,
        })
    }
}
