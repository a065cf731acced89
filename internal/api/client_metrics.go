package api

import (
	"maps"
	"sync"

	"github.com/strata-broker/strata/internal/clientmetrics"
	"github.com/strata-broker/strata/internal/metadata"
)

// clientSubscriptions gives the client metrics registry the subscriptions
// of the newest image it has seen, parsing them again only when the
// image's CLIENT_METRICS resources changed.
type clientSubscriptions struct {
	mu   sync.Mutex
	last map[string]map[string]string // the configs last given
	set  bool
}

// sync gives reg img's subscriptions if they changed since the last call.
// A subscription that does not parse (written before a stricter check)
// is left out, as Kafka skips one it cannot use.
func (c *clientSubscriptions) sync(reg *clientmetrics.Registry, img *metadata.Image) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.set && maps.EqualFunc(c.last, img.ClientMetricsConfigs, maps.Equal) {
		return
	}
	subs := make(map[string]clientmetrics.Subscription, len(img.ClientMetricsConfigs))
	for name, configs := range img.ClientMetricsConfigs {
		if s, err := clientmetrics.ParseSubscription(name, configs); err == nil {
			subs[name] = s
		}
	}
	reg.SetSubscriptions(subs)
	c.last, c.set = img.ClientMetricsConfigs, true
}

// clientSelectors is what a client metrics subscription can match a
// request's client on.
func (h *Handler) clientSelectors(req *Request) clientmetrics.Selectors {
	sw := h.software.get(req.ConnID)
	return clientmetrics.Selectors{ClientID: deref(req.ClientID), SoftwareName: sw.name, SoftwareVersion: sw.version, Source: req.ClientAddr}
}
