package api

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/quota"
)

// AlterClientQuotas: v0-1 (KIP-546). Sets and removes the client quotas of
// users, client ids and users' client ids (each a name or the default),
// and of client addresses (ip entities, KIP-612: an address, a host name
// that resolves, or the default), stored in the metadata quorum and
// enforced by every broker from the next image. Strata enforces
// producer_byte_rate, consumer_byte_rate, controller_mutation_rate
// (mutation_quota.go) and request_percentage (request_quota.go) on users
// and client ids, connection_creation_rate on ip entities (the listeners'
// accept loops). Each entry gets its own result: a malformed entity, a
// host name that does not resolve, an unknown key or one of the other kind
// of entity, a bad value or a key given twice is INVALID_REQUEST; the
// valid entries are applied together (validate_only applies nothing).
// Removing a key that is not set is no error, as in Kafka. Needs
// ALTER_CONFIGS on the cluster.
func init() { register(49, 0, 1, (*Handler).handleAlterClientQuotas) }

func (h *Handler) handleAlterClientQuotas(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.AlterClientQuotasRequest)
	resp := r.ResponseKind().(*kmsg.AlterClientQuotasResponse)
	denied := !h.allowedCluster(req, acl.OpAlterConfigs)
	resp.Entries = make([]kmsg.AlterClientQuotasResponseEntry, len(r.Entries))
	var valid []metadata.ClientQuotaAlteration
	var validAt []int
	seen := map[quota.Entity]bool{}
	for i, e := range r.Entries {
		out := &resp.Entries[i]
		*out = kmsg.NewAlterClientQuotasResponseEntry()
		for _, p := range e.Entity {
			oe := kmsg.NewAlterClientQuotasResponseEntryEntity()
			oe.Type, oe.Name = p.Type, p.Name
			out.Entity = append(out.Entity, oe)
		}
		if denied {
			out.ErrorCode = clusterDenied
			continue
		}
		alt, err := clientQuotaAlteration(e)
		if err == nil {
			err = resolvableIP(ctx, alt.Entity)
		}
		if err == nil && seen[alt.Entity] {
			err = fmt.Errorf("entity %s is altered twice in the request", alt.Entity)
		}
		if err != nil {
			out.ErrorCode, out.ErrorMessage = kerr.InvalidRequest.Code, strPtr(err.Error())
			continue
		}
		seen[alt.Entity] = true
		valid = append(valid, alt)
		validAt = append(validAt, i)
	}
	if len(valid) == 0 || r.ValidateOnly {
		return done(resp)
	}
	if err := h.opts.Meta.AlterClientQuotas(ctx, valid); err != nil {
		code, msg := errorCode(err)
		if errors.Is(err, metadata.ErrInvalidClientQuota) {
			code, msg = kerr.InvalidRequest.Code, err.Error()
		}
		for _, i := range validAt {
			resp.Entries[i].ErrorCode, resp.Entries[i].ErrorMessage = code, strPtr(msg)
		}
		return done(resp)
	}
	h.logger.Info("altered client quotas", "entities", len(valid), "principal", req.Principal)
	return done(resp)
}

// clientQuotaAlteration checks one entry of the request and turns it into
// its change.
func clientQuotaAlteration(e kmsg.AlterClientQuotasRequestEntry) (metadata.ClientQuotaAlteration, error) {
	parts := make([]quota.WirePart, len(e.Entity))
	for i, p := range e.Entity {
		parts[i] = quota.WirePart{Type: p.Type, Name: p.Name}
	}
	entity, err := quota.ParseEntity(parts)
	if err != nil {
		return metadata.ClientQuotaAlteration{}, err
	}
	alt := metadata.ClientQuotaAlteration{Entity: entity, Set: map[string]float64{}}
	if len(e.Ops) == 0 {
		return metadata.ClientQuotaAlteration{}, fmt.Errorf("no quota to set or remove for %s", entity)
	}
	named := map[string]bool{}
	for _, op := range e.Ops {
		if err := quota.ValidateKey(entity, op.Key); err != nil {
			return metadata.ClientQuotaAlteration{}, err
		}
		if named[op.Key] {
			return metadata.ClientQuotaAlteration{}, fmt.Errorf("quota %s is altered twice for %s", op.Key, entity)
		}
		named[op.Key] = true
		if op.Remove {
			alt.Remove = append(alt.Remove, op.Key)
			continue
		}
		if err := quota.ValidateNewValue(op.Key, op.Value); err != nil {
			return metadata.ClientQuotaAlteration{}, err
		}
		alt.Set[op.Key] = op.Value
	}
	// The quorum's own checks too (names it cannot store), so that one
	// bad entry does not fail the others with it.
	return alt, metadata.ValidateClientQuotaAlteration(alt)
}

// ipLookupTimeout bounds the lookup of an ip entity's host name.
const ipLookupTimeout = 5 * time.Second

// resolvableIP checks that the host name of an ip entity resolves, as
// Kafka's isValidIpEntity (InetAddress.getByName) does; an address or a
// default needs no lookup. Each broker resolves the name again when it
// applies the quota.
func resolvableIP(ctx context.Context, e quota.Entity) error {
	if e.IP.Kind != quota.Named || quota.IsIPAddress(e.IP.Name) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, ipLookupTimeout)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", e.IP.Name)
	if err == nil && len(addrs) == 0 {
		err = errors.New("no address")
	}
	if err != nil {
		return fmt.Errorf("%s is not a valid IP or resolvable host (%v); give the client's address", e.IP.Name, err)
	}
	return nil
}
