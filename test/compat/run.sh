#!/usr/bin/env bash
# test/compat/run.sh: runs a Kafka client library's own integration tests
# against Strata, as the library's maintainers run them against Kafka. The
# library is the version go.mod names (its module is copied out of the Go
# module cache); its suite finds bugs that our tests, written from the same
# reading of Kafka, would not (session 33: three).
#
#   test/compat/run.sh franz-go            # franz-go's pkg/kgo, one node (~2 min)
#   test/compat/run.sh franz-go --cluster  # the same against three nodes, RF 3 (~3 min)
#   test/compat/run.sh kafka-go            # segmentio/kafka-go's root and sasl packages (~4 min)
#
# Not part of `make test`: these suites take minutes and their timing is
# tuned to their maintainers' machines. What they found is pinned by tests
# of our own.
#
# franz-go runs with KGO_SEEDS (any port). kafka-go dials localhost:9092
# and localhost:9093 itself, so those two ports must be free; the broker is
# set up as its docker-compose.yml sets Kafka (advertised as localhost, a
# SASL_PLAINTEXT listener with PLAIN and SCRAM users, an authorizer that
# allows everything without ACLs). Some of its tests are skipped: two
# expect Kafka's asynchronous auto-creation (a Metadata request for a topic
# deleted a moment ago answers no partitions while Kafka creates it anew;
# Strata answers the created topic), and three call getOffsets, an upstream
# test bug (it builds a ConsumerGroup without its connect function and
# panics, ending the package's run; with that fixed they pass here). One
# is a coin toss (consumer_group_rebalance wants 12 records from each of
# two readers of three partitions of 8: it passes when a rebalance happens
# to deliver some twice); one creates a topic with segment.bytes=200, under
# Kafka 4's floor (1 MiB) and Strata's (1 KiB): INVALID_CONFIG, as Kafka 4.
#
# CLIENT_TEST_RUN [""] passes -run to the library's go test; CLIENT_LOG
# [none] sets franz-go's KGO_LOG_LEVEL; STRATA_BIN uses that binary (one
# built with -race makes the run fail on a race the broker reports; session
# 33: franz-go's suite, one node and three, found none).
set -uo pipefail
BENCH_NAME=compat
source "$(dirname "${BASH_SOURCE[0]}")/../../bench/lib.sh"

usage() { die "usage: test/compat/run.sh franz-go [--cluster] | kafka-go"; }
[[ $# -ge 1 ]] || usage
client=$1
cluster=false
case "$client:${2:-}" in
franz-go:) ;;
franz-go:--cluster) cluster=true ;;
kafka-go:) ;;
*) usage ;;
esac

bench_dirs compat
build_strata

# copy_module MODULE puts a writable copy of go.mod's version of MODULE in
# WORK/client and sets CLIENT_DIR.
copy_module() {
	local dir
	(cd "$ROOT" && go mod download "$1") || die "cannot download $1"
	dir=$(cd "$ROOT" && go list -m -f '{{.Dir}}' "$1") || die "cannot find $1 in go.mod"
	CLIENT_DIR=$WORK/client
	cp -r "$dir" "$CLIENT_DIR" && chmod -R u+w "$CLIENT_DIR" || die "cannot copy $dir"
	echo "compat: $1 $(cd "$ROOT" && go list -m -f '{{.Version}}' "$1")"
}

# launch_node N ARGS... starts node N (data in WORK/nodeN, log in OUT) and
# sets NODE_PIDS[N]; await_node N waits for its ready line. A cluster's
# nodes wait for each other: launch them all, then await each.
NODE_PIDS=()
launch_node() {
	local n=$1
	shift
	"$BIN/strata" serve --data-dir "$WORK/node$n" "$@" >"$OUT/node$n.log" 2>&1 &
	NODE_PIDS[n]=$!
	started "${NODE_PIDS[n]}" "node$n"
}
await_node() {
	wait_ready "${NODE_PIDS[$1]}" "node$1" "$OUT/node$1.log" || die "node $1 did not start (log $OUT/node$1.log)"
}

