//! The decoder never panics on any bytes, and however the bytes are chunked it yields exactly what it
//! yields for the bytes fed at once.
#![no_main]

use libfuzzer_sys::fuzz_target;
use llm_extract::parse::{LineEvent, ParseOptions};
use llm_extract::parse::LineDecoder;
use llm_extract_fuzz::Rec;

fn decode(chunks: &[&[u8]], options: ParseOptions) -> Vec<String> {
    let mut decoder = LineDecoder::<Rec>::with_options(options);
    let mut events = Vec::new();
    for chunk in chunks {
        events.extend(decoder.feed(chunk));
    }
    events.extend(decoder.finish());
    events
        .into_iter()
        .map(|e| match e {
            LineEvent::Item(i) => format!("item {} {:?} {:?}", i.line, i.value, i.fixes),
            LineEvent::Skipped(s) => format!("skip {s:?}"),
        })
        .collect()
}

fuzz_target!(|data: &[u8]| {
    // The first byte picks the chunk size and the options; the rest is the answer.
    let Some((&control, bytes)) = data.split_first() else {
        return;
    };
    let chunk = usize::from(control % 16) + 1;
    let options = ParseOptions::default()
        .with_salvage(control & 0x10 != 0)
        .with_strict(control & 0x20 != 0)
        .with_max_frame_bytes(if control & 0x40 != 0 { 64 } else { 1 << 20 });
    let whole = decode(&[bytes], options);
    let chunks: Vec<&[u8]> = bytes.chunks(chunk).collect();
    assert_eq!(decode(&chunks, options), whole);
});
