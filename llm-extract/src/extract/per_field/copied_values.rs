//! Values copied from a text, read as the schema's type by code: a date in a common written form as ISO
//! `YYYY-MM-DD`, a time of day as `HH:MM`, an amount with a currency symbol and thousands separators as a
//! number, a count written in digits or as a word as an integer. The per-field strategy
//! ([`Strategy::PerField`](crate::extract::Strategy::PerField)) copies the span, then reads it here; a span these
//! cannot read gives `None`, never a guess. Each reader is linear in its input.

/// The months by their English names and usual abbreviations, numbered from 1.
const MONTHS: [(&str, u32); 24] = [
    ("january", 1),
    ("february", 2),
    ("march", 3),
    ("april", 4),
    ("may", 5),
    ("june", 6),
    ("july", 7),
    ("august", 8),
    ("september", 9),
    ("october", 10),
    ("november", 11),
    ("december", 12),
    ("jan", 1),
    ("feb", 2),
    ("mar", 3),
    ("apr", 4),
    ("jun", 6),
    ("jul", 7),
    ("aug", 8),
    ("sep", 9),
    ("sept", 9),
    ("oct", 10),
    ("nov", 11),
    ("dec", 12),
];

/// Ordinal and cardinal words up to 31 (a day of the month, a rating, a count).
const NUMBER_WORDS: [(&str, u32); 40] = [
    ("one", 1),
    ("two", 2),
    ("three", 3),
    ("four", 4),
    ("five", 5),
    ("six", 6),
    ("seven", 7),
    ("eight", 8),
    ("nine", 9),
    ("ten", 10),
    ("eleven", 11),
    ("twelve", 12),
    ("first", 1),
    ("second", 2),
    ("third", 3),
    ("fourth", 4),
    ("fifth", 5),
    ("sixth", 6),
    ("seventh", 7),
    ("eighth", 8),
    ("ninth", 9),
    ("tenth", 10),
    ("eleventh", 11),
    ("twelfth", 12),
    ("thirteenth", 13),
    ("fourteenth", 14),
    ("fifteenth", 15),
    ("sixteenth", 16),
    ("seventeenth", 17),
    ("eighteenth", 18),
    ("nineteenth", 19),
    ("twentieth", 20),
    ("thirtieth", 30),
    ("thirteen", 13),
    ("fourteen", 14),
    ("fifteen", 15),
    ("sixteen", 16),
    ("seventeen", 17),
    ("eighteen", 18),
    ("nineteen", 19),
];

/// The words of `text`, lowercased: runs of letters and digits.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

fn month(word: &str) -> Option<u32> {
    MONTHS
        .iter()
        .find(|(name, _)| *name == word)
        .map(|(_, m)| *m)
}

fn number_word(word: &str) -> Option<u32> {
    NUMBER_WORDS
        .iter()
        .find(|(name, _)| *name == word)
        .map(|(_, n)| *n)
}

/// A day of the month written as `4`, `4th`, `fourth`, or `twenty`/`thirty` before the next word
/// (`twenty first`).
fn day(word: &str, next: Option<&str>) -> Option<u32> {
    let digits = word.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &word[digits.len()..];
    if !digits.is_empty()
        && digits.len() <= 2
        && digits.bytes().all(|b| b.is_ascii_digit())
        && ["", "st", "nd", "rd", "th"].contains(&suffix)
    {
        return digits.parse().ok().filter(|d| (1..=31).contains(d));
    }
    let tens = match word {
        "twenty" => 20,
        "thirty" => 30,
        _ => return number_word(word).filter(|d| *d <= 31),
    };
    let unit = next.and_then(number_word).filter(|u| *u <= 9).unwrap_or(0);
    Some(tens + unit).filter(|d| *d <= 31)
}

