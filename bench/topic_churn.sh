#!/usr/bin/env bash
# topic_churn.sh: e2e latency of one topic's producer and consumer while
# another client creates and deletes topics over and over, against the
# same load without the churn, alternated in one run.
#
# Each round starts a fresh broker of each target and runs `strata bench
# --mode e2e` at RATE records/s for DURATION, once quiet and once with
# --churn-partitions CHURN_PARTITIONS (a topic of that many partitions
# created and deleted back to back). It prints the medians of p50, p99,
# p999 and the churn cycles per target, and each target's churn/quiet
# ratio of the p99. Targets: strata (this tree's build, or STRATA_BIN),
# baseline (BASELINE_BIN, another strata build, when set) and kfake-disk
# (franz-go's kfake on disk, which creates topics in memory: it churns
# many more of them in the same time, so read its figures as a reference,
# not a like-for-like ratio).
#
# Environment (defaults in brackets):
#   ROUNDS [3]                 rounds; the target order rotates every round
#   RATE [10000]               records/s of the measured topic (1 KiB records, 6 partitions)
#   DURATION [10s]             measured time of each run
#   CHURN_PARTITIONS [50]      partitions of each churned topic
#   STRATA_BIN                 use this strata binary instead of building one
#   BASELINE_BIN               another strata binary to measure alongside
#   OUT [new /tmp/strata-topic-churn.*]  where the logs and results go
#
# Bounded: each bench run is limited to DURATION + 120 s; only the
# processes this script starts are ever signalled, each by its PID, and its
# temporary directories are removed at exit.
set -uo pipefail

BENCH_NAME=topic_churn
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ROUNDS=${ROUNDS:-3}
RATE=${RATE:-10000}
DURATION=${DURATION:-10s}
CHURN_PARTITIONS=${CHURN_PARTITIONS:-50}
STARTUP_TIMEOUT=30

for v in ROUNDS RATE CHURN_PARTITIONS; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v=${!v}: use a positive integer"
done
[[ $DURATION =~ ^[1-9][0-9]*s$ ]] || die "DURATION=$DURATION: use whole seconds, e.g. 10s"
((${DURATION%s} <= 600)) || die "DURATION=$DURATION: at most 600s"
command -v jq >/dev/null || die "needs jq (apt-get install jq)"
command -v timeout >/dev/null || die "needs timeout (coreutils)"
RUN_LIMIT=$((${DURATION%s} + 120))

bench_dirs strata-topic-churn
build_strata
build_bench kfakeserver
TARGETS=(strata kfake-disk)
if [[ -n ${BASELINE_BIN:-} ]]; then
	cp "$BASELINE_BIN" "$BIN/baseline" || die "cannot copy BASELINE_BIN=$BASELINE_BIN"
	TARGETS=(strata baseline kfake-disk)
fi
RESULTS=$OUT/results.tsv
printf 'round\ttarget\tload\tp50_ms\tp99_ms\tp999_ms\tchurn_cycles\n' >"$RESULTS"

# run_round_target starts $TARGET fresh and runs the quiet and the churned
# e2e load against it.
run_round_target() {
	local data port pid log=$OUT/r$ROUND-$TARGET-broker.log load out
	data=$(mktemp -d "$WORK/data-$TARGET.XXXXXX")
	port=$(free_port) || die "no free port"
	case $TARGET in
	strata | baseline) "$BIN/$TARGET" serve --listen "127.0.0.1:$port" --data-dir "$data" >"$log" 2>&1 & ;;
	kfake-disk) "$BIN/kfakeserver" --port "$port" --dir "$data" >"$log" 2>&1 & ;;
	esac
	pid=$!
	started "$pid" "$TARGET"
	if ! wait_ready "$pid" "$TARGET" "$log"; then
		stop_pid "$pid"
		return
	fi
	for load in quiet churn; do
		out=$OUT/r$ROUND-$TARGET-$load.json
		local churn=()
		[[ $load == churn ]] && churn=(--churn-partitions "$CHURN_PARTITIONS")
		if run_limited "$RUN_LIMIT" "$BIN/strata" bench --bootstrap "127.0.0.1:$port" --mode e2e \
			--topic "e2e-$load" --rate "$RATE" --duration "$DURATION" "${churn[@]}" --json >"$out" 2>"$out.err"; then
			jq -r --arg r "$ROUND" --arg t "$TARGET" --arg l "$load" \
				'[$r, $t, $l, .e2e.e2e_ms.p50, .e2e.e2e_ms.p99, .e2e.e2e_ms.p999, (.e2e.churn_cycles // 0)] | @tsv' \
				"$out" | tail -n 1 >>"$RESULTS"
			echo "  $TARGET $load: $(tail -n 1 "$RESULTS" | cut -f4-7 | tr '\t' ' ')"
		else
			echo "  $TARGET $load: FAILED (log $out.err)"
		fi
	done
	stop_pid "$pid"
	rm -rf "$data"
}

echo "topic_churn: $ROUNDS rounds of ${TARGETS[*]}, $RATE rec/s for $DURATION, churn of $CHURN_PARTITIONS partitions; results in $OUT"
for ((ROUND = 1; ROUND <= ROUNDS; ROUND++)); do
	echo "round $ROUND"
	n=${#TARGETS[@]}
	for ((i = 0; i < n; i++)); do
		TARGET=${TARGETS[$(((i + ROUND - 1) % n))]}
		run_round_target
	done
done

# Medians per target and load, and each target's churn/quiet p99 ratio.
echo
echo "| target | load | p50 ms | p99 ms | p999 ms | churn cycles |"
echo "|---|---|---:|---:|---:|---:|"
jq -Rr -s '
	def median: sort | if length == 0 then null else .[(length - 1) / 2 | floor] end;
	split("\n") | .[1:] | map(select(length > 0) | split("\t")) |
	group_by([.[1], .[2]]) | map({t: .[0][1], l: .[0][2],
		p50: (map(.[3] | tonumber) | median), p99: (map(.[4] | tonumber) | median),
		p999: (map(.[5] | tonumber) | median), cycles: (map(.[6] | tonumber) | median)}) |
	(.[] | "| \(.t) | \(.l) | \(.p50 * 1000 | round / 1000) | \(.p99 * 1000 | round / 1000) | \(.p999 * 1000 | round / 1000) | \(.cycles) |"),
	"",
	(group_by(.t)[] | select(length == 2) |
		"\(.[0].t): churn/quiet p99 \((.[0].p99 / .[1].p99) * 100 | round / 100)")
' "$RESULTS" | tee "$OUT/summary.md"
