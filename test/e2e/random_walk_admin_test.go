package e2e

import (
	"github.com/twmb/franz-go/pkg/kmsg"
)

// walkChurn is the topic the admin walker creates, grows, trims and
// deletes while the others walk: consumer group members subscribed by
// regex see it come and go, transactions add its partition and may hold
// it when it is deleted.
const walkChurn = "walk-churn"

// adminWalker is an operator at work while clients run: it creates the
// churn topic with random configs, adds partitions, deletes records,
// alters its configs, deletes it, and tries to delete the walks' groups
// and their offsets (refused while members are in them).
type adminWalker struct{}

const (
	adminCreate = iota
	adminCreatePartitions
	adminDeleteRecords
	adminAlterConfigs
	adminDeleteTopic
	adminDeleteGroups
	adminDeleteOffsets
	adminSteps
)

func (adminWalker) step(w *walker) {
	// Its mutations name no existing topic id: a DeleteTopics by id would
	// delete the walk topic (seed 841), as a name other than walkChurn
	// would (requestFiller.topics).
	w.f.ids = nil
	// No protocol order: an operator does what comes to mind, slowly.
	switch w.rng.IntN(adminSteps) {
	case adminCreate:
		req := kmsg.NewPtrCreateTopicsRequest()
		req.TimeoutMillis, req.ValidateOnly = 5000, w.oneIn(5)
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = walkChurn, int32(1+w.rng.IntN(3)), -1
		for _, c := range [][2]string{{"cleanup.policy", "compact"}, {"segment.bytes", "1048576"}, {"retention.ms", "60000"}, {"min.insync.replicas", "1"}} {
			if w.oneIn(3) {
				rc := kmsg.NewCreateTopicsRequestTopicConfig()
				rc.Name, rc.Value = c[0], kmsg.StringPtr(c[1])
				rt.Configs = append(rt.Configs, rc)
			}
		}
		req.Topics = append(req.Topics, rt)
		if resp, ok := w.send(req).(*kmsg.CreateTopicsResponse); ok && !w.mutated && !req.ValidateOnly && len(resp.Topics) == 1 && resp.Topics[0].ErrorCode == 0 {
			w.env.setChurnID(resp.Topics[0].TopicID)
		}
	case adminCreatePartitions:
		req := kmsg.NewPtrCreatePartitionsRequest()
		req.TimeoutMillis, req.ValidateOnly = 5000, w.oneIn(5)
		rt := kmsg.NewCreatePartitionsRequestTopic()
		rt.Topic, rt.Count = walkChurn, int32(2+w.rng.IntN(4))
		req.Topics = append(req.Topics, rt)
		w.send(req)
	case adminDeleteRecords:
		req := kmsg.NewPtrDeleteRecordsRequest()
		req.TimeoutMillis = 5000
		rt := kmsg.NewDeleteRecordsRequestTopic()
		rt.Topic = walkChurn
		rp := kmsg.NewDeleteRecordsRequestTopicPartition()
		rp.Partition, rp.Offset = 0, []int64{-1, 0, 1, 5}[w.rng.IntN(4)]
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		w.send(req)
	case adminAlterConfigs:
		req := kmsg.NewPtrIncrementalAlterConfigsRequest()
		rr := kmsg.NewIncrementalAlterConfigsRequestResource()
		rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, walkChurn
		rc := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		rc.Name = []string{"retention.ms", "cleanup.policy", "max.message.bytes"}[w.rng.IntN(3)]
		rc.Value = kmsg.StringPtr(map[string]string{"retention.ms": "120000", "cleanup.policy": "delete", "max.message.bytes": "100000"}[rc.Name])
		rc.Op = []kmsg.IncrementalAlterConfigOp{kmsg.IncrementalAlterConfigOpSet, kmsg.IncrementalAlterConfigOpDelete}[w.rng.IntN(2)]
		rr.Configs = append(rr.Configs, rc)
		req.Resources = append(req.Resources, rr)
		w.send(req)
	case adminDeleteTopic:
		req := kmsg.NewPtrDeleteTopicsRequest()
		req.TimeoutMillis, req.TopicNames = 5000, []string{walkChurn}
		rt := kmsg.NewDeleteTopicsRequestTopic()
		rt.Topic = kmsg.StringPtr(walkChurn)
		req.Topics = append(req.Topics, rt)
		w.send(req)
	case adminDeleteGroups:
		w.env.shares.deletions.Add(1) // before: the share group may start over now
		req := kmsg.NewPtrDeleteGroupsRequest()
		req.Groups = []string{[]string{walkTxnGroup, walkClassic, walkConsumer, walkShare}[w.rng.IntN(4)]}
		w.send(req)
	case adminDeleteOffsets:
		req := kmsg.NewPtrOffsetDeleteRequest()
		req.Group = []string{walkTxnGroup, walkClassic, walkConsumer}[w.rng.IntN(3)]
		rt := kmsg.NewOffsetDeleteRequestTopic()
		rt.Topic = walkTopic
		rp := kmsg.NewOffsetDeleteRequestTopicPartition()
		rp.Partition = int32(w.rng.IntN(walkPartitions))
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		w.send(req)
	}
}
