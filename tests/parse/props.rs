//! Properties of the parser: it never panics; the decoder yields what `lines_from_str` yields however the
//! bytes are chunked; serialized values round-trip; a partial preview's complete scalars are the
//! final parse's.

use crate::common;

use common::decoded::{self, Out};
use llm_extract::parse::{
    from_str_value, from_str_with, lines_from_str_with, Node, ParseOptions, PartialParser,
};
use llm_extract::{from_str, parse::lines_from_str, schema::SchemaSet, ParseError, Schema};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::sync::OnceLock;

/// The seed type: strings, integers, floats, an enum, a nested optional object, an array.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Rec {
    name: String,
    n: i64,
    score: f64,
    kind: Kind,
    tags: Vec<String>,
    sub: Option<Sub>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Kind {
    Alpha,
    Beta,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Sub {
    ok: bool,
    note: Option<String>,
}

impl Schema for Rec {
    fn schema() -> &'static SchemaSet {
        static S: OnceLock<SchemaSet> = OnceLock::new();
        S.get_or_init(|| {
            let sub = json!({
                "type": "object",
                "properties": {"ok": {"type": "boolean"}, "note": {"type": ["string", "null"]}},
                "required": ["ok"],
                "additionalProperties": false
            });
            SchemaSet::new(
                "Rec",
                json!({
                    "type": "object",
                    "properties": {
                        "name": {"type": "string"},
                        "n": {"type": "integer"},
                        "score": {"type": "number"},
                        "kind": {"type": "string", "enum": ["alpha", "beta"]},
                        "tags": {"type": "array", "items": {"type": "string"}},
                        "sub": {"anyOf": [sub, {"type": "null"}]}
                    },
                    "required": ["name", "n", "score", "kind", "tags"],
                    "additionalProperties": false
                }),
            )
        })
    }
}

fn rec() -> impl Strategy<Value = Rec> {
    let sub = (any::<bool>(), proptest::option::of(any::<String>()))
        .prop_map(|(ok, note)| Sub { ok, note });
    (
        any::<String>(),
        any::<i64>(),
        -1e12f64..1e12,
        prop_oneof![Just(Kind::Alpha), Just(Kind::Beta)],
        proptest::collection::vec("[a-z {}\\[\\]\"',:]{0,8}", 0..4),
        proptest::option::of(sub),
    )
        .prop_map(|(name, n, score, kind, tags, sub)| Rec {
            name,
            n,
            score,
            kind,
            tags,
            sub,
        })
}

/// Text made of the bytes that matter to a JSON parser, to reach its corners more often than
/// uniformly random text does.
fn jsonish() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        prop_oneof![
            Just("{"),
            Just("}"),
            Just("["),
            Just("]"),
            Just("\""),
            Just("'"),
            Just(":"),
            Just(","),
            Just("\\"),
            Just("\n"),
            Just("\r\n"),
            Just(" "),
            Just("a"),
            Just("1"),
            Just("-"),
            Just("."),
            Just("e"),
            Just("true"),
            Just("None"),
            Just("//"),
            Just("/*"),
            Just("*/"),
            Just("```"),
            Just("<think>"),
            Just("</think>"),
            Just("“"),
            Just("”"),
            Just("\u{0}"),
            Just("\u{feff}"),
            Just("€"),
            Just("\\u00"),
            Just("{\"n\":"),
            Just("\"name\":"),
            Just("{\"items\": ["),
        ],
        0..60,
    )
    .prop_map(|parts| parts.concat())
}

/// What the decoders yield for `chunks` of a `Rec` answer (typed and untyped checked to agree).
fn decode(chunks: &[&[u8]], options: ParseOptions) -> Vec<Out> {
    decoded::decode::<Rec>(chunks, options)
}

/// `from_str` with its fast path must give what the full path gives: the validated JSON, deserialized.
fn parse_agrees(text: &str, options: &ParseOptions) {
    let fast = from_str_with::<Rec>(text, options);
    let full = from_str_value(text, Rec::schema(), options);
    match (fast, full) {
        (Ok(fast), Ok(full)) => {
            let value: Rec = serde_json::from_value(full.value).unwrap();
            assert_eq!(fast.value, value, "{text:?}");
            assert_eq!(fast.fixes, full.fixes, "{text:?}");
        }
        (Err(fast), Err(full)) => assert_eq!(fast.to_string(), full.to_string(), "{text:?}"),
        // Unvalidated JSON need not be a `Rec`: then `from_str` says it does not deserialize.
        (Err(ParseError::Deserialize { .. }), Ok(full))
            if !options.validate && serde_json::from_value::<Rec>(full.value.clone()).is_err() => {}
        (fast, full) => panic!("{text:?}: fast {fast:?}, full {full:?}"),
    }
}

