#!/usr/bin/env python3
"""Checks a schema cannot say, for the evaluation set's four kinds (invoices, contacts, events,
reviews: examples/data/heldout/schemas/), as an `llm-extract --check-command`.

    llm-extract eval --schema examples/data/heldout/schemas/invoices.json \
        --gold examples/data/eval/invoices.jsonl --check-command 'python3 examples/eval/checks.py'

Reads {"value": VALUE, "input": {"text": TEXT, ...}} on standard input and prints one JSON line per
issue, {"path", "message", "severity"}. The checks go by field name, so they apply to any schema
that uses these names; what a field does not have is not checked. Standard library only.

Hard issues (the model is asked again with the message):
- a string that is a template placeholder ("[Your Name]", "{{ date }}", "<NAME>", "N/A") or empty;
- a value that must be copied from the text (a name, a number, an email, a phone, a city, a product)
  and is not in it;
- a date that is not a day of the calendar, a time that is not one of the clock;
- an invoice total that is no amount the text gives, a currency other than the one the text names;
- a rating other than the one the text gives ("4/5", "three stars", "rated 4").

Soft issues (kept with the value): an email left null when the text gives one (perhaps another
person's), a year the text does not give, a rating the text does not seem to give, a rating that
contradicts the sentiment, a "paid" the text's wording contradicts, a title whose words are mostly
not in the text.
"""

import datetime
import json
import re
import sys
import unicodedata

# Fields whose value is copied from the text, as written there.
COPIED = ("invoice_number", "customer", "name", "company", "city", "product")

PLACEHOLDER_WORDS = {
    "n/a", "na", "tbd", "tba", "unknown", "none", "null", "nil", "undefined", "string",
    "lorem ipsum", "xxx", "john doe", "jane doe", "your name", "name", "company name",
    "customer name", "product name", "city name", "example", "sample",
}

# "[Your Name]", "{{ date }}", "{name}", "<NAME>", "%NAME%", "$NAME".
PLACEHOLDER_SHAPES = re.compile(
    r"\[[^\]]*[A-Za-z][^\]]*\]|\{\{?[^}]*\}\}?|<[^>]*[A-Za-z][^>]*>|%[A-Z_]+%|\$\{?[A-Z_]{2,}\}?"
)

NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
    "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20,
    "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
}
SCALES = {"hundred": 100, "thousand": 1000, "million": 1000000}

CURRENCIES = {
    "EUR": re.compile(r"€|\bEUR\b|\beuros?\b", re.I),
    "USD": re.compile(r"\$|\bUSD\b|\bdollars?\b", re.I),
    "GBP": re.compile(r"£|\bGBP\b|\bpounds?\b", re.I),
    "CHF": re.compile(r"\bCHF\b|\bSwiss francs?\b|\bFr\.", re.I),
}

UNPAID = re.compile(r"\bunpaid\b|\boverdue\b|\bnot (yet )?paid\b|\boutstanding\b|\bplease pay\b|"
                    r"\bpayable\b|\bdue (by|on)\b|\bpay by\b|\bawaiting payment\b", re.I)
PAID = re.compile(r"\b(already )?paid in full\b|\bsettled\b|\breceived\b|\bstatus: paid\b|"
                  r"\bhas been paid\b|\bwas paid\b|\bthank you for your payment\b", re.I)


