#!/usr/bin/env bash
# remote_read.sh: catch-up read of a topic whose data is only in the bucket
# against a read of the same data from local segments (issue 3), in one run.
#
# It starts versitygw (posix backend) on a loopback port, then Strata with
# its remote tier in a bucket there, and runs bench/remoteread: produce
# BYTES of 1 KiB records to a tiered topic (small segments, 1 MiB of local
# retention, so its data ends up only in the bucket) and to an untiered
# topic, wait until the tiered topic's local log start (ListOffsets -4) is
# within two segments of its end (the active segment is never tiered), then consume both from the start, alternating which
# goes first, ROUNDS times. It prints MB/s of each and the ratio
# remote/local of the medians. The chunk cache is smaller than the data
# (CACHE_BYTES), so every round of the tiered topic reads from the bucket.
#
# Environment (defaults in brackets):
#   BYTES [1073741824]        record value bytes produced to each topic
#   ROUNDS [3]                consume rounds
#   PARTITIONS [6]            partitions of each topic
#   SEGMENT_BYTES [8388608]   segment.bytes of both topics
#   CHUNK_BYTES [4194304]     strata.remote.chunk.bytes
#   READAHEAD [2]             strata.remote.readahead.chunks
#   CACHE_BYTES [268435456]   strata.remote.cache.size.bytes
#   STRATA_BIN                use this strata binary instead of building one
#   SERVE_ARGS               more `strata serve` arguments (e.g. --cpuprofile FILE)
#   VERSITYGW                 the versitygw binary [PATH, then $(go env GOPATH)/bin]
#   OUT [new /tmp/strata-remote-read.*]  where the logs and summary go
#
# The whole run is bounded (RUN_LIMIT seconds for the client); only the
# processes this script starts are ever signalled, each by its PID, and its
# temporary directories are removed at exit.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BYTES=${BYTES:-1073741824}
ROUNDS=${ROUNDS:-3}
PARTITIONS=${PARTITIONS:-6}
SEGMENT_BYTES=${SEGMENT_BYTES:-8388608}
CHUNK_BYTES=${CHUNK_BYTES:-4194304}
READAHEAD=${READAHEAD:-2}
CACHE_BYTES=${CACHE_BYTES:-268435456}
STARTUP_TIMEOUT=30
RUN_LIMIT=2400

die() { echo "remote_read: $*" >&2; exit 1; }

for v in BYTES ROUNDS PARTITIONS SEGMENT_BYTES CHUNK_BYTES CACHE_BYTES; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v=${!v}: use a positive integer"
done
[[ $READAHEAD =~ ^[0-9]+$ ]] || die "READAHEAD=$READAHEAD: use a non-negative integer"
command -v timeout >/dev/null || die "needs timeout (coreutils)"
GW_BIN=${VERSITYGW:-$(command -v versitygw || echo "$(go env GOPATH)/bin/versitygw")}
[[ -x $GW_BIN ]] || die "no versitygw (go install github.com/versity/versitygw/cmd/versitygw@v1.8.0)"

WORK=$(mktemp -d /tmp/strata-remote-read-work.XXXXXX)
OUT=${OUT:-$(mktemp -d /tmp/strata-remote-read.XXXXXX)}
mkdir -p "$OUT" || die "cannot create $OUT"
GW_PID=
BROKER_PID=
CLIENT_PID=

# stop PID NAME: SIGTERM, up to 15 s to exit, then SIGKILL.
stop() {
	local pid=$1
	[[ -n $pid ]] || return 0
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null
		for _ in $(seq 150); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			echo "remote_read: $2 ($pid) did not exit within 15 s of SIGTERM; killing it"
			kill -KILL "$pid" 2>/dev/null
		fi
	fi
	wait "$pid" 2>/dev/null
}

