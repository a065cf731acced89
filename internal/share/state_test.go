package share

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/base"
)

var (
	t0  = time.Unix(1000, 0)
	lim = Limits{DeliveryLimit: 2, LockDuration: 30 * time.Second, MaxInFlight: 10}
)

func rng(start, end base.Offset) base.Range { return base.Range{Start: start, End: end} }

func read(from base.Offset, batches ...base.Range) Read { return Read{From: from, Batches: batches} }

func accept(start, end base.Offset) Ack {
	return Ack{Offsets: rng(start, end), Types: []AckType{AckAccept}}
}

func release(start, end base.Offset) Ack {
	return Ack{Offsets: rng(start, end), Types: []AckType{AckRelease}}
}

func runsString(p *Partition) string {
	s := fmt.Sprintf("[%d,%d)", p.Start(), p.End())
	for _, r := range p.Runs() {
		s += fmt.Sprintf(" %v:%s/%d", r.Offsets, r.State, r.Deliveries)
		if r.Member != "" {
			s += "@" + r.Member
		}
	}
	return s
}

func TestAcquire(t *testing.T) {
	tests := []struct {
		name       string
		setup      func(p *Partition)
		read       Read
		maxRecords int64
		mode       AcquireMode
		want       string // acquisitions
		wantState  string
	}{
		{
			name: "whole batches past max records", read: read(0, rng(0, 3), rng(3, 6), rng(6, 9)), maxRecords: 4,
			want: "[{[0, 6) 1}]", wantState: "[0,6) [0, 6):acquired/1@a",
		},
		{
			name: "record limit splits a batch", read: read(0, rng(0, 3), rng(3, 6)), maxRecords: 4, mode: RecordLimit,
			want: "[{[0, 4) 1}]", wantState: "[0,4) [0, 4):acquired/1@a",
		},
		{
			name: "offsets between batches go with the next batch", read: read(0, rng(2, 4), rng(7, 8)), maxRecords: 10,
			want: "[{[0, 8) 1}]", wantState: "[0,8) [0, 8):acquired/1@a",
		},
		{
			name: "a batch starting before the read is clipped", read: read(5, rng(3, 8)), maxRecords: 10,
			setup: func(p *Partition) { p.AdvanceStart(5) },
			want:  "[{[5, 8) 1}]", wantState: "[5,8) [5, 8):acquired/1@a",
		},
		{
			name: "a full window takes no new batch", read: read(0, rng(0, 10), rng(10, 12)), maxRecords: 100,
			want: "[{[0, 10) 1}]", wantState: "[0,10) [0, 10):acquired/1@a",
		},
		{
			name: "released records come first, then new ones", maxRecords: 100,
			setup: func(p *Partition) {
				p.Acquire("b", read(0, rng(0, 4)), 10, BatchOptimized, lim, t0)
				mustAck(t, p, "b", accept(0, 1), release(1, 3), accept(3, 4))
			},
			read: read(1, rng(0, 4), rng(4, 6)),
			want: "[{[1, 3) 2} {[4, 6) 1}]", wantState: "[1,6) [1, 3):acquired/2@a [3, 4):acknowledged/1 [4, 6):acquired/1@a",
		},
		{
			name: "record limit reached before the end takes nothing new", maxRecords: 3, mode: RecordLimit,
			setup: releasedByB(0, 4), read: read(0, rng(0, 6)),
			want: "[{[0, 3) 2}]", wantState: "[0,4) [0, 3):acquired/2@a [3, 4):available/1",
		},
		{
			name: "batch mode takes the rest of a batch past the end though max records is reached", maxRecords: 3,
			setup: releasedByB(0, 4), read: read(0, rng(0, 6)),
			want: "[{[0, 4) 2} {[4, 6) 1}]", wantState: "[0,6) [0, 4):acquired/2@a [4, 6):acquired/1@a",
		},
		{
			name: "a redelivered last batch adds nothing new", maxRecords: 10,
			setup: releasedByB(0, 4), read: read(0, rng(0, 4)),
			want: "[{[0, 4) 2}]", wantState: "[0,4) [0, 4):acquired/2@a",
		},
		{
			name: "records locked by another member are skipped", maxRecords: 100,
			setup: func(p *Partition) { p.Acquire("b", read(0, rng(0, 2)), 10, BatchOptimized, lim, t0) },
			read:  read(0, rng(0, 2), rng(2, 3)),
			want:  "[{[2, 3) 1}]", wantState: "[0,3) [0, 2):acquired/1@b [2, 3):acquired/1@a",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(0)
			if tt.setup != nil {
				tt.setup(p)
			}
			got := p.Acquire("a", tt.read, tt.maxRecords, tt.mode, lim, t0)
			p.check()
			if fmt.Sprint(got) != tt.want {
				t.Errorf("acquired %v, want %s", got, tt.want)
			}
			if s := runsString(p); s != tt.wantState {
				t.Errorf("state %s, want %s", s, tt.wantState)
			}
		})
	}
}

