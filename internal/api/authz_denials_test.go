package api

import (
	"reflect"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// errorCodes is every ErrorCode field of a response, at any depth.
func errorCodes(resp kmsg.Response) []int16 {
	var out []int16
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Slice:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		case reflect.Struct:
			for i := range v.NumField() {
				if f := v.Type().Field(i); f.Name == "ErrorCode" && f.Type.Kind() == reflect.Int16 {
					out = append(out, int16(v.Field(i).Int()))
				} else if f.IsExported() {
					walk(v.Field(i))
				}
			}
		}
	}
	walk(reflect.ValueOf(resp))
	return out
}

// TestEveryChangeNeedsItsACL: with an authorizer on, a principal without
// ACLs is refused each change and each read of another's data, with the
// code Kafka answers, whatever exists. Real clients stop at Metadata when
// they cannot see a topic, so the end-to-end ACL tests reach few of these
// checks; here each request goes straight to its handler.
func TestEveryChangeNeedsItsACL(t *testing.T) {
	rh := newReplicaHarness(t, map[string]string{
		"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users":           "User:admin",
	})
	rh.createTopic("guarded", nil, []int32{1})
	rh.withGroups()
	rh.withTxns()
	const topic, group, txnID = "guarded", "guarded-group", "guarded-txn"
	topicDenied, groupDenied := kerr.TopicAuthorizationFailed.Code, kerr.GroupAuthorizationFailed.Code
	clusterDenied, txnDenied := kerr.ClusterAuthorizationFailed.Code, kerr.TransactionalIDAuthorizationFailed.Code

	for _, tc := range []struct {
		name string
		req  kmsg.Request
		want int16
	}{
		{"CreateTopics", func() kmsg.Request {
			r := kmsg.NewPtrCreateTopicsRequest()
			rt := kmsg.NewCreateTopicsRequestTopic()
			rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "new-topic", 1, 1
			r.Topics = append(r.Topics, rt)
			return r
		}(), topicDenied},
		{"DeleteTopics", func() kmsg.Request {
			r := kmsg.NewPtrDeleteTopicsRequest()
			rt := kmsg.NewDeleteTopicsRequestTopic()
			rt.Topic = kmsg.StringPtr(topic)
			r.Topics, r.TopicNames = append(r.Topics, rt), []string{topic}
			return r
		}(), topicDenied},
		{"CreatePartitions", func() kmsg.Request {
			r := kmsg.NewPtrCreatePartitionsRequest()
			rt := kmsg.NewCreatePartitionsRequestTopic()
			rt.Topic, rt.Count = topic, 3
			r.Topics = append(r.Topics, rt)
			return r
		}(), topicDenied},
		{"DeleteRecords", func() kmsg.Request {
			r := kmsg.NewPtrDeleteRecordsRequest()
			rt := kmsg.NewDeleteRecordsRequestTopic()
			rt.Topic = topic
			rp := kmsg.NewDeleteRecordsRequestTopicPartition()
			rp.Offset = 0
			rt.Partitions = append(rt.Partitions, rp)
			r.Topics = append(r.Topics, rt)
			return r
		}(), topicDenied},
		{"IncrementalAlterConfigs", func() kmsg.Request {
			r := kmsg.NewPtrIncrementalAlterConfigsRequest()
			rr := kmsg.NewIncrementalAlterConfigsRequestResource()
			rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, topic
			c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
			c.Name, c.Value = "retention.ms", kmsg.StringPtr("1")
			rr.Configs = append(rr.Configs, c)
			r.Resources = append(r.Resources, rr)
			return r
		}(), topicDenied},
		{"AlterConfigs", func() kmsg.Request {
			r := kmsg.NewPtrAlterConfigsRequest()
			rr := kmsg.NewAlterConfigsRequestResource()
			rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, topic
			c := kmsg.NewAlterConfigsRequestResourceConfig()
			c.Name, c.Value = "retention.ms", kmsg.StringPtr("1")
			rr.Configs = append(rr.Configs, c)
			r.Resources = append(r.Resources, rr)
			return r
		}(), topicDenied},
		{"DescribeConfigs", func() kmsg.Request {
			r := kmsg.NewPtrDescribeConfigsRequest()
			rr := kmsg.NewDescribeConfigsRequestResource()
			rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, topic
			r.Resources = append(r.Resources, rr)
			return r
		}(), topicDenied},
		{"Fetch", func() kmsg.Request {
			r := kmsg.NewPtrFetchRequest()
			r.ReplicaID, r.MaxBytes = -1, 1<<20
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic, rt.TopicID = topic, rh.meta.Image().Topics[topic].ID
			rp := kmsg.NewFetchRequestTopicPartition()
			rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LastFetchedEpoch = 1<<20, -1, -1
			rt.Partitions = append(rt.Partitions, rp)
			r.Topics = append(r.Topics, rt)
			return r
		}(), topicDenied},
		{"ListOffsets", func() kmsg.Request {
			r := kmsg.NewPtrListOffsetsRequest()
			r.ReplicaID = -1
			rt := kmsg.NewListOffsetsRequestTopic()
			rt.Topic = topic
			rp := kmsg.NewListOffsetsRequestTopicPartition()
			rp.Timestamp, rp.CurrentLeaderEpoch = -1, -1
			rt.Partitions = append(rt.Partitions, rp)
			r.Topics = append(r.Topics, rt)
			return r
		}(), topicDenied},
		{"OffsetCommit", func() kmsg.Request {
			r := kmsg.NewPtrOffsetCommitRequest()
			r.Group, r.Generation = group, -1
			rt := kmsg.NewOffsetCommitRequestTopic()
			rt.Topic = topic
			rp := kmsg.NewOffsetCommitRequestTopicPartition()
			rp.Offset, rp.LeaderEpoch = 1, -1
			rt.Partitions = append(rt.Partitions, rp)
			r.Topics = append(r.Topics, rt)
			return r
		}(), groupDenied},
		{"OffsetFetch", func() kmsg.Request {
			r := kmsg.NewPtrOffsetFetchRequest()
			r.Group = group
			rt := kmsg.NewOffsetFetchRequestTopic()
			rt.Topic, rt.Partitions = topic, []int32{0}
			r.Topics = append(r.Topics, rt)
			r.SetVersion(7) // the last with one group, not a list
			return r
		}(), groupDenied},
		{"OffsetFetch of a group list", func() kmsg.Request {
			r := kmsg.NewPtrOffsetFetchRequest()
			g := kmsg.NewOffsetFetchRequestGroup()
			g.Group = group
			r.Groups = append(r.Groups, g)
			return r
		}(), groupDenied},
		{"DeleteTopics by id", func() kmsg.Request {
			r := kmsg.NewPtrDeleteTopicsRequest()
			rt := kmsg.NewDeleteTopicsRequestTopic()
			rt.TopicID = rh.meta.Image().Topics[topic].ID
			r.Topics = append(r.Topics, rt)
			return r
		}(), topicDenied},
		{"DescribeConfigs of the broker's loggers", func() kmsg.Request {
			r := kmsg.NewPtrDescribeConfigsRequest()
			rr := kmsg.NewDescribeConfigsRequestResource()
			rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeBrokerLogger, "1"
			r.Resources = append(r.Resources, rr)
			return r
		}(), clusterDenied},
		{"IncrementalAlterConfigs of the broker's loggers", func() kmsg.Request {
			r := kmsg.NewPtrIncrementalAlterConfigsRequest()
			rr := kmsg.NewIncrementalAlterConfigsRequestResource()
			rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeBrokerLogger, "1"
			c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
			c.Name, c.Value = "root", kmsg.StringPtr("DEBUG")
			rr.Configs = append(rr.Configs, c)
			r.Resources = append(r.Resources, rr)
			return r
		}(), clusterDenied},
		{"DescribeConfigs of a group", func() kmsg.Request {
			r := kmsg.NewPtrDescribeConfigsRequest()
			rr := kmsg.NewDescribeConfigsRequestResource()
			rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
			r.Resources = append(r.Resources, rr)
			return r
		}(), groupDenied},
		{"OffsetDelete", func() kmsg.Request {
			r := kmsg.NewPtrOffsetDeleteRequest()
			r.Group = group
			rt := kmsg.NewOffsetDeleteRequestTopic()
			rt.Topic = topic
			rp := kmsg.NewOffsetDeleteRequestTopicPartition()
			rt.Partitions = append(rt.Partitions, rp)
			r.Topics = append(r.Topics, rt)
			return r
		}(), groupDenied},
		{"DeleteGroups", func() kmsg.Request {
			r := kmsg.NewPtrDeleteGroupsRequest()
			r.Groups = []string{group}
			return r
		}(), groupDenied},
		{"InitProducerID transactional", func() kmsg.Request {
			r := kmsg.NewPtrInitProducerIDRequest()
			r.TransactionalID, r.TransactionTimeoutMillis = kmsg.StringPtr(txnID), 60_000
			return r
		}(), txnDenied},
		{"InitProducerID idempotent", kmsg.NewPtrInitProducerIDRequest(), clusterDenied},
		{"AddPartitionsToTxn", func() kmsg.Request {
			r := kmsg.NewPtrAddPartitionsToTxnRequest()
			r.TransactionalID = txnID
			rt := kmsg.NewAddPartitionsToTxnRequestTopic()
			rt.Topic, rt.Partitions = topic, []int32{0}
			r.Topics = append(r.Topics, rt)
			r.SetVersion(3)
			return r
		}(), txnDenied},
		{"EndTxn", func() kmsg.Request {
			r := kmsg.NewPtrEndTxnRequest()
			r.TransactionalID, r.Commit = txnID, true
			return r
		}(), txnDenied},
		{"TxnOffsetCommit", func() kmsg.Request {
			r := kmsg.NewPtrTxnOffsetCommitRequest()
			r.TransactionalID, r.Group, r.Generation = txnID, group, -1
			rt := kmsg.NewTxnOffsetCommitRequestTopic()
			rt.Topic = topic
			rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
			rp.Offset, rp.LeaderEpoch = 1, -1
			rt.Partitions = append(rt.Partitions, rp)
			r.Topics = append(r.Topics, rt)
			return r
		}(), txnDenied},
		{"WriteTxnMarkers", func() kmsg.Request {
			r := kmsg.NewPtrWriteTxnMarkersRequest()
			m := kmsg.NewWriteTxnMarkersRequestMarker()
			m.ProducerID, m.Committed = 1, true
			mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
			mt.Topic, mt.Partitions = topic, []int32{0}
			m.Topics = append(m.Topics, mt)
			r.Markers = append(r.Markers, m)
			return r
		}(), clusterDenied},
		{"CreateACLs", func() kmsg.Request {
			r := kmsg.NewPtrCreateACLsRequest()
			c := kmsg.NewCreateACLsRequestCreation()
			c.ResourceType, c.ResourceName, c.ResourcePatternType = kmsg.ACLResourceTypeTopic, topic, kmsg.ACLResourcePatternTypeLiteral
			c.Principal, c.Host, c.Operation, c.PermissionType = "User:nobody", "*", kmsg.ACLOperationAll, kmsg.ACLPermissionTypeAllow
			r.Creations = append(r.Creations, c)
			return r
		}(), clusterDenied},
		{"AlterClientQuotas", func() kmsg.Request {
			r := kmsg.NewPtrAlterClientQuotasRequest()
			e := kmsg.NewAlterClientQuotasRequestEntry()
			ec := kmsg.NewAlterClientQuotasRequestEntryEntity()
			ec.Type, ec.Name = "user", kmsg.StringPtr("nobody")
			e.Entity = append(e.Entity, ec)
			op := kmsg.NewAlterClientQuotasRequestEntryOp()
			op.Key, op.Value = "producer_byte_rate", 1e9
			e.Ops = append(e.Ops, op)
			r.Entries = append(r.Entries, e)
			return r
		}(), clusterDenied},
		{"ElectLeaders", func() kmsg.Request {
			r := kmsg.NewPtrElectLeadersRequest()
			rt := kmsg.NewElectLeadersRequestTopic()
			rt.Topic, rt.Partitions = topic, []int32{0}
			r.Topics = append(r.Topics, rt)
			return r
		}(), clusterDenied},
		{"AlterPartitionReassignments", func() kmsg.Request {
			r := kmsg.NewPtrAlterPartitionAssignmentsRequest()
			rt := kmsg.NewAlterPartitionAssignmentsRequestTopic()
			rt.Topic = topic
			rp := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
			rp.Replicas = []int32{2}
			rt.Partitions = append(rt.Partitions, rp)
			r.Topics = append(r.Topics, rt)
			return r
		}(), clusterDenied},
		{"UnregisterBroker", func() kmsg.Request {
			r := kmsg.NewPtrUnregisterBrokerRequest()
			r.BrokerID = 3
			return r
		}(), clusterDenied},
		{"JoinGroup", func() kmsg.Request {
			r := kmsg.NewPtrJoinGroupRequest()
			r.Group, r.ProtocolType, r.SessionTimeoutMillis, r.RebalanceTimeoutMillis = group, "consumer", 10_000, 10_000
			pr := kmsg.NewJoinGroupRequestProtocol()
			pr.Name = "range"
			r.Protocols = append(r.Protocols, pr)
			return r
		}(), groupDenied},
		{"SyncGroup", func() kmsg.Request {
			r := kmsg.NewPtrSyncGroupRequest()
			r.Group, r.Generation, r.MemberID = group, 1, "member"
			return r
		}(), groupDenied},
		{"Heartbeat", func() kmsg.Request {
			r := kmsg.NewPtrHeartbeatRequest()
			r.Group, r.Generation, r.MemberID = group, 1, "member"
			return r
		}(), groupDenied},
		{"LeaveGroup", func() kmsg.Request {
			r := kmsg.NewPtrLeaveGroupRequest()
			r.Group = group
			m := kmsg.NewLeaveGroupRequestMember()
			m.MemberID = "member"
			r.Members = append(r.Members, m)
			return r
		}(), groupDenied},
		{"DescribeGroups", func() kmsg.Request {
			r := kmsg.NewPtrDescribeGroupsRequest()
			r.Groups = []string{group}
			return r
		}(), groupDenied},
		{"FindCoordinator of a group", func() kmsg.Request {
			r := kmsg.NewPtrFindCoordinatorRequest()
			r.CoordinatorKeys = []string{group}
			return r
		}(), groupDenied},
		{"FindCoordinator of a transactional id", func() kmsg.Request {
			r := kmsg.NewPtrFindCoordinatorRequest()
			r.CoordinatorType, r.CoordinatorKeys = 1, []string{txnID}
			return r
		}(), txnDenied},
		{"ConsumerGroupHeartbeat", func() kmsg.Request {
			r := kmsg.NewPtrConsumerGroupHeartbeatRequest()
			r.Group, r.MemberID, r.RebalanceTimeoutMillis, r.SubscribedTopicNames = group, "member", 10_000, []string{topic}
			return r
		}(), groupDenied},
		{"ConsumerGroupDescribe", func() kmsg.Request {
			r := kmsg.NewPtrConsumerGroupDescribeRequest()
			r.Groups = []string{group}
			return r
		}(), groupDenied},
		{"ShareGroupHeartbeat", func() kmsg.Request {
			r := kmsg.NewPtrShareGroupHeartbeatRequest()
			r.GroupID, r.MemberID, r.SubscribedTopicNames = group, "member", []string{topic}
			return r
		}(), groupDenied},
		{"ShareGroupDescribe", func() kmsg.Request {
			r := kmsg.NewPtrShareGroupDescribeRequest()
			r.GroupIDs = []string{group}
			return r
		}(), groupDenied},
		{"ShareFetch", shareFetchOf(group, "member", rh.meta.Image().Topics[topic].ID), groupDenied},
		{"ShareAcknowledge", func() kmsg.Request {
			r := kmsg.NewPtrShareAcknowledgeRequest()
			r.GroupID, r.MemberID, r.ShareSessionEpoch = kmsg.StringPtr(group), kmsg.StringPtr("member"), 1
			rt := kmsg.NewShareAcknowledgeRequestTopic()
			rt.TopicID = rh.meta.Image().Topics[topic].ID
			rt.Partitions = append(rt.Partitions, kmsg.NewShareAcknowledgeRequestTopicPartition())
			r.Topics = append(r.Topics, rt)
			return r
		}(), groupDenied},
		{"DescribeShareGroupOffsets", describeShareOffsetsOf(group), groupDenied},
		{"AlterShareGroupOffsets", alterShareOffsetsOf(group, topic), groupDenied},
		{"DeleteShareGroupOffsets", deleteShareOffsetsOf(group, topic), groupDenied},
		{"AddOffsetsToTxn", func() kmsg.Request {
			r := kmsg.NewPtrAddOffsetsToTxnRequest()
			r.TransactionalID, r.Group = txnID, group
			return r
		}(), txnDenied},
		{"DescribeTransactions", func() kmsg.Request {
			r := kmsg.NewPtrDescribeTransactionsRequest()
			r.TransactionalIDs = []string{txnID}
			return r
		}(), txnDenied},
		{"DescribeProducers", func() kmsg.Request {
			r := kmsg.NewPtrDescribeProducersRequest()
			rt := kmsg.NewDescribeProducersRequestTopic()
			rt.Topic, rt.Partitions = topic, []int32{0}
			r.Topics = append(r.Topics, rt)
			return r
		}(), topicDenied},
		{"OffsetForLeaderEpoch", func() kmsg.Request {
			r := kmsg.NewPtrOffsetForLeaderEpochRequest()
			r.ReplicaID = -1
			rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
			rt.Topic = topic
			rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
			rp.CurrentLeaderEpoch = -1
			rt.Partitions = append(rt.Partitions, rp)
			r.Topics = append(r.Topics, rt)
			return r
		}(), topicDenied},
		{"DescribeLogDirs", kmsg.NewPtrDescribeLogDirsRequest(), clusterDenied},
		{"ListPartitionReassignments", kmsg.NewPtrListPartitionReassignmentsRequest(), clusterDenied},
		{"DescribeQuorum", func() kmsg.Request {
			r := kmsg.NewPtrDescribeQuorumRequest()
			rt := kmsg.NewDescribeQuorumRequestTopic()
			rt.Topic = "__cluster_metadata"
			rt.Partitions = append(rt.Partitions, kmsg.NewDescribeQuorumRequestTopicPartition())
			r.Topics = append(r.Topics, rt)
			return r
		}(), clusterDenied},
		{"UpdateFeatures", func() kmsg.Request {
			r := kmsg.NewPtrUpdateFeaturesRequest()
			u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
			u.Feature, u.MaxVersionLevel, u.UpgradeType = "transaction.version", 2, 1
			r.FeatureUpdates = append(r.FeatureUpdates, u)
			return r
		}(), clusterDenied},
		{"AlterUserScramCredentials", func() kmsg.Request {
			r := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
			d := kmsg.NewAlterUserSCRAMCredentialsRequestDeletion()
			d.Name, d.Mechanism = "admin", 1
			r.Deletions = append(r.Deletions, d)
			return r
		}(), clusterDenied},
		{"DescribeConfigs of the broker", func() kmsg.Request {
			r := kmsg.NewPtrDescribeConfigsRequest()
			rr := kmsg.NewDescribeConfigsRequestResource()
			rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeBroker, "1"
			r.Resources = append(r.Resources, rr)
			return r
		}(), clusterDenied},
		{"Fetch as a replica", func() kmsg.Request {
			r := rh.replicaFetchRequest(2, topic, 0, 0, -1, 0)
			return r
		}(), topicDenied},
		{"Produce in a transaction", func() kmsg.Request {
			r := kmsg.NewPtrProduceRequest()
			r.TransactionID, r.Acks, r.TimeoutMillis = kmsg.StringPtr(txnID), -1, 5000
			rt := kmsg.NewProduceRequestTopic()
			rt.Topic = topic
			rp := kmsg.NewProduceRequestTopicPartition()
			rp.Records = txnBatch(1, 0, 0, "v")
			rt.Partitions = append(rt.Partitions, rp)
			r.Topics = append(r.Topics, rt)
			return r
		}(), txnDenied},
		{"AddPartitionsToTxn as a broker", func() kmsg.Request {
			r := kmsg.NewPtrAddPartitionsToTxnRequest()
			r.Transactions = append(r.Transactions, batchTx(txnID, 1, 0, true))
			return r
		}(), clusterDenied},
		{"ReadShareGroupState", func() kmsg.Request {
			r := kmsg.NewPtrReadShareGroupStateRequest()
			r.GroupID = group
			rt := kmsg.NewReadShareGroupStateRequestTopic()
			rt.TopicID = rh.meta.Image().Topics[topic].ID
			rt.Partitions = append(rt.Partitions, kmsg.NewReadShareGroupStateRequestTopicPartition())
			r.Topics = append(r.Topics, rt)
			return r
		}(), clusterDenied},
		{"AddRaftVoter", func() kmsg.Request {
			r := kmsg.NewPtrAddRaftVoterRequest()
			r.VoterID = 3
			return r
		}(), clusterDenied},
		{"Metadata of a named topic", func() kmsg.Request {
			r := kmsg.NewPtrMetadataRequest()
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(topic)
			r.Topics = append(r.Topics, rt)
			return r
		}(), topicDenied},
		{"Metadata of a topic id", func() kmsg.Request {
			r := kmsg.NewPtrMetadataRequest()
			rt := kmsg.NewMetadataRequestTopic()
			rt.TopicID = rh.meta.Image().Topics[topic].ID
			r.Topics = append(r.Topics, rt)
			return r
		}(), topicDenied},
		{"DescribeUserScramCredentials", kmsg.NewPtrDescribeUserSCRAMCredentialsRequest(), clusterDenied},
		{"DescribeClientQuotas", kmsg.NewPtrDescribeClientQuotasRequest(), clusterDenied},
	} {
		key := tc.req.Key()
		version := tc.req.GetVersion()
		if version == 0 {
			version = registry[key].max
		}
		resp := rh.handle(key, version, tc.req, "User:nobody")
		if codes := errorCodes(resp); !slices.Contains(codes, tc.want) {
			t.Errorf("%s v%d without ACLs: error codes %v, want %d among them", tc.name, version, codes, tc.want)
		}
	}

	// alice may use the group and the transactional id, but not the
	// topic: the checks behind the group's and the id's refuse her.
	for _, a := range []struct {
		resource kmsg.ACLResourceType
		name     string
		op       kmsg.ACLOperation
	}{
		{kmsg.ACLResourceTypeGroup, group, kmsg.ACLOperationRead},
		{kmsg.ACLResourceTypeTransactionalId, txnID, kmsg.ACLOperationWrite},
	} {
		rh.allow("User:alice", a.resource, a.name, a.op)
	}
	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Group, commit.Generation = group, -1
	ct := kmsg.NewOffsetCommitRequestTopic()
	topicID := rh.meta.Image().Topics[topic].ID
	ct.Topic, ct.TopicID = topic, topicID // v10+ names topics by id
	cp := kmsg.NewOffsetCommitRequestTopicPartition()
	cp.Offset, cp.LeaderEpoch = 1, -1
	ct.Partitions = append(ct.Partitions, cp)
	commit.Topics = append(commit.Topics, ct)
	fetch := kmsg.NewPtrOffsetFetchRequest()
	fg := kmsg.NewOffsetFetchRequestGroup()
	fg.Group = group
	ft := kmsg.NewOffsetFetchRequestGroupTopic()
	ft.Topic, ft.TopicID, ft.Partitions = topic, topicID, []int32{0}
	fg.Topics = append(fg.Topics, ft)
	fetch.Groups = append(fetch.Groups, fg)
	txnCommit := kmsg.NewPtrTxnOffsetCommitRequest()
	txnCommit.TransactionalID, txnCommit.Group, txnCommit.Generation = txnID, "another-group", -1
	tt := kmsg.NewTxnOffsetCommitRequestTopic()
	tt.Topic = topic
	tp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
	tp.Offset, tp.LeaderEpoch = 1, -1
	tt.Partitions = append(tt.Partitions, tp)
	txnCommit.Topics = append(txnCommit.Topics, tt)
	for _, tc := range []struct {
		name string
		req  kmsg.Request
		want int16
	}{
		{"OffsetCommit of a topic she may not read", commit, topicDenied},
		{"OffsetFetch of a topic she may not see", fetch, topicDenied},
		{"TxnOffsetCommit to a group she may not read", txnCommit, groupDenied},
	} {
		key := tc.req.Key()
		resp := rh.handle(key, registry[key].max, tc.req, "User:alice")
		if codes := errorCodes(resp); !slices.Contains(codes, tc.want) {
			t.Errorf("%s: error codes %v, want %d among them", tc.name, codes, tc.want)
		}
	}
}

