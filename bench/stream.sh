#!/usr/bin/env bash
# bench/stream.sh — streamed answers on every client, held to a known
# answer. bench/run.sh runs it and puts its table in docs/BENCHMARKS.md;
# it also runs alone (about a minute):
#
#   bash bench/stream.sh [OPENLOAD_BINARY]    # DUR=5 RATE=20 PORT=18090
#
# openload's stub answers every chat request with 30 tokens as a stream,
# the first after P = 200 ms, then one every I = 20 ms, with room for 256
# sequences at once (no queue): service time S = P + 29·I = 780 ms, TTFT
# from the send P, ITL and TPOT I. Each client reads RATE streams a
# second for DUR seconds; its figures are compared with that answer and
# the run's own stamp check (scheduled ≤ sent ≤ first byte ≤ first token
# ≤ last token ≤ done) must pass. A speed change that breaks a stamp
# (issue 50: the default client once ended every stream at its first
# byte, service p50 1 ms) fails here, not only in the tests.
#
# Tolerances, wide enough for a busy 2-core machine (the stub shares it):
# service p50 and TTFT p50 from the send +0/+15 ms and +0/+8 ms over the
# answer (loopback and the stub's own scheduling only ever add), ITL p50
# and TPOT mean ±3 ms, tokens exactly 30 a stream.
# Prints one markdown table on stdout; exits 1 when a row is off.
# Traffic goes to 127.0.0.1 only.
set -euo pipefail
cd "$(dirname "$0")/.."

DUR=${DUR:-5}
RATE=${RATE:-20}
PORT=${PORT:-18090}
URL="http://127.0.0.1:$PORT/v1/chat/completions"
W=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$W"' EXIT
OL=${1:-}
if [ -z "$OL" ]; then
  go build -o "$W/openload" ./cmd/openload
  OL="$W/openload"
fi
command -v jq >/dev/null || { apt-get update -qq >/dev/null 2>&1 || true; apt-get install -y -qq jq >/dev/null; }

"$OL" stub --listen "127.0.0.1:$PORT" --h2c --policy none --max-queue-wait 1h \
  --batch-slots 256 --prefill 200ms --prefill-per-token 0 --itl 20ms --itl-per-seq 0 >"$W/stub.log" 2>&1 &
for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break; sleep 0.1; done

BODY='{"model":"stub","messages":[{"role":"user","content":"hi"}],"max_tokens":30,"stream":true,"stream_options":{"include_usage":true}}'
# within GOT LO HI: 1 when LO ≤ GOT ≤ HI
within() { echo "$1 >= $2 && $1 <= $3" | bc -l; }

echo "| client | service p50 (ms) | TTFT from the send p50 (ms) | ITL p50 (ms) | TPOT mean (ms) | tokens | stamps | verdict |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
bad=0
for client in default --no-epoll --net-http --h2c "--h2c --net-http"; do
  flags=""
  [ "$client" != default ] && flags=$client
  # shellcheck disable=SC2086 # flags is a list of flags
  "$OL" -q $flags --stream -c 256 -r "$RATE" -d "${DUR}s" --drain 5s --body "$BODY" \
    -o "$W/r.json" "$URL" >/dev/null 2>&1 || true
  j() { jq -r "$1" "$W/r.json"; }
  svc=$(j .service.p50); ttft=$(j .stream.ttft_service.p50); itl=$(j .stream.itl.p50); tpot=$(j .stream.tpot.mean)
  tokens=$(j .stream.output_tokens); done_n=$(j .counts.completed); want=$((RATE * DUR))
  stamps=$(j '[.checks[] | select(.name == "stamps") | .severity][0] // "none"')
  ok=1
  [ "$(within "$svc" 780 795)" = 1 ] || ok=0
  [ "$(within "$ttft" 200 208)" = 1 ] || ok=0
  [ "$(within "$itl" 17 23)" = 1 ] || ok=0
  [ "$(within "$tpot" 17 23)" = 1 ] || ok=0
  [ "$done_n" = "$want" ] && [ "$tokens" = $((30 * want)) ] || ok=0
  [ "$stamps" = pass ] || ok=0
  verdict=right
  [ "$ok" = 1 ] || { verdict="**OFF**"; bad=1; }
  printf '| %s | %.1f | %.1f | %.1f | %.1f | %s of %s | %s | %s |\n' "$client" "$svc" "$ttft" "$itl" "$tpot" "$tokens" "$((30 * want))" "$stamps" "$verdict"
done
exit $bad
