package api

import (
	"context"
	"path/filepath"
	"sort"
	"syscall"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
)

// DescribeLogDirs: v0-4. One log dir; null topics means every partition.
func init() { register(35, 0, 4, (*Handler).handleDescribeLogDirs) }

func (h *Handler) handleDescribeLogDirs(_ context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.DescribeLogDirsRequest)
	resp := r.ResponseKind().(*kmsg.DescribeLogDirsResponse)
	if !h.allowedCluster(req, acl.OpDescribe) {
		// Kafka answers with no directory (and the code from v3).
		resp.ErrorCode = clusterDenied
		return done(resp)
	}
	dir := kmsg.NewDescribeLogDirsResponseDir()
	dir.Dir, _ = filepath.Abs(h.opts.Broker.DataDir())
	dir.TotalBytes, dir.UsableBytes = diskSpace(dir.Dir)

	want := map[string]map[int32]bool{}
	for _, t := range r.Topics {
		want[t.Topic] = map[int32]bool{}
		for _, p := range t.Partitions {
			want[t.Topic][p] = true
		}
	}
	byTopic := map[string]*kmsg.DescribeLogDirsResponseDirTopic{}
	for _, p := range h.opts.Broker.Partitions() {
		tp := p.TP()
		if r.Topics != nil && !want[tp.Topic][tp.Partition] {
			continue
		}
		t, ok := byTopic[tp.Topic]
		if !ok {
			nt := kmsg.NewDescribeLogDirsResponseDirTopic()
			nt.Topic = tp.Topic
			t = &nt
			byTopic[tp.Topic] = t
		}
		sp := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
		sp.Partition, sp.Size = tp.Partition, p.SizeBytes()
		t.Partitions = append(t.Partitions, sp)
	}
	names := make([]string, 0, len(byTopic))
	for n := range byTopic {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t := byTopic[n]
		sort.Slice(t.Partitions, func(i, j int) bool { return t.Partitions[i].Partition < t.Partitions[j].Partition })
		dir.Topics = append(dir.Topics, *t)
	}
	resp.Dirs = []kmsg.DescribeLogDirsResponseDir{dir}
	return done(resp)
}

func diskSpace(dir string) (total, usable int64) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return -1, -1
	}
	return int64(st.Blocks) * st.Bsize, int64(st.Bavail) * st.Bsize
}
