//! serde's data model through `#[derive(Extract)]`: enums in their four representations, newtype,
//! tuple and transparent structs, tuples and arrays as fields, and well-known foreign types. For every
//! shape: the exact schema, what serde writes validates, what serde refuses does not, and a fenced
//! model answer reads back through the lenient parser into the type.

use llm_extract::parse::{Partial, PartialReader};
use llm_extract::validate::Validator;
use llm_extract::{Extract, Schema};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// Compares as text, so key order counts.
#[track_caller]
fn assert_schema<T: Extract>(expected: Value) {
    assert_eq!(
        serde_json::to_string_pretty(T::json_schema()).unwrap(),
        serde_json::to_string_pretty(&expected).unwrap()
    );
}

fn validator<T: Extract>() -> Validator {
    Validator::new(T::json_schema()).expect("the generic schema compiles")
}

/// What serde writes for each value validates and reads back as the value, also from a fenced
/// answer through `llm_extract::from_str`.
#[track_caller]
fn assert_written<T>(values: &[T])
where
    T: Extract + Serialize + DeserializeOwned + PartialEq + std::fmt::Debug,
{
    let validator = validator::<T>();
    for value in values {
        let json = serde_json::to_value(value).unwrap();
        let violations = validator.violations(&json);
        assert!(violations.is_empty(), "{json} violates {violations:?}");
        assert_eq!(&serde_json::from_value::<T>(json.clone()).unwrap(), value);
        let answer = format!("Here it is:\n```json\n{json:#}\n```\n");
        let parsed = llm_extract::from_str::<T>(&answer)
            .unwrap_or_else(|err| panic!("{answer} does not read back: {err}"));
        assert_eq!(&parsed.value, value, "{answer}");
    }
}

/// serde refuses each JSON value, and so does the schema.
#[track_caller]
fn assert_refused<T: Extract + DeserializeOwned + std::fmt::Debug>(values: &[Value]) {
    let validator = validator::<T>();
    for json in values {
        let read = serde_json::from_value::<T>(json.clone());
        assert!(read.is_err(), "serde read {json} as {read:?}");
        assert!(!validator.is_valid(json), "the schema accepted {json}");
    }
}

/// serde reads each JSON value, and the schema accepts it.
#[track_caller]
fn assert_read<T: Extract + DeserializeOwned + std::fmt::Debug>(values: &[Value]) {
    let validator = validator::<T>();
    for json in values {
        let read = serde_json::from_value::<T>(json.clone());
        assert!(read.is_ok(), "serde refused {json}: {read:?}");
        assert!(validator.is_valid(json), "the schema refused {json}");
    }
}

// ---------------------------------------------------------------------------------------------
// Externally tagged (serde's default)

/// How an order is paid.
#[derive(Extract, Serialize, Deserialize, Debug, Clone, PartialEq)]
enum Payment {
    Cash,
    #[serde(alias = "cheque")]
    Check,
    /// A card payment.
    Card {
        number: String,
        cvv: u16,
    },
    Voucher(String),
    Split(u32, u32),
}

#[test]
fn externally_tagged_enums_are_strings_and_one_key_objects() {
    assert_schema::<Payment>(json!({
        "oneOf": [
            {"type": "string", "enum": ["Cash", "Check"], "x-aliases": {"cheque": "Check"}},
            {
                "type": "object",
                "description": "A card payment.",
                "properties": {"Card": {
                    "type": "object",
                    "properties": {
                        "number": {"type": "string"},
                        "cvv": {"type": "integer", "minimum": 0, "maximum": 65535}
                    },
                    "required": ["number", "cvv"],
                    "additionalProperties": false
                }},
                "required": ["Card"],
                "additionalProperties": false
            },
            {
                "type": "object",
                "properties": {"Voucher": {"type": "string"}},
                "required": ["Voucher"],
                "additionalProperties": false
            },
            {
                "type": "object",
                "properties": {"Split": {
                    "type": "array",
                    "prefixItems": [
                        {"type": "integer", "minimum": 0, "maximum": 4294967295u32},
                        {"type": "integer", "minimum": 0, "maximum": 4294967295u32}
                    ],
                    "items": false,
                    "minItems": 2,
                    "maxItems": 2
                }},
                "required": ["Split"],
                "additionalProperties": false
            }
        ],
        "description": "How an order is paid."
    }));
    assert_written(&[
        Payment::Cash,
        Payment::Check,
        Payment::Card {
            number: "4111".into(),
            cvv: 123,
        },
        Payment::Voucher("XMAS".into()),
        Payment::Split(10, 20),
    ]);
    assert_refused::<Payment>(&[
        json!("Cheque "),
        json!({"Card": {"number": "1"}}),
        json!({"Voucher": "a", "Cash": null}),
        json!({"Split": [1]}),
        json!({"Split": [1, 2, 3]}),
        json!({"type": "Cash"}),
    ]);
}

