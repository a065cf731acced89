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

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MAX_DURATION=${MAX_DURATION:-10s}
LOAD_DURATION=${LOAD_DURATION:-60s}
DRAIN=${DRAIN:-20s}
SAMPLE_EVERY=${SAMPLE_EVERY:-3s}
TASK_INTERVAL_MS=${TASK_INTERVAL_MS:-1000}
SEGMENT_BYTES=${SEGMENT_BYTES:-16777216}
PARTITIONS=${PARTITIONS:-6}
RECORD_BYTES=${RECORD_BYTES:-1024}
STARTUP_TIMEOUT=30

die() { echo "tier_upload: $*" >&2; exit 2; }

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

GW=${VERSITYGW:-$(command -v versitygw || true)}
if [[ -z $GW ]]; then
	for d in $(go env GOPATH 2>/dev/null | tr ':' ' '); do
		[[ -x $d/bin/versitygw ]] && GW=$d/bin/versitygw && break
	done
fi
[[ -n $GW && -x $GW ]] || die "versitygw not found (go install github.com/versity/versitygw/cmd/versitygw@v1.8.0)"

WORK=$(mktemp -d /tmp/strata-tier-upload-work.XXXXXX)
OUT=${OUT:-$(mktemp -d /tmp/strata-tier-upload.XXXXXX)}
mkdir -p "$OUT" || die "cannot create $OUT"
GW_PID=
BROKER_PID=
CHILD_PIDS=()

stop_pid() { # SIGTERM, 15 s to exit, then SIGKILL
	local pid=$1
	[[ -n $pid ]] || return 0
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null
		for _ in $(seq 150); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
	fi
	wait "$pid" 2>/dev/null
}