/// The option sets every hostile text goes through.
fn every_option_set() -> [ParseOptions; 5] {
    [
        ParseOptions::default(),
        ParseOptions::default().with_salvage(true),
        ParseOptions::strict(),
        ParseOptions::default().with_max_frame_bytes(16),
        ParseOptions::default().with_validation(false),
    ]
}

/// Splits `bytes` at the given cut points (any order, any value).
fn chunked<'a>(bytes: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut at: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
    at.push(0);
    at.push(bytes.len());
    at.sort_unstable();
    at.windows(2).map(|w| &bytes[w[0]..w[1]]).collect()
}

/// A JSON Lines answer in one of the shapes models write.
fn render(records: &[Rec], shape: u8, crlf: bool) -> String {
    let compact = |r: &Rec| serde_json::to_string(r).unwrap();
    let pretty = |r: &Rec| serde_json::to_string_pretty(r).unwrap();
    let newline = if crlf { "\r\n" } else { "\n" };
    let text = match shape % 5 {
        0 => records
            .iter()
            .map(compact)
            .collect::<Vec<_>>()
            .join(newline),
        1 => records.iter().map(pretty).collect::<Vec<_>>().join(newline),
        2 => serde_json::to_string_pretty(records).unwrap(),
        3 => serde_json::to_string(&json!({ "items": records })).unwrap(),
        _ => format!(
            "Here they are:{newline}```jsonl{newline}{}{newline}```",
            records
                .iter()
                .map(compact)
                .collect::<Vec<_>>()
                .join(newline)
        ),
    };
    if crlf {
        text.replace("\r\n", "\n").replace('\n', "\r\n")
    } else {
        text
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn never_panics_on_any_text(text in any::<String>()) {
        let _ = from_str::<Rec>(&text);
        let _ = from_str_with::<Rec>(&text, &ParseOptions::default().with_salvage(true));
        let _ = lines_from_str::<Rec>(&text);
    }

    #[test]
    fn never_panics_on_jsonish_text(text in jsonish(), cuts in proptest::collection::vec(any::<usize>(), 0..6)) {
        for options in every_option_set() {
            parse_agrees(&text, &options);
            let whole = decode(&[text.as_bytes()], options);
            // Not only no panic: chunking never changes the outcome, valid input or not.
            prop_assert_eq!(decode(&chunked(text.as_bytes(), &cuts), options), whole);
        }
    }

    #[test]
    fn never_panics_on_any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..300), cuts in proptest::collection::vec(any::<usize>(), 0..6)) {
        for options in [ParseOptions::default(), ParseOptions::default().with_max_frame_bytes(16)] {
            let whole = decode(&[&bytes], options);
            prop_assert_eq!(decode(&chunked(&bytes, &cuts), options), whole);
        }
    }

    #[test]
    fn any_chunking_yields_what_lines_from_str_yields(
        records in proptest::collection::vec(rec(), 0..5),
        shape in any::<u8>(),
        crlf in any::<bool>(),
        cuts in proptest::collection::vec(any::<usize>(), 0..12),
    ) {
        let text = render(&records, shape, crlf);
        let lines = lines_from_str_with::<Rec>(&text, &ParseOptions::default());
        prop_assert_eq!(&lines.items, &records);
        let whole = decode(&[text.as_bytes()], ParseOptions::default());
        prop_assert_eq!(whole.iter().filter(|o| matches!(o, Out::Skip(_))).count(), lines.skipped.len());
        prop_assert_eq!(decode(&chunked(text.as_bytes(), &cuts), ParseOptions::default()), whole);
    }

    #[test]
    fn round_trips(record in rec(), pretty in any::<bool>(), fenced in any::<bool>()) {
        let json = if pretty { serde_json::to_string_pretty(&record) } else { serde_json::to_string(&record) }.unwrap();
        let clean = from_str::<Rec>(&json).unwrap();
        prop_assert_eq!(&clean.value, &record);
        prop_assert!(clean.fixes.is_empty());
        let text = if fenced { format!("Sure:\n```json\n{json}\n```\nDone.") } else { json };
        prop_assert_eq!(from_str::<Rec>(&text).unwrap().value, record);
        parse_agrees(&text, &ParseOptions::default());
        parse_agrees(&text, &ParseOptions::strict());
        parse_agrees(&text, &ParseOptions::default().with_validation(false));
    }
}

