//! Snapshots of everything the schema layer derives for the reference types (a)-(e): the generic
//! and list schemas, each dialect's rendering of each shape (or the error a dialect gives), and
//! both format instructions. Review changes with `cargo insta review` or `INSTA_UPDATE=always`.

use crate::common;

use common::types::*;
use llm_extract::{
    schema::{Dialect, Shape},
    Schema,
};
use serde_json::{json, Value};

/// One dialect's renderings of the three shapes; a shape it cannot express shows its error.
fn dialect_snapshot<T: Schema>(dialect: Dialect) -> Value {
    let rendered = |shape| match T::schema().for_dialect(dialect, shape) {
        Ok(schema) => schema.clone(),
        Err(error) => json!({ "error": error.to_string() }),
    };
    json!({
        "one": rendered(Shape::One),
        "line": rendered(Shape::Line),
        "list": rendered(Shape::List),
    })
}

fn instructions<T: Schema>() -> String {
    format!(
        "--- format_instructions ---\n{}\n--- line_format_instructions ---\n{}\n",
        T::format_instructions(),
        T::line_format_instructions()
    )
}

macro_rules! snapshots {
    ($($name:ident: $ty:ty),* $(,)?) => {$(
        mod $name {
            use super::*;

            #[test]
            fn schemas() {
                insta::assert_json_snapshot!(json!({
                    "generic": <$ty>::json_schema(),
                    "list": <$ty>::list_schema(),
                }));
            }

            #[test]
            fn generic_dialect() {
                insta::assert_json_snapshot!(dialect_snapshot::<$ty>(Dialect::Generic));
            }

            #[test]
            fn gbnf() {
                insta::assert_json_snapshot!(dialect_snapshot::<$ty>(Dialect::Gbnf));
            }

            #[test]
            fn openai_strict() {
                insta::assert_json_snapshot!(dialect_snapshot::<$ty>(Dialect::OpenAiStrict));
            }

            #[test]
            fn anthropic() {
                insta::assert_json_snapshot!(dialect_snapshot::<$ty>(Dialect::Anthropic));
            }

            #[test]
            fn gemini() {
                insta::assert_json_snapshot!(dialect_snapshot::<$ty>(Dialect::Gemini));
            }

            #[test]
            fn instructions() {
                insta::assert_snapshot!(super::instructions::<$ty>());
            }
        }
    )*};
}

snapshots! {
    a_extracted: Extracted,
    b_fact: Fact,
    c_ontology_item: OntologyItem,
    d_conversation_turn: ConversationTurn,
    e_sentiment: Sentiment,
}
