#!/usr/bin/env bash
# Drives a running broker with kcat (librdkafka): produce keyed lines, read
# them back, list metadata. Usage: kcat_test.sh BOOTSTRAP_ADDR TOPIC
set -euo pipefail

if [[ $# -ne 2 ]]; then
	echo "usage: $0 BOOTSTRAP_ADDR TOPIC" >&2
	exit 2
fi
addr=$1
topic=$2
kcat=${KCAT:-kcat}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Every kcat call is bounded; librdkafka's own timeouts are shortened too.
# KCAT_CONFIG names a librdkafka properties file (TLS, SASL) if set.
common=(-b "$addr" -X socket.timeout.ms=10000)
if [[ -n ${KCAT_CONFIG:-} ]]; then
	common+=(-F "$KCAT_CONFIG")
fi

cat >"$work/in" <<'LINES'
k1:v1
k2:value with spaces
k3:v3
k1:v1 again
LINES

timeout 30 "$kcat" -P "${common[@]}" -t "$topic" -K: -X acks=all -X message.timeout.ms=20000 <"$work/in"

timeout 30 "$kcat" -C "${common[@]}" -t "$topic" -o beginning -e -q -f '%k=%s\n' >"$work/got"

cat >"$work/want" <<'LINES'
k1=v1
k2=value with spaces
k3=v3
k1=v1 again
LINES
if ! diff -u "$work/want" "$work/got"; then
	echo "kcat consumed records differ from those produced" >&2
	exit 1
fi

# Offsets and partition as kcat reports them.
timeout 30 "$kcat" -C "${common[@]}" -t "$topic" -o beginning -e -q -f '%p:%o:%k\n' >"$work/offsets"
printf '0:0:k1\n0:1:k2\n0:2:k3\n0:3:k1\n' | diff -u - "$work/offsets"

timeout 30 "$kcat" -L "${common[@]}" >"$work/list"
grep -q ' 1 brokers:' "$work/list" || { cat "$work/list" >&2; echo "want 1 broker" >&2; exit 1; }
grep -Fq " at $addr" "$work/list" || { cat "$work/list" >&2; echo "want the broker at $addr" >&2; exit 1; }
grep -Fq "topic \"$topic\" with 1 partitions:" "$work/list" || { cat "$work/list" >&2; echo "want topic $topic with 1 partition" >&2; exit 1; }

echo "kcat e2e: ok"
