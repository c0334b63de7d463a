use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
struct Invoice {
    #[extract(stream = "required")]
    note: Option<String>,
    #[serde(default)]
    #[extract(stream = "required")]
    tags: Vec<String>,
    #[extract(stream = "required")]
    number: String,
}

#[derive(Extract, Deserialize)]
#[serde(default)]
struct Defaults {
    #[extract(stream = "required")]
    name: String,
}

impl Default for Defaults {
    fn default() -> Self {
        Defaults { name: String::new() }
    }
}

fn main() {}
