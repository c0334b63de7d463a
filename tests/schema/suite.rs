//! The official JSON-Schema-Test-Suite (drafts 4, 6, 7, 2019-09 and 2020-12,
//! `tests/data/json-schema-test-suite`) through [`DynamicSchema`]: every schema of the suite is
//! taken, and every case's verdict is the suite's, except the cases listed in [`DIFFERENCES`] with
//! the reason, in both readings of `format` ([`Formats`]).
//!
//! The suite tests each draft's formats only under that draft; 2020-12's format cases are also run
//! under every older draft's `$schema`, where the two readings part: every format a draft defines is
//! asserted by default, only the draft's own in the strict reading (the cases of
//! [`FORMAT_DIFFERENCES`]).
//!
//! The suite's remote documents (`remotes/`, which the suite serves at `http://localhost:1234/`) are
//! registered with each schema, as a caller registers the documents its schemas refer to; nothing is
//! fetched.

use llm_extract::schema::DynamicSchema;
use llm_extract::validate::Formats;
use llm_extract::SchemaError;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The cases whose verdict through `DynamicSchema` differs from the suite's, by name (every case
/// whose name, `draft/file: schema description / case description`, starts with one of these), and
/// why. Every entry must name at least one such case.
const DIFFERENCES: &[(&str, &str)] = &[(
    "draft2020-12/format.json: ",
    "`format` is asserted (as the dialects that send it are told it is), the optional \
     format-assertion vocabulary: the suite's cases \"invalid ... string is only an annotation by \
     default\" expect 2020-12's default, which only annotates",
)];

/// The drafts of the suite, by their folder in `tests/`.
const DRAFTS: &[&str] = &["draft4", "draft6", "draft7", "draft2019-09", "draft2020-12"];

fn suite() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/json-schema-test-suite")
}

/// Every `.json` file under `dir`, sorted.
fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "json") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The suite's remote documents, each under the URI the suite serves it at.
fn remotes() -> Vec<(String, Value)> {
    let root = suite().join("remotes");
    json_files(&root)
        .into_iter()
        .map(|path| {
            let relative = path
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let document = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            (format!("http://localhost:1234/{relative}"), document)
        })
        .collect()
}

/// `schema` through `DynamicSchema`, with the remote documents it refers to registered, as a caller
/// would: its custom meta-schema, and those the error of each attempt names.
fn build(
    schema: &Value,
    remotes: &[(String, Value)],
    formats: Formats,
) -> Result<DynamicSchema, String> {
    let meta = schema.get("$schema").and_then(Value::as_str).unwrap_or("");
    let mut registered: Vec<&(String, Value)> = remotes
        .iter()
        .filter(|(uri, _)| uri == meta.trim_end_matches('#'))
        .collect();
    loop {
        let mut builder = DynamicSchema::builder(schema.clone()).formats(formats);
        for (uri, document) in &registered {
            builder = builder.register(uri, document.clone());
        }
        match builder.build() {
            Ok(dynamic) => return Ok(dynamic),
            Err(SchemaError::RemoteRef { uri }) => {
                let known = remotes.iter().find(|(known, _)| *known == uri);
                match known {
                    Some(remote) if !registered.iter().any(|r| r.0 == uri) => {
                        registered.push(remote)
                    }
                    _ => return Err(SchemaError::RemoteRef { uri }.to_string()),
                }
            }
            Err(error) => return Err(error.to_string()),
        }
    }
}

/// What running the suite found.
#[derive(Default)]
struct Outcome {
    cases: usize,
    schemas: usize,
    /// Schemas `DynamicSchema` did not take: name and error.
    refused: Vec<(String, String)>,
    /// Cases whose verdict differs from the suite's, by name.
    differ: BTreeSet<String>,
}

