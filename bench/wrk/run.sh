#!/usr/bin/env bash
# Measures podium over HTTP with wrk (a C load generator, cheaper than a Go
# client on a machine whose 2 cores the client shares) against a trivial Go
# net/http handler measured in the same run, and prints ratios.
#
#   bench/wrk/run.sh [seconds] [connections]
#
# Needs wrk (apt-get install wrk). Uses a fresh data directory in /tmp and
# ports 18180 (podium) and 18181 (trivial handler).
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-10}
conns=${2:-64}
sync=${SYNC:-full}
export PODIUM_ADMIN_KEY=benchkey BOARD=bench.wrk PLAYERS=100000
data=$(mktemp -d)
go build -o /tmp/podium-wrk ./cmd/podium
go build -o /tmp/trivial-wrk ./bench/wrk/trivial
# Rate limits off: from one address and one key, the defaults would answer
# most of the load with 429 (their own cost is measured in
# http/ratelimit_bench_test.go).
/tmp/podium-wrk serve --addr 127.0.0.1:18180 --data "$data" --sync "$sync" --log-level warn \
  --rate-submit off --rate-key off --rate-anon off --conns-per-ip 0 &
pod=$!
/tmp/trivial-wrk --addr 127.0.0.1:18181 &
triv=$!
trap 'kill $pod $triv 2>/dev/null; rm -rf "$data"' EXIT
for i in $(seq 50); do curl -sf localhost:18180/readyz >/dev/null && break; sleep 0.1; done
H="Authorization: Bearer $PODIUM_ADMIN_KEY"
curl -sf -X PUT localhost:18180/v1/boards/$BOARD -H "$H" -H 'Content-Type: application/json' \
  -d '{"keys":[{"name":"score","order":"desc"}],"mode":"best","public":true}' >/dev/null
# Preload every player so rank reads hit: 100 batches of 1000.
for b in $(seq 0 $((PLAYERS / 1000 - 1))); do
  awk -v b="$b" -v board="$BOARD" 'BEGIN {
    srand(b); printf "{\"scores\":["
    for (i = 1; i <= 1000; i++) printf "%s{\"board\":\"%s\",\"player\":\"p%d\",\"score\":%d}", (i > 1 ? "," : ""), board, b * 1000 + i, int(rand() * 1e9)
    printf "]}" }' | curl -sf localhost:18180/v1/scores -H "$H" -H 'Content-Type: application/json' --data-binary @- >/dev/null
done

echo "wrk -t2 -c$conns -d${secs}s, podium --sync $sync, $(nproc) cores, $(date -u +%FT%TZ), $(go version | cut -d' ' -f3)"
printf '%-28s %12s %10s %10s %8s\n' scenario "req/s" p50 p99 "vs trivial"
run() { # name url [script]
  local name=$1 url=$2 script=${3:-}
  local out
  if [ -n "$script" ]; then
    out=$(wrk -t2 -c"$conns" -d"${secs}s" --latency -s "$script" "$url")
  else
    out=$(wrk -t2 -c"$conns" -d"${secs}s" --latency "$url")
  fi
  local rps p50 p99 errs
  rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
  p50=$(echo "$out" | awk '$1=="50%" {print $2}')
  p99=$(echo "$out" | awk '$1=="99%" {print $2}')
  errs=$(echo "$out" | awk '/Non-2xx/ {print $4}')
  [ -n "$errs" ] && echo "  $name: $errs non-2xx answers" >&2
  echo "$name $rps $p50 $p99"
}
base=$(run trivial http://127.0.0.1:18181/)
read -r _ triv_rps _ _ <<<"$base"
for line in "$base" \
  "$(run top100 "http://127.0.0.1:18180/v1/boards/$BOARD/entries?limit=100")" \
  "$(run rank http://127.0.0.1:18180 bench/wrk/rank.lua)" \
  "$(run single-submit http://127.0.0.1:18180 bench/wrk/submit.lua)"; do
  read -r name rps p50 p99 <<<"$line"
  printf '%-28s %12s %10s %10s %8.2f\n' "$name" "$rps" "$p50" "$p99" "$(echo "$rps / $triv_rps" | bc -l)"
done
out=$(wrk -t1 -c4 -d"${secs}s" --latency -s bench/wrk/batch.lua http://127.0.0.1:18180)
rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
printf '%-28s %12s %10s %10s   (%.0f scores/s)\n' "batch-1000 (4 conns)" "$rps" "$(echo "$out" | awk '$1=="50%" {print $2}')" "$(echo "$out" | awk '$1=="99%" {print $2}')" "$(echo "$rps * 1000" | bc -l)"
