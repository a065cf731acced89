#!/usr/bin/env bash
# tier_upload.sh: do uploads to the remote tier keep up with a sustained
# produce load of half the broker's maximum produce throughput? (issue 3:
# "copy lag bounded, not growing").
#
# It starts versitygw (S3, posix backend) and one Strata broker on free
# loopback ports, with the remote tier in a versitygw bucket and
# remote.log.manager.task.interval.ms=$TASK_INTERVAL_MS; measures the
# maximum produce throughput for $MAX_DURATION on a local-only topic; then
# produces at half of it (records/s) for $LOAD_DURATION to a tiered topic
# with segment.bytes=$SEGMENT_BYTES, while bench/tierlag samples the copy
# lag (ListOffsets -1 minus -6, summed over partitions) every
# $SAMPLE_EVERY, and $DRAIN after the load. It prints the samples and a
# verdict line: BOUNDED (exit 0) when the lag does not trend up during the
# load (its least-squares slope after the ramp-up adds less than one
# segment per partition over the run) and drains to at most two segments
# per partition (the active one and the one just rolled) within $DRAIN;
# GROWING (exit 1) otherwise. See bench/tierlag for the details.
#
# Environment (defaults in brackets):
#   MAX_DURATION [10s]  LOAD_DURATION [60s]  DRAIN [20s]  SAMPLE_EVERY [3s]
#   TASK_INTERVAL_MS [1000]  SEGMENT_BYTES [16777216]  PARTITIONS [6]
#   RECORD_BYTES [1024]
#   OUT [new /tmp/strata-tier-upload.*]  logs and results
#   STRATA_BIN   use this strata binary instead of building one
#   VERSITYGW    the versitygw binary [from PATH or $GOPATH/bin]
#
# Everything is bounded in time, and only the processes this script starts
# are ever signalled, each by its PID; it deletes only its own work dir.
set -uo pipefail

BENCH_NAME=tier_upload BENCH_DIE_STATUS=2
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
MAX_DURATION=${MAX_DURATION:-10s}
LOAD_DURATION=${LOAD_DURATION:-60s}
DRAIN=${DRAIN:-20s}
SAMPLE_EVERY=${SAMPLE_EVERY:-3s}
TASK_INTERVAL_MS=${TASK_INTERVAL_MS:-1000}
SEGMENT_BYTES=${SEGMENT_BYTES:-16777216}
PARTITIONS=${PARTITIONS:-6}
RECORD_BYTES=${RECORD_BYTES:-1024}
STARTUP_TIMEOUT=30

secs() { # whole seconds of a simple Go duration (10s, 2m)
	case $1 in
	*s) [[ ${1%s} =~ ^[0-9]+$ ]] && echo "${1%s}" || echo 0 ;;
	*m) [[ ${1%m} =~ ^[0-9]+$ ]] && echo $((${1%m} * 60)) || echo 0 ;;
	*) echo 0 ;;
	esac
}
for v in MAX_DURATION LOAD_DURATION SAMPLE_EVERY; do
	s=$(secs "${!v}")
	((s > 0 && s <= 600)) || die "$v=${!v}: use whole seconds or minutes, at most 10m"
done
[[ $(secs "$DRAIN") -le 600 ]] || die "DRAIN=$DRAIN: at most 10m"
for v in TASK_INTERVAL_MS SEGMENT_BYTES PARTITIONS RECORD_BYTES; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v=${!v}: use a positive integer"
done
command -v jq >/dev/null || die "needs jq (apt-get install jq)"
command -v timeout >/dev/null || die "needs timeout (coreutils)"

find_versitygw

bench_dirs strata-tier-upload
echo "tier_upload: building into $BIN"
CGO_ENABLED=0 build_strata
build_bench tierlag

BUCKET=strata-bench
start_versitygw "$WORK/s3" "$BUCKET" "$OUT/versitygw.log"

PORT=$(free_port) || die "no free port"
"$BIN/strata" serve --listen "127.0.0.1:$PORT" --data-dir "$WORK/data" \
	--override "remote.log.manager.task.interval.ms=$TASK_INTERVAL_MS" \
	--override "log.retention.check.interval.ms=$TASK_INTERVAL_MS" \
	"${TIER_OVERRIDES[@]}" >"$OUT/broker.log" 2>&1 &
