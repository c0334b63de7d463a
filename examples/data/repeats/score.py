#!/usr/bin/env python3
"""Scores `llm-extract batch` output on the repeats set (texts whose rows repeat on purpose).

usage: score.py GOLD.jsonl OUT.jsonl [--key lines]

GOLD has one {"id", "text", "value": [row, ...]} per line; OUT is the batch output: with --jsonl each
record's value is the list of rows, else (one value per text) the rows are under value[KEY]. Rows are
compared as multisets, strings trimmed, whitespace collapsed and lowered, numbers as numbers. Printed
per document: rows in the gold value, rows extracted, rows matched, and the rows of repeated gold rows
that were kept (a repeated row counts up to the times the gold value has it); then the totals and the
tokens (median and worst).
"""

import json
import statistics
import sys
from collections import Counter


def norm(value):
    if isinstance(value, str):
        return " ".join(value.split()).lower()
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return round(float(value), 2)
    if isinstance(value, dict):
        return tuple(sorted((k, norm(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(norm(v) for v in value)
    return value


def main():
    args = sys.argv[1:]
    key = None
    if "--key" in args:
        i = args.index("--key")
        key = args[i + 1]
        del args[i : i + 2]
    gold_path, out_path = args
    gold = {}
    for line in open(gold_path, encoding="utf-8"):
        if line.strip():
            case = json.loads(line)
            gold[case["id"]] = case["value"]
    out = {}
    for line in open(out_path, encoding="utf-8"):
        if line.strip():
            record = json.loads(line)
            out[record["id"]] = record
    totals = Counter()
    tokens = []
    for doc, rows in gold.items():
        record = out.get(doc, {})
        value = record.get("value") if record.get("ok") else None
        if key is not None and isinstance(value, dict):
            value = value.get(key)
        got = value if isinstance(value, list) else []
        want = Counter(norm(r) for r in rows)
        have = Counter(norm(r) for r in got)
        matched = sum((want & have).values())
        repeated = {row: n for row, n in want.items() if n > 1}
        kept = sum(min(n, have[row]) for row, n in repeated.items())
        of = sum(repeated.values())
        tokens.append(record.get("tokens", 0))
        marks = "" if record.get("ok") else f" FAILED ({record.get('kind')})"
        if record.get("issues"):
            marks += " doubtful"
        print(
            f"{doc}: gold {len(rows)}, extracted {len(got)}, matched {matched}, "
            f"repeated rows kept {kept}/{of}, tokens {record.get('tokens', 0)}{marks}"
        )
        totals.update(gold=len(rows), got=len(got), matched=matched, kept=kept, of=of)
        totals["ok"] += bool(record.get("ok"))
    print(
        f"total: {totals['ok']}/{len(gold)} valid, rows {totals['matched']}/{totals['gold']} matched "
        f"({totals['got']} extracted), repeated rows kept {totals['kept']}/{totals['of']}, "
        f"tokens median {statistics.median(tokens) if tokens else 0}, worst {max(tokens, default=0)}"
    )


if __name__ == "__main__":
    main()
