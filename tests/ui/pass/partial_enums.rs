//! The partial forms of adjacently tagged, untagged, internally tagged and generic enums (recursive
//! ones too) and of generic tuple structs are typed, and ask nothing of a type parameter: `Person` is
//! not `Debug`, `Clone` or `PartialEq`.

use llm_extract::parse::Partial;
use llm_extract::Extract;
use serde::Deserialize;

#[derive(Extract, Deserialize)]
struct Person {
    name: String,
}

#[derive(Extract, Deserialize)]
#[serde(tag = "t", content = "c")]
enum Event<T> {
    Start,
    Say(T),
    Move(i32, i32),
    Rename { to: T },
}

#[derive(Extract, Deserialize)]
#[serde(untagged)]
enum Nested<T> {
    Leaf(T),
    List(Vec<Nested<T>>),
    Pair(u8, u8),
    Nothing,
}

#[derive(Extract, Deserialize)]
struct Both<T>(T, u8);

#[derive(Extract, Deserialize)]
#[serde(tag = "type")]
enum Tagged<T> {
    Wrap(T),
    Count {
        n: u8,
    },
    #[serde(other)]
    Unknown,
}

/// What `PartialEvent::Snapshot` needs of a partial form.
fn snapshot<T: Clone + std::fmt::Debug + PartialEq + serde::Serialize + Send + Sync + 'static>(
    value: T,
) -> T {
    value
}

#[test]
fn derives() {
    let event: Partial<Event<Person>> = EventPartial::Rename { to: None };
    let copy = snapshot(event.clone());
    assert_eq!(format!("{copy:?}"), "Rename { to: None }");
    assert!(copy == event);
    let person = PersonPartial {
        name: Some("Ada".into()),
    };
    let nested: Partial<Nested<Person>> = NestedPartial::List(vec![
        NestedPartial::Leaf(person),
        NestedPartial::Pair(Some(1), None),
        NestedPartial::Nothing,
    ]);
    assert_eq!(
        serde_json::to_string(&snapshot(nested)).unwrap(),
        r#"[{"name":"Ada"},[1,null],null]"#
    );
    let both: Partial<Both<Person>> = BothPartial(None, Some(2), Default::default());
    let copy = snapshot(both.clone());
    assert_eq!(format!("{copy:?}"), "BothPartial(None, Some(2))");
    assert!(copy == both);
    assert_eq!(serde_json::to_string(&both).unwrap(), "[null,2]");
    let tagged: Partial<Tagged<Person>> = TaggedPartial::Wrap(None);
    let copy = snapshot(tagged.clone());
    assert_eq!(format!("{copy:?}"), "Wrap(None)");
    assert!(copy == tagged);
    assert_eq!(
        serde_json::to_string(&tagged).unwrap(),
        r#"{"type":"Wrap"}"#
    );
}