#[test]
fn every_offset_of_a_mixed_answer() {
    let records: Vec<Rec> = (0..3)
        .map(|i| Rec {
            name: format!("n\"{i}}} €"),
            n: i,
            score: 0.5,
            kind: Kind::Beta,
            tags: vec!["x".into(), "]".into()],
            sub: Some(Sub {
                ok: true,
                note: None,
            }),
        })
        .collect();
    for shape in 0..5 {
        let text = render(&records, shape, shape % 2 == 0);
        let whole = decode(&[text.as_bytes()], ParseOptions::default());
        assert_eq!(
            whole.iter().filter(|o| matches!(o, Out::Item(..))).count(),
            3,
            "{text}"
        );
        for at in 0..=text.len() {
            let (a, b) = text.as_bytes().split_at(at);
            assert_eq!(
                decode(&[a, b], ParseOptions::default()),
                whole,
                "shape {shape} at {at}"
            );
        }
    }
}

/// Cuts found by `never_panics_on_jsonish_text`: a chunk that ends right after a newline inside
/// an open value, the next line starting with `{`. The chunked decode must split there as the
/// whole-text decode does.
#[test]
fn a_chunk_ending_at_a_newline_inside_an_open_value() {
    let cases = [
        (
            "  ]true {\"items\": [{“//{\n{\"n\":[\0{```{\"n\":“//\u{feff}\0\n{\"“\0\0 true{ \"{\"items\": [<think>",
            53,
        ),
        (
            "“{{\"n\":{\n{\"n\":\u{feff}\r\n{\"n\":\0\"“\"“[“</think>\"   ",
            21,
        ),
    ];
    for (text, cut) in cases {
        for options in every_option_set() {
            let whole = decode(&[text.as_bytes()], options);
            assert_eq!(
                decode(&chunked(text.as_bytes(), &[cut]), options),
                whole,
                "{text:?} cut at {cut}"
            );
        }
    }
}

/// A scalar written the way models write them: every spelling of a literal, every number form,
/// strings with every kind of escape (invalid ones and lone surrogates too), unquoted text.
fn lenient_scalar() -> impl Strategy<Value = String> {
    const WORDS: &[&str] = &[
        "true",
        "false",
        "null",
        "True",
        "tRuE",
        "FALSE",
        "None",
        "nil",
        "NIL",
        "undefined",
        "NaN",
        "nan",
        "Infinity",
        "-Infinity",
        "+inf",
        "hello",
        "hello world",
        "x1",
        "café au lait",
        "10px",
        "82_461_110",
        "3rd place",
        "truthy",
        "nullable",
        "Nonesuch",
    ];
    const NUMBERS: &[&str] = &[
        "0",
        "-0",
        "12",
        "-7",
        ".5",
        "-.5e1",
        "1.",
        "+1",
        "007",
        "1e3",
        "1E-2",
        "2.50",
        "18446744073709551615",
        "-9223372036854775808",
        "1e400",
    ];
    const ESCAPES: &[&str] = &[
        "\\n",
        "\\\"",
        "\\\\",
        "\\/",
        "\\t",
        "\\u00e9",
        "\\u00E9",
        "\\ud83d\\ude00",
        "\\ud83d",
        "\\ude00",
        "\\ud83dx",
        "\\ud83d\\u0041",
        "\\p",
        "\\'",
        "\\uZZ",
        "\\u00g",
        "\\u12",
        "€",
        "é",
        " ",
    ];
    prop_oneof![
        proptest::sample::select(WORDS).prop_map(str::to_owned),
        proptest::sample::select(NUMBERS).prop_map(str::to_owned),
        proptest::collection::vec(
            prop_oneof![
                proptest::sample::select(ESCAPES).prop_map(str::to_owned),
                "[a-z ]{0,4}",
            ],
            0..5
        )
        .prop_map(|parts| format!("\"{}\"", parts.concat())),
    ]
}