def normalise(text):
    """Case folded, accents kept, punctuation around words dropped, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(text.split()).strip(" .,;:!?\"'()[]")


def pointer(*keys):
    return "".join("/" + str(k).replace("~", "~0").replace("/", "~1") for k in keys)


class Found:
    def __init__(self):
        self.issues = []

    def hard(self, path, message):
        self.issues.append({"path": path, "message": message, "severity": "hard"})

    def soft(self, path, message):
        self.issues.append({"path": path, "message": message, "severity": "soft"})


def in_text(value, text):
    return normalise(value) in normalise(text)


def digits(text):
    return re.sub(r"\D", "", text)


def amounts(text):
    """Every number the text writes, read with either decimal mark ("1,250.00", "1.250,00", "96.50"),
    or in words ("one thousand two hundred")."""
    found = set()
    for raw in re.findall(r"\d[\d.,' ]*\d|\d", text):
        raw = raw.strip().replace("'", "").replace(" ", "")
        candidates = {raw.replace(",", ""), raw.replace(".", "").replace(",", ".")}
        for candidate in candidates:
            try:
                found.add(float(candidate))
            except ValueError:
                pass
    return found | spelled(text)


def spelled(text):
    """The numbers written in words: each run of number words ("two hundred and fifty") read as one."""
    found, total, current, running = set(), 0, 0, False
    for word in re.findall(r"[a-z]+|[^a-z\s-]", text.lower()) + ["."]:
        if word in NUMBER_WORDS:
            current += NUMBER_WORDS[word]
            running = True
        elif word in SCALES and running:
            if SCALES[word] == 100:
                current = max(current, 1) * 100
            else:
                total += max(current, 1) * SCALES[word]
                current = 0
        elif word == "and" and running:
            continue
        elif running:
            found.add(float(total + current))
            total, current, running = 0, 0, False
    return found


def words_in_text(value, text):
    """Whether every word of `value` is a word of `text` (in any order: "Moka pot from Bialetti")."""
    known = set(re.findall(r"\w+", normalise(text)))
    return all(word in known for word in re.findall(r"\w+", normalise(value)))


def placeholders(value, text, found, path=()):
    """Hard: strings that are placeholders or empty, at any depth."""
    if isinstance(value, dict):
        for key, inner in value.items():
            placeholders(inner, text, found, path + (key,))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            placeholders(inner, text, found, path + (i,))
    elif isinstance(value, str):
        where = pointer(*path)
        if not value.strip():
            found.hard(where, "is empty: give the value from the text (or null if the text gives none "
                              "and the field allows it)")
            return
        shape = PLACEHOLDER_SHAPES.search(value)
        if shape and shape.group(0) not in text:
            found.hard(where, f"{value!r} is a template placeholder, not a value: copy the value from "
                              "the text (or null if the text gives none and the field allows it)")
        elif normalise(value) in PLACEHOLDER_WORDS and not in_text(value, text):
            found.hard(where, f"{value!r} stands in for a value: copy the value from the text (or "
                              "null if the text gives none and the field allows it)")


def copied(value, text, found):
    """Hard: values that must be copied from the text and are not in it."""
    for field in COPIED:
        got = value.get(field)
        exact = field == "invoice_number"
        if not isinstance(got, str) or not got.strip():
            continue
        if not (in_text(got, text) if exact else in_text(got, text) or words_in_text(got, text)):
            found.hard(pointer(field), f"{got!r} is not in the text: copy the {field.replace('_', ' ')} "
                                       "as the text writes it")
    email = value.get("email")
    emails = re.findall(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+", text)
    if isinstance(email, str) and email.strip():
        if email.casefold() not in text.casefold():
            found.hard("/email", f"{email!r} is not in the text: copy the email address as written")
    elif "email" in value and email is None and emails:
        found.soft("/email", f"the text gives an email address ({emails[0]}), perhaps another person's")
    phone = value.get("phone")
    if isinstance(phone, str) and phone.strip():
        wanted = digits(phone)
        if len(wanted) < 3 or wanted not in digits(text):
            found.hard("/phone", f"{phone!r} is not a phone number in the text: copy it as written")


def calendar(value, text, found):
    """Hard: dates and times that do not exist; soft: a year the text does not give."""
    for field in ("date", "due_date", "start_date", "end_date"):
        got = value.get(field)
        if not isinstance(got, str):
            continue
        try:
            day = datetime.date.fromisoformat(got)
        except ValueError:
            found.hard(pointer(field), f"{got!r} is not a day of the calendar: write YYYY-MM-DD")
            continue
        if str(day.year) not in text and str(day.year % 100).zfill(2) not in text:
            found.soft(pointer(field), f"the year {day.year} is not in the text")
    for field in ("time", "start_time", "end_time"):
        got = value.get(field)
        if isinstance(got, str):
            match = re.fullmatch(r"(\d{2}):(\d{2})", got)
            if not match or int(match.group(1)) > 23 or int(match.group(2)) > 59:
                found.hard(pointer(field), f"{got!r} is not a time of day: write HH:MM, 00:00 to 23:59")
    starts = [value.get(k) for k in ("start_date", "start") if isinstance(value.get(k), str)]
    ends = [value.get(k) for k in ("end_date", "end") if isinstance(value.get(k), str)]
    if starts and ends and ends[0] < starts[0]:
        found.hard("/end_date" if "end_date" in value else "/end",
                   f"the end {ends[0]} comes before the start {starts[0]}")


def invoice(value, text, found):
    total = value.get("total")
    if isinstance(total, (int, float)) and not isinstance(total, bool):
        written = amounts(text)
        lines = value.get("lines") or value.get("items")
        if isinstance(lines, list):
            line_totals = [line.get("amount", line.get("total")) for line in lines if isinstance(line, dict)]
            line_totals = [x for x in line_totals if isinstance(x, (int, float))]
            if line_totals and abs(sum(line_totals) - total) > 0.01 + 1e-6 * abs(total):
                found.hard("/total", f"the total {total} is not the sum of the lines, {sum(line_totals):.2f}")
        elif not any(abs(total - amount) <= 0.005 for amount in written):
            found.hard("/total", f"{total} is not an amount the text gives: copy the total from the text")
    currency = value.get("currency")
    if isinstance(currency, str):
        named = [code for code, pattern in CURRENCIES.items() if pattern.search(text)]
        if len(named) == 1 and currency != named[0]:
            found.hard("/currency", f"the text gives the amount in {named[0]}, not {currency}")
        elif not named:
            found.soft("/currency", "the text names no currency")
    paid = value.get("paid")
    if isinstance(paid, bool):
        says_unpaid, says_paid = bool(UNPAID.search(text)), bool(PAID.search(text))
        if paid and says_unpaid and not says_paid:
            found.soft("/paid", "the text asks for payment, yet paid is true")
        if not paid and says_paid and not says_unpaid:
            found.soft("/paid", "the text says the invoice is paid, yet paid is false")


def review(value, text, found):
    rating = value.get("rating")
    written = None
    number = r"(\d|" + "|".join(list(NUMBER_WORDS)[:6]) + r")"
    match = re.search(number + r"\s*(?:/|out of)\s*(?:5|five)\b|\b" + number + r"\s*-?\s*stars?\b|"
                      r"\brat(?:ed|ing)\D{0,12}(\d)\b", text, re.I)
    if match:
        got = next(g for g in match.groups() if g).lower()
        written = int(got) if got.isdigit() else NUMBER_WORDS[got]
    elif "★" in text:
        written = text.count("★")
    if isinstance(rating, int) and not isinstance(rating, bool):
        if written is not None and 1 <= written <= 5 and rating != written:
            found.hard("/rating", f"the text gives {written} stars, not {rating}")
        elif written is None and str(rating) not in text:
            found.soft("/rating", f"the text gives no rating that reads as {rating} stars")
        sentiment = value.get("sentiment")
        if sentiment == "positive" and rating <= 2 or sentiment == "negative" and rating >= 4:
            found.soft("/sentiment", f"{sentiment} with {rating} stars")
    elif rating is None and written is not None and 1 <= written <= 5:
        found.hard("/rating", f"the text gives {written} stars")


def title(value, text, found):
    got = value.get("title")
    if isinstance(got, str) and got.strip():
        words = re.findall(r"\w+", normalise(got))
        known = normalise(text)
        missing = [w for w in words if w not in known]
        if words and len(missing) * 2 > len(words):
            found.soft("/title", f"most words of {got!r} are not in the text")


def check(payload):
    value = payload.get("value")
    text = (payload.get("input") or {}).get("text") or ""
    if not isinstance(text, str):
        text = json.dumps(text)
    found = Found()
    placeholders(value, text, found)
    if isinstance(value, dict):
        copied(value, text, found)
        calendar(value, text, found)
        if "total" in value or "currency" in value:
            invoice(value, text, found)
        if "rating" in value:
            review(value, text, found)
        title(value, text, found)
        # One issue per field: the first found (a placeholder before the rest) says the most.
        seen, kept = set(), []
        for issue in found.issues:
            if issue["path"] not in seen:
                seen.add(issue["path"])
                kept.append(issue)
        found.issues = kept
    return found.issues


def main():
    try:
        payload = json.load(sys.stdin)
    except json.JSONDecodeError as e:
        print(f"checks.py: standard input is not JSON: {e}", file=sys.stderr)
        return 2
    for issue in check(payload):
        print(json.dumps(issue, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
