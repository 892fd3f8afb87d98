#!/usr/bin/env bash
# bench/sessions.sh — what a session costs: CPU per 1,000 steps against
# plain requests at the same rate, and memory with 10,000 sessions in
# progress. bench/run.sh runs it and puts its table in docs/BENCHMARKS.md;
# it also runs alone (about 2 minutes):
#
#   bash bench/sessions.sh [OPENLOAD_BINARY]   # DUR=10 RATE=2000 PORT=18095
#
# Against bench/target on loopback, with /usr/bin/time -v around each run:
#   plain      RATE requests/s of one GET, openload's default client (the
#              HTTP/1.1 event loop)
#   lean       the same on the lean client, a goroutine a connection
#              (--no-epoll): the client session steps take, so the
#              like-for-like row
#   net/http   the same on net/http's client (--net-http)
#   sessions   RATE/5 users/s, each 5 GET steps without think time: RATE
#              steps/s, on the lean client
#   think      the same with 100 ms of think time between steps: more
#              users in progress at once, each step woken by the thinkers
#   sessions net/http  the sessions row on net/http's client
#   10k users  1,000 users/s for 10 s, 2 steps 60 s apart: all 10,000 are
#              in progress (thinking) when the arrivals end; the drain (2 s)
#              then ends them unfinished. Peak RSS next to plain at 1,000/s.
# The target's own count must equal the steps openload says it sent.
# Prints one markdown table on stdout. Traffic goes to 127.0.0.1 only.
set -euo pipefail
cd "$(dirname "$0")/.."

DUR=${DUR:-10}
RATE=${RATE:-2000}
PORT=${PORT:-18095}
URL="http://127.0.0.1:$PORT"
W=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$W"' EXIT
OL=${1:-}
if [ -z "$OL" ]; then
  go build -o "$W/openload" ./cmd/openload
  OL="$W/openload"
fi
go build -o "$W/target" ./bench/target
command -v jq >/dev/null || { apt-get update -qq >/dev/null 2>&1 || true; apt-get install -y -qq jq >/dev/null; }
[ -x /usr/bin/time ] || { apt-get update -qq >/dev/null 2>&1 || true; apt-get install -y -qq time >/dev/null; }

"$W/target" serve -addr "127.0.0.1:$PORT" >"$W/target.log" 2>&1 &
for _ in $(seq 50); do curl -s -o /dev/null "$URL/count" && break; sleep 0.1; done

# scenario USERS N THINK D: a scenario of USERS users/s for D s, each N
# GET steps THINK apart.
scenario() {
  local users=$1 n=$2 think=$3 d=$4
  {
    echo "scenarios:"
    echo "  - name: s"
    echo "    rate: $users"
    echo "    duration: ${d}s"
    echo "    url: $URL"
    echo "    steps:"
    for k in $(seq "$n"); do
      echo "      - name: step$k"
      echo "        url: /step$k?u={{seq}}"
      if [ "$k" -gt 1 ] && [ "$think" != 0 ]; then echo "        think: $think"; fi
    done
  } >"$W/s.yaml"
}

# measure NAME ARGS…: one run; prints "cpu_s rss_mb sent served peak"
measure() {
  local name=$1; shift
  curl -s -o /dev/null "$URL/arrivals/reset"
  local before after
  before=$(curl -s "$URL/count")
  /usr/bin/time -v "$OL" "$@" -q -o "$W/$name.json" >"$W/$name.out" 2>"$W/$name.time" || true
  after=$(curl -s "$URL/count")
  local u s rss
  u=$(awk -F': ' '/User time/ {print $2}' "$W/$name.time")
  s=$(awk -F': ' '/System time/ {print $2}' "$W/$name.time")
  rss=$(awk -F': ' '/Maximum resident/ {print $2}' "$W/$name.time")
  local sent peak
  sent=$(jq '[.counts.sent] + [(.scenarios // [])[].result.counts.sent] | max' "$W/$name.json")
  peak=$(jq '[(.scenarios // [])[].result.sessions.timeline // [] | .[].in_progress] | max // 0' "$W/$name.json")
  echo "$(echo "$u + $s" | bc -l) $(echo "$rss / 1024" | bc -l) $sent $((after - before)) $peak"
}

# row NAME WHAT cpu rss sent served peak: one line of the table; PER is
# its CPU seconds per 1,000 sent.
row() {
  PER=$(echo "$3 * 1000 / $5" | bc -l)
  printf '| %s | %s | %d | %d | %.3f | %.3f | %.0f | %s |\n' "$1" "$2" "$5" "$6" "$3" "$PER" "$4" "$7"
  [ "$5" = "$6" ] || echo "sessions.sh: $1: openload sent $5, the target served $6" >&2
}

echo "| run | what | sent | target served | CPU s | CPU s per 1,000 | peak RSS (MB) | peak users in progress |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
read -r c r s v p < <(measure plain -rate "$RATE" -d "${DUR}s" "$URL/plain")
row plain "$RATE/s one GET, default client" "$c" "$r" "$s" "$v" "—"
read -r c r s v p < <(measure lean -rate "$RATE" -d "${DUR}s" --no-epoll "$URL/plain")
row lean "$RATE/s one GET, --no-epoll" "$c" "$r" "$s" "$v" "—"
LEAN=$PER
read -r c r s v p < <(measure nethttp -rate "$RATE" -d "${DUR}s" --net-http "$URL/plain")
row net/http "$RATE/s one GET, --net-http" "$c" "$r" "$s" "$v" "—"
NET=$PER
scenario $((RATE / 5)) 5 0 "$DUR"
read -r c r s v p < <(measure sessions --scenarios "$W/s.yaml")
row sessions "$((RATE / 5)) users/s × 5 steps, no think" "$c" "$r" "$s" "$v" "$p"
SES=$PER
read -r c r s v p < <(measure sessnet --scenarios "$W/s.yaml" --net-http)
row "sessions net/http" "the same, --net-http" "$c" "$r" "$s" "$v" "$p"
SESNET=$PER
scenario $((RATE / 5)) 5 100ms "$DUR"
read -r c r s v p < <(measure think --scenarios "$W/s.yaml")
row think "$((RATE / 5)) users/s × 5 steps, think 100 ms" "$c" "$r" "$s" "$v" "$p"
THINK=$PER
read -r c r s v p < <(measure plain1k -rate 1000 -d 10s "$URL/plain")
row "plain 1k" "1000/s one GET for 10 s, default client" "$c" "$r" "$s" "$v" "—"
scenario 1000 2 60s 10
read -r c r s v p < <(measure users10k --scenarios "$W/s.yaml" --drain 2s)
row "10k users" "1000 users/s for 10 s, 2 steps 60 s apart" "$c" "$r" "$s" "$v" "$p"
echo
printf 'CPU per 1,000 steps against the same requests on the same client: sessions %.2f× --no-epoll, with think time %.2f×; on net/http %.2f× --net-http\n' \
  "$(echo "$SES / $LEAN" | bc -l)" "$(echo "$THINK / $LEAN" | bc -l)" "$(echo "$SESNET / $NET" | bc -l)"
