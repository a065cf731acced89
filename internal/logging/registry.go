package logging

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
)

// Registry holds the broker's loggers and their levels. It is safe for
// concurrent use; a log call reads its logger's level with one atomic
// load.
type Registry struct {
	out slog.Handler // where every logger writes, letting every level through

	mu struct {
		sync.Mutex
		own    map[string]slog.Level // the levels set; always the root's
		levels map[string]*atomic.Int64
	}
}

// New returns a registry whose loggers write to out, every logger at
// level root until told otherwise. out's own level should let through
// everything a logger may be set to (MostVerbose).
func New(out slog.Handler, root slog.Level) *Registry {
	r := &Registry{out: out}
	r.mu.own = map[string]slog.Level{Root: root}
	r.mu.levels = map[string]*atomic.Int64{}
	return r
}

// Logger returns the logger called name ("strata.tier"), created at its
// first use, with its ancestors ("strata"), at the level it inherits; Root
// names the root logger. Its records carry logger=name (none for the
// root's).
func (r *Registry) Logger(name string) *slog.Logger {
	r.mu.Lock()
	defer r.mu.Unlock()
	level, ok := r.mu.levels[name]
	if !ok {
		for at := name; at != Root; at = parent(at) {
			if _, ok := r.mu.levels[at]; !ok {
				r.mu.levels[at] = new(atomic.Int64)
			}
		}
		level = r.mu.levels[name]
		if level == nil { // the root's
			level = new(atomic.Int64)
			r.mu.levels[Root] = level
		}
		r.resolveLocked()
	}
	var out slog.Handler = r.out
	if name != Root {
		out = out.WithAttrs([]slog.Attr{slog.String("logger", name)})
	}
	return slog.New(&leveled{out: out, level: level})
}

// Exists says whether a logger called name has been created (the root
// always has).
func (r *Registry) Exists(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.mu.levels[name]
	return ok || name == Root
}

// Levels are every logger's level by name, the root's included, in
// Kafka's names.
func (r *Registry) Levels() map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]string{Root: LevelName(r.mu.own[Root])}
	for name, level := range r.mu.levels {
		out[name] = LevelName(slog.Level(level.Load()))
	}
	return out
}

// SetLevel gives the logger called name, which must exist, a level of
// its own (one of Kafka's names); the loggers below it without one of
// their own follow.
func (r *Registry) SetLevel(name, level string) error {
	l, err := ParseLevel(level)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.existsLocked(name); err != nil {
		return err
	}
	r.mu.own[name] = l
	r.resolveLocked()
	return nil
}

// UnsetLevel takes away the level of its own of the logger called name,
// which must exist and not be the root: it logs at its ancestors' level
// again.
func (r *Registry) UnsetLevel(name string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if name == Root {
		return fmt.Errorf("the root logger's level cannot be removed; set it instead")
	}
	if err := r.existsLocked(name); err != nil {
		return err
	}
	delete(r.mu.own, name)
	r.resolveLocked()
	return nil
}

func (r *Registry) existsLocked(name string) error {
	if _, ok := r.mu.levels[name]; !ok && name != Root {
		return fmt.Errorf("logger %s does not exist; the loggers are %v", name, r.namesLocked())
	}
	return nil
}

// namesLocked are the loggers' names, the root's first, then sorted.
func (r *Registry) namesLocked() []string {
	names := []string{Root}
	for _, name := range slices.Sorted(maps.Keys(r.mu.levels)) {
		if name != Root {
			names = append(names, name)
		}
	}
	return names
}

// resolveLocked stores each logger's effective level where its log calls
// read it.
func (r *Registry) resolveLocked() {
	names := slices.Collect(maps.Keys(r.mu.levels))
	for name, l := range effectiveLevels(names, r.mu.own) {
		if level, ok := r.mu.levels[name]; ok {
			level.Store(int64(l))
		}
	}
}

// leveled passes on the records at or above a logger's current level.
type leveled struct {
	out   slog.Handler
	level *atomic.Int64
}

func (h *leveled) Enabled(ctx context.Context, l slog.Level) bool {
	return int64(l) >= h.level.Load() && h.out.Enabled(ctx, l)
}

func (h *leveled) Handle(ctx context.Context, rec slog.Record) error {
	return h.out.Handle(ctx, rec)
}

func (h *leveled) WithAttrs(as []slog.Attr) slog.Handler {
	return &leveled{out: h.out.WithAttrs(as), level: h.level}
}

func (h *leveled) WithGroup(name string) slog.Handler {
	return &leveled{out: h.out.WithGroup(name), level: h.level}
}
