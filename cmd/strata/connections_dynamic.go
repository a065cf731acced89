package main

import (
	"context"
	"log/slog"
	"maps"
	"reflect"

	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/quota"
	"github.com/strata-broker/strata/internal/server"
)

// connLimitsWatcher applies the dynamic connection limits (max.connections,
// max.connections.per.ip and its overrides, max.connection.creation.rate, set with kafka-configs
// --entity-type brokers) and the connection_creation_rate quotas of ip
// entities (kafka-configs --entity-type ips) to the listeners as the
// metadata image changes them. A change whose host names do not resolve, or that breaks the rule
// between the per-IP keys (a cluster-wide change checked on another broker
// against its own settings), is logged once and the limits in force stay;
// it is tried again with every new image (a name may resolve later).
type connLimitsWatcher = imageWatcher

// watchConnLimits starts applying the image's limits to limits, which
// were built from applied. It looks at the image once at once (a change
// may have landed since applied was read) and after every new one.
func watchConnLimits(cfg *config.Broker, meta *metadata.Store, limits *server.ConnLimits, applied config.ConnectionLimits, resolve resolveHost, logger *slog.Logger) *connLimitsWatcher {
	a := &connLimitsApplier{cfg: cfg, limits: limits, applied: applied, resolve: resolve, logger: logger}
	return watchImages(meta, a.apply)
}

// connLimitsApplier applies the connection limits of successive images,
// logging each change and each failure once.
type connLimitsApplier struct {
	cfg     *config.Broker
	limits  *server.ConnLimits
	applied config.ConnectionLimits
	// appliedIP are the ip entities' quotas applied (nil: none).
	appliedIP map[quota.Part]int
	resolve   resolveHost
	logger    *slog.Logger
	failed    string // the last failure logged; "" after a success
}

func (a *connLimitsApplier) apply(ctx context.Context, img *metadata.Image) {
	next, err := currentConnectionLimits(a.cfg, img)
	nextIP := img.IPConnectionRates()
	if err == nil && reflect.DeepEqual(next, a.applied) && maps.Equal(nextIP, a.appliedIP) {
		a.failed = ""
		return
	}
	if err == nil {
		var sc server.ConnLimitsConfig
		if sc, err = serverConnLimits(ctx, next, creationBurst(a.cfg), a.resolve); err == nil {
			sc.IPThrottleMax = a.cfg.QuotaWindowSize
			sc.IPCreationRates, sc.DefaultIPCreationRate, err = ipQuotaRates(ctx, nextIP, a.resolve)
		}
		if err == nil {
			err = a.limits.Update(sc)
		}
	}
	switch {
	case err == nil:
		a.applied, a.appliedIP, a.failed = next, nextIP, ""
		a.logger.Info("changed connection limits", "max.connections", next.Max,
			"max.connections.per.ip", next.MaxPerIP, "max.connections.per.ip.overrides", next.PerIPOverrides,
			"max.connection.creation.rate", next.MaxCreationRate, "ip_connection_creation_rate_quotas", len(nextIP))
	case ctx.Err() != nil: // stopping: a lookup was cut short
	case err.Error() != a.failed:
		a.failed = err.Error()
		a.logger.Error("dynamic connection limits not applied; the previous limits stay", "err", err)
	}
}