#[test]
fn externally_tagged_answers_are_read_leniently() {
    // A bare name in another case, the unit variant written as a one-key object, an alias.
    for (answer, expected) in [
        ("```json\n\"cash\"\n```", Payment::Cash),
        ("```json\n{\"Cash\": null}\n```", Payment::Cash),
        ("```json\n{\"Cash\": {}}\n```", Payment::Cash),
        ("```json\n\"cheque\"\n```", Payment::Check),
        (
            "```json\n{\"card\": {\"number\": \"1\", \"cvv\": \"7\"}}\n```",
            Payment::Card {
                number: "1".into(),
                cvv: 7,
            },
        ),
    ] {
        let parsed = llm_extract::from_str::<Payment>(answer)
            .unwrap_or_else(|err| panic!("{answer}: {err}"));
        assert_eq!(parsed.value, expected, "{answer}");
    }
}

// Every variant a unit variant: a string enum, aliases recorded.
#[derive(Extract, Serialize, Deserialize, Debug, Clone, Copy, PartialEq)]
#[serde(rename_all = "kebab-case")]
enum Level {
    #[serde(alias = "lo")]
    LowLevel,
    High,
}

#[test]
fn fieldless_enums_stay_string_enums() {
    assert_schema::<Level>(json!({
        "type": "string",
        "enum": ["low-level", "high"],
        "x-aliases": {"lo": "low-level"}
    }));
    assert_written(&[Level::LowLevel, Level::High]);
    assert_refused::<Level>(&[json!("LowLevel"), json!({"high": null, "x": 1})]);
    let parsed = llm_extract::from_str::<Level>("```json\n\"lo\"\n```").unwrap();
    assert_eq!(parsed.value, Level::LowLevel);
}

// ---------------------------------------------------------------------------------------------
// Internally tagged

#[derive(Extract, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Label {
    text: String,
    size: Option<u8>,
}

#[derive(Extract, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
enum Shape {
    Circle {
        radius_cm: f64,
    },
    /// A label holding its text.
    Labelled(Label),
    #[serde(alias = "void")]
    Empty,
    #[serde(other)]
    Unknown,
}

#[test]
fn internally_tagged_enums_take_newtype_and_catch_all_variants() {
    assert_schema::<Shape>(json!({
        "oneOf": [
            {
                "type": "object",
                "properties": {"type": {"const": "circle"}, "radiusCm": {"type": "number"}},
                "required": ["type", "radiusCm"],
                "additionalProperties": false
            },
            {
                "type": "object",
                "description": "A label holding its text.",
                "properties": {
                    "type": {"const": "labelled"},
                    "text": {"type": "string"},
                    "size": {"type": ["integer", "null"], "minimum": 0, "maximum": 255}
                },
                "required": ["type", "text"],
                "additionalProperties": false
            },
            {
                "type": "object",
                "properties": {"type": {"const": "empty", "x-aliases": {"void": "empty"}}},
                "required": ["type"],
                "additionalProperties": false
            },
            {
                "type": "object",
                "properties": {"type": {"type": "string", "not": {"enum": ["circle", "labelled", "empty", "void"]}}},
                "required": ["type"],
                "additionalProperties": false
            }
        ]
    }));
    assert_written(&[
        Shape::Circle { radius_cm: 2.5 },
        Shape::Labelled(Label {
            text: "hi".into(),
            size: None,
        }),
        Shape::Empty,
    ]);
    // The catch-all takes any other tag; serde writes it under its own name.
    assert_read::<Shape>(&[json!({"type": "hexagon"}), json!({"type": "unknown"})]);
    assert_eq!(
        serde_json::from_value::<Shape>(json!({"type": "hexagon"})).unwrap(),
        Shape::Unknown
    );
    assert_refused::<Shape>(&[
        json!({"type": "circle"}),
        json!({"type": "labelled", "size": 3}),
        json!({"radiusCm": 1.0}),
        json!({"type": 3}),
    ]);
    let parsed = llm_extract::from_str::<Shape>("```json\n{\"type\": \"void\"}\n```").unwrap();
    assert_eq!(parsed.value, Shape::Empty);
}