BROKER_PID=$!
started "$BROKER_PID" strata
wait_ready "$BROKER_PID" strata "$OUT/broker.log" || die "strata did not get ready (log $OUT/broker.log)"
echo "tier_upload: versitygw on $GW_PORT, strata on $PORT, logs in $OUT"

bench_args=(--bootstrap "127.0.0.1:$PORT" --record-bytes "$RECORD_BYTES" --partitions "$PARTITIONS"
	--acks all --compression none --json)

# 1. The maximum: a local-only topic, as fast as possible. Its size is
# bounded so the run does not fill the disk.
run_limited 60 "$BIN/tierlag" create --bootstrap "127.0.0.1:$PORT" --topic bench-max --partitions "$PARTITIONS" \
	--config retention.bytes=1073741824 --config segment.bytes="$SEGMENT_BYTES" >/dev/null ||
	die "cannot create topic bench-max"
run_limited $(($(secs "$MAX_DURATION") + 150)) "$BIN/strata" bench "${bench_args[@]}" --topic bench-max \
	--mode produce --duration "$MAX_DURATION" >"$OUT/max.json" 2>"$OUT/max.err" ||
	die "max throughput run failed (see $OUT/max.err)"
MAX_RPS=$(jq -r '.produce.records_per_s | floor' "$OUT/max.json")
MAX_MBS=$(jq -r '.produce.mb_per_s * 10 | round / 10' "$OUT/max.json")
HALF_RPS=$((MAX_RPS / 2))
((HALF_RPS > 0)) || die "max throughput $MAX_RPS records/s"
echo "tier_upload: max produce $MAX_RPS records/s ($MAX_MBS MB/s); the load is $HALF_RPS records/s"

# 2. Half of it, for LOAD_DURATION, to a tiered topic, with the copy lag
# sampled meanwhile. Local retention keeps the local disk small once
# segments are uploaded; total retention bounds the bucket.
run_limited 60 "$BIN/tierlag" create --bootstrap "127.0.0.1:$PORT" --topic tiered --partitions "$PARTITIONS" \
	--config remote.storage.enable=true --config segment.bytes="$SEGMENT_BYTES" \
	--config local.retention.bytes=$((4 * SEGMENT_BYTES)) --config retention.bytes=1073741824 ||
	die "cannot create topic tiered"
LOAD_S=$(secs "$LOAD_DURATION")
timeout --kill-after=10 $((LOAD_S + $(secs "$DRAIN") + 90)) "$BIN/tierlag" watch --bootstrap "127.0.0.1:$PORT" \
	--topic tiered --every "$SAMPLE_EVERY" --for "$LOAD_DURATION" --drain "$DRAIN" \
	--record-bytes "$RECORD_BYTES" --segment-bytes "$SEGMENT_BYTES" --rate "$HALF_RPS" \
	>"$OUT/lag.tsv" 2>"$OUT/lag.err" &
WATCH_PID=$!
started "$WATCH_PID" tierlag
run_limited $((LOAD_S + 150)) "$BIN/strata" bench "${bench_args[@]}" --topic tiered --mode produce \
	--rate "$HALF_RPS" --duration "$LOAD_DURATION" >"$OUT/load.json" 2>"$OUT/load.err" ||
	echo "tier_upload: the load run failed (see $OUT/load.err)"
wait "$WATCH_PID"
WATCH_RC=$?
forget "$WATCH_PID"

LOAD_RPS=$(jq -r '.produce.records_per_s | floor' "$OUT/load.json" 2>/dev/null)
LOAD_MBS=$(jq -r '.produce.mb_per_s * 10 | round / 10' "$OUT/load.json" 2>/dev/null)
echo "tier_upload: load achieved ${LOAD_RPS:-?} records/s (${LOAD_MBS:-?} MB/s) for $LOAD_DURATION"
cat "$OUT/lag.tsv"
[[ -s $OUT/lag.err ]] && cat "$OUT/lag.err"
UPLOADED=$(find "$WORK/s3/$BUCKET" -name '*.log' -not -path '*/.*' 2>/dev/null | wc -l)
echo "tier_upload: $UPLOADED segment objects in the bucket at the end (after remote retention)"
exit $((WATCH_RC == 0 ? 0 : 1))
