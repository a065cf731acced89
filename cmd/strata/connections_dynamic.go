package main

import (
	"context"
	"log/slog"
	"reflect"

	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/server"
)

// connLimitsWatcher applies the dynamic connection limits (max.connections,
// max.connections.per.ip and its overrides, max.connection.creation.rate, set with kafka-configs
// --entity-type brokers) to the listeners as the metadata image changes
// them. A change whose host names do not resolve, or that breaks the rule
// between the per-IP keys (a cluster-wide change checked on another broker
// against its own settings), is logged once and the limits in force stay
// until the configs change again.
type connLimitsWatcher struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// watchConnLimits starts applying the image's limits to limits, which
// were built from applied.
func watchConnLimits(cfg *config.Broker, meta *metadata.Store, limits *server.ConnLimits, applied config.ConnectionLimits, resolve resolveHost, logger *slog.Logger) *connLimitsWatcher {
	ctx, cancel := context.WithCancel(context.Background())
	w := &connLimitsWatcher{cancel: cancel, done: make(chan struct{})}
	images, stopImages := meta.Watch()
	go func() {
		defer close(w.done)
		defer stopImages()
		var refused *config.ConnectionLimits // the last change not applied
		for {
			select {
			case <-ctx.Done():
				return
			case <-images:
			}
			next, err := currentConnectionLimits(cfg, meta.Image())
			if err != nil {
				logger.Error("dynamic connection limits not applied; the previous limits stay", "err", err)
				continue
			}
			if reflect.DeepEqual(next, applied) || refused != nil && reflect.DeepEqual(next, *refused) {
				continue
			}
			sc, err := serverConnLimits(ctx, next, creationBurst(cfg), resolve)
			if err == nil {
				err = limits.Update(sc)
			}
			if err != nil {
				if ctx.Err() == nil {
					logger.Error("dynamic connection limits not applied; the previous limits stay", "err", err)
					refused = &next
				}
				continue
			}
			applied, refused = next, nil
			logger.Info("changed connection limits", "max.connections", next.Max,
				"max.connections.per.ip", next.MaxPerIP, "max.connections.per.ip.overrides", next.PerIPOverrides,
				"max.connection.creation.rate", next.MaxCreationRate)
		}
	}()
	return w
}

// close stops the watcher and waits for it.
func (w *connLimitsWatcher) close() {
	w.cancel()
	<-w.done
}