// TestListingsHideWhatAPrincipalMayNotDescribe: Metadata of every topic,
// ListGroups and ListTransactions leave out what the principal may not
// DESCRIBE, with no error; the admin sees each one.
func TestListingsHideWhatAPrincipalMayNotDescribe(t *testing.T) {
	rh := newReplicaHarness(t, map[string]string{
		"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users":           "User:admin",
	})
	rh.createTopic("hidden", nil, []int32{1})
	rh.withGroups()
	rh.withTxns()
	group, txnID := groupOnPartition(t, 0), txnIDsOn(t, 0, 1)[0]
	if code := rh.retryLoading(func() int16 {
		r := kmsg.NewPtrOffsetCommitRequest()
		r.Group, r.Generation = group, -1
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic = "hidden"
		rp := kmsg.NewOffsetCommitRequestTopicPartition()
		rp.Offset, rp.LeaderEpoch = 0, -1
		rt.Partitions = append(rt.Partitions, rp)
		r.Topics = append(r.Topics, rt)
		return rh.handle(8, 8, r, "User:admin").(*kmsg.OffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
	}); code != 0 {
		t.Fatalf("the admin's offset commit: error %d", code)
	}
	rh.initProducer("User:admin", txnID)

	listed := map[string]func(principal string) []string{
		"Metadata": func(principal string) []string {
			r := kmsg.NewPtrMetadataRequest()
			r.Topics = nil // every topic
			var names []string
			for _, t := range rh.handle(3, 12, r, principal).(*kmsg.MetadataResponse).Topics {
				if t.Topic != nil {
					names = append(names, *t.Topic)
				}
			}
			return names
		},
		"ListGroups": func(principal string) []string {
			var names []string
			for _, g := range rh.handle(16, 4, kmsg.NewPtrListGroupsRequest(), principal).(*kmsg.ListGroupsResponse).Groups {
				names = append(names, g.Group)
			}
			return names
		},
		"ListTransactions": func(principal string) []string {
			var names []string
			for _, s := range rh.handle(66, 1, kmsg.NewPtrListTransactionsRequest(), principal).(*kmsg.ListTransactionsResponse).TransactionStates {
				names = append(names, s.TransactionalID)
			}
			return names
		},
	}
	wants := map[string]string{"Metadata": "hidden", "ListGroups": group, "ListTransactions": txnID}
	for name, list := range listed {
		if got := list("User:admin"); !slices.Contains(got, wants[name]) {
			t.Errorf("%s as the admin: %v, want %s among them", name, got, wants[name])
		}
		if got := list("User:nobody"); slices.Contains(got, wants[name]) {
			t.Errorf("%s without ACLs: %v shows %s", name, got, wants[name])
		}
	}
}