// ---------------------------------------------------------------------------------------------
// Adjacently tagged

#[derive(Extract, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(tag = "t", content = "c")]
enum Event {
    Start,
    Move(i32, i32),
    Say(String),
    Rename { to: String },
}

#[test]
fn adjacently_tagged_enums_put_the_data_under_the_content_key() {
    assert_schema::<Event>(json!({
        "oneOf": [
            {
                "type": "object",
                "properties": {"t": {"const": "Start"}},
                "required": ["t"],
                "additionalProperties": false
            },
            {
                "type": "object",
                "properties": {
                    "t": {"const": "Move"},
                    "c": {
                        "type": "array",
                        "prefixItems": [
                            {"type": "integer", "minimum": i32::MIN, "maximum": i32::MAX},
                            {"type": "integer", "minimum": i32::MIN, "maximum": i32::MAX}
                        ],
                        "items": false,
                        "minItems": 2,
                        "maxItems": 2
                    }
                },
                "required": ["t", "c"],
                "additionalProperties": false
            },
            {
                "type": "object",
                "properties": {"t": {"const": "Say"}, "c": {"type": "string"}},
                "required": ["t", "c"],
                "additionalProperties": false
            },
            {
                "type": "object",
                "properties": {
                    "t": {"const": "Rename"},
                    "c": {
                        "type": "object",
                        "properties": {"to": {"type": "string"}},
                        "required": ["to"],
                        "additionalProperties": false
                    }
                },
                "required": ["t", "c"],
                "additionalProperties": false
            }
        ]
    }));
    assert_written(&[
        Event::Start,
        Event::Move(-1, 2),
        Event::Say("hi".into()),
        Event::Rename { to: "x".into() },
    ]);
    assert_refused::<Event>(&[
        json!({"t": "Say"}),
        json!({"t": "Move", "c": [1]}),
        json!({"t": "Fly", "c": 1}),
        json!({"Say": "hi"}),
    ]);
}

// ---------------------------------------------------------------------------------------------
// Untagged, and untagged variants after tagged ones

#[derive(Extract, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(untagged)]
enum Contact {
    Email {
        address: String,
    },
    /// A phone number.
    Phone(String),
    Pair(u8, u8),
    Nothing,
}

#[test]
fn untagged_enums_are_any_of_in_declaration_order() {
    assert_schema::<Contact>(json!({
        "anyOf": [
            {
                "type": "object",
                "properties": {"address": {"type": "string"}},
                "required": ["address"],
                "additionalProperties": false
            },
            {"type": "string", "description": "A phone number."},
            {
                "type": "array",
                "prefixItems": [
                    {"type": "integer", "minimum": 0, "maximum": 255},
                    {"type": "integer", "minimum": 0, "maximum": 255}
                ],
                "items": false,
                "minItems": 2,
                "maxItems": 2
            },
            {"type": "null"}
        ]
    }));
    assert_written(&[
        Contact::Email {
            address: "a@b.c".into(),
        },
        Contact::Phone("+1 555".into()),
        Contact::Pair(1, 2),
        Contact::Nothing,
    ]);
    assert_refused::<Contact>(&[json!(3), json!([1, 2, 3]), json!({"number": "1"})]);
}

#[derive(Extract, Serialize, Deserialize, Debug, Clone, PartialEq)]
enum Amount {
    Exact {
        value: i64,
    },
    #[serde(untagged)]
    Raw(String),
}