// releasedByB has member b acquire [start, end) and release it.
func releasedByB(start, end base.Offset) func(p *Partition) {
	return func(p *Partition) {
		p.Acquire("b", read(start, rng(start, end)), int64(end-start), BatchOptimized, lim, t0)
		if err := p.Acknowledge("b", []Ack{release(start, end)}, lim, t0); err != nil {
			panic(err)
		}
	}
}

// Acquire needs a member and room for a record.
func TestAcquireNothing(t *testing.T) {
	for _, tt := range []struct {
		member     string
		maxRecords int64
	}{{"", 10}, {"a", 0}, {"a", -1}} {
		p := New(0)
		if got := p.Acquire(tt.member, read(0, rng(0, 4)), tt.maxRecords, BatchOptimized, lim, t0); len(got) != 0 || p.End() != 0 {
			t.Errorf("member %q, max %d: acquired %v, end %d", tt.member, tt.maxRecords, got, p.End())
		}
	}
}

// The acquire modes are ShareFetch v2's ShareAcquireMode values.
func TestAcquireModeWireValues(t *testing.T) {
	if BatchOptimized != 0 || RecordLimit != 1 {
		t.Fatalf("BatchOptimized %d, RecordLimit %d; want 0, 1", BatchOptimized, RecordLimit)
	}
}

func mustAck(t *testing.T, p *Partition, member string, acks ...Ack) {
	t.Helper()
	if err := ValidateAcks(acks, AckRenew); err != nil {
		t.Fatal(err)
	}
	if err := p.Acknowledge(member, acks, lim, t0); err != nil {
		t.Fatal(err)
	}
	p.check()
}

func TestAcknowledgeMovesStart(t *testing.T) {
	p := New(0)
	p.Acquire("a", read(0, rng(0, 6)), 10, BatchOptimized, lim, t0)
	gaps := Ack{Offsets: rng(2, 5), Types: []AckType{AckGap, AckReject, AckAccept}}
	mustAck(t, p, "a", accept(0, 1), gaps)
	if got, want := runsString(p), "[1,6) [1, 2):acquired/1@a [2, 4):archived/1 [4, 5):acknowledged/1 [5, 6):acquired/1@a"; got != want {
		t.Fatalf("state %s, want %s", got, want)
	}
	if p.Completed() != 3 || p.NextFetch() != 6 {
		t.Fatalf("completed %d, next fetch %d", p.Completed(), p.NextFetch())
	}
	mustAck(t, p, "a", accept(1, 2), accept(5, 6))
	if got, want := runsString(p), "[6,6)"; got != want {
		t.Fatalf("state %s, want %s", got, want)
	}
}

func TestAcknowledgeIsAllOrNothing(t *testing.T) {
	tests := []struct {
		name string
		acks []Ack
		want error
	}{
		{"another member's records", []Ack{accept(0, 1), accept(4, 5)}, ErrInvalidRecordState},
		{"released records", []Ack{accept(1, 2), accept(3, 4)}, ErrInvalidRecordState},
		{"past the window", []Ack{accept(0, 1), accept(5, 7)}, ErrInvalidAcknowledgement},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(0)
			p.Acquire("a", read(0, rng(0, 4)), 10, BatchOptimized, lim, t0)
			p.Acquire("b", read(4, rng(4, 6)), 10, BatchOptimized, lim, t0)
			mustAck(t, p, "a", release(3, 4))
			before := runsString(p)
			if err := p.Acknowledge("a", tt.acks, lim, t0); !errors.Is(err, tt.want) {
				t.Fatalf("err %v, want %v", err, tt.want)
			}
			if after := runsString(p); after != before {
				t.Fatalf("state changed from %s to %s", before, after)
			}
		})
	}
}

// An acknowledgement of offsets already done succeeds and changes nothing
// (a client retrying after a lost response), as in Kafka.
func TestAcknowledgeBelowStartIsSkipped(t *testing.T) {
	p := New(0)
	p.Acquire("a", read(0, rng(0, 4)), 10, BatchOptimized, lim, t0)
	mustAck(t, p, "a", accept(0, 2))
	mustAck(t, p, "a", accept(0, 3))
	if got, want := runsString(p), "[3,4) [3, 4):acquired/1@a"; got != want {
		t.Fatalf("state %s, want %s", got, want)
	}
	// Batches wholly below Start, one ending short of it; a release
	// there must not make those offsets Available again.
	mustAck(t, p, "a", accept(0, 1), release(1, 3))
	if got, want := runsString(p), "[3,4) [3, 4):acquired/1@a"; got != want {
		t.Fatalf("after a retry below the start: state %s, want %s", got, want)
	}
}