fn run(draft: &str, remotes: &[(String, Value)], formats: Formats) -> Outcome {
    let dir = suite().join("tests").join(draft);
    let mut outcome = Outcome::default();
    for file in json_files(&dir) {
        let name = file
            .strip_prefix(&dir)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let groups: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        for group in groups.as_array().unwrap() {
            let schema = &group["schema"];
            let described = format!("{draft}/{name}: {}", group["description"].as_str().unwrap());
            outcome.schemas += 1;
            // The suite's schemas often omit `$schema`: say which draft they are.
            let schema = with_draft(schema, draft);
            let built = std::panic::catch_unwind(|| build(&schema, remotes, formats))
                .unwrap_or_else(|_| Err("panicked".to_owned()));
            let tests = group["tests"].as_array().unwrap();
            outcome.cases += tests.len();
            let dynamic = match built {
                Ok(dynamic) => dynamic,
                Err(error) => {
                    outcome.refused.push((described.clone(), error));
                    for test in tests {
                        let case = test["description"].as_str().unwrap();
                        outcome.differ.insert(format!("{described} / {case}"));
                    }
                    continue;
                }
            };
            let validator = dynamic.schema_set().validator().unwrap();
            for test in tests {
                let case = test["description"].as_str().unwrap();
                let expected = test["valid"].as_bool().unwrap();
                let valid = validator.is_valid(&test["data"]);
                // The explanation agrees with the verdict, whatever the draft.
                assert_eq!(
                    validator.violations(&test["data"]).is_empty(),
                    valid,
                    "{described} / {case}"
                );
                if valid != expected {
                    outcome.differ.insert(format!("{described} / {case}"));
                }
            }
        }
    }
    outcome
}

/// `schema` with the `$schema` of `draft` when it names none (a boolean schema stays as it is).
fn with_draft(schema: &Value, draft: &str) -> Value {
    let uri = match draft {
        "draft4" => "http://json-schema.org/draft-04/schema#",
        "draft6" => "http://json-schema.org/draft-06/schema#",
        "draft7" => "http://json-schema.org/draft-07/schema#",
        "draft2019-09" => "https://json-schema.org/draft/2019-09/schema",
        _ => return schema.clone(),
    };
    let mut schema = schema.clone();
    if let Value::Object(map) = &mut schema {
        map.entry("$schema")
            .or_insert_with(|| Value::String(uri.to_owned()));
    }
    schema
}

#[test]
fn every_case_of_the_suite_has_the_suites_verdict() {
    let remotes = remotes();
    for formats in [Formats::AnyDraft, Formats::PerDraft] {
        let mut differ = BTreeSet::new();
        let mut report = format!("{formats:?}\n");
        for draft in DRAFTS {
            let outcome = run(draft, &remotes, formats);
            report.push_str(&format!(
                "{draft}: {} schemas ({} taken), {} cases ({} with the suite's verdict)\n",
                outcome.schemas,
                outcome.schemas - outcome.refused.len(),
                outcome.cases,
                outcome.cases - outcome.differ.len()
            ));
            for (name, error) in &outcome.refused {
                report.push_str(&format!("  not taken: {name}: {error}\n"));
            }
            differ.extend(outcome.differ);
        }
        eprintln!("{report}");
        assert!(!report.contains("not taken"), "{report}");
        assert_listed(&report, &differ, DIFFERENCES);
    }
}

/// Every name of `differ` is listed in `listed` (by a prefix), and every entry of `listed` names
/// at least one of them.
fn assert_listed(report: &str, differ: &BTreeSet<String>, listed: &[(&str, &str)]) {
    let unexpected: Vec<&String> = differ
        .iter()
        .filter(|name| !listed.iter().any(|(prefix, _)| name.starts_with(prefix)))
        .collect();
    let stale: Vec<&str> = listed
        .iter()
        .map(|(prefix, _)| *prefix)
        .filter(|prefix| !differ.iter().any(|name| name.starts_with(prefix)))
        .collect();
    assert!(
        unexpected.is_empty() && stale.is_empty(),
        "{report}verdicts that differ from the suite's and are not listed:\n{}\nlisted but agreeing:\n{}",
        unexpected.iter().map(|n| format!("    {n:?}")).collect::<Vec<_>>().join("\n"),
        stale.iter().map(|n| format!("    {n:?}")).collect::<Vec<_>>().join("\n"),
    );
}

