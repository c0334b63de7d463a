//! `parse` and `lines_from_str` never panic, whatever the text, with or without salvage or strictness.
#![no_main]

use libfuzzer_sys::fuzz_target;
use llm_extract::parse::{lines_from_str_with, from_str_with, ParseOptions};
use llm_extract_fuzz::Rec;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for options in [
        ParseOptions::default(),
        ParseOptions::default().with_salvage(true),
        ParseOptions::strict(),
    ] {
        let _ = from_str_with::<Rec>(&text, &options);
        let _ = lines_from_str_with::<Rec>(&text, &options);
    }
});