func TestDeliveryLimitArchives(t *testing.T) {
	p := New(0)
	p.Acquire("a", read(0, rng(0, 2)), 10, BatchOptimized, lim, t0)
	if !p.ExpireLocks(t0.Add(lim.LockDuration), lim) {
		t.Fatal("lock did not expire at its deadline")
	}
	if got := p.Acquire("b", read(0, rng(0, 2)), 10, BatchOptimized, lim, t0); fmt.Sprint(got) != "[{[0, 2) 2}]" {
		t.Fatalf("second delivery %v", got)
	}
	if d, ok := p.NextDeadline(); !ok || !d.Equal(t0.Add(lim.LockDuration)) {
		t.Fatalf("next deadline %v %v", d, ok)
	}
	if p.ExpireLocks(t0.Add(lim.LockDuration-time.Millisecond), lim) {
		t.Fatal("lock expired before its deadline")
	}
	p.ReleaseMember("b", lim)
	if got := runsString(p); got != "[2,2)" {
		t.Fatalf("after the last delivery %s, want everything archived", got)
	}
}

func TestRenewExtendsTheLock(t *testing.T) {
	p := New(0)
	p.Acquire("a", read(0, rng(0, 3)), 10, BatchOptimized, lim, t0)
	later := t0.Add(20 * time.Second)
	if err := p.Acknowledge("a", []Ack{{Offsets: rng(1, 2), Types: []AckType{AckRenew}}}, lim, later); err != nil {
		t.Fatal(err)
	}
	p.ExpireLocks(t0.Add(lim.LockDuration), lim)
	if got, want := runsString(p), "[0,3) [0, 1):available/1 [1, 2):acquired/1@a [2, 3):available/1"; got != want {
		t.Fatalf("state %s, want %s", got, want)
	}
}

func TestAdvanceStart(t *testing.T) {
	p := New(0)
	p.Acquire("a", read(0, rng(0, 4)), 10, BatchOptimized, lim, t0)
	p.AdvanceStart(2)
	if got, want := runsString(p), "[2,4) [2, 4):acquired/1@a"; got != want {
		t.Fatalf("state %s, want %s", got, want)
	}
	p.AdvanceStart(9)
	if got, want := runsString(p), "[9,9)"; got != want {
		t.Fatalf("state %s, want %s", got, want)
	}
	if p.AdvanceStart(3) {
		t.Fatal("start moved backwards")
	}
	if p.AdvanceStart(9) {
		t.Fatal("advancing to the start itself reported a change")
	}
	if !p.AdvanceStart(10) {
		t.Fatal("advancing past the start reported no change")
	}
}

