# Helpers for the scripts: free ports, waiting, and stopping what a script started.
# shellcheck shell=bash

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_for_http URL SECONDS: until URL answers at all.
wait_for_http() {
  local deadline=$((SECONDS + $2))
  until curl -s -o /dev/null -m 5 "$1"; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "no answer from $1 after $2 s" >&2
      return 1
    fi
    sleep 0.3
  done
}

# Stop every background job of this script on exit.
pids=()
cleanup() {
  for pid in "${pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  wait 2>/dev/null || true
}
trap cleanup EXIT

# expect_status NAME EXPECTED ACTUAL BODY
expect_status() {
  if [ "$2" != "$3" ]; then
    echo "FAIL $1: expected $2, got $3: $4" >&2
    return 1
  fi
  echo "ok   $1 ($3)"
}
