#!/usr/bin/env bash
# The parse and partial-value ratios of two commits on this machine, measured the way BENCHMARKS.md
# compares them: each commit's bench binaries built once, then run alternately (before, after, before,
# ...) five times with `--ratios-only`, so drift on a shared machine falls on both; each row printed as
# the median of the five runs with their range.
#
# Usage: scripts/bench-compare.sh BEFORE AFTER [RUNS]   (commits or branches; RUNS defaults to 5)
# With SAME_BENCHES=1, BEFORE is built with AFTER's benches/ (the same inputs and rows on both sides, for
# rows AFTER added), as long as the library API they call is the same.
set -euo pipefail
cd "$(dirname "$0")/.."
before="${1:?usage: scripts/bench-compare.sh BEFORE AFTER [RUNS]}"
after="${2:?usage: scripts/bench-compare.sh BEFORE AFTER [RUNS]}"
runs="${3:-5}"
work="$(mktemp -d)"
trap 'git worktree remove --force "$work/before" 2>/dev/null; git worktree remove --force "$work/after" 2>/dev/null; rm -rf "$work"' EXIT

# Both commits build in one target directory (the dependencies once); the binaries of each are copied
# out before the other is built, as both get the same file names.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}"

# Builds the bench binaries of one commit into `$2/bin`; prints their paths (parse, then partial).
build() {
    local rev="$1" tree="$2"
    git worktree add -q --detach "$tree" "$rev"
    if [ "${SAME_BENCHES:-0}" = 1 ] && [ "$rev" = "$before" ]; then
        git archive "$after" benches | tar -x -C "$tree"
    fi
    mkdir -p "$tree/bin"
    (cd "$tree" && cargo bench --bench parse --bench partial --no-run --message-format=json 2>/dev/null) \
        | python3 -c 'import json, shutil, sys
found = {}
for line in sys.stdin:
    message = json.loads(line)
    if message.get("reason") == "compiler-artifact" and message.get("executable"):
        found[message["target"]["name"]] = message["executable"]
for name in ("parse", "partial"):
    print(shutil.copy(found[name], sys.argv[1] + "/" + name))' "$tree/bin"
}
mapfile -t first < <(build "$before" "$work/before")
mapfile -t second < <(build "$after" "$work/after")
mkdir -p "$work/logs"
for i in $(seq 1 "$runs"); do
    "${first[0]}" --bench --ratios-only > "$work/logs/parse.before.$i" 2>&1
    "${second[0]}" --bench --ratios-only > "$work/logs/parse.after.$i" 2>&1
    "${first[1]}" --bench --ratios-only > "$work/logs/partial.before.$i" 2>&1
    "${second[1]}" --bench --ratios-only > "$work/logs/partial.after.$i" 2>&1
done
python3 - "$work/logs" <<'PY'
import collections, glob, os, re, statistics, sys
rows = collections.OrderedDict()
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*"))):
    bench, version, _ = os.path.basename(path).split(".")
    section = ""
    for line in open(path):
        if line.startswith("## "):
            section = line[3:].strip()
        match = re.match(r"\| (.+?) \|.*\| ([0-9.]+)x \|", line)
        if match:
            key = (bench, section, match.group(1))
            rows.setdefault(key, {"before": [], "after": []})[version].append(float(match.group(2)))
def shown(xs):
    return f"{statistics.median(xs):.2f}x ({min(xs):.2f}-{max(xs):.2f})" if xs else "-"
print("| bench | table | row | before | after |")
print("|---|---|---|---|---|")
for (bench, section, name), got in rows.items():
    print(f"| {bench} | {section} | {name} | {shown(got['before'])} | {shown(got['after'])} |")
PY
