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
#   ROUNDS [5]                consume rounds (the first is the slowest: cold cache file)
#   PARTITIONS [6]            partitions of each topic
#   SEGMENT_BYTES [8388608]   segment.bytes of both topics
#   CHUNK_BYTES [8388608]     strata.remote.chunk.bytes
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

BENCH_NAME=remote_read
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
BYTES=${BYTES:-1073741824}
ROUNDS=${ROUNDS:-5}
PARTITIONS=${PARTITIONS:-6}
SEGMENT_BYTES=${SEGMENT_BYTES:-8388608}
CHUNK_BYTES=${CHUNK_BYTES:-8388608}
READAHEAD=${READAHEAD:-2}
CACHE_BYTES=${CACHE_BYTES:-268435456}
STARTUP_TIMEOUT=30
RUN_LIMIT=2400

for v in BYTES ROUNDS PARTITIONS SEGMENT_BYTES CHUNK_BYTES CACHE_BYTES; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v=${!v}: use a positive integer"
done
[[ $READAHEAD =~ ^[0-9]+$ ]] || die "READAHEAD=$READAHEAD: use a non-negative integer"
command -v timeout >/dev/null || die "needs timeout (coreutils)"
find_versitygw

bench_dirs strata-remote-read
build_strata
build_bench remoteread

GW_ROOT=$WORK/bucket-root
BUCKET=strata-bench
start_versitygw "$GW_ROOT" "$BUCKET" "$OUT/versitygw.log"

PORT=$(free_port) || die "no free port"
"$BIN/strata" serve --listen "127.0.0.1:$PORT" --data-dir "$WORK/data" \
	--override remote.log.storage.system.enable=true \
	--override remote.log.manager.task.interval.ms=1000 \
	--override log.retention.check.interval.ms=1000 \
	"${TIER_OVERRIDES[@]}" \
	--override strata.remote.chunk.bytes="$CHUNK_BYTES" \
	--override strata.remote.readahead.chunks="$READAHEAD" \
	--override strata.remote.cache.size.bytes="$CACHE_BYTES" ${SERVE_ARGS:-} \
	>"$OUT/strata.log" 2>&1 &
BROKER_PID=$!
started "$BROKER_PID" strata
wait_port "$PORT" "$BROKER_PID" strata "$OUT/strata.log"

echo "remote_read: $BYTES bytes x 2 topics, $PARTITIONS partitions, segment.bytes $SEGMENT_BYTES," \
	"chunk $CHUNK_BYTES, read-ahead $READAHEAD, cache $CACHE_BYTES; logs in $OUT"
run_limited "$RUN_LIMIT" "$BIN/remoteread" --bootstrap "127.0.0.1:$PORT" --bytes "$BYTES" \
	--partitions "$PARTITIONS" --rounds "$ROUNDS" --segment-bytes "$SEGMENT_BYTES" \
	> >(tee "$OUT/summary.txt") 2>&1
rc=$?
objects=$(find "$GW_ROOT/$BUCKET" -name '*.log' -not -path '*/.*' | wc -l)
echo "remote_read: $objects segment objects in the bucket" | tee -a "$OUT/summary.txt"
exit "$rc"
