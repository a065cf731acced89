package group

import (
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ErrorResponse is the response to req when the coordinator cannot serve it
// at all (loading, not the coordinator, the append failed): code in every
// error field the response has. Requests of other types than those in
// MaxVersions are a programmer error.
func ErrorResponse(req kmsg.Request, code int16) kmsg.Response {
	switch req := req.(type) {
	case *kmsg.JoinGroupRequest:
		return joinError(req, req.MemberID, code)
	case *kmsg.SyncGroupRequest:
		return syncError(req, code)
	case *kmsg.HeartbeatRequest:
		resp := req.ResponseKind().(*kmsg.HeartbeatResponse)
		resp.ErrorCode = code
		return resp
	case *kmsg.LeaveGroupRequest:
		resp := req.ResponseKind().(*kmsg.LeaveGroupResponse)
		resp.ErrorCode = code
		return resp
	case *kmsg.OffsetCommitRequest:
		resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
		for _, t := range req.Topics {
			rt := kmsg.OffsetCommitResponseTopic{Topic: t.Topic, TopicID: t.TopicID}
			for _, p := range t.Partitions {
				rt.Partitions = append(rt.Partitions, kmsg.OffsetCommitResponseTopicPartition{Partition: p.Partition, ErrorCode: code})
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	case *kmsg.OffsetFetchRequest:
		return offsetFetchError(req, code)
	case *kmsg.TxnOffsetCommitRequest:
		return txnCommitError(req, code)
	case *kmsg.OffsetDeleteRequest:
		resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
		resp.ErrorCode = code
		return resp
	case *kmsg.DescribeGroupsRequest:
		resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
		for _, id := range req.Groups {
			rg := kmsg.NewDescribeGroupsResponseGroup()
			rg.Group, rg.ErrorCode = id, code
			resp.Groups = append(resp.Groups, rg)
		}
		return resp
	case *kmsg.ListGroupsRequest:
		resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
		resp.ErrorCode = code
		return resp
	case *kmsg.ConsumerGroupHeartbeatRequest:
		resp := req.ResponseKind().(*kmsg.ConsumerGroupHeartbeatResponse)
		resp.ErrorCode = code
		return resp
	case *kmsg.ConsumerGroupDescribeRequest:
		resp := req.ResponseKind().(*kmsg.ConsumerGroupDescribeResponse)
		for _, id := range req.Groups {
			rg := kmsg.NewConsumerGroupDescribeResponseGroup()
			rg.Group, rg.ErrorCode = id, code
			resp.Groups = append(resp.Groups, rg)
		}
		return resp
	case *kmsg.ShareGroupHeartbeatRequest:
		resp := req.ResponseKind().(*kmsg.ShareGroupHeartbeatResponse)
		resp.ErrorCode = code
		return resp
	case *kmsg.ShareGroupDescribeRequest:
		resp := req.ResponseKind().(*kmsg.ShareGroupDescribeResponse)
		for _, id := range req.GroupIDs {
			rg := kmsg.NewShareGroupDescribeResponseGroup()
			rg.GroupID, rg.ErrorCode = id, code
			resp.Groups = append(resp.Groups, rg)
		}
		return resp
	case *kmsg.DescribeShareGroupOffsetsRequest:
		resp := req.ResponseKind().(*kmsg.DescribeShareGroupOffsetsResponse)
		for _, g := range req.Groups {
			rg := kmsg.NewDescribeShareGroupOffsetsResponseGroup()
			rg.GroupID, rg.ErrorCode = g.GroupID, code
			resp.Groups = append(resp.Groups, rg)
		}
		return resp
	case *kmsg.AlterShareGroupOffsetsRequest:
		resp := req.ResponseKind().(*kmsg.AlterShareGroupOffsetsResponse)
		resp.ErrorCode = code
		return resp
	case *kmsg.DeleteShareGroupOffsetsRequest:
		resp := req.ResponseKind().(*kmsg.DeleteShareGroupOffsetsResponse)
		resp.ErrorCode = code
		return resp
	case *kmsg.DeleteGroupsRequest:
		resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
		for _, id := range req.Groups {
			rg := kmsg.NewDeleteGroupsResponseGroup()
			rg.Group, rg.ErrorCode = id, code
			resp.Groups = append(resp.Groups, rg)
		}
		return resp
	}
	panic(fmt.Sprintf("group: ErrorResponse for unserved request %T", req))
}

// offsetFetchError: before v2 the response has no top-level error code, so
// the code goes on every requested partition.
func offsetFetchError(req *kmsg.OffsetFetchRequest, code int16) *kmsg.OffsetFetchResponse {
	resp := req.ResponseKind().(*kmsg.OffsetFetchResponse)
	if req.Version >= 8 {
		for _, g := range req.Groups {
			resp.Groups = append(resp.Groups, kmsg.OffsetFetchResponseGroup{Group: g.Group, ErrorCode: code})
		}
		return resp
	}
	resp.ErrorCode = code
	for _, t := range req.Topics {
		rt := kmsg.OffsetFetchResponseTopic{Topic: t.Topic}
		for _, p := range t.Partitions {
			rt.Partitions = append(rt.Partitions, kmsg.OffsetFetchResponseTopicPartition{
				Partition: p, Offset: -1, LeaderEpoch: -1, ErrorCode: code,
			})
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}

// txnCommitError is Kafka's TxnOffsetCommitRequest.getErrorResponse: code
// on every requested partition.
func txnCommitError(req *kmsg.TxnOffsetCommitRequest, code int16) *kmsg.TxnOffsetCommitResponse {
	resp := req.ResponseKind().(*kmsg.TxnOffsetCommitResponse)
	for _, t := range req.Topics {
		rt := kmsg.TxnOffsetCommitResponseTopic{Topic: t.Topic, TopicID: t.TopicID}
		for _, p := range t.Partitions {
			rt.Partitions = append(rt.Partitions, kmsg.TxnOffsetCommitResponseTopicPartition{Partition: p.Partition, ErrorCode: code})
		}
		resp.Topics = append(resp.Topics, rt)
	}
	return resp
}
