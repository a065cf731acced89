package api

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/sasl"
)

// AlterUserScramCredentials: v0 (KIP-554). The client sends a salt and a
// salted password (never the password); the broker stores the derived
// StoredKey and ServerKey in the metadata quorum. Each user's changes apply
// together or not at all, and each user gets one result: a mechanism other
// than SCRAM-SHA-256/512 is UNSUPPORTED_SASL_MECHANISM, a user/mechanism
// named twice DUPLICATE_RESOURCE, an empty user or iterations outside
// [4096, 16384] UNACCEPTABLE_CREDENTIAL, deleting a credential that does
// not exist RESOURCE_NOT_FOUND — Kafka's rules. Needs ALTER on the
// cluster (every user CLUSTER_AUTHORIZATION_FAILED otherwise).
func init() { register(51, 0, 0, (*Handler).handleAlterUserScramCredentials) }

// scramAlteration is one user's part of an AlterUserScramCredentials
// request, or the error that refuses it.
type scramAlteration struct {
	user      string
	upserts   map[string]metadata.ScramCredential
	deletions []string
	code      int16
	msg       string
}

func (a *scramAlteration) fail(code int16, msg string) {
	if a.code == 0 {
		a.code, a.msg = code, msg
	}
}

// planScramAlterations groups the request by user, in the order users first
// appear, and checks everything that does not need the current credentials.
func planScramAlterations(r *kmsg.AlterUserSCRAMCredentialsRequest) []*scramAlteration {
	var order []*scramAlteration
	byUser := map[string]*scramAlteration{}
	alteration := func(user string) *scramAlteration {
		a, ok := byUser[user]
		if !ok {
			a = &scramAlteration{user: user, upserts: map[string]metadata.ScramCredential{}}
			byUser[user] = a
			order = append(order, a)
		}
		return a
	}
	named := map[[2]string]bool{} // user, mechanism
	mechanism := func(a *scramAlteration, id int8) (string, bool) {
		name, ok := scramMechanisms[id]
		switch {
		case a.user == "":
			a.fail(kerr.UnacceptableCredential.Code, "Username must not be empty")
		case !ok:
			a.fail(kerr.UnsupportedSaslMechanism.Code, "Unknown SCRAM mechanism")
		case named[[2]string{a.user, name}]:
			a.fail(kerr.DuplicateResource.Code, "A user credential cannot be altered twice in the same request")
		default:
			named[[2]string{a.user, name}] = true
			return name, true
		}
		return "", false
	}
	for _, d := range r.Deletions {
		a := alteration(d.Name)
		if name, ok := mechanism(a, d.Mechanism); ok {
			a.deletions = append(a.deletions, name)
		}
	}
	for _, u := range r.Upsertions {
		a := alteration(u.Name)
		name, ok := mechanism(a, u.Mechanism)
		if !ok {
			continue
		}
		cred, err := sasl.NewScramCredential(name, u.Salt, u.SaltedPassword, u.Iterations)
		if err != nil {
			a.fail(kerr.UnacceptableCredential.Code, err.Error())
			continue
		}
		a.upserts[name] = metadata.ScramCredential{Salt: cred.Salt, StoredKey: cred.StoredKey, ServerKey: cred.ServerKey, Iterations: cred.Iterations}
	}
	return order
}

func (h *Handler) handleAlterUserScramCredentials(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.AlterUserSCRAMCredentialsRequest)
	resp := r.ResponseKind().(*kmsg.AlterUserSCRAMCredentialsResponse)
	denied := !h.allowedCluster(req, acl.OpAlter)
	for _, a := range planScramAlterations(r) {
		if denied {
			a.code, a.msg = clusterDenied, ""
		}
		if a.code == 0 {
			if err := h.opts.Meta.AlterScramCredentials(ctx, a.user, a.upserts, a.deletions); err != nil {
				a.code, a.msg = scramAlterError(err)
			}
		}
		res := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
		res.User, res.ErrorCode, res.ErrorMessage = a.user, a.code, strPtr(a.msg)
		resp.Results = append(resp.Results, res)
	}
	return done(resp)
}

// scramAlterError maps the quorum's refusal of one user's alteration.
func scramAlterError(err error) (int16, string) {
	switch {
	case errors.Is(err, metadata.ErrScramCredentialNotFound):
		return kerr.ResourceNotFound.Code, "Attempt to delete a user credential that does not exist"
	case errors.Is(err, metadata.ErrUnsupportedScramMechanism):
		return kerr.UnsupportedSaslMechanism.Code, err.Error()
	case errors.Is(err, metadata.ErrDuplicateScramMechanism):
		return kerr.DuplicateResource.Code, err.Error()
	case errors.Is(err, metadata.ErrInvalidScramCredential):
		return kerr.UnacceptableCredential.Code, err.Error()
	}
	code, msg := errorCode(err)
	return code, msg
}
