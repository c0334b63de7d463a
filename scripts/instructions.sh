#!/usr/bin/env bash
# Instructions per call of validated `parse::<Fact>` and of `serde_json::from_str::<Fact>` on the clean JSON
# of benchmark 1 (benches/parse.rs), and of validated `parse::<Fact>` on the same JSON fenced in prose
# (benchmark 2), counted by valgrind's callgrind: unlike timings, stable on a busy machine.
# Each figure is (instructions of a run with N calls - instructions of a run with none) / N, so the
# program's start-up and the first call's one-time work (compiling the schema) cancel out.
#
# Usage: scripts/instructions.sh [N]   (default N = 20000; needs valgrind)
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-20000}"
command -v valgrind >/dev/null || { echo "instructions.sh: valgrind is required" >&2; exit 1; }

bench="$(cargo bench --bench parse --no-run --message-format=json 2>/dev/null \
    | python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "parse" and m.get("executable"):
        print(m["executable"])')"

count() { # case calls -> instructions of the whole run
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bench" --calls "$1" "$2" 2>&1 \
        | sed -n 's/.*Collected : *\([0-9]*\).*/\1/p'
}

for case in serde parse fenced; do
    warm="$(count "$case" 1)"
    full="$(count "$case" "$((n + 1))")"
    echo "$case: $(( (full - warm) / n )) instructions per call"
done
