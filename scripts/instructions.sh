#!/usr/bin/env bash
# Instructions per call, counted by valgrind's callgrind: unlike timings, stable on a busy machine.
# - benches/parse.rs: validated `parse::<Fact>` and `serde_json::from_str::<Fact>` on the clean JSON of
#   benchmark 1, and validated `parse::<Fact>` on the same JSON fenced in prose (benchmark 2);
# - benches/partial.rs: the 20 KB answer through `PartialReader` in 4- and 16-byte chunks with a snapshot
#   after each, and its one-shot `from_str` (the baseline of the partial-value ratios).
# Each figure is (instructions of a run with N calls - instructions of a run with one) / (N - 1), so the
# program's start-up and the first call's one-time work (compiling the schema) cancel out.
#
# Usage: scripts/instructions.sh [N]   (default N = 20000 for parse, N / 1000 for the partial answer;
# needs valgrind)
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-20000}"
command -v valgrind >/dev/null || { echo "instructions.sh: valgrind is required" >&2; exit 1; }

# The bench binary named $1.
bench() {
    cargo bench --bench "$1" --no-run --message-format=json 2>/dev/null \
        | python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == sys.argv[1] and m.get("executable"):
        print(m["executable"])' "$1"
}

count() { # binary, then its arguments -> instructions of the whole run
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 \
        | sed -n 's/.*Collected : *\([0-9]*\).*/\1/p'
}

parse="$(bench parse)"
for case in serde parse fenced; do
    warm="$(count "$parse" --calls "$case" 1)"
    full="$(count "$parse" --calls "$case" "$((n + 1))")"
    echo "$case: $(( (full - warm) / n )) instructions per call"
done

partial="$(bench partial)"
m=$(( n / 1000 > 1 ? n / 1000 : 2 ))
for case in "--incremental-only" "--incremental-only:--chunk 16" "--one-shot-only"; do
    flag="${case%%:*}"
    more=""
    [ "$flag" = "$case" ] || more="${case#*:}"
    # shellcheck disable=SC2086 # `more` is a flag and its argument
    warm="$(count "$partial" "$flag" 1 $more)"
    # shellcheck disable=SC2086
    full="$(count "$partial" "$flag" "$((m + 1))" $more)"
    echo "partial $flag${more:+ $more}: $(( (full - warm) / m )) instructions per call"
done
