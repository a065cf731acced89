package e2e

import (
	"math/rand/v2"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// crashSoakRoundsDefault is how many times TestCrashSoakRollsAndRetention
// kills the broker in a plain test run; E2E_CRASH_ROUNDS sets another count
// (a long soak locally).
const crashSoakRoundsDefault = 3

// crashSoakRetentionBytes is the topic's retention.bytes: small beside what
// the producers write, so that retention deletes segments all through the run.
const crashSoakRetentionBytes = 256 << 10

// TestCrashSoakRollsAndRetention is TestCrashKeepsAcknowledgedRecords on a
// log that never rests: segments roll every few hundred records (on
// segment.bytes and on a full index), retention deletes the oldest ones every
// 100 ms, and the broker is killed at random moments, some of them just after
// it has opened its logs again and some in the middle of a clean shutdown. What recovery, producer snapshots at rolls and
// retention do between them must lose no acknowledged record above the log
// start and duplicate none, and retention must not have taken more than
// retention.bytes allows.
func TestCrashSoakRollsAndRetention(t *testing.T) {
	t.Parallel()
	rounds := envInt(t, "E2E_CRASH_ROUNDS", crashSoakRoundsDefault)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d, %d rounds", seed, rounds)
	rng := rand.New(rand.NewPCG(seed, seed>>1))

	b := startBroker(t, t.TempDir(), "log.retention.check.interval.ms=100")
	adm := newAdmin(t, b.Addr)
	const topic, producers = "soak", 3
	createTopic(t, adm, topic, producers, map[string]*string{
		"segment.bytes":        kadm.StringPtr("16384"),
		"segment.index.bytes":  kadm.StringPtr("120"), // ten time index entries
		"index.interval.bytes": kadm.StringPtr("1024"),
		"retention.bytes":      kadm.StringPtr(strconv.Itoa(crashSoakRetentionBytes)),
	})

	fleet := startCrashFleet(t, b.Addr, topic, producers)
	for round := 1; round <= rounds; round++ {
		// One kill in three lands within 100 ms of the broker being
		// ready, while it may still be loading snapshots and running its
		// first retention pass.
		up := time.Duration(300+rng.IntN(1200)) * time.Millisecond
		if rng.IntN(3) == 0 {
			up = time.Duration(rng.IntN(100)) * time.Millisecond
		}
		time.Sleep(up)
		before := fleet.acked()
		// One kill in four lands during a clean shutdown, which syncs the
		// logs and then marks them clean: the mark must never come first.
		how := "killed"
		if rng.IntN(4) == 0 {
			b.signal(syscall.SIGTERM)
			time.Sleep(time.Duration(rng.IntN(50)) * time.Millisecond)
			how = "sent SIGTERM then killed"
		}
		b.Kill()
		t.Logf("round %d: %s the broker %v after it was up, %d records acknowledged", round, how, up, before)
		b.Restart()
	}
	deadline := time.Now().Add(20 * time.Second)
	for before := fleet.acked(); fleet.acked() <= before && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
	fleet.halt()
	fleet.flush(t)

	// Retention stops before the log is read, so that what is read is
	// what the run left.
	alterTopicConfig(t, adm, topic, "retention.bytes", "-1")
	sizes := partitionSizes(t, adm, topic)
	ends, err := adm.ListEndOffsets(testContext(t, clientDeliveryTimeout), topic)
	if err != nil || ends.Error() != nil {
		t.Fatalf("listing end offsets: %v / %v", err, ends.Error())
	}
	got := consumeAll(t, b.Addr, topic)
	for _, w := range fleet.writers {
		p := int32(w.id)
		records := got[p]
		end, _ := ends.Lookup(topic, p)
		if n := w.ackedCount(); end.Offset < int64(n) {
			t.Errorf("partition %d: log end offset %d below the %d records acknowledged", p, end.Offset, n)
		}
		if len(records) > 0 && records[0].Offset > 0 && sizes[p] < crashSoakRetentionBytes/2 {
			t.Errorf("partition %d: the log starts at %d with %d bytes left, retention.bytes is %d",
				p, records[0].Offset, sizes[p], crashSoakRetentionBytes)
		}
		w.checkFromFirst(t, records)
	}
}

// checkFromFirst is check on a log that retention has trimmed: every
// acknowledged record from the first one present on must be there.
func (p *crashProducer) checkFromFirst(t *testing.T, records []*kgo.Record) {
	t.Helper()
	if len(records) == 0 {
		t.Fatalf("producer %d: its partition is empty", p.id)
	}
	first := crashSeq(t, p.id, records[0])
	p.mu.Lock()
	for seq := range p.mu.acked {
		if seq < first {
			delete(p.mu.acked, seq)
		}
	}
	p.mu.Unlock()
	p.check(t, records)
}

// alterTopicConfig sets one config of topic.
func alterTopicConfig(t *testing.T, adm *kadm.Client, topic, key, value string) {
	t.Helper()
	rs, err := adm.AlterTopicConfigs(testContext(t, clientDeliveryTimeout),
		[]kadm.AlterConfig{{Op: kadm.SetConfig, Name: key, Value: kadm.StringPtr(value)}}, topic)
	if err == nil {
		_, err = rs.On(topic, nil)
	}
	if err != nil {
		t.Fatalf("setting %s=%s on %q: %v", key, value, topic, err)
	}
}

// partitionSizes is the size on disk of each partition of topic.
func partitionSizes(t *testing.T, adm *kadm.Client, topic string) map[int32]int64 {
	t.Helper()
	dirs, err := adm.DescribeAllLogDirs(testContext(t, clientDeliveryTimeout), nil) // every partition
	if err != nil {
		t.Fatalf("describing log dirs: %v", err)
	}
	out := make(map[int32]int64)
	dirs.Each(func(d kadm.DescribedLogDir) {
		d.Topics.Each(func(p kadm.DescribedLogDirPartition) {
			if p.Topic == topic {
				out[p.Partition] += p.Size
			}
		})
	})
	return out
}
