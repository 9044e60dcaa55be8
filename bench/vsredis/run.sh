#!/usr/bin/env bash
# Side by side: podium against Redis on the same machine, in one run, with
# C load generators on both sides (wrk for podium, redis-benchmark for
# Redis), the same connection count, and each server's CPU time read from
# /proc/<pid>/stat before and after every phase.
#
#   bench/vsredis/run.sh [seconds] [connections]
#   BEFORE=<git revision> bench/vsredis/run.sh ...   also measures that build
#
# Phases:
#   trivial  a net/http handler writing a constant body (bench/wrk/trivial):
#            the transport's limit the performance goals are stated against
#   trivial-page  the same handler writing a constant body of PAGE_BYTES
#            (default 12652, a top-100 page of this board): the part of the
#            top 100's gap that is its payload's transport cost
#   podium   rank of a player, top 100, durable single submit (--sync full),
#            batch of 1000 (4 connections)
#   redis    ZREVRANK, ZREVRANGE 0 99 WITHSCORES, ZADD; once without
#            persistence and once with appendonly yes + appendfsync always
# Both boards hold PLAYERS (100,000) members before the reads.
#
# Prints, per phase: operations/s, p50 and p99 latency (ms), server CPU
# in microseconds per operation; then the ratios the performance goals
# are stated in. Needs wrk and redis-server/redis-benchmark on PATH; uses
# ports PORT (default 18190) for podium, PORT+1 for Redis and PORT+2 for the
# trivial handler (set PORT apart when others run this on the same machine),
# and fresh directories in /tmp.
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-10}
conns=${2:-64}
players=${PLAYERS:-100000}
pagebytes=${PAGE_BYTES:-12652}
port=${PORT:-18190}
rport=$((port + 1))
tport=$((port + 2))
for tool in wrk redis-server redis-benchmark redis-cli; do
  command -v "$tool" >/dev/null || { echo "vsredis: $tool is not installed (apt-get install wrk redis-server)" >&2; exit 2; }
done
export PODIUM_ADMIN_KEY=benchkey BOARD=bench.vs PLAYERS=$players
tick=$(getconf CLK_TCK)
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; git worktree prune 2>/dev/null || true; }
trap cleanup EXIT

# cpu prints a process's user+system CPU time in clock ticks.
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
# usop prints microseconds of CPU per operation for a tick delta and a count.
usop() { awk -v t="$1" -v n="$2" -v hz="$tick" 'BEGIN { if (n > 0) printf "%.1f", t * 1e6 / hz / n; else print "-" }'; }

results=() # "name ops/s p50 p99 us/op"

# wrkphase name pid url [script] [connections]
wrkphase() {
  local name=$1 pid=$2 url=$3 script=${4:-} c=${5:-$conns} out c0 c1 args
  args=(-t2 -c"$c" -d"${secs}s" --latency)
  [ -n "$script" ] && args+=(-s "$script")
  c0=$(cpu "$pid")
  out=$(wrk "${args[@]}" "$url")
  c1=$(cpu "$pid")
  local rps n p50 p99 errs
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  n=$(awk '/requests in/ {print $1}' <<<"$out")
  p50=$(awk '$1=="50%" {print $2}' <<<"$out")
  p99=$(awk '$1=="99%" {print $2}' <<<"$out")
  errs=$(awk '/Non-2xx/ {print $4}' <<<"$out")
  [ -n "$errs" ] && echo "vsredis: $name: $errs non-2xx answers" >&2
  results+=("$name $rps $(ms "$p50") $(ms "$p99") $(usop $((c1 - c0)) "$n")")
}

# ms turns wrk's latency (123.45us, 1.23ms, 1.02s) into milliseconds.
ms() { awk -v v="$1" 'BEGIN { u = v; sub(/[0-9.]+/, "", u); x = v + 0;
  if (u == "us") x /= 1000; else if (u == "s") x *= 1000; printf "%.3f", x }'; }

# rbphase name pid n command...
rbphase() {
  local name=$1 pid=$2 n=$3 out c0 c1
  shift 3
  c0=$(cpu "$pid")
  out=$(redis-benchmark -p $rport -c "$conns" --threads 2 -n "$n" -r "$players" --csv "$@")
  c1=$(cpu "$pid")
  # "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
  local line
  line=$(tail -n 1 <<<"$out" | tr -d '"')
  IFS=, read -r _ rps _ _ p50 _ p99 _ <<<"$line"
  results+=("$name $rps $p50 $p99 $(usop $((c1 - c0)) "$n")")
}

