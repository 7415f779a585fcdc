#!/usr/bin/env bash
# Instructions (user space) each function runs per cold process and per warm invocation, counted
# by valgrind's callgrind while lambda-bench drives it: figures that neither moto nor the machine
# move (CPU time moves by about 10% between runs, more than issue 26's 5% budget, and this VM
# has no hardware counters for `perf stat`).
#
#   bench/profile/instructions.sh LAMBDA_BENCH BIN_DIR [LABEL=BEFORE_DIR]
#
# Each binary of the directories runs behind a wrapper under callgrind, 2 cold starts and
# INSTRUCTION_INVOCATIONS (200) warm invocations after lambda-bench's 20 warm-up ones. A warm
# invocation's figure is the warm process's count less a cold process's (init and first
# invocation), over the 19 + INSTRUCTION_INVOCATIONS invocations that leaves.
# Prints a Markdown table. INSTRUCTIONS_ONLY: only these binaries (comma-separated; for example
# without cash-top-ups, whose binary before issue 27 today's Stripe stub refuses).
set -euo pipefail
bench=$(realpath "$1")
today=$(realpath "$2")
before_label="" before_dir=""
if [ -n "${3:-}" ]; then
  before_label=${3%%=*}
  before_dir=$(realpath "${3#*=}")
fi
only=${INSTRUCTIONS_ONLY:-}
invocations=${INSTRUCTION_INVOCATIONS:-200}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/counts"

wrap() { # LABEL DIR: a wrapper for each binary of DIR, in $work/LABEL
  mkdir -p "$work/$1"
  for binary in "$2"/*; do
    local name
    name=$(basename "$binary")
    # Not `exec`: lambda-bench kills this shell when it is done with the process; valgrind's
    # process then exits with the Runtime API emulator, and callgrind writes its count.
    cat >"$work/$1/$name" <<SH
#!/bin/sh
valgrind --tool=callgrind --callgrind-out-file="$work/counts/$1.$name.%p" -q "$binary" "\$@" &
wait
SH
    chmod +x "$work/$1/$name"
  done
}

wrap today "$today"
args=()
if [ -n "$before_label" ]; then
  wrap before "$before_dir"
  args=(--before "$before_label=$work/before")
fi
"$bench" lambda "${args[@]}" "$work/today" 2 "$invocations" ${only:+"$only"} >"$work/lambda.md" 2>&1 ||
  { tail -20 "$work/lambda.md" >&2; exit 1; }
for _ in $(seq 60); do
  pgrep -f "$work/counts" >/dev/null || break
  sleep 1
done

python3 - "$work/counts" "$invocations" "$before_label" <<'PY'
import os, re, statistics, sys
counts, invocations, before = sys.argv[1], int(sys.argv[2]), sys.argv[3]
runs = {}
for file in os.listdir(counts):
    label, name, _pid = file.rsplit(".", 2)
    text = open(os.path.join(counts, file)).read()
    total = re.search(r"^(?:summary|totals): (\d+)", text, re.M)
    if total:
        runs.setdefault(name, {}).setdefault(label, []).append(int(total.group(1)))

def figures(values):
    """(cold process, per warm invocation): the largest count is the warm process's."""
    values = sorted(values)
    if len(values) < 2:
        return None
    cold = statistics.median(values[:-1])
    # The warm process: init, lambda-bench's 20 warm-up invocations, then `invocations`.
    return cold, (values[-1] - cold) / (invocations + 19)

if before:
    print(f"| function | cold process, {before} -> today | per warm invocation, {before} -> today | ratio |")
    print("|---|---|---|---|")
else:
    print("| function | cold process | per warm invocation |")
    print("|---|---|---|")
for name in sorted(runs):
    today = figures(runs[name].get("today", []))
    if today is None:
        continue
    if not before:
        print(f"| {name} | {today[0] / 1e6:.2f}M | {today[1]:,.0f} |")
        continue
    earlier = figures(runs[name].get("before", []))
    if earlier is None:
        continue
    print(
        f"| {name} | {earlier[0] / 1e6:.2f}M -> {today[0] / 1e6:.2f}M ({today[0] / earlier[0]:.3f}x) "
        f"| {earlier[1]:,.0f} -> {today[1]:,.0f} | {today[1] / earlier[1]:.3f}x |"
    )
PY
