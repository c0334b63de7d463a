//! What to extract and how: the [`Extractor`](super::Extractor) builder and its typed extractions
//! (`extractor.rs`), the same seven for a runtime schema (`schema_extractor.rs`), every setting
//! (`settings.rs`; the values and the input in `config.rs`), what an extraction produces (`target.rs`:
//! a Rust type or validated JSON, the one interface the engine is written against), the items of a list
//! merged on their keys (`keyed.rs`), and the worked examples (`example.rs`) with the turns they become
//! in a request (`example_turns.rs`).

pub(crate) mod config;
pub(crate) mod example;
pub(crate) mod example_turns;
pub(crate) mod extractor;
pub(crate) mod keyed;
pub(crate) mod schema_extractor;
pub(crate) mod settings;
pub(crate) mod target;
