package main

import (
	"context"
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"

	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metadata"
)

// plainUsersSet holds each SASL listener's current PLAIN users, which a
// change of this broker's dynamic listener.name.<listener>.plain.sasl.jaas.config
// replaces (Kafka's KIP-226, config.Broker.PlainUsersOf): authentications
// from then on check the new users; sessions already authenticated stay.
type plainUsersSet struct {
	logger    *slog.Logger
	mu        sync.Mutex // serialises apply
	listeners map[string]*atomic.Pointer[map[string]string]
}

func newPlainUsersSet(logger *slog.Logger) *plainUsersSet {
	return &plainUsersSet{logger: logger, listeners: map[string]*atomic.Pointer[map[string]string]{}}
}

// add starts tracking listener with the users b gives it, and returns
// where its sessions read them.
func (s *plainUsersSet) add(listener string, b *config.Broker) *atomic.Pointer[map[string]string] {
	s.mu.Lock()
	defer s.mu.Unlock()
	users := b.PlainUsersOf(listener)
	p := &atomic.Pointer[map[string]string]{}
	p.Store(&users)
	s.listeners[listener] = p
	return p
}

// apply gives each listener the users b has for it, logging a change.
func (s *plainUsersSet) apply(b *config.Broker) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, p := range s.listeners {
		users := b.PlainUsersOf(name)
		if maps.Equal(*p.Load(), users) {
			continue
		}
		p.Store(&users)
		s.logger.Info("listener's PLAIN users changed; new authentications check them", "listener", name, "users", len(users))
	}
}

// watch applies this broker's dynamic configs as they change.
func (s *plainUsersSet) watch(cfg *config.Broker, meta *metadata.Store) *imageWatcher {
	return watchImages(meta, func(_ context.Context, img *metadata.Image) {
		cluster, own := img.DynamicConfigsOf(cfg.NodeID)
		s.apply(cfg.WithDynamic(config.Dynamic{Default: cluster, Node: own}))
	})
}
