//! Recursive, mutually recursive and generic derived types, `#[serde(flatten)]` and enum-keyed maps:
//! their schemas (`$defs` + `$ref`), validation against what serde writes and refuses, reading a
//! fenced answer back, partial values, format instructions; and the schema readers on a recursive
//! schema given at run time.

use llm_extract::parse::{from_str_value, ParseOptions, Partial, PartialReader};
use llm_extract::{schema::SchemaSet, Extract, Schema};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};

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

// A report: sections of sections.

/// A report.
#[derive(Extract, Deserialize, Serialize, Debug, PartialEq)]
struct Report {
    title: String,
    sections: Vec<Section>,
}

/// A section of a report.
#[derive(Extract, Deserialize, Serialize, Debug, PartialEq)]
struct Section {
    /// The heading.
    title: String,
    sections: Vec<Section>,
}

fn report() -> Report {
    let leaf = |title: &str| Section {
        title: title.into(),
        sections: Vec::new(),
    };
    Report {
        title: "Q3".into(),
        sections: vec![
            Section {
                title: "Sales".into(),
                sections: vec![
                    leaf("EMEA"),
                    Section {
                        title: "Americas".into(),
                        sections: vec![leaf("North"), leaf("South")],
                    },
                ],
            },
            leaf("Costs"),
        ],
    }
}

#[test]
fn a_recursive_type_is_one_def_referred_to() {
    let schema = Report::json_schema();
    assert_eq!(
        schema["properties"]["sections"],
        json!({"type": "array", "items": {"$ref": "#/$defs/Section"}})
    );
    let section = &schema["$defs"]["Section"];
    assert_eq!(section["description"], "A section of a report.");
    assert_eq!(
        section["properties"]["sections"]["items"],
        json!({"$ref": "#/$defs/Section"})
    );
    assert_eq!(schema["$defs"].as_object().unwrap().len(), 1);
    // The list shape keeps the definitions at its root, where the references point.
    let list = Report::list_schema();
    assert_eq!(list["$defs"], schema["$defs"]);
    assert!(list["properties"]["items"]["items"].get("$defs").is_none());
    assert!(Report::schema().validator().is_ok());
}

#[test]
fn nested_sections_validate_as_serde_reads_them() {
    round_trips(&report());
    agrees::<Report>(&[
        json!({"title": "a", "sections": []}),
        json!({"title": "a", "sections": [{"title": "b", "sections": [{"title": "c", "sections": []}]}]}),
        // Deep inside: a section without its title, a title that is no string, no list.
        json!({"title": "a", "sections": [{"title": "b", "sections": [{"sections": []}]}]}),
        json!({"title": "a", "sections": [{"title": "b", "sections": [{"title": 3, "sections": []}]}]}),
        json!({"title": "a", "sections": [{"title": "b", "sections": {"title": "c"}}]}),
    ]);
}

#[test]
fn format_instructions_of_a_recursive_type_are_finite() {
    assert_eq!(
        Report::format_instructions(),
        "{\"title\":string,\"sections\":array of Section} // A report.\n\
         Section = { // A section of a report.\n  \
         \"title\":string, // The heading.\n  \
         \"sections\":array of Section\n\
         }"
    );
    let lines = Report::line_format_instructions();
    assert!(lines.starts_with("One JSON object per line"), "{lines}");
    assert_eq!(lines.matches("Section = ").count(), 1, "{lines}");
}

