//! Token pieces (bytes) to text, one complete character at a time.

/// Turns token pieces (bytes) into text without splitting a character across two deltas.
#[derive(Debug, Default)]
pub(super) struct Utf8Decoder {
    pending: Vec<u8>,
}

impl Utf8Decoder {
    /// The text completed by `bytes`; an incomplete character at the end waits for the next piece.
    pub(super) fn push(&mut self, bytes: &[u8]) -> String {
        self.pending.extend_from_slice(bytes);
        let mut out = String::new();
        loop {
            match std::str::from_utf8(&self.pending) {
                Ok(s) => {
                    out.push_str(s);
                    self.pending.clear();
                    return out;
                }
                Err(e) => {
                    let (valid, rest) = self.pending.split_at(e.valid_up_to());
                    // SAFETY-free: `valid` is valid UTF-8 by `valid_up_to`.
                    out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                    match e.error_len() {
                        // An incomplete sequence at the end: keep it for the next piece.
                        None => {
                            self.pending = rest.to_vec();
                            return out;
                        }
                        // Bytes that can never be UTF-8: replace them, as a lossy decoder would.
                        Some(bad) => {
                            out.push(char::REPLACEMENT_CHARACTER);
                            self.pending = rest[bad..].to_vec();
                        }
                    }
                }
            }
        }
    }

    /// Whatever is left at the end (an incomplete character becomes U+FFFD).
    pub(super) fn finish(&mut self) -> String {
        let out = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_decoder_holds_a_character_split_across_pieces() {
        let mut d = Utf8Decoder::default();
        let euro = "€".as_bytes(); // three bytes
        assert_eq!(d.push(b"a"), "a");
        assert_eq!(d.push(&euro[..1]), "");
        assert_eq!(d.push(&euro[1..2]), "");
        assert_eq!(d.push(&[euro[2], b'b']), "€b");
        assert_eq!(d.finish(), "");
    }

    #[test]
    fn utf8_decoder_replaces_invalid_bytes_and_flushes_an_incomplete_tail() {
        let mut d = Utf8Decoder::default();
        assert_eq!(d.push(&[b'x', 0xFF, b'y']), "x\u{FFFD}y");
        assert_eq!(d.push(&[0xE2, 0x82]), "");
        assert_eq!(d.finish(), "\u{FFFD}");
    }
}
