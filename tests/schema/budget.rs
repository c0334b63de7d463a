//! A real schema whose lowering for the dialects that inline every reference would copy far more
//! than any other schema of its kind: the Azure Pipelines schema (`tests/data/azure-pipelines`, 1.6 MB,
//! a union of 259 tasks used by every step of every job of every stage). It is taken and validated,
//! goes out to the dialects that keep references, and the dialects that inline them stop at the work
//! budget ([`WORK_LIMIT`]) with an error that names the part being lowered: a bound on the work, in
//! steps, whatever the machine.

use llm_extract::schema::dialect::WORK_LIMIT;
use llm_extract::schema::{Dialect, DynamicSchema, Shape};
use llm_extract::SchemaError;
use serde_json::{json, Value};
use std::path::Path;

fn pipelines() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/azure-pipelines/service-schema.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn the_azure_pipelines_schema_is_taken_and_lowered_within_the_budget() {
    let schema = DynamicSchema::from_json(pipelines()).unwrap();
    let set = schema.schema_set();
    let validator = set.validator().unwrap();
    let pipeline = json!({
        "trigger": ["main"],
        "pool": { "vmImage": "ubuntu-latest" },
        "steps": [
            { "script": "cargo test", "displayName": "Test" },
            { "task": "PowerShell@2", "inputs": { "targetType": "inline", "script": "dir" } }
        ]
    });
    assert!(
        validator.is_valid(&pipeline),
        "{:?}",
        validator.violations(&pipeline)
    );
    let wrong =
        json!({ "steps": [{ "task": "PowerShell@2", "inputs": { "targetType": "nowhere" } }] });
    assert!(!validator.is_valid(&wrong));

    for dialect in [Dialect::Generic, Dialect::OpenAiStrict, Dialect::Anthropic] {
        set.lowering(dialect, Shape::One)
            .unwrap_or_else(|e| panic!("{dialect}: {e}"));
    }
    for dialect in [Dialect::Gbnf, Dialect::Gemini] {
        let error = set.lowering(dialect, Shape::One).unwrap_err();
        let SchemaError::Unsupported { what, path, .. } = &error else {
            panic!("{dialect}: {error}");
        };
        assert!(
            what.contains(&format!("copies more than {WORK_LIMIT}")),
            "{dialect}: {error}"
        );
        // The part being lowered when the budget ran out: a step of the pipeline's jobs.
        assert!(
            path.starts_with('/') && path.contains("/steps"),
            "{dialect}: {path}"
        );
        assert!(error.to_string().contains(path.as_str()), "{error}");
    }
}
