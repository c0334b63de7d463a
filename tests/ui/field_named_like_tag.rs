use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
#[serde(tag = "kind")]
enum Shape {
    Circle { radius: f64 },
    Labelled { kind: String },
}

fn main() {}