#[test]
fn a_half_written_recursive_answer_is_previewed() {
    let mut reader = PartialReader::<Report>::new();
    reader.feed(br#"{"title": "Q3", "sections": [{"title": "Sales", "sections": [{"title": "EM"#);
    let preview: &Partial<Report> = reader.partial().expect("a preview");
    assert_eq!(preview.title.as_deref(), Some("Q3"));
    let sales = &preview.sections.as_ref().unwrap()[0];
    assert_eq!(sales.title.as_deref(), Some("Sales"));
    let emea = &sales.sections.as_ref().unwrap()[0];
    assert_eq!(emea.title.as_deref(), Some("EM"));
    assert_eq!(emea.sections, None);
    reader.feed(br#"EA", "sections": []}]}]}"#);
    let done = reader.partial().unwrap();
    let emea = &done.sections.as_ref().unwrap()[0]
        .sections
        .as_ref()
        .unwrap()[0];
    assert_eq!(emea.title.as_deref(), Some("EMEA"));
    assert_eq!(emea.sections, Some(Vec::new()));
    assert_eq!(
        serde_json::to_value(done).unwrap(),
        json!({"title": "Q3", "sections": [{"title": "Sales", "sections": [{"title": "EMEA", "sections": []}]}]})
    );
}

// An org chart: the root type itself recurs, through `Vec` and `Option<Box<_>>`.

/// A person in an org chart.
#[derive(Extract, Deserialize, Serialize, Debug, PartialEq)]
struct Employee {
    name: String,
    /// Who this person's manager is, written out.
    manager: Option<Box<Employee>>,
    reports: Vec<Employee>,
}

#[test]
fn an_org_chart_is_its_own_def_and_stays_an_object() {
    let schema = Employee::json_schema();
    assert_eq!(schema["type"], "object");
    let def = &schema["$defs"]["Employee"];
    assert_eq!(def["properties"], schema["properties"]);
    assert_eq!(
        schema["properties"]["manager"],
        json!({
            "anyOf": [{"$ref": "#/$defs/Employee"}, {"type": "null"}],
            "description": "Who this person's manager is, written out."
        })
    );
    let chart = Employee {
        name: "Ada".into(),
        manager: Some(Box::new(Employee {
            name: "Grace".into(),
            manager: None,
            reports: Vec::new(),
        })),
        reports: vec![Employee {
            name: "Linus".into(),
            manager: None,
            reports: vec![Employee {
                name: "Ken".into(),
                manager: None,
                reports: Vec::new(),
            }],
        }],
    };
    round_trips(&chart);
    agrees::<Employee>(&[
        json!({"name": "a", "manager": null, "reports": []}),
        json!({"name": "a", "reports": [{"name": "b", "reports": []}]}),
        json!({"name": "a", "manager": {"name": "b"}, "reports": []}),
        json!({"name": "a", "manager": {"name": "b", "manager": "c", "reports": []}, "reports": []}),
    ]);
    let text = Employee::format_instructions();
    assert_eq!(text.matches("Employee = ").count(), 1, "{text}");
    assert!(text.contains("\"manager\":Employee or null"), "{text}");
}

#[test]
fn a_recursive_partial_form_holds_itself_in_a_box() {
    let mut reader = PartialReader::<Employee>::new();
    reader.feed(br#"{"name": "Ada", "manager": {"name": "Gra"#);
    let preview = reader.partial().unwrap();
    let manager: &Partial<Employee> = preview.manager.as_deref().unwrap();
    assert_eq!(manager.name.as_deref(), Some("Gra"));
}

// Mutual recursion: a folder holds files, a file its folder.

#[derive(Extract, Deserialize, Serialize, Debug, PartialEq)]
struct Folder {
    name: String,
    files: Vec<File>,
}

#[derive(Extract, Deserialize, Serialize, Debug, PartialEq)]
struct File {
    name: String,
    parent: Option<Box<Folder>>,
}

#[test]
fn mutually_recursive_types() {
    let folder = Folder::json_schema();
    // `Folder` recurs; `File`, inside it, does not need a name of its own.
    assert_eq!(
        folder["$defs"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["Folder"]
    );
    assert_eq!(
        folder["properties"]["files"]["items"]["properties"]["parent"]["anyOf"][0],
        json!({"$ref": "#/$defs/Folder"})
    );
    let file = File::json_schema();
    assert_eq!(
        file["$defs"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["File"]
    );
    round_trips(&Folder {
        name: "src".into(),
        files: vec![File {
            name: "lib.rs".into(),
            parent: Some(Box::new(Folder {
                name: "src".into(),
                files: Vec::new(),
            })),
        }],
    });
    agrees::<Folder>(&[
        json!({"name": "a", "files": [{"name": "b", "parent": {"name": "a", "files": []}}]}),
        json!({"name": "a", "files": [{"name": "b", "parent": {"name": "a", "files": [{"name": 1}]}}]}),
        json!({"name": "a", "files": [{"name": "b", "parent": {"files": []}}]}),
    ]);
    agrees::<File>(&[
        json!({"name": "b", "parent": null}),
        json!({"name": "b", "parent": {"name": "a", "files": [{"name": "c", "parent": null}]}}),
        json!({"name": "b", "parent": {"name": "a", "files": [{"parent": null}]}}),
    ]);
}

// Generic types: a schema per instantiation.

#[derive(Extract, Deserialize, Serialize, Debug, PartialEq)]
struct Page<T> {
    items: Vec<T>,
    /// The next page's number, if any.
    next: Option<u32>,
}

#[derive(Extract, Deserialize, Serialize, Debug, PartialEq)]
struct Person {
    name: String,
}

#[derive(Extract, Deserialize, Serialize, Debug, PartialEq)]
struct Invoice {
    number: String,
    total: f64,
}

/// A parameter only a skipped field names needs no schema.
#[derive(Extract, Deserialize)]
#[allow(dead_code)]
struct Marked<T, M> {
    value: T,
    #[serde(skip)]
    _marker: std::marker::PhantomData<M>,
}

/// Has no schema, no `Deserialize`.
struct Opaque;

/// A generic type that recurs: a tree of any payload.
#[derive(Extract, Deserialize, Serialize, Debug, PartialEq)]
struct Tree<T> {
    value: T,
    children: Vec<Tree<T>>,
}

#[test]
fn generic_types_have_a_schema_per_instantiation() {
    let people = <Page<Person>>::json_schema();
    let invoices = <Page<Invoice>>::json_schema();
    assert_ne!(people, invoices);
    assert_eq!(
        people["properties"]["items"]["items"]["properties"]["name"],
        json!({"type": "string"})
    );
    assert_eq!(
        invoices["properties"]["items"]["items"]["required"],
        json!(["number", "total"])
    );
    assert_eq!(<Page<Person>>::schema().name(), "Page_Person");
    assert_eq!(<Page<Invoice>>::schema().name(), "Page_Invoice");
    // Computed once per instantiation.
    assert!(std::ptr::eq(
        <Page<Person>>::schema(),
        <Page<Person>>::schema()
    ));
    round_trips(&Page {
        items: vec![Person { name: "Ada".into() }],
        next: Some(2),
    });
    agrees::<Page<Invoice>>(&[
        json!({"items": [{"number": "7", "total": 1.5}], "next": null}),
        json!({"items": [{"name": "Ada"}], "next": null}),
        json!({"items": [{"number": "7", "total": "1.5"}]}),
    ]);
}

#[test]
fn a_parameter_in_a_skipped_field_is_not_bounded() {
    let schema = <Marked<u8, Opaque>>::json_schema();
    assert_eq!(schema["required"], json!(["value"]));
}

#[test]
fn a_recursive_generic_type_has_a_def_per_instantiation() {
    let schema = <Tree<u8>>::json_schema();
    assert_eq!(
        schema["properties"]["children"]["items"],
        json!({"$ref": "#/$defs/Tree_u8"})
    );
    let both = <Page<Tree<String>>>::json_schema();
    assert!(both["$defs"].get("Tree_String").is_some(), "{both}");
    round_trips(&Tree {
        value: 1u8,
        children: vec![Tree {
            value: 2,
            children: Vec::new(),
        }],
    });
    agrees::<Tree<u8>>(&[
        json!({"value": 1, "children": [{"value": 2, "children": []}]}),
        json!({"value": 1, "children": [{"value": 300, "children": []}]}),
    ]);
    let mut reader = PartialReader::<Page<Tree<String>>>::new();
    reader.feed(br#"{"items": [{"value": "ro", "children": [{"value": "le"#);
    let preview = reader.partial().unwrap();
    let root = &preview.items.as_ref().unwrap()[0];
    assert_eq!(root.value.as_deref(), Some("ro"));
    assert_eq!(
        root.children.as_ref().unwrap()[0].value.as_deref(),
        Some("le")
    );
}

// `#[serde(flatten)]`.

#[derive(Extract, Deserialize, Serialize, Debug, PartialEq)]
struct Address {
    city: String,
    #[serde(alias = "postcode")]
    zip: Option<String>,
}

#[derive(Extract, Deserialize, Serialize, Debug, PartialEq)]
struct Contact {
    name: String,
    #[serde(flatten)]
    address: Address,
}

#[derive(Extract, Deserialize, Serialize, Debug, PartialEq)]
struct Tagged {
    id: String,
    #[serde(flatten)]
    labels: BTreeMap<String, u32>,
}

#[test]
fn a_flattened_struct_merges_its_properties_and_required() {
    let schema = Contact::json_schema();
    assert_eq!(
        schema["properties"],
        json!({
            "name": {"type": "string"},
            "city": {"type": "string"},
            "zip": {"type": ["string", "null"]}
        })
    );
    assert_eq!(schema["required"], json!(["name", "city"]));
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["x-aliases"], json!({"postcode": "zip"}));
    round_trips(&Contact {
        name: "Ada".into(),
        address: Address {
            city: "London".into(),
            zip: None,
        },
    });
    agrees::<Contact>(&[
        json!({"name": "Ada", "city": "London"}),
        json!({"name": "Ada", "city": "London", "zip": "N1"}),
        json!({"name": "Ada"}),
        json!({"name": "Ada", "city": 3}),
    ]);
    let mut reader = PartialReader::<Contact>::new();
    reader.feed(br#"{"name": "Ada", "city": "Lon"#);
    let preview = reader.partial().unwrap();
    assert_eq!(preview.name.as_deref(), Some("Ada"));
    assert_eq!(
        preview.address.as_ref().unwrap().city.as_deref(),
        Some("Lon")
    );
    assert_eq!(
        serde_json::to_value(preview).unwrap(),
        json!({"name": "Ada", "city": "Lon"})
    );
}

#[test]
fn a_flattened_map_opens_the_object() {
    let schema = Tagged::json_schema();
    assert_eq!(
        schema["additionalProperties"],
        json!({"type": "integer", "minimum": 0, "maximum": u32::MAX})
    );
    assert_eq!(schema["required"], json!(["id"]));
    round_trips(&Tagged {
        id: "x".into(),
        labels: BTreeMap::from([("red".into(), 1), ("blue".into(), 2)]),
    });
    agrees::<Tagged>(&[
        json!({"id": "x"}),
        json!({"id": "x", "red": 1, "blue": 2}),
        json!({"id": "x", "red": "one"}),
        json!({"id": "x", "red": -1}),
        json!({"red": 1}),
    ]);
    assert!(Tagged::format_instructions().contains("\"id\":string"));
}

#[derive(Extract, Deserialize, Serialize, Debug, PartialEq)]
struct Note {
    #[serde(alias = "body")]
    text: String,
    #[serde(flatten)]
    extra: HashMap<String, String>,
}

#[test]
fn a_flattened_map_previews_only_the_keys_no_field_reads() {
    let note: Note = serde_json::from_value(json!({"body": "hi", "mood": "ok"})).unwrap();
    assert_eq!(note.extra.len(), 1);
    let mut reader = PartialReader::<Note>::new();
    reader.feed(br#"{"body": "hi", "mood": "ok", "to": "B"#);
    let preview = reader.partial().unwrap();
    assert_eq!(preview.text.as_deref(), Some("hi"));
    let extra = preview.extra.as_ref().unwrap();
    assert_eq!(extra.keys().collect::<Vec<_>>(), ["mood", "to"]);
    assert_eq!(
        serde_json::to_value(preview).unwrap(),
        json!({"text": "hi", "mood": "ok", "to": "B"})
    );
    reader.feed(br#"ob", "text": "hi!"}"#);
    let done = reader.partial().unwrap();
    assert_eq!(done.text.as_deref(), Some("hi!"));
    assert_eq!(
        done.extra.as_ref().unwrap().keys().collect::<Vec<_>>(),
        ["mood", "to"]
    );
}

// Maps with enum keys.

#[derive(Extract, Deserialize, Serialize, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
enum Kind {
    Person,
    Place,
    OtherThing,
}

#[derive(Extract, Deserialize, Serialize, Debug, PartialEq)]
struct Counts {
    by_kind: HashMap<Kind, u32>,
    #[serde(flatten)]
    totals: BTreeMap<Kind, f64>,
}

#[test]
fn maps_with_enum_keys_name_their_keys() {
    let schema = Counts::json_schema();
    assert_eq!(
        schema["properties"]["by_kind"]["propertyNames"],
        json!({"type": "string", "enum": ["person", "place", "other_thing"]})
    );
    // Flattened, each name is a property the object may have.
    assert_eq!(
        schema["properties"]["other_thing"],
        json!({"type": "number"})
    );
    assert_eq!(schema["required"], json!(["by_kind"]));
    round_trips(&Counts {
        by_kind: HashMap::from([(Kind::Person, 3), (Kind::OtherThing, 1)]),
        totals: BTreeMap::from([(Kind::Place, 2.5)]),
    });
    agrees::<Counts>(&[
        json!({"by_kind": {"person": 1, "place": 2}}),
        json!({"by_kind": {}, "place": 0.5}),
        json!({"by_kind": {"animal": 1}}),
        json!({"by_kind": {"Person": 1}}),
        json!({"by_kind": {"person": "1"}}),
    ]);
}

// A recursive schema given at run time.

fn runtime_tree() -> SchemaSet {
    SchemaSet::new(
        "Outline",
        json!({
            "type": "object",
            "properties": {
                "title": {"type": "string"},
                "parts": {"type": "array", "items": {"$ref": "#/$defs/Part"}}
            },
            "required": ["title", "parts"],
            "additionalProperties": false,
            "$defs": {
                "Part": {
                    "type": "object",
                    "description": "A part of an outline.",
                    "properties": {
                        "heading": {"type": "string"},
                        "words": {"type": "integer", "minimum": 0},
                        "parts": {"type": "array", "items": {"$ref": "#/$defs/Part"}}
                    },
                    "required": ["heading", "words", "parts"],
                    "additionalProperties": false
                }
            }
        }),
    )
}

#[test]
fn readers_follow_references_of_a_runtime_schema() {
    let set = runtime_tree();
    assert_eq!(
        set.format_instructions(),
        "{\"title\":string,\"parts\":array of Part}\n\
         Part = {\"heading\":string,\"words\":integer >= 0,\"parts\":array of Part} // A part of an outline."
    );
    // Coercion follows the references down to a number written as text, three levels deep.
    let answer = r#"Sure: {"title": "Plan", "parts": [{"heading": "A", "words": 10, "parts": [
        {"heading": "A.1", "words": "25", "parts": []}]}]}"#;
    let parsed = from_str_value(answer, &set, &ParseOptions::default()).expect("coerced");
    assert_eq!(parsed.value["parts"][0]["parts"][0]["words"], json!(25));
    assert!(!parsed.fixes.is_empty());
    // The list shape refers to the same definitions from its own root.
    assert_eq!(set.list()["$defs"], set.generic()["$defs"]);
}

#[derive(Extract, Deserialize, Serialize, Debug, PartialEq)]
#[serde(tag = "kind")]
enum Party {
    Person {
        name: String,
        #[serde(flatten)]
        address: Address,
    },
    Company {
        name: String,
    },
}

#[test]
fn a_variant_of_a_tagged_enum_flattens_a_struct() {
    let schema = Party::json_schema();
    let person = &schema["oneOf"][0];
    assert_eq!(person["required"], json!(["kind", "name", "city"]));
    round_trips(&Party::Person {
        name: "Ada".into(),
        address: Address {
            city: "London".into(),
            zip: Some("N1".into()),
        },
    });
    agrees::<Party>(&[
        json!({"kind": "Person", "name": "Ada", "city": "London"}),
        json!({"kind": "Person", "name": "Ada"}),
        json!({"kind": "Company", "name": "Acme"}),
    ]);
    let mut reader = PartialReader::<Party>::new();
    reader.feed(br#"{"kind": "Person", "name": "Ada", "city": "Lo"#);
    assert_eq!(
        serde_json::to_value(reader.partial().unwrap()).unwrap(),
        json!({"kind": "Person", "name": "Ada", "city": "Lo"})
    );
}
