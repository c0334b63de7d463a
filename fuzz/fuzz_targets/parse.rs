//! `parse` and `parse_lines` never panic, whatever the text, with or without salvage or strictness.
#![no_main]

use libfuzzer_sys::fuzz_target;
use llm_extract::parse::{parse_lines_with, parse_with, ParseOptions};
use llm_extract_fuzz::Rec;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for options in [
        ParseOptions::default(),
        ParseOptions::default().with_salvage(true),
        ParseOptions::strict(),
    ] {
        let _ = parse_with::<Rec>(&text, &options);
        let _ = parse_lines_with::<Rec>(&text, &options);
    }
});
