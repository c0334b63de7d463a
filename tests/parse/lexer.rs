//! Properties of the one JSON lexer every reader of `parse` reads from: the same tokens however the
//! bytes are chunked, spans that tile the input in order, no panic on arbitrary bytes, work linear in
//! the input, per-byte classes that agree with the tokens, and clean JSON read strictly without an
//! irregularity.

use llm_extract::parse::lex::{Class, Irregularity, Lexer, Next, Syntax, Token, TokenKind};
use proptest::prelude::*;

/// Where the pieces of a text of `len` bytes cut at `cuts` (taken modulo `len + 1`) end, in order.
fn piece_ends(len: usize, cuts: &[usize]) -> Vec<usize> {
    let mut ends: Vec<usize> = cuts.iter().map(|&c| c % (len + 1)).collect();
    ends.push(len);
    ends.sort_unstable();
    ends.dedup();
    ends
}

/// Hands `read` each piece of `text` cut at `cuts` (see [`piece_ends`]) with its offset, in order.
fn in_pieces(text: &[u8], cuts: &[usize], mut read: impl FnMut(&[u8], usize)) {
    let mut base = 0;
    for end in piece_ends(text.len(), cuts) {
        read(&text[base..end], base);
        base = end;
    }
}

/// Tokens, irregularities and steps of `text` fed in pieces cut at `cuts` (offsets, any order).
fn lex(text: &[u8], cuts: &[usize], syntax: Syntax) -> (Vec<Token>, Vec<Irregularity>, usize) {
    let mut lexer = Lexer::new(syntax);
    let mut tokens = Vec::new();
    in_pieces(text, cuts, |piece, base| {
        while let Next::Token(token) = lexer.next(piece, base) {
            tokens.push(token);
        }
    });
    tokens.extend(lexer.finish());
    let steps = lexer.steps();
    (tokens, lexer.take_irregularities(), steps)
}

/// The framer's syntax: double quotes, and single quotes where a value starts.
const FRAMER: Syntax = Syntax {
    single_quotes: true,
    report: false,
    ..Syntax::STRICT
};

/// The tokens of `text` read whole in `syntax` that `keep` keeps: what a structure reader must see.
fn tokens_where(text: &[u8], syntax: Syntax, keep: impl Fn(&Token) -> bool) -> Vec<Token> {
    let (tokens, _, _) = lex(text, &[], syntax);
    tokens.into_iter().filter(keep).collect()
}

/// What a structure reader is handed of `text` fed in pieces cut at `cuts` to one lexer of `syntax`
/// that stops at newlines, `next` asking it for what follows in a piece at an offset: the tokens,
/// and how many newlines it stopped at.
fn structure(
    text: &[u8],
    cuts: &[usize],
    syntax: Syntax,
    mut next: impl FnMut(&mut Lexer, &[u8], usize) -> Next,
) -> (Vec<Token>, usize) {
    let mut lexer = Lexer::new(syntax).stop_at_newlines(true);
    let (mut tokens, mut newlines) = (Vec::new(), 0);
    in_pieces(text, cuts, |piece, base| loop {
        match next(&mut lexer, piece, base) {
            Next::Token(token) => tokens.push(token),
            Next::Newline(_) => newlines += 1,
            Next::More => break,
        }
    });
    (tokens, newlines)
}

/// Text that looks like what models write: JSON pieces, quotes of every kind, comments, words.
fn jsonish() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        Just("{".to_owned()),
        Just("}".to_owned()),
        Just("[".to_owned()),
        Just("]".to_owned()),
        Just("(".to_owned()),
        Just(")".to_owned()),
        Just(":".to_owned()),
        Just(",".to_owned()),
        Just(" ".to_owned()),
        Just("\n".to_owned()),
        Just("\"".to_owned()),
        Just("'".to_owned()),
        Just("\\".to_owned()),
        Just("\\u00e9".to_owned()),
        Just("\\u12".to_owned()),
        Just("“".to_owned()),
        Just("”".to_owned()),
        Just("‘".to_owned()),
        Just("’".to_owned()),
        Just("–".to_owned()),
        Just("//".to_owned()),
        Just("/*".to_owned()),
        Just("*/".to_owned()),
        Just("#".to_owned()),
        Just("\0".to_owned()),
        Just("\t".to_owned()),
        "[a-zA-Z_]{1,6}",
        "-?[0-9]{1,4}(\\.[0-9]{0,2})?([eE][+-]?[0-9]{1,2})?",
        Just("True".to_owned()),
        Just("None".to_owned()),
        Just("-Infinity".to_owned()),
    ];
    prop::collection::vec(piece, 0..40).prop_map(|parts| parts.concat().into_bytes())
}

fn syntaxes() -> impl Strategy<Value = Syntax> {
    (any::<[bool; 6]>()).prop_map(|f| Syntax {
        single_quotes: f[0],
        smart_quotes: f[1],
        comments: f[2],
        hash_comments: f[3],
        parens: f[4],
        nul_is_space: f[5],
        report: true,
    })
}

