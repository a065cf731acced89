#!/usr/bin/env bash
# compare.sh: Strata against franz-go's kfake (on disk, and on disk with an
# fsync per batch), same client, same machine, alternating rounds.
#
# For each round and each target it starts a fresh broker on a free loopback
# port with a fresh data dir, runs `strata bench` (produce throughput,
# consume throughput, e2e and ack latency), reads the broker's peak RSS,
# stops it (SIGTERM, then SIGKILL after 15 s) and deletes its data. At the
# end it prints the median of every metric per target and the ratios
# strata/kfake-disk and strata/kfake-sync as a Markdown table.
#
# Environment (defaults in brackets):
#   ROUNDS [3]                 rounds; the target order rotates every round
#   DURATION [10s]             length of each timed run (Go duration; max 10m)
#   CONSUME_BYTES [2000000000] bytes produced before the consume benchmark
#   TARGETS ["strata kfake-disk kfake-sync"]
#   OUT [new /tmp/strata-compare.*]  where results.tsv, summary.md and logs go
#   STRATA_BIN                 use this strata binary instead of building one
#   STARTUP_TIMEOUT [30]       seconds to wait for a broker's ready line
#
# Only processes this script starts are ever signalled, each by its PID.
set -uo pipefail

BENCH_NAME=compare
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10s}
CONSUME_BYTES=${CONSUME_BYTES:-2000000000}
TARGETS=${TARGETS:-"strata kfake-disk kfake-sync"}
STARTUP_TIMEOUT=${STARTUP_TIMEOUT:-30}
RECORD_BYTES=1024
PARTITIONS=6

[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "ROUNDS=$ROUNDS: use a positive integer"
[[ $CONSUME_BYTES =~ ^[1-9][0-9]*$ ]] || die "CONSUME_BYTES=$CONSUME_BYTES: use a positive integer"
[[ $STARTUP_TIMEOUT =~ ^[1-9][0-9]*$ ]] || die "STARTUP_TIMEOUT=$STARTUP_TIMEOUT: use a positive integer"
command -v jq >/dev/null || die "needs jq (apt-get install jq)"
command -v timeout >/dev/null || die "needs timeout (coreutils)"
for t in $TARGETS; do
	case $t in strata | kfake-disk | kfake-sync) ;; *) die "unknown target $t" ;; esac
done

# duration_secs turns a simple Go duration (500ms, 10s, 2m) into whole
# seconds, rounded up; anything else counts as the 10 minute cap.
duration_secs() {
	case $1 in
	*ms) echo 1 ;;
	*s) [[ ${1%s} =~ ^[0-9]+$ ]] && echo "${1%s}" || echo 600 ;;
	*m) [[ ${1%m} =~ ^[0-9]+$ ]] && echo $((${1%m} * 60)) || echo 600 ;;
	*) echo 600 ;;
	esac
}
DURATION_S=$(duration_secs "$DURATION")
((DURATION_S <= 600)) || die "DURATION=$DURATION: at most 10m"
RUN_LIMIT=$((DURATION_S + 150))   # a timed run: duration + warm-up, flush and drain limits
LONG_LIMIT=$((600 + 120))         # a --records run or a consume: the bench's 10m cap

bench_dirs strata-compare
mkdir -p "$OUT/logs" || die "cannot create $OUT/logs"
RESULTS=$OUT/results.tsv
printf 'round\ttarget\tmetric\tvalue\n' >"$RESULTS"
TARGET_PID=

# stop_target stops the broker this script started.
stop_target() {
	stop_pid "$TARGET_PID"
	TARGET_PID=
}

echo "compare: building into $BIN"
build_strata
build_bench kfakeserver
build_bench disklatency
build_bench diskstall

