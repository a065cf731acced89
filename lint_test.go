package strata_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/strata-broker/strata/"

// allowedImports is DESIGN.md §1's import table: which internal packages each
// package may import. Leaves import no internal package but base. Departures
// from DESIGN.md, with reasons:
//   - api imports config: CreateTopics/AlterConfigs validate topic configs and
//     DescribeConfigs describes them; config is a leaf.
//   - partition and broker import vfs: the crash-safe file protocol for their
//     small state files lives in the file-system seam.
//   - partition/producers is partition's pure idempotence state machine.
//   - coordinator/group imports coordinator/runtime for the Shard contract
//     (Op, Record, Result), as Kafka's group coordinator builds on its
//     coordinator-common runtime; neither imports partition: the api or cmd
//     layer adapts a partition to runtime.Log and runtime.Appender.
//   - coordinator/offsets is that adapter: it imports partition (to read and
//     append __consumer_offsets) and record (to decode and frame batches),
//     and is imported only by api (the topic name and group partitioning)
//     and cmd (wiring), so no coordinator state machine sees a partition.
//   - coordinator/txn is the transaction coordinator's state machine, a
//     Shard like coordinator/group.
//   - coordinator/assignor (KIP-848's server-side assignors) and
//     coordinator/reconcile (a member's way to its target assignment) are
//     pure functions for the consumer group protocol; reconcile speaks in
//     assignor's Assignment, and coordinator/group uses both.
//   - coordinator/markers writes the markers that coordinator/txn decides:
//     it imports partition (to append them), group (whose __consumer_offsets
//     partitions take them as an event) and txn (the effect and event
//     types). It is the one place where a transaction's outcome meets the
//     partitions, as Kafka's TransactionMarkerChannelManager.
//   - tier/remotemeta is the leaf vocabulary of remote segment metadata
//     (State, RemoteSegment, the one valid-transition table). metadata
//     imports it because the FSM validates remote segment transitions at
//     Raft apply with that one table (DESIGN §4: the states live in the
//     quorum); it does not import tier itself.
//   - sasl is a leaf: the broker side of the SASL mechanisms (PLAIN,
//     SCRAM-SHA-256/512) as pure exchanges. server holds a session per
//     connection and gates requests on it (DESIGN §1: server does SASL);
//     api drives it from SaslHandshake/SaslAuthenticate and derives the
//     stored SCRAM credential of AlterUserScramCredentials with it.
//   - oauth is a leaf: the validation of OAUTHBEARER bearer tokens (JWS,
//     JWKS, claims) as pure functions; cmd wires it into sasl through
//     sasl.TokenValidator and fetches the key sets.
//   - clientmetrics is KIP-714's broker side (Kafka's ClientMetricsManager)
//     without I/O: it takes a clock.Clock for request times and expiry and
//     decompresses pushed telemetry with record's codecs.
//   - api imports clientmetrics: the config APIs validate and describe
//     CLIENT_METRICS resources with its ParseSubscription and ConfigDefs.
//   - api imports logging (a leaf, not in DESIGN.md's list): the config
//     APIs describe and change this broker's log levels (BROKER_LOGGER).
var allowedImports = map[string][]string{
	"cmd/strata":                     {"*"},
	"test/e2e":                       {"*"},
	"test/compat/admin":              {},
	"internal/server":                {"config", "metrics", "clock", "sasl"},
	"internal/api":                   {"broker", "coordinator", "metadata", "record", "base", "config", "partition", "partition/producers", "sasl", "acl", "quota", "share", "clientmetrics", "logging"},
	"internal/broker":                {"partition", "replication", "tier", "metadata", "base", "clock", "vfs"},
	"internal/coordinator/group":     {"coordinator/runtime", "coordinator/assignor", "coordinator/reconcile", "coordinator/recordwire", "base", "clock", "record"},
	"internal/coordinator/runtime":   {"base", "clock"},
	"internal/coordinator/offsets":   {"coordinator/runtime", "partition", "record", "base", "clock"},
	"internal/coordinator/txn":       {"coordinator/runtime", "base", "clock", "record"},
	"internal/coordinator/assignor":  {"base"},
	"internal/coordinator/reconcile": {"base", "coordinator/assignor"},
	"internal/coordinator/markers":   {"coordinator/runtime", "coordinator/group", "coordinator/txn", "partition", "partition/producers", "base", "clock"},
	"internal/metadata":              {"base", "vfs", "clock", "tier/remotemeta", "acl", "quota"},
	"internal/partition":             {"log", "tier", "cleaner", "retention", "record", "base", "clock", "invariants", "vfs", "partition/producers"},
	"internal/partition/producers":   {"base"},
	"internal/retention":             {"base"},
	"internal/share":                 {"base"},
	"internal/share/leader":          {"share", "base", "clock"},
	"internal/replication":           {"base", "clock", "partition", "tier/remotemeta"},
	"internal/cleaner":               {"log", "record", "base"},
	"internal/tier":                  {"log", "retention", "objstore", "record", "base", "clock", "tier/remotemeta"},
	"internal/tier/remotemeta":       {"base"},
	"internal/log":                   {"record", "vfs", "clock", "base", "invariants"},
	"internal/record":                {"base"},
	"internal/config":                {"base"},
	"internal/vfs":                   {"base"},
	"internal/objstore":              {"base"},
	"internal/clock":                 {"base"},
	"internal/metrics":               {"base"},
	"internal/sasl":                  {},
	"internal/oauth":                 {},
	"internal/clientmetrics":         {"clock", "record"},
	"internal/acl":                   {},
	"internal/quota":                 {},
	"internal/testpki":               {},
	"internal/testkraft":             {"record", "base"},
	"internal/base":                  {},
	"internal/invariants":            {},
	"internal/logging":               {},

	"internal/coordinator/sharestate": {"coordinator/runtime", "coordinator/recordwire", "base"},
	"internal/coordinator/recordwire": {},
}

