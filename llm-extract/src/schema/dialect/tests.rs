//! The shared walk: merging, unions, references, and every schema of the JSON-Schema-Test-Suite.

use super::*;
use crate::schema::SchemaSet;
use crate::schema::Shape;
use serde_json::json;

#[test]
fn generic_strips_extension_keys_but_not_property_names() {
    let schema = json!({
        "type": "object",
        "x-aliases": { "nick": "x-id" },
        "properties": {
            "x-id": { "type": "string", "x-note": 1, "x-grounded": true },
            "tags": { "type": "array", "items": { "type": "string", "x-note": 2 } }
        },
        "required": ["x-id"],
        "additionalProperties": false
    });
    let expected = json!({
        "type": "object",
        "properties": {
            "x-id": { "type": "string" },
            "tags": { "type": "array", "items": { "type": "string" } }
        },
        "required": ["x-id"],
        "additionalProperties": false
    });
    assert_eq!(render(&schema, Dialect::Generic).unwrap(), expected);
    let grounded = render_grounded(&schema, Dialect::Generic).unwrap();
    assert_eq!(grounded["properties"]["x-id"]["x-grounded"], true);
}

#[test]
fn generic_closes_a_map_keyed_by_an_enum_on_its_keys() {
    let score = json!({ "type": "integer", "minimum": 0 });
    let schema = json!({
        "type": "object",
        "properties": {
            "scores": {
                "type": "object",
                "propertyNames": { "enum": ["low", "high"] },
                "additionalProperties": score,
                "x-note": 1
            },
            "one": { "type": "object", "propertyNames": { "const": "only" } },
            "free": { "type": "object", "propertyNames": { "pattern": "^a" } }
        },
        "required": ["scores"]
    });
    let lowered = render(&schema, Dialect::Generic).unwrap();
    assert_eq!(
        lowered["properties"]["scores"],
        json!({
            "type": "object",
            "properties": { "low": score, "high": score },
            "additionalProperties": false
        })
    );
    assert_eq!(
        lowered["properties"]["one"],
        json!({ "type": "object", "properties": { "only": {} }, "additionalProperties": false })
    );
    // Names described otherwise than by a list stay as written (checked locally).
    assert_eq!(lowered["properties"]["free"], schema["properties"]["free"]);
    // The grounded lowering closes it too; a map already closed is left alone.
    let grounded = render_grounded(&schema, Dialect::Generic).unwrap();
    assert_eq!(
        grounded["properties"]["scores"],
        lowered["properties"]["scores"]
    );
    let closed = json!({ "type": "object", "propertyNames": { "enum": ["a"] }, "additionalProperties": false });
    assert_eq!(render(&closed, Dialect::Generic).unwrap(), closed);
}

#[test]
fn disjointness_is_shown_by_types_values_tags_or_keys() {
    assert!(pairwise_disjoint(&[
        json!({ "type": "string" }),
        json!({ "type": "null" })
    ]));
    assert!(pairwise_disjoint(&[
        json!({ "const": "a" }),
        json!({ "enum": ["b", "c"] })
    ]));
    assert!(!pairwise_disjoint(&[
        json!({ "const": 1 }),
        json!({ "type": "number" })
    ]));
    assert!(!pairwise_disjoint(&[
        json!({ "type": "object" }),
        json!({ "type": "object" })
    ]));
    let variant = |key: &str| json!({ "type": "object", "properties": { key: { "type": "string" } }, "required": [key], "additionalProperties": false });
    assert!(pairwise_disjoint(&[variant("Card"), variant("Cash")]));
    let open = json!({ "type": "object", "properties": { "Cash": {} }, "required": ["Cash"] });
    assert!(!pairwise_disjoint(&[
        open.clone(),
        json!({ "type": "object", "required": ["Card"] })
    ]));
    let untagged = |tag: &str| json!({ "type": "object", "properties": { "type": { "const": tag } }, "required": [] });
    assert!(!pairwise_disjoint(&[untagged("a"), untagged("b")]));
}

