#!/usr/bin/env bash
# test/compat/run.sh: runs a Kafka client library's own integration tests
# against Strata, as the library's maintainers run them against Kafka. A Go
# library is the version go.mod names (its module is copied out of the Go
# module cache), KafkaJS the checkout KAFKAJS_DIR names; a suite finds bugs
# that our tests, written from the same reading of Kafka, would not
# (session 33: three; session 34, sarama's: two; session 35, KafkaJS's
# 1,250 tests: none).
#
#   test/compat/run.sh franz-go            # franz-go's pkg/kgo, one node (~2 min)
#   test/compat/run.sh franz-go --cluster  # the same against three nodes, RF 3 (~3 min)
#   test/compat/run.sh franz-go --secured  # the same over TLS, and its SCRAM and OAUTHBEARER tests (~2 min)
#   test/compat/run.sh kafka-go            # segmentio/kafka-go's root and sasl packages (~4 min)
#   test/compat/run.sh sarama              # IBM/sarama's functional tests, five nodes (~5 min)
#   KAFKAJS_DIR=DIR test/compat/run.sh kafkajs  # KafkaJS's jest suite from a checkout, three nodes (~5 min)
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
# CLIENT_TEST_RUN [""] passes -run to the library's go test (for KafkaJS,
# a jest test path pattern, and its OAUTHBEARER group is left out) and
# CLIENT_TEST_FLAGS [""] more flags (e.g. -v, split at spaces); CLIENT_LOG
# [none] sets franz-go's KGO_LOG_LEVEL, KGO_TEST_RECORDS [50000] the records
# of its ETL tests (its default is 500000) and KGO_TEST_CHAOS=1 makes its
# group tests' connections fail at random; STRATA_BIN uses that binary (one
# built with -race makes the run fail on a race the broker reports; session
# 33: franz-go's suite, one node and three, found none).
set -uo pipefail
TOXIPROXY_VERSION=v2.5.0   # sarama's network faults (the module proxy here serves this one)
SARAMA_KAFKA_VERSION=4.3.1 # the Kafka its docker-compose.yml runs: it gates its tests by version
BENCH_NAME=compat
read -ra TEST_FLAGS <<<"${CLIENT_TEST_FLAGS:-}"
source "$(dirname "${BASH_SOURCE[0]}")/../../bench/lib.sh"

usage() { die "usage: test/compat/run.sh franz-go [--cluster|--secured] | kafka-go | sarama | kafkajs"; }
[[ $# -ge 1 ]] || usage
client=$1
cluster=false secured=false
case "$client:${2:-}" in
franz-go:) ;;
franz-go:--cluster) cluster=true ;;
franz-go:--secured) secured=true ;;
kafka-go:) ;;
sarama:) ;;
kafkajs:) ;;
*) usage ;;
esac

bench_dirs compat
build_strata
(cd "$ROOT" && go build -o "$BIN/admin" ./test/compat/admin) || die "cannot build test/compat/admin"

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

# require_free_ports SUITE PORT... dies if something listens on a port the
# suite dials itself.
require_free_ports() {
	local suite=$1 p
	shift
	for p in "$@"; do
		if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
			die "$suite's tests dial localhost:$p, and something listens there: stop it first"
		fi
	done
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
	run_limited 1500 env -C "$CLIENT_DIR/pkg/kgo" KGO_SEEDS="$(IFS=,; echo "${seeds[*]}")" KGO_TEST_RF=$rf \
		KGO_TEST_RECORDS="${KGO_TEST_RECORDS:-50000}" KGO_LOG_LEVEL="${CLIENT_LOG:-none}" \
		go test -count=1 -timeout 24m "${TEST_FLAGS[@]}" ${CLIENT_TEST_RUN:+-run "$CLIENT_TEST_RUN"} .
}