// forbiddenInCore are calls that bypass injected seams.
var forbiddenInCore = map[string]string{
	"time.Now()": "take a clock.Clock",
}

var corePackages = []string{"internal/tier", "internal/tier/remotemeta", "internal/partition", "internal/retention", "internal/replication", "internal/cleaner", "internal/log", "internal/record", "internal/partition/producers", "internal/coordinator/group", "internal/coordinator/runtime", "internal/coordinator/txn", "internal/coordinator/sharestate", "internal/coordinator/recordwire", "internal/coordinator/assignor", "internal/coordinator/reconcile", "internal/share", "internal/share/leader", "internal/clientmetrics"}

func TestImportTable(t *testing.T) {
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		pkg := filepath.ToSlash(filepath.Dir(path))
		if pkg == "." || strings.HasPrefix(pkg, "bench") {
			return nil
		}
		allowed, ok := allowedImports[pkg]
		if !ok {
			t.Errorf("%s: package %s is not in the import table (lint_test.go); add it with the imports DESIGN.md allows", path, pkg)
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			if !strings.HasPrefix(p, module+"internal/") {
				continue
			}
			dep := strings.TrimPrefix(p, module+"internal/")
			if !allows(allowed, dep) {
				t.Errorf("%s imports internal/%s, which DESIGN.md §1 does not allow for %s", path, dep, pkg)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func allows(allowed []string, dep string) bool {
	for _, a := range allowed {
		if a == "*" || a == dep || strings.HasPrefix(dep, a+"/") {
			return true
		}
	}
	return false
}

func TestCoreDoesNotBypassSeams(t *testing.T) {
	for _, pkg := range corePackages {
		files, _ := filepath.Glob(filepath.Join(pkg, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for call, fix := range forbiddenInCore {
				if strings.Contains(string(data), call) {
					t.Errorf("%s calls %s: %s", f, call, fix)
				}
			}
		}
	}
}