#[test]
fn untagged_variants_follow_the_tagged_ones() {
    assert_schema::<Amount>(json!({
        "anyOf": [
            {"oneOf": [{
                "type": "object",
                "properties": {"Exact": {
                    "type": "object",
                    "properties": {"value": {"type": "integer"}},
                    "required": ["value"],
                    "additionalProperties": false
                }},
                "required": ["Exact"],
                "additionalProperties": false
            }]},
            {"type": "string"}
        ]
    }));
    assert_written(&[Amount::Exact { value: 3 }, Amount::Raw("about 3".into())]);
    assert_refused::<Amount>(&[json!(3), json!({"Exact": 3})]);
}

// ---------------------------------------------------------------------------------------------
// Newtype, tuple and transparent structs, container default, tuples and arrays

/// An email address.
#[derive(Extract, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Email(#[extract(pattern = "^[^@]+@[^@]+$")] String);

#[derive(Extract, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Point(i32, #[extract(minimum = 0)] i32);

#[derive(Extract, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(transparent)]
struct Id {
    value: u64,
}

#[derive(Extract, Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
#[serde(default)]
struct Settings {
    retries: u8,
    name: String,
}

#[derive(Extract, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Segment {
    from: Email,
    ends: (Point, Point),
    rgb: [u8; 3],
    id: Option<Id>,
}

#[test]
fn newtype_and_transparent_structs_are_their_field() {
    assert_schema::<Email>(json!({
        "type": "string",
        "description": "An email address.",
        "pattern": "^[^@]+@[^@]+$"
    }));
    assert_schema::<Id>(json!({"type": "integer", "minimum": 0}));
    assert_written(&[Email("a@b".into())]);
    assert_written(&[Id { value: 7 }]);
    assert_refused::<Email>(&[json!({"0": "a@b"}), json!(["a@b"])]);
    assert_refused::<Id>(&[json!({"value": 7}), json!(-1)]);
    assert!(!validator::<Email>().is_valid(&json!("nobody")));
}

#[test]
fn tuple_structs_are_fixed_length_arrays() {
    assert_schema::<Point>(json!({
        "type": "array",
        "prefixItems": [
            {"type": "integer", "minimum": i32::MIN, "maximum": i32::MAX},
            {"type": "integer", "minimum": 0, "maximum": i32::MAX}
        ],
        "items": false,
        "minItems": 2,
        "maxItems": 2
    }));
    assert_written(&[Point(-3, 4)]);
    assert_refused::<Point>(&[json!([1]), json!([1, 2, 3]), json!({"0": 1, "1": 2})]);
}

#[test]
fn container_default_requires_no_field() {
    assert_eq!(Settings::json_schema()["required"], json!([]));
    assert_written(&[Settings::default()]);
    assert_read::<Settings>(&[json!({}), json!({"name": "x"})]);
}

#[test]
fn tuples_and_arrays_as_fields() {
    let schema = Segment::json_schema();
    assert_eq!(
        schema["properties"]["ends"]["prefixItems"][0]["type"],
        "array"
    );
    assert_eq!(
        schema["properties"]["rgb"],
        json!({"type": "array", "items": {"type": "integer", "minimum": 0, "maximum": 255}, "minItems": 3, "maxItems": 3})
    );
    let segment = Segment {
        from: Email("a@b".into()),
        ends: (Point(0, 0), Point(1, 1)),
        rgb: [1, 2, 3],
        id: Some(Id { value: 1 }),
    };
    assert_written(std::slice::from_ref(&segment));
    let mut short = serde_json::to_value(&segment).unwrap();
    short["rgb"] = json!([1, 2]);
    assert_refused::<Segment>(&[short]);
}

#[derive(Extract, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Wallet {
    payments: Vec<Payment>,
}

