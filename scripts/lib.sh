# Helpers for the scripts: free ports, waiting, stopping what a script started, and the API
# reference's viewer.
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

# The /docs page's viewer (local-api serves it), pinned in its lockfile: installed again only
# when the lockfile changed. --ignore-scripts: swagger-ui-dist's one dependency (@scarf/scarf)
# only reports the install home, which is nobody's business (and unreachable here).
install_viewer() {
  local viewer=infra/local-api/docs-viewer
  if ! cmp -s "$viewer/package-lock.json" "$viewer/node_modules/.installed-lock" 2>/dev/null; then
    command -v npm >/dev/null || { echo "the API reference page needs Node.js 20+ with npm" >&2; return 1; }
    npm ci --prefix "$viewer" --ignore-scripts --prefer-offline --no-audit --no-fund --silent
    cp "$viewer/package-lock.json" "$viewer/node_modules/.installed-lock"
    echo "API reference viewer installed in $viewer/node_modules"
  fi
}
