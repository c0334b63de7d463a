//! Format instructions against the JSON Schema they replace, for the five reference types (a)-(e).
//!
//! `cargo bench --bench instructions` prints the token counts (o200k_base) of each type's format
//! instructions and minified schema, then times rendering the instructions from the generic schema.
//! The token counts are the figure that matters: the headline is the types as specified (no doc
//! comments; the goal: at most 40%), beside them the same types
//! with a doc comment on every item (see `tests/token_ratio/mod.rs` for why those stay above
//! 40%). They are deterministic, and `tests/extract/instruction_tokens.rs` holds them to bounds. Rendering
//! is timed on the types with doc comments, the longer instructions.

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "../tests/token_ratio/mod.rs"]
mod token_ratio;

use common::types::*;
use criterion::{criterion_group, Criterion};
use llm_extract::schema::instructions::{render_lines, render_one};
use llm_extract::Extract;
use std::hint::black_box;

fn bench_type<T: Extract>(c: &mut Criterion, name: &str) {
    let schema = T::json_schema();
    c.bench_function(&format!("render_one {name}"), |b| {
        b.iter(|| render_one(black_box(schema)))
    });
    c.bench_function(&format!("render_lines {name}"), |b| {
        b.iter(|| render_lines(black_box(schema)))
    });
}

fn rendering(c: &mut Criterion) {
    bench_type::<Extracted>(c, "(a) Extracted");
    bench_type::<Fact>(c, "(b) Fact");
    bench_type::<OntologyItem>(c, "(c) OntologyItem");
    bench_type::<ConversationTurn>(c, "(d) ConversationTurn");
    bench_type::<Sentiment>(c, "(e) Sentiment");
}

criterion_group!(benches, rendering);

fn main() {
    println!("{}", token_ratio::table(&token_ratio::rows()));
    benches();
    Criterion::default().configure_from_args().final_summary();
}
