#!/usr/bin/env bash
# The README's first two commands as a new user runs them (issue 31): a fresh clone of this
# checkout, the machine's own Node first on PATH (on our machines Node 20 at /usr/bin/node),
# `npm install && npm start`, and a 200 from / within the time a first start takes. Then the
# server is stopped and the clone removed. .ci/run calls it first.
#
#   bash scripts/check-first-run.sh          (PORT defaults to 3990)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
port="${FIRST_RUN_PORT:-3990}"
work="$(mktemp -d)"
server=""
cleanup() {
  if [ -n "$server" ]; then kill -- -"$server" 2>/dev/null || kill "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# The machine's own Node and npm, as they come: /usr/bin first, nothing of ours on PATH.
export PATH="/usr/local/bin:/usr/bin:/bin"
echo "first run: node $(node -v), npm $(npm -v), in a fresh clone"
git clone -q "$root" "$work/coinkeep"
cd "$work/coinkeep"

t0=$(date +%s)
npm install --no-audit --no-fund >"$work/install.log" 2>&1 || {
  tail -n 40 "$work/install.log"
  echo "first run: npm install failed"
  exit 1
}
t1=$(date +%s)
echo "first run: npm install took $((t1 - t0)) s"

set -m
PORT="$port" HOST=127.0.0.1 DATA_DIR="$work/data" FEEDS_OFFLINE=true npm start >"$work/start.log" 2>&1 &
server=$!
set +m
status=""
for _ in $(seq 1 240); do
  status="$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/" || true)"
  [ "$status" = "200" ] && break
  if ! kill -0 "$server" 2>/dev/null; then break; fi
  sleep 1
done
t2=$(date +%s)
if [ "$status" != "200" ]; then
  tail -n 40 "$work/start.log"
  echo "first run: npm start did not answer 200 on / (last status: ${status:-none})"
  exit 1
fi
echo "first run: npm start answered 200 on / after $((t2 - t1)) s (build, migrations, start)"

# Node too old for the project, started by hand: one sentence, a non-zero exit.
if ! node --input-type=module -e 'import { supported } from "./scripts/node-version.mjs"; process.exit(supported(process.versions.node) ? 0 : 1);'; then
  set +e
  message="$(node scripts/start.mjs 2>&1)"
  code=$?
  set -e
  if [ "$code" -eq 0 ] || ! printf '%s' "$message" | grep -q "^Coinkeep needs Node 22.22 or newer and this is Node $(node -p process.versions.node): "; then
    echo "first run: under node $(node -v) npm start's script said: $message (exit $code)"
    exit 1
  fi
  echo "first run: under node $(node -v) it says: $message"
fi
