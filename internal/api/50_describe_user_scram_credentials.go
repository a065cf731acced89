package api

import (
	"context"
	"sort"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
)

// DescribeUserScramCredentials: v0 (KIP-554). Lists each user's SCRAM
// mechanisms and iterations, never salts or keys. No users (null or empty)
// describes every user; a user named twice gets DUPLICATE_RESOURCE, an
// unknown one RESOURCE_NOT_FOUND, as in Kafka. Needs DESCRIBE on the
// cluster.
func init() { register(50, 0, 0, (*Handler).handleDescribeUserScramCredentials) }

func (h *Handler) handleDescribeUserScramCredentials(_ context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.DescribeUserSCRAMCredentialsRequest)
	resp := r.ResponseKind().(*kmsg.DescribeUserSCRAMCredentialsResponse)
	if !h.allowedCluster(req, acl.OpDescribe) {
		resp.ErrorCode = clusterDenied
		return done(resp)
	}
	img := h.opts.Meta.Image()
	users := make([]string, 0, len(r.Users))
	for _, u := range r.Users {
		users = append(users, u.Name)
	}
	describeAll := len(users) == 0
	if describeAll {
		users = img.ScramUsers()
	}
	seen := make(map[string]int, len(users))
	for _, u := range users {
		seen[u]++
	}
	for _, user := range users {
		if seen[user] == 0 {
			continue // a duplicate, answered once already
		}
		res := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
		res.User = user
		mechanisms := img.ScramMechanisms(user)
		switch {
		case seen[user] > 1:
			res.ErrorCode = kerr.DuplicateResource.Code
			res.ErrorMessage = strPtr("Cannot describe SCRAM credentials for the same user twice in a single request: " + user)
		case len(mechanisms) == 0:
			res.ErrorCode = kerr.ResourceNotFound.Code
			res.ErrorMessage = strPtr("Attempt to describe nonexistent user: " + user)
		default:
			res.CredentialInfos = credentialInfos(mechanisms)
		}
		resp.Results = append(resp.Results, res)
		seen[user] = 0
	}
	return done(resp)
}

// credentialInfos lists mechanism → iterations in mechanism id order.
func credentialInfos(mechanisms map[string]int32) []kmsg.DescribeUserSCRAMCredentialsResponseResultCredentialInfo {
	out := make([]kmsg.DescribeUserSCRAMCredentialsResponseResultCredentialInfo, 0, len(mechanisms))
	for name, iterations := range mechanisms {
		info := kmsg.NewDescribeUserSCRAMCredentialsResponseResultCredentialInfo()
		info.Mechanism, info.Iterations = scramMechanismID(name), iterations
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Mechanism < out[j].Mechanism })
	return out
}
