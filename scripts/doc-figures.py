#!/usr/bin/env python3
"""The figures of an `llm-extract doc` run (BENCHMARKS.md, "The book"), from the chunks it saved for
resuming: chunks finished, items, grounded values exact at their offsets, tokens, and the recall of a
list of people written beforehand (one name per line).

    scripts/doc-figures.py [--passes N] DOCUMENT STATE_DIR [PEOPLE.txt]

STATE_DIR is `${XDG_CACHE_HOME:-~/.cache}/llm-extract/doc/<hash>/` of the run (it is removed when a run
ends with no failed chunk, so stop the run, or copy the directory, before it ends). A person counts as
present if the full name occurs in the part read (whitespace runs as one space), and as found if an
extracted person's name holds the surname, or the full name where a family shares the surname.
With --passes N only the chunks of the first N passes count (the figures of a one-pass run, read from
the chunks of a two-pass run).

    scripts/doc-figures.py concurrency [--rounds N] [--levels 1,2,4] [--bytes B] [--chunk-tokens N]
        [--llama-server BIN] [--cli PATH] [--model GGUF] DOCUMENT

The concurrency figures (BENCHMARKS.md, "Concurrency"): `llm-extract doc --concurrency N` on the first
B bytes of DOCUMENT (cut at a blank line; default 6,000), on the embedded engine, then, with
--llama-server (the binary `scripts/build-llama-server.sh` prints), on llama.cpp's own server started
here with 4 slots (`-np 4 -c 8192 -t 2 --jinja`, port 18612) and asked through `--openai`. The levels
run interleaved (1, 2, 4, 1, 2, 4, ...) so that a change of load hits each alike; each run is timed
whole (process start to exit, the model load included) and its summary line read for chunks, items and
tokens. Prints a table per backend with documents/s and chunks/s (median of the rounds), the ratio to
concurrency 1 of the same round (median), the tokens of each run, and the load average.
"""
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIGNATURE = "{kind (person | place), name :string}"
SUMMARY = re.compile(r"(\d+) items \((\d+) before merging\) from (\d+) chunks, (\d+) failed;.* (\d+) tokens")
PORT = 18612


def main(document, state_dir, people_file=None, passes=None):
    text = open(document, encoding="utf-8", newline="").read().encode()
    end = chunks = items = exact = at_offsets = tokens = 0
    grounded = 0
    names = set()
    for path in glob.glob(f"{state_dir}/*.json"):
        chunk = json.load(open(path))
        if passes is not None and chunk["pass"] >= passes:
            continue
        chunks += 1
        end = max(end, chunk["bytes"]["end"])
        tokens += chunk["usage"]["prompt_tokens"] + chunk["usage"]["completion_tokens"]
        for value, spans in chunk["items"]:
            items += 1
            if value.get("kind") == "person":
                names.add(re.sub(r"\s+", " ", value.get("name", "")))
            for span in spans:
                grounded += 1
                if span["match"]["kind"] == "exact":
                    exact += 1
                    found = text[span["bytes"]["start"]:span["bytes"]["end"]].decode("utf-8", "replace")
                    at_offsets += found == span["value"]
    print(f"chunks {chunks}, bytes 0..{end} of {len(text)}, items {items}, grounded values {grounded}, "
          f"exact {exact}, exact at their offsets {at_offsets}, tokens {tokens}")
    if people_file:
        covered = re.sub(r"\s+", " ", text[:end].decode("utf-8", "ignore"))
        people = [line.strip() for line in open(people_file) if line.strip()]
        surnames = {}
        for person in people:
            surnames.setdefault(person.split()[-1], []).append(person)
        present = [p for p in people if p in covered]
        def found(person):
            key = person if len(surnames[person.split()[-1]]) > 1 else person.split()[-1]
            return any(key in name for name in names)
        hits = [p for p in present if found(p)]
        print(f"people present {len(present)}, found {len(hits)}; missed: {[p for p in present if p not in hits]}")


def excerpt(document, size):
    """The first `size` bytes of `document`, cut back to the end of a blank line, in a temporary file."""
    text = open(document, encoding="utf-8", newline="").read()
    cut = text.rfind("\r\n\r\n", 0, size)
    cut = cut + 4 if cut >= 0 else min(size, len(text))
    out = tempfile.NamedTemporaryFile("w", suffix=".txt", encoding="utf-8", newline="", delete=False)
    out.write(text[:cut])
    out.close()
    return out.name, cut