/// The days in `month` of `year`.
fn days_in(year: u32, month: u32) -> u32 {
    match month {
        2 if (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400) => {
            29
        }
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

fn iso(year: u32, month: u32, day: u32) -> Option<String> {
    ((1..=12).contains(&month) && day >= 1 && day <= days_in(year, month) && year >= 1000)
        .then(|| format!("{year:04}-{month:02}-{day:02}"))
}

/// A date in a common written form as `YYYY-MM-DD`: `2025-03-15`, `2025/03/15`, `15/03/2025` and
/// `15.03.2025` (day first unless the first number cannot be a month's day... or the second cannot be a
/// month), `4 April 2025`, `April 4, 2025`, `Sunday, the fourteenth of September 2025`, `Apr 4th 2025`.
/// A date without a year is `None`: the year is not in the text, and a guess is worse than a null.
pub fn date(text: &str) -> Option<String> {
    let words = words(text);
    // Numeric forms: three numbers in a row, one of them a four-digit year.
    let numbers: Vec<&str> = words
        .iter()
        .map(String::as_str)
        .filter(|w| w.bytes().all(|b| b.is_ascii_digit()))
        .collect();
    if let Some(m) = words.iter().position(|w| month(w).is_some()) {
        let month = words.get(m).and_then(|w| month(w))?;
        let year: u32 = words
            .iter()
            .find(|w| w.len() == 4 && w.bytes().all(|b| b.is_ascii_digit()))?
            .parse()
            .ok()?;
        // The day: the nearest day-like word before the month ("4 April", "the fourth of April"),
        // else the first after it ("April 4").
        let before = (0..m).rev().find_map(|i| {
            let word = words.get(i)?;
            if word.len() == 4 {
                return None;
            }
            day(word, words.get(i + 1).map(String::as_str)).map(|d| (i, d))
        });
        let before = before.map(|(i, d)| {
            // "twenty first": the tens word came first.
            match words.get(i.wrapping_sub(1)).map(String::as_str) {
                Some("twenty") if d < 10 => 20 + d,
                Some("thirty") if d < 10 => 30 + d,
                _ => d,
            }
        });
        let after = || {
            (m + 1..words.len()).find_map(|i| {
                let word = words.get(i)?;
                (word.len() <= 4 && !(word.len() == 4 && word.bytes().all(|b| b.is_ascii_digit())))
                    .then(|| day(word, words.get(i + 1).map(String::as_str)))
                    .flatten()
            })
        };
        let day = before.or_else(after)?;
        return iso(year, month, day);
    }
    match numbers.as_slice() {
        [y, m, d, ..] if y.len() == 4 => iso(y.parse().ok()?, m.parse().ok()?, d.parse().ok()?),
        [a, b, y, ..] if y.len() == 4 => {
            let (a, b): (u32, u32) = (a.parse().ok()?, b.parse().ok()?);
            let (day, month) = if b > 12 { (b, a) } else { (a, b) };
            iso(y.parse().ok()?, month, day)
        }
        _ => None,
    }
}

/// A time of day as `HH:MM` on a 24-hour clock: `18:30`, `9 am`, `9:30 pm`, `14h00`, `14.00`, `noon`,
/// `midnight`. `None` when the text has no hour.
pub fn time(text: &str) -> Option<String> {
    let lower = text.to_lowercase();
    if lower.contains("noon") || lower.contains("midday") {
        return Some("12:00".into());
    }
    if lower.contains("midnight") {
        return Some("00:00".into());
    }
    let bytes = lower.as_bytes();
    let start = bytes.iter().position(u8::is_ascii_digit)?;
    let rest = lower.get(start..)?;
    let hour_digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let mut hour: u32 = hour_digits.parse().ok()?;
    let after = rest.get(hour_digits.len()..).unwrap_or_default();
    let mut minute = 0;
    let mut tail = after;
    if let Some(sep) = after.chars().next().filter(|c| [':', '.', 'h'].contains(c)) {
        let digits: String = after
            .get(sep.len_utf8()..)
            .unwrap_or_default()
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if digits.len() == 2 {
            minute = digits.parse().ok()?;
            tail = after.get(sep.len_utf8() + 2..).unwrap_or_default();
        }
    }
    let tail = tail.trim_start().replace('.', "");
    if tail.starts_with("pm") || tail.starts_with("p m") {
        if hour < 12 {
            hour += 12;
        }
    } else if (tail.starts_with("am") || tail.starts_with("a m")) && hour == 12 {
        hour = 0;
    }
    (hour < 24 && minute < 60).then(|| format!("{hour:02}:{minute:02}"))
}

/// An amount as a number: currency symbols, codes and words dropped, thousands separators read (`1,250.00`,
/// `2.400,00`, `1 250`, `1'250`), the decimal separator the last `.` or `,` that is not followed by exactly
/// three digits as a thousands group would be. A minus sign or parentheses make it negative. `None` when
/// there is no digit.
///
/// Where the text holds several numbers and a currency (a symbol, an ISO code, `dollars`, `euros`), the
/// number nearest the currency is read (`invoice 2024-117, amount $348.20` is 348.2).
pub fn amount(text: &str) -> Option<f64> {
    let starts: Vec<usize> = text
        .char_indices()
        .filter(|(i, c)| {
            c.is_ascii_digit()
                && !text
                    .get(..*i)
                    .and_then(|b| b.chars().next_back())
                    .is_some_and(|p| {
                        p.is_ascii_digit()
                            || matches!(p, '.' | ',' | '\'' | '\u{a0}' | '\u{202f}')
                            || (p == ' '
                                && text
                                    .get(..i - 1)
                                    .and_then(|b| b.chars().next_back())
                                    .is_some_and(|q| q.is_ascii_digit()))
                    })
        })
        .map(|(i, _)| i)
        .collect();
    let lower = text.to_lowercase();
    let currencies: Vec<usize> = CURRENCIES
        .iter()
        .flat_map(|c| lower.match_indices(c).map(|(i, _)| i))
        .collect();
    let distance = |start: usize| {
        currencies
            .iter()
            .map(|c| c.abs_diff(start))
            .min()
            .unwrap_or(0)
    };
    let start = starts.iter().copied().min_by_key(|s| distance(*s))?;
    amount_at(text, start)
}

/// Currency symbols and names, lowercased.
const CURRENCIES: [&str; 14] = [
    "$", "€", "£", "¥", "eur", "usd", "gbp", "chf", "jpy", "dollar", "euro", "pound", "franc",
    "yen",
];

/// The amount whose first digit is at byte `start` of `text`.
fn amount_at(text: &str, start: usize) -> Option<f64> {
    let negative = text
        .get(..start)
        .is_some_and(|before| before.trim_end().ends_with('-') || before.trim_end().ends_with('('));
    // The number: digits and the separators between them (a space or an apostrophe only between digit
    // groups).
    let mut number = String::new();
    let chars: Vec<char> = text.get(start..)?.chars().collect();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        let next_digit = chars.get(i + 1).is_some_and(char::is_ascii_digit);
        if c.is_ascii_digit() {
            number.push(c);
        } else if matches!(c, '.' | ',' | ' ' | '\'' | '\u{a0}' | '\u{202f}') && next_digit {
            number.push(if c == '.' || c == ',' { c } else { '_' });
        } else {
            break;
        }
        i += 1;
    }
    // The decimal separator: where `.` and `,` both occur, the last of them; where one occurs once, it
    // unless exactly three digits follow (a thousands group, `1,250`); where one occurs more often, none.
    let marks: Vec<(usize, char)> = number
        .char_indices()
        .filter(|(_, c)| matches!(c, '.' | ','))
        .collect();
    let decimal = match marks.as_slice() {
        [] => None,
        [.., (at, last)] => {
            let mixed = marks.iter().any(|(_, c)| c != last);
            let once = marks.len() == 1;
            let group = number
                .get(at + 1..)
                .unwrap_or_default()
                .chars()
                .take_while(char::is_ascii_digit)
                .count();
            (mixed || (once && group != 3)).then_some(*at)
        }
    };
    let mut plain = String::new();
    for (position, c) in number.char_indices() {
        if c.is_ascii_digit() {
            plain.push(c);
        } else if Some(position) == decimal {
            plain.push('.');
        }
    }
    let value: f64 = plain.parse().ok()?;
    Some(if negative { -value } else { value })
}

/// A whole number: the first number of the text (`5/5` is 5, `4.0` is 4) or a number word (`Three
/// stars` is 3). `None` when there is neither, or the number has a fraction.
pub fn integer(text: &str) -> Option<i64> {
    if let Some(start) = text.find(|c: char| c.is_ascii_digit()) {
        let negative = text
            .get(..start)
            .is_some_and(|b| b.trim_end().ends_with('-'));
        let rest = text.get(start..)?;
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let after = rest.get(digits.len()..).unwrap_or_default();
        let fraction: String = after
            .strip_prefix('.')
            .unwrap_or_default()
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if !fraction.is_empty() && fraction.bytes().any(|b| b != b'0') {
            return None;
        }
        let value: i64 = digits.parse().ok()?;
        return Some(if negative { -value } else { value });
    }
    words(text)
        .iter()
        .find_map(|w| number_word(w))
        .map(i64::from)
}

/// A copied string cut to the part that answers: a small model often copies on past the answer
/// (`Harbor Logistics Ltd: total due 1,250.00 EUR`), so the copy ends at its first clause break (`: `,
/// `; `, `, `, ` - `, ` (`, a sentence end, a line end); an identifier (a field named `..._id`,
/// `number`, `reference`, `code`, `no`) is the first word of the copy with a digit in it, where there is
/// one (`Invoice INV-2041 for` is `INV-2041`).
pub fn clause(field: &str, copy: &str) -> String {
    let field = field.to_lowercase();
    let is_id = field
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| ["id", "number", "reference", "ref", "code", "no", "num"].contains(&w))
        || field.ends_with("id");
    let mut cut = copy.len();
    for stop in [
        ": ", "; ", ", ", " - ", " – ", " (", ". ", "! ", "? ", "\n", " | ",
    ] {
        if let Some(at) = copy.find(stop) {
            cut = cut.min(at);
        }
    }
    let head = copy.get(..cut).unwrap_or(copy).trim();
    let head = head.trim_end_matches(['.', ',', ';', ':', '!', '?']).trim();
    let head = if head.is_empty() { copy.trim() } else { head };
    if is_id {
        if let Some(word) = copy
            .split_whitespace()
            .map(|w| w.trim_matches(|c: char| matches!(c, ',' | '.' | ';' | ':' | '(' | ')' | '"')))
            .find(|w| w.chars().any(|c| c.is_ascii_digit()))
        {
            return word.to_string();
        }
    }
    head.to_string()
}

