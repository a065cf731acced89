package main

import (
	"bytes"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-broker/strata/internal/config"
)

// watchSetting applies a dynamic setting when an image changes it: each
// change once, this broker's own value over the cluster-wide one; a change
// its apply refuses is logged once, keeps what was applied, and is tried
// again with the next image.
func TestWatchSettingAppliesEachChangeOnce(t *testing.T) {
	meta := openTestQuorum(t)
	cfg, err := config.LoadBroker("", nil, map[string]string{"node.id": "1"})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var applied []int32
	refuse := int32(0)
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&syncWriter{w: &logs, mu: &mu}, nil))
	w := watchSetting(cfg, meta, logger, "replica fetchers", cfg.ReplicaFetchersNow(),
		(*config.Broker).ReplicaFetchersNow,
		func(n int32) error {
			mu.Lock()
			defer mu.Unlock()
			if n == refuse {
				return errors.New("refused for the test")
			}
			applied = append(applied, n)
			return nil
		},
		func(n int32) []any { return []any{"num.replica.fetchers", n} })
	defer w.close()
	appliedNow := func() []int32 {
		mu.Lock()
		defer mu.Unlock()
		return append([]int32(nil), applied...)
	}
	waitApplied := func(want ...int32) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !slices.Equal(appliedNow(), want) {
			if time.Now().After(deadline) {
				t.Fatalf("applied %v, want %v", appliedNow(), want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}

	if err := meta.SetBrokerConfigs(t.Context(), map[string]string{"num.replica.fetchers": "2"}); err != nil {
		t.Fatal(err)
	}
	waitApplied(2)
	if err := meta.SetNodeConfigs(t.Context(), 1, map[string]string{"num.replica.fetchers": "3"}); err != nil {
		t.Fatal(err)
	}
	waitApplied(2, 3) // this broker's own value wins
	mu.Lock()
	refuse = 4
	mu.Unlock()
	for range 2 { // the same refused value at two images: logged once
		if err := meta.SetNodeConfigs(t.Context(), 1, map[string]string{"num.replica.fetchers": "4", "log.retention.ms": "1000"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := meta.SetBrokerConfigs(t.Context(), map[string]string{"num.replica.fetchers": "2", "log.retention.ms": "2000"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	refuse = 0
	mu.Unlock()
	if err := meta.SetBrokerConfigs(t.Context(), map[string]string{"num.replica.fetchers": "2"}); err != nil {
		t.Fatal(err)
	}
	waitApplied(2, 3, 4) // tried again at the next image, now taken
	// The watcher logs a change after applying it: wait for the line.
	logged := func() string {
		mu.Lock()
		defer mu.Unlock()
		return logs.String()
	}
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(logged(), "changed replica fetchers") < 3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	out := logged()
	if n := strings.Count(out, "dynamic replica fetchers not applied"); n != 1 {
		t.Errorf("the refusal was logged %d times, want once:\n%s", n, out)
	}
	if n := strings.Count(out, "changed replica fetchers"); n != 3 {
		t.Errorf("%d changes logged, want 3:\n%s", n, out)
	}
}

type syncWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
