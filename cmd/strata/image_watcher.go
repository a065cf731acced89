package main

import (
	"context"

	"github.com/strata-broker/strata/internal/metadata"
)

// imageWatcher runs a function with each new metadata image, for settings
// applied where they are used as the quorum changes them (dynamic
// connection limits, listener keystores).
type imageWatcher struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// watchImages calls apply with meta's image at once (a change may have
// landed since the caller last read one) and after every new one, until
// close. apply's context is cancelled by close.
func watchImages(meta *metadata.Store, apply func(ctx context.Context, img *metadata.Image)) *imageWatcher {
	ctx, cancel := context.WithCancel(context.Background())
	w := &imageWatcher{cancel: cancel, done: make(chan struct{})}
	images, stopImages := meta.Watch()
	go func() {
		defer close(w.done)
		defer stopImages()
		for {
			apply(ctx, meta.Image())
			select {
			case <-ctx.Done():
				return
			case <-images:
			}
		}
	}()
	return w
}

// close stops the watcher and waits for it.
func (w *imageWatcher) close() {
	w.cancel()
	<-w.done
}
