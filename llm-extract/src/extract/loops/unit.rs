//! The repeated unit of a period that crosses JSON structure (`{"item": "Flat white", "price": 3.5}, `
//! written again and again): its leaves, read from the detector's window of the last bytes with the
//! lexer's role of each, so the input text can say how many copies of it are real data.
//!
//! The detector reads the last `2p - 1` bytes of a period of `p` bytes, where every leaf of the unit is
//! whole whichever rotation the period is in; only the leaves wholly inside are read (a string cut by
//! the edge is left out, and so is a scalar touching an edge), so the leaves read are the unit's own
//! and the distinct leaves counted stay few.

use crate::parse::lex::Class;

/// What a byte of the answer is to the lexer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    /// Between tokens, or in a number or literal.
    Outside,
    /// The quote that opens a string.
    Open,
    /// Inside a string.
    Inside,
    /// The quote that closes a string.
    Close,
}

impl Role {
    /// The role of a byte the lexer read as `class`.
    pub(super) fn of_class(class: Class) -> Self {
        match class {
            Class::StringOpen => Role::Open,
            Class::StringText | Class::StringEscape => Role::Inside,
            Class::StringClose => Role::Close,
            Class::Space | Class::Punct | Class::Number | Class::Word | Class::Comment => {
                Role::Outside
            }
        }
    }

    /// Whether the lexer was in a string before the byte, and is after it.
    pub(super) fn in_string(self) -> (bool, bool) {
        match self {
            Role::Outside => (false, false),
            Role::Open => (false, true),
            Role::Inside => (true, true),
            Role::Close => (true, false),
        }
    }
}

/// Whether the unit crosses JSON structure (a bracket, brace or comma between tokens): a repeat of
/// values, not of text inside one.
pub(super) fn is_structural(unit: &[(u8, Role)]) -> bool {
    unit.iter().any(|&(byte, role)| {
        role == Role::Outside && matches!(byte, b'{' | b'}' | b'[' | b']' | b',')
    })
}

/// The leaves wholly inside `unit`: each string value's text between its quotes (escapes as written;
/// a key, a string followed by `:`, is no leaf, nor a string the unit ends after), and each number or
/// literal with a byte that is neither on both sides.
pub(super) fn leaves(unit: &[(u8, Role)]) -> Vec<String> {
    let mut out = Vec::new();
    let mut string: Option<Vec<u8>> = None;
    // A string closed, not yet known to be a value rather than a key.
    let mut pending: Option<Vec<u8>> = None;
    let mut scalar: Option<Vec<u8>> = None;
    let mut bounded = false;
    for &(byte, role) in unit {
        if let Some(text) =
            pending.take_if(|_| role != Role::Outside || !byte.is_ascii_whitespace())
        {
            if !(role == Role::Outside && byte == b':') {
                out.push(String::from_utf8_lossy(&text).into_owned());
            }
        }
        match role {
            Role::Open => string = Some(Vec::new()),
            Role::Inside => {
                if let Some(text) = string.as_mut() {
                    text.push(byte);
                }
            }
            Role::Close => pending = string.take(),
            Role::Outside => {
                let part = !byte.is_ascii_whitespace() && !b"{}[],:".contains(&byte);
                match (part, scalar.as_mut()) {
                    (true, Some(text)) => text.push(byte),
                    (true, None) if bounded => scalar = Some(vec![byte]),
                    (true, None) => {}
                    (false, _) => {
                        if let Some(text) = scalar.take() {
                            out.push(String::from_utf8_lossy(&text).into_owned());
                        }
                    }
                }
                // A scalar is whole only if a byte that is not part of one comes before it.
                bounded = !part;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::lex::{Lexer, Syntax};

    /// `text` as the lexer sees it, from the start of an answer.
    fn roles(text: &str) -> Vec<(u8, Role)> {
        let mut lexer = Lexer::new(Syntax::STRICT);
        text.bytes()
            .map(|byte| (byte, Role::of_class(lexer.step(byte))))
            .collect()
    }

    #[test]
    fn the_whole_leaves_of_a_unit_are_read_and_the_cut_ones_left_out() {
        let all = roles(
            r#"[{"item": "Flat white", "price": 3.50}, {"item": "Flat white", "price": 3.50}"#,
        );
        // A rotation that starts inside the first string and ends inside the number.
        let start = 12;
        let unit = &all[start..start + 39];
        assert!(is_structural(unit));
        let found = leaves(unit);
        // Keys are no leaves; the text cut by the edge is none either.
        assert!(!found.contains(&"price".to_owned()), "{found:?}");
        assert!(!found.contains(&"item".to_owned()), "{found:?}");
        assert!(!found.iter().any(|l| l.contains("white")), "cut: {found:?}");
        assert_eq!(found, ["3.50"]);
        // A rotation that cuts the number leaves it out too.
        let found = leaves(&all[35..35 + 39]);
        assert_eq!(found, ["Flat white"]);
        // The unit that holds the whole line reads its text and its price.
        let line = &all[1..41];
        let found = leaves(line);
        assert!(
            found.contains(&"Flat white".to_owned()) && found.contains(&"3.50".to_owned()),
            "{found:?}"
        );
    }

    #[test]
    fn text_inside_one_string_is_not_structural() {
        let all = roles(r#""the sum is due. the sum is due. the sum is due.""#);
        assert!(!is_structural(&all[1..33]));
    }
}