cleanup() {
	for pid in "${CHILD_PIDS[@]}"; do stop_pid "$pid"; done
	stop_pid "$BROKER_PID"
	stop_pid "$GW_PID"
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

free_port() {
	local p
	for _ in $(seq 100); do
		p=$((20000 + RANDOM % 40000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

wait_port() { # wait_port PORT PID NAME LOG
	for _ in $(seq $((STARTUP_TIMEOUT * 10))); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		kill -0 "$2" 2>/dev/null || { tail -n 5 "$4"; die "$3 exited before listening"; }
		sleep 0.1
	done
	die "$3 not listening on $1 after ${STARTUP_TIMEOUT}s (log $4)"
}

BIN=$WORK/bin
mkdir -p "$BIN"
echo "tier_upload: building into $BIN"
if [[ -n ${STRATA_BIN:-} ]]; then
	cp "$STRATA_BIN" "$BIN/strata" || die "cannot copy STRATA_BIN=$STRATA_BIN"
else
	(cd "$ROOT" && CGO_ENABLED=0 go build -o "$BIN/strata" ./cmd/strata) || die "cannot build strata"
fi
(cd "$ROOT" && go build -o "$BIN/tierlag" ./bench/tierlag) || die "cannot build bench/tierlag"

# versitygw serves each top-level directory of its posix root as a bucket.
BUCKET=strata-bench
mkdir -p "$WORK/s3/$BUCKET"
GW_PORT=$(free_port) || die "no free port"
export AWS_ACCESS_KEY_ID=strata-bench-access AWS_SECRET_ACCESS_KEY=strata-bench-secret
export AWS_SESSION_TOKEN= AWS_PROFILE= AWS_EC2_METADATA_DISABLED=true
"$GW" --access "$AWS_ACCESS_KEY_ID" --secret "$AWS_SECRET_ACCESS_KEY" --port "127.0.0.1:$GW_PORT" --quiet \
	posix "$WORK/s3" >"$OUT/versitygw.log" 2>&1 &
GW_PID=$!
wait_port "$GW_PORT" "$GW_PID" versitygw "$OUT/versitygw.log"

PORT=$(free_port) || die "no free port"
"$BIN/strata" serve --listen "127.0.0.1:$PORT" --data-dir "$WORK/data" \
	--override "remote.log.manager.task.interval.ms=$TASK_INTERVAL_MS" \
	--override "log.retention.check.interval.ms=$TASK_INTERVAL_MS" \
	--override "strata.remote.s3.bucket=$BUCKET" \
	--override "strata.remote.s3.endpoint=http://127.0.0.1:$GW_PORT" \
	--override "strata.remote.s3.path.style=true" \
	--override "strata.remote.s3.region=us-east-1" >"$OUT/broker.log" 2>&1 &
BROKER_PID=$!
for _ in $(seq $((STARTUP_TIMEOUT * 10))); do
	grep -q 'listening on' "$OUT/broker.log" 2>/dev/null && break
	kill -0 "$BROKER_PID" 2>/dev/null || { tail -n 5 "$OUT/broker.log"; die "strata exited before it was ready"; }
	sleep 0.1
done
grep -q 'listening on' "$OUT/broker.log" || die "strata printed no ready line within ${STARTUP_TIMEOUT}s"
echo "tier_upload: versitygw on $GW_PORT, strata on $PORT, logs in $OUT"

# run LIMIT_S CMD... runs a child in the background (so a signal reaches
# the trap at once) and waits for it.
run() {
	local limit=$1
	shift
	timeout --kill-after=10 "$limit" "$@" &
	local pid=$!
	CHILD_PIDS+=("$pid")
	wait "$pid"
}

bench_args=(--bootstrap "127.0.0.1:$PORT" --record-bytes "$RECORD_BYTES" --partitions "$PARTITIONS"
	--acks all --compression none --json)

# 1. The maximum: a local-only topic, as fast as possible. Its size is
# bounded so the run does not fill the disk.
run 60 "$BIN/tierlag" create --bootstrap "127.0.0.1:$PORT" --topic bench-max --partitions "$PARTITIONS" \
	--config retention.bytes=1073741824 --config segment.bytes="$SEGMENT_BYTES" >/dev/null ||
	die "cannot create topic bench-max"
run $(($(secs "$MAX_DURATION") + 150)) "$BIN/strata" bench "${bench_args[@]}" --topic bench-max \
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
run 60 "$BIN/tierlag" create --bootstrap "127.0.0.1:$PORT" --topic tiered --partitions "$PARTITIONS" \
	--config remote.storage.enable=true --config segment.bytes="$SEGMENT_BYTES" \
	--config local.retention.bytes=$((4 * SEGMENT_BYTES)) --config retention.bytes=1073741824 ||
	die "cannot create topic tiered"
LOAD_S=$(secs "$LOAD_DURATION")
timeout --kill-after=10 $((LOAD_S + $(secs "$DRAIN") + 90)) "$BIN/tierlag" watch --bootstrap "127.0.0.1:$PORT" \
	--topic tiered --every "$SAMPLE_EVERY" --for "$LOAD_DURATION" --drain "$DRAIN" \
	--record-bytes "$RECORD_BYTES" --segment-bytes "$SEGMENT_BYTES" --rate "$HALF_RPS" \
	>"$OUT/lag.tsv" 2>"$OUT/lag.err" &
WATCH_PID=$!
CHILD_PIDS+=("$WATCH_PID")
run $((LOAD_S + 150)) "$BIN/strata" bench "${bench_args[@]}" --topic tiered --mode produce \
	--rate "$HALF_RPS" --duration "$LOAD_DURATION" >"$OUT/load.json" 2>"$OUT/load.err" ||
	echo "tier_upload: the load run failed (see $OUT/load.err)"
wait "$WATCH_PID"
WATCH_RC=$?

LOAD_RPS=$(jq -r '.produce.records_per_s | floor' "$OUT/load.json" 2>/dev/null)
LOAD_MBS=$(jq -r '.produce.mb_per_s * 10 | round / 10' "$OUT/load.json" 2>/dev/null)
echo "tier_upload: load achieved ${LOAD_RPS:-?} records/s (${LOAD_MBS:-?} MB/s) for $LOAD_DURATION"
cat "$OUT/lag.tsv"
[[ -s $OUT/lag.err ]] && cat "$OUT/lag.err"
UPLOADED=$(find "$WORK/s3/$BUCKET" -name '*.log' -not -path '*/.*' 2>/dev/null | wc -l)
echo "tier_upload: $UPLOADED segment objects in the bucket at the end (after remote retention)"
exit $((WATCH_RC == 0 ? 0 : 1))
