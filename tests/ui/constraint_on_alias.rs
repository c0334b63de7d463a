use llm_extract::Extract;
use serde::Deserialize;

type Count = u32;
type Name = String;

#[derive(Extract, Deserialize)]
struct Person {
    // An alias of String is fine: the generated trait bound sees through it.
    #[extract(max_length = 40)]
    name: Name,
    // An alias of u32 is not a string.
    #[extract(max_length = 40)]
    friends: Count,
}

fn main() {}