#[test]
fn all_of_parts_that_conflict_keep_the_first_and_report_the_rest() {
    let schema = json!({
        "type": "object",
        "properties": { "s": { "allOf": [{ "type": "string", "pattern": "^a" }, { "pattern": "b$" }] } },
        "required": ["s"],
        "additionalProperties": false
    });
    let lowered = lower(&schema, Dialect::Gemini).unwrap();
    assert_eq!(
        lowered.schema()["properties"]["s"],
        json!({ "type": "string" })
    );
    let lowered = lower(&schema, Dialect::OpenAiStrict).unwrap();
    assert_eq!(
        lowered.schema()["properties"]["s"],
        json!({ "type": "string", "pattern": "^a" })
    );
    assert_eq!(
        lowered.dropped(),
        [Dropped {
            keyword: "pattern".into(),
            path: "/properties/s".into()
        }]
    );
}

#[test]
fn the_list_shape_keeps_the_references_of_its_items() {
    let tree = json!({
        "type": "object",
        "properties": { "kids": { "type": "array", "items": { "$ref": "#/$defs/Tree" } } },
        "required": ["kids"],
        "additionalProperties": false,
        "$defs": { "Tree": { "$ref": "#" } }
    });
    let set = SchemaSet::new("Tree", tree);
    // The definitions move to the list's root; a reference to the item's root points at the items.
    assert_eq!(
        set.list()["properties"]["items"]["items"]["properties"]["kids"]["items"],
        json!({ "$ref": "#/$defs/Tree" })
    );
    assert_eq!(
        set.list()["$defs"]["Tree"],
        json!({ "$ref": "#/properties/items/items" })
    );
    for dialect in Dialect::ALL {
        let lowered = set.lowering(dialect, Shape::List).unwrap();
        assert!(
            lowered
                .dropped()
                .iter()
                .all(|d| d.keyword != "$ref" || dialect != Dialect::Gbnf),
            "{dialect}"
        );
    }
    let gbnf = set.for_dialect(Dialect::Gbnf, Shape::List).unwrap();
    let defs = gbnf["$defs"].as_object().unwrap();
    assert!(
        defs.contains_key("Tree") && defs.contains_key("items"),
        "{gbnf}"
    );
}

#[test]
fn a_root_that_is_not_an_object_goes_out_wrapped_in_one() {
    for dialect in [Dialect::OpenAiStrict, Dialect::Anthropic] {
        let lowered = lower(&json!({ "type": "string", "maxLength": 9 }), dialect).unwrap();
        assert!(lowered.is_wrapped() && lowered.strict(), "{dialect}");
        assert_eq!(
            lowered.schema(),
            &json!({
                "type": "object",
                "properties": { "value": { "type": "string" } },
                "required": ["value"],
                "additionalProperties": false
            }),
            "{dialect}"
        );
        // What is dropped is named at its path in the schema as written.
        assert_eq!(lowered.dropped()[0].path, "", "{dialect}");
        // An object root is sent as it is.
        let object = json!({ "type": "object", "properties": {}, "additionalProperties": false });
        assert!(!lower(&object, dialect).unwrap().is_wrapped(), "{dialect}");
        // Other dialects take any root.
        assert!(!lower(&json!({ "type": "string" }), Dialect::Gemini)
            .unwrap()
            .is_wrapped());
    }
}

#[test]
fn a_wrapped_root_keeps_its_references_resolving() {
    // An array root whose items refer to a definition, and a union root that recurses through `#`.
    let list = json!({
        "type": "array",
        "items": { "$ref": "#/definitions/tag" },
        "definitions": { "tag": { "type": "string", "enum": ["a", "b"] } }
    });
    let lowered = lower(&list, Dialect::OpenAiStrict).unwrap();
    assert!(lowered.is_wrapped() && lowered.strict());
    let sent = lowered.schema();
    assert_eq!(sent["properties"]["value"]["type"], "array");
    let validator = crate::validate::Validator::new(sent).unwrap();
    assert!(validator.is_valid(&json!({ "value": ["a", "b"] })));
    assert!(!validator.is_valid(&json!({ "value": ["c"] })));
    assert!(!validator.is_valid(&json!(["a"])));

    let tree = json!({
        "anyOf": [
            { "type": "string" },
            { "type": "array", "items": { "$ref": "#" } }
        ]
    });
    for dialect in [Dialect::OpenAiStrict, Dialect::Anthropic] {
        let lowered = lower(&tree, dialect).unwrap();
        assert!(lowered.is_wrapped(), "{dialect}");
        let validator = crate::validate::Validator::new(lowered.schema()).unwrap();
        assert!(
            validator.is_valid(&json!({ "value": ["a", ["b"]] })),
            "{dialect}: {}",
            lowered.schema()
        );
        assert!(!validator.is_valid(&json!({ "value": 1 })), "{dialect}");
    }
    let wrapped = wrap(&tree);
    assert_eq!(
        wrapped["properties"]["value"]["anyOf"][1]["items"]["$ref"],
        "#/properties/value"
    );
}

