//! Every case of `shared/reference/llm-output-cases.md`, through `from_str` and through the incremental
//! decoder split at every byte offset (and byte by byte), plus hostile input.

use crate::common;

use common::decoded::{decode, Out};
use llm_extract::parse::{
    from_str_value, from_str_with, lines_from_str_value, FixKind, LineEvent, ParseOptions,
    SkipReason, Skipped,
};
use llm_extract::{
    from_str,
    parse::{lines_from_str, LineDecoder, Parsed},
    schema::SchemaSet,
    ParseError, Schema,
};
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::OnceLock;

macro_rules! extract {
    ($ty:ident, $schema:expr) => {
        impl Schema for $ty {
            fn schema() -> &'static SchemaSet {
                static S: OnceLock<SchemaSet> = OnceLock::new();
                S.get_or_init(|| SchemaSet::new(stringify!($ty), $schema))
            }
        }
    };
}

fn closed(properties: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

#[derive(Debug, Deserialize, PartialEq)]
struct A {
    a: i64,
}
extract!(A, closed(json!({"a": {"type": "integer"}}), &["a"]));

#[derive(Debug, Deserialize, PartialEq)]
struct AB {
    a: i64,
    b: Option<i64>,
}
extract!(
    AB,
    closed(
        json!({"a": {"type": "integer"}, "b": {"type": ["integer", "null"]}}),
        &["a"]
    )
);

#[derive(Debug, Deserialize, PartialEq)]
struct S {
    a: String,
}
extract!(S, closed(json!({"a": {"type": "string"}}), &["a"]));

#[derive(Debug, Deserialize, PartialEq)]
struct Bio {
    bio: String,
}
extract!(Bio, closed(json!({"bio": {"type": "string"}}), &["bio"]));

#[derive(Debug, Deserialize, PartialEq)]
struct Lit {
    a: bool,
    b: Option<String>,
}
extract!(
    Lit,
    closed(
        json!({"a": {"type": "boolean"}, "b": {"type": ["string", "null"]}}),
        &["a"]
    )
);

#[derive(Debug, Deserialize, PartialEq)]
struct P {
    p: String,
}
extract!(P, closed(json!({"p": {"type": "string"}}), &["p"]));

#[derive(Debug, Deserialize, PartialEq)]
struct Num {
    n: f64,
}
extract!(Num, closed(json!({"n": {"type": "number"}}), &["n"]));

#[derive(Debug, Deserialize, PartialEq)]
struct Count {
    n: i32,
}
extract!(
    Count,
    closed(
        json!({"n": {"type": "integer", "minimum": i32::MIN, "maximum": i32::MAX}}),
        &["n"]
    )
);

#[derive(Debug, Deserialize, PartialEq)]
struct Flag {
    ok: bool,
}
extract!(Flag, closed(json!({"ok": {"type": "boolean"}}), &["ok"]));

#[derive(Debug, Deserialize, PartialEq)]
struct Tags {
    tags: Vec<String>,
}
extract!(
    Tags,
    closed(
        json!({"tags": {"type": "array", "items": {"type": "string"}}}),
        &["tags"]
    )
);

#[derive(Debug, Deserialize, PartialEq)]
#[serde(rename_all = "lowercase")]
enum Sentiment {
    Positive,
    Negative,
    Neutral,
}
extract!(
    Sentiment,
    json!({"type": "string", "enum": ["positive", "negative", "neutral"]})
);

#[derive(Debug, Deserialize, PartialEq)]
struct Invoice {
    number: String,
    total: f64,
}
extract!(
    Invoice,
    closed(
        json!({"number": {"type": "string"}, "total": {"type": "number"}}),
        &["number", "total"]
    )
);

#[derive(Debug, Deserialize, PartialEq)]
struct Inner {
    b: i64,
}
#[derive(Debug, Deserialize, PartialEq)]
struct Outer {
    a: Vec<Inner>,
}
extract!(
    Outer,
    closed(
        json!({"a": {"type": "array", "items": closed(json!({"b": {"type": "integer"}}), &["b"])}}),
        &["a"]
    )
);

#[derive(Debug, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "lowercase")]
enum Entry {
    Definition { term: String, meaning: String },
    Relationship { from: String, to: String },
}
extract!(
    Entry,
    json!({"oneOf": [
        closed(json!({"type": {"const": "definition"}, "term": {"type": "string"}, "meaning": {"type": "string"}}), &["type", "term", "meaning"]),
        closed(json!({"type": {"const": "relationship"}, "from": {"type": "string"}, "to": {"type": "string"}}), &["type", "from", "to"])
    ]})
);

#[derive(Debug, Deserialize, PartialEq)]
struct Person {
    name: String,
    age: Option<u8>,
}
extract!(Person, {
    let mut schema = closed(
        json!({"name": {"type": "string"}, "age": {"type": ["integer", "null"], "minimum": 0, "maximum": 255}}),
        &["name"],
    );
    schema["x-aliases"] = json!({"full_name": "name"});
    schema
});

fn ok<T: Schema + std::fmt::Debug>(text: &str) -> Parsed<T> {
    from_str::<T>(text).unwrap_or_else(|e| panic!("{text:?}: {e}"))
}

fn kinds<T>(parsed: &Parsed<T>) -> Vec<FixKind> {
    parsed.fixes.iter().map(|r| r.kind).collect()
}

fn salvaged<T: Schema>(text: &str) -> Result<Parsed<T>, ParseError> {
    from_str_with::<T>(text, &ParseOptions::default().with_salvage(true))
}

/// Feeds `bytes` whole, split in two at every offset, and byte by byte: all must agree.
fn decoded_with<T: Schema + PartialEq + std::fmt::Debug>(
    bytes: &[u8],
    options: ParseOptions,
) -> Vec<Out> {
    let whole = decode::<T>(&[bytes], options);
    for at in 0..=bytes.len() {
        let (head, tail) = bytes.split_at(at);
        assert_eq!(
            decode::<T>(&[head, tail], options),
            whole,
            "split at {at} of {:?}",
            String::from_utf8_lossy(bytes)
        );
    }
    let bytewise: Vec<&[u8]> = bytes.chunks(1).collect();
    assert_eq!(decode::<T>(&bytewise, options), whole, "byte by byte");
    whole
}

fn decoded<T: Schema + PartialEq + std::fmt::Debug>(text: &str) -> Vec<Out> {
    let out = decoded_with::<T>(text.as_bytes(), ParseOptions::default());
    // The one-shot function is the decoder fed once.
    let lines = lines_from_str::<T>(text);
    let skipped: Vec<Skipped> = out
        .iter()
        .filter_map(|o| match o {
            Out::Skip(s) => Some(s.clone()),
            Out::Item(..) => None,
        })
        .collect();
    assert_eq!(lines.skipped, skipped);
    assert_eq!(lines.items.len(), out.len() - skipped.len());
    out
}

fn items(out: &[Out]) -> Vec<Value> {
    out.iter()
        .filter_map(|o| match o {
            Out::Item(v, _) => Some(v.clone()),
            Out::Skip(_) => None,
        })
        .collect()
}

fn skips(out: &[Out]) -> Vec<&Skipped> {
    out.iter()
        .filter_map(|o| match o {
            Out::Skip(s) => Some(s),
            Out::Item(..) => None,
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Envelope

#[test]
fn case_01_fenced() {
    let text = "```json\n{\"a\":1}\n```";
    let parsed = ok::<A>(text);
    assert_eq!(parsed.value, A { a: 1 });
    assert_eq!(kinds(&parsed), [FixKind::Envelope]);
    assert_eq!(parsed.fixes[0].offset, 8);
    assert_eq!(items(&decoded::<A>(text)), [json!({"a": 1})]);
}

#[test]
fn case_02_fence_without_tag_or_upper_case() {
    for text in [
        "```JSON\n{\"a\":1}```",
        "```\n{\"a\":1}\n```",
        "```Json {\"a\":1} ```",
    ] {
        assert_eq!(ok::<A>(text).value, A { a: 1 }, "{text}");
        assert_eq!(items(&decoded::<A>(text)), [json!({"a": 1})], "{text}");
    }
}

#[test]
fn case_03_unclosed_fence() {
    let text = "```json\n{\"a\":1}";
    assert_eq!(ok::<A>(text).value, A { a: 1 });
    assert_eq!(items(&decoded::<A>(text)), [json!({"a": 1})]);
}

#[test]
fn case_04_prose_around() {
    let text = "Sure! {\"a\":1} Hope this helps.";
    let parsed = ok::<A>(text);
    assert_eq!(parsed.value, A { a: 1 });
    assert_eq!(kinds(&parsed), [FixKind::Envelope]);
    assert_eq!(items(&decoded::<A>(text)), [json!({"a": 1})]);
}

#[test]
fn case_05_thinking_block_first() {
    let text = "<think>maybe {x}</think>{\"a\":1}";
    let parsed = ok::<A>(text);
    assert_eq!(parsed.value, A { a: 1 });
    assert!(kinds(&parsed).contains(&FixKind::Envelope));
    let multi_line = "<think>\nmaybe {\"a\": 5}\n</think>\n{\"a\":1}";
    assert_eq!(ok::<A>(multi_line).value, A { a: 1 });
    assert_eq!(items(&decoded::<A>(text)), [json!({"a": 1})]);
    let out = decoded::<A>(multi_line);
    assert_eq!(out, [Out::Item(json!({"a": 1}), 4)]);
}

#[test]
fn case_06_stray_bracket_in_prose() {
    let text = "Format starts \"I, [\" ok:\n{\"a\":1}";
    assert_eq!(ok::<A>(text).value, A { a: 1 });
    let out = decoded::<A>(text);
    assert_eq!(items(&out), [json!({"a": 1})]);
    assert_eq!(skips(&out)[0].reason, SkipReason::NotJson);
}

#[test]
fn case_07_only_one_candidate_fits() {
    let text = "Draft: {\"a\":\"x\"}\nFinal: {\"a\":1}";
    assert_eq!(ok::<A>(text).value, A { a: 1 });
    let out = decoded::<A>(text);
    assert_eq!(items(&out), [json!({"a": 1})]);
    assert!(matches!(&skips(&out)[0].reason, SkipReason::Schema(v) if v[0].path == "/a"));
}

#[test]
fn case_08_schema_echoed_is_rejected() {
    let text =
        "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"}},\"required\":[\"a\"]}";
    match from_str::<A>(text) {
        Err(ParseError::Schema { violations, raw }) => {
            assert!(violations[0].message.contains("echoed the schema"));
            assert_eq!(raw, text);
        }
        other => panic!("{other:?}"),
    }
    // The exact schema, too, and in lines mode.
    let exact = A::json_schema().to_string();
    assert!(matches!(
        from_str::<A>(&exact),
        Err(ParseError::Schema { .. })
    ));
    let out = decoded::<A>(text);
    assert!(items(&out).is_empty());
    assert!(matches!(&skips(&out)[0].reason, SkipReason::Schema(_)));
}

#[test]
fn case_09_brace_inside_a_string() {
    let text = "{\"bio\":\"a } b\"}";
    let parsed = ok::<Bio>(text);
    assert_eq!(parsed.value.bio, "a } b");
    assert!(parsed.fixes.is_empty());
    assert_eq!(items(&decoded::<Bio>(text)), [json!({"bio": "a } b"})]);
    // And inside prose with brackets of its own.
    let prose = "Here [see below]: {\"bio\":\"x ] { y\"} done";
    assert_eq!(ok::<Bio>(prose).value.bio, "x ] { y");
}

#[test]
fn case_10_concatenated_values() {
    for text in ["{\"a\":1}{\"a\":2}", "{\"a\":1}, {\"a\":2}"] {
        match from_str::<A>(text) {
            Err(ParseError::Ambiguous { candidates, .. }) => {
                assert_eq!(candidates, ["{\"a\":1}", "{\"a\":2}"])
            }
            other => panic!("{text}: {other:?}"),
        }
        assert_eq!(
            items(&decoded::<A>(text)),
            [json!({"a": 1}), json!({"a": 2})]
        );
    }
    // Picked by the schema when only one fits; the same value twice is not ambiguous.
    assert_eq!(ok::<A>("{\"a\":\"x\"}{\"a\":2}").value, A { a: 2 });
    assert_eq!(ok::<A>("{\"a\":3}, {\"a\":3}").value, A { a: 3 });
}

// ---------------------------------------------------------------------------------------------
// Syntax

#[test]
fn case_11_trailing_comma() {
    let parsed = ok::<A>("{\"a\":1,}");
    assert_eq!(parsed.value, A { a: 1 });
    assert_eq!(kinds(&parsed), [FixKind::ExtraComma]);
    let schema = SchemaSet::new("N", json!({"type": "array", "items": {"type": "integer"}}));
    let parsed = from_str_value("[1,2,]", &schema, &ParseOptions::default()).unwrap();
    assert_eq!(parsed.value, json!([1, 2]));
    assert_eq!(parsed.fixes[0].kind, FixKind::ExtraComma);
    assert_eq!(
        ok::<Tags>("{\"tags\":[\"a\",\"b\",]}").value.tags,
        ["a", "b"]
    );
    assert_eq!(items(&decoded::<A>("{\"a\":1,}")), [json!({"a": 1})]);
}

#[test]
fn case_12_missing_comma() {
    let text = "{\"a\":1 \"b\":2}";
    let parsed = ok::<AB>(text);
    assert_eq!(parsed.value, AB { a: 1, b: Some(2) });
    assert_eq!(kinds(&parsed), [FixKind::MissingComma]);
    assert_eq!(items(&decoded::<AB>(text)), [json!({"a": 1, "b": 2})]);
}

#[test]
fn case_13_unquoted_key() {
    let parsed = ok::<A>("{a: 1}");
    assert_eq!(parsed.value, A { a: 1 });
    assert_eq!(kinds(&parsed), [FixKind::UnquotedKey]);
    assert_eq!(items(&decoded::<A>("{a: 1}")), [json!({"a": 1})]);
}

#[test]
fn case_14_single_quotes() {
    let parsed = ok::<S>("{'a': 'x'}");
    assert_eq!(parsed.value.a, "x");
    assert!(kinds(&parsed).iter().all(|k| *k == FixKind::Quotes));
    assert_eq!(ok::<S>("{'a': 'it's here'}").value.a, "it's here");
    assert_eq!(items(&decoded::<S>("{'a': 'x'}")), [json!({"a": "x"})]);
}

#[test]
fn case_15_unescaped_inner_quote() {
    let text = "{\"a\":\"he said \"hi\" ok\"}";
    let parsed = ok::<S>(text);
    assert_eq!(parsed.value.a, "he said \"hi\" ok");
    assert_eq!(kinds(&parsed), [FixKind::InnerQuote]);
    assert_eq!(
        items(&decoded::<S>(text)),
        [json!({"a": "he said \"hi\" ok"})]
    );
}

#[test]
fn case_16_raw_newline_in_a_string() {
    let text = "{\"a\":\"line one\nline two\"}";
    let parsed = ok::<S>(text);
    assert_eq!(parsed.value.a, "line one\nline two");
    assert_eq!(kinds(&parsed), [FixKind::ControlCharacter]);
    assert_eq!(
        items(&decoded::<S>(text)),
        [json!({"a": "line one\nline two"})]
    );
}

#[test]
fn case_17_comments() {
    for text in ["{\"a\":1 // note\n}", "{/*c*/\"a\":1}"] {
        let parsed = ok::<A>(text);
        assert_eq!(parsed.value, A { a: 1 });
        assert_eq!(kinds(&parsed), [FixKind::Comment]);
        assert_eq!(items(&decoded::<A>(text)), [json!({"a": 1})]);
    }
}

#[test]
fn case_18_smart_quotes() {
    let text = "{“a”: “x”}";
    let parsed = ok::<S>(text);
    assert_eq!(parsed.value.a, "x");
    assert!(kinds(&parsed).contains(&FixKind::Quotes));
    assert_eq!(items(&decoded::<S>(text)), [json!({"a": "x"})]);
}

#[test]
fn case_19_python_and_js_literals() {
    let text = "{\"a\":True,\"b\":None}";
    let parsed = ok::<Lit>(text);
    assert_eq!(parsed.value, Lit { a: true, b: None });
    assert_eq!(kinds(&parsed), [FixKind::Literal, FixKind::Literal]);
    assert_eq!(ok::<Lit>("{\"a\":false,\"b\":undefined}").value.b, None);
    assert_eq!(
        items(&decoded::<Lit>(text)),
        [json!({"a": true, "b": null})]
    );
}

#[test]
fn case_20_invalid_escape() {
    let text = "{\"p\":\"C:\\path\"}";
    let parsed = ok::<P>(text);
    assert_eq!(parsed.value.p, "C:\\path");
    assert_eq!(kinds(&parsed), [FixKind::InvalidEscape]);
    assert_eq!(items(&decoded::<P>(text)), [json!({"p": "C:\\path"})]);
}

#[test]
fn case_21_number_forms() {
    let half = ok::<Num>("{\"n\":.5}");
    assert_eq!(half.value.n, 0.5);
    assert_eq!(kinds(&half), [FixKind::NumberForm]);
    assert_eq!(ok::<Num>("{\"n\":1.}").value.n, 1.0);
    assert_eq!(ok::<Count>("{\"n\":1.}").value.n, 1);
    assert_eq!(ok::<Num>("{\"n\":-.25e1}").value.n, -2.5);
    assert_eq!(items(&decoded::<Num>("{\"n\":.5}")), [json!({"n": 0.5})]);
}

#[test]
fn case_22_duplicate_key_last_wins() {
    // Policy: the last value wins, as in serde_json; not recorded (clean JSON takes this path).
    let parsed = ok::<A>("{\"a\":1,\"a\":2}");
    assert_eq!(parsed.value, A { a: 2 });
    assert!(parsed.fixes.is_empty());
    // The same through the lenient parser.
    assert_eq!(ok::<A>("{'a':1,'a':2}").value, A { a: 2 });
    assert_eq!(items(&decoded::<A>("{\"a\":1,\"a\":2}")), [json!({"a": 2})]);
}

// ---------------------------------------------------------------------------------------------
// Schema-guided coercion

#[test]
fn case_23_number_in_a_string() {
    let parsed = ok::<Count>("{\"n\":\"42\"}");
    assert_eq!(parsed.value.n, 42);
    assert_eq!(kinds(&parsed), [FixKind::Coerced]);
    assert!(parsed.fixes[0].description.contains("/n"));
    assert!(matches!(
        from_str::<Count>("{\"n\":\"forty\"}"),
        Err(ParseError::Schema { .. })
    ));
    assert_eq!(
        items(&decoded::<Count>("{\"n\":\"42\"}")),
        [json!({"n": 42})]
    );
}

#[test]
fn case_24_bool_in_a_string() {
    let parsed = ok::<Flag>("{\"ok\":\"true\"}");
    assert!(parsed.value.ok);
    assert_eq!(kinds(&parsed), [FixKind::Coerced]);
    assert!(!ok::<Flag>("{\"ok\":\"False\"}").value.ok);
    assert!(from_str::<Flag>("{\"ok\":\"maybe\"}").is_err());
    assert_eq!(
        items(&decoded::<Flag>("{\"ok\":\"true\"}")),
        [json!({"ok": true})]
    );
}

#[test]
fn case_25_single_value_for_an_array() {
    let parsed = ok::<Tags>("{\"tags\":\"a\"}");
    assert_eq!(parsed.value.tags, ["a"]);
    assert_eq!(kinds(&parsed), [FixKind::WrappedInArray]);
    assert_eq!(
        items(&decoded::<Tags>("{\"tags\":\"a\"}")),
        [json!({"tags": ["a"]})]
    );
}

#[test]
fn case_26_enum_case_drift() {
    let parsed = ok::<Sentiment>("\"Positive\"");
    assert_eq!(parsed.value, Sentiment::Positive);
    assert_eq!(kinds(&parsed), [FixKind::EnumCase]);
    assert_eq!(ok::<Sentiment>("NEUTRAL").value, Sentiment::Neutral);
    assert_eq!(
        ok::<Sentiment>("```\n\"negative\"\n```").value,
        Sentiment::Negative
    );
    assert!(matches!(
        from_str::<Sentiment>("positive or negative"),
        Err(ParseError::Ambiguous { .. })
    ));
    assert!(from_str::<Sentiment>("\"positive or negative\"").is_err());
    assert_eq!(
        items(&decoded::<Sentiment>("\"Positive\"")),
        [json!("positive")]
    );
    let out = decoded::<Sentiment>("positive or negative");
    assert!(items(&out).is_empty());
}

#[test]
fn case_27_wrapped_root() {
    let wrapped = ok::<A>("{\"result\":{\"a\":1}}");
    assert_eq!(wrapped.value, A { a: 1 });
    assert_eq!(kinds(&wrapped), [FixKind::Unwrapped]);
    let listed = ok::<A>("[{\"a\":1}]");
    assert_eq!(listed.value, A { a: 1 });
    assert_eq!(kinds(&listed), [FixKind::Unwrapped]);
    assert_eq!(ok::<A>("{\"data\":[{\"a\":1}]}").value, A { a: 1 });
    assert!(from_str::<A>("[{\"a\":1},{\"a\":2}]").is_err());
    assert_eq!(
        items(&decoded::<A>("{\"result\":{\"a\":1}}")),
        [json!({"a": 1})]
    );
    assert_eq!(items(&decoded::<A>("[{\"a\":1}]")), [json!({"a": 1})]);
}

#[test]
fn case_28_extra_keys_are_dropped_and_recorded() {
    let text = "{\"number\":\"7\",\"total\":9.5,\"status\":\"paid\"}";
    let parsed = ok::<Invoice>(text);
    assert_eq!(
        parsed.value,
        Invoice {
            number: "7".into(),
            total: 9.5
        }
    );
    assert_eq!(kinds(&parsed), [FixKind::DroppedExtraKey]);
    assert!(parsed.fixes[0].description.contains("status"));
    // Strict mode rejects them.
    match from_str_with::<Invoice>(text, &ParseOptions::strict()) {
        Err(ParseError::Schema { violations, .. }) => {
            assert!(violations[0].message.contains("status"), "{violations:?}")
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        items(&decoded::<Invoice>(text)),
        [json!({"number": "7", "total": 9.5})]
    );
    // Aliases are renamed, not dropped.
    let aliased = ok::<Person>("{\"full_name\":\"Ada\",\"age\":36}");
    assert_eq!(
        aliased.value,
        Person {
            name: "Ada".into(),
            age: Some(36)
        }
    );
    assert_eq!(kinds(&aliased), [FixKind::RenamedKey]);
}

#[test]
fn case_29_missing_optional_field() {
    let parsed = ok::<AB>("{\"a\":1}");
    assert_eq!(parsed.value, AB { a: 1, b: None });
    assert!(parsed.fixes.is_empty());
    assert_eq!(ok::<AB>("{\"a\":1,\"b\":null}").value.b, None);
    assert_eq!(items(&decoded::<AB>("{\"a\":1}")), [json!({"a": 1})]);
}

// ---------------------------------------------------------------------------------------------
// Truncation

const CUTS: [&str; 7] = [
    "{\"a\":\"hel",
    "{\"a\":1,\"b",
    "{\"a\":",
    "{\"n\":12",
    "{\"ok\":tr",
    "{\"a\":\"x\\",
    "{\"a\":[{\"b\":1},{\"b\":",
];

#[test]
fn case_30_truncated_without_salvage() {
    let open = SchemaSet::new("Open", json!({"type": "object"}));
    for text in CUTS {
        match from_str_value(text, &open, &ParseOptions::default()) {
            Err(ParseError::Truncated { offset, raw }) => {
                assert_eq!(offset, text.len(), "{text}");
                assert_eq!(raw, text);
            }
            other => panic!("{text}: {other:?}"),
        }
        let out = decoded_with::<A>(text.as_bytes(), ParseOptions::default());
        assert!(
            matches!(
                &out[..],
                [Out::Skip(Skipped {
                    reason: SkipReason::Truncated,
                    line: 1,
                    ..
                })]
            ),
            "{text}: {out:?}"
        );
    }
    assert!(matches!(
        from_str::<Outer>(CUTS[6]),
        Err(ParseError::Truncated { .. })
    ));
}

#[test]
fn case_30_salvage_keeps_only_what_is_complete() {
    let open = SchemaSet::new("Open", json!({"type": "object"}));
    let salvage = ParseOptions::default().with_salvage(true);
    let expected = [
        json!({}),
        json!({"a": 1}),
        json!({}),
        json!({}), // never 12 (it could have been 123)
        json!({}),
        json!({}),
        json!({"a": [{"b": 1}]}),
    ];
    for (text, want) in CUTS.iter().zip(expected) {
        let parsed =
            from_str_value(text, &open, &salvage).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(parsed.value, want, "{text}");
        assert!(parsed
            .fixes
            .iter()
            .any(|r| r.kind == FixKind::ClosedTruncated));
        let out = decoded_with::<A>(text.as_bytes(), salvage);
        assert_eq!(out.len(), 1, "{text}");
    }
    // Typed: the nested cut keeps the complete element.
    let parsed = salvaged::<Outer>(CUTS[6]).unwrap();
    assert_eq!(
        parsed.value,
        Outer {
            a: vec![Inner { b: 1 }]
        }
    );
    assert!(kinds(&parsed).contains(&FixKind::DroppedIncomplete));
    // A cut number is missing, not completed: the required field fails validation.
    assert!(matches!(
        salvaged::<Count>("{\"n\":12"),
        Err(ParseError::Schema { .. })
    ));
    // A literal that is complete at the cut is kept.
    assert!(salvaged::<Flag>("{\"ok\":true").unwrap().value.ok);
    let out = decoded_with::<Outer>(CUTS[6].as_bytes(), salvage);
    assert_eq!(items(&out), [json!({"a": [{"b": 1}]})]);
}

#[test]
fn case_30_cut_inside_a_utf8_character() {
    let mut bytes = "{\"a\":\"x€".as_bytes().to_vec();
    bytes.pop();
    let out = decoded_with::<S>(&bytes, ParseOptions::default());
    assert!(matches!(
        &out[..],
        [Out::Skip(Skipped {
            reason: SkipReason::Truncated,
            ..
        })]
    ));
    let open_bytes = [&bytes[..], b"\n"].concat();
    // Not at the end: the line is invalid UTF-8 and its value is unclosed.
    let out = decoded_with::<S>(&open_bytes, ParseOptions::default());
    assert_eq!(items(&out).len(), 0);
    // Salvage keeps nothing of the cut string.
    let salvage = ParseOptions::default().with_salvage(true);
    let open = SchemaSet::new("Open", json!({"type": "object"}));
    let mut decoder = LineDecoder::with_schema(&open, salvage);
    let mut all = decoder.feed(&bytes);
    all.extend(decoder.finish());
    match &all[..] {
        [LineEvent::Item(item)] => assert_eq!(item.value, json!({})),
        other => panic!("{other:?}"),
    }
    // Through the one-shot API the text must be a str: the lossy form is still a truncation.
    let lossy = String::from_utf8_lossy(&bytes);
    assert!(matches!(
        from_str::<S>(&lossy),
        Err(ParseError::Truncated { .. })
    ));
}

#[test]
fn case_31_whitespace_runaway() {
    let text = format!("{{\"a\":1, \"b\":2{}", " ".repeat(5000));
    assert!(matches!(
        from_str::<AB>(&text),
        Err(ParseError::Truncated { .. })
    ));
    let parsed = salvaged::<AB>(&text).unwrap();
    // `2` was followed by a space: it is complete.
    assert_eq!(parsed.value, AB { a: 1, b: Some(2) });
    let inside = format!("{{\"a\":1, \"b\":\"x{}", "\n".repeat(3000));
    assert_eq!(salvaged::<AB>(&inside).unwrap().value, AB { a: 1, b: None });
    let clean = format!("{{\"a\":1}}{}", " ".repeat(5000));
    assert!(ok::<A>(&clean).fixes.is_empty());
    let out = decoded::<AB>(&text[..200]);
    assert!(matches!(
        &out[..],
        [Out::Skip(Skipped {
            reason: SkipReason::Truncated,
            ..
        })]
    ));
}

#[test]
fn case_32_empty_or_only_thinking() {
    for text in [
        "",
        "   \n",
        "<think>I should answer {\"a\":1}</think>",
        "<think>still thinking",
    ] {
        match from_str::<A>(text) {
            Err(e @ ParseError::NoJson { .. }) => assert_eq!(e.raw(), text),
            other => panic!("{text:?}: {other:?}"),
        }
        assert_eq!(decoded::<A>(text), [], "{text:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// JSON Lines

#[test]
fn case_33_truncated_last_line() {
    let text = "{\"a\":1}\n{\"a\":2}\n{\"a\":";
    let out = decoded::<A>(text);
    assert_eq!(items(&out), [json!({"a": 1}), json!({"a": 2})]);
    assert_eq!(
        skips(&out),
        [&Skipped {
            line: 3,
            raw: "{\"a\":".into(),
            reason: SkipReason::Truncated
        }]
    );
    let lines = lines_from_str::<A>(text);
    assert_eq!(lines.items, [A { a: 1 }, A { a: 2 }]);
}

#[test]
fn case_34_fenced_with_blank_lines() {
    let text = "```jsonl\n{\"a\":1}\n\n{\"a\":2}\n```";
    let out = decoded::<A>(text);
    assert_eq!(
        out,
        [Out::Item(json!({"a": 1}), 2), Out::Item(json!({"a": 2}), 4)]
    );
}

#[test]
fn case_35_an_array_instead_of_lines() {
    let text = "[{\"a\":1},{\"a\":2}]";
    assert_eq!(
        items(&decoded::<A>(text)),
        [json!({"a": 1}), json!({"a": 2})]
    );
    let pretty = "```json\n[\n  {\"a\": 1},\n  {\"a\": 2}\n]\n```";
    let out = decoded::<A>(pretty);
    assert_eq!(
        out,
        [Out::Item(json!({"a": 1}), 3), Out::Item(json!({"a": 2}), 4)]
    );
    // The constrained-decoding shape: elements come out as soon as they complete.
    let mut decoder = LineDecoder::<A>::new();
    let first = decoder.feed(b"{\"items\": [{\"a\":1}, {\"a\"");
    assert!(matches!(&first[..], [LineEvent::Item(i)] if i.value == A { a: 1 }));
    let second = decoder.feed(b":2}]}");
    assert!(matches!(&second[..], [LineEvent::Item(i)] if i.value == A { a: 2 }));
    assert!(decoder.finish().is_empty());
    assert_eq!(
        items(&decoded::<A>("{\"items\":[{\"a\":1},{\"a\":2}]}")),
        [json!({"a": 1}), json!({"a": 2})]
    );
}

#[test]
fn case_36_pretty_printed_objects() {
    let text = "{\n \"a\":1\n}\n{\n \"a\":2\n}";
    let out = decoded::<A>(text);
    assert_eq!(
        out,
        [Out::Item(json!({"a": 1}), 1), Out::Item(json!({"a": 2}), 4)]
    );
}

#[test]
fn case_37_prose_line_between() {
    let text = "{\"a\":1}\nNote:\n{\"a\":2}";
    let out = decoded::<A>(text);
    assert_eq!(
        out,
        [
            Out::Item(json!({"a": 1}), 1),
            Out::Skip(Skipped {
                line: 2,
                raw: "Note:".into(),
                reason: SkipReason::NotJson
            }),
            Out::Item(json!({"a": 2}), 3),
        ]
    );
}

#[test]
fn case_38_mixed_tagged_lines() {
    let text = "{\"type\":\"definition\",\"term\":\"cat\",\"meaning\":\"an animal\"}\n\
                {\"type\":\"relationship\",\"from\":\"cat\",\"to\":\"mouse\"}\n\
                {\"type\":\"Definition\",\"term\":\"dog\",\"meaning\":\"another\"}";
    let lines = lines_from_str::<Entry>(text);
    assert_eq!(
        lines.items,
        [
            Entry::Definition {
                term: "cat".into(),
                meaning: "an animal".into()
            },
            Entry::Relationship {
                from: "cat".into(),
                to: "mouse".into()
            },
            Entry::Definition {
                term: "dog".into(),
                meaning: "another".into()
            },
        ]
    );
    assert!(lines.skipped.is_empty());
    assert_eq!(items(&decoded::<Entry>(text)).len(), 3);
}

#[test]
fn case_39_a_line_failing_the_schema() {
    let text = "{\"a\":1}\n{\"a\":\"x\"}\n{\"a\":3}";
    let out = decoded::<A>(text);
    assert_eq!(items(&out), [json!({"a": 1}), json!({"a": 3})]);
    match &skips(&out)[..] {
        [Skipped {
            line: 2,
            raw,
            reason: SkipReason::Schema(violations),
        }] => {
            assert_eq!(raw, "{\"a\":\"x\"}");
            assert_eq!(violations[0].path, "/a");
            assert!(violations[0].message.contains("integer"), "{violations:?}");
        }
        other => panic!("{other:?}"),
    }
    // A serde failure after validation carries its path too.
    let out = decoded::<Person>("{\"name\":\"a\",\"age\":1.5}");
    assert!(matches!(&skips(&out)[0].reason, SkipReason::Schema(v) if v[0].path.contains("age")));
}

#[test]
fn case_40_crlf_bom_nul() {
    let crlf = "{\"a\":1}\r\n\r\n{\"a\":2}\r\n";
    assert_eq!(
        items(&decoded::<A>(crlf)),
        [json!({"a": 1}), json!({"a": 2})]
    );
    let bom = "\u{feff}{\"a\":1}\n{\"a\":2}";
    assert_eq!(
        items(&decoded::<A>(bom)),
        [json!({"a": 1}), json!({"a": 2})]
    );
    assert_eq!(ok::<A>("\u{feff}{\"a\":1}").value, A { a: 1 });
    let nul = "{\"a\":1}\0\n{\"a\":\u{0} 2}\n\0\n{\"a\":3}";
    assert_eq!(
        items(&decoded::<A>(nul)),
        [json!({"a": 1}), json!({"a": 2}), json!({"a": 3})]
    );
    assert_eq!(ok::<A>("{\"a\":\u{0}1}").value, A { a: 1 });
    assert_eq!(ok::<S>("{\"a\":\"x\u{0}y\"}").value.a, "xy");
}

// ---------------------------------------------------------------------------------------------
// Strict mode, errors, hostile input

#[test]
fn strict_mode_accepts_only_clean_json() {
    let strict = ParseOptions::strict();
    assert_eq!(
        from_str_with::<A>("{\"a\":1}", &strict).unwrap().value,
        A { a: 1 }
    );
    for text in [
        "```json\n{\"a\":1}\n```",
        "{\"a\":1,}",
        "{'a':1}",
        "{\"a\":\"1\"}",
    ] {
        assert!(from_str_with::<A>(text, &strict).is_err(), "{text}");
    }
    assert!(matches!(
        from_str_with::<A>("{\"a\":", &strict),
        Err(ParseError::Truncated { .. })
    ));
    match from_str_with::<A>("{\"a\":1 x}", &strict) {
        Err(ParseError::Syntax { offset, .. }) => assert_eq!(offset, 7),
        other => panic!("{other:?}"),
    }
    let lines = llm_extract::parse::lines_from_str_with::<A>("{\"a\":1}\n{'a':2}", &strict);
    assert_eq!(lines.items, [A { a: 1 }]);
    assert_eq!(lines.skipped.len(), 1);
}

#[test]
fn validation_can_be_turned_off() {
    let off = ParseOptions::default().with_validation(false);
    // serde ignores the unknown key; nothing checks minimum/maximum of a hand-written schema.
    assert_eq!(
        from_str_with::<A>("{\"a\":1,\"z\":0}", &off).unwrap().value,
        A { a: 1 }
    );
    assert_eq!(
        from_str_with::<A>("x {\"a\":\"2\"}", &off).unwrap().value,
        A { a: 2 }
    );
    // One value alone in a fence goes straight to serde, and says where it was found.
    let fenced = from_str_with::<A>("Here:\n```json\n{\"a\":3,\"z\":0}\n```\nDone.", &off).unwrap();
    assert_eq!(fenced.value, A { a: 3 });
    assert_eq!(fenced.fixes.len(), 1);
    assert!(
        fenced.fixes[0].description.contains("bytes 14..27"),
        "{:?}",
        fenced.fixes
    );
}

#[test]
fn deserialize_errors_carry_a_path() {
    match from_str::<Person>("{\"name\":\"a\",\"age\":2.5}") {
        Err(ParseError::Deserialize { path, message, .. }) => {
            assert_eq!(path, "age");
            assert!(message.contains("2.5"), "{message}");
        }
        Err(ParseError::Schema { .. }) => {} // a validator may reject 2.5 for "integer" first
        other => panic!("{other:?}"),
    }
}

#[test]
fn errors_carry_the_raw_text_and_say_what_to_do() {
    let e = from_str::<A>("no json here").unwrap_err();
    assert_eq!(e.raw(), "no json here");
    assert!(e.to_string().contains("no JSON"));
    let e = from_str::<A>("{\"a\":\"x\"}").unwrap_err();
    assert!(e.to_string().contains("/a"), "{e}");
}

#[test]
fn deep_nesting_is_a_clear_error() {
    let deep = format!("{{\"a\":{}", "[".repeat(200_000));
    match from_str::<A>(&deep) {
        Err(ParseError::Syntax { message, .. }) => assert!(message.contains("deeper than 128")),
        other => panic!("{other:?}"),
    }
    let closed_deep = format!("{}{}", "[".repeat(50_000), "]".repeat(50_000));
    assert!(from_str::<A>(&closed_deep).is_err());
    let lines = lines_from_str::<A>(&format!("{closed_deep}\n{{\"a\":1}}"));
    assert_eq!(lines.items, [A { a: 1 }]);
    let mut decoder = LineDecoder::<A>::new();
    for chunk in deep.as_bytes().chunks(4096) {
        decoder.feed(chunk);
    }
    assert!(matches!(&decoder.finish()[..], [LineEvent::Skipped(_)]));
}

#[test]
fn unterminated_strings_end_in_an_error() {
    // Linearity is held by the parser's unit tests (they count its look-ahead) and by the
    // doubling rows of `benches/parse.rs`, not by a clock; this checks the outcome at ~1.1 MB.
    let body = "word \"quoted\" text, more {braces} [brackets]\n".repeat(25_000);
    let text = format!("{{\"bio\": \"{body}");
    assert!(matches!(
        from_str::<Bio>(&text),
        Err(ParseError::Truncated { .. })
    ));
    // Salvage keeps free text as far as it was read, and says it was cut.
    let salvaged = from_str_with::<Bio>(&text, &ParseOptions::default().with_salvage(true))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        salvaged.value.bio == body,
        "{} bytes kept",
        salvaged.value.bio.len()
    );
    assert!(kinds(&salvaged).contains(&FixKind::CutString));
    let lines = lines_from_str::<Bio>(&text);
    assert!(lines.items.is_empty());
    assert_eq!(lines.skipped.len(), 1);
}

#[test]
fn a_huge_line_is_skipped_with_bounded_memory() {
    let options = ParseOptions::default().with_max_frame_bytes(1024);
    let huge = format!("{{\"a\":\"{}\"}}", "x".repeat(100_000));
    let text = format!("{{\"a\":1}}\n{huge}\n{}\n{{\"a\":3}}", "y".repeat(5000));
    let mut decoder = LineDecoder::<A>::with_options(options);
    let mut out = Vec::new();
    for chunk in text.as_bytes().chunks(7) {
        out.extend(decoder.feed(chunk));
    }
    out.extend(decoder.finish());
    let values: Vec<i64> = out
        .iter()
        .filter_map(|e| match e {
            LineEvent::Item(i) => Some(i.value.a),
            LineEvent::Skipped(_) => None,
        })
        .collect();
    assert_eq!(values, [1, 3]);
    let reasons: Vec<(usize, &SkipReason)> = out
        .iter()
        .filter_map(|e| match e {
            LineEvent::Skipped(s) => Some((s.line, &s.reason)),
            LineEvent::Item(_) => None,
        })
        .collect();
    assert_eq!(
        reasons,
        [
            (2, &SkipReason::TooLarge { limit: 1024 }),
            (3, &SkipReason::TooLarge { limit: 1024 })
        ]
    );
    // The same one-shot.
    let lines = llm_extract::parse::lines_from_str_with::<A>(&text, &options);
    assert_eq!(lines.items, [A { a: 1 }, A { a: 3 }]);
}

#[test]
fn invalid_utf8_is_replaced_or_skipped() {
    let bytes = b"{\"a\":\"x\xffy\"}\n{\"a\":\"ok\"}";
    let out = decoded_with::<S>(bytes, ParseOptions::default());
    assert_eq!(
        items(&out),
        [json!({"a": "x\u{fffd}y"}), json!({"a": "ok"})]
    );
    let out = decoded_with::<S>(bytes, ParseOptions::strict());
    assert_eq!(items(&out), [json!({"a": "ok"})]);
    assert!(matches!(&skips(&out)[0].reason, SkipReason::Syntax(m) if m.contains("UTF-8")));
}

#[test]
fn runtime_schemas_use_the_untyped_path() {
    let schema = SchemaSet::new("Dyn", closed(json!({"x": {"type": "integer"}}), &["x"]));
    let lines = lines_from_str_value(
        "{\"x\":1}\n{x: \"2\"}\n{\"x\":\"no\"}",
        &schema,
        &ParseOptions::default(),
    );
    assert_eq!(lines.items, [json!({"x": 1}), json!({"x": 2})]);
    assert_eq!(lines.skipped[0].line, 3);
    let shared = std::sync::Arc::new(schema);
    let mut decoder = LineDecoder::shared(shared, ParseOptions::default());
    assert_eq!(decoder.feed(b"{\"x\":5}").len(), 1);
}

// ---------------------------------------------------------------------------------------------
// Shapes decided with the schema in hand; each also without a schema (`{}`: nothing to check a
// guess against), where only what the text makes plain is fixed.

fn no_schema() -> SchemaSet {
    SchemaSet::new("Any", json!({}))
}

fn unchecked(text: &str) -> Result<Parsed<Value>, ParseError> {
    from_str_value(text, &no_schema(), &ParseOptions::default())
}

fn salvaged_unchecked(text: &str) -> Result<Parsed<Value>, ParseError> {
    from_str_value(
        text,
        &no_schema(),
        &ParseOptions::default().with_salvage(true),
    )
}

fn fix_kinds(parsed: &Parsed<Value>) -> Vec<FixKind> {
    parsed.fixes.iter().map(|r| r.kind).collect()
}

#[derive(Debug, Deserialize, PartialEq)]
struct FlagAndCount {
    a: bool,
    b: i64,
}
extract!(
    FlagAndCount,
    closed(
        json!({"a": {"type": "boolean"}, "b": {"type": "integer"}}),
        &["a", "b"]
    )
);

#[derive(Debug, Deserialize, PartialEq)]
struct Key {
    key: i64,
}
extract!(Key, closed(json!({"key": {"type": "integer"}}), &["key"]));

#[derive(Debug, Deserialize, PartialEq)]
struct Both {
    a: i64,
    b: i64,
}
extract!(
    Both,
    closed(
        json!({"a": {"type": "integer"}, "b": {"type": "integer"}}),
        &["a", "b"]
    )
);

#[derive(Debug, Deserialize, PartialEq)]
struct Pair {
    pair: Vec<i64>,
}
extract!(
    Pair,
    closed(
        json!({"pair": {"type": "array", "items": {"type": "integer"}}}),
        &["pair"]
    )
);

#[derive(Debug, Deserialize, PartialEq)]
struct Population {
    n: u64,
}
extract!(
    Population,
    closed(json!({"n": {"type": "integer"}}), &["n"])
);

#[derive(Debug, Deserialize, PartialEq)]
struct Named {
    name: String,
}
extract!(
    Named,
    closed(json!({"name": {"type": "string"}}), &["name"])
);

#[derive(Debug, Deserialize, PartialEq)]
struct Profile {
    name: String,
    mood: Option<Sentiment>,
    bio: Option<String>,
}
extract!(
    Profile,
    closed(
        json!({
            "name": {"type": "string"},
            "mood": {"anyOf": [{"type": "string", "enum": ["positive", "negative", "neutral"]}, {"type": "null"}]},
            "bio": {"anyOf": [{"type": "string"}, {"type": "null"}]}
        }),
        &["name"]
    )
);

#[test]
fn unescaped_quotes_inside_a_string_and_a_stray_quote_after_a_value() {
    let text = r#"{"a": "lorem "ipsum" dolor"}"#;
    let parsed = ok::<S>(text);
    assert_eq!(parsed.value.a, r#"lorem "ipsum" dolor"#);
    assert!(kinds(&parsed).contains(&FixKind::InnerQuote));
    assert_eq!(
        unchecked(text).unwrap().value,
        json!({"a": "lorem \"ipsum\" dolor"})
    );
    for text in [r#"{"a": 1"}"#, r#"{"a": 1" }"#, "Here: {\"a\": 1\"} done"] {
        let parsed = ok::<A>(text);
        assert_eq!(parsed.value, A { a: 1 }, "{text}");
        assert!(kinds(&parsed).contains(&FixKind::StrayText), "{text}");
        assert_eq!(unchecked(text).unwrap().value, json!({"a": 1}), "{text}");
    }
    let parsed = ok::<AB>(r#"{"a": 1", "b": 2}"#);
    assert_eq!(parsed.value, AB { a: 1, b: Some(2) });
}

#[test]
fn quotes_inside_a_value_before_a_comma() {
    // A quote then a comma inside an object's value: the value ends there only when a key (after
    // stray words, perhaps) or a bracket follows.
    let text = r#"[{"key": "value", COMMENT "notes": "lorem "ipsum", sic." }]"#;
    let expected = json!([{"key": "value", "notes": "lorem \"ipsum\", sic."}]);
    let plain = unchecked(text).unwrap();
    assert_eq!(plain.value, expected);
    assert!(fix_kinds(&plain).contains(&FixKind::InnerQuote));
    assert!(fix_kinds(&plain).contains(&FixKind::StrayText));
    let set = SchemaSet::new(
        "Notes",
        json!({"type": "array", "items": {"type": "object", "properties": {
            "key": {"type": "string"}, "notes": {"type": "string"}},
            "required": ["key", "notes"], "additionalProperties": false}}),
    );
    let typed = from_str_value(text, &set, &ParseOptions::default()).unwrap();
    assert_eq!(typed.value, expected);
    // A comma then a key, a bracket or the end still closes the value.
    for (text, value) in [
        (r#"{"a": "x", "b": "y"}"#, json!({"a": "x", "b": "y"})),
        (r#"{"a": "x", b: "y"}"#, json!({"a": "x", "b": "y"})),
        (r#"{"a": "x",}"#, json!({"a": "x"})),
        (r#"{"a": "x", NOTE "b": "y"}"#, json!({"a": "x", "b": "y"})),
        (
            r#"{"a": "he said "hi", then left"}"#,
            json!({"a": "he said \"hi\", then left"}),
        ),
    ] {
        assert_eq!(unchecked(text).unwrap().value, value, "{text}");
    }
    // In an array a comma always separates elements.
    assert_eq!(
        unchecked(r#"["he said "hi", then", "x"]"#).unwrap().value,
        json!(["he said \"hi", "then\"", "x"])
    );
}

#[test]
fn stray_words_between_members_and_a_missing_colon() {
    for text in [
        r#"{"a": true, COMMENT "b": 1}"#,
        r#"{"a": true, // note
        "b": 1}"#,
        r#"{"a": true,COMMENT"b": 1}"#,
    ] {
        let parsed = ok::<FlagAndCount>(text);
        assert_eq!(parsed.value, FlagAndCount { a: true, b: 1 }, "{text}");
    }
    let parsed = ok::<FlagAndCount>(r#"{"a": true, COMMENT "b": 1}"#);
    assert!(kinds(&parsed).contains(&FixKind::StrayText));
    let plain = unchecked(r#"{"a": true, COMMENT "b": 1}"#).unwrap();
    assert_eq!(plain.value, json!({"a": true, "b": 1}));
    assert!(fix_kinds(&plain).contains(&FixKind::StrayText));

    let parsed = ok::<Key>(r#"{"key", 105}"#);
    assert_eq!(parsed.value, Key { key: 105 });
    assert!(kinds(&parsed).contains(&FixKind::MissingColon));
    assert_eq!(
        unchecked(r#"{"key", 105}"#).unwrap().value,
        json!({"key": 105})
    );
    // A key after the comma is a key of its own, not the missing value: no guess.
    assert!(unchecked(r#"{"key", "b": 1}"#).is_err());
    // A set written with braces reads as a pair, which a schema that wants a list refuses.
    assert!(matches!(
        from_str::<Tags>(r#"{"tags": {"a", "b"}}"#),
        Err(ParseError::Schema { .. })
    ));
}

#[test]
fn a_string_cut_off_is_kept_where_the_schema_wants_free_text() {
    let salvage = ParseOptions::default().with_salvage(true);
    let text = r#"{"bio": "Born in 1815 in Lon"#;
    let parsed = salvaged::<Bio>(text).unwrap();
    assert_eq!(parsed.value.bio, "Born in 1815 in Lon");
    let cut = parsed
        .fixes
        .iter()
        .find(|f| f.kind == FixKind::CutString)
        .expect("the cut is recorded");
    assert_eq!(cut.offset, text.find("\"Born").unwrap());
    assert!(
        cut.description.contains("/bio") && cut.description.contains("19 character"),
        "{}",
        cut.description
    );
    // Without salvage it is still an error.
    assert!(matches!(
        from_str::<Bio>(text),
        Err(ParseError::Truncated { .. })
    ));
    // The decoder agrees at every split.
    let out = decoded_with::<Bio>(text.as_bytes(), salvage);
    assert_eq!(items(&out), [json!({"bio": "Born in 1815 in Lon"})]);

    // An optional free-text member after complete ones; a half escape and a half character are
    // left out of what is kept.
    let parsed =
        salvaged::<Profile>("{\"name\": \"Ada\", \"bio\": \"Math\\u00e9matician \\u00").unwrap();
    assert_eq!(parsed.value.bio.as_deref(), Some("Mathématician "));
    let cut_char = b"{\"name\": \"Ada\", \"bio\": \"x \xe2\x82";
    let out = decoded_with::<Profile>(cut_char, salvage);
    assert_eq!(items(&out), [json!({"name": "Ada", "bio": "x "})]);

    // Where a cut could make another valid value (an enum: "neg" is not "negative"; an integer
    // read as text), the string is dropped with its key.
    let parsed = salvaged::<Profile>(r#"{"name": "Ada", "mood": "neg"#).unwrap();
    assert_eq!(parsed.value.mood, None);
    assert!(!kinds(&parsed).contains(&FixKind::CutString));
    assert!(kinds(&parsed).contains(&FixKind::DroppedIncomplete));
    assert!(salvaged::<A>(r#"{"a": "12"#).is_err());
    // A cut list item is dropped: a cut tag is not a tag.
    let parsed = salvaged::<Tags>(r#"{"tags": ["rust", "pyth"#).unwrap();
    assert_eq!(parsed.value.tags, ["rust"]);

    // Without a schema nothing says the member is free text: dropped and recorded.
    let plain = salvaged_unchecked(text).unwrap();
    assert_eq!(plain.value, json!({}));
    assert!(fix_kinds(&plain).contains(&FixKind::DroppedIncomplete));
    assert!(!fix_kinds(&plain).contains(&FixKind::CutString));
}

#[test]
fn members_after_an_object_closed_too_early() {
    let text = r#"{"a": 1}, "b": 2}"#;
    // The schema wants b: the members join the object.
    let parsed = ok::<Both>(text);
    assert_eq!(parsed.value, Both { a: 1, b: 2 });
    assert!(kinds(&parsed).contains(&FixKind::Reopened));
    let parsed = ok::<AB>(text);
    assert_eq!(parsed.value, AB { a: 1, b: Some(2) });
    let parsed = ok::<AB>("Answer: {\"a\": 1}, 'b': 2} Done.");
    assert_eq!(parsed.value, AB { a: 1, b: Some(2) });
    // The schema does not know b: the object as closed.
    let parsed = ok::<A>(text);
    assert_eq!(parsed.value, A { a: 1 });
    assert!(!kinds(&parsed).contains(&FixKind::Reopened));
    // Without a schema nothing tells: the object as closed stands.
    assert_eq!(unchecked(text).unwrap().value, json!({"a": 1}));
    // Nested members, and candidates inside them that are its parts, not values of their own.
    let parsed = from_str_value(
        r#"{"a": 1}, "b": {"c": [1]}}"#,
        &SchemaSet::new(
            "N",
            closed(
                json!({"a": {"type": "integer"}, "b": {"type": "object"}}),
                &["a", "b"],
            ),
        ),
        &ParseOptions::default(),
    )
    .unwrap();
    assert_eq!(parsed.value, json!({"a": 1, "b": {"c": [1]}}));
    // Strict mode fixes nothing.
    assert!(from_str_with::<Both>(text, &ParseOptions::strict()).is_err());
}

#[test]
fn python_tuples_and_digit_groups() {
    let parsed = ok::<Pair>(r#"{"pair": (1, 2)}"#);
    assert_eq!(parsed.value.pair, [1, 2]);
    assert!(kinds(&parsed).contains(&FixKind::Tuple));
    let list = SchemaSet::new("L", json!({"type": "array", "items": {"type": "integer"}}));
    let parsed = from_str_value("(1, 2, 3)", &list, &ParseOptions::default()).unwrap();
    assert_eq!(parsed.value, json!([1, 2, 3]));
    let parsed =
        from_str_value("```python\n(4, 5,)\n```", &list, &ParseOptions::default()).unwrap();
    assert_eq!(parsed.value, json!([4, 5]));
    // A tuple holds a sequence whatever the schema: read as an array without one too.
    assert_eq!(
        unchecked(r#"{"pair": (1, 'x')}"#).unwrap().value,
        json!({"pair": [1, "x"]})
    );

    let parsed = ok::<Population>(r#"{"n": 82_461_110}"#);
    assert_eq!(parsed.value.n, 82_461_110);
    assert!(kinds(&parsed).contains(&FixKind::Coerced));
    assert_eq!(ok::<Num>(r#"{"n": -1_000.5}"#).value.n, -1000.5);
    // Where the schema wants text, the text as written; not a number unless every group holds digits.
    assert_eq!(ok::<P>(r#"{"p": 82_461_110}"#).value.p, "82_461_110");
    assert!(from_str::<Population>(r#"{"n": 82__461}"#).is_err());
    assert!(from_str::<Population>(r#"{"n": 1_000.5}"#).is_err());
    // Without a schema the text is kept as written: nothing says it was a number.
    assert_eq!(
        unchecked(r#"{"n": 82_461_110}"#).unwrap().value,
        json!({"n": "82_461_110"})
    );
}

#[test]
fn several_values_where_the_schema_tells_which() {
    let text = r#"{"x":1} {"name":"A"}"#;
    let parsed = ok::<Named>(text);
    assert_eq!(parsed.value.name, "A");
    assert_eq!(kinds(&parsed), [FixKind::Envelope]);
    let text = "Example: {\"title\": \"x\"}\nAnswer: {\"name\": \"B\"}";
    assert_eq!(ok::<Named>(text).value.name, "B");
    // Without a schema both are values: ambiguous, never a guess.
    assert!(matches!(
        unchecked(r#"{"x":1} {"name":"A"}"#),
        Err(ParseError::Ambiguous { .. })
    ));
}

#[test]
fn every_spelling_of_a_literal_reads_the_same() {
    for (text, a, b) in [
        (r#"{"a": tRuE, "b": nil}"#, true, None),
        (r#"{"a": FALSE, "b": undefined}"#, false, None),
        (r#"{"a": True, "b": "x"}"#, true, Some("x")),
        (r#"{"a": true, "b": NaN}"#, true, None),
    ] {
        let parsed = ok::<Lit>(text);
        assert_eq!(
            (parsed.value.a, parsed.value.b.as_deref()),
            (a, b),
            "{text}"
        );
    }
    assert_eq!(
        unchecked(r#"[tRuE, nil, undefined, -Infinity, None, nothing]"#)
            .unwrap()
            .value,
        json!([true, null, null, null, null, "nothing"])
    );
}

#[test]
fn many_quotes_take_linear_time() {
    // Each shape at four doublings: the parser's look-ahead (bytes read past where it stands, and
    // comparisons between candidates, counted by `parse::work`) stays a small multiple of the input
    // and about doubles with it. A look-ahead quadratic in the input would multiply it by about 4.
    // Each shape: its name, the text at size `n`, and what parsing that text must give.
    type Shape = (&'static str, fn(usize) -> String, fn(&str));
    let shapes: [Shape; 6] = [
        (
            "stray quotes",
            |n| format!("{{\"a\": 1{}}}", "\" ".repeat(n)),
            |t| assert!(from_str::<A>(t).is_err()),
        ),
        (
            "quotes inside a string",
            |n| format!("{{\"a\": \"{}\"}}", "x \"y\" ".repeat(n)),
            |t| assert!(from_str::<S>(t).is_ok()),
        ),
        (
            "keys without colons",
            |n| format!("{{{}}}", "\"k\", ".repeat(n)),
            |t| assert_eq!(unchecked(t).unwrap().value, json!({"k": "k"})),
        ),
        (
            "objects closed and reopened",
            |n| format!("{{\"a\": 1{}}}", "}, \"b\": 1".repeat(n)),
            |t| assert_eq!(ok::<AB>(t).value, AB { a: 1, b: Some(1) }),
        ),
        (
            "words before quotes",
            |n| format!("{{\"a\": 1, {} \"b\": 2}}", "W \"".repeat(n)),
            |t| assert!(unchecked(t).is_err()),
        ),
        (
            "commas inside a string",
            |n| format!("{{\"a\": \"{}\"}}", "x\", y ".repeat(n)),
            |t| assert!(from_str::<S>(t).is_ok()),
        ),
    ];
    for (shape, make, check) in shapes {
        let mut last: Option<usize> = None;
        for n in [10_000, 20_000, 40_000, 80_000] {
            let text = make(n);
            let steps = llm_extract::parse::work::of(|| check(&text));
            assert!(
                steps > 0 && steps <= 8 * text.len(),
                "{shape}: {steps} steps for {} bytes",
                text.len()
            );
            if let Some(last) = last {
                assert!(
                    steps * 10 < last * 25,
                    "{shape}: {last} then {steps} steps at {n}"
                );
            }
            last = Some(steps);
        }
    }
}

#[test]
fn repairs_in_json_lines() {
    // A stray quote leaves the framer's string open at the end of its line: the next line still
    // starts a value of its own, and the broken one is repaired, at every split.
    let out = decoded::<A>("{\"a\": 1\"}\n{\"a\": 2}\n{\"a\": (3)}\n{\"a\": 4, NOTE \"b\": 1}");
    assert_eq!(
        items(&out),
        [json!({"a": 1}), json!({"a": 2}), json!({"a": 4})],
        "{:?}",
        skips(&out)
    );
    // The tuple is an array, which an integer is not.
    let skipped = skips(&out);
    assert_eq!(skipped.len(), 1);
    assert_eq!(skipped[0].line, 3);
    assert!(matches!(&skipped[0].reason, SkipReason::Schema(v) if v[0].path == "/a"));
    // A line cut at a new value's start is still broken when no repair closes it.
    let out = decoded::<A>("{\"a\": \"x\n{\"a\": 2}");
    assert_eq!(items(&out), [json!({"a": 2})]);
}
