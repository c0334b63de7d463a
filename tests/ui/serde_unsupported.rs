use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
#[serde(transparent)]
struct Meters {
    value: f64,
}

#[derive(Extract, Deserialize, Clone)]
#[serde(from = "Meters")]
struct Feet {
    value: f64,
}

impl From<Meters> for Feet {
    fn from(meters: Meters) -> Self {
        Feet { value: meters.value * 3.28 }
    }
}

#[derive(Extract, Deserialize)]
#[serde(tag = "type")]
enum Level {
    Low {},
    #[serde(other)]
    Unknown,
}

fn main() {}