# The disk's own floor under durable latency, on the file system of the
# data dirs (WORK), written in the summary: a 1 KiB write + fdatasync, back
# to back and with the gaps of 10k and 1k records/s.
echo "compare: measuring the data disk (bench/disklatency)"
DISK_JSON=$(run_limited 120 "$BIN/disklatency" --dir "$WORK") || DISK_JSON=
printf '%s\n' "$DISK_JSON" >"$OUT/disk.json"
# ... and under the e2e load at 100k records/s: six files appended at
# 100 MB/s in all, each 16 KiB write fdatasync'ed, past the files' ends
# and over written blocks, with the disk's stall episodes.
echo "compare: measuring the data disk under load (bench/diskstall)"
STALL_JSON=$(run_limited 120 "$BIN/diskstall" --dir "$WORK") || STALL_JSON=
printf '%s\n' "$STALL_JSON" >"$OUT/diskstall.json"

# start_target starts $TARGET on $PORT with data in $DATA and waits for
# its ready line.
start_target() {
	local log=$LOGS_PREFIX-broker.log
	case $TARGET in
	strata) "$BIN/strata" serve --listen "127.0.0.1:$PORT" --data-dir "$DATA" >"$log" 2>&1 & ;;
	kfake-disk) "$BIN/kfakeserver" --port "$PORT" --dir "$DATA" --partitions "$PARTITIONS" >"$log" 2>&1 & ;;
	kfake-sync) "$BIN/kfakeserver" --port "$PORT" --dir "$DATA" --sync --partitions "$PARTITIONS" >"$log" 2>&1 & ;;
	esac
	TARGET_PID=$!
	started "$TARGET_PID" "$TARGET"
	wait_ready "$TARGET_PID" "$TARGET" "$log"
}

record() { printf '%s\t%s\t%s\t%s\n' "$ROUND" "$TARGET" "$1" "$2" >>"$RESULTS"; }