# --- podium ---
# podiumrun prefix binary: the podium phases against one build, each on a
# fresh server and data directory with the same preloaded board.
podiumrun() {
  local pre=$1 bin=$2 pod
  rm -rf "$work/data"
  # Rate limits off: from one address and one key the defaults would answer
  # most of the load with 429 (their cost: http/ratelimit_bench_test.go).
  "$bin" serve --addr 127.0.0.1:$port --data "$work/data" --sync full --log-level warn \
    --rate-submit off --rate-key off --rate-anon off --conns-per-ip 0 &
  pod=$!
  pids+=("$pod")
  for _ in $(seq 100); do curl -sf 127.0.0.1:$port/readyz >/dev/null && break; sleep 0.1; done
  H="Authorization: Bearer $PODIUM_ADMIN_KEY"
  curl -sf -X PUT "127.0.0.1:$port/v1/boards/$BOARD" -H "$H" -H 'Content-Type: application/json' \
    -d '{"keys":[{"name":"score","order":"desc"}],"mode":"best","public":true}' >/dev/null
  for b in $(seq 0 $((players / 1000 - 1))); do
    awk -v b="$b" -v board="$BOARD" 'BEGIN { srand(b); printf "{\"scores\":["
      for (i = 1; i <= 1000; i++) printf "%s{\"board\":\"%s\",\"player\":\"p%d\",\"score\":%d}", (i > 1 ? "," : ""), board, b * 1000 + i, int(rand() * 1e9)
      printf "]}" }' | curl -sf 127.0.0.1:$port/v1/scores -H "$H" -H 'Content-Type: application/json' --data-binary @- >/dev/null
  done
  wrkphase "${pre}rank" "$pod" http://127.0.0.1:$port bench/wrk/rank.lua
  wrkphase "${pre}top100" "$pod" "http://127.0.0.1:$port/v1/boards/$BOARD/entries?limit=100"
  wrkphase "${pre}submit" "$pod" http://127.0.0.1:$port bench/wrk/submit.lua
  wrkphase "${pre}batch1000" "$pod" http://127.0.0.1:$port bench/wrk/batch.lua 4
  kill "$pod"
  wait "$pod" 2>/dev/null || true
}
go build -o "$work/podium" ./cmd/podium
go build -o "$work/trivial" ./bench/wrk/trivial

# --- the trivial handler, first: the reference of the same run ---
"$work/trivial" --addr 127.0.0.1:$tport &
triv=$!
pids+=("$triv")
for _ in $(seq 100); do curl -sf 127.0.0.1:$tport/ >/dev/null && break; sleep 0.05; done
wrkphase "trivial" "$triv" http://127.0.0.1:$tport/
kill "$triv"
wait "$triv" 2>/dev/null || true
"$work/trivial" --addr 127.0.0.1:$tport --body-bytes "$pagebytes" &
triv=$!
pids+=("$triv")
for _ in $(seq 100); do curl -sf 127.0.0.1:$tport/ >/dev/null && break; sleep 0.05; done
wrkphase "trivial-page" "$triv" http://127.0.0.1:$tport/
kill "$triv"
wait "$triv" 2>/dev/null || true
# BEFORE=<git revision> also measures that revision's build, first, in the
# same run: the before/after figures of one machine state.
if [ -n "${BEFORE:-}" ]; then
  git worktree add -q --detach "$work/before" "$BEFORE"
  (cd "$work/before" && go build -o "$work/podium-before" ./cmd/podium)
  git worktree remove --force "$work/before"
  podiumrun "before-" "$work/podium-before"
fi
podiumrun "podium-" "$work/podium"

# --- Redis, twice ---
redisrun() { # mode-name redis-server args...
  local mode=$1
  shift
  mkdir -p "$work/redis-$mode"
  redis-server --port $rport --bind 127.0.0.1 --save "" --dir "$work/redis-$mode" --logfile "$work/redis-$mode.log" "$@" &
  local rp=$!
  pids+=("$rp")
  for _ in $(seq 100); do redis-cli -p $rport ping >/dev/null 2>&1 && break; sleep 0.05; done
  awk -v n="$players" 'BEGIN { srand(1); for (i = 0; i < n; i++) printf "ZADD bench %d member:%012d\r\n", int(rand() * 1e9), i }' |
    redis-cli -p $rport --pipe >/dev/null
  local n=$((secs * 40000))
  rbphase "redis-$mode-zrevrank" "$rp" "$n" ZREVRANK bench member:__rand_int__
  rbphase "redis-$mode-zrevrange100" "$rp" "$n" ZREVRANGE bench 0 99 WITHSCORES
  rbphase "redis-$mode-zadd" "$rp" "$n" ZADD bench __rand_int__ member:__rand_int__
  redis-cli -p $rport shutdown nosave >/dev/null 2>&1 || kill "$rp"
  wait "$rp" 2>/dev/null || true
}
redisrun nofsync --appendonly no
redisrun always --appendonly yes --appendfsync always

