//! The lexer's unit tests: tokens and spans, the two syntaxes and their irregularities, and the same
//! tokens in any chunking.

use super::*;

/// Every token and irregularity of `text` fed in pieces of `chunk` bytes.
fn lex_in(text: &[u8], chunk: usize, syntax: Syntax) -> (Vec<Token>, Vec<Irregularity>) {
    let mut lexer = Lexer::new(syntax);
    let mut tokens = Vec::new();
    let mut base = 0;
    for piece in text.chunks(chunk.max(1)) {
        while let Next::Token(token) = lexer.next(piece, base) {
            tokens.push(token);
        }
        base += piece.len();
    }
    tokens.extend(lexer.finish());
    (tokens, lexer.take_irregularities())
}

/// The tokens of `text` as (kind, text), checked to be the same in every chunking.
fn lex(text: &str, syntax: Syntax) -> Vec<(TokenKind, String)> {
    let whole = lex_in(text.as_bytes(), text.len(), syntax);
    for chunk in 1..text.len() {
        assert_eq!(
            lex_in(text.as_bytes(), chunk, syntax),
            whole,
            "chunk {chunk}"
        );
    }
    let mut at = 0;
    for token in &whole.0 {
        assert_eq!(token.start, at, "spans tile the input");
        at = token.end;
    }
    assert_eq!(at, text.len());
    whole
        .0
        .iter()
        .map(|t| {
            let bytes = text.as_bytes().get(t.start..t.end).unwrap();
            (t.kind, String::from_utf8_lossy(bytes).into_owned())
        })
        .collect()
}

fn irregular(text: &str, syntax: Syntax) -> Vec<(Irregular, String)> {
    lex_in(text.as_bytes(), text.len(), syntax)
        .1
        .iter()
        .map(|i| (i.kind, text.get(i.start..i.end).unwrap().to_owned()))
        .collect()
}

const STRING: TokenKind = TokenKind::String {
    quote: Quote::Double,
    escapes: false,
};