/// Every `$ref` of `generic` (the generation schema) points into it; `node` is one of its schemas.
fn refs_resolve(generic: &Value, node: &Value) -> Result<(), String> {
    let Value::Object(map) = node else {
        return Ok(());
    };
    for (key, value) in map {
        match key.as_str() {
            "$ref" => {
                let reference = value.as_str().ok_or("a $ref that is not a string")?;
                let pointer = reference
                    .strip_prefix('#')
                    .ok_or(reference)?
                    .replace("%25", "%");
                if generic.pointer(&pointer).is_none() {
                    return Err(format!("{reference} points nowhere"));
                }
            }
            "properties" | "patternProperties" | "dependentSchemas" | "$defs" => {
                for sub in value.as_object().into_iter().flat_map(|m| m.values()) {
                    refs_resolve(generic, sub)?;
                }
            }
            "allOf" | "anyOf" | "oneOf" | "prefixItems" => {
                for sub in value.as_array().into_iter().flatten() {
                    refs_resolve(generic, sub)?;
                }
            }
            "additionalProperties"
            | "items"
            | "contains"
            | "propertyNames"
            | "not"
            | "if"
            | "then"
            | "else"
            | "unevaluatedItems"
            | "unevaluatedProperties" => {
                refs_resolve(generic, value)?;
            }
            _ => {}
        }
    }
    Ok(())
}

#[test]
fn from_json_takes_every_schema_of_the_suite_and_never_panics() {
    let mut taken = 0;
    let mut remote = 0;
    for draft in DRAFTS {
        let dir = suite().join("tests").join(draft);
        for file in json_files(&dir) {
            let groups: Value =
                serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
            for group in groups.as_array().unwrap() {
                let schema = with_draft(&group["schema"], draft);
                let name = format!("{}: {}", file.display(), group["description"]);
                let result = std::panic::catch_unwind(|| DynamicSchema::from_json(schema.clone()))
                    .unwrap_or_else(|_| panic!("{name}: from_json panicked"));
                match result {
                    Ok(dynamic) => {
                        taken += 1;
                        let generic = dynamic.schema_set().generic();
                        assert!(generic.is_object(), "{name}: {generic}");
                        refs_resolve(generic, generic).unwrap_or_else(|e| panic!("{name}: {e}"));
                    }
                    // Only a document the suite serves is missing, and the error names it.
                    Err(SchemaError::RemoteRef { uri }) => {
                        assert!(uri.starts_with("http://localhost:1234/"), "{name}: {uri}");
                        remote += 1;
                    }
                    Err(error) => panic!("{name}: not taken: {error}"),
                }
            }
        }
    }
    assert!(taken > 900 && remote > 0, "{taken} taken, {remote} remote");
}

