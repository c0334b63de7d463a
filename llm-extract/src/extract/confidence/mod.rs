//! How sure an extraction is of what it found: per-field confidence from the tokens'
//! log-probabilities (`logprobs.rs`), several answers to one request voted into one value
//! (`samples.rs`, the vote in `vote.rs`), and a string enum's value chosen by the model's likelihood of
//! each option, with each option's probability (`choose.rs`).

pub(crate) mod choose;
pub(crate) mod logprobs;
pub(crate) mod samples;
pub(crate) mod vote;

/// JSON values for the property tests of this folder: null, booleans, `numbers` and the strings the
/// regex `strings` matches, nested in arrays and in objects whose keys the regex `keys` matches, at
/// most `depth` levels deep and about `size` values in all.
#[cfg(test)]
fn json_values(
    numbers: impl proptest::strategy::Strategy<Value = serde_json::Value> + 'static,
    strings: &'static str,
    keys: &'static str,
    (depth, size): (u32, u32),
) -> impl proptest::strategy::Strategy<Value = serde_json::Value> {
    use proptest::prelude::*;
    use serde_json::Value;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        numbers,
        strings.prop_map(Value::String),
    ];
    leaf.prop_recursive(depth, size, 4, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(keys, inner, 0..4)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}