run_franz_go() {
	copy_module github.com/twmb/franz-go
	local seeds=() voters=() ports=() cports=() n p c nodes=1 rf=1
	$cluster && nodes=3 rf=3
	for n in $(seq "$nodes"); do
		p=$(free_port) && c=$(free_port) || die "no free port"
		ports+=("$p") cports+=("$c")
		voters+=("$n@127.0.0.1:${cports[-1]}")
		seeds+=("127.0.0.1:${ports[-1]}")
	done
	for n in $(seq "$nodes"); do
		local args=(--listen "127.0.0.1:${ports[n - 1]}")
		if $cluster; then
			args=(--override "node.id=$n"
				--override "listeners=PLAINTEXT://127.0.0.1:${ports[n - 1]},CONTROLLER://127.0.0.1:${cports[n - 1]}"
				--override "controller.quorum.voters=$(IFS=,; echo "${voters[*]}")"
				--override default.replication.factor=3 --override min.insync.replicas=2
				--override offsets.topic.replication.factor=3
				--override transaction.state.log.replication.factor=3 --override transaction.state.log.min.isr=2
				--override share.coordinator.state.topic.replication.factor=3
				--override share.coordinator.state.topic.min.isr=2)
		fi
		launch_node "$n" "${args[@]}"
	done
	for n in $(seq "$nodes"); do
		await_node "$n"
	done
	(cd "$CLIENT_DIR/pkg/kgo" && KGO_SEEDS=$(IFS=,; echo "${seeds[*]}") KGO_TEST_RF=$rf KGO_TEST_RECORDS=50000 \
		KGO_LOG_LEVEL=${CLIENT_LOG:-none} run_limited 1500 go test -count=1 -timeout 24m ${CLIENT_TEST_RUN:+-run "$CLIENT_TEST_RUN"} .)
}

run_kafka_go() {
	local p
	for p in 9092 9093; do
		if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			die "kafka-go's tests dial localhost:$p, and something listens there: stop it first"
		fi
	done
	copy_module github.com/segmentio/kafka-go
	(cd "$CLIENT_DIR" && go mod tidy >/dev/null 2>&1) || die "go mod tidy in kafka-go's copy failed"
	cat >"$WORK/server.properties" <<'PROPS'
listeners=PLAINTEXT://127.0.0.1:9092,SASL_PLAINTEXT://127.0.0.1:9093
advertised.listeners=PLAINTEXT://localhost:9092,SASL_PLAINTEXT://localhost:9093
sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512
listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="adminplain" password="admin-secret" user_adminplain="admin-secret";
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
allow.everyone.if.no.acl.found=true
message.max.bytes=200000000
PROPS
	launch_node 1 --config "$WORK/server.properties"
	await_node 1
	(cd "$ROOT" && go run ./test/compat/scramuser -bootstrap 127.0.0.1:9092 -user adminscram \
		-sha256 admin-secret-256 -sha512 admin-secret-512) || die "cannot create kafka-go's SCRAM user"
	(cd "$CLIENT_DIR" && KAFKA_VERSION=3.7.0 run_limited 1500 go test -count=1 -timeout 24m \
		-skip 'TestConn/test_delete_topics|TestReaderConsumerGroup/(verify_offset_committed|consumer_group_commits_on_close|consumer_group_rebalance$)|TestReaderReadCompactedMessage' \
		${CLIENT_TEST_RUN:+-run "$CLIENT_TEST_RUN"} . ./sasl/...)
}

case $client in
franz-go) run_franz_go ;;
kafka-go) run_kafka_go ;;
esac
rc=$?
# A broker built with -race (STRATA_BIN) reports a race in its log.
if grep -l 'WARNING: DATA RACE' "$OUT"/node*.log 2>/dev/null; then
	echo "compat: the broker reported a data race (the logs above)"
	rc=66
fi
echo "compat: $client: $([[ $rc == 0 ]] && echo passed || echo "FAILED (exit $rc)"); broker logs in $OUT"
exit "$rc"