fn text() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![jsonish(), prop::collection::vec(any::<u8>(), 0..200)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_chunking_gives_the_same_tokens(
        text in text(),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
        syntax in syntaxes(),
    ) {
        let (whole, found, _) = lex(&text, &[], syntax);
        let (chunked, chunked_found, _) = lex(&text, &cuts, syntax);
        prop_assert_eq!(&chunked, &whole);
        prop_assert_eq!(chunked_found, found);
        // Byte by byte too.
        let every: Vec<usize> = (0..text.len()).collect();
        let (bytewise, _, _) = lex(&text, &every, syntax);
        prop_assert_eq!(bytewise, whole);
    }

    #[test]
    fn spans_tile_the_input_in_order(text in text(), syntax in syntaxes()) {
        let (tokens, found, _) = lex(&text, &[], syntax);
        let mut at = 0;
        for token in &tokens {
            prop_assert_eq!(token.start, at);
            prop_assert!(token.end > token.start, "{:?}", token);
            at = token.end;
        }
        prop_assert_eq!(at, text.len());
        // Only the last token can be cut, and every irregularity lies inside the input.
        prop_assert!(tokens.iter().rev().skip(1).all(|t| !t.cut));
        prop_assert!(found.iter().all(|i| i.start < i.end && i.end <= text.len()));
    }

    #[test]
    fn work_is_linear_in_the_input(text in text(), cuts in prop::collection::vec(any::<usize>(), 0..12)) {
        let (_, _, steps) = lex(&text, &cuts, Syntax::LENIENT);
        // A step consumes bytes or hands out a token or a stop; one `More` per piece.
        prop_assert!(steps <= 4 * text.len() + 2 * (cuts.len() + 1), "{} steps for {} bytes", steps, text.len());
    }

    #[test]
    fn classes_per_byte_agree_with_the_tokens(text in text(), syntax in syntaxes()) {
        let (tokens, _, _) = lex(&text, &[], syntax);
        let mut lexer = Lexer::new(syntax);
        let classes: Vec<Class> = text.iter().map(|&b| lexer.step(b)).collect();
        for token in tokens {
            let string = matches!(token.kind, TokenKind::String { .. });
            for (at, &class) in classes.iter().enumerate().take(token.end).skip(token.start) {
                // A smart quote's first bytes are classed as a word's until its last decides.
                let smart_lead = string && at < token.start + 2;
                prop_assert!(class.in_string() == string || smart_lead, "byte {} of {:?}: {:?}", at, token, class);
            }
            if string {
                prop_assert_eq!(classes[token.start + token_quote_len(&token) - 1], Class::StringOpen);
                if !token.cut {
                    prop_assert_eq!(classes[token.end - 1], Class::StringClose);
                }
            }
        }
    }

    #[test]
    fn clean_json_is_read_strictly_without_irregularities(value in json_value(), pretty in any::<bool>()) {
        // A newline after it: a number or literal at the very end might go on, so it is cut.
        let text = match pretty {
            true => serde_json::to_string_pretty(&value).unwrap(),
            false => serde_json::to_string(&value).unwrap(),
        } + "\n";
        let (tokens, found, _) = lex(text.as_bytes(), &[], Syntax::STRICT);
        prop_assert!(found.is_empty(), "{:?} in {}", found, text);
        prop_assert!(tokens.iter().all(|t| !t.cut));
        let (lenient, lenient_found, _) = lex(text.as_bytes(), &[], Syntax::LENIENT);
        prop_assert_eq!(lenient, tokens);
        prop_assert!(lenient_found.is_empty());
    }
}

fn token_quote_len(token: &Token) -> usize {
    match token.kind {
        TokenKind::String { quote, .. } => quote.width(),
        _ => 1,
    }
}

fn json_value() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::Value;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (-1e9f64..1e9).prop_map(Value::from),
        any::<String>().prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(any::<String>(), inner, 0..6)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn structure_alone_is_the_brackets_and_strings_of_the_tokens(
        text in text(),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
    ) {
        let wanted = tokens_where(&text, FRAMER, |t| {
            matches!(t.kind, TokenKind::Open(_) | TokenKind::Close(_) | TokenKind::String { .. }) && !t.cut
        });
        let (got, newlines) = structure(&text, &cuts, FRAMER, Lexer::next_structure);
        prop_assert_eq!(got, wanted);
        prop_assert_eq!(newlines, text.iter().filter(|&&b| b == b'\n').count());
    }

    #[test]
    fn brackets_alone_are_the_brackets_of_the_tokens_even_mixed_with_structure(
        text in text(),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
        mix in any::<u64>(),
    ) {
        // As the framer reads: brackets and strings at the top, brackets alone inside a value
        // (chosen here at random per call), on one lexer.
        let wanted = tokens_where(&text, FRAMER, |t| matches!(t.kind, TokenKind::Open(_) | TokenKind::Close(_)));
        let mut calls = 0u32;
        let (mut got, newlines) = structure(&text, &cuts, FRAMER, |lexer, piece, base| {
            calls += 1;
            match (mix >> (calls % 64)) & 1 {
                0 => lexer.next_bracket(piece, base),
                _ => lexer.next_structure(piece, base),
            }
        });
        got.retain(|t| !matches!(t.kind, TokenKind::String { .. }));
        prop_assert_eq!(got, wanted);
        prop_assert_eq!(newlines, text.iter().filter(|&&b| b == b'\n').count());
    }
}
