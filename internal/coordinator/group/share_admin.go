package group

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/assignor"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

// shareGroupDescribe answers ShareGroupDescribe for the groups of this
// partition; a group that is missing, or not a share group, is
// GROUP_ID_NOT_FOUND. AuthorizedOperations is the api layer's to fill.
func (c *Coordinator) shareGroupDescribe(req *kmsg.ShareGroupDescribeRequest) *kmsg.ShareGroupDescribeResponse {
	resp := req.ResponseKind().(*kmsg.ShareGroupDescribeResponse)
	view := c.opts.Topics()
	for _, id := range req.GroupIDs {
		d := kmsg.NewShareGroupDescribeResponseGroup()
		d.GroupID = id
		sg := c.shares[id]
		switch {
		case id == "":
			d.ErrorCode = kerr.InvalidGroupID.Code
		case sg != nil:
			sg.describe(&d, view)
		case c.groups[id] != nil && !c.groups[id].garbage():
			d.ErrorCode, d.ErrorMessage = kerr.GroupIDNotFound.Code, kmsg.StringPtr(fmt.Sprintf("Group %s is not a share group.", id))
		default:
			d.ErrorCode, d.ErrorMessage = kerr.GroupIDNotFound.Code, kmsg.StringPtr(fmt.Sprintf("Group %s not found.", id))
		}
		resp.Groups = append(resp.Groups, d)
	}
	return resp
}

// describe fills d with the group: its state, epochs and assignor, and
// each member (ascending by id) with its subscription and its current
// assignment; topics are named by view (a topic deleted since is left out).
func (sg *shareGroup) describe(d *kmsg.ShareGroupDescribeResponseGroup, view TopicsView) {
	d.GroupState, d.GroupEpoch, d.AssignmentEpoch = sg.state(), sg.epoch, max(sg.assignmentEpoch, 0)
	d.Assignor = assignor.SimpleName
	for _, mid := range sg.memberIDs() {
		m := sg.members[mid]
		dm := kmsg.NewShareGroupDescribeResponseGroupMember()
		dm.MemberID, dm.RackID, dm.MemberEpoch = m.id, m.rackID, m.epoch
		dm.ClientID, dm.ClientHost = m.clientID, m.clientHost
		dm.SubscribedTopicNames = append([]string{}, m.topics...)
		dm.Assignment.TopicPartitions = []kmsg.ShareGroupDescribeResponseGroupMemberAssignmentTopicPartition{}
		for _, tp := range topicPartitionsOf(m.assigned) {
			name, ok := view.TopicName(tp.TopicID)
			if !ok {
				continue
			}
			t := kmsg.NewShareGroupDescribeResponseGroupMemberAssignmentTopicPartition()
			t.TopicID, t.Topic, t.Partitions = tp.TopicID, name, tp.Partitions
			dm.Assignment.TopicPartitions = append(dm.Assignment.TopicPartitions, t)
		}
		d.Members = append(d.Members, dm)
	}
}

// listed is the share group as ListGroups shows it, but for its id.
func (sg *shareGroup) listed() kmsg.ListGroupsResponseGroup {
	return kmsg.ListGroupsResponseGroup{ProtocolType: shareGroupType, GroupState: sg.state(), GroupType: shareGroupType}
}

// deleteShareGroup deletes an empty share group: its target epoch, state
// partitions and metadata tombstones (its members are gone already), and,
// once they are durable, the state of its share-partitions
// (DeleteShareState).
func (c *Coordinator) deleteShareGroup(id string, sg *shareGroup, res *runtime.Result) int16 {
	if len(sg.members) > 0 {
		return kerr.NonEmptyGroup.Code
	}
	state := sg.stateTopics
	w := shareWrite{id: id, sg: sg}
	w.write(shareTargetAssignmentMetadataKey(id), nil)
	if state != nil {
		w.write(shareStatePartitionMetadataKey(id), nil)
	}
	w.write(shareGroupMetadataKey(id), nil)
	c.applyShareWrite(&w, res)
	if len(state) > 0 {
		del := DeleteShareState{Group: id, Topics: map[base.TopicID][]int32{}}
		for tid, t := range state {
			del.Topics[tid] = slices.Clone(t.Partitions)
		}
		res.Effects = append(res.Effects, del)
	}
	return 0
}

// refuseShareGroupID answers a classic or consumer group request naming a
// share group as Kafka does (a group id is of one type), and reports
// whether it did. Requests that only read (OffsetFetch, DescribeGroups,
// ConsumerGroupDescribe, ListGroups) find no such group on their own;
// DeleteGroups deletes share groups too.
func (c *Coordinator) refuseShareGroupID(op runtime.Op, res *runtime.Result) bool {
	var id string
	code := kerr.GroupIDNotFound.Code
	switch req := op.Req.(type) {
	case *kmsg.JoinGroupRequest:
		if c.shares[req.Group] != nil {
			reply(res, op.Token, joinError(req, "", kerr.InconsistentGroupProtocol.Code))
			return true
		}
		return false
	case *kmsg.SyncGroupRequest:
		id, code = req.Group, kerr.UnknownMemberID.Code
	case *kmsg.HeartbeatRequest:
		id, code = req.Group, kerr.UnknownMemberID.Code
	case *kmsg.LeaveGroupRequest:
		id, code = req.Group, kerr.UnknownMemberID.Code
	case *kmsg.OffsetCommitRequest:
		id = req.Group
	case *kmsg.TxnOffsetCommitRequest:
		id = req.Group
	case *kmsg.OffsetDeleteRequest:
		id = req.Group
	case *kmsg.ConsumerGroupHeartbeatRequest:
		id = req.Group
	default:
		return false
	}
	if c.shares[id] == nil {
		return false
	}
	reply(res, op.Token, ErrorResponse(op.Req, code))
	return true
}