# extract FILE METRIC JQ_EXPR [METRIC JQ_EXPR...] records values from a
# --json line; a missing value is recorded as FAIL.
extract() {
	local file=$1 v
	shift
	while (($# >= 2)); do
		v=$(jq -r "($2) // \"FAIL\"" "$file" 2>/dev/null | tail -n 1)
		record "$1" "${v:-FAIL}"
		shift 2
	done
}

# JQ_DEFS are helpers for the progress lines: r2 rounds to two decimals.
JQ_DEFS='def r2: (. * 100 | round) / 100; '

fail_metrics() { for m in "$@"; do record "$m" FAIL; done; }

# settle writes back what earlier runs left dirty on the data dir's file
# system (the consume fill's 2 GB is still being written back when the
# latency runs start), so that no run measures another's writeback.
settle() { sync -f "$DATA" 2>/dev/null || sync; }

# bench NAME LIMIT_S ARGS... runs `strata bench --json` against the target.
bench() {
	local name=$1 limit=$2 base=$LOGS_PREFIX-$1
	shift 2
	settle
	run_limited "$limit" "$BIN/strata" bench --bootstrap "127.0.0.1:$PORT" \
		--record-bytes "$RECORD_BYTES" --partitions "$PARTITIONS" --acks all --compression none \
		--json "$@" >"$base.json" 2>"$base.err" && return 0
	echo "  $name: FAILED (log $base.err)"
	tail -n 3 "$base.err" | sed 's/^/    /'
	return 1
}

# The metrics, in table order, with the better direction of each.
METRICS=(
	"produce_mb_s higher" "produce_rec_s higher" "produce_ack_p50_ms lower" "produce_ack_p99_ms lower"
	"produce_ack_p999_ms lower" "consume_mb_s higher" "consume_rec_s higher"
	"e2e_10k_p50_ms lower" "e2e_10k_p99_ms lower" "e2e_10k_p999_ms lower"
	"e2e_100k_rec_s higher" "e2e_100k_p50_ms lower" "e2e_100k_p99_ms lower" "e2e_100k_p999_ms lower"
	"e2e_10k_acks1_p99_ms lower" "e2e_100k_acks1_p99_ms lower" "e2e_100k_acks1_p999_ms lower"
	"ack_1k_p50_ms lower" "ack_1k_p99_ms lower" "ack_1k_p999_ms lower" "rss_peak_mb lower"
)
PRODUCE_METRICS=(produce_mb_s produce_rec_s produce_ack_p50_ms produce_ack_p99_ms produce_ack_p999_ms)
CONSUME_METRICS=(consume_mb_s consume_rec_s)
E2E10K_METRICS=(e2e_10k_p50_ms e2e_10k_p99_ms e2e_10k_p999_ms)
E2E100K_METRICS=(e2e_100k_rec_s e2e_100k_p50_ms e2e_100k_p99_ms e2e_100k_p999_ms)
ACKS1_METRICS=(e2e_10k_acks1_p99_ms e2e_100k_acks1_p99_ms e2e_100k_acks1_p999_ms)
ACK1K_METRICS=(ack_1k_p50_ms ack_1k_p99_ms ack_1k_p999_ms)

run_target() {
	LOGS_PREFIX=$OUT/logs/r$ROUND-$TARGET
	DATA=$(mktemp -d "$WORK/data-$TARGET.XXXXXX")
	PORT=$(free_port) || {
		echo "  no free port"
		fail_metrics "${METRICS[@]%% *}"
		return
	}
	echo "round $ROUND: $TARGET on 127.0.0.1:$PORT"
	if ! start_target; then
		fail_metrics "${METRICS[@]%% *}"
		stop_target
		rm -rf "$DATA"
		return
	fi

	local f=$LOGS_PREFIX
	if bench produce "$RUN_LIMIT" --mode produce --topic bench-produce --linger 5ms --duration "$DURATION"; then
		extract "$f-produce.json" produce_mb_s .produce.mb_per_s produce_rec_s .produce.records_per_s \
			produce_ack_p50_ms .produce.ack_ms.p50 produce_ack_p99_ms .produce.ack_ms.p99 \
			produce_ack_p999_ms .produce.ack_ms.p999
		echo "  produce: $(jq -r "$JQ_DEFS"'"\(.produce.mb_per_s|floor) MB/s, ack p99 \(.produce.ack_ms.p99|r2) ms"' "$f-produce.json")"
	else
		fail_metrics "${PRODUCE_METRICS[@]}"
	fi

	if bench fill "$LONG_LIMIT" --mode produce --topic bench-consume --linger 5ms \
		--records $((CONSUME_BYTES / RECORD_BYTES + 1)) &&
		bench consume "$LONG_LIMIT" --mode consume --topic bench-consume; then
		extract "$f-consume.json" consume_mb_s .consume.mb_per_s consume_rec_s .consume.records_per_s
		echo "  consume: $(jq -r "$JQ_DEFS"'"\(.consume.mb_per_s|floor) MB/s, \(.consume.bytes) bytes"' "$f-consume.json")"
	else
		fail_metrics "${CONSUME_METRICS[@]}"
	fi

	if bench e2e-10k "$RUN_LIMIT" --mode e2e --topic bench-e2e --linger 0 --rate 10000 --duration "$DURATION"; then
		extract "$f-e2e-10k.json" e2e_10k_p50_ms .e2e.e2e_ms.p50 e2e_10k_p99_ms .e2e.e2e_ms.p99 \
			e2e_10k_p999_ms .e2e.e2e_ms.p999
		echo "  e2e 10k/s: $(jq -r "$JQ_DEFS"'"p50 \(.e2e.e2e_ms.p50|r2) ms, p99 \(.e2e.e2e_ms.p99|r2) ms"' "$f-e2e-10k.json")"
	else
		fail_metrics "${E2E10K_METRICS[@]}"
	fi

	if bench e2e-100k "$RUN_LIMIT" --mode e2e --topic bench-e2e --linger 0 --rate 100000 --duration "$DURATION"; then
		extract "$f-e2e-100k.json" e2e_100k_rec_s .e2e.records_per_s e2e_100k_p50_ms .e2e.e2e_ms.p50 \
			e2e_100k_p99_ms .e2e.e2e_ms.p99 e2e_100k_p999_ms .e2e.e2e_ms.p999
		echo "  e2e 100k/s: $(jq -r "$JQ_DEFS"'"\(.e2e.records_per_s|floor) rec/s, p50 \(.e2e.e2e_ms.p50|r2) ms, p99 \(.e2e.e2e_ms.p99|r2) ms"' "$f-e2e-100k.json")"
	else
		fail_metrics "${E2E100K_METRICS[@]}"
	fi

	# The same two e2e loads with acks=1 (not idempotent): nothing waits
	# for a sync, so they are the floor the machine and the clients set
	# under the e2e figures above.
	if bench e2e-10k-acks1 "$RUN_LIMIT" --mode e2e --topic bench-e2e-acks1 --linger 0 --rate 10000 --duration "$DURATION" --acks 1 &&
		bench e2e-100k-acks1 "$RUN_LIMIT" --mode e2e --topic bench-e2e-acks1 --linger 0 --rate 100000 --duration "$DURATION" --acks 1; then
		extract "$f-e2e-10k-acks1.json" e2e_10k_acks1_p99_ms .e2e.e2e_ms.p99
		extract "$f-e2e-100k-acks1.json" e2e_100k_acks1_p99_ms .e2e.e2e_ms.p99 e2e_100k_acks1_p999_ms .e2e.e2e_ms.p999
		echo "  e2e acks=1: 10k/s p99 $(jq -r "$JQ_DEFS"'.e2e.e2e_ms.p99|r2' "$f-e2e-10k-acks1.json") ms, 100k/s p99 $(jq -r "$JQ_DEFS"'.e2e.e2e_ms.p99|r2' "$f-e2e-100k-acks1.json") ms"
	else
		fail_metrics "${ACKS1_METRICS[@]}"
	fi

	if bench ack-1k "$RUN_LIMIT" --mode produce --topic bench-ack --linger 0 --rate 1000 --duration "$DURATION"; then
		extract "$f-ack-1k.json" ack_1k_p50_ms .produce.ack_ms.p50 ack_1k_p99_ms .produce.ack_ms.p99 \
			ack_1k_p999_ms .produce.ack_ms.p999
		echo "  ack 1k/s: $(jq -r "$JQ_DEFS"'"p50 \(.produce.ack_ms.p50|r2) ms, p99 \(.produce.ack_ms.p99|r2) ms"' "$f-ack-1k.json")"
	else
		fail_metrics "${ACK1K_METRICS[@]}"
	fi

	# VmHWM is the peak resident set over the broker's whole life.
	local hwm_kb
	hwm_kb=$(awk '/^VmHWM:/ {print $2}' "/proc/$TARGET_PID/status" 2>/dev/null)
	if [[ -n $hwm_kb ]]; then
		record rss_peak_mb "$(awk -v k="$hwm_kb" 'BEGIN {printf "%.1f", k / 1024}')"
		echo "  peak RSS: $((hwm_kb / 1024)) MB"
	else
		echo "  broker is gone; no RSS"
		record rss_peak_mb FAIL
	fi
	stop_target
	rm -rf "$DATA"
}

read -ra TARGET_LIST <<<"$TARGETS"
N=${#TARGET_LIST[@]}
echo "compare: $ROUNDS rounds of ${TARGET_LIST[*]}, DURATION=$DURATION CONSUME_BYTES=$CONSUME_BYTES, results in $OUT"
for ((ROUND = 1; ROUND <= ROUNDS; ROUND++)); do
	for ((i = 0; i < N; i++)); do
		TARGET=${TARGET_LIST[$(((i + ROUND - 1) % N))]}
		run_target
	done
done

# median TARGET METRIC prints the median of the numeric values, or FAIL.
median() {
	awk -F'\t' -v t="$1" -v m="$2" '$2 == t && $3 == m && $4 != "FAIL" {print $4}' "$RESULTS" | sort -g |
		awk '{v[NR] = $1} END {
			if (NR == 0) print "FAIL"
			else if (NR % 2) print v[(NR + 1) / 2]
			else print (v[NR / 2] + v[NR / 2 + 1]) / 2
		}'
}

# ratio A B prints A/B to two decimals, or n/a.
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN {
		if (a == "FAIL" || b == "FAIL" || b + 0 == 0) print "n/a"; else printf "%.2f\n", a / b
	}'
}

fmt_value() { awk -v v="$1" 'BEGIN { if (v == "FAIL") print v; else if (v >= 100) printf "%.0f\n", v; else printf "%.3g\n", v }'; }

has_target() { [[ " $TARGETS " == *" $1 "* ]]; }

{
	echo "## strata vs kfake: medians of $ROUNDS round(s)"
	echo
	echo "$(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, $(uname -sr), $(go version 2>/dev/null | awk '{print $3}')," \
		"DURATION=$DURATION, CONSUME_BYTES=$CONSUME_BYTES, $RECORD_BYTES B records, $PARTITIONS partitions, acks all (idempotent)."
	echo "Throughput in MB/s (10^6 B) and records/s, latency in ms, RSS in MB (MiB). Ratio > 1: strata's number is larger."
	if [[ -n $DISK_JSON ]]; then
		echo "Data disk (bench/disklatency), 1 KiB write + fdatasync p50/p99 ms: $(jq -r '"back to back \(.back_to_back_ms.p50*100|round/100)/\(.back_to_back_ms.p99*100|round/100), 100 µs apart \(.gap_100us_ms.p50*100|round/100)/\(.gap_100us_ms.p99*100|round/100), 1 ms apart \(.gap_1ms_ms.p50*100|round/100)/\(.gap_1ms_ms.p99*100|round/100)"' <<<"$DISK_JSON")."
	else
		echo "Data disk: not measured (bench/disklatency failed)."
	fi
	if [[ -n $STALL_JSON ]]; then
		echo "Data disk under load (bench/diskstall), 6 files at 100 MB/s, 16 KiB write + fdatasync p99/p999 ms and stall episodes (syncs ≥ 5 ms): $(jq -r 'def r: .*100|round/100; def m: "p99 \(.p99_ms|r), p999 \(.p999_ms|r), \(.episodes) episodes, \(.stalled_share*1000|round/10) % of the time stalled"; "appending \(.append|m); overwriting \(.overwrite|m)"' <<<"$STALL_JSON")."
	else
		echo "Data disk under load: not measured (bench/diskstall failed)."
	fi
	echo
	header="| metric | better |"
	sep="|---|---|"
	for t in "${TARGET_LIST[@]}"; do header+=" $t |"; sep+="---:|"; done
	if has_target strata; then
		for k in kfake-disk kfake-sync; do
			has_target "$k" && { header+=" strata/$k |"; sep+="---:|"; }
		done
	fi
	echo "$header"
	echo "$sep"
	for entry in "${METRICS[@]}"; do
		metric=${entry%% *}
		row="| $metric | ${entry#* } |"
		declare -A med=()
		for t in "${TARGET_LIST[@]}"; do
			med[$t]=$(median "$t" "$metric")
			row+=" $(fmt_value "${med[$t]}") |"
		done
		if has_target strata; then
			for k in kfake-disk kfake-sync; do
				has_target "$k" && row+=" $(ratio "${med[strata]}" "${med[$k]}") |"
			done
		fi
		unset med
		echo "$row"
	done
	failures=$(awk -F'\t' '$4 == "FAIL"' "$RESULTS" | wc -l)
	if ((failures > 0)); then
		echo
		echo "$failures value(s) failed and are left out of the medians:"
		awk -F'\t' '$4 == "FAIL" {
			k = "round " $1 ", " $2
			if (!(k in seen)) { seen[k] = 1; order[++n] = k }
			list[k] = list[k] (list[k] == "" ? "" : ", ") $3
		}
		END { for (i = 1; i <= n; i++) print "- " order[i] ": " list[order[i]] }' "$RESULTS"
	fi
} | tee "$OUT/summary.md"
echo
echo "compare: raw values in $RESULTS, logs in $OUT/logs, table in $OUT/summary.md"
