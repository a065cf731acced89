package api

import (
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/quota"
)

// DescribeClientQuotas: v0-1 (KIP-546). Lists the client quotas of the
// entities the filter selects, as Kafka's ClientQuotasImage.describe: each
// exact or default component must be the entity's part of that type, each
// specified component a part it has, and strict also wants no other part.
// A malformed filter is INVALID_REQUEST, an unknown entity type
// UNSUPPORTED_VERSION, with Kafka's messages; an ip component with a user
// or client-id one is INVALID_REQUEST. Needs DESCRIBE_CONFIGS on the
// cluster.
func init() { register(48, 0, 1, (*Handler).handleDescribeClientQuotas) }

func (h *Handler) handleDescribeClientQuotas(_ context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.DescribeClientQuotasRequest)
	resp := r.ResponseKind().(*kmsg.DescribeClientQuotasResponse)
	if !h.allowedCluster(req, acl.OpDescribeConfigs) {
		resp.ErrorCode = clusterDenied
		return done(resp)
	}
	comps := make([]quota.WireComponent, len(r.Components))
	for i, c := range r.Components {
		comps[i] = quota.WireComponent{Type: c.EntityType, Match: int8(c.MatchType), Name: c.Match}
	}
	f, err := quota.ParseFilter(comps, r.Strict)
	if err != nil {
		resp.ErrorCode = kerr.InvalidRequest.Code
		if errors.Is(err, quota.ErrUnsupportedEntityType) {
			resp.ErrorCode = kerr.UnsupportedVersion.Code
		}
		resp.ErrorMessage = strPtr(err.Error())
		return done(resp)
	}
	img := h.opts.Meta.Image()
	for _, e := range img.ClientQuotaEntities() {
		if !f.Matches(e) {
			continue
		}
		entry := kmsg.NewDescribeClientQuotasResponseEntry()
		for _, p := range e.Wire() {
			ee := kmsg.NewDescribeClientQuotasResponseEntryEntity()
			ee.Type, ee.Name = p.Type, p.Name
			entry.Entity = append(entry.Entity, ee)
		}
		values := img.ClientQuotas(e)
		for _, k := range slices.Sorted(maps.Keys(values)) {
			v := kmsg.NewDescribeClientQuotasResponseEntryValue()
			v.Key, v.Value = k, values[k]
			entry.Values = append(entry.Values, v)
		}
		resp.Entries = append(resp.Entries, entry)
	}
	return done(resp)
}