func TestLimitsValidate(t *testing.T) {
	ok := Limits{DeliveryLimit: 1, LockDuration: time.Nanosecond, MaxInFlight: 1}
	if err := ok.Validate(); err != nil {
		t.Fatalf("the smallest limits: %v", err)
	}
	for name, bad := range map[string]func(*Limits){
		"delivery limit 0": func(l *Limits) { l.DeliveryLimit = 0 },
		"lock duration 0":  func(l *Limits) { l.LockDuration = 0 },
		"max in-flight 0":  func(l *Limits) { l.MaxInFlight = 0 },
	} {
		l := ok
		bad(&l)
		if l.Validate() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestNextDeadline(t *testing.T) {
	p := New(0)
	if _, ok := p.NextDeadline(); ok {
		t.Fatal("a deadline with nothing acquired")
	}
	p.Acquire("a", read(0, rng(0, 2)), 10, BatchOptimized, lim, t0)
	p.Acquire("b", read(2, rng(2, 4)), 10, BatchOptimized, lim, t0.Add(-time.Second))
	mustAck(t, p, "a", release(0, 1))
	if d, ok := p.NextDeadline(); !ok || !d.Equal(t0.Add(lim.LockDuration-time.Second)) {
		t.Fatalf("next deadline %v, %v; want b's, a second before a's", d, ok)
	}
	p.ReleaseMember("a", lim)
	p.ReleaseMember("b", lim)
	if d, ok := p.NextDeadline(); ok {
		t.Fatalf("deadline %v with every record released", d)
	}
}

// Acknowledge names the last delivered offset when refusing one past it.
func TestAcknowledgePastTheEnd(t *testing.T) {
	p := New(0)
	p.Acquire("a", read(0, rng(0, 4)), 10, BatchOptimized, lim, t0)
	err := p.Acknowledge("a", []Ack{accept(2, 6)}, lim, t0)
	if !errors.Is(err, ErrInvalidAcknowledgement) || !strings.Contains(err.Error(), "past the last delivered offset 3") {
		t.Fatalf("got %v", err)
	}
}

func TestValidateAcks(t *testing.T) {
	one := []AckType{AckAccept}
	tests := []struct {
		name    string
		acks    []Ack
		maxType AckType
		ok      bool
	}{
		{"one type", []Ack{{rng(0, 5), one}}, AckReject, true},
		{"a type per offset", []Ack{{rng(0, 2), []AckType{AckGap, AckRelease}}}, AckReject, true},
		{"ascending", []Ack{{rng(0, 2), one}, {rng(2, 3), one}}, AckReject, true},
		{"empty range", []Ack{{rng(3, 3), one}}, AckReject, false},
		{"negative offset", []Ack{{rng(-1, 2), one}}, AckReject, false},
		{"wrong type count", []Ack{{rng(0, 3), []AckType{AckGap, AckAccept}}}, AckReject, false},
		{"overlap", []Ack{{rng(0, 3), one}, {rng(2, 4), one}}, AckReject, false},
		{"descending", []Ack{{rng(4, 5), one}, {rng(0, 1), one}}, AckReject, false},
		{"renew before v2", []Ack{{rng(0, 1), []AckType{AckRenew}}}, AckReject, false},
		{"renew in v2", []Ack{{rng(0, 1), []AckType{AckRenew}}}, AckRenew, true},
		{"unknown type", []Ack{{rng(0, 1), []AckType{7}}}, AckRenew, false},
	}
	for _, tt := range tests {
		err := ValidateAcks(tt.acks, tt.maxType)
		if (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrInvalidAcknowledgement)) {
			t.Errorf("%s: %v", tt.name, err)
		}
	}
}

func TestRestoreRejects(t *testing.T) {
	tests := []struct {
		name string
		s    Persisted
	}{
		{"negative start", Persisted{Start: -1}},
		{"empty batch", Persisted{Batches: []StateBatch{{Offsets: rng(2, 2)}}}},
		{"acquired", Persisted{Batches: []StateBatch{{Offsets: rng(0, 2), State: Acquired}}}},
		{"unknown state", Persisted{Batches: []StateBatch{{Offsets: rng(0, 2), State: 3}}}},
		{"negative count", Persisted{Batches: []StateBatch{{Offsets: rng(0, 2), Deliveries: -1}}}},
		{"overlap", Persisted{Batches: []StateBatch{{Offsets: rng(0, 2)}, {Offsets: rng(1, 3)}}}},
	}
	for _, tt := range tests {
		if _, err := Restore(tt.s); err == nil {
			t.Errorf("%s: restored", tt.name)
		}
	}
	if _, err := Restore(Persisted{Batches: []StateBatch{{Offsets: rng(0, 2), State: Available, Deliveries: 0}}}); err != nil {
		t.Fatalf("a batch never delivered: %v", err)
	}
	p, err := Restore(Persisted{Start: 3, Batches: []StateBatch{
		{Offsets: rng(0, 4), State: Available, Deliveries: 1},
		{Offsets: rng(6, 7), State: Acknowledged, Deliveries: 2},
	}})
	if err != nil {
		t.Fatal(err)
	}
	p.check()
	if got, want := runsString(p), "[3,7) [3, 4):available/1 [4, 6):available/0 [6, 7):acknowledged/2"; got != want {
		t.Fatalf("restored %s, want %s", got, want)
	}
}

// Records of aborted transactions that a read_committed group acquired are
// archived and left out of what it is told it acquired.
func TestArchiveAcquired(t *testing.T) {
	p := New(0)
	wide := lim
	wide.MaxInFlight = 100
	got := p.Acquire("a", read(0, rng(0, 10)), 10, BatchOptimized, wide, t0)
	p.Acquire("b", read(10, rng(10, 12)), 10, BatchOptimized, wide, t0)
	got = p.ArchiveAcquired("a", []base.Range{rng(2, 4), rng(8, 11)}, got)
	p.check()
	if fmt.Sprint(got) != "[{[0, 2) 1} {[4, 8) 1}]" {
		t.Fatalf("acquired after archiving %v", got)
	}
	if s, want := runsString(p), "[0,12) [0, 2):acquired/1@a [2, 4):archived/1 [4, 8):acquired/1@a [8, 10):archived/1 [10, 12):acquired/1@b"; s != want {
		t.Fatalf("state %s, want %s", s, want)
	}
}

// One aborted range alone is archived too.
func TestArchiveAcquiredOneRange(t *testing.T) {
	p := New(0)
	got := p.Acquire("a", read(0, rng(0, 6)), 10, BatchOptimized, lim, t0)
	got = p.ArchiveAcquired("a", []base.Range{rng(0, 2)}, got)
	p.check()
	if fmt.Sprint(got) != "[{[2, 6) 1}]" || runsString(p) != "[2,6) [2, 6):acquired/1@a" {
		t.Fatalf("acquired %v, state %s", got, runsString(p))
	}
}

// Records throttled for their deliveries are acquired only as the first
// thing of an acquisition: after other records, the acquisition ends there.
func TestThrottledRecordsComeOnlyFirst(t *testing.T) {
	five := Limits{DeliveryLimit: 5, LockDuration: time.Second, MaxInFlight: 100}
	p := New(0)
	p.Acquire("b", read(0, rng(0, 2), rng(2, 4)), 100, BatchOptimized, five, t0)
	p.ReleaseMember("b", five)
	for range 2 { // [2, 4) delivered three times
		p.Acquire("b", read(2, rng(2, 4)), 100, BatchOptimized, five, t0)
		p.ReleaseMember("b", five)
	}
	got := p.Acquire("a", read(0, rng(0, 2), rng(2, 4), rng(4, 6)), 100, BatchOptimized, five, t0)
	p.check()
	if fmt.Sprint(got) != "[{[0, 2) 2}]" {
		t.Fatalf("acquired %v; want [0, 2) alone, the throttled batch after it left", got)
	}
}

// A batch delivered again and again goes out in halves, then one record at
// a time for the last delivery (Kafka 4.2's throttling), so that only a
// record that keeps failing reaches the delivery limit.
func TestThrottleIsolatesRecordsThatKeepFailing(t *testing.T) {
	five := Limits{DeliveryLimit: 5, LockDuration: time.Second, MaxInFlight: 100}
	p := New(0)
	deliver := func() string {
		got := p.Acquire("a", read(p.NextFetch(), rng(0, 8), rng(8, 16)), 100, BatchOptimized, five, t0)
		p.check()
		p.ReleaseMember("a", five)
		return fmt.Sprint(got)
	}
	for i, want := range []string{
		"[{[0, 16) 1}]", // first delivery: both batches
		"[{[0, 16) 2}]",
		"[{[0, 16) 3}]",
		"[{[0, 4) 4}]", // delivered 3 times: half of the first batch, and nothing after it
		"[{[0, 1) 5}]", // its last delivery: alone
		"[{[1, 2) 5}]",
	} {
		if got := deliver(); got != want {
			t.Fatalf("delivery %d: %s, want %s", i+1, got, want)
		}
	}
	if p.Start() != 2 {
		t.Fatalf("start %d; want the two records delivered five times archived", p.Start())
	}
}

func TestThrottle(t *testing.T) {
	for _, tt := range []struct {
		deliveries int16
		n          int64
		limit      int16
		allow      int64
		throttled  bool
	}{
		{2, 8, 5, 0, false},
		{3, 8, 5, 4, true},
		{3, 1, 5, 1, true},
		{4, 8, 5, 1, true},
		{1, 8, 2, 0, false},
		{2, 8, 3, 1, true},
		{5, 64, 10, 32, true},
		{6, 64, 10, 16, true},
		{9, 64, 10, 1, true},
	} {
		allow, throttled := throttle(tt.deliveries, tt.n, tt.limit)
		if allow != tt.allow || throttled != tt.throttled {
			t.Errorf("throttle(%d, %d, %d) = %d, %v; want %d, %v", tt.deliveries, tt.n, tt.limit, allow, throttled, tt.allow, tt.throttled)
		}
	}
}

// Snapshot writes Acquired as Available and merges what then reads alike.
func TestSnapshotMergesAcquiredIntoAvailable(t *testing.T) {
	p := New(0)
	p.Acquire("a", read(0, rng(0, 4), rng(4, 6)), 10, BatchOptimized, lim, t0)
	mustAck(t, p, "a", release(0, 2), accept(4, 5))
	got := fmt.Sprint(p.Snapshot())
	if want := "{0 [{[0, 4) available 1} {[4, 5) acknowledged 1} {[5, 6) available 1}]}"; got != want {
		t.Fatalf("snapshot %s, want %s", got, want)
	}
}
