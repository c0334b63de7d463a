use llm_extract::Extract;
use serde::Deserialize;

// Every mistake in a type is reported in one compile.
#[derive(Extract, Deserialize)]
struct Profile {
    #[extract(pattern = "[a-z]+", min_length = 3, max_length = 2)]
    handle: String,
    #[extract(min_items = 1)]
    age: u8,
    #[extract(colour = "red")]
    theme: String,
}

fn main() {}
