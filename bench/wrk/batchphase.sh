#!/usr/bin/env bash
# The batch phase of bench/vsredis/run.sh alone, for A/B runs of two builds
# alternated in one loop: a fresh server and data directory, the board
# preloaded with 100k players, then wrk with 4 connections of 1000-score
# batches (bench/wrk/batch.lua). Prints batches/s, scores/s and the
# server's CPU (utime+stime from /proc) per batch.
#
#   bench/wrk/batchphase.sh BINARY PORT SECONDS [DEBUG_ADDR]
set -euo pipefail
bin=$1 port=$2 secs=$3 dbg=${4:-}
cd "$(dirname "$0")/../.."
export PODIUM_ADMIN_KEY=benchkey BOARD=bench.wrk PLAYERS=100000
data=$(mktemp -d)
extra=()
[ -n "$dbg" ] && extra=(--debug-addr "$dbg")
"$bin" serve --addr 127.0.0.1:$port --data "$data" --sync full --log-level warn \
  --rate-submit off --rate-key off --rate-anon off --conns-per-ip 0 "${extra[@]}" &
pod=$!
trap 'kill $pod 2>/dev/null; wait $pod 2>/dev/null; rm -rf "$data"' EXIT
for i in $(seq 100); do curl -sf localhost:$port/readyz >/dev/null && break; sleep 0.1; done
H="Authorization: Bearer $PODIUM_ADMIN_KEY"
curl -sf -X PUT localhost:$port/v1/boards/$BOARD -H "$H" -H 'Content-Type: application/json' \
  -d '{"keys":[{"name":"score","order":"desc"}],"mode":"best","public":true}' >/dev/null
for b in $(seq 0 99); do
  awk -v b="$b" -v board="$BOARD" 'BEGIN { srand(b); printf "{\"scores\":["
    for (i = 1; i <= 1000; i++) printf "%s{\"board\":\"%s\",\"player\":\"p%d\",\"score\":%d}", (i > 1 ? "," : ""), board, b * 1000 + i, int(rand() * 1e9)
    printf "]}" }' | curl -sf localhost:$port/v1/scores -H "$H" -H 'Content-Type: application/json' --data-binary @- >/dev/null
done
t0=$(awk '{print $14+$15}' /proc/$pod/stat)
out=$(wrk -t1 -c4 -d${secs}s --latency -s bench/wrk/batch.lua http://127.0.0.1:$port)
t1=$(awk '{print $14+$15}' /proc/$pod/stat)
reqs=$(echo "$out" | awk '/requests in/ {print $1}')
rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
errs=$(echo "$out" | awk '/Non-2xx/ {print $4}')
tck=$(getconf CLK_TCK)
echo "$(basename $bin) batches/s=$rps scores/s=$(echo "$rps*1000" | bc) cpu_ms_per_batch=$(echo "scale=2; ($t1-$t0)*1000/$tck/$reqs" | bc) non2xx=${errs:-0}"
