//! How two strings are compared: one normal form for scoring leaves and matching list keys.

/// `text` as compared: case folded (Unicode lowercase, `ß` as `ss`, final sigma as sigma, typographic
/// quotes as ASCII ones), every run of whitespace one space, and whitespace and punctuation (ASCII
/// punctuation, the General Punctuation and CJK punctuation blocks, `¡ ¿ « » · § ¶`) trimmed from both
/// ends. A string that normalises to nothing counts as no value.
///
/// ```
/// use llm_extract::eval::normalise;
/// assert_eq!(normalise("  „Großer\n  GARTEN“, "), "grosser garten");
/// ```
pub fn normalise(text: &str) -> String {
    let mut folded = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            'ß' | 'ẞ' => folded.push_str("ss"),
            'ς' => folded.push('σ'),
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => folded.push('\''),
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => folded.push('"'),
            other => folded.extend(other.to_lowercase()),
        }
    }
    let collapsed = folded.split_whitespace().collect::<Vec<_>>().join(" ");
    collapsed
        .trim_matches(|c: char| c.is_whitespace() || is_punctuation(c))
        .to_owned()
}

fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation()
        || matches!(c, '\u{2000}'..='\u{206F}' | '\u{3000}'..='\u{303F}')
        || matches!(c, '¡' | '¿' | '«' | '»' | '·' | '§' | '¶')
}