# run_franz_go_secured runs franz-go's suite over TLS (KGO_TEST_TLS: a CA
# made here, the broker's certificate for 127.0.0.1), and its SCRAM and
# OAUTHBEARER tests (skipped otherwise) against a SASL_PLAINTEXT listener
# with a SCRAM user and Kafka's default unsecured token validator.
# TestIssue769 is skipped: it sets its own Dialer, which franz-go refuses
# beside the suite's DialTLSConfig (NewClient fails; the test then panics on
# the nil client), whatever the broker.
run_franz_go_secured() {
	local tls sasl plain
	copy_module github.com/twmb/franz-go
	make_certificates
	tls=$(free_port) && sasl=$(free_port) && plain=$(free_port) || die "no free port"
	launch_node 1 --override "listeners=SSL://127.0.0.1:$tls,SASL_PLAINTEXT://127.0.0.1:$sasl,PLAINTEXT://127.0.0.1:$plain" \
		--override "ssl.keystore.location=$WORK/keystore.pem" \
		--override sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER
	await_node 1
	"$BIN/admin" -bootstrap "127.0.0.1:$plain" scram-user compat compat-secret compat-secret ||
		die "cannot create the SCRAM user"
	run_limited 1500 env -C "$CLIENT_DIR/pkg/kgo" KGO_SEEDS="127.0.0.1:$tls" KGO_TEST_TLS="ca:$WORK/ca.pem" KGO_TEST_RF=1 \
		KGO_TEST_RECORDS="${KGO_TEST_RECORDS:-50000}" KGO_TEST_SCRAM=compat:compat-secret:256 \
		KGO_TEST_SCRAM_SEEDS="127.0.0.1:$sasl" KGO_TEST_OAUTH_SEEDS="127.0.0.1:$sasl" KGO_LOG_LEVEL="${CLIENT_LOG:-none}" \
		go test -count=1 -timeout 24m -skip '^TestIssue769$' "${TEST_FLAGS[@]}" ${CLIENT_TEST_RUN:+-run "$CLIENT_TEST_RUN"} .
}

# make_certificates writes WORK/ca.pem (a CA made for this run) and
# WORK/keystore.pem (the broker's certificate for 127.0.0.1, signed by
# it, and key).
make_certificates() {
	(
		cd "$WORK" &&
			openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem \
				-days 2 -subj /CN=strata-compat-ca &&
			openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout broker.key -out broker.csr \
				-subj /CN=127.0.0.1 &&
			printf 'subjectAltName=IP:127.0.0.1\n' >broker.ext &&
			openssl x509 -req -in broker.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
				-extfile broker.ext -out broker.pem &&
			cat broker.pem broker.key >keystore.pem
	) >"$OUT/openssl.log" 2>&1 || die "openssl could not make the certificates (log $OUT/openssl.log)"
}

run_kafka_go() {
	require_free_ports kafka-go 9092 9093
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
	"$BIN/admin" -bootstrap 127.0.0.1:9092 scram-user adminscram admin-secret-256 admin-secret-512 ||
		die "cannot create kafka-go's SCRAM user"
	run_limited 1500 env -C "$CLIENT_DIR" KAFKA_VERSION=3.7.0 go test -count=1 -timeout 24m "${TEST_FLAGS[@]}" \
		-skip 'TestConn/test_delete_topics|TestReaderConsumerGroup/(verify_offset_committed|consumer_group_commits_on_close|consumer_group_rebalance$)|TestReaderReadCompactedMessage' \
		${CLIENT_TEST_RUN:+-run "$CLIENT_TEST_RUN"} . ./sasl/...
}

# stop_restarted_nodes stops the nodes test/compat/docker started again
# (not children of this script: stop_pid's wait returns at once for them).
stop_restarted_nodes() {
	local f pid
	for f in "$WORK"/node*.pid; do
		[[ -f $f ]] || continue
		pid=$(cat "$f")
		[[ " ${NODE_PIDS[*]} " == *" $pid "* ]] || stop_pid "$pid"
	done
}