#[test]
fn partial_values_of_the_new_shapes() {
    let mut reader = PartialReader::<Segment>::new();
    reader.feed(br#"{"from": "a@"#);
    let partial: &Partial<Segment> = reader.partial().unwrap();
    // A newtype struct is shown as its field: the string as far as written.
    assert_eq!(partial.from.as_deref(), Some("a@"));
    reader.feed(br#"b", "ends": [[0, 0], [1, "#);
    let partial = reader.partial().unwrap();
    // A tuple and a tuple struct: a position per item, each `None` until its item is shown.
    assert_eq!(
        partial.ends,
        Some((
            Some(PointPartial(Some(0), Some(0))),
            Some(PointPartial(Some(1), None))
        ))
    );
    assert_eq!(
        serde_json::to_value(partial).unwrap(),
        json!({"from": "a@b", "ends": [[0, 0], [1, null]]})
    );
    reader.feed(br#"1]], "rgb": [4, 5"#);
    // A fixed-size array is shown as a list of its items so far.
    assert_eq!(reader.partial().unwrap().rgb, Some(vec![4]));

    // An externally tagged enum is known once its key is read, its fields filled in as written.
    let mut reader = PartialReader::<Payment>::new();
    reader.feed(br#"{"Card": {"#);
    assert_eq!(
        reader.partial(),
        Some(&PaymentPartial::Card {
            number: None,
            cvv: None
        })
    );
    reader.feed(br#""number": "41"#);
    let partial = reader.partial().unwrap();
    assert_eq!(
        serde_json::to_value(partial).unwrap(),
        json!({"Card": {"number": "41"}})
    );
    reader.feed(br#"11", "cvv": 12}}"#);
    assert_eq!(
        reader.partial(),
        Some(&PaymentPartial::Card {
            number: Some("4111".into()),
            cvv: Some(12)
        })
    );
    let mut reader = PartialReader::<Segment>::new();
    reader.feed(br#"{"from": "a@b", "ends": [[0, 0], [1, 1]], "rgb": [1, 2, 3], "id": 7}"#);
    assert_eq!(reader.partial().unwrap().id, Some(7));
    let mut reader = PartialReader::<Wallet>::new();
    reader.feed(br#"{"payments": ["Cash", {"Voucher": "XM"#);
    assert_eq!(
        reader.partial().unwrap().payments,
        Some(vec![
            PaymentPartial::Cash,
            PaymentPartial::Voucher(Some("XM".into()))
        ])
    );
    reader.feed(br#"AS"}, {"Split": [1, "#);
    assert_eq!(
        reader.partial().unwrap().payments.as_ref().unwrap()[1..],
        [
            PaymentPartial::Voucher(Some("XMAS".into())),
            PaymentPartial::Split(Some(1), None)
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// Foreign types

#[derive(Extract, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Booking {
    day: chrono::NaiveDate,
    starts: chrono::NaiveTime,
    local: chrono::NaiveDateTime,
    at: chrono::DateTime<chrono::Utc>,
    offset: chrono::DateTime<chrono::FixedOffset>,
    id: uuid::Uuid,
    link: url::Url,
    price: rust_decimal::Decimal,
    civil_day: jiff::civil::Date,
    civil_time: jiff::civil::Time,
    civil: jiff::civil::DateTime,
    stamp: jiff::Timestamp,
    host: std::net::IpAddr,
    v4: std::net::Ipv4Addr,
    v6: std::net::Ipv6Addr,
    socket: std::net::SocketAddr,
    path: std::path::PathBuf,
    wait: std::time::Duration,
}

#[derive(Extract, Serialize, Deserialize, Debug, Clone, PartialEq)]
struct Price(rust_decimal::Decimal);

fn booking() -> Booking {
    use chrono::TimeZone;
    Booking {
        day: chrono::NaiveDate::from_ymd_opt(2024, 2, 29).unwrap(),
        starts: chrono::NaiveTime::from_hms_milli_opt(9, 30, 0, 250).unwrap(),
        local: chrono::NaiveDate::from_ymd_opt(2024, 1, 31)
            .unwrap()
            .and_hms_opt(23, 59, 59)
            .unwrap(),
        at: chrono::Utc.with_ymd_and_hms(2024, 1, 31, 10, 0, 0).unwrap(),
        offset: chrono::FixedOffset::east_opt(2 * 3600)
            .unwrap()
            .with_ymd_and_hms(2024, 1, 31, 10, 0, 0)
            .unwrap(),
        id: uuid::Uuid::from_u128(0x67e5_5044_10b1_426f_9247_bb68_0e5f_e0c8),
        link: url::Url::parse("https://example.com/a?b=c").unwrap(),
        price: rust_decimal::Decimal::new(-12345, 2),
        civil_day: jiff::civil::date(2024, 3, 1),
        civil_time: jiff::civil::time(7, 5, 3, 1_000),
        civil: jiff::civil::date(2024, 3, 1).at(7, 5, 3, 0),
        stamp: jiff::Timestamp::from_second(1_700_000_000).unwrap(),
        host: std::net::IpAddr::from([10, 0, 0, 1]),
        v4: std::net::Ipv4Addr::LOCALHOST,
        v6: std::net::Ipv6Addr::LOCALHOST,
        socket: std::net::SocketAddr::from(([127, 0, 0, 1], 8080)),
        path: std::path::PathBuf::from("/var/log/app.log"),
        wait: std::time::Duration::new(90, 500),
    }
}

#[test]
fn foreign_types_have_the_schema_of_what_serde_writes() {
    let schema = Booking::json_schema();
    let property = |name: &str| schema["properties"][name].clone();
    assert_eq!(property("day"), json!({"type": "string", "format": "date"}));
    assert_eq!(
        property("at"),
        json!({"type": "string", "format": "date-time"})
    );
    assert_eq!(property("id"), json!({"type": "string", "format": "uuid"}));
    assert_eq!(property("link"), json!({"type": "string", "format": "uri"}));
    assert_eq!(property("v4"), json!({"type": "string", "format": "ipv4"}));
    assert_eq!(property("path"), json!({"type": "string"}));
    assert_eq!(property("wait")["required"], json!(["secs", "nanos"]));
    assert_written(&[booking()]);
    // A decimal is read from a number too.
    assert_read::<Price>(&[json!(1.5), json!("-2.25"), json!(3)]);

    let written = serde_json::to_value(booking()).unwrap();
    for (key, bad) in [
        ("day", json!("2024-02-30")),
        ("day", json!("29.02.2024")),
        ("starts", json!("25:00:00")),
        ("local", json!("2024-01-31 23:59:59+01:00")),
        ("at", json!("2024-01-31")),
        ("id", json!("not-a-uuid")),
        ("link", json!("no scheme")),
        ("price", json!("twelve")),
        ("civil_day", json!("2024-13-01")),
        ("stamp", json!("yesterday")),
        ("host", json!("localhost")),
        ("v4", json!("::1")),
        ("v6", json!("1.2.3.4")),
        ("socket", json!("127.0.0.1")),
        ("path", json!(1)),
        ("wait", json!({"secs": 1})),
    ] {
        let mut value = written.clone();
        value[key] = bad.clone();
        assert_refused::<Booking>(&[value]);
    }
}

// ---------------------------------------------------------------------------------------------
// Catch-all variants elsewhere, and a newtype variant that cannot take a tag

#[derive(Extract, Serialize, Deserialize, Debug, Clone, PartialEq)]
enum Colour {
    Red,
    Green(u8),
    #[serde(other)]
    Unnamed,
}

#[test]
fn externally_tagged_catch_all_takes_any_other_name() {
    assert_schema::<Colour>(json!({
        "oneOf": [
            {"type": "string", "enum": ["Red"]},
            {
                "type": "object",
                "properties": {"Green": {"type": "integer", "minimum": 0, "maximum": 255}},
                "required": ["Green"],
                "additionalProperties": false
            },
            {"type": "string", "not": {"enum": ["Red", "Green"]}}
        ]
    }));
    assert_written(&[Colour::Red, Colour::Green(3)]);
    assert_read::<Colour>(&[json!("Blue"), json!("Unnamed")]);
    assert_refused::<Colour>(&[json!(3), json!({"Green": "x"})]);
}

#[derive(Extract, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(tag = "kind", content = "data", rename_all = "lowercase")]
enum Reply {
    Text(String),
    #[serde(other)]
    Unsupported,
}

#[test]
fn adjacently_tagged_catch_all_takes_any_other_tag() {
    assert_written(&[Reply::Text("hi".into())]);
    assert_read::<Reply>(&[json!({"kind": "image"})]);
    assert_refused::<Reply>(&[json!({"kind": "text"}), json!({"kind": 1})]);
}

#[derive(Extract, Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(tag = "type")]
enum Wrapped {
    Number(u8),
}

#[test]
fn an_internally_tagged_newtype_variant_of_a_number_is_a_schema_error() {
    let error = Wrapped::schema().validator().unwrap_err().to_string();
    assert!(
        error.contains("must hold a struct with named fields"),
        "{error}"
    );
    // serde cannot read it either.
    assert!(serde_json::from_value::<Wrapped>(json!({"type": "Number"})).is_err());
}

#[test]
fn format_instructions_of_the_new_shapes() {
    assert_eq!(
        Payment::schema().format_instructions(),
        "// How an order is paid.\nOne of:\n\"Cash\"|\"Check\"\n\
         {\"Card\":{\"number\":string,\"cvv\":integer >= 0}} // A card payment.\n\
         {\"Voucher\":string}\n{\"Split\":[integer >= 0,integer >= 0]}"
    );
    assert_eq!(
        Event::schema().format_instructions(),
        "One of:\n{\"t\":\"Start\"}\n{\"t\":\"Move\",\"c\":[integer,integer]}\n\
         {\"t\":\"Say\",\"c\":string}\n{\"t\":\"Rename\",\"c\":{\"to\":string}}"
    );
    assert_eq!(
        Contact::schema().format_instructions(),
        "One of:\n{\"address\":string}\nstring // A phone number.\n[integer >= 0,integer >= 0]\nnull"
    );
    assert!(Shape::schema()
        .format_instructions()
        .ends_with("\n{\"type\":any other string}"));
}

#[test]
fn the_reader_checks_the_new_shapes_as_the_validator_does() {
    assert_eq!(
        llm_extract::from_str::<Shape>(r#"{"type": "hexagon"}"#)
            .unwrap()
            .value,
        Shape::Unknown
    );
    assert_eq!(
        llm_extract::from_str::<Colour>("\"Blue\"").unwrap().value,
        Colour::Unnamed
    );
    // serde would read these; the schema refuses them, and so does the reader.
    assert!(llm_extract::from_str::<Email>("\"nobody\"").is_err());
    assert!(llm_extract::from_str::<Point>("[1, -2]").is_err());
    assert!(llm_extract::from_str::<Booking>(&{
        let mut value = serde_json::to_value(booking()).unwrap();
        value["id"] = json!("67e55044-10b1-426f-9247-bb680e5fe0c");
        value.to_string()
    })
    .is_err());
}

#[derive(Extract, Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
#[serde(default)]
struct Range(u8, u8);

#[test]
fn a_defaulted_tuple_struct_takes_a_shorter_start() {
    assert_eq!(Range::json_schema().get("minItems"), None);
    assert_eq!(Range::json_schema()["maxItems"], 2);
    assert_written(&[Range(1, 2)]);
    assert_read::<Range>(&[json!([]), json!([1])]);
    assert_refused::<Range>(&[json!([1, 2, 3])]);
    assert_eq!(
        Range::schema().format_instructions(),
        "[integer >= 0,integer >= 0] or a shorter start of it"
    );
}

/// Read in chunks, a partial value is what reading its text at once gives, at every cut.
#[test]
fn partial_values_agree_with_a_fresh_read_at_every_cut() {
    let answer = br#"{"payments": ["Cash", {"Voucher": "XMAS"}, {"Card": {"number": "4111", "cvv": 12}}, {"Split": [1, 2]}, "Check"]}"#;
    for second in 0..=answer.len() {
        let mut whole = PartialReader::<Wallet>::new();
        whole.feed(&answer[..second]);
        for first in 0..=second {
            let mut chunked = PartialReader::<Wallet>::new();
            chunked.feed(&answer[..first]);
            chunked.feed(&answer[first..second]);
            assert_eq!(
                chunked.partial(),
                whole.partial(),
                "cut at {first}, {second}"
            );
        }
    }
    let mut reader = PartialReader::<Wallet>::new();
    reader.feed(answer);
    let value: Wallet = serde_json::from_slice(answer).unwrap();
    assert_eq!(
        serde_json::to_value(reader.partial().unwrap()).unwrap(),
        serde_json::to_value(value).unwrap()
    );
}

// ---------------------------------------------------------------------------------------------
// Agreement with schemars 1.x, the reference for these forms

mod reference {
    use llm_extract::__private::schemars;
    use serde::Deserialize;

    #[derive(schemars::JsonSchema, Deserialize)]
    #[schemars(crate = "llm_extract::__private::schemars")]
    #[allow(dead_code)]
    pub enum Payment {
        Cash,
        #[serde(alias = "cheque")]
        Check,
        /// A card payment.
        Card {
            number: String,
            cvv: u16,
        },
        Voucher(String),
        Split(u32, u32),
    }

    #[derive(schemars::JsonSchema, Deserialize)]
    #[schemars(crate = "llm_extract::__private::schemars")]
    #[serde(tag = "t", content = "c")]
    #[allow(dead_code)]
    pub enum Event {
        Start,
        Move(i32, i32),
        Say(String),
        Rename { to: String },
    }

    #[derive(schemars::JsonSchema, Deserialize)]
    #[schemars(crate = "llm_extract::__private::schemars")]
    #[serde(untagged)]
    #[allow(dead_code)]
    pub enum Contact {
        Email {
            address: String,
        },
        /// A phone number.
        Phone(String),
        Pair(u8, u8),
        Nothing,
    }

    #[derive(schemars::JsonSchema, Deserialize)]
    #[schemars(crate = "llm_extract::__private::schemars")]
    #[allow(dead_code)]
    pub struct Point(i32, i32);
}

/// The keywords both write alike: without the annotations and bounds only one of them writes
/// (schemars' integer `format`s and a `const`'s `type`; our integer ranges, `items: false` beside a
/// fixed length, closed objects, `x-aliases`, descriptions).
fn comparable(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => {
            let mut out = serde_json::Map::new();
            for (key, value) in map {
                let dropped = matches!(
                    key.as_str(),
                    "$schema"
                        | "title"
                        | "description"
                        | "additionalProperties"
                        | "minimum"
                        | "maximum"
                        | "x-aliases"
                ) || (key == "format" && map.get("type") != Some(&json!("string")))
                    || (key == "type" && map.contains_key("const"))
                    || (key == "items" && value == &json!(false));
                if !dropped {
                    let value = if key == "properties" {
                        Value::Object(
                            value
                                .as_object()
                                .into_iter()
                                .flatten()
                                .map(|(k, v)| (k.clone(), comparable(v)))
                                .collect(),
                        )
                    } else {
                        comparable(value)
                    };
                    out.insert(key.clone(), value);
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(comparable).collect()),
        other => other.clone(),
    }
}

#[test]
fn the_forms_are_those_schemars_writes() {
    use llm_extract::__private::schemars::schema_for;
    let pairs = [
        (
            Payment::json_schema().clone(),
            schema_for!(reference::Payment),
        ),
        (Event::json_schema().clone(), schema_for!(reference::Event)),
        (
            Contact::json_schema().clone(),
            schema_for!(reference::Contact),
        ),
        (Point::json_schema().clone(), schema_for!(reference::Point)),
    ];
    for (ours, theirs) in pairs {
        let theirs = serde_json::to_value(theirs).unwrap();
        assert_eq!(comparable(&ours), comparable(&theirs), "{theirs}");
    }
}

#[test]
fn prose_around_an_object_is_not_read_as_a_string() {
    let parsed = llm_extract::from_str::<Contact>(
        "Sure! Here it is: {\"address\": \"a@b\"} Let me know if you need more.",
    )
    .unwrap();
    assert_eq!(
        parsed.value,
        Contact::Email {
            address: "a@b".into()
        }
    );
    let parsed = llm_extract::from_str::<Payment>("Here: {\"Voucher\": \"X\"}").unwrap();
    assert_eq!(parsed.value, Payment::Voucher("X".into()));
    // As for a string enum alone, a unit variant's name is found in prose.
    let parsed = llm_extract::from_str::<Payment>("The answer is \"Cash\".").unwrap();
    assert_eq!(parsed.value, Payment::Cash);
    let parsed = llm_extract::from_str::<Payment>("  cash \n").unwrap();
    assert_eq!(parsed.value, Payment::Cash);
}
