#!/usr/bin/env bash
# shards.sh — run one openload schedule as N shards, on this machine or on
# other machines over ssh, then merge their results. No Kubernetes needed.
#
#   deploy/shards.sh N OUTDIR [openload flags and URL...]
#
#   HOSTS="gen1 gen2 gen3 gen4" deploy/shards.sh 4 out -r 8000 -d 60s http://svc:8080/predict
#   deploy/shards.sh 4 out -r 400 -d 10s http://127.0.0.1:8080/predict    # N local processes
#
# Every shard gets --shard i/N and the same --start-at, LEAD seconds ahead
# (default 5: time for ssh and for each generator to open its connections),
# and writes OUTDIR/shard-i.json; then 'openload merge' writes OUTDIR/all.json
# and prints the whole's report. With HOSTS, shard i runs on the
# (i mod #HOSTS)-th host, whose openload (OPENLOAD, default "openload" on
# its PATH) writes to /tmp and is copied back with scp. The machines' clocks
# must agree (NTP or chrony): a shard on a clock that is behind starts late,
# and its first arrivals' send delay shows it.
set -euo pipefail

if [ $# -lt 3 ]; then
	sed -n '2,17p' "$0" >&2
	exit 2
fi
n=$1 out=$2
shift 2
openload=${OPENLOAD:-openload}
lead=${LEAD:-5}
read -r -a hosts <<<"${HOSTS:-}"
mkdir -p "$out"
start=$(($(date +%s) + lead))

pids=()
for ((i = 0; i < n; i++)); do
	args=(--shard "$i/$n" --start-at "$start" --quiet "$@")
	if [ ${#hosts[@]} -eq 0 ]; then
		"$openload" "${args[@]}" -o "$out/shard-$i.json" &
	else
		host=${hosts[$((i % ${#hosts[@]}))]}
		remote=/tmp/openload-shard-$i.json
		(ssh "$host" "$openload" "$(printf '%q ' "${args[@]}")" -o "$remote"
			code=$?
			scp -q "$host:$remote" "$out/shard-$i.json"
			exit $code) &
	fi
	pids+=($!)
done
# A shard's exit code says what its own checks and objectives found; the
# merge below decides for the whole.
for p in "${pids[@]}"; do
	wait "$p" || true
done
"$openload" merge "$out"/shard-*.json -o "$out/all.json"
