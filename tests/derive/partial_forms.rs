//! Typed partial forms of adjacently tagged, untagged and generic enums (recursive ones too), of
//! tuple structs and tuple variants, and of tuples and arrays as fields: the
//! snapshots of an answer streamed token by token, through the reader and through
//! `extract_partial`; what a chunked read shows equal to a fresh read of the same text, at every
//! cut; and the last snapshot equal to the value serde reads.

use crate::common;

use common::snapshots::pieces_agree;
use futures_util::StreamExt;
use llm_extract::extract::PartialEvent;
use llm_extract::llm::{from_stream_fn, ChatEvent, ChatResponse, ChatStream};
use llm_extract::parse::{Partial, PartialParser, PartialReader, PartialValue};
use llm_extract::{Extract, Schema};
use proptest::prelude::*;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// `text` cut as a model's tokens come: pieces of one to four bytes, in a fixed pattern.
fn tokens(text: &str) -> Vec<&[u8]> {
    let bytes = text.as_bytes();
    let mut pieces = Vec::new();
    let mut start = 0;
    for size in [1, 3, 2, 4].into_iter().cycle() {
        if start == bytes.len() {
            break;
        }
        let end = (start + size).min(bytes.len());
        pieces.push(&bytes[start..end]);
        start = end;
    }
    pieces
}

/// Every snapshot of `text` streamed token by token, one per token that changed what is shown.
fn snapshots<T: PartialValue + Schema>(text: &str) -> Vec<Partial<T>> {
    let mut reader = PartialReader::<T>::new();
    let mut seen = Vec::new();
    for token in tokens(text) {
        if reader.feed(token) {
            seen.push(reader.partial().cloned().expect("a change shows a value"));
        }
    }
    seen
}

/// Fed in pieces of every size from 1 to 9 bytes, the reader shows after each piece what a reader
/// given the same prefix at once shows, and says it changed exactly when it did; once the text is
/// whole, what it shows serializes as the value serde reads from it.
#[track_caller]
fn agrees_at_every_cut<T: PartialValue + DeserializeOwned + Serialize>(text: &str) {
    let shown = chunks_agree::<T>(text);
    let value: T = serde_json::from_str(text).unwrap();
    assert_eq!(
        serde_json::to_value(shown).unwrap(),
        without_nulls(serde_json::to_value(value).unwrap())
    );
}

/// [`agrees_at_every_cut`] but for what serde reads: what `text` shows once whole.
#[track_caller]
fn chunks_agree<T: PartialValue>(text: &str) -> Partial<T> {
    let bytes = text.as_bytes();
    let new = || PartialReader::<T>::with_parser(PartialParser::new(true));
    let mut last = None;
    for size in 1..10 {
        let mut reader = new();
        let mut end = 0;
        for piece in bytes.chunks(size) {
            end += piece.len();
            let before = reader.partial().cloned();
            let changed = reader.feed(piece);
            let mut fresh = new();
            fresh.feed(&bytes[..end]);
            assert_eq!(
                reader.partial(),
                fresh.partial(),
                "{size}-byte pieces, {end} bytes"
            );
            assert_eq!(
                changed,
                reader.partial().cloned() != before,
                "{size}, {end}"
            );
        }
        last = reader.partial().cloned();
    }
    last.expect("the whole text shows a value")
}

/// `value` without the members that are `null` (a partial value leaves a field written `null` out,
/// as one not written).
fn without_nulls(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(_, value)| !value.is_null())
                .map(|(key, value)| (key, without_nulls(value)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(without_nulls).collect()),
        other => other,
    }
}

// ---------------------------------------------------------------------------------------------
// Adjacently tagged

/// Every variant style, a field the variant waits for, an alias and a catch-all.
#[derive(Extract, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(tag = "t", content = "c", rename_all = "snake_case")]
enum Event {
    Start,
    Move(i32, i32),
    Say(String),
    Rename {
        to: String,
        #[extract(stream = "required")]
        by: String,
    },
    #[serde(alias = "note")]
    Comment {
        text: String,
        tags: Vec<String>,
    },
    #[serde(other)]
    Unknown,
}

