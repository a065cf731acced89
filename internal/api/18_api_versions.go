package api

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ApiVersions: v0-4. The answer lists exactly the registered versions of
// the APIs the config leaves on (on the controller listener, the
// controller's APIs among them: controller_listener.go), and (v3+) the
// features (features.go).
func init() { register(18, 0, 4, (*Handler).handleAPIVersions) }

func (h *Handler) handleAPIVersions(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.ApiVersionsRequest)
	resp := r.ResponseKind().(*kmsg.ApiVersionsResponse)
	if req.Version >= 3 {
		// Client metrics subscriptions match on these (KIP-714).
		h.software.set(ctx, req.ConnID, software{name: r.ClientSoftwareName, version: r.ClientSoftwareVersion})
	}
	if !h.Supported(req.Key, req.Version) {
		// Kafka answers an unsupported ApiVersions at v0 with the error and
		// its own range, so the client can retry at a version both know.
		resp.SetVersion(0)
		resp.ErrorCode = kerr.UnsupportedVersion.Code
	}
	for _, reg := range registrations() {
		if !h.servedOn(req, reg.key) {
			continue
		}
		k := kmsg.NewApiVersionsResponseApiKey()
		k.ApiKey, k.MinVersion, k.MaxVersion = reg.key, reg.min, reg.max
		resp.ApiKeys = append(resp.ApiKeys, k)
	}
	addFeatures(resp, h.opts.Meta.Image())
	return done(resp)
}
