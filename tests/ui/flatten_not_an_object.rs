use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
#[serde(tag = "type")]
enum Shape {
    Circle { radius: f64 },
}

#[derive(Extract, Deserialize)]
struct Holder {
    name: String,
    #[serde(flatten)]
    tags: Vec<String>,
    #[serde(flatten)]
    shape: Shape,
}

fn main() {}
