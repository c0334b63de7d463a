//! Generic enums (externally, internally tagged and untagged): a schema per instantiation,
//! validation against what serde writes and refuses, reading a fenced answer back, and the typed
//! partial form.

use llm_extract::parse::PartialReader;
use llm_extract::{Extract, Schema};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// Whether `value` is valid for `T`'s schema.
fn valid<T: Schema>(value: &Value) -> bool {
    T::schema()
        .validator()
        .expect("the derived schema compiles")
        .is_valid(value)
}

/// Every value serde reads is valid, and every value serde refuses is not.
fn agrees<T: Schema + DeserializeOwned>(values: &[Value]) {
    for value in values {
        let serde = serde_json::from_value::<T>(value.clone()).is_ok();
        assert_eq!(
            valid::<T>(value),
            serde,
            "serde {} {value}",
            if serde { "reads" } else { "refuses" }
        );
    }
}

/// `value` written by serde is valid, and reads back through the lenient parser from a fenced
/// answer with prose around it.
fn round_trips<T: Schema + Serialize + PartialEq + std::fmt::Debug>(value: &T) {
    let json = serde_json::to_value(value).unwrap();
    assert!(valid::<T>(&json), "serde writes {json}");
    let answer = format!(
        "Here it is:\n```json\n{}\n```\nAnything else?",
        serde_json::to_string_pretty(value).unwrap()
    );
    let parsed = llm_extract::from_str::<T>(&answer).expect("the fenced answer reads back");
    assert_eq!(&parsed.value, value);
}

#[derive(Extract, Deserialize, Serialize, Debug, PartialEq)]
struct Person {
    name: String,
}

/// Externally tagged, a newtype variant per parameter.
#[derive(Extract, Deserialize, Serialize, Debug, PartialEq)]
enum Either<L, R> {
    Left(L),
    Right(R),
}

/// Internally tagged, a struct variant naming the parameter and a unit variant.
#[derive(Extract, Deserialize, Serialize, Debug, PartialEq)]
#[serde(tag = "type")]
enum Msg<T> {
    Data { body: T },
    Ping,
}

/// Untagged: one value or a list of them.
#[derive(Extract, Deserialize, Serialize, Debug, PartialEq)]
#[serde(untagged)]
enum OneOrMany<T> {
    One(T),
    Many(Vec<T>),
}

#[test]
fn either_has_a_schema_per_instantiation() {
    let numbers = <Either<u8, String>>::json_schema();
    let people = <Either<Person, bool>>::json_schema();
    assert_ne!(numbers, people);
    assert_ne!(numbers, <Either<String, u8>>::json_schema());
    assert_ne!(
        <Either<u8, String>>::schema().name(),
        <Either<Person, bool>>::schema().name()
    );
    assert!(std::ptr::eq(
        <Either<u8, String>>::schema(),
        <Either<u8, String>>::schema()
    ));
    round_trips(&Either::<u8, String>::Left(7));
    round_trips(&Either::<u8, String>::Right("seven".into()));
    round_trips(&Either::<Person, bool>::Left(Person { name: "Ada".into() }));
    round_trips(&Either::<Person, bool>::Right(true));
    agrees::<Either<u8, String>>(&[
        json!({"Left": 7}),
        json!({"Right": "x"}),
        json!({"Left": 300}),
        json!({"Left": "x"}),
        json!({"Right": 7}),
        json!({"Left": 1, "Right": "x"}),
        json!("Left"),
    ]);
    agrees::<Either<Person, bool>>(&[
        json!({"Left": {"name": "Ada"}}),
        json!({"Right": false}),
        json!({"Left": {}}),
        json!({"Left": true}),
        json!({"Right": {"name": "Ada"}}),
    ]);
}

#[test]
fn an_internally_tagged_generic_enum_has_a_schema_per_instantiation() {
    let numbers = <Msg<u8>>::json_schema();
    let people = <Msg<Person>>::json_schema();
    assert_ne!(numbers, people);
    round_trips(&Msg::Data { body: 3u8 });
    round_trips(&Msg::<u8>::Ping);
    round_trips(&Msg::Data {
        body: Person { name: "Ada".into() },
    });
    round_trips(&Msg::<Person>::Ping);
    agrees::<Msg<u8>>(&[
        json!({"type": "Data", "body": 3}),
        json!({"type": "Ping"}),
        json!({"type": "Data", "body": 256}),
        json!({"type": "Data", "body": "3"}),
        json!({"type": "Data"}),
        json!({"type": "Pong"}),
        json!({"body": 3}),
    ]);
    agrees::<Msg<Person>>(&[
        json!({"type": "Data", "body": {"name": "Ada"}}),
        json!({"type": "Data", "body": {"name": 1}}),
        json!({"type": "Data", "body": 3}),
    ]);
}

#[test]
fn an_untagged_generic_enum_has_a_schema_per_instantiation() {
    let strings = <OneOrMany<String>>::json_schema();
    let people = <OneOrMany<Person>>::json_schema();
    assert_ne!(strings, people);
    round_trips(&OneOrMany::One("a".to_string()));
    round_trips(&OneOrMany::Many(vec!["a".to_string(), "b".to_string()]));
    round_trips(&OneOrMany::One(Person { name: "Ada".into() }));
    round_trips(&OneOrMany::Many(vec![Person { name: "Ada".into() }]));
    agrees::<OneOrMany<String>>(&[
        json!("a"),
        json!(["a", "b"]),
        json!([]),
        json!(1),
        json!([1]),
        json!({"name": "Ada"}),
    ]);
    agrees::<OneOrMany<Person>>(&[
        json!({"name": "Ada"}),
        json!([{"name": "Ada"}]),
        json!("Ada"),
        json!([{"name": 1}]),
        json!({}),
    ]);
}

#[test]
fn a_generic_enum_has_a_typed_partial_form() {
    let mut reader = PartialReader::<Msg<Person>>::new();
    reader.feed(br#"{"type": "Data", "body": {"name": "Ad"#);
    let preview: &MsgPartial<Person> = reader.partial().unwrap();
    let MsgPartial::Data { body: Some(body) } = preview else {
        panic!("{preview:?}");
    };
    assert_eq!(body.name.as_deref(), Some("Ad"));
    let mut reader = PartialReader::<OneOrMany<u8>>::new();
    reader.feed(br#"[1, 2"#);
    let preview: &OneOrManyPartial<u8> = reader.partial().unwrap();
    assert_eq!(preview, &OneOrManyPartial::Many(vec![1]));
}
