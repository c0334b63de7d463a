//! Recursive, mutually recursive and generic derived types, `#[serde(flatten)]` and enum-keyed maps:
//! their schemas (`$defs` + `$ref`), what validation accepts against what serde writes and refuses,
//! reading back a fenced answer, partial values, format instructions.

use llm_extract::parse::{Partial, PartialReader};
use llm_extract::{Extract, Schema};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};

/// A report: sections that hold sections.
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

fn main_schema() {}

#[test]
fn a_report_with_nested_sections() {
    let schema = Report::json_schema();
    println!("{}", serde_json::to_string_pretty(schema).unwrap());
    println!("{}", Report::format_instructions());
}