/// The cases of 2020-12's `optional/format/` whose verdict differs from the suite's when the schema
/// names an older draft, by name (`reading draft/file: schema description / case description`,
/// matched by prefix), and why. Every entry must name at least one such case.
const FORMAT_DIFFERENCES: &[(&str, &str)] = &[
    (
        "AnyDraft draft4/hostname.json: ",
        "drafts 4 and 6 define `hostname` by RFC 1034, which admits what RFC 5891 (2020-12) refuses (`--` in a label's third and fourth places, ...): the draft's own definition is kept, in both readings",
    ),
    (
        "AnyDraft draft6/hostname.json: ",
        "drafts 4 and 6 define `hostname` by RFC 1034, which admits what RFC 5891 (2020-12) refuses (`--` in a label's third and fourth places, ...): the draft's own definition is kept, in both readings",
    ),
    (
        "PerDraft draft4/hostname.json: ",
        "drafts 4 and 6 define `hostname` by RFC 1034, which admits what RFC 5891 (2020-12) refuses (`--` in a label's third and fourth places, ...): the draft's own definition is kept, in both readings",
    ),
    (
        "PerDraft draft6/hostname.json: ",
        "drafts 4 and 6 define `hostname` by RFC 1034, which admits what RFC 5891 (2020-12) refuses (`--` in a label's third and fourth places, ...): the draft's own definition is kept, in both readings",
    ),
    (
        "PerDraft draft4/duration.json: ",
        "draft4 does not define `duration`: in the strict reading it is an annotation",
    ),
    (
        "PerDraft draft4/idn-hostname.json: ",
        "draft4 does not define `idn-hostname`: in the strict reading it is an annotation",
    ),
    (
        "PerDraft draft4/iri.json: ",
        "draft4 does not define `iri`: in the strict reading it is an annotation",
    ),
    (
        "PerDraft draft4/iri-reference.json: ",
        "draft4 does not define `iri-reference`: in the strict reading it is an annotation",
    ),
    (
        "PerDraft draft4/json-pointer.json: ",
        "draft4 does not define `json-pointer`: in the strict reading it is an annotation",
    ),
    (
        "PerDraft draft4/relative-json-pointer.json: ",
        "draft4 does not define `relative-json-pointer`: in the strict reading it is an annotation",
    ),
    (
        "PerDraft draft4/uri-reference.json: ",
        "draft4 does not define `uri-reference`: in the strict reading it is an annotation",
    ),
    (
        "PerDraft draft4/uri-template.json: ",
        "draft4 does not define `uri-template`: in the strict reading it is an annotation",
    ),
    (
        "PerDraft draft4/uuid.json: ",
        "draft4 does not define `uuid`: in the strict reading it is an annotation",
    ),
    (
        "PerDraft draft6/duration.json: ",
        "draft6 does not define `duration`: in the strict reading it is an annotation",
    ),
    (
        "PerDraft draft6/idn-hostname.json: ",
        "draft6 does not define `idn-hostname`: in the strict reading it is an annotation",
    ),
    (
        "PerDraft draft6/iri.json: ",
        "draft6 does not define `iri`: in the strict reading it is an annotation",
    ),
    (
        "PerDraft draft6/iri-reference.json: ",
        "draft6 does not define `iri-reference`: in the strict reading it is an annotation",
    ),
    (
        "PerDraft draft6/relative-json-pointer.json: ",
        "draft6 does not define `relative-json-pointer`: in the strict reading it is an annotation",
    ),
    (
        "PerDraft draft6/uuid.json: ",
        "draft6 does not define `uuid`: in the strict reading it is an annotation",
    ),
    (
        "PerDraft draft7/duration.json: ",
        "draft7 does not define `duration`: in the strict reading it is an annotation",
    ),
    (
        "PerDraft draft7/uuid.json: ",
        "draft7 does not define `uuid`: in the strict reading it is an annotation",
    ),
];

/// 2020-12's format cases, each schema naming `draft` instead, read as `formats` says: the names of
/// the cases whose verdict differs from the suite's, and how many cases there are.
fn format_cases_under(draft: &str, formats: Formats) -> (BTreeSet<String>, usize) {
    let dir = suite().join("tests/draft2020-12/optional/format");
    let mut differ = BTreeSet::new();
    let mut cases = 0;
    for file in json_files(&dir) {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let groups: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        for group in groups.as_array().unwrap() {
            let mut schema = group["schema"].clone();
            schema
                .as_object_mut()
                .unwrap()
                .remove("$schema")
                .expect("the suite's 2020-12 schemas name their draft");
            let schema = with_draft(&schema, draft);
            let dynamic = DynamicSchema::builder(schema)
                .formats(formats)
                .build()
                .unwrap();
            let validator = dynamic.schema_set().validator().unwrap();
            let described = format!(
                "{formats:?} {draft}/{name}: {}",
                group["description"].as_str().unwrap()
            );
            for test in group["tests"].as_array().unwrap() {
                cases += 1;
                if validator.is_valid(&test["data"]) != test["valid"].as_bool().unwrap() {
                    let case = test["description"].as_str().unwrap();
                    differ.insert(format!("{described} / {case}"));
                }
            }
        }
    }
    (differ, cases)
}

#[test]
fn every_drafts_formats_are_asserted_under_any_draft() {
    let mut differ = BTreeSet::new();
    let mut report = String::new();
    for formats in [Formats::AnyDraft, Formats::PerDraft] {
        for draft in ["draft4", "draft6", "draft7", "draft2019-09"] {
            let (found, cases) = format_cases_under(draft, formats);
            report.push_str(&format!(
                "{formats:?} {draft}: {cases} cases, {} with 2020-12's verdict\n",
                cases - found.len()
            ));
            differ.extend(found);
        }
    }
    eprintln!("{report}");
    for name in &differ {
        eprintln!("{name}");
    }
    assert_listed(&report, &differ, FORMAT_DIFFERENCES);
}
