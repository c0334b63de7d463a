//! Comments: `//` to the end of the line, `/* */`, and `#` to the end of the line where a syntax
//! reads them. One small state machine, resumable at any byte ([`Comment`]), is the whole account:
//! the lexer ([`super::Lexer`]) keeps it as its comment state, the partial parser keeps it between
//! chunks, and a reader holding the whole text asks [`comment_at`], which runs it.

use super::Syntax;

/// Where a reader is in a comment, or just after a `/` that may open one; resumable at any byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Comment {
    /// Just after a `/`: a `/` or `*` next opens a comment, anything else does not.
    Slash,
    /// Inside a `//` (or `#`) comment, which runs to the end of the line (the newline not included).
    Line,
    /// Inside a `/* */` comment; `star`: the last byte read was a `*`.
    Block {
        /// Whether the last byte read was a `*` (a `/` next ends the comment).
        star: bool,
    },
}

/// What one byte did to a comment ([`Comment::step`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// It is inside the comment (for [`Comment::Slash`], it opened one).
    Inside,
    /// It was the comment's last byte (the `/` of `*/`).
    Ended,
    /// The comment ended before it (the newline after a line comment): it is to be read again, outside.
    Before,
    /// The `/` before it opened no comment: it is to be read again, and the `/` is no comment.
    NoComment,
}

/// Where reading a stretch of bytes left a comment ([`Comment::read`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read {
    /// Every byte was inside the comment (or after its `/`): it goes on with the next bytes.
    More,
    /// The comment ended; reading goes on at this index.
    Ended(usize),
    /// The `/` opened no comment; reading goes on at this index, the byte after the `/`.
    NoComment(usize),
}

/// A comment found whole in a text ([`comment_at`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    /// Whether it is a `/* */` comment (else one to the end of the line).
    pub block: bool,
    /// Just past it: past `*/`, or at the newline ending a line comment, or the end of the text.
    pub end: usize,
    /// Whether the end of the text cut it (a `/* */` comment without its `*/`).
    pub cut: bool,
}

impl Comment {
    /// Reads one byte.
    #[inline]
    pub fn step(&mut self, b: u8) -> Step {
        match *self {
            Comment::Slash => match b {
                b'/' => *self = Comment::Line,
                b'*' => *self = Comment::Block { star: false },
                _ => return Step::NoComment,
            },
            Comment::Line if b == b'\n' => return Step::Before,
            Comment::Line => {}
            Comment::Block { star: true } if b == b'/' => return Step::Ended,
            Comment::Block { .. } => *self = Comment::Block { star: b == b'*' },
        }
        Step::Inside
    }

    /// The end of the run of bytes from `bytes[from]` that are inside the comment and change
    /// nothing but the offset (`from` when the byte there must go through [`Comment::step`]);
    /// `newlines`: stop at newlines too, for a reader that counts lines.
    #[inline]
    pub fn skip(self, bytes: &[u8], from: usize, newlines: bool) -> usize {
        let rest = bytes.get(from..).unwrap_or_default();
        let found = match self {
            Comment::Line => memchr::memchr(b'\n', rest),
            Comment::Block { star: false } if newlines => memchr::memchr2(b'*', b'\n', rest),
            Comment::Block { star: false } => memchr::memchr(b'*', rest),
            Comment::Slash | Comment::Block { star: true } => Some(0),
        };
        found.map_or(bytes.len(), |i| from + i)
    }

    /// Reads `bytes` from `from` until the comment ends or the bytes do.
    #[inline]
    pub fn read(&mut self, bytes: &[u8], from: usize) -> Read {
        let mut at = from;
        loop {
            at = self.skip(bytes, at, false);
            let Some(&b) = bytes.get(at) else {
                return Read::More;
            };
            match self.step(b) {
                Step::Inside => at += 1,
                Step::Ended => return Read::Ended(at + 1),
                Step::Before => return Read::Ended(at),
                Step::NoComment => return Read::NoComment(at),
            }
        }
    }

    /// The comment that `b`, the first byte of a token, opens or may open in `syntax`: a `/`
    /// ([`Comment::Slash`]) with [`Syntax::comments`], a `#` ([`Comment::Line`]) with
    /// [`Syntax::hash_comments`].
    #[inline]
    pub fn opened_by(b: u8, syntax: Syntax) -> Option<Comment> {
        match b {
            b'/' if syntax.comments => Some(Comment::Slash),
            b'#' if syntax.hash_comments => Some(Comment::Line),
            _ => None,
        }
    }
}

