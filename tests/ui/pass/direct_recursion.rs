use llm_extract::{Extract, Schema};
use serde::Deserialize;

#[derive(Extract, Deserialize)]
struct Comment {
    text: String,
    replies: Vec<Comment>,
    parent: Option<Box<Comment>>,
}

fn main() {
    let schema = Comment::json_schema();
    assert_eq!(schema["$defs"]["Comment"]["properties"], schema["properties"]);
    assert_eq!(schema["properties"]["replies"]["items"]["$ref"], "#/$defs/Comment");
}
