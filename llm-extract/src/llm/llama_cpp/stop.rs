//! Stop strings, found in the answer as it streams.

/// Finds stop strings in the answer as it streams, holding back text that may be the start of one.
#[derive(Debug, Default)]
pub(super) struct StopScanner {
    stops: Vec<String>,
    held: String,
    stopped: bool,
}

impl StopScanner {
    pub(super) fn new(stops: &[String]) -> Self {
        StopScanner {
            stops: stops.iter().filter(|s| !s.is_empty()).cloned().collect(),
            held: String::new(),
            stopped: false,
        }
    }

    /// Adds `text`; returns what can be emitted now and whether a stop string was found (the stop string
    /// and everything after it are dropped).
    pub(super) fn push(&mut self, text: &str) -> (String, bool) {
        if self.stopped {
            return (String::new(), true);
        }
        if self.stops.is_empty() {
            return (text.to_owned(), false);
        }
        self.held.push_str(text);
        if let Some(at) = self
            .stops
            .iter()
            .filter_map(|s| self.held.find(s.as_str()))
            .min()
        {
            self.stopped = true;
            let emit = self.held[..at].to_owned();
            self.held.clear();
            return (emit, true);
        }
        // Keep the longest tail that could still grow into a stop string.
        let keep_from = self
            .held
            .char_indices()
            .map(|(i, _)| i)
            .find(|&i| {
                let tail = &self.held[i..];
                self.stops.iter().any(|s| s.starts_with(tail))
            })
            .unwrap_or(self.held.len());
        let emit = self.held[..keep_from].to_owned();
        self.held.replace_range(..keep_from, "");
        (emit, false)
    }

    /// What is still held at the end of the answer, after `text` (the decoder's last bytes).
    pub(super) fn finish(&mut self, text: &str) -> String {
        let (mut out, stopped) = self.push(text);
        if !stopped {
            out.push_str(&std::mem::take(&mut self.held));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_scanner_holds_a_possible_prefix_and_cuts_at_the_stop() {
        let mut s = StopScanner::new(&["END".to_string()]);
        assert_eq!(s.push("abc E"), ("abc ".to_string(), false));
        assert_eq!(s.push("N"), (String::new(), false));
        assert_eq!(s.push("Dxyz"), (String::new(), true));
        assert_eq!(s.finish(""), "");
    }

    #[test]
    fn stop_scanner_releases_a_false_start() {
        let mut s = StopScanner::new(&["END".to_string()]);
        assert_eq!(s.push("EN"), (String::new(), false));
        assert_eq!(s.push("x"), ("ENx".to_string(), false));
        assert_eq!(s.push("E"), (String::new(), false));
        assert_eq!(s.finish(""), "E");
    }

    #[test]
    fn stop_scanner_without_stops_passes_text_through() {
        let mut s = StopScanner::new(&[]);
        assert_eq!(s.push("é"), ("é".to_string(), false));
        assert_eq!(s.finish(""), "");
    }
}
