//! Token budget of the format instructions (o200k_base), for the reference types (a)-(e).
//!
//! The goal is instructions of at most 40% of the minified schema's tokens; it holds for the
//! types as specified, which carry no descriptions. With the doc comments of
//! `tests/common/types.rs` no notation reaches 40%: a description costs about as many tokens as a
//! comment as it does inside the schema (for (a) the text of its descriptions alone is 41% of the schema).
//! Those ratios are held to bounds just above the counts measured when they were written, so any
//! regression in compactness fails them. `cargo bench --bench instructions` prints the table.

use crate::token_ratio;

/// The goal, for the types as specified.
const GOAL: f64 = 0.40;
/// Instructions for one value against the generic schema, with descriptions (measured: 0.57-0.69).
const DESCRIBED_MAX: f64 = 0.70;
/// Instructions for JSON Lines against the line schema, with descriptions (measured: 0.61-0.87;
/// they add a sentence about the format, which weighs most on the smallest type).
const DESCRIBED_LINES_MAX: f64 = 0.88;

#[test]
fn instructions_are_at_most_40_percent_of_the_schema() {
    let rows = token_ratio::rows();
    println!("{}", token_ratio::table(&rows));
    for row in &rows {
        assert!(row.ratio() <= GOAL, "{}: {:.2}", row.name, row.ratio());
        assert!(
            row.described_ratio() <= DESCRIBED_MAX,
            "{} with doc comments: {:.2}",
            row.name,
            row.described_ratio()
        );
        assert!(
            row.described_lines_ratio() <= DESCRIBED_LINES_MAX,
            "{} with doc comments, JSON Lines: {:.2}",
            row.name,
            row.described_lines_ratio()
        );
    }
}

#[test]
fn the_described_types_differ_from_the_specified_ones_only_by_descriptions() {
    for row in token_ratio::rows() {
        assert_eq!(
            &token_ratio::without_descriptions(row.described),
            row.specified,
            "{}",
            row.name
        );
        assert_ne!(row.described, row.specified, "{}", row.name);
    }
}

#[test]
fn what_the_headline_measures() {
    let rows = token_ratio::rows();
    let texts: Vec<String> = rows
        .iter()
        .map(|row| format!("--- {} ---\n{}", row.name, row.specified_instructions))
        .collect();
    insta::assert_snapshot!(texts.join("\n"));
}

#[test]
fn token_counts_are_those_of_o200k_base() {
    // Known o200k_base encodings, so a wrong tokenizer cannot pass the budget above by accident.
    assert_eq!(token_ratio::count("hello world"), 2);
    assert_eq!(token_ratio::count(r#"{"type":"object"}"#), 5);
}