#[test]
fn strict_json_tokens_with_their_spans() {
    let got = lex(
        r#"{"a": [1, -2.5e3, true, null], "b\"": "x"}"#,
        Syntax::STRICT,
    );
    let kinds: Vec<_> = got.iter().map(|(k, _)| *k).collect();
    use TokenKind::*;
    let word = |literal| Word {
        literal: Some(literal),
        exact: true,
    };
    assert_eq!(
        kinds,
        [
            Open(Bracket::Curly),
            STRING,
            Colon,
            Space,
            Open(Bracket::Square),
            Number { json: true },
            Comma,
            Space,
            Number { json: true },
            Comma,
            Space,
            word(super::Literal::True),
            Comma,
            Space,
            word(super::Literal::Null),
            Close(Bracket::Square),
            Comma,
            Space,
            String {
                quote: Quote::Double,
                escapes: true
            },
            Colon,
            Space,
            STRING,
            Close(Bracket::Curly),
        ]
    );
    assert_eq!(got[1].1, "\"a\"");
    assert_eq!(got[18].1, r#""b\"""#);
    assert!(irregular(r#"{"a": [1, -2.5e3, true]}"#, Syntax::STRICT).is_empty());
}

#[test]
fn strict_reads_no_single_quotes_or_comments() {
    let got = lex("'a' // b", Syntax::STRICT);
    assert!(got
        .iter()
        .all(|(k, _)| matches!(k, TokenKind::Word { .. } | TokenKind::Space)));
    let seen = irregular(r#"["a\p", 007, "b	c", nope]"#, Syntax::STRICT);
    assert_eq!(
        seen,
        [
            (Irregular::InvalidEscape, r"\p".to_owned()),
            (Irregular::NumberForm, "007".to_owned()),
            (Irregular::ControlCharacter, "\t".to_owned()),
            (Irregular::BareWord, "nope".to_owned()),
        ]
    );
}

#[test]
fn lenient_reports_what_it_saw() {
    let text =
        "{'a': True, b: None, /* c */ \"d\": .5, “e”: ‘f’, t: (1, NaN), u: \"\\u12\"} // end";
    let seen: Vec<Irregular> = irregular(text, Syntax::LENIENT)
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    use Irregular::*;
    assert_eq!(
        seen,
        [
            SingleQuotes,
            Literal,
            BareWord,
            Literal,
            Comment,
            NumberForm,
            SmartQuotes,
            SmartQuotes,
            BareWord,
            Paren,
            Literal,
            Paren,
            BareWord,
            InvalidEscape,
            Comment,
        ]
    );
    let got = lex(text, Syntax::LENIENT);
    assert!(got.contains(&(
        TokenKind::String {
            quote: Quote::Smart,
            escapes: false
        },
        "“e”".to_owned()
    )));
    assert!(got.contains(&(
        TokenKind::String {
            quote: Quote::SmartSingle,
            escapes: false
        },
        "‘f’".to_owned()
    )));
}

#[test]
fn a_single_quote_opens_a_string_only_where_a_value_starts() {
    let got = lex("{'a': don't, 'b': 'it''s'}", Syntax::LENIENT);
    let texts: Vec<&str> = got
        .iter()
        .filter(|(k, _)| *k != TokenKind::Space)
        .map(|(_, t)| t.as_str())
        .collect();
    assert_eq!(
        texts,
        ["{", "'a'", ":", "don't", ",", "'b'", ":", "'it'", "'s'", "}"]
    );
    // After a word, a quote is part of the next word.
    let got = lex("x 'y'", Syntax::LENIENT);
    assert_eq!(got.last().map(|(_, t)| t.as_str()), Some("'y'"));
    assert!(matches!(got.last(), Some((TokenKind::Word { .. }, _))));
}

#[test]
fn numbers_that_go_on_as_words_are_words() {
    for (text, literal) in [
        ("10px", None),
        ("-Infinity", Some(Literal::Null)),
        ("82_461_110", None),
    ] {
        let got = lex(text, Syntax::LENIENT);
        assert_eq!(
            got,
            [(
                TokenKind::Word {
                    literal,
                    exact: false
                },
                text.to_owned()
            )]
        );
    }
}

#[test]
fn a_smart_lead_byte_that_opens_no_quote_begins_a_word() {
    let got = lex("[–5, “x”]", Syntax::LENIENT);
    assert_eq!(got[1].1, "–5");
    assert!(matches!(got[1].0, TokenKind::Word { literal: None, .. }));
}

#[test]
fn cut_tokens_at_the_end() {
    for (text, last) in [
        (r#"{"a": "hel"#, "\"hel"),
        (r#"{"a": 12"#, "12"),
        (r#"{"a": tr"#, "tr"),
        ("[1] /* x", "/* x"),
        (r#"["a\"#, "\"a\\"),
    ] {
        let (tokens, seen) = lex_in(text.as_bytes(), 3, Syntax::LENIENT);
        let token = tokens.last().unwrap();
        assert!(token.cut, "{text}");
        assert_eq!(&text[token.start..token.end], last);
        assert_eq!(seen.last().map(|i| i.kind), Some(Irregular::Cut), "{text}");
    }
    // Whitespace and a line comment are whole at the end.
    let (tokens, _) = lex_in(b"1 // x", 2, Syntax::LENIENT);
    assert!(tokens.iter().all(|t| !t.cut));
}

#[test]
fn newline_stops_come_inside_strings_too() {
    let text = b"{\"a\n\": 1\n}";
    let mut lexer = Lexer::new(Syntax::STRICT).stop_at_newlines(true);
    let mut stops = Vec::new();
    for (at, byte) in text.iter().enumerate() {
        loop {
            match lexer.next(std::slice::from_ref(byte), at) {
                Next::Newline(n) => stops.push((n, lexer.string().is_some())),
                Next::Token(_) => {}
                Next::More => break,
            }
        }
    }
    assert_eq!(stops, [(3, true), (8, false)]);
}

#[test]
fn classes_per_byte_follow_the_tokens() {
    let text = br#"{"k\"": [1, "x\\"], 'q': tru}"#;
    let mut lexer = Lexer::new(Syntax::LENIENT);
    let classes: Vec<Class> = text.iter().map(|&b| lexer.step(b)).collect();
    let (tokens, _) = lex_in(text, text.len(), Syntax::LENIENT);
    for token in tokens {
        let in_string = matches!(token.kind, TokenKind::String { .. });
        for (at, class) in classes.iter().enumerate().take(token.end).skip(token.start) {
            assert_eq!(class.in_string(), in_string, "byte {at}");
        }
        if in_string {
            assert_eq!(classes[token.start], Class::StringOpen);
            assert_eq!(classes[token.end - 1], Class::StringClose);
        }
    }
    assert_eq!(classes[3], Class::StringEscape);
    assert_eq!(classes[4], Class::StringText);
}

#[test]
fn state_at_a_chunk_end() {
    let mut lexer = Lexer::new(Syntax::STRICT);
    let text = br#"{"a\"#;
    while lexer.next(text, 0) != Next::More {}
    assert_eq!(lexer.string(), Some(Quote::Double));
    assert!(lexer.escaped());
    assert_eq!(lexer.token_start(), Some(1));
    let more = br#"""}"#;
    let mut kinds = Vec::new();
    while let Next::Token(t) = lexer.next(more, 4) {
        kinds.push((t.kind, t.start, t.end));
    }
    assert_eq!(
        kinds,
        [
            (
                TokenKind::String {
                    quote: Quote::Double,
                    escapes: true
                },
                1,
                6
            ),
            (TokenKind::Close(Bracket::Curly), 6, 7)
        ]
    );
    assert_eq!(lexer.last_significant(), b'}');
}

#[test]
fn steps_stay_linear() {
    let text = "[\"a\", 1, tru, // c\n 'x']".repeat(50);
    let (tokens, _) = lex_in(text.as_bytes(), 1, Syntax::LENIENT);
    assert!(!tokens.is_empty());
    let mut lexer = Lexer::new(Syntax::LENIENT);
    for (at, piece) in text.as_bytes().chunks(1).enumerate() {
        while lexer.next(piece, at) != Next::More {}
    }
    assert!(lexer.steps() <= 4 * text.len(), "{}", lexer.steps());
}

#[test]
fn escapes_in_progress_and_strings_read_on() {
    let mut lexer = Lexer::new(Syntax::STRICT);
    let text = br#""a\u00"#;
    let mut progress = Vec::new();
    for (at, b) in text.iter().enumerate() {
        while lexer.next(std::slice::from_ref(b), at) != Next::More {}
        progress.push(lexer.escape_progress());
    }
    assert_eq!(progress, [None, None, Some(0), Some(1), Some(2), Some(3)]);
    // A quote judged inner: the string reads on from after it.
    let text = br#""he said "hi" ok", 1"#;
    let mut lexer = Lexer::inside_string(Syntax::LENIENT, Quote::Double, 0, 10);
    let Next::Token(token) = lexer.next(text, 0) else {
        panic!("no token");
    };
    assert_eq!((token.start, token.end), (0, 13));
}

#[test]
fn a_quote_after_a_nul_byte_is_part_of_a_word_in_either_reading() {
    let syntax = Syntax {
        single_quotes: true,
        report: false,
        ..Syntax::STRICT
    };
    let text = b"\0'{";
    let mut lexer = Lexer::new(syntax);
    assert_eq!(
        lexer.next_structure(text, 0),
        Next::Token(Token {
            kind: TokenKind::Open(Bracket::Curly),
            start: 2,
            end: 3,
            cut: false
        })
    );
}

#[test]
fn brackets_alone_pass_over_strings_however_the_text_is_cut() {
    let syntax = Syntax {
        single_quotes: true,
        report: false,
        ..Syntax::STRICT
    };
    let text = br#"{"a": "}]\"{", 'b': ['x]', "\\"], "c": {"d": "e\nf"}}"#;
    let brackets = |lexer: &mut Lexer, piece: &[u8], base: usize, out: &mut Vec<Token>| loop {
        match lexer.next_bracket(piece, base) {
            Next::Token(token) => out.push(token),
            Next::Newline(_) => {}
            Next::More => break,
        }
    };
    let mut whole = Vec::new();
    brackets(&mut Lexer::new(syntax), text, 0, &mut whole);
    let spans: Vec<(usize, usize)> = whole.iter().map(|t| (t.start, t.end)).collect();
    let opens: Vec<usize> = text
        .iter()
        .enumerate()
        .filter(|(_, b)| matches!(b, b'{' | b'[' | b'}' | b']'))
        .map(|(i, _)| i)
        .collect();
    // Outside strings only: the first `{`, the `[` after 'b', its `]`, the `{` after "c" and the
    // two `}` at the end.
    assert_eq!(spans.len(), 6, "{spans:?} of {opens:?}");
    assert!(whole
        .iter()
        .all(|t| matches!(t.kind, TokenKind::Open(_) | TokenKind::Close(_))));
    for cut in 0..=text.len() {
        for second in cut..=text.len() {
            let mut lexer = Lexer::new(syntax);
            let mut got = Vec::new();
            brackets(&mut lexer, &text[..cut], 0, &mut got);
            brackets(&mut lexer, &text[cut..second], cut, &mut got);
            brackets(&mut lexer, &text[second..], second, &mut got);
            assert_eq!(got, whole, "cut at {cut} and {second}");
        }
    }
}

#[test]
fn keys_and_members_after_a_brace() {
    let key = |text: &str| key_at(text.as_bytes(), 0, Syntax::LENIENT);
    assert_eq!(key("\"b\": 2"), (true, 4));
    assert_eq!(key("'b' :2"), (true, 5));
    assert_eq!(key("\u{201c}b\u{201d}: 2"), (true, 8));
    assert_eq!(key("first_name: x"), (true, 11));
    assert_eq!(key("\"b\", 2"), (false, 4));
    assert_eq!(key("\"b"), (false, 2));
    assert_eq!(key(": x"), (false, 0));
    // Not single quotes in strict JSON: `'` is no key.
    assert!(!key_at(b"'b': 2", 0, Syntax::STRICT).0);
    let follow = |text: &str| members_follow(text.as_bytes(), 0, Syntax::LENIENT).0;
    assert!(follow(", \"b\": 2}"));
    assert!(follow(" ,\n b: 2}"));
    assert!(!follow(", then more"));
    assert!(!follow(" and {\"a\": 2}"));
    assert!(!follow(""));
    // The look-ahead stops at the key's end: a key never closed reads to the end, no further.
    let text = ", \"b";
    assert_eq!(
        members_follow(text.as_bytes(), 0, Syntax::LENIENT),
        (false, 4)
    );
}

/// Inside a string the structure reading skips text eight bytes at a time and stops at quotes,
/// backslashes and control characters (a control character other than a newline stop is text to
/// it): strings of every length up to past two words, with a special byte at every place and the
/// text cut at every place, give the strings and newline stops of the token reading.
#[test]
fn structure_strings_of_every_length_with_a_special_byte_anywhere() {
    let syntax = Syntax {
        single_quotes: true,
        report: false,
        ..Syntax::STRICT
    };
    let mut texts: Vec<Vec<u8>> = Vec::new();
    for len in 0..20 {
        for at in 0..=len {
            for special in [b'\t', 0x01, b'\n', b'\\', b'}', 0xc3] {
                let mut text = b"[\"".to_vec();
                let mut body = vec![b'a'; len];
                if at < len {
                    body[at] = special;
                }
                text.extend(&body);
                // A backslash at the end escapes the closing quote: close after it.
                text.extend(b"\", '");
                text.extend(&body);
                text.extend(b"'\\\"]\"]");
                texts.push(text);
            }
        }
    }
    let structure = |lexer: &mut Lexer, piece: &[u8], base: usize, out: &mut Vec<Next>| loop {
        match lexer.next_structure(piece, base) {
            Next::More => break,
            next => out.push(next),
        }
    };
    for text in &texts {
        let mut lexer = Lexer::new(syntax).stop_at_newlines(true);
        let mut wanted = Vec::new();
        loop {
            match lexer.next(text, 0) {
                Next::More => break,
                Next::Token(token)
                    if !matches!(
                        token.kind,
                        TokenKind::Open(_) | TokenKind::Close(_) | TokenKind::String { .. }
                    ) => {}
                next => wanted.push(next),
            }
        }
        let mut whole = Vec::new();
        structure(
            &mut Lexer::new(syntax).stop_at_newlines(true),
            text,
            0,
            &mut whole,
        );
        assert_eq!(whole, wanted, "{:?}", String::from_utf8_lossy(text));
        for cut in 0..=text.len() {
            let mut lexer = Lexer::new(syntax).stop_at_newlines(true);
            let mut got = Vec::new();
            structure(&mut lexer, &text[..cut], 0, &mut got);
            structure(&mut lexer, &text[cut..], cut, &mut got);
            assert_eq!(
                got,
                wanted,
                "{:?} cut at {cut}",
                String::from_utf8_lossy(text)
            );
        }
    }
}
