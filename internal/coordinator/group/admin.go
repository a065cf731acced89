package group

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/coordinator/runtime"
)

// classicGroupType is the ListGroups v5+ type of every group here.
const classicGroupType = "classic"

func (c *Coordinator) describeGroups(req *kmsg.DescribeGroupsRequest) *kmsg.DescribeGroupsResponse {
	resp := req.ResponseKind().(*kmsg.DescribeGroupsResponse)
	for _, id := range req.Groups {
		resp.Groups = append(resp.Groups, c.describeGroup(req.Version, id))
	}
	return resp
}

// describeGroup follows Kafka: protocol, member metadata and assignments
// are shown only for a Stable group; a missing group, or a consumer-protocol
// one, is Dead (before v6) or GROUP_ID_NOT_FOUND (v6+, KIP-1043).
func (c *Coordinator) describeGroup(version int16, id string) kmsg.DescribeGroupsResponseGroup {
	out := kmsg.NewDescribeGroupsResponseGroup()
	out.Group = id
	g, ok := c.groups[id]
	if !ok || g.consumer != nil {
		out.State = stateDead.String()
		if version >= 6 {
			out.ErrorCode = kerr.GroupIDNotFound.Code
			if ok {
				out.ErrorMessage = kmsg.StringPtr(fmt.Sprintf("Group %s is not a classic group.", id))
			}
		}
		return out
	}
	out.State = g.state.String()
	out.ProtocolType = g.protocolType
	stable := g.state == stateStable
	if stable {
		out.Protocol = g.protocol
	}
	for _, mid := range g.order {
		m := g.members[mid]
		dm := kmsg.DescribeGroupsResponseGroupMember{
			MemberID: m.id, InstanceID: m.instanceID, ClientID: m.clientID, ClientHost: m.clientHost,
			ProtocolMetadata: []byte{}, MemberAssignment: []byte{},
		}
		if stable {
			meta, _ := m.metadataFor(g.protocol)
			dm.ProtocolMetadata = nonNil(meta)
			dm.MemberAssignment = nonNil(m.assignment)
		}
		out.Members = append(out.Members, dm)
	}
	return out
}

func (c *Coordinator) listGroups(req *kmsg.ListGroupsRequest) *kmsg.ListGroupsResponse {
	resp := req.ResponseKind().(*kmsg.ListGroupsResponse)
	// Filters compare case-insensitively, as Kafka's.
	wanted := func(filter []string, value string) bool {
		return len(filter) == 0 || slices.ContainsFunc(filter, func(f string) bool { return strings.EqualFold(f, value) })
	}
	listed := map[string]kmsg.ListGroupsResponseGroup{}
	for id, g := range c.groups {
		listed[id] = g.listed()
	}
	for id, sg := range c.shares {
		listed[id] = sg.listed()
	}
	for _, id := range slices.Sorted(maps.Keys(listed)) {
		l := listed[id]
		if wanted(req.StatesFilter, l.GroupState) && wanted(req.TypesFilter, l.GroupType) {
			l.Group = id
			resp.Groups = append(resp.Groups, l)
		}
	}
	return resp
}

// listed is the group as ListGroups shows it, but for its id.
func (g *group) listed() kmsg.ListGroupsResponseGroup {
	if g.consumer != nil {
		return kmsg.ListGroupsResponseGroup{ProtocolType: consumerProtocolType, GroupState: string(g.consumer.state()), GroupType: consumerGroupType}
	}
	return kmsg.ListGroupsResponseGroup{ProtocolType: g.protocolType, GroupState: g.state.String(), GroupType: classicGroupType}
}

// deleteGroups removes empty groups with their offsets (committed and
// pending), writing tombstones.
func (c *Coordinator) deleteGroups(op runtime.Op, req *kmsg.DeleteGroupsRequest, res *runtime.Result) {
	resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
	for _, id := range req.Groups {
		rg := kmsg.NewDeleteGroupsResponseGroup()
		rg.Group = id
		rg.ErrorCode = c.deleteGroup(id, res)
		resp.Groups = append(resp.Groups, rg)
	}
	reply(res, op.Token, resp)
}

func (c *Coordinator) deleteGroup(id string, res *runtime.Result) int16 {
	if id == "" {
		return kerr.InvalidGroupID.Code
	}
	if sg := c.shares[id]; sg != nil {
		return c.deleteShareGroup(id, sg, res)
	}
	g, ok := c.groups[id]
	if !ok {
		return kerr.GroupIDNotFound.Code
	}
	if g.state != stateEmpty || g.consumer != nil && len(g.consumer.members) > 0 {
		return kerr.NonEmptyGroup.Code
	}
	// As Kafka's deleteAllOffsets: one tombstone per partition with a
	// committed or a pending transactional offset; the pending ones are
	// dropped with the group.
	for _, tp := range g.offsetPartitions() {
		c.writeOffsetTombstone(g, tp, res)
	}
	if g.consumer != nil {
		c.dropConsumerState(g, res)
	} else {
		c.writeGroupTombstone(g, res)
	}
	delete(c.groups, id)
	return 0
}
