# bench/lib.sh: the shell the bench scripts share. Source it, after
# setting BENCH_NAME (the prefix of die's messages) and, if it is not 1,
# BENCH_DIE_STATUS (die's exit status):
#
#   BENCH_NAME=remote_read
#   source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#
# It sets ROOT (the repository). bench_dirs makes WORK, BIN and OUT and
# installs the traps; from then on, at exit, every child registered with
# started (run_limited and start_versitygw register theirs) is stopped, the
# newest first, and WORK is removed. Only those children are ever
# signalled, each by its PID, and only WORK is ever deleted.
#
# STARTUP_TIMEOUT [30] bounds wait_port and wait_ready, in seconds.

: "${BENCH_NAME:?set BENCH_NAME before sourcing bench/lib.sh}"
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_CHILDREN=() # "PID NAME" of each child still to stop at exit, oldest first

die() { echo "$BENCH_NAME: $*" >&2; exit "${BENCH_DIE_STATUS:-1}"; }

# started PID NAME registers a child of this script, to be stopped at exit.
started() { BENCH_CHILDREN+=("$1 $2"); }

# forget PID drops a child from the register (it has exited, or is being
# stopped) and sets FORGOTTEN to its NAME.
forget() {
	local e kept=()
	FORGOTTEN=
	for e in "${BENCH_CHILDREN[@]}"; do
		if [[ ${e%% *} == "$1" ]]; then FORGOTTEN=${e#* }; else kept+=("$e"); fi
	done
	BENCH_CHILDREN=("${kept[@]}")
}

# stop_pid PID stops a child of this script: SIGTERM, up to 15 s to exit,
# then SIGKILL; and forgets it.
stop_pid() {
	local pid=$1 name
	[[ -n $pid ]] || return 0
	forget "$pid"
	name=$FORGOTTEN
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null
		for _ in $(seq 150); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			echo "$BENCH_NAME: ${name:-child} ($pid) did not exit within 15 s of SIGTERM; killing it"
			kill -KILL "$pid" 2>/dev/null
		fi
	fi
	wait "$pid" 2>/dev/null
}

bench_cleanup() {
	while ((${#BENCH_CHILDREN[@]} > 0)); do
		stop_pid "${BENCH_CHILDREN[-1]%% *}"
	done
	[[ -n ${WORK:-} ]] && rm -rf "$WORK"
}

# bench_dirs PREFIX makes WORK (new /tmp/PREFIX-work.*, removed at exit)
# with BIN in it, and OUT ($OUT if set, else new /tmp/PREFIX.*; kept), and
# installs the traps.
bench_dirs() {
	WORK=$(mktemp -d "/tmp/$1-work.XXXXXX") || die "cannot create a work dir"
	trap bench_cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	BIN=$WORK/bin
	mkdir -p "$BIN" || die "cannot create $BIN"
	OUT=${OUT:-$(mktemp -d "/tmp/$1.XXXXXX")}
	mkdir -p "$OUT" || die "cannot create $OUT"
}

# build_strata puts strata in BIN: a copy of STRATA_BIN if set, else built
# from cmd/strata (with the caller's environment, e.g. CGO_ENABLED=0).
build_strata() {
	if [[ -n ${STRATA_BIN:-} ]]; then
		cp "$STRATA_BIN" "$BIN/strata" || die "cannot copy STRATA_BIN=$STRATA_BIN"
	else
		(cd "$ROOT" && go build -o "$BIN/strata" ./cmd/strata) ||
			die "cannot build strata; fix the build or set STRATA_BIN"
	fi
}

# build_bench NAME builds bench/NAME into BIN.
build_bench() {
	(cd "$ROOT" && go build -o "$BIN/$1" "./bench/$1") || die "cannot build bench/$1"
}

# run_limited LIMIT_S CMD... runs CMD under timeout, in the background so
# that a signal to this script runs the trap at once, and waits for it.
run_limited() {
	local limit=$1 pid rc
	shift
	timeout --kill-after=10 "$limit" "$@" &
	pid=$!
	started "$pid" "${1##*/}"
	wait "$pid"
	rc=$?
	forget "$pid"
	return "$rc"
}

# free_port prints a loopback port nothing listens on (a port is free when
# connecting to it is refused); the server's own bind is the final check.
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
# lives, at most STARTUP_TIMEOUT seconds; dies otherwise.
wait_port() {
	for _ in $(seq $((${STARTUP_TIMEOUT:-30} * 10))); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		kill -0 "$2" 2>/dev/null || { tail -n 5 "$4"; die "$3 exited before listening"; }
		sleep 0.1
	done
	die "$3 not listening on $1 after ${STARTUP_TIMEOUT:-30}s (log $4)"
}

# wait_ready PID NAME LOG: until the broker PID prints its ready line
# ("listening on") to LOG, at most STARTUP_TIMEOUT seconds. Fails, saying
# why, if PID exits first or the time runs out.
wait_ready() {
	for _ in $(seq $((${STARTUP_TIMEOUT:-30} * 10))); do
		grep -q 'listening on' "$3" 2>/dev/null && return 0
		if ! kill -0 "$1" 2>/dev/null; then
			echo "  $2 exited before it was ready:"
			tail -n 5 "$3" | sed 's/^/    /'
			return 1
		fi
		sleep 0.1
	done
	echo "  $2 printed no ready line within ${STARTUP_TIMEOUT:-30}s"
	return 1
}

# find_versitygw sets GW_BIN: VERSITYGW, else versitygw from PATH, else
# from GOPATH's bin directories.
find_versitygw() {
	local d
	GW_BIN=${VERSITYGW:-$(command -v versitygw || true)}
	if [[ -z $GW_BIN ]]; then
		for d in $(go env GOPATH 2>/dev/null | tr ':' ' '); do
			[[ -x $d/bin/versitygw ]] && GW_BIN=$d/bin/versitygw && break
		done
	fi
	[[ -n $GW_BIN && -x $GW_BIN ]] ||
		die "versitygw not found (go install github.com/versity/versitygw/cmd/versitygw@v1.8.0)"
}

# start_versitygw DIR BUCKET LOG serves DIR with GW_BIN (posix backend:
# each top-level directory of DIR is a bucket) on a free loopback port,
# with BUCKET in it, and waits until it listens. It sets GW_PORT, GW_PID
# and TIER_OVERRIDES (the `strata serve` arguments that put the remote
# tier in BUCKET), and exports the AWS_* credentials it accepts.
start_versitygw() {
	mkdir -p "$1/$2" || die "cannot create $1/$2"
	export AWS_ACCESS_KEY_ID=strata-bench-access AWS_SECRET_ACCESS_KEY=strata-bench-secret
	export AWS_SESSION_TOKEN= AWS_PROFILE= AWS_EC2_METADATA_DISABLED=true
	GW_PORT=$(free_port) || die "no free port"
	"$GW_BIN" --access "$AWS_ACCESS_KEY_ID" --secret "$AWS_SECRET_ACCESS_KEY" --port "127.0.0.1:$GW_PORT" \
		--quiet posix "$1" >"$3" 2>&1 &
	GW_PID=$!
	started "$GW_PID" versitygw
	wait_port "$GW_PORT" "$GW_PID" versitygw "$3"
	TIER_OVERRIDES=(
		--override "strata.remote.s3.bucket=$2"
		--override "strata.remote.s3.endpoint=http://127.0.0.1:$GW_PORT"
		--override "strata.remote.s3.path.style=true"
		--override "strata.remote.s3.region=us-east-1"
	)
}
