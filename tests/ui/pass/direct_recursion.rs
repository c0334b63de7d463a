//! A type that holds itself (in a `Vec`, an `Option<Box<_>>`) derives: its schema refers to itself
//! through `$defs`.

use llm_extract::{Extract, Schema};
use serde::Deserialize;

#[derive(Extract, Deserialize)]
struct Comment {
    text: String,
    replies: Vec<Comment>,
    parent: Option<Box<Comment>>,
}

#[test]
fn derives() {
    let schema = Comment::json_schema();
    assert_eq!(
        schema["$defs"]["Comment"]["properties"],
        schema["properties"]
    );
    assert_eq!(
        schema["properties"]["replies"]["items"]["$ref"],
        "#/$defs/Comment"
    );
}
