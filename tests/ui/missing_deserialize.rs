use llm_extract::Extract;

// `Extract` reads values with serde: the type must implement `Deserialize` too.
#[derive(Extract)]
struct Person {
    name: String,
}

fn main() {}
