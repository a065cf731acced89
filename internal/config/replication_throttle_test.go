package config

import "testing"

func TestThrottledReplicas(t *testing.T) {
	cases := []struct {
		in   string
		ok   bool
		has  [][2]int32
		lack [][2]int32
	}{
		{"", true, nil, [][2]int32{{0, 1}}},
		{"*", true, [][2]int32{{0, 1}, {7, 102}}, nil},
		{"0:101,0:102,1:101", true, [][2]int32{{0, 101}, {0, 102}, {1, 101}}, [][2]int32{{1, 102}, {101, 0}}},
		{" 3 : 4 ", true, [][2]int32{{3, 4}}, nil},
		{"0:101,*", false, nil, nil},
		{"*,0:101", false, nil, nil},
		{"0", false, nil, nil},
		{"0:x", false, nil, nil},
		{"-1:2", false, nil, nil},
		{"1:2:3", false, nil, nil},
	}
	for _, c := range cases {
		err := validThrottledReplicas(c.in)
		if (err == nil) != c.ok {
			t.Errorf("%q: err %v, want ok %v", c.in, err, c.ok)
			continue
		}
		if !c.ok {
			continue
		}
		tr := ParseThrottledReplicas(c.in)
		for _, p := range c.has {
			if !tr.Has(p[0], p[1]) {
				t.Errorf("%q lacks %d:%d", c.in, p[0], p[1])
			}
		}
		for _, p := range c.lack {
			if tr.Has(p[0], p[1]) {
				t.Errorf("%q has %d:%d", c.in, p[0], p[1])
			}
		}
		if tr.Empty() != (c.in == "") {
			t.Errorf("%q: Empty %v", c.in, tr.Empty())
		}
	}
}

// The rates are dynamic broker configs (kafka-reassign-partitions sets
// them per broker); a broker's own value wins over the cluster-wide one,
// which wins over the static one.
func TestReplicationThrottleRates(t *testing.T) {
	b := mustLoad(t, "", nil, map[string]string{LeaderThrottledRate: "100"})
	if l, f := b.ReplicationThrottle(); l != 100 || f != 1<<63-1 {
		t.Fatalf("static: %d, %d", l, f)
	}
	d := b.WithDynamic(Dynamic{Default: map[string]string{LeaderThrottledRate: "200", FollowerThrottledRate: "300"},
		Node: map[string]string{FollowerThrottledRate: "400"}})
	if l, f := d.ReplicationThrottle(); l != 200 || f != 400 {
		t.Fatalf("dynamic: %d, %d; want 200, 400", l, f)
	}
	if _, err := ValidateDynamic(map[string]string{LeaderThrottledRate: "1000", FollowerThrottledRate: "1000"}); err != nil {
		t.Fatalf("the rates are not dynamic: %v", err)
	}
	if _, err := ValidateDynamic(map[string]string{"replication.quota.window.num": "3"}); err == nil {
		t.Fatal("replication.quota.window.num was accepted at run time")
	}
}