# run_sarama runs sarama's functional tests as its docker-compose.yml and
# CI run them against Kafka: five brokers (racks 1-5, replication factor
# 2, the rack-aware replica selector), each reached through a toxiproxy
# (127.0.0.1:29091-29095, fixed in sarama's tests) that its tests use to
# cut connections; the brokers advertise those proxies. Its tests that
# stop and start a broker with `docker compose` get test/compat/docker,
# which does that to a Strata node.
run_sarama() {
	local p n ports=() lports=() cports=() voters=() proxies=() args=() api tests
	trap 'stop_restarted_nodes; bench_cleanup' EXIT
	require_free_ports sarama 29091 29092 29093 29094 29095
	copy_module github.com/IBM/sarama
	(cd "$CLIENT_DIR" && go mod download) || die "cannot download sarama's test dependencies"
	GOBIN=$BIN go install "github.com/Shopify/toxiproxy/v2/cmd/server@$TOXIPROXY_VERSION" ||
		die "cannot build toxiproxy $TOXIPROXY_VERSION"
	for n in 1 2 3 4 5; do
		ports+=("$(free_port)") lports+=("$(free_port)") cports+=("$(free_port)") || die "no free port"
		voters+=("$n@127.0.0.1:${cports[-1]}")
		proxies+=("{\"name\":\"kafka$n\",\"listen\":\"127.0.0.1:$((29090 + n))\",\"upstream\":\"127.0.0.1:${lports[-1]}\",\"enabled\":true}")
	done
	echo "[$(IFS=,; echo "${proxies[*]}")]" >"$WORK/toxiproxy.json"
	api=$(free_port) || die "no free port"
	"$BIN/server" -host 127.0.0.1 -port "$api" -config "$WORK/toxiproxy.json" >"$OUT/toxiproxy.log" 2>&1 &
	started $! toxiproxy
	wait_port "$api" $! toxiproxy "$OUT/toxiproxy.log"
	for n in 1 2 3 4 5; do
		args=(--data-dir "$WORK/node$n" --override "node.id=$n" --override "broker.rack=$n"
			--override "listeners=INTERNAL://127.0.0.1:${ports[n - 1]},LOCAL://127.0.0.1:${lports[n - 1]},CONTROLLER://127.0.0.1:${cports[n - 1]}"
			--override "advertised.listeners=INTERNAL://127.0.0.1:${ports[n - 1]},LOCAL://localhost:$((29090 + n))"
			--override "listener.security.protocol.map=INTERNAL:PLAINTEXT,LOCAL:PLAINTEXT,CONTROLLER:PLAINTEXT"
			--override inter.broker.listener.name=INTERNAL --override controller.listener.names=CONTROLLER
			--override "controller.quorum.voters=$(IFS=,; echo "${voters[*]}")"
			--override default.replication.factor=2 --override offsets.topic.replication.factor=2
			--override transaction.state.log.replication.factor=2
			--override auto.create.topics.enable=false --override group.initial.rebalance.delay.ms=0
			--override replica.selector.class=org.apache.kafka.common.replica.RackAwareReplicaSelector)
		launch_node "$n" "${args[@]:2}"
		# test/compat/docker stops and restarts nodes from these.
		printf '%s\n' "${args[@]}" >"$WORK/node$n.args"
		echo "${NODE_PIDS[n]}" >"$WORK/node$n.pid"
	done
	for n in 1 2 3 4 5; do
		await_node "$n"
	done
	# Only the tests of the functional files: the package's unit tests run
	# against sarama's mock broker.
	tests=$(cd "$CLIENT_DIR" && grep -l '^//go:build functional' ./*_test.go | xargs sed -n 's/^func \(Test[A-Za-z0-9_]*\)(t \*testing.T).*/\1/p' | grep -vx TestMain | paste -sd'|')
	[[ -n $tests ]] || die "found no functional tests in sarama's copy"
	mkdir -p "$WORK/shim" && cp "$ROOT/test/compat/docker" "$WORK/shim/docker" || die "cannot set up test/compat/docker"
	run_limited 1500 env -C "$CLIENT_DIR" TOXIPROXY_ADDR="http://127.0.0.1:$api" KAFKA_VERSION=$SARAMA_KAFKA_VERSION \
		PATH="$WORK/shim:$PATH" COMPAT_WORK="$WORK" COMPAT_OUT="$OUT" COMPAT_STRATA="$BIN/strata" \
		go test -tags functional -count=1 -timeout 24m "${TEST_FLAGS[@]}" -run "${CLIENT_TEST_RUN:-^($tests)\$}" .
}

# KAFKAJS_SKIP names the tests of KafkaJS's suite that pin Kafka 2.4 where
# Strata answers as Kafka 4 does or by design (jest's full names):
#   - describeConfigs: 2.4's topic configs and defaults (max.message.bytes
#     1000012, no compression levels or remote storage keys), and its empty
#     synonyms for retention.ms, a quirk of Kafka's ConfigHelper (it drops
#     every synonym before log.retention.ms, so log.retention.hours never
#     shows; Strata lists it, with its true source);
#   - alter broker configs: it sets cleanup.policy, a topic key, on a
#     broker, which Kafka's dynamic broker config accepts and ignores and
#     Strata refuses (INVALID_CONFIG names the key);
#   - ListOffsets v0: Kafka 4 removed it (KIP-896) and closes the
#     connection, as Strata does;
#   - request timeout events: they need a request to take over 1 ms.
# Its client-side timing tests (src/utils/lock.spec.js wants a 50 ms timer
# to take 50 ms) can miss by a millisecond on a loaded machine.
KAFKAJS_SKIP='Broker > describeConfigs request|Broker > describeConfigs request without config names returns all config entries|Admin alter broker configs|Broker > ListOffsets v0 request|Consumer > Instrumentation Events emits request timeout events'

# run_kafkajs runs KafkaJS's own jest suite, from a checkout of
# github.com/tulios/kafkajs in KAFKAJS_DIR (npm's package has no tests), as
# its CI runs it against docker-compose.2_4.yml: three brokers, ids 0-2,
# each with PLAINTEXT, SSL and SASL_SSL listeners at localhost:9092-9100
# (fixed in its testHelpers), PLAIN users test, bob and alice, the SCRAM
# user testscram, replication factor 2 and two partitions by default, an
# authorizer that allows everything without ACLs; then its OAUTHBEARER
# group (unsecured tokens, connections.max.reauth.ms of 15 s, as its
# docker-compose.2_4_oauthbearer.yml). Its client-side encoder test of
# gzip bytes (which vary with Node's zlib) is left out.
run_kafkajs() {
	local dir=${KAFKAJS_DIR:-} n base voters=() iports=() cports=() args=() opts jest
	[[ -n $dir && -f $dir/testHelpers/index.js ]] ||
		die "set KAFKAJS_DIR to a checkout of github.com/tulios/kafkajs (npm's package has no tests)"
	command -v npm >/dev/null || die "npm is not on PATH (KafkaJS's suite needs Node.js 14+ and npm)"
	require_free_ports kafkajs $(seq 9092 9100)
	CLIENT_DIR=$WORK/client
	cp -r "$dir" "$CLIENT_DIR" || die "cannot copy $dir"
	(cd "$CLIENT_DIR" && npm install --no-audit --no-fund >"$OUT/npm.log" 2>&1) ||
		die "npm install in KafkaJS's copy failed (log $OUT/npm.log)"
	echo "compat: kafkajs $(cd "$CLIENT_DIR" && node -p 'require("./package.json").version')"
	make_certificates
	for n in 0 1 2; do
		iports+=("$(free_port)") cports+=("$(free_port)") || die "no free port"
		voters+=("$n@127.0.0.1:${cports[-1]}")
	done
	for n in 0 1 2; do
		base=$((9092 + 3 * n))
		args=(--override "node.id=$n"
			--override "listeners=PLAINTEXT_HOST://127.0.0.1:$base,SSL_HOST://127.0.0.1:$((base + 1)),SASL_SSL_HOST://127.0.0.1:$((base + 2)),INTERNAL://127.0.0.1:${iports[n]},CONTROLLER://127.0.0.1:${cports[n]}"
			--override "advertised.listeners=PLAINTEXT_HOST://localhost:$base,SSL_HOST://localhost:$((base + 1)),SASL_SSL_HOST://localhost:$((base + 2)),INTERNAL://127.0.0.1:${iports[n]}"
			--override "listener.security.protocol.map=PLAINTEXT_HOST:PLAINTEXT,SSL_HOST:SSL,SASL_SSL_HOST:SASL_SSL,INTERNAL:PLAINTEXT,CONTROLLER:PLAINTEXT"
			--override inter.broker.listener.name=INTERNAL --override controller.listener.names=CONTROLLER
			--override "controller.quorum.voters=$(IFS=,; echo "${voters[*]}")"
			--override "ssl.keystore.location=$WORK/keystore.pem"
			--override sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER
			--override 'listener.name.sasl_ssl_host.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_test="testtest" user_bob="bobbob" user_alice="alicealice";'
			--override authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
			--override allow.everyone.if.no.acl.found=true
			--override default.replication.factor=2 --override num.partitions=2
			--override group.initial.rebalance.delay.ms=0 --override connections.max.reauth.ms=15000)
		launch_node "$n" "${args[@]}"
	done
	for n in 0 1 2; do
		await_node "$n"
	done
	"$BIN/admin" -bootstrap 127.0.0.1:9092 scram-user testscram 'testtestscram=256' 'testtestscram=512' ||
		die "cannot create KafkaJS's SCRAM user"
	mkdir -p "$WORK/shim" && cp "$ROOT/test/compat/docker" "$WORK/shim/docker" || die "cannot set up test/compat/docker"
	# jest's options come after its test path patterns: an array option
	# (--testPathIgnorePatterns) takes every word after it.
	opts=(--ci --maxWorkers=2 --forceExit --testPathIgnorePatterns '/node_modules/|src/protocol/requests/produce/v2/request[.]spec[.]js')
	jest=(env -C "$CLIENT_DIR" KAFKA_VERSION=2.4 KAFKAJS_DEBUG_PROTOCOL_BUFFERS=1 PATH="$WORK/shim:$PATH"
		COMPAT_ADMIN="$BIN/admin" COMPAT_BOOTSTRAP=127.0.0.1:9092)
	run_limited 1200 "${jest[@]}" npx jest ${CLIENT_TEST_RUN:+"$CLIENT_TEST_RUN"} "${opts[@]}" -t "^(?!($KAFKAJS_SKIP)\$)" "${TEST_FLAGS[@]}" ||
		return
	[[ -n ${CLIENT_TEST_RUN:-} ]] && return
	run_limited 300 "${jest[@]}" OAUTHBEARER_ENABLED=1 npx jest src/producer/index.spec.js \
		src/broker/__tests__/connect.spec.js src/consumer/__tests__/connection.spec.js src/broker/__tests__/disconnect.spec.js \
		src/admin/__tests__/connection.spec.js src/broker/__tests__/reauthenticate.spec.js "${opts[@]}" "${TEST_FLAGS[@]}"
}

case $client in
franz-go) if $secured; then run_franz_go_secured; else run_franz_go; fi ;;
kafka-go) run_kafka_go ;;
sarama) run_sarama ;;
kafkajs) run_kafkajs ;;
esac
rc=$?
# A broker built with -race (STRATA_BIN) reports a race in its log.
if grep -l 'WARNING: DATA RACE' "$OUT"/node*.log 2>/dev/null; then
	echo "compat: the broker reported a data race (the logs above)"
	rc=66
fi
echo "compat: $client: $([[ $rc == 0 ]] && echo passed || echo "FAILED (exit $rc)"); broker logs in $OUT"
exit "$rc"
