use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
enum Shape {
    Point,
    Circle { radius: f64 },
}

fn main() {}
