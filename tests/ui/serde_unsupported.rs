use llm_extract::Extract;
use serde::Deserialize;

#[derive(Deserialize)]
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

fn main() {}
