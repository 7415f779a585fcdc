#!/usr/bin/env bash
# Instructions (user space) local-api runs per GET /api/packs, counted by valgrind's callgrind:
# the load part's figure without the kernel's TCP path (the same bytes for every commit) and
# without the machine's noise (wrk's requests a second move by 10% between rounds here).
#
#   bench/profile/local-api-instructions.sh LOCAL_API [LABEL=BEFORE_LOCAL_API]
#
# Each binary starts under callgrind; once it answers, its counters are dumped and zeroed
# (`callgrind_control --dump`), wrk sends requests over one keep-alive connection for
# LOCAL_INSTRUCTION_SECONDS (10), and the counters are dumped again: that second count over the
# requests wrk made. Quotas wrk never reaches, as in the load part (each request still counted).
# Prints a Markdown table.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib.sh
seconds=${LOCAL_INSTRUCTION_SECONDS:-10}
work=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; rm -rf "$work"' EXIT

count() { # LABEL BINARY: prints "requests instructions"
  local port out total requests
  port=$(free_port)
  out="$work/$1.callgrind"
  local unlimited="fan=1000000000/60,addr=1000000000/60"
  mkdir -p "$work/$1.state"
  RATE_LIMIT_READ="$unlimited" FAN_API_STATE_DIR="$work/$1.state" RUST_LOG=warn \
    valgrind --tool=callgrind --callgrind-out-file="$out" -q "$2" --port "$port" \
    >"$work/$1.log" 2>&1 &
  pid=$!
  wait_for_http "http://127.0.0.1:$port/api/packs" 300
  callgrind_control --dump "$pid" >/dev/null 2>&1
  requests=$(wrk -t1 -c1 -d"${seconds}s" "http://127.0.0.1:$port/api/packs" |
    awk '/requests in/ {print $1}')
  callgrind_control --dump "$pid" >/dev/null 2>&1
  # Under valgrind local-api does not stop on a signal it would stop on outside: the dumps
  # are written, nothing more is needed from it.
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  pid=""
  # The dumps are numbered in order: the last one is the requests'.
  total=$(grep -h -E '^(summary|totals):' "$(ls -v "$out".* | tail -1)" | head -1 | awk '{print $2}')
  echo "$requests $total"
}

rows=()
if [ -n "${2:-}" ]; then
  rows+=("${2%%=*}=${2#*=}")
fi
rows+=("today=$1")
echo "| local-api | requests | instructions per GET /api/packs | ratio to the first row |"
echo "|---|---|---|---|"
first=""
for row in "${rows[@]}"; do
  read -r requests total < <(count "${row%%=*}" "${row#*=}")
  per=$((total / requests))
  first=${first:-$per}
  echo "| ${row%%=*} | $requests | $per | $(python3 -c "print(f'{$per / $first:.3f}x')") |"
done
