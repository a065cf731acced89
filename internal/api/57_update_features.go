package api

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/metadata"
)

// UpdateFeatures: v0-2 (KIP-584, `kafka-features upgrade|downgrade`),
// ALTER on the cluster. The features are those of metadata.SupportedFeatures
// (transaction.version). As Kafka's controller decides: the whole request
// is refused with the first failure (v0-1 repeat it for every feature),
// or applied: a feature named twice is INVALID_REQUEST; an unknown one, a
// level outside the supported range, or a lower level without a downgrade
// (v0 AllowDowngrade, v1+ UpgradeType safe or unsafe) is
// INVALID_UPDATE_VERSION. Level 0 of transaction.version is Kafka's
// "disabled", which behaves as 1 here.
func init() { register(57, 0, 2, (*Handler).handleUpdateFeatures) }

// Kafka's FeatureUpdate.UpgradeType.
const (
	upgradeOnly     int8 = 1
	safeDowngrade   int8 = 2
	unsafeDowngrade int8 = 3
)

func (h *Handler) handleUpdateFeatures(ctx context.Context, req *Request) Reply {
	r := req.Body.(*kmsg.UpdateFeaturesRequest)
	resp := r.ResponseKind().(*kmsg.UpdateFeaturesResponse)
	code, msg := kerr.ClusterAuthorizationFailed.Code, ""
	if h.allowedCluster(req, acl.OpAlter) {
		code, msg = h.updateFeatures(ctx, r)
	}
	resp.ErrorCode = code
	if msg != "" {
		resp.ErrorMessage = &msg
	}
	if r.Version <= 1 {
		for _, u := range r.FeatureUpdates {
			res := kmsg.NewUpdateFeaturesResponseResult()
			res.Feature, res.ErrorCode, res.ErrorMessage = u.Feature, code, resp.ErrorMessage
			resp.Results = append(resp.Results, res)
		}
	}
	return done(resp)
}

// updateFeatures checks every update against the current image and, unless
// the request only validates, applies them one by one.
func (h *Handler) updateFeatures(ctx context.Context, r *kmsg.UpdateFeaturesRequest) (int16, string) {
	img := h.opts.Meta.Image()
	seen := map[string]bool{}
	for _, u := range r.FeatureUpdates {
		if seen[u.Feature] {
			return kerr.InvalidRequest.Code, fmt.Sprintf("Feature %s appears more than once in the request.", u.Feature)
		}
		seen[u.Feature] = true
		upgradeType := u.UpgradeType
		if r.Version == 0 {
			upgradeType = upgradeOnly
			if u.AllowDowngrade {
				upgradeType = safeDowngrade
			}
		}
		if msg := featureUpdateRefusal(u.Feature, u.MaxVersionLevel, img.FeatureLevel(u.Feature), upgradeType); msg != "" {
			return kerr.InvalidUpdateVersion.Code, msg
		}
	}
	if r.ValidateOnly {
		return 0, ""
	}
	for _, u := range r.FeatureUpdates {
		if err := h.opts.Meta.SetFeature(ctx, u.Feature, u.MaxVersionLevel); err != nil {
			return controllerAnswerCode(err)
		}
		h.logger.Info("finalized a feature level", "feature", u.Feature, "level", u.MaxVersionLevel)
	}
	return 0, ""
}

// featureUpdateRefusal is why feature may not go from level current to
// level (Kafka's FeatureControlManager.updateFeature), "" when it may.
func featureUpdateRefusal(feature string, level, current int16, upgradeType int8) string {
	r, ok := metadata.SupportedFeatures[feature]
	switch {
	case !ok:
		return fmt.Sprintf("Feature %s is not supported; the features are %s.", feature, strings.Join(slices.Sorted(maps.Keys(metadata.SupportedFeatures)), ", "))
	case upgradeType < upgradeOnly || upgradeType > unsafeDowngrade:
		return fmt.Sprintf("Unknown upgrade type %d for feature %s.", upgradeType, feature)
	case level < r.Min || level > r.Max:
		return fmt.Sprintf("Feature %s only supports levels %d-%d, not %d.", feature, r.Min, r.Max, level)
	case level < current && upgradeType == upgradeOnly:
		return fmt.Sprintf("Cannot downgrade %s from %d to %d without setting the upgrade type to safe or unsafe downgrade.", feature, current, level)
	}
	return ""
}