/// The email address in a copy: its first word with an `@` and a dot after it, without the punctuation
/// around it (`Dana at dana@brightpath.io.` is `dana@brightpath.io`).
pub fn email(copy: &str) -> Option<String> {
    copy.split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .find(|w| {
            w.split_once('@')
                .is_some_and(|(user, host)| !user.is_empty() && host.contains('.'))
        })
        .map(str::to_owned)
}

/// The phone number in a copy, as written: its longest run of digits, spaces, `+`, `-`, `.`, `(` and
/// `)` with at least six digits (`call +1 415 555 0142 today` is `+1 415 555 0142`).
pub fn phone(copy: &str) -> Option<String> {
    let is_part = |c: char| c.is_ascii_digit() || matches!(c, ' ' | '+' | '-' | '.' | '(' | ')');
    let mut best: Option<&str> = None;
    let mut start = None;
    for (i, c) in copy
        .char_indices()
        .chain(std::iter::once((copy.len(), '\u{0}')))
    {
        match (is_part(c) && c != '\u{0}', start) {
            (true, None) => start = Some(i),
            (false, Some(from)) => {
                start = None;
                let run = copy
                    .get(from..i)
                    .unwrap_or_default()
                    .trim_matches(|c: char| matches!(c, ' ' | '-' | '.'));
                let run = run.trim_end_matches('(').trim();
                let digits = run.chars().filter(char::is_ascii_digit).count();
                if digits >= 6 && best.is_none_or(|b| b.len() < run.len()) {
                    best = Some(run);
                }
            }
            _ => {}
        }
    }
    best.map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn dates_in_common_written_forms() {
        for (text, want) in [
            ("2025-03-15", "2025-03-15"),
            ("by 2025/03/15", "2025-03-15"),
            ("15/03/2025", "2025-03-15"),
            ("03/15/2025", "2025-03-15"),
            ("15.03.2025", "2025-03-15"),
            ("4 April 2025", "2025-04-04"),
            ("April 4, 2025", "2025-04-04"),
            ("Apr 4th 2025", "2025-04-04"),
            ("1 February 2025", "2025-02-01"),
            ("Sunday, the fourteenth of September 2025", "2025-09-14"),
            ("the thirtieth of June 2025", "2025-06-30"),
            ("the twenty first of March 2024", "2024-03-21"),
            ("29 February 2024", "2024-02-29"),
        ] {
            assert_eq!(date(text).as_deref(), Some(want), "{text}");
        }
    }

    #[test]
    fn dates_without_a_year_or_impossible_are_none() {
        for text in [
            "2 May",
            "settled on 2 May",
            "31 April 2025",
            "29 February 2025",
            "soon",
            "",
        ] {
            assert_eq!(date(text), None, "{text}");
        }
    }

    #[test]
    fn times_of_day() {
        for (text, want) in [
            ("18:30", "18:30"),
            ("9 am", "09:00"),
            ("9:30 pm", "21:30"),
            ("at 7pm", "19:00"),
            ("12 am", "00:00"),
            ("14h00", "14:00"),
            ("14.00", "14:00"),
            ("noon", "12:00"),
        ] {
            assert_eq!(time(text).as_deref(), Some(want), "{text}");
        }
        assert_eq!(time("online"), None);
        assert_eq!(time("25:00"), None);
    }

    #[test]
    fn amounts_with_symbols_and_separators() {
        for (text, want) in [
            ("1,250.00 EUR", 1250.0),
            ("$348.20", 348.2),
            ("£96.50", 96.5),
            ("EUR 2,400.00", 2400.0),
            ("19 CHF", 19.0),
            ("2.400,00 €", 2400.0),
            ("1.234.567", 1_234_567.0),
            ("1,25", 1.25),
            ("1 250,50", 1250.5),
            ("CHF 1'250", 1250.0),
            ("-42.5", -42.5),
            ("(1,000.00)", -1000.0),
            ("0.99", 0.99),
            ("12 x toner at 45.00", 12.0),
            ("invoice 2024-117, amount $348.20", 348.2),
            ("12 x toner at 45.00 EUR", 45.0),
            ("1 250 dollars", 1250.0),
        ] {
            assert_eq!(amount(text), Some(want), "{text}");
        }
        assert_eq!(amount("two hundred"), None);
    }

    #[test]
    fn a_copy_ends_at_its_first_clause_break() {
        assert_eq!(
            clause("customer", "Harbor Logistics Ltd: total due 1,250.00 EUR"),
            "Harbor Logistics Ltd"
        );
        assert_eq!(
            clause("customer", "Maple & Finch Bakery"),
            "Maple & Finch Bakery"
        );
        assert_eq!(clause("city", "Berlin."), "Berlin");
        assert_eq!(
            clause("invoice_number", "Invoice INV-2041 for Harbor"),
            "INV-2041"
        );
        assert_eq!(
            clause("invoice_number", "2024-117, amount $348.20"),
            "2024-117"
        );
        assert_eq!(clause("customerId", "no number here"), "no number here");
    }

    #[test]
    fn emails_and_phones_in_a_copy() {
        assert_eq!(
            email("Dana Whitfield at dana.whitfield@brightpath.io or").as_deref(),
            Some("dana.whitfield@brightpath.io")
        );
        assert_eq!(
            email("<k.osei@gmail.com>.").as_deref(),
            Some("k.osei@gmail.com")
        );
        assert_eq!(email("Marco Bellini"), None);
        assert_eq!(
            phone("reach me at +1 415 555 0142 today").as_deref(),
            Some("+1 415 555 0142")
        );
        assert_eq!(phone("(617) 555-0199.").as_deref(), Some("(617) 555-0199"));
        assert_eq!(phone("08-123 456 78").as_deref(), Some("08-123 456 78"));
        assert_eq!(phone("Room 12, 2025"), None);
        assert_eq!(phone("Jim Cole"), None);
    }

    #[test]
    fn integers_in_digits_or_words() {
        assert_eq!(integer("5/5"), Some(5));
        assert_eq!(integer("4.0 stars"), Some(4));
        assert_eq!(integer("Three stars"), Some(3));
        assert_eq!(integer("4.5"), None);
        assert_eq!(integer("no rating"), None);
    }

    proptest! {
        #[test]
        fn an_iso_date_reads_as_itself(y in 1000u32..3000, m in 1u32..=12, d in 1u32..=28) {
            let text = format!("{y:04}-{m:02}-{d:02}");
            prop_assert_eq!(date(&text), Some(text.clone()));
        }

        #[test]
        fn a_written_date_reads_as_its_iso_form(y in 1000u32..3000, m in 0usize..12, d in 1u32..=28) {
            let (name, number) = MONTHS[m];
            let want = format!("{y:04}-{number:02}-{d:02}");
            prop_assert_eq!(date(&format!("{d} {name} {y}")), Some(want.clone()));
            prop_assert_eq!(date(&format!("{name} {d}, {y}")), Some(want));
        }

        #[test]
        fn an_amount_with_thousands_separators_reads_as_its_number(
            whole in 0u64..10_000_000_000, cents in 0u64..100, symbol in prop::sample::select(vec!["$", "€", "EUR ", "", "£"])
        ) {
            let mut grouped = String::new();
            let digits = whole.to_string();
            for (i, c) in digits.chars().enumerate() {
                if i > 0 && (digits.len() - i) % 3 == 0 {
                    grouped.push(',');
                }
                grouped.push(c);
            }
            let text = format!("{symbol}{grouped}.{cents:02}");
            let want = whole as f64 + cents as f64 / 100.0;
            let got = amount(&text).unwrap();
            prop_assert!((got - want).abs() < 1e-6 * want.max(1.0), "{} -> {}", text, got);
            // The European way round reads the same.
            let european = format!("{}{},{cents:02}", symbol, grouped.replace(',', "."));
            let got = amount(&european).unwrap();
            prop_assert!((got - want).abs() < 1e-6 * want.max(1.0), "{} -> {}", european, got);
        }

        #[test]
        fn any_text_is_read_in_linear_time_without_panicking(text in ".{0,200}") {
            let _ = (date(&text), time(&text), amount(&text), integer(&text));
        }
    }
}
