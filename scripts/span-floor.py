#!/usr/bin/env python3
"""The floor of a copying extraction: the share of an evaluation set's gold values that a strategy which
copies spans of the text and reads them by code can reach at all.

Each gold leaf of each document is put in one class:
- null: the gold value is null (reached by answering "not in the text");
- choice: an enum or a boolean (chosen among the schema's options, always reachable);
- span: a string the text holds (the value or one of its accepted alternatives, case-insensitively);
- read: a number or an ISO date/time the text holds in a written form the per-field readers read
  (a number: a digit run of the text with its separators dropped; a date: the year, the month (by name or
  number) and the day all in the text; a time: its hour in the text);
- unreachable: anything else (an amount in words, a date without its year, a name the text spells otherwise).

usage: scripts/span-floor.py SCHEMA_DIR GOLD_DIR   (e.g. examples/data/heldout/schemas examples/data/eval)"""
import json
import re
import sys

MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september",
          "october", "november", "december"]


def numbers(text):
    out = set()
    for m in re.finditer(r"\d[\d.,' ]*\d|\d", text):
        run = m.group(0).strip()
        for plain in {run.replace(",", "").replace("'", "").replace(" ", ""),
                      run.replace(".", "").replace(" ", "").replace(",", ".")}:
            try:
                out.add(float(plain))
            except ValueError:
                pass
    return out


def date_in(text, iso):
    y, m, d = iso.split("-")
    low = text.lower()
    if iso in text:
        return True
    month_ok = MONTHS[int(m) - 1] in low or MONTHS[int(m) - 1][:3] in low or re.search(rf"\b0?{int(m)}\b", low)
    day_ok = re.search(rf"\b0?{int(d)}(st|nd|rd|th)?\b", low) or int(d) >= 1 and any(
        w in low for w in ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth",
                           "ninth", "tenth", "teenth", "twentieth", "thirtieth", "twenty", "thirty"])
    return bool(y in text and month_ok and day_ok)


def classify(schema, gold, accept, text):
    if gold is None:
        return "null"
    if "enum" in schema or schema.get("type") in ("boolean", ["boolean", "null"]):
        return "choice"
    types = schema.get("type")
    types = types if isinstance(types, list) else [types]
    if "number" in types or "integer" in types:
        return "read" if float(gold) in numbers(text) or (isinstance(gold, int) and str(gold) in text) else "unreachable"
    pattern = schema.get("pattern", "")
    if "{4}-" in pattern:
        return "read" if date_in(text, gold) else "unreachable"
    if ":[0-9]" in pattern:
        h = int(gold.split(":")[0])
        return "read" if re.search(rf"\b0?{h if h <= 12 else h}\b|\b0?{h - 12}\b", text) else "unreachable"
    values = [gold] + list(accept)
    return "span" if any(str(v).lower() in text.lower() for v in values) else "unreachable"


def main():
    schemas, gold_dir = sys.argv[1], sys.argv[2]
    total = {}
    for kind in ["invoices", "contacts", "events", "reviews"]:
        schema = json.load(open(f"{schemas}/{kind}.json"))
        for line in open(f"{gold_dir}/{kind}.jsonl"):
            doc = json.loads(line)
            for field, gold in doc["expected"].items():
                c = classify(schema["properties"][field], gold, doc.get("accept", {}).get(field, []), doc["text"])
                total[c] = total.get(c, 0) + 1
    n = sum(total.values())
    for c in ["span", "read", "choice", "null", "unreachable"]:
        print(f"{c:12} {total.get(c, 0):4} ({100 * total.get(c, 0) / n:.1f}%)")
    reach = n - total.get("unreachable", 0)
    print(f"{'reachable':12} {reach:4} of {n} ({100 * reach / n:.1f}%)")
    copies = total.get("span", 0) + total.get("read", 0)
    print(f"copy-type values (not null, not a choice) that are spans: {copies} of {copies + total.get('unreachable', 0)}")


main()
