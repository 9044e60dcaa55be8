#!/usr/bin/env bash
# Runs one shape of bench/streammem against a fresh podium server and
# prints the report (docs/BENCHMARKS.md, "Live streams under attack").
#
#   bench/streammem/run.sh ws            # 32 WebSockets x 64 subscriptions, distinct limits
#   bench/streammem/run.sh sse           # 32 idle SSE readers, limits ~1000, 1 s snapshots, 120 s
#   bench/streammem/run.sh wide          # ws from "two IPs": 2,048 windows asked, the budget binds
#   bench/streammem/run.sh sse-many      # 1,824 SSE streams that never read, 61 addresses, distinct limits
#   bench/streammem/run.sh ws-noread     # one address: 32 WebSockets x 32 subscriptions that never read
#   PODIUM=/path/to/podium bench/streammem/run.sh ws   # another build (e.g. an older commit)
#
# Extra arguments go to the server, e.g. --stream-memory 67108864.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH=$PATH:/usr/local/go/bin
shape=${1:-ws}
shift || true
bin=${PODIUM:-}
if [ -z "$bin" ]; then
  bin=$(mktemp -d)/podium
  go build -o "$bin" ./cmd/podium
fi
harness=$(mktemp -d)/streammem
go build -o "$harness" ./bench/streammem
data=$(mktemp -d)
addr=127.0.0.1:18097
server=()
args=()
case $shape in
  ws) args=(--shape ws --duration 60s) ;;
  sse) server=(--stream-snapshot-every 1s); args=(--shape sse --writers 0 --baseline 2s --duration 120s) ;;
  wide) server=(--stream-per-ip 64); args=(--shape ws --conns 64 --subs 32 --duration 60s) ;;
  sse-many) args=(--shape sse --noread --conns 1824 --addrs 61 --boards 2 --duration 60s) ;;
  ws-noread) args=(--shape ws --noread --conns 32 --subs 32 --duration 60s) ;;
  *) echo "shape: ws, sse, wide, sse-many or ws-noread" >&2; exit 2 ;;
esac
PODIUM_ADMIN_KEY=bench "$bin" serve --addr $addr --data "$data" --sync normal --log-level warn --rate-anon off --rate-key off --rate-submit off --conns-per-ip 0 "${server[@]}" "$@" &
pid=$!
trap 'kill $pid 2>/dev/null; rm -rf "$data"' EXIT
for _ in $(seq 50); do curl -sf http://$addr/readyz >/dev/null && break; sleep 0.2; done
echo "server: podium serve --sync normal ${server[*]} $*"
PODIUM_ADMIN_KEY=bench "$harness" --url http://$addr --pid $pid "${args[@]}" 2> >(grep -v '^refused' >&2)
