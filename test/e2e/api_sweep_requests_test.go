package e2e

import (
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// sweepFills gives the sweep's requests real content, by API key: topics
// that exist, offsets that hold records, a group with a committed offset.
// A key without a fill is sent as kmsg's default request.
var sweepFills = map[int16]func(s *sweepState, req kmsg.Request, v int16){
	kmsg.Produce.Int16(): func(s *sweepState, r kmsg.Request, v int16) {
		req := r.(*kmsg.ProduceRequest)
		req.Acks = -1
		req.TimeoutMillis = 10_000
		t := kmsg.NewProduceRequestTopic()
		t.Topic, t.TopicID = sweepTopic, s.topicID
		p := kmsg.NewProduceRequestTopicPartition()
		p.Records = recordBatch(time.Now(), fmt.Appendf(nil, "produce v%d", v))
		t.Partitions = append(t.Partitions, p)
		req.Topics = append(req.Topics, t)
	},
	kmsg.Fetch.Int16(): func(s *sweepState, r kmsg.Request, _ int16) {
		req := r.(*kmsg.FetchRequest)
		req.MaxBytes = 1 << 19
		t := kmsg.NewFetchRequestTopic()
		t.Topic, t.TopicID = sweepTopic, s.topicID
		p := kmsg.NewFetchRequestTopicPartition()
		p.PartitionMaxBytes = 1 << 19
		t.Partitions = append(t.Partitions, p)
		req.Topics = append(req.Topics, t)
	},
	kmsg.ListOffsets.Int16(): func(_ *sweepState, r kmsg.Request, _ int16) {
		req := r.(*kmsg.ListOffsetsRequest)
		t := kmsg.NewListOffsetsRequestTopic()
		t.Topic = sweepTopic
		p := kmsg.NewListOffsetsRequestTopicPartition()
		p.Timestamp = -1 // the end
		t.Partitions = append(t.Partitions, p)
		req.Topics = append(req.Topics, t)
	},
	kmsg.Metadata.Int16(): func(_ *sweepState, r kmsg.Request, _ int16) {
		req := r.(*kmsg.MetadataRequest)
		t := kmsg.NewMetadataRequestTopic()
		t.Topic = kmsg.StringPtr(sweepTopic)
		req.Topics = append(req.Topics, t)
	},
	kmsg.OffsetCommit.Int16(): func(s *sweepState, r kmsg.Request, _ int16) {
		req := r.(*kmsg.OffsetCommitRequest)
		req.Group = sweepGroup
		t := kmsg.NewOffsetCommitRequestTopic()
		t.Topic, t.TopicID = sweepTopic, s.topicID // v10 names it by id
		p := kmsg.NewOffsetCommitRequestTopicPartition()
		p.Offset = sweepCommitted
		t.Partitions = append(t.Partitions, p)
		req.Topics = append(req.Topics, t)
	},
	kmsg.OffsetFetch.Int16(): func(s *sweepState, r kmsg.Request, _ int16) {
		req := r.(*kmsg.OffsetFetchRequest)
		req.Group = sweepGroup
		t := kmsg.NewOffsetFetchRequestTopic()
		t.Topic = sweepTopic
		t.Partitions = []int32{0}
		req.Topics = append(req.Topics, t)
		g := kmsg.NewOffsetFetchRequestGroup()
		g.Group = sweepGroup
		gt := kmsg.NewOffsetFetchRequestGroupTopic()
		gt.Topic, gt.TopicID = sweepTopic, s.topicID // v10 names it by id
		gt.Partitions = []int32{0}
		g.Topics = append(g.Topics, gt)
		req.Groups = append(req.Groups, g)
	},
	kmsg.FindCoordinator.Int16(): func(_ *sweepState, r kmsg.Request, _ int16) {
		req := r.(*kmsg.FindCoordinatorRequest)
		req.CoordinatorKey = sweepGroup
		req.CoordinatorKeys = []string{sweepGroup}
	},
	kmsg.DescribeGroups.Int16(): func(_ *sweepState, r kmsg.Request, _ int16) {
		r.(*kmsg.DescribeGroupsRequest).Groups = []string{sweepGroup}
	},
	kmsg.SASLHandshake.Int16(): func(_ *sweepState, r kmsg.Request, _ int16) {
		r.(*kmsg.SASLHandshakeRequest).Mechanism = "PLAIN"
	},
	kmsg.ApiVersions.Int16(): func(_ *sweepState, r kmsg.Request, _ int16) {
		req := r.(*kmsg.ApiVersionsRequest)
		req.ClientSoftwareName = "strata-e2e"
		req.ClientSoftwareVersion = "1"
	},
	kmsg.CreateTopics.Int16(): func(_ *sweepState, r kmsg.Request, v int16) {
		req := r.(*kmsg.CreateTopicsRequest)
		req.TimeoutMillis = 10_000
		t := kmsg.NewCreateTopicsRequestTopic()
		t.Topic = sweepCreated(v)
		t.NumPartitions, t.ReplicationFactor = 1, 1
		req.Topics = append(req.Topics, t)
	},
	kmsg.DeleteTopics.Int16(): func(_ *sweepState, r kmsg.Request, v int16) {
		req := r.(*kmsg.DeleteTopicsRequest)
		req.TimeoutMillis = 10_000
		req.TopicNames = []string{sweepCreated(v)}
		t := kmsg.NewDeleteTopicsRequestTopic()
		t.Topic = kmsg.StringPtr(sweepCreated(v))
		req.Topics = append(req.Topics, t)
	},
	kmsg.DeleteRecords.Int16(): func(_ *sweepState, r kmsg.Request, v int16) {
		req := r.(*kmsg.DeleteRecordsRequest)
		req.TimeoutMillis = 10_000
		t := kmsg.NewDeleteRecordsRequestTopic()
		t.Topic = sweepDeleteTopic
		p := kmsg.NewDeleteRecordsRequestTopicPartition()
		p.Offset = sweepDeletedBelow(v)
		t.Partitions = append(t.Partitions, p)
		req.Topics = append(req.Topics, t)
	},
	kmsg.InitProducerID.Int16(): func(_ *sweepState, r kmsg.Request, _ int16) {
		r.(*kmsg.InitProducerIDRequest).TransactionTimeoutMillis = 60_000
	},
	kmsg.OffsetForLeaderEpoch.Int16(): func(_ *sweepState, r kmsg.Request, _ int16) {
		req := r.(*kmsg.OffsetForLeaderEpochRequest)
		t := kmsg.NewOffsetForLeaderEpochRequestTopic()
		t.Topic = sweepTopic
		p := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		p.LeaderEpoch = 0
		t.Partitions = append(t.Partitions, p)
		req.Topics = append(req.Topics, t)
	},
	kmsg.DescribeACLs.Int16(): func(_ *sweepState, r kmsg.Request, _ int16) {
		req := r.(*kmsg.DescribeACLsRequest)
		req.ResourceType = kmsg.ACLResourceTypeAny
		req.ResourcePatternType = kmsg.ACLResourcePatternTypeAny
		req.Operation = kmsg.ACLOperationAny
		req.PermissionType = kmsg.ACLPermissionTypeAny
	},
	kmsg.DescribeConfigs.Int16(): func(_ *sweepState, r kmsg.Request, _ int16) {
		req := r.(*kmsg.DescribeConfigsRequest)
		req.IncludeSynonyms = true
		res := kmsg.NewDescribeConfigsRequestResource()
		res.ResourceType = kmsg.ConfigResourceTypeTopic
		res.ResourceName = sweepTopic
		req.Resources = append(req.Resources, res)
	},
	kmsg.AlterConfigs.Int16(): func(_ *sweepState, r kmsg.Request, v int16) {
		req := r.(*kmsg.AlterConfigsRequest)
		res := kmsg.NewAlterConfigsRequestResource()
		res.ResourceType = kmsg.ConfigResourceTypeTopic
		res.ResourceName = sweepConfigTopic
		c := kmsg.NewAlterConfigsRequestResourceConfig()
		c.Name, c.Value = "retention.ms", kmsg.StringPtr(fmt.Sprint(86_400_000+int(v)))
		res.Configs = append(res.Configs, c)
		req.Resources = append(req.Resources, res)
	},
	kmsg.CreatePartitions.Int16(): func(_ *sweepState, r kmsg.Request, v int16) {
		req := r.(*kmsg.CreatePartitionsRequest)
		req.TimeoutMillis = 10_000
		t := kmsg.NewCreatePartitionsRequestTopic()
		t.Topic = sweepGrowTopic
		t.Count = int32(v) + 2
		req.Topics = append(req.Topics, t)
	},
	kmsg.IncrementalAlterConfigs.Int16(): func(_ *sweepState, r kmsg.Request, v int16) {
		req := r.(*kmsg.IncrementalAlterConfigsRequest)
		res := kmsg.NewIncrementalAlterConfigsRequestResource()
		res.ResourceType = kmsg.ConfigResourceTypeTopic
		res.ResourceName = sweepConfigTopic
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Op, c.Value = "segment.ms", kmsg.IncrementalAlterConfigOpSet, kmsg.StringPtr(fmt.Sprint(3_600_000+int(v)))
		res.Configs = append(res.Configs, c)
		req.Resources = append(req.Resources, res)
	},
	kmsg.DescribeQuorum.Int16(): func(_ *sweepState, r kmsg.Request, _ int16) {
		req := r.(*kmsg.DescribeQuorumRequest)
		t := kmsg.NewDescribeQuorumRequestTopic()
		t.Topic = "__cluster_metadata"
		t.Partitions = append(t.Partitions, kmsg.NewDescribeQuorumRequestTopicPartition())
		req.Topics = append(req.Topics, t)
	},
	kmsg.DescribeProducers.Int16(): func(_ *sweepState, r kmsg.Request, _ int16) {
		req := r.(*kmsg.DescribeProducersRequest)
		t := kmsg.NewDescribeProducersRequestTopic()
		t.Topic = sweepTopic
		t.Partitions = []int32{0}
		req.Topics = append(req.Topics, t)
	},
	kmsg.DescribeTopicPartitions.Int16(): func(_ *sweepState, r kmsg.Request, _ int16) {
		req := r.(*kmsg.DescribeTopicPartitionsRequest)
		t := kmsg.NewDescribeTopicPartitionsRequestTopic()
		t.Topic = sweepTopic
		req.Topics = append(req.Topics, t)
	},
}

// sweepCreated names the topic CreateTopics creates at version v and
// DeleteTopics deletes at the same version.
func sweepCreated(v int16) string { return fmt.Sprintf("sweep-created-v%d", v) }

// sweepDeletedBelow is the offset DeleteRecords at version v deletes below.
func sweepDeletedBelow(v int16) int64 { return int64(v) + 1 }

// sweepChecks checks that the APIs clients read and write with did what the
// sweep's request asked.
var sweepChecks = map[int16]func(s *sweepState, resp kmsg.Response, v int16) error{
	kmsg.Produce.Int16(): func(_ *sweepState, r kmsg.Response, _ int16) error {
		p := onePartition(r.(*kmsg.ProduceResponse).Topics, func(t kmsg.ProduceResponseTopic) []kmsg.ProduceResponseTopicPartition { return t.Partitions })
		if p == nil || p.ErrorCode != 0 || p.BaseOffset < 1 {
			return fmt.Errorf("produce answered %+v, want error 0 and an offset after the first record", p)
		}
		return nil
	},
	kmsg.Fetch.Int16(): func(_ *sweepState, r kmsg.Response, _ int16) error {
		resp := r.(*kmsg.FetchResponse)
		p := onePartition(resp.Topics, func(t kmsg.FetchResponseTopic) []kmsg.FetchResponseTopicPartition { return t.Partitions })
		if resp.ErrorCode != 0 || p == nil || p.ErrorCode != 0 || p.HighWatermark < 1 || len(p.RecordBatches) == 0 {
			return fmt.Errorf("fetch from offset 0 answered error %d, partition %+v, want records", resp.ErrorCode, p)
		}
		return nil
	},
	kmsg.ListOffsets.Int16(): func(_ *sweepState, r kmsg.Response, _ int16) error {
		p := onePartition(r.(*kmsg.ListOffsetsResponse).Topics, func(t kmsg.ListOffsetsResponseTopic) []kmsg.ListOffsetsResponseTopicPartition { return t.Partitions })
		if p == nil || p.ErrorCode != 0 || p.Offset < 1 {
			return fmt.Errorf("list offsets (latest) answered %+v, want the end offset", p)
		}
		return nil
	},
	kmsg.Metadata.Int16(): func(s *sweepState, r kmsg.Response, _ int16) error {
		resp := r.(*kmsg.MetadataResponse)
		if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 || len(resp.Topics[0].Partitions) != 1 || len(resp.Brokers) != s.nodes {
			return fmt.Errorf("metadata for %q answered %d brokers, topics %+v", sweepTopic, len(resp.Brokers), resp.Topics)
		}
		return nil
	},
	kmsg.OffsetCommit.Int16(): func(s *sweepState, r kmsg.Response, v int16) error {
		topics := r.(*kmsg.OffsetCommitResponse).Topics
		p := onePartition(topics, func(t kmsg.OffsetCommitResponseTopic) []kmsg.OffsetCommitResponseTopicPartition { return t.Partitions })
		if p == nil || p.ErrorCode != 0 {
			return fmt.Errorf("offset commit answered %+v, want error 0", p)
		}
		if v >= 10 && topics[0].TopicID != s.topicID {
			return fmt.Errorf("offset commit v%d answered topic id %x, want %x", v, topics[0].TopicID, s.topicID)
		}
		return nil
	},
	kmsg.OffsetFetch.Int16(): func(s *sweepState, r kmsg.Response, v int16) error {
		resp := r.(*kmsg.OffsetFetchResponse)
		topics := resp.Topics
		if v >= 8 {
			if len(resp.Groups) != 1 || resp.Groups[0].ErrorCode != 0 {
				return fmt.Errorf("offset fetch answered groups %+v, want %q", resp.Groups, sweepGroup)
			}
			var p *kmsg.OffsetFetchResponseGroupTopicPartition
			if g := resp.Groups[0]; len(g.Topics) == 1 && len(g.Topics[0].Partitions) == 1 {
				p = &g.Topics[0].Partitions[0]
			}
			if p == nil || p.ErrorCode != 0 || p.Offset != sweepCommitted {
				return fmt.Errorf("offset fetch answered %+v, want offset %d", p, sweepCommitted)
			}
			if v >= 10 && resp.Groups[0].Topics[0].TopicID != s.topicID {
				return fmt.Errorf("offset fetch v%d answered topic id %x, want %x", v, resp.Groups[0].Topics[0].TopicID, s.topicID)
			}
			return nil
		}
		p := onePartition(topics, func(t kmsg.OffsetFetchResponseTopic) []kmsg.OffsetFetchResponseTopicPartition { return t.Partitions })
		if resp.ErrorCode != 0 || p == nil || p.ErrorCode != 0 || p.Offset != sweepCommitted {
			return fmt.Errorf("offset fetch answered error %d, %+v, want offset %d", resp.ErrorCode, p, sweepCommitted)
		}
		return nil
	},
	kmsg.FindCoordinator.Int16(): func(_ *sweepState, r kmsg.Response, v int16) error {
		resp := r.(*kmsg.FindCoordinatorResponse)
		code, node := resp.ErrorCode, resp.NodeID
		if v >= 4 {
			if len(resp.Coordinators) != 1 {
				return fmt.Errorf("find coordinator answered %d coordinators, want 1", len(resp.Coordinators))
			}
			code, node = resp.Coordinators[0].ErrorCode, resp.Coordinators[0].NodeID
		}
		if code != 0 || node < 0 {
			return fmt.Errorf("find coordinator answered error %d, node %d", code, node)
		}
		return nil
	},
	kmsg.DescribeGroups.Int16(): func(_ *sweepState, r kmsg.Response, _ int16) error {
		resp := r.(*kmsg.DescribeGroupsResponse)
		if len(resp.Groups) != 1 || resp.Groups[0].ErrorCode != 0 || resp.Groups[0].State != "Empty" {
			return fmt.Errorf("describe groups answered %+v, want %q empty", resp.Groups, sweepGroup)
		}
		return nil
	},
	kmsg.ApiVersions.Int16(): func(_ *sweepState, r kmsg.Response, _ int16) error {
		if resp := r.(*kmsg.ApiVersionsResponse); resp.ErrorCode != 0 || len(resp.ApiKeys) == 0 {
			return fmt.Errorf("api versions answered error %d with %d keys", resp.ErrorCode, len(resp.ApiKeys))
		}
		return nil
	},
	kmsg.CreateTopics.Int16(): func(_ *sweepState, r kmsg.Response, _ int16) error {
		resp := r.(*kmsg.CreateTopicsResponse)
		if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 {
			return fmt.Errorf("create topics answered %+v, want error 0", resp.Topics)
		}
		return nil
	},
	kmsg.DeleteTopics.Int16(): func(_ *sweepState, r kmsg.Response, _ int16) error {
		resp := r.(*kmsg.DeleteTopicsResponse)
		if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 {
			return fmt.Errorf("delete topics answered %+v, want error 0", resp.Topics)
		}
		return nil
	},
	kmsg.DeleteRecords.Int16(): func(_ *sweepState, r kmsg.Response, v int16) error {
		p := onePartition(r.(*kmsg.DeleteRecordsResponse).Topics, func(t kmsg.DeleteRecordsResponseTopic) []kmsg.DeleteRecordsResponseTopicPartition {
			return t.Partitions
		})
		if p == nil || p.ErrorCode != 0 || p.LowWatermark != sweepDeletedBelow(v) {
			return fmt.Errorf("delete records answered %+v, want low watermark %d", p, sweepDeletedBelow(v))
		}
		return nil
	},
	kmsg.InitProducerID.Int16(): func(_ *sweepState, r kmsg.Response, _ int16) error {
		if resp := r.(*kmsg.InitProducerIDResponse); resp.ErrorCode != 0 || resp.ProducerID < 0 {
			return fmt.Errorf("init producer id answered error %d, id %d", resp.ErrorCode, resp.ProducerID)
		}
		return nil
	},
	kmsg.OffsetForLeaderEpoch.Int16(): func(_ *sweepState, r kmsg.Response, _ int16) error {
		p := onePartition(r.(*kmsg.OffsetForLeaderEpochResponse).Topics, func(t kmsg.OffsetForLeaderEpochResponseTopic) []kmsg.OffsetForLeaderEpochResponseTopicPartition {
			return t.Partitions
		})
		if p == nil || p.ErrorCode != 0 || p.EndOffset < 1 {
			return fmt.Errorf("offset for leader epoch 0 answered %+v, want its end offset", p)
		}
		return nil
	},
	kmsg.DescribeConfigs.Int16(): func(_ *sweepState, r kmsg.Response, _ int16) error {
		resp := r.(*kmsg.DescribeConfigsResponse)
		if len(resp.Resources) != 1 || resp.Resources[0].ErrorCode != 0 || len(resp.Resources[0].Configs) == 0 {
			return fmt.Errorf("describe configs of %q answered %d resources, want its configs", sweepTopic, len(resp.Resources))
		}
		return nil
	},
	kmsg.AlterConfigs.Int16(): func(_ *sweepState, r kmsg.Response, _ int16) error {
		resp := r.(*kmsg.AlterConfigsResponse)
		if len(resp.Resources) != 1 || resp.Resources[0].ErrorCode != 0 {
			return fmt.Errorf("alter configs answered %+v, want error 0", resp.Resources)
		}
		return nil
	},
	kmsg.IncrementalAlterConfigs.Int16(): func(_ *sweepState, r kmsg.Response, _ int16) error {
		resp := r.(*kmsg.IncrementalAlterConfigsResponse)
		if len(resp.Resources) != 1 || resp.Resources[0].ErrorCode != 0 {
			return fmt.Errorf("incremental alter configs answered %+v, want error 0", resp.Resources)
		}
		return nil
	},
	kmsg.DescribeLogDirs.Int16(): func(_ *sweepState, r kmsg.Response, _ int16) error {
		resp := r.(*kmsg.DescribeLogDirsResponse)
		if resp.ErrorCode != 0 || len(resp.Dirs) == 0 || len(resp.Dirs[0].Topics) == 0 {
			return fmt.Errorf("describe log dirs answered error %d, %d dirs, want the topics' partitions", resp.ErrorCode, len(resp.Dirs))
		}
		return nil
	},
	kmsg.CreatePartitions.Int16(): func(_ *sweepState, r kmsg.Response, _ int16) error {
		resp := r.(*kmsg.CreatePartitionsResponse)
		if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 {
			return fmt.Errorf("create partitions answered %+v, want error 0", resp.Topics)
		}
		return nil
	},
	kmsg.DescribeCluster.Int16(): func(s *sweepState, r kmsg.Response, _ int16) error {
		if resp := r.(*kmsg.DescribeClusterResponse); resp.ErrorCode != 0 || len(resp.Brokers) != s.nodes {
			return fmt.Errorf("describe cluster answered error %d, %d brokers", resp.ErrorCode, len(resp.Brokers))
		}
		return nil
	},
	kmsg.DescribeQuorum.Int16(): func(s *sweepState, r kmsg.Response, v int16) error {
		resp := r.(*kmsg.DescribeQuorumResponse)
		p := onePartition(resp.Topics, func(t kmsg.DescribeQuorumResponseTopic) []kmsg.DescribeQuorumResponseTopicPartition {
			return t.Partitions
		})
		if resp.ErrorCode != 0 || p == nil || p.ErrorCode != 0 || p.HighWatermark < 1 || len(p.CurrentVoters) != s.nodes ||
			!slices.ContainsFunc(p.CurrentVoters, func(r kmsg.DescribeQuorumResponseTopicPartitionReplicaState) bool {
				return r.ReplicaID == p.LeaderID && r.LogEndOffset == p.HighWatermark
			}) {
			return fmt.Errorf("describe quorum answered error %d, %+v, want %d voters, the leader among them", resp.ErrorCode, p, s.nodes)
		}
		if v >= 2 && len(resp.Nodes) != s.nodes {
			return fmt.Errorf("describe quorum v%d answered nodes %+v, want %d", v, resp.Nodes, s.nodes)
		}
		// The voters' controller listeners: one each in a cluster, none
		// on a single node, which has none.
		wantListeners := 0
		if s.nodes > 1 {
			wantListeners = 1
		}
		for _, n := range resp.Nodes {
			if len(n.Listeners) != wantListeners {
				return fmt.Errorf("describe quorum v%d: node %d has listeners %+v, want %d", v, n.NodeID, n.Listeners, wantListeners)
			}
		}
		return nil
	},
	kmsg.DescribeProducers.Int16(): func(_ *sweepState, r kmsg.Response, _ int16) error {
		p := onePartition(r.(*kmsg.DescribeProducersResponse).Topics, func(t kmsg.DescribeProducersResponseTopic) []kmsg.DescribeProducersResponseTopicPartition {
			return t.Partitions
		})
		if p == nil || p.ErrorCode != 0 {
			return fmt.Errorf("describe producers answered %+v, want error 0", p)
		}
		return nil
	},
	kmsg.DescribeTopicPartitions.Int16(): func(s *sweepState, r kmsg.Response, _ int16) error {
		resp := r.(*kmsg.DescribeTopicPartitionsResponse)
		p := onePartition(resp.Topics, func(t kmsg.DescribeTopicPartitionsResponseTopic) []kmsg.DescribeTopicPartitionsResponseTopicPartition {
			return t.Partitions
		})
		if p == nil || resp.Topics[0].ErrorCode != 0 || resp.Topics[0].TopicID != s.topicID || p.ErrorCode != 0 || p.LeaderID < 0 ||
			len(p.Replicas) == 0 || resp.NextCursor != nil {
			return fmt.Errorf("describe topic partitions answered %+v, want %s's one partition, led", resp.Topics, sweepTopic)
		}
		return nil
	},
}

// onePartition returns the only partition of the only topic, or nil.
func onePartition[T, P any](topics []T, partitions func(T) []P) *P {
	if len(topics) != 1 {
		return nil
	}
	ps := partitions(topics[0])
	if len(ps) != 1 {
		return nil
	}
	return &ps[0]
}

// errorCode is an ErrorCode field of a response and where it is.
type errorCode struct {
	path string
	code int16
}

// errorCodes lists every int16 field named ErrorCode in resp, at any depth.
func errorCodes(resp kmsg.Response) []errorCode {
	var out []errorCode
	var walk func(v reflect.Value, path string)
	walk = func(v reflect.Value, path string) {
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() {
				walk(v.Elem(), path)
			}
		case reflect.Slice:
			for i := range v.Len() {
				walk(v.Index(i), fmt.Sprintf("%s[%d]", path, i))
			}
		case reflect.Struct:
			for i := range v.NumField() {
				f := v.Type().Field(i)
				if f.Name == "ErrorCode" && f.Type.Kind() == reflect.Int16 {
					out = append(out, errorCode{path + ".ErrorCode", int16(v.Field(i).Int())})
					continue
				}
				walk(v.Field(i), path+"."+f.Name)
			}
		}
	}
	walk(reflect.ValueOf(resp), reflect.TypeOf(resp).Elem().Name())
	return out
}
