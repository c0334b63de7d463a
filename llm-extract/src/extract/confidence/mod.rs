//! How sure an extraction is of what it found: per-field confidence from the tokens'
//! log-probabilities (`logprobs.rs`), several answers to one request voted into one value
//! (`samples.rs`, the vote in `vote.rs`), and a string enum's value chosen by the model's likelihood of
//! each option, with each option's probability (`choose.rs`).

pub(crate) mod choose;
pub(crate) mod logprobs;
pub(crate) mod samples;
pub(crate) mod vote;
