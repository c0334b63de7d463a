//! Every text the extraction sends a model: the user's `{{var}}` template filled from the input
//! (`template.rs`), the system prompt with the format instructions and the repair and continuation
//! turns (`wording.rs`), and the per-field strategy's questions (`questions.rs`). They live in the extraction layer, below the
//! [`prompts`](crate::prompts) configs (which run extractions and so sit above it), because the
//! extraction loop sends them.

pub(crate) mod questions;
pub(crate) mod template;
pub(crate) mod wording;