/// A document of those scalars in objects (quoted and bare keys), arrays and tuples, with
/// trailing and doubled commas and uneven whitespace.
fn lenient_document() -> impl Strategy<Value = String> {
    let leaf = lenient_scalar();
    let tree = leaf.prop_recursive(4, 40, 6, |inner| {
        prop_oneof![
            (proptest::collection::vec(inner.clone(), 0..6), 0u8..4).prop_map(|(items, style)| {
                let (open, close) = if style == 3 { ("(", ")") } else { ("[", "]") };
                let sep = if style == 1 { " ,\n " } else { "," };
                let trailing = if style == 2 && !items.is_empty() {
                    ",,"
                } else {
                    ""
                };
                format!("{open}{}{trailing}{close}", items.join(sep))
            }),
            (
                proptest::collection::vec((inner, any::<bool>()), 0..6),
                any::<bool>()
            )
                .prop_map(|(members, trailing)| {
                    let body: Vec<String> = members
                        .into_iter()
                        .enumerate()
                        .map(|(i, (value, bare))| match bare {
                            true => format!("k{i}: {value}"),
                            false => format!("\"k{i}\" : {value}"),
                        })
                        .collect();
                    let comma = if trailing && !body.is_empty() {
                        ","
                    } else {
                        ""
                    };
                    format!("{{ {}{comma} }}", body.join(", "))
                }),
        ]
    });
    tree.prop_map(|inner| format!("{{\"root\": {inner}, \"last\": 1}}"))
}

/// Checks every complete scalar of the preview `node` against the final value at the same place.
fn preview_agrees(node: Node<'_>, last: Option<&Value>, path: &str, text: &str) {
    let fail = |what: &str| panic!("{what} at {path} of {text:?}: final {last:?}");
    if node.is_array() {
        for (i, item) in node.items().enumerate() {
            preview_agrees(
                item,
                last.and_then(|l| l.get(i)),
                &format!("{path}/{i}"),
                text,
            );
        }
    } else if node.is_object() {
        for (key, item) in node.entries() {
            preview_agrees(
                item,
                last.and_then(|l| l.get(key)),
                &format!("{path}/{key}"),
                text,
            );
        }
    } else if node.is_complete() {
        let shown = if let Some(flag) = node.as_bool() {
            Value::Bool(flag)
        } else if node.is_null() {
            Value::Null
        } else if let Some(text) = node.as_str() {
            Value::String(text.to_owned())
        } else if node.number().is_some() {
            match node.as_number() {
                Some(number) => Value::Number(number),
                // A number no parser can read (`1e400`): the final parse fails on it.
                None => return,
            }
        } else {
            return fail("a complete node of no kind");
        };
        if last != Some(&shown) {
            fail(&format!("the preview shows {shown}"));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn a_preview_shows_the_scalars_the_final_parse_reads(
        text in lenient_document(),
        cuts in proptest::collection::vec(any::<prop::sample::Index>(), 1..5),
    ) {
        let any = SchemaSet::new("Any", json!({}));
        let Ok(last) = from_str_value(&text, &any, &ParseOptions::default()) else {
            // Only `1e400` makes a document unreadable.
            prop_assert!(text.contains("1e400"), "{text:?}");
            return Ok(());
        };
        let bytes = text.as_bytes();
        let mut ends: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
        ends.push(bytes.len());
        for end in ends {
            // Fed in two chunks, the second one ending at the cut.
            let head = end / 2;
            let mut parser = PartialParser::new(true);
            parser.feed(&bytes[..head]);
            parser.feed(&bytes[head..end]);
            if let Some(root) = parser.root() {
                preview_agrees(root, Some(&last.value), "", &text);
            }
        }
    }
}

#[test]
fn a_preview_reads_each_spelling_as_the_final_parse() {
    let text = r#"{"a": tRuE, "b": nil, "c": undefined, "d": NaN, "e": .5, "f": +1, "g": 82_461_110,
        "h": "\uZZ \p", "i": (1, None), "j": trueish, "k": hello world}"#;
    let any = SchemaSet::new("Any", json!({}));
    let last = from_str_value(text, &any, &ParseOptions::default())
        .unwrap()
        .value;
    assert_eq!(
        last,
        json!({"a": true, "b": null, "c": null, "d": null, "e": 0.5, "f": 1, "g": "82_461_110",
               "h": "\\uZZ \\p", "i": [1, null], "j": "trueish", "k": "hello world"})
    );
    let mut parser = PartialParser::new(true);
    for byte in text.as_bytes() {
        parser.feed(std::slice::from_ref(byte));
        preview_agrees(parser.root().unwrap(), Some(&last), "", text);
    }
    assert_eq!(parser.root().unwrap().to_value(), last);
}
