use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
struct Product {
    #[extract(max_length = 5, examples("mug", "teapot", 3))]
    name: String,
    #[extract(minimum = 0, examples = [-1, 2])]
    stock: u32,
    #[extract(examples(foo))]
    color: String,
}

fn main() {}