#[test]
fn a_wrapped_root_the_strict_form_cannot_carry_goes_out_relaxed_and_wrapped() {
    // A list of free-form objects: OpenAI's strict mode cannot close them.
    let lowered = lower(
        &json!({ "type": "array", "items": { "type": "object" } }),
        Dialect::OpenAiStrict,
    )
    .unwrap();
    assert!(lowered.is_wrapped() && !lowered.strict());
    assert_eq!(
        lowered.schema()["properties"]["value"],
        json!({ "type": "array", "items": { "type": "object" } })
    );
}

#[test]
fn definitions_that_multiply_stay_bounded() {
    // Each definition refers to the next twice, and the last back to the first: inlined blindly, 2^40.
    let mut defs = Map::new();
    for i in 0..40 {
        let next = format!("#/$defs/d{}", (i + 1) % 40);
        defs.insert(
            format!("d{i}"),
            json!({ "type": "object", "properties": { "a": { "$ref": next }, "b": { "$ref": next } } }),
        );
    }
    let schema = json!({ "type": "object", "properties": { "root": { "$ref": "#/$defs/d0" } }, "$defs": defs });
    // The bound is on the work (the size of what is built), not on wall-clock time.
    for dialect in Dialect::ALL {
        match lower(&schema, dialect) {
            Ok(lowered) => assert!(lowered.schema().to_string().len() < 50_000_000, "{dialect}"),
            Err(SchemaError::Unsupported { what, .. }) => {
                assert!(what.contains("inline"), "{what}")
            }
            Err(other) => panic!("{other}"),
        }
    }
    // Kept references stay one definition each.
    let gbnf = lower(&schema, Dialect::Gbnf).unwrap();
    assert_eq!(gbnf.schema()["$defs"].as_object().unwrap().len(), 40);
}

/// An object whose one required property `f` is `field`.
pub(super) fn object_of(field: Value) -> Value {
    json!({ "type": "object", "properties": { "f": field }, "required": ["f"], "additionalProperties": false })
}

/// The JSON-Schema-Test-Suite's folder: `JSON_SCHEMA_TEST_SUITE`, else `shared/data/json-schema-test-suite`
/// beside one of the crate's ancestors.
pub(crate) fn suite_dir() -> Option<std::path::PathBuf> {
    if let Some(dir) = std::env::var_os("JSON_SCHEMA_TEST_SUITE") {
        return Some(dir.into());
    }
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|dir| dir.join("shared/data/json-schema-test-suite"))
        .find(|dir| dir.is_dir())
}

#[test]
fn every_suite_schema_lowers_or_is_refused_with_a_reason() {
    let Some(dir) = suite_dir() else {
        eprintln!("JSON-Schema-Test-Suite not found (set JSON_SCHEMA_TEST_SUITE): skipped");
        return;
    };
    let mut schemas = 0;
    let mut lowered = [0usize; Dialect::ALL.len()];
    for draft in ["draft4", "draft7", "draft2020-12"] {
        let mut files: Vec<_> = std::fs::read_dir(dir.join("tests").join(draft))
            .unwrap()
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
            .collect();
        files.sort();
        for file in files {
            let groups: Value =
                serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
            for group in groups.as_array().into_iter().flatten() {
                let schema = &group["schema"];
                schemas += 1;
                for (i, dialect) in Dialect::ALL.into_iter().enumerate() {
                    match lower(schema, dialect) {
                        Ok(_) => lowered[i] += 1,
                        Err(SchemaError::Unsupported { what, path, .. }) => {
                            if std::env::var_os("SHOW_REFUSED").is_some() {
                                eprintln!("REFUSED {dialect}: {what} at {path}");
                            }
                            assert!(
                                !what.is_empty() && path.starts_with('/'),
                                "{dialect} {schema}"
                            )
                        }
                        Err(other) => panic!("{dialect}: {other} for {schema}"),
                    }
                }
            }
        }
    }
    assert!(schemas > 500, "{schemas}");
    for (dialect, count) in Dialect::ALL.into_iter().zip(lowered) {
        eprintln!("{dialect}: {count} of {schemas} lowered");
    }
    // Every dialect without a required object root takes nearly every schema.
    assert_eq!(lowered[0], schemas);
    assert!(lowered[1] * 100 >= schemas * 95, "gbnf {}", lowered[1]);
    assert!(lowered[4] * 100 >= schemas * 95, "gemini {}", lowered[4]);
}

