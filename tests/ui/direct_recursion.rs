use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
struct Comment {
    text: String,
    replies: Vec<Comment>,
}

fn main() {}
