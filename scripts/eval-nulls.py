#!/usr/bin/env python3
"""Sums `llm-extract eval --json` runs: field accuracy, the share of gold values the run left null (nulls that
should be values) and of gold nulls it filled (values that should be null), tokens and seconds per document.

usage: scripts/eval-nulls.py RUN.json...   (e.g. /tmp/eval/*.json, one file per kind)"""
import json
import sys

right = leaves = missed = gold_values = filled = gold_nulls = 0
tokens = []
seconds = []
for path in sys.argv[1:]:
    report = json.load(open(path))
    for run in report["runs"]:
        tokens.append(run.get("tokens") or 0)
        seconds.append(run.get("seconds") or 0.0)
        right += run.get("correct", 0)
        leaves += run.get("total", 0)
        predicted = run.get("predicted") or {}
        for field, gold in (run.get("gold") or {}).items():
            value = predicted.get(field) if isinstance(predicted, dict) else None
            if gold is None:
                gold_nulls += 1
                filled += value not in (None, "")
            else:
                gold_values += 1
                missed += value in (None, "")
n = len(tokens)
print(f"documents {n}; field accuracy {right}/{leaves} ({100 * right / max(leaves, 1):.1f}%)")
print(f"nulls that should be values: {missed}/{gold_values} ({100 * missed / max(gold_values, 1):.1f}%)")
print(f"values that should be null: {filled}/{gold_nulls} ({100 * filled / max(gold_nulls, 1):.1f}%)")
print(f"tokens per document: mean {sum(tokens) / max(n, 1):.0f}; seconds per document: mean {sum(seconds) / max(n, 1):.1f}, total {sum(seconds):.0f}")