cleanup() {
	stop "$CLIENT_PID" client
	stop "$BROKER_PID" strata
	stop "$GW_PID" versitygw
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# free_port prints a loopback port nothing listens on; the server's own
# bind is the final check.
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

# wait_port PORT PID NAME LOG: until something listens on PORT, while PID
# lives, at most STARTUP_TIMEOUT seconds.
wait_port() {
	for _ in $(seq $((STARTUP_TIMEOUT * 10))); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		kill -0 "$2" 2>/dev/null || { tail -n 5 "$4"; die "$3 exited before listening"; }
		sleep 0.1
	done
	die "$3 not listening on $1 after ${STARTUP_TIMEOUT}s (log $4)"
}

BIN=$WORK/bin
mkdir -p "$BIN"
if [[ -n ${STRATA_BIN:-} ]]; then
	cp "$STRATA_BIN" "$BIN/strata" || die "cannot copy STRATA_BIN=$STRATA_BIN"
else
	(cd "$ROOT" && go build -o "$BIN/strata" ./cmd/strata) || die "cannot build strata"
fi
(cd "$ROOT" && go build -o "$BIN/remoteread" ./bench/remoteread) || die "cannot build bench/remoteread"

# versitygw serves each top-level directory of its root as a bucket.
GW_ROOT=$WORK/bucket-root
BUCKET=strata-bench
mkdir -p "$GW_ROOT/$BUCKET"
GW_PORT=$(free_port) || die "no free port"
ACCESS=strata-bench-access
SECRET=strata-bench-secret
"$GW_BIN" --access "$ACCESS" --secret "$SECRET" --port "127.0.0.1:$GW_PORT" --quiet posix "$GW_ROOT" \
	>"$OUT/versitygw.log" 2>&1 &
GW_PID=$!
wait_port "$GW_PORT" "$GW_PID" versitygw "$OUT/versitygw.log"

PORT=$(free_port) || die "no free port"
DATA=$WORK/data
AWS_ACCESS_KEY_ID=$ACCESS AWS_SECRET_ACCESS_KEY=$SECRET AWS_SESSION_TOKEN= AWS_PROFILE= AWS_EC2_METADATA_DISABLED=true \
	"$BIN/strata" serve --listen "127.0.0.1:$PORT" --data-dir "$DATA" \
	--override remote.log.storage.system.enable=true \
	--override remote.log.manager.task.interval.ms=1000 \
	--override log.retention.check.interval.ms=1000 \
	--override strata.remote.s3.bucket=$BUCKET \
	--override strata.remote.s3.endpoint=http://127.0.0.1:$GW_PORT \
	--override strata.remote.s3.path.style=true \
	--override strata.remote.s3.region=us-east-1 \
	--override strata.remote.chunk.bytes="$CHUNK_BYTES" \
	--override strata.remote.readahead.chunks="$READAHEAD" \
	--override strata.remote.cache.size.bytes="$CACHE_BYTES" ${SERVE_ARGS:-} \
	>"$OUT/strata.log" 2>&1 &
BROKER_PID=$!
wait_port "$PORT" "$BROKER_PID" strata "$OUT/strata.log"

echo "remote_read: $BYTES bytes x 2 topics, $PARTITIONS partitions, segment.bytes $SEGMENT_BYTES," \
	"chunk $CHUNK_BYTES, read-ahead $READAHEAD, cache $CACHE_BYTES; logs in $OUT"
timeout --kill-after=10 "$RUN_LIMIT" "$BIN/remoteread" --bootstrap "127.0.0.1:$PORT" --bytes "$BYTES" \
	--partitions "$PARTITIONS" --rounds "$ROUNDS" --segment-bytes "$SEGMENT_BYTES" \
	> >(tee "$OUT/summary.txt") 2>&1 &
CLIENT_PID=$!
wait "$CLIENT_PID"
rc=$?
CLIENT_PID=
objects=$(find "$GW_ROOT/$BUCKET" -name '*.log' -not -path '*/.*' | wc -l)
echo "remote_read: $objects segment objects in the bucket" | tee -a "$OUT/summary.txt"
exit "$rc"