# --- report ---
echo "bench/vsredis/run.sh $secs $conns: $(nproc) cores, $(date -u +%FT%TZ), $(go version | cut -d' ' -f3), $(redis-server --version | cut -d' ' -f3)"
printf '%-30s %12s %9s %9s %9s\n' phase "ops/s" "p50 ms" "p99 ms" "CPU us/op"
declare -A rps cpuop
for r in "${results[@]}"; do
  read -r name ops p50 p99 us <<<"$r"
  printf '%-30s %12s %9s %9s %9s\n' "$name" "$ops" "$p50" "$p99" "$us"
  rps[$name]=$ops
  cpuop[$name]=$us
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
echo
echo "ratios (podium / the trivial handler, same run; goals: rank and top 100 >= 0.9x, submit CPU <= 2x):"
echo "  rank        $(ratio "${rps[podium-rank]}" "${rps[trivial]}")x throughput"
echo "  top 100     $(ratio "${rps[podium-top100]}" "${rps[trivial]}")x throughput"
echo "  top 100     $(ratio "${rps[podium-top100]}" "${rps[trivial-page]}")x throughput of the trivial handler writing $pagebytes bytes (trivial-page $(ratio "${rps[trivial-page]}" "${rps[trivial]}")x trivial)"
echo "  submit      $(ratio "${cpuop[podium-submit]}" "${cpuop[trivial]}")x CPU per request (${cpuop[podium-submit]} vs ${cpuop[trivial]} us)"
echo
echo "ratios (podium / Redis, same run):"
echo "  rank        vs ZREVRANK (no fsync):        $(ratio "${rps[podium-rank]}" "${rps[redis-nofsync-zrevrank]}")x throughput"
echo "  top 100     vs ZREVRANGE 0 99 (no fsync):  $(ratio "${rps[podium-top100]}" "${rps[redis-nofsync-zrevrange100]}")x throughput"
echo "  submit      vs ZADD appendfsync always:    $(ratio "${rps[podium-submit]}" "${rps[redis-always-zadd]}")x throughput"
echo "  submit      vs ZADD no fsync:              $(ratio "${rps[podium-submit]}" "${rps[redis-nofsync-zadd]}")x throughput"
pair=$(awk -v a="${cpuop[redis-always-zadd]}" -v b="${cpuop[redis-always-zrevrank]}" 'BEGIN { printf "%.1f", a + b }')
echo "  submit CPU  vs ZADD+ZREVRANK (always):     $(ratio "${cpuop[podium-submit]}" "$pair")x CPU per op (${cpuop[podium-submit]} vs $pair us)"
echo "  batch       $(awk -v r="${rps[podium-batch1000]}" 'BEGIN { printf "%.0f", r * 1000 }') scores/s"
if [ -n "${BEFORE:-}" ]; then
  echo
  echo "after / before ($BEFORE), same run:"
  for ph in rank top100 submit batch1000; do
    echo "  $ph: $(ratio "${rps[podium-$ph]}" "${rps[before-$ph]}")x throughput, CPU per op ${cpuop[before-$ph]} -> ${cpuop[podium-$ph]} us"
  done
  echo "  before / trivial: rank $(ratio "${rps[before-rank]}" "${rps[trivial]}")x, top 100 $(ratio "${rps[before-top100]}" "${rps[trivial]}")x ($(ratio "${rps[before-top100]}" "${rps[trivial-page]}")x trivial-page), submit CPU $(ratio "${cpuop[before-submit]}" "${cpuop[trivial]}")x"
  echo "  before's ratios: rank $(ratio "${rps[before-rank]}" "${rps[redis-nofsync-zrevrank]}")x, top 100 $(ratio "${rps[before-top100]}" "${rps[redis-nofsync-zrevrange100]}")x, submit $(ratio "${rps[before-submit]}" "${rps[redis-always-zadd]}")x ZADD always, submit CPU $(ratio "${cpuop[before-submit]}" "$pair")x the pair"
fi
