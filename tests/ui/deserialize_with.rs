use llm_extract::Extract;
use serde::{Deserialize, Deserializer};

fn lenient<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u32, D::Error> {
    u32::deserialize(deserializer)
}

#[derive(Extract, Deserialize)]
struct Order {
    #[serde(deserialize_with = "lenient")]
    quantity: u32,
}

fn main() {}
