use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
#[extract(max_length = 10)]
struct Tweet {
    text: String,
}

#[derive(Extract, Deserialize)]
#[serde(tag = "type")]
enum Media {
    #[extract(pattern = "^a$")]
    Image { url: String },
}

fn main() {}
