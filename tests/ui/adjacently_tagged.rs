use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
#[serde(tag = "kind", content = "data")]
enum Shape {
    Circle { radius: f64 },
    Square { side: f64 },
}

fn main() {}
