use llm_extract::Extract;

#[derive(Extract)]
union Bits {
    int: u32,
    float: f32,
}

fn main() {}