def run_doc(cli, backend, path, level, chunk_tokens, cache):
    """One `llm-extract doc` run: wall seconds and its summary (items, merged, chunks, failed, tokens)."""
    command = [cli, "doc", "--signature", SIGNATURE, "--grounded", "name", "--key", "name",
               "--max-tokens", "300", "--chunk-tokens", str(chunk_tokens), "--no-resume",
               "--concurrency", str(level), *backend, path]
    start = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, env={**os.environ, "XDG_CACHE_HOME": cache})
    wall = time.monotonic() - start
    found = SUMMARY.search(done.stderr)
    if done.returncode != 0 or not found:
        sys.exit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr}")
    merged, items, chunks, failed, tokens = map(int, found.groups())
    return {"wall": wall, "items": items, "merged": merged, "chunks": chunks, "failed": failed, "tokens": tokens}


def start_server(binary, model):
    server = subprocess.Popen([binary, "-m", model, "--port", str(PORT), "--host", "127.0.0.1", "-np", "4",
                               "-c", "8192", "-t", "2", "--jinja"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(600):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{PORT}/health", timeout=1) as answer:
                if answer.status == 200:
                    return server
        except OSError:
            pass
        if server.poll() is not None:
            sys.exit(f"{binary} exited with {server.returncode}")
        time.sleep(0.5)
    server.kill()
    sys.exit(f"{binary} did not answer on port {PORT}")


def concurrency(args):
    options = {"--rounds": "3", "--levels": "1,2,4", "--bytes": "6000", "--chunk-tokens": "256",
               "--llama-server": None, "--cli": os.path.join(ROOT, "target/release/llm-extract"),
               "--model": os.path.expanduser("~/.cache/llm-extract/models/SmolLM2-135M-Instruct.Q4_1.gguf")}
    rest = []
    while args:
        flag = args.pop(0)
        if flag in options and args:
            options[flag] = args.pop(0)
        else:
            rest.append(flag)
    if len(rest) != 1:
        sys.exit(__doc__)
    levels = [int(level) for level in options["--levels"].split(",")]
    rounds = int(options["--rounds"])
    path, size = excerpt(rest[0], int(options["--bytes"]))
    cache = tempfile.mkdtemp(prefix="doc-figures-")
    backends = [("embedded", [f"--embedded={options['--model']}"], None)]
    if options["--llama-server"]:
        backends.append(("llama-server", ["--openai", f"http://127.0.0.1:{PORT}/v1", "--model", "smollm2"],
                         options["--llama-server"]))
    print(f"document: the first {size} bytes of {rest[0]}; chunks of {options['--chunk-tokens']} tokens; "
          f"{os.cpu_count()} CPUs; load average before: {os.getloadavg()[0]:.2f}")
    for name, backend, server_binary in backends:
        server = start_server(server_binary, options["--model"]) if server_binary else None
        try:
            runs = {level: [] for level in levels}
            loads = []
            for _ in range(rounds):
                for level in levels:
                    loads.append(os.getloadavg()[0])
                    runs[level].append(run_doc(options["--cli"], backend, path, level,
                                               options["--chunk-tokens"], cache))
        finally:
            if server:
                server.terminate()
                server.wait()
        print(f"\n{name}: {rounds} rounds, levels interleaved; load average during the runs "
              f"{min(loads):.2f} to {max(loads):.2f}\n")
        print("| concurrency | docs/s (median) | chunks/s (median) | ratio to concurrency 1 (median of rounds) "
              "| wall s per run | tokens per run | items (before merge) per run | failed chunks |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for level in levels:
            mine = runs[level]
            ratios = [base["wall"] / run["wall"] for base, run in zip(runs[levels[0]], mine)]
            docs = statistics.median(1 / r["wall"] for r in mine)
            chunks = statistics.median(r["chunks"] / r["wall"] for r in mine)
            ratio = statistics.median(ratios)
            each = ", ".join("%.2f" % x for x in ratios)
            walls = ", ".join("%.1f" % r["wall"] for r in mine)
            tokens = ", ".join(str(r["tokens"]) for r in mine)
            items = ", ".join(str(r["items"]) for r in mine)
            failed = sum(r["failed"] for r in mine)
            print(f"| {level} | {docs:.4f} | {chunks:.3f} | {ratio:.2f}x ({each}) | {walls} | {tokens} "
                  f"| {items} | {failed} |")
    os.unlink(path)
    shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "concurrency":
        concurrency(sys.argv[2:])
    elif len(sys.argv) < 3:
        sys.exit(__doc__)
    else:
        args = sys.argv[1:]
        passes = None
        if args[0] == "--passes" and len(args) > 1:
            passes = int(args[1])
            args = args[2:]
        main(*args[:3], passes=passes)