#[test]
fn derived_shapes_lower_for_every_dialect() {
    // A tuple field, an externally tagged enum (unit names and one-key objects), and a catch-all tag.
    let schema = json!({
        "type": "object",
        "properties": {
            "point": {
                "type": "array",
                "prefixItems": [{ "type": "integer" }, { "type": "string" }],
                "items": false,
                "minItems": 2,
                "maxItems": 2
            },
            "payment": {
                "oneOf": [
                    { "type": "string", "enum": ["Cash", "Check"] },
                    {
                        "type": "object",
                        "properties": { "Card": { "type": "string" } },
                        "required": ["Card"],
                        "additionalProperties": false
                    }
                ]
            },
            "kind": {
                "oneOf": [
                    { "type": "string", "enum": ["a", "b"] },
                    { "type": "string", "not": { "enum": ["a", "b"] } }
                ]
            }
        },
        "required": ["point", "payment", "kind"],
        "additionalProperties": false
    });
    let set = SchemaSet::new("Shapes", schema);
    for dialect in Dialect::ALL {
        for shape in [Shape::One, Shape::List] {
            let lowered = set.lowering(dialect, shape);
            assert!(lowered.is_ok(), "{dialect} {shape:?}: {lowered:?}");
        }
    }
}

#[test]
fn definitions_that_inline_to_a_huge_tree_are_refused_quickly() {
    // Twenty layers of definitions, each referring twice to the next, and a wide leaf: inlining writes
    // 2^20 copies of the leaf. Every dialect that inlines refuses it within the node budget.
    let mut defs = serde_json::Map::new();
    let leaf: serde_json::Map<String, Value> = (0..50)
        .map(|i| (format!("p{i}"), json!({ "type": "string" })))
        .collect();
    defs.insert(
        "d20".into(),
        json!({ "type": "object", "properties": leaf }),
    );
    for i in (0..20).rev() {
        let next = format!("#/$defs/d{}", i + 1);
        defs.insert(
            format!("d{i}"),
            json!({ "type": "object", "properties": { "a": { "$ref": next }, "b": { "$ref": next } } }),
        );
    }
    let schema = json!({ "type": "object", "properties": { "root": { "$ref": "#/$defs/d0" } }, "$defs": defs });
    let set = SchemaSet::new("Wide", schema);
    for dialect in Dialect::ALL {
        let _ = set.lowering(dialect, Shape::One);
    }
    let error = set.lowering(Dialect::Gemini, Shape::One).unwrap_err();
    assert!(
        error.to_string().contains("nodes"),
        "refused by the node budget: {error}"
    );
}

/// Objects nested `depth` deep, each with a property `a` and the innermost with an `enum` of `width`
/// names: without references, reading each level copies everything below it.
fn deep_and_wide(depth: usize, width: usize) -> Value {
    let names: Vec<String> = (0..width).map(|i| format!("n{i}")).collect();
    let mut schema = json!({ "enum": names });
    for _ in 0..depth {
        schema = json!({ "type": "object", "properties": { "a": schema } });
    }
    schema
}

#[test]
fn a_lowering_stops_at_the_work_budget_naming_the_part() {
    const WIDTH: usize = 50_000;
    // Reading the schema copies about depth x width nodes: within the budget at 8 levels.
    let within = WORK_LIMIT / WIDTH / 10;
    assert!(lower(&deep_and_wide(within, WIDTH), Dialect::Gbnf).is_ok());
    // Past it, every dialect that reads the schema through the shared walk stops with the part
    // it was reading when the budget ran out.
    let past = WORK_LIMIT / WIDTH + 5;
    let schema = deep_and_wide(past, WIDTH);
    for dialect in [Dialect::Gbnf, Dialect::Gemini] {
        let error = lower(&schema, dialect).unwrap_err();
        let SchemaError::Unsupported { what, path, .. } = &error else {
            panic!("{dialect}: {error}");
        };
        assert!(
            what.contains(&format!("copies more than {WORK_LIMIT}")),
            "{error}"
        );
        assert!(path.starts_with("/properties/a/properties/a"), "{error}");
        let depth = path.matches("/properties/a").count();
        assert!((1..past).contains(&depth), "{error}");
    }
}
