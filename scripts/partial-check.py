#!/usr/bin/env python3
"""Streams each text of a file through `llm-extract run --partial` and checks the snapshots.

    scripts/partial-check.py LLM_EXTRACT SCHEMA TEXTS -- BACKEND ARGS...

LLM_EXTRACT is the CLI binary, SCHEMA a JSON Schema file, TEXTS a file with one text per line; the
arguments after `--` choose the backend (for instance `--openai http://127.0.0.1:18611/v1 --model x`).
For every text it checks, on what the CLI printed (each snapshot as one JSON line, the validated value
last): the snapshots only grow (no key disappears, a string only grows, a list only grows and only its
last item changes), and the last snapshot is the validated value. A text whose answer was asked again
(the CLI says so on standard error) is checked on its last line only. Prints one row per text and a
total; exits 1 if a check failed.
"""

import json
import subprocess
import sys


def grows(prev, nxt):
    """Whether `nxt` only adds to `prev`."""
    if isinstance(prev, dict) and isinstance(nxt, dict):
        return all(k in nxt and grows(v, nxt[k]) for k, v in prev.items())
    if isinstance(prev, list) and isinstance(nxt, list):
        if len(nxt) < len(prev):
            return False
        for i, (a, b) in enumerate(zip(prev, nxt)):
            if i + 1 == len(prev):
                if not grows(a, b):
                    return False
            elif a != b:
                return False
        return True
    if isinstance(prev, str) and isinstance(nxt, str):
        return nxt.startswith(prev)
    return prev == nxt


def main():
    args = sys.argv[1:]
    if "--" not in args or args.index("--") != 3:
        sys.exit(__doc__)
    binary, schema, texts = args[:3]
    backend = args[4:]
    failed = 0
    totals = {"texts": 0, "valid": 0, "snapshots": 0, "monotone": 0, "last is the value": 0}
    print("| text | exit | snapshots | retries | monotone | last snapshot is the value |")
    print("|---|---|---|---|---|---|")
    with open(texts, encoding="utf-8") as f:
        lines = [line.strip() for line in f if line.strip()]
    for number, text in enumerate(lines, 1):
        run = subprocess.run(
            [binary, "run", "--schema", schema, "--partial", *backend],
            input=text,
            capture_output=True,
            text=True,
            timeout=900,
        )
        out = [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
        retries = run.stderr.count("the value starts over")
        totals["texts"] += 1
        if run.returncode != 0 or not out:
            print(f"| {number} | {run.returncode} | {len(out)} | {retries} | - | - |")
            continue
        totals["valid"] += 1
        value, snapshots = out[-1], out[:-1]
        totals["snapshots"] += len(snapshots)
        monotone = retries > 0 or all(grows(a, b) for a, b in zip(snapshots, snapshots[1:]))
        last = bool(snapshots) and snapshots[-1] == value
        totals["monotone"] += monotone
        totals["last is the value"] += last
        if not (monotone and last):
            failed += 1
        shown = "n/a (retried)" if retries else ("yes" if monotone else "**no**")
        print(
            f"| {number} | 0 | {len(snapshots)} | {retries} | {shown} | {'yes' if last else '**no**'} |"
        )
    print()
    print(
        f"{totals['valid']} of {totals['texts']} valid; {totals['snapshots']} snapshots; monotone "
        f"{totals['monotone']} of {totals['valid']}; last snapshot the value {totals['last is the value']} "
        f"of {totals['valid']}"
    )
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