#[test]
fn an_adjacently_tagged_enum_is_known_once_its_tag_is_read() {
    let seen = snapshots::<Event>(r#"{"t": "say", "c": "hello there"}"#);
    assert_eq!(seen.first(), Some(&EventPartial::Say(None)));
    assert_eq!(
        seen.last(),
        Some(&EventPartial::Say(Some("hello there".into())))
    );
    for snapshot in &seen[1..] {
        let EventPartial::Say(Some(text)) = snapshot else {
            panic!("{snapshot:?}");
        };
        assert!("hello there".starts_with(text.as_str()), "{text}");
    }

    // The tag half written shows nothing; whole, the variant, its fields filled in as written.
    let mut reader = PartialReader::<Event>::new();
    assert!(!reader.feed(br#"{"t": "comm"#));
    assert!(reader.feed(br#"ent", "c": {"tags": ["a", "b"#));
    assert_eq!(
        reader.partial(),
        Some(&EventPartial::Comment {
            text: None,
            tags: Some(vec!["a".into(), "b".into()])
        })
    );
    reader.feed(br#""], "text": "fi"#);
    assert_eq!(
        serde_json::to_value(reader.partial().unwrap()).unwrap(),
        json!({"t": "comment", "c": {"text": "fi", "tags": ["a", "b"]}})
    );

    // The content before the tag: all of it at once, when the tag is read.
    let mut reader = PartialReader::<Event>::new();
    assert!(!reader.feed(br#"{"c": {"to": "Bob", "by": "Ann"}, "t": "rena"#));
    assert!(reader.feed(br#"me"}"#));
    assert_eq!(
        reader.partial(),
        Some(&EventPartial::Rename {
            to: Some("Bob".into()),
            by: Some("Ann".into())
        })
    );

    // A field the variant waits for (`stream = "required"`) holds it back.
    let mut reader = PartialReader::<Event>::new();
    assert!(!reader.feed(br#"{"t": "rename", "c": {"to": "Bo"#));
    assert!(reader.feed(br#"b", "by": "A"#));
    assert_eq!(
        reader.partial(),
        Some(&EventPartial::Rename {
            to: Some("Bob".into()),
            by: Some("A".into())
        })
    );

    // A tuple variant fills in its positions as their items are read (each `None` until then,
    // `null` in JSON); a unit variant, an alias, a catch-all.
    let mut reader = PartialReader::<Event>::new();
    reader.feed(br#"{"t": "move", "c": [1, -2"#);
    assert_eq!(reader.partial(), Some(&EventPartial::Move(Some(1), None)));
    assert_eq!(
        serde_json::to_value(reader.partial().unwrap()).unwrap(),
        json!({"t": "move", "c": [1, null]})
    );
    reader.feed(b"]");
    assert_eq!(
        reader.partial(),
        Some(&EventPartial::Move(Some(1), Some(-2)))
    );
    for (text, shown) in [
        (r#"{"t": "start"}"#, EventPartial::Start),
        (r#"{"t": "fly", "c": 3}"#, EventPartial::Unknown),
        (
            r#"{"t": "note", "c": {"text": "x""#,
            EventPartial::Comment {
                text: Some("x".into()),
                tags: None,
            },
        ),
    ] {
        let mut reader = PartialReader::<Event>::new();
        reader.feed(text.as_bytes());
        assert_eq!(reader.partial(), Some(&shown), "{text}");
    }
}

#[test]
fn content_written_again_starts_over() {
    let shown = chunks_agree::<Event>(
        r#"{"t": "comment", "c": {"text": "first", "tags": ["x"]}, "c": {"text": "again"}}"#,
    );
    assert_eq!(
        shown,
        EventPartial::Comment {
            text: Some("again".into()),
            tags: None
        }
    );
    let shown = chunks_agree::<Event>(r#"{"t": "say", "c": "first", "c": "again"}"#);
    assert_eq!(shown, EventPartial::Say(Some("again".into())));
}

#[test]
fn adjacently_tagged_snapshots_agree_at_every_cut() {
    agrees_at_every_cut::<Vec<Event>>(
        r#"[{"t": "start"}, {"t": "say", "c": "é\"x\" 😀"}, {"c": {"by": "Ann", "to": "Bob"}, "t": "rename"},
            {"t": "move", "c": [1, -2]}, {"t": "comment", "c": {"text": "t", "tags": ["a", "bc"]}}]"#,
    );
}

// ---------------------------------------------------------------------------------------------
// Untagged

#[derive(Extract, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(untagged)]
enum Contact {
    Email {
        address: String,
        label: Option<String>,
    },
    Phone {
        number: String,
        label: Option<String>,
    },
    Handle(String),
    Pair(u8, u8),
    Nothing,
}

#[test]
fn an_untagged_enum_shows_the_first_variant_the_json_fits() {
    // The keys decide between struct variants.
    let mut reader = PartialReader::<Contact>::new();
    assert!(!reader.feed(br#"{"number"#));
    reader.feed(br#"": "55"#);
    assert_eq!(
        reader.partial(),
        Some(&ContactPartial::Phone {
            number: Some("55".into()),
            label: None
        })
    );
    // A key an earlier variant reads brings it to show, as serde tries it first.
    reader.feed(br#"5", "address": "a@"#);
    assert_eq!(
        reader.partial(),
        Some(&ContactPartial::Email {
            address: Some("a@".into()),
            label: None
        })
    );
    reader.feed(br#"b"}"#);
    assert_eq!(
        serde_json::to_value(reader.partial().unwrap()).unwrap(),
        json!({"address": "a@b"})
    );
    assert_eq!(
        serde_json::from_str::<Contact>(r#"{"number": "555", "address": "a@b"}"#).unwrap(),
        Contact::Email {
            address: "a@b".into(),
            label: None
        }
    );

    // A key both read shows the first, until a key only another reads is written.
    let mut reader = PartialReader::<Contact>::new();
    reader.feed(br#"{"label": "home""#);
    assert_eq!(
        reader.partial(),
        Some(&ContactPartial::Email {
            address: None,
            label: Some("home".into())
        })
    );
    assert!(reader.feed(br#", "number": "55"#));
    assert_eq!(
        reader.partial(),
        Some(&ContactPartial::Phone {
            number: Some("55".into()),
            label: Some("home".into())
        })
    );
    assert!(reader.feed(br#"5"}"#));
    assert_eq!(
        reader.partial(),
        Some(&ContactPartial::Phone {
            number: Some("555".into()),
            label: Some("home".into())
        })
    );

    // Other kinds of JSON: a string grows, an array as written, `null`.
    let any = || PartialReader::<Contact>::with_parser(PartialParser::new(false));
    let mut reader = any();
    reader.feed(br#""@ada"#);
    assert_eq!(
        reader.partial(),
        Some(&ContactPartial::Handle("@ada".into()))
    );
    reader.feed(br#"_l""#);
    assert_eq!(
        reader.partial(),
        Some(&ContactPartial::Handle("@ada_l".into()))
    );
    let mut reader = any();
    reader.feed(b"[1, 2");
    assert_eq!(reader.partial(), Some(&ContactPartial::Pair(Some(1), None)));
    let mut reader = PartialReader::<Vec<Contact>>::with_parser(PartialParser::new(true));
    reader.feed(b"[nul");
    assert_eq!(reader.partial(), Some(&Vec::new()));
    reader.feed(b"l,");
    assert_eq!(reader.partial(), Some(&vec![ContactPartial::Nothing]));
}

/// The most common untagged enum: a variant per struct, told apart by their fields.
#[derive(Extract, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(untagged)]
enum Shape {
    Circle(Circle),
    Rect(Rect),
}

#[derive(Extract, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Circle {
    radius: f64,
    label: Option<String>,
}

#[derive(Extract, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Rect {
    width: f64,
    height: f64,
    label: Option<String>,
}

#[test]
fn newtype_variants_of_structs_are_told_apart_by_their_fields() {
    let mut reader = PartialReader::<Shape>::new();
    reader.feed(br#"{"width": 2, "height": 1"#);
    assert_eq!(
        reader.partial(),
        Some(&ShapePartial::Rect(RectPartial {
            width: Some(2.0),
            height: None,
            label: None
        }))
    );
    // A field both read keeps the variant shown: the other does not read `width`.
    reader.feed(br#".5, "label": "bo"#);
    assert_eq!(
        reader.partial(),
        Some(&ShapePartial::Rect(RectPartial {
            width: Some(2.0),
            height: Some(1.5),
            label: Some("bo".into())
        }))
    );
    // A field both read shows the first, until a key only the other reads is written.
    let mut reader = PartialReader::<Shape>::new();
    reader.feed(br#"{"label": "x", "hei"#);
    assert_eq!(
        reader.partial(),
        Some(&ShapePartial::Circle(CirclePartial {
            radius: None,
            label: Some("x".into())
        }))
    );
    reader.feed(br#"ght": 1"#);
    assert!(matches!(reader.partial(), Some(ShapePartial::Circle(_))));
    reader.feed(b",");
    assert_eq!(
        reader.partial(),
        Some(&ShapePartial::Rect(RectPartial {
            width: None,
            height: Some(1.0),
            label: Some("x".into())
        }))
    );
    reader.feed(br#" "width": 3}"#);
    assert_eq!(
        reader.partial(),
        Some(&ShapePartial::Rect(RectPartial {
            width: Some(3.0),
            height: Some(1.0),
            label: Some("x".into())
        }))
    );
    // Whole, an object fits only a variant whose needed fields it holds; keys of two variants
    // mixed fit none, and the first that shows the object is shown.
    let mut reader = PartialReader::<Shape>::new();
    reader.feed(br#"{"label": "x"}"#);
    assert!(matches!(reader.partial(), Some(ShapePartial::Circle(_))));
    let mut reader = PartialReader::<Shape>::new();
    reader.feed(br#"{"width": 1, "radius": 2}"#);
    assert!(matches!(reader.partial(), Some(ShapePartial::Circle(_))));
    agrees_at_every_cut::<Vec<Shape>>(
        r#"[{"radius": 1.5, "label": null}, {"label": "r", "height": 2.0, "width": 3.0},
            {"label": "c", "radius": 0.5}]"#,
    );
}

#[test]
fn untagged_snapshots_agree_at_every_cut() {
    agrees_at_every_cut::<Vec<Contact>>(
        r#"[{"label": "home", "number": "555", "address": "a@b"}, {"number": "1", "label": null},
            "@ada", [1, 2], null, {"label": "x", "address": "y"}, {"label": "w", "number": "2"}]"#,
    );
}

// ---------------------------------------------------------------------------------------------
// Generic enums, recursive ones too

/// No `Debug`, `Clone` or `PartialEq`: the partial forms of the enums holding it need none.
#[derive(Extract, Serialize, Deserialize)]
struct Person {
    name: String,
}

#[derive(Extract, Serialize, Deserialize)]
enum Either<L, R> {
    Left(L),
    Right(R),
}

#[derive(Extract, Serialize, Deserialize)]
#[serde(tag = "type")]
enum Msg<T> {
    Data { body: T, id: u32 },
    Ping,
}

#[derive(Extract, Serialize, Deserialize, Debug, PartialEq)]
#[serde(untagged)]
enum OneOrMany<T> {
    One(T),
    Many(Vec<T>),
}

/// An expression over any literal: adjacently tagged, generic and recursive.
#[derive(Extract, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(tag = "op", content = "args")]
enum Expr<T> {
    Lit(T),
    Neg(Box<Expr<T>>),
    Add {
        left: Box<Expr<T>>,
        right: Box<Expr<T>>,
    },
}

/// Nested lists of any item: untagged, generic and recursive.
#[derive(Extract, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(untagged)]
enum Nested<T> {
    Leaf(T),
    List(Vec<Nested<T>>),
}

fn person(name: &str) -> PersonPartial {
    PersonPartial {
        name: Some(name.into()),
    }
}

#[test]
fn generic_enums_have_typed_partial_forms() {
    let mut reader = PartialReader::<Either<Person, u8>>::new();
    reader.feed(br#"{"Left": {"name": "Ad"#);
    let shown: &Partial<Either<Person, u8>> = reader.partial().unwrap();
    assert_eq!(shown, &EitherPartial::Left(Some(person("Ad"))));
    assert_eq!(
        format!("{shown:?}"),
        r#"Left(Some(PersonPartial { name: Some("Ad") }))"#
    );
    let mut reader = PartialReader::<Either<Person, u8>>::new();
    reader.feed(br#"{"Right": 7}"#);
    assert_eq!(reader.partial(), Some(&EitherPartial::Right(Some(7))));

    let mut reader = PartialReader::<Msg<Person>>::new();
    reader.feed(br#"{"type": "Data", "body": {"name": "Ad"#);
    let shown = reader.partial().unwrap().clone();
    assert_eq!(
        shown,
        MsgPartial::Data {
            body: Some(person("Ad")),
            id: None
        }
    );
    assert_eq!(
        serde_json::to_value(&shown).unwrap(),
        json!({"type": "Data", "body": {"name": "Ad"}})
    );

    let mut reader = PartialReader::<OneOrMany<u8>>::new();
    reader.feed(b"[1, 2");
    assert_eq!(reader.partial(), Some(&OneOrManyPartial::Many(vec![1])));
    let mut reader = PartialReader::<OneOrMany<u8>>::with_parser(PartialParser::new(false));
    reader.feed(b"7");
    assert_eq!(reader.partial(), None);
    reader.feed(b" ");
    assert_eq!(reader.partial(), Some(&OneOrManyPartial::One(7)));
}

#[test]
fn recursive_generic_enums_grow_at_every_depth() {
    let text = r#"{"op": "Add", "args": {"left": {"op": "Lit", "args": 1}, "right": {"op": "Neg", "args": {"op": "Lit", "args": 22}}}}"#;
    let seen = snapshots::<Expr<u8>>(text);
    let lit = |n| Some(Box::new(ExprPartial::Lit(Some(n))));
    assert_eq!(
        seen.first(),
        Some(&ExprPartial::Add {
            left: None,
            right: None
        })
    );
    assert!(seen.contains(&ExprPartial::Add {
        left: lit(1),
        right: Some(Box::new(ExprPartial::Neg(None)))
    }));
    assert_eq!(
        seen.last(),
        Some(&ExprPartial::Add {
            left: lit(1),
            right: Some(Box::new(ExprPartial::Neg(lit(22))))
        })
    );
    agrees_at_every_cut::<Expr<u8>>(text);

    let text = r#"[["a", ["bc", []]], "d", [[["e"]]]]"#;
    let seen = snapshots::<Nested<String>>(text);
    assert_eq!(seen.first(), Some(&NestedPartial::List(Vec::new())));
    let leaf = |s: &str| NestedPartial::Leaf(s.into());
    assert_eq!(
        seen.last(),
        Some(&NestedPartial::List(vec![
            NestedPartial::List(vec![
                leaf("a"),
                NestedPartial::List(vec![leaf("bc"), NestedPartial::List(Vec::new())])
            ]),
            leaf("d"),
            NestedPartial::List(vec![NestedPartial::List(vec![NestedPartial::List(vec![
                leaf("e")
            ])])])
        ]))
    );
    agrees_at_every_cut::<Nested<String>>(text);
    agrees_at_every_cut::<Vec<OneOrMany<String>>>(r#"["a", ["b", "cd"], [], "e"]"#);
}

// ---------------------------------------------------------------------------------------------
// End to end

/// A streamed answer, one token after another, each after a pause, as from a server.
fn streamed(text: &str) -> ChatStream {
    let mut events: Vec<_> = tokens(text)
        .into_iter()
        .map(|piece| Ok(ChatEvent::Delta(String::from_utf8(piece.to_vec()).unwrap())))
        .collect();
    events.push(Ok(ChatEvent::Done(ChatResponse::new(""))));
    Box::pin(futures_util::stream::iter(events).then(|event| async move {
        tokio::task::yield_now().await;
        event
    }))
}

/// The snapshots and the final value `extract_partial` gives for `answer`, streamed.
async fn extract_partial<T: Extract + PartialValue>(answer: &'static str) -> (Vec<Partial<T>>, T) {
    let llm = from_stream_fn(move |_| async move { Ok(streamed(answer)) });
    let events: Vec<_> = T::extract_partial(&llm, "the value").collect().await;
    let mut seen = Vec::new();
    let mut last = None;
    for event in events {
        match event.expect("no error") {
            PartialEvent::Snapshot(snapshot) => seen.push((*snapshot).clone()),
            PartialEvent::Final { extraction, .. } => last = Some(extraction.value),
            _ => {}
        }
    }
    (seen, last.expect("a final value"))
}

#[tokio::test]
async fn extract_partial_streams_typed_snapshots_of_the_new_shapes() {
    let (seen, value) =
        extract_partial::<Event>(r#"{"t": "comment", "c": {"text": "hi", "tags": ["x"]}}"#).await;
    assert_eq!(
        seen.first(),
        Some(&EventPartial::Comment {
            text: None,
            tags: None
        })
    );
    assert_eq!(
        seen.last(),
        Some(&EventPartial::Comment {
            text: Some("hi".into()),
            tags: Some(vec!["x".into()])
        })
    );
    assert_eq!(
        value,
        Event::Comment {
            text: "hi".into(),
            tags: vec!["x".into()]
        }
    );

    let (seen, value) = extract_partial::<Contact>(r#"{"label": "home", "number": "555"}"#).await;
    assert!(matches!(seen.first(), Some(ContactPartial::Email { .. })));
    assert_eq!(
        seen.last(),
        Some(&ContactPartial::Phone {
            number: Some("555".into()),
            label: Some("home".into())
        })
    );
    assert_eq!(
        value,
        Contact::Phone {
            number: "555".into(),
            label: Some("home".into())
        }
    );

    let (seen, value) = extract_partial::<Expr<i32>>(
        r#"{"op": "Neg", "args": {"op": "Add", "args": {"left": {"op": "Lit", "args": 1}, "right": {"op": "Lit", "args": 2}}}}"#,
    )
    .await;
    assert_eq!(seen.first(), Some(&ExprPartial::Neg(None)));
    assert_eq!(
        serde_json::to_value(seen.last().unwrap()).unwrap(),
        serde_json::to_value(&value).unwrap()
    );
    assert_eq!(
        value,
        Expr::Neg(Box::new(Expr::Add {
            left: Box::new(Expr::Lit(1)),
            right: Box::new(Expr::Lit(2))
        }))
    );
}

// ---------------------------------------------------------------------------------------------
// Tuple structs, tuple variants, tuples and arrays

#[derive(Extract, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Point(f64, f64);

/// A string that grows, a skipped field (no item: the positions are the array's), a string shown only
/// once complete, a list.
#[derive(Extract, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Span(
    String,
    #[serde(skip)] u8,
    #[extract(stream = "done")] String,
    Vec<u32>,
);

#[derive(Extract, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Pair<T>(T, T);

/// Externally tagged, with tuple variants.
#[derive(Extract, Serialize, Deserialize, Debug, Clone, PartialEq)]
enum Stroke {
    Line(Point, Point),
    Dot(Point),
    Path(Vec<Point>, bool),
    Clear,
}

/// Generic, with a tuple variant.
#[derive(Extract, Serialize, Deserialize, Debug, Clone, PartialEq)]
enum Both<L, R> {
    Pair(L, R),
    Neither,
}

/// Tuple structs and variants, tuples and arrays as fields, nested.
#[derive(Extract, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Drawing {
    strokes: Vec<Stroke>,
    origin: (f64, f64),
    tagged: Vec<(String, Pair<u8>)>,
    rgb: [u8; 3],
    span: Option<Span>,
    both: Both<u8, String>,
    figures: Vec<Figure>,
    colours: Vec<Colour>,
}

#[test]
fn a_tuple_struct_fills_in_its_positions_as_its_items_are_read() {
    assert_eq!(
        snapshots::<Point>("[1.5, -2]"),
        [
            PointPartial(None, None),
            PointPartial(Some(1.5), None),
            PointPartial(Some(1.5), Some(-2.0)),
        ]
    );
    assert_eq!(
        snapshots::<Span>(r#"["ab", "cd", [1]]"#),
        [
            SpanPartial(None, None, None),
            SpanPartial(Some("ab".into()), None, None),
            // The second position waits for its string to end.
            SpanPartial(Some("ab".into()), Some("cd".into()), None),
            SpanPartial(Some("ab".into()), Some("cd".into()), Some(vec![])),
            SpanPartial(Some("ab".into()), Some("cd".into()), Some(vec![1])),
        ]
    );
    // An array with `null` at each position not shown yet, as long as the value's.
    let mut reader = PartialReader::<Span>::new();
    reader.feed(br#"["a"#);
    assert_eq!(
        serde_json::to_value(reader.partial().unwrap()).unwrap(),
        json!(["a", null, null])
    );
    // Not an array: nothing shown.
    let mut reader = PartialReader::<Point>::new();
    reader.feed(br#"{"0": 1"#);
    assert_eq!(reader.partial(), None);
    // A generic tuple struct, its partial form asking nothing of its parameter.
    let seen = snapshots::<Pair<Person>>(r#"[{"name": "Ada"}, {"name": "Bo"}]"#);
    let shown = seen.last().unwrap();
    assert_eq!(
        (
            shown.0.as_ref().map(|p| &p.name),
            shown.1.as_ref().map(|p| &p.name)
        ),
        (
            Some(&Some("Ada".to_string())),
            Some(&Some("Bo".to_string()))
        )
    );
    assert_eq!(
        format!("{:?}", PairPartial::<u8>(Some(1), None, Default::default())),
        "PairPartial(Some(1), None)"
    );
}

#[test]
fn tuple_variants_and_tuples_grow_position_by_position() {
    let seen = snapshots::<Stroke>(r#"{"Line": [[0, 1], [2, 3]]}"#);
    assert_eq!(seen.first(), Some(&StrokePartial::Line(None, None)));
    assert!(seen.contains(&StrokePartial::Line(
        Some(PointPartial(Some(0.0), Some(1.0))),
        Some(PointPartial(None, None))
    )));
    assert_eq!(
        seen.last(),
        Some(&StrokePartial::Line(
            Some(PointPartial(Some(0.0), Some(1.0))),
            Some(PointPartial(Some(2.0), Some(3.0)))
        ))
    );
    // A newtype variant of a tuple struct holds its partial form.
    let seen = snapshots::<Stroke>(r#"{"Dot": [4, 5]}"#);
    assert_eq!(
        seen.last(),
        Some(&StrokePartial::Dot(Some(PointPartial(
            Some(4.0),
            Some(5.0)
        ))))
    );
    // A generic enum's tuple variant.
    let seen = snapshots::<Both<u8, String>>(r#"{"Pair": [7, "seven"]}"#);
    assert_eq!(seen.first(), Some(&BothPartial::Pair(None, None)));
    assert_eq!(
        seen.last(),
        Some(&BothPartial::Pair(Some(7), Some("seven".into())))
    );
    assert!(seen.contains(&BothPartial::Pair(Some(7), Some("se".into()))));

    let mut reader = PartialReader::<Drawing>::new();
    reader.feed(br#"{"origin": [0.5, 1"#);
    assert_eq!(reader.partial().unwrap().origin, Some((Some(0.5), None)));
    reader.feed(br#"], "tagged": [["north", [1"#);
    assert_eq!(
        reader.partial().unwrap().tagged,
        Some(vec![(
            Some("north".into()),
            Some(PairPartial(None, None, Default::default()))
        )])
    );
    reader.feed(br#", 2]]], "rgb": [9, 8"#);
    let partial = reader.partial().unwrap();
    assert_eq!(partial.rgb, Some(vec![9]));
    assert_eq!(
        serde_json::to_value(partial).unwrap(),
        json!({"origin": [0.5, 1.0], "tagged": [["north", [1, 2]]], "rgb": [9]})
    );
}

/// One field left of two: serde writes an array of one item.
#[derive(Extract, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Lone(String, #[serde(skip)] u8);

#[derive(Extract, Serialize, Deserialize, Debug, Clone, PartialEq)]
enum Kept {
    One(u8, #[serde(skip)] u8),
    Two(u8, u8),
}

#[test]
fn a_lone_position_serializes_as_serde_writes_it() {
    assert_eq!(
        snapshots::<Lone>(r#"["ab"]"#).last(),
        Some(&LonePartial(Some("ab".into())))
    );
    assert_eq!(
        serde_json::to_value(LonePartial(None)).unwrap(),
        json!([null])
    );
    agrees_at_every_cut::<Lone>(r#"["only"]"#);
    agrees_at_every_cut::<Vec<Kept>>(r#"[{"One": [1]}, {"Two": [2, 3]}]"#);
}

#[test]
fn tuple_snapshots_agree_at_every_cut() {
    agrees_at_every_cut::<Drawing>(
        r#"{"strokes": [{"Line": [[0, 1], [2.5, -3]]}, "Clear", {"Path": [[[1, 1], [2, 2]], true]},
            {"Dot": [0, 0]}], "origin": [1e1, -0.5], "tagged": [["a long label é€", [1, 2]], ["", [3, 4]]],
            "rgb": [1, 2, 3], "span": ["one \"quoted\" text", "done", [1, 22, 333]],
            "both": {"Pair": [255, "written slowly"]}, "figures": [{"kind": "round", "radius": 1}],
            "colours": ["Red", "Teal", {"Green": 1}]}"#,
    );
    agrees_at_every_cut::<Vec<Both<u8, String>>>(r#"["Neither", {"Pair": [1, "x"]}, "Neither"]"#);
}

// ---------------------------------------------------------------------------------------------
// Internally tagged enums with newtype variants, catch-all variants

/// Newtype variants of a struct and of a map, a struct variant, an alias, a catch-all.
#[derive(Extract, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Figure {
    Round(Circle),
    Notes(std::collections::BTreeMap<String, String>),
    Square {
        side: f64,
    },
    #[serde(alias = "void")]
    Empty,
    #[serde(other)]
    Unknown,
}

/// Externally tagged with a catch-all: any other name is it.
#[derive(Extract, Serialize, Deserialize, Debug, Clone, PartialEq)]
enum Colour {
    Red,
    Green(u8),
    #[serde(other)]
    Unnamed,
}

#[test]
fn an_internally_tagged_newtype_variant_holds_its_content_read_from_the_same_object() {
    let seen = snapshots::<Figure>(r#"{"kind": "round", "radius": 2.5, "label": "sun"}"#);
    // Known once the tag is read; the content shown once one of its fields is.
    assert_eq!(seen.first(), Some(&FigurePartial::Round(None)));
    assert!(seen.contains(&FigurePartial::Round(Some(CirclePartial {
        radius: Some(2.5),
        label: Some("s".into())
    }))));
    assert_eq!(
        seen.last(),
        Some(&FigurePartial::Round(Some(CirclePartial {
            radius: Some(2.5),
            label: Some("sun".into())
        })))
    );
    // The content not shown yet serializes as no member: the tag alone.
    assert_eq!(
        serde_json::to_value(FigurePartial::Round(None)).unwrap(),
        json!({"kind": "round"})
    );
    // The tag written after the content.
    let seen = snapshots::<Figure>(r#"{"radius": 1, "kind": "round"}"#);
    assert_eq!(
        seen,
        [FigurePartial::Round(Some(CirclePartial {
            radius: Some(1.0),
            label: None
        }))]
    );
    // A map's content leaves the tag out, as serde does.
    let seen = snapshots::<Figure>(r#"{"kind": "notes", "a": "x", "b": "yz"}"#);
    let notes = [("a", "x"), ("b", "yz")]
        .map(|(key, value)| (key.to_string(), value.to_string()))
        .into();
    assert_eq!(seen.last(), Some(&FigurePartial::Notes(Some(notes))));
    // An alias, a catch-all for any other tag; a tag not yet whole shows nothing.
    for (text, shown) in [
        (r#"{"kind": "void"}"#, Some(FigurePartial::Empty)),
        (
            r#"{"kind": "hexagon", "side": 1}"#,
            Some(FigurePartial::Unknown),
        ),
        (r#"{"kind": "squ"#, None),
        (
            r#"{"kind": "square", "side": 3"#,
            Some(FigurePartial::Square { side: None }),
        ),
    ] {
        let mut reader = PartialReader::<Figure>::new();
        reader.feed(text.as_bytes());
        assert_eq!(reader.partial(), shown.as_ref(), "{text}");
    }
}

#[test]
fn an_externally_tagged_catch_all_takes_any_other_name() {
    for (text, shown) in [
        (r#""Blue""#, Some(ColourPartial::Unnamed)),
        (r#""Red""#, Some(ColourPartial::Red)),
        (r#""Bl"#, None),
        // A variant with data named as a string is none of them.
        (r#""Green""#, None),
        (r#"{"Green": 4}"#, Some(ColourPartial::Green(Some(4)))),
    ] {
        // A string alone is an answer (a reader of `Colour` skips prose before an object).
        let mut reader = PartialReader::<Colour>::with_parser(PartialParser::new(false));
        reader.feed(text.as_bytes());
        assert_eq!(reader.partial(), shown.as_ref(), "{text}");
    }
}

#[test]
fn catch_all_and_newtype_snapshots_agree_at_every_cut() {
    agrees_at_every_cut::<Vec<Figure>>(
        r#"[{"kind": "round", "radius": 1.5, "label": "a label written slowly é€"},
            {"label": null, "radius": 2, "kind": "round"}, {"kind": "notes", "k": "v", "kind2": "w"},
            {"kind": "square", "side": 4}, {"kind": "empty"}, {"kind": "hexagon"}]"#,
    );
    agrees_at_every_cut::<Vec<Colour>>(r#"["Red", {"Green": 200}, "Blue", "Red"]"#);
}

// ---------------------------------------------------------------------------------------------
// Any answer, any split

/// Every new shape in one answer.
#[derive(Extract, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Mixed {
    events: Vec<Event>,
    contacts: Vec<Contact>,
    shapes: Vec<Shape>,
    expr: Expr<i32>,
    nested: Nested<String>,
}

fn text() -> impl Strategy<Value = String> {
    "[a-zA-Z \"\\\\é😀\n]{0,8}"
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        Just(Event::Start),
        (any::<i32>(), any::<i32>()).prop_map(|(x, y)| Event::Move(x, y)),
        text().prop_map(Event::Say),
        (text(), text()).prop_map(|(to, by)| Event::Rename { to, by }),
        (text(), prop::collection::vec(text(), 0..3))
            .prop_map(|(text, tags)| Event::Comment { text, tags }),
    ]
}

fn contact() -> impl Strategy<Value = Contact> {
    prop_oneof![
        (text(), prop::option::of(text()))
            .prop_map(|(address, label)| Contact::Email { address, label }),
        (text(), prop::option::of(text()))
            .prop_map(|(number, label)| Contact::Phone { number, label }),
        text().prop_map(Contact::Handle),
        (any::<u8>(), any::<u8>()).prop_map(|(a, b)| Contact::Pair(a, b)),
        Just(Contact::Nothing),
    ]
}

fn shape() -> impl Strategy<Value = Shape> {
    let label = || prop::option::of(text());
    prop_oneof![
        (0.0..10.0f64, label()).prop_map(|(radius, label)| Shape::Circle(Circle { radius, label })),
        (0.0..10.0f64, 0.0..10.0f64, label()).prop_map(|(width, height, label)| {
            Shape::Rect(Rect {
                width,
                height,
                label,
            })
        }),
    ]
}

fn expr() -> impl Strategy<Value = Expr<i32>> {
    any::<i32>()
        .prop_map(Expr::Lit)
        .prop_recursive(4, 16, 2, |inner| {
            prop_oneof![
                inner.clone().prop_map(|e| Expr::Neg(Box::new(e))),
                (inner.clone(), inner).prop_map(|(left, right)| Expr::Add {
                    left: Box::new(left),
                    right: Box::new(right)
                }),
            ]
        })
}

fn nested() -> impl Strategy<Value = Nested<String>> {
    text()
        .prop_map(Nested::Leaf)
        .prop_recursive(4, 16, 3, |inner| {
            prop::collection::vec(inner, 0..3).prop_map(Nested::List)
        })
}

/// `value` with the keys of every object in alphabetical order.
fn sorted_keys(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(key, value)| (key, sorted_keys(value)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted_keys).collect()),
        other => other,
    }
}

prop_compose! {
    fn mixed()(
        events in prop::collection::vec(event(), 0..4),
        contacts in prop::collection::vec(contact(), 0..4),
        shapes in prop::collection::vec(shape(), 0..3),
        expr in expr(),
        nested in nested(),
        pretty in any::<bool>(),
        sorted in any::<bool>(),
    ) -> String {
        let value = Mixed { events, contacts, shapes, expr, nested };
        let mut json = serde_json::to_value(&value).unwrap();
        if sorted {
            // Keys in another order than serde writes them: a content before its tag, a field
            // two variants read before the one only one of them reads.
            json = sorted_keys(json);
        }
        if pretty {
            serde_json::to_string_pretty(&json).unwrap()
        } else {
            serde_json::to_string(&json).unwrap()
        }
    }
}

/// `text` fed cut at `cuts`: after every piece, the value shown is the one a reader given the same
/// prefix at once shows, `feed` reports a change exactly when it changed, and once whole it is the
/// value serde reads.
fn split_agrees<T>(text: &str, cuts: &[prop::sample::Index]) -> Result<(), TestCaseError>
where
    T: PartialValue + Schema + DeserializeOwned + Serialize,
{
    let bytes = text.as_bytes();
    let mut cuts: Vec<usize> = cuts.iter().map(|cut| cut.index(bytes.len() + 1)).collect();
    cuts.sort_unstable();
    let mut reader = PartialReader::<T>::new();
    let mut start = 0;
    for cut in cuts.into_iter().chain(std::iter::once(bytes.len())) {
        let before = reader.partial().cloned();
        let changed = reader.feed(&bytes[start..cut]);
        let mut fresh = PartialReader::<T>::new();
        fresh.feed(&bytes[..cut]);
        prop_assert_eq!(reader.partial(), fresh.partial(), "after {} bytes", cut);
        prop_assert_eq!(
            changed,
            reader.partial().cloned() != before,
            "after {} bytes",
            cut
        );
        start = cut;
    }
    let value: T = serde_json::from_str(text).unwrap();
    prop_assert_eq!(
        serde_json::to_value(reader.partial().unwrap()).unwrap(),
        without_nulls(serde_json::to_value(value).unwrap())
    );
    Ok(())
}

fn point() -> impl Strategy<Value = Point> {
    (-1e6..1e6f64, -1e6..1e6f64).prop_map(|(x, y)| Point(x, y))
}

fn stroke() -> impl Strategy<Value = Stroke> {
    prop_oneof![
        (point(), point()).prop_map(|(from, to)| Stroke::Line(from, to)),
        point().prop_map(Stroke::Dot),
        (prop::collection::vec(point(), 0..3), any::<bool>())
            .prop_map(|(points, closed)| Stroke::Path(points, closed)),
        Just(Stroke::Clear),
    ]
}

fn figure() -> impl Strategy<Value = Figure> {
    prop_oneof![
        (0.0..10.0f64, prop::option::of(text()))
            .prop_map(|(radius, label)| Figure::Round(Circle { radius, label })),
        prop::collection::btree_map("[a-j]{1,3}", text(), 0..3).prop_map(Figure::Notes),
        (0.0..10.0f64).prop_map(|side| Figure::Square { side }),
        Just(Figure::Empty),
        Just(Figure::Unknown),
    ]
}

fn colour() -> impl Strategy<Value = Colour> {
    prop_oneof![
        Just(Colour::Red),
        any::<u8>().prop_map(Colour::Green),
        Just(Colour::Unnamed),
    ]
}

prop_compose! {
    fn drawing()(
        strokes in prop::collection::vec(stroke(), 0..4),
        origin in (-1e3..1e3f64, -1e3..1e3f64),
        tagged in prop::collection::vec((text(), any::<u8>(), any::<u8>()), 0..3),
        rgb in any::<[u8; 3]>(),
        span in prop::option::of((text(), text(), prop::collection::vec(any::<u32>(), 0..3))),
        both in prop::option::of((any::<u8>(), text())),
        figures in prop::collection::vec(figure(), 0..4),
        colours in prop::collection::vec(colour(), 0..4),
        pretty in any::<bool>(),
    ) -> String {
        let value = Drawing {
            strokes,
            origin,
            tagged: tagged.into_iter().map(|(label, a, b)| (label, Pair(a, b))).collect(),
            rgb,
            span: span.map(|(head, tail, list)| Span(head, 0, tail, list)),
            both: both.map_or(Both::Neither, |(a, b)| Both::Pair(a, b)),
            figures,
            colours,
        };
        if pretty {
            serde_json::to_string_pretty(&value).unwrap()
        } else {
            serde_json::to_string(&value).unwrap()
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// After every chunk of any split, the value shown is the one a reader given the same prefix at
    /// once shows, `feed` reports a change exactly when it changed, and once whole it is the value
    /// serde reads.
    #[test]
    fn every_split_shows_what_the_prefix_read_at_once_shows(
        text in mixed(),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..40),
    ) {
        split_agrees::<Mixed>(&text, &cuts)?;
    }

    /// The same for tuple structs, tuple variants, tuples and arrays, internally tagged newtype
    /// variants and catch-all variants.
    #[test]
    fn every_split_of_tuples_shows_what_the_prefix_read_at_once_shows(
        text in drawing(),
        cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..40),
    ) {
        split_agrees::<Drawing>(&text, &cuts)?;
    }

    /// Any bytes, any split: no panic, and what the bytes read at once show.
    #[test]
    fn any_bytes_in_any_split_read_as_at_once(
        bytes in prop::collection::vec(any::<u8>(), 0..300),
        cuts in prop::collection::vec(0usize..300, 0..20),
    ) {
        pieces_agree::<Mixed>(&bytes, cuts)?;
    }
}
