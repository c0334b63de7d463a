//! Splitting a short text into sentences, and a sentence into clauses, for examples that ask a small
//! model about one small piece at a time.

/// The sentences of `text`: each ends after a `.`, `!` or `?` that is followed by a space or the end.
pub fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    for (at, c) in text.char_indices() {
        let end = at + c.len_utf8();
        let next = text[end..].chars().next();
        if matches!(c, '.' | '!' | '?') && next.is_none_or(char::is_whitespace) {
            out.push(text[start..end].trim());
            start = end;
        }
    }
    out.push(text[start..].trim());
    out.retain(|s| !s.is_empty());
    out
}

/// The clauses of `sentence`: the pieces between its commas, semicolons and the word "and" ("He was
/// born in Ulm and married Mileva" is "He was born in Ulm" and "married Mileva").
pub fn clauses(sentence: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for piece in sentence.split([',', ';']) {
        let mut rest = piece;
        while let Some(at) = rest.find(" and ") {
            out.push(rest[..at].trim());
            rest = &rest[at + " and ".len()..];
        }
        out.push(rest.trim());
    }
    out.retain(|clause| !clause.is_empty());
    out
}

#[cfg(test)]
mod tests {
    use super::{clauses, sentences};

    #[test]
    fn clauses_split_at_commas_and_and() {
        assert_eq!(
            clauses(
                "Jane Austen, the English novelist, was born in Steventon and died in Winchester."
            ),
            [
                "Jane Austen",
                "the English novelist",
                "was born in Steventon",
                "died in Winchester."
            ]
        );
        assert_eq!(
            clauses("Sandra was born in 1920."),
            ["Sandra was born in 1920."]
        );
    }

    #[test]
    fn splits_after_end_marks_followed_by_space() {
        assert_eq!(
            sentences("Tim Cook runs Apple. Lisa Su leads AMD!  Is it 3.5? Yes"),
            [
                "Tim Cook runs Apple.",
                "Lisa Su leads AMD!",
                "Is it 3.5?",
                "Yes"
            ]
        );
        assert!(sentences("  ").is_empty());
    }
}