/// The comment of `syntax` that begins at `bytes[at]`, read whole; `None` if none does (a `/` not
/// followed by `/` or `*`). For a reader holding the whole text.
#[inline]
pub fn comment_at(bytes: &[u8], at: usize, syntax: Syntax) -> Option<Found> {
    let mut comment = Comment::opened_by(*bytes.get(at)?, syntax)?;
    let (end, ended) = match comment.read(bytes, at + 1) {
        Read::NoComment(_) => return None,
        Read::More if comment == Comment::Slash => return None,
        Read::More => (bytes.len(), false),
        Read::Ended(end) => (end, true),
    };
    let block = matches!(comment, Comment::Block { .. });
    Some(Found {
        block,
        end,
        cut: block && !ended,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str, syntax: Syntax) -> Option<(bool, usize, bool)> {
        comment_at(text.as_bytes(), 0, syntax).map(|f| (f.block, f.end, f.cut))
    }

    #[test]
    fn a_comment_read_whole() {
        let lenient = Syntax::LENIENT;
        assert_eq!(found("// a\nb", lenient), Some((false, 4, false)));
        assert_eq!(found("// a", lenient), Some((false, 4, false)));
        assert_eq!(found("/* a */b", lenient), Some((true, 7, false)));
        assert_eq!(found("/**/", lenient), Some((true, 4, false)));
        assert_eq!(found("/*/ x", lenient), Some((true, 5, true)));
        assert_eq!(found("/* a", lenient), Some((true, 4, true)));
        assert_eq!(found("/* a **", lenient), Some((true, 7, true)));
        assert_eq!(found("/* ** / */", lenient), Some((true, 10, false)));
        assert_eq!(found("/* a\n b */", lenient), Some((true, 10, false)));
        for text in ["/", "/x", "/ /", "x", "", "# a"] {
            assert_eq!(found(text, lenient), None, "{text}");
        }
        assert_eq!(found("// a", Syntax::STRICT), None);
        let hash = Syntax {
            hash_comments: true,
            ..Syntax::STRICT
        };
        assert_eq!(found("# a\n", hash), Some((false, 3, false)));
        assert_eq!(found("#", hash), Some((false, 1, false)));
        assert_eq!(comment_at(b"x // a", 2, lenient).map(|f| f.end), Some(6));
        assert_eq!(comment_at(b"x", 3, lenient), None);
    }

    /// The comment read from `text[1..]` (after its `/` or `#`) in pieces cut at `cuts`: where it
    /// ended (an offset in `text`), or `None` if it runs to the end; `Err` with the offset when
    /// the `/` opened none.
    fn read_in_pieces(text: &[u8], first: Comment, cuts: &[usize]) -> Result<Option<usize>, usize> {
        let mut comment = first;
        let mut base = 1;
        let ends = cuts.iter().copied().chain([text.len()]);
        for end in ends {
            let piece = &text[base..end];
            match comment.read(piece, 0) {
                Read::More => {}
                Read::Ended(at) => return Ok(Some(base + at)),
                Read::NoComment(at) => return Err(base + at),
            }
            base = end;
        }
        Ok(None)
    }

    #[test]
    fn cut_at_any_byte_a_comment_ends_where_it_does_whole() {
        let texts = [
            "// line\nnext",
            "// no newline",
            "/* block */ after",
            "/* stars ** and / slashes ***/x",
            "/**/",
            "/*/ not closed",
            "/* cut *",
            "/x word",
            "/",
            "// a */ b\n",
        ];
        for text in texts {
            let bytes = text.as_bytes();
            let whole = read_in_pieces(bytes, Comment::Slash, &[]);
            for cut in 1..=bytes.len() {
                assert_eq!(
                    read_in_pieces(bytes, Comment::Slash, &[cut]),
                    whole,
                    "{text:?} cut at {cut}"
                );
                for second in cut..=bytes.len() {
                    assert_eq!(
                        read_in_pieces(bytes, Comment::Slash, &[cut, second]),
                        whole,
                        "{text:?} cut at {cut} and {second}"
                    );
                }
            }
            // Byte by byte through `step` alone, the same.
            let mut comment = Comment::Slash;
            let mut stepped = Ok(None);
            for (at, &b) in bytes.iter().enumerate().skip(1) {
                match comment.step(b) {
                    Step::Inside => {}
                    Step::Ended => {
                        stepped = Ok(Some(at + 1));
                        break;
                    }
                    Step::Before => {
                        stepped = Ok(Some(at));
                        break;
                    }
                    Step::NoComment => {
                        stepped = Err(at);
                        break;
                    }
                }
            }
            assert_eq!(stepped, whole, "{text:?} stepped");
            // And as a whole text.
            let found = comment_at(bytes, 0, Syntax::LENIENT);
            match whole {
                Ok(Some(end)) => assert_eq!(found.map(|f| f.end), Some(end), "{text:?}"),
                Ok(None) if bytes.len() > 1 => {
                    assert_eq!(found.map(|f| f.end), Some(bytes.len()), "{text:?}")
                }
                _ => assert_eq!(found, None, "{text:?}"),
            }
        }
        assert_eq!(read_in_pieces(b"/* a */", Comment::Slash, &[]), Ok(Some(7)));
        assert_eq!(read_in_pieces(b"/x", Comment::Slash, &[]), Err(1));
    }

    #[test]
    fn skips_stop_where_a_byte_must_be_stepped() {
        let text = b"ab*c\nd*";
        assert_eq!(Comment::Line.skip(text, 0, false), 4);
        assert_eq!(Comment::Line.skip(text, 5, false), 7);
        assert_eq!(Comment::Block { star: false }.skip(text, 0, false), 2);
        assert_eq!(Comment::Block { star: false }.skip(text, 3, false), 6);
        assert_eq!(Comment::Block { star: false }.skip(text, 3, true), 4);
        assert_eq!(Comment::Block { star: true }.skip(text, 3, false), 3);
        assert_eq!(Comment::Slash.skip(text, 1, false), 1);
    }

    #[test]
    fn what_opens_a_comment() {
        let hash = Syntax {
            hash_comments: true,
            ..Syntax::LENIENT
        };
        assert_eq!(
            Comment::opened_by(b'/', Syntax::LENIENT),
            Some(Comment::Slash)
        );
        assert_eq!(Comment::opened_by(b'/', Syntax::STRICT), None);
        assert_eq!(Comment::opened_by(b'#', Syntax::LENIENT), None);
        assert_eq!(Comment::opened_by(b'#', hash), Some(Comment::Line));
        assert_eq!(Comment::opened_by(b'x', hash), None);
    }
}
