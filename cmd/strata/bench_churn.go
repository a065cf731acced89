package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kadm"
)

// benchMaxChurnPartitions bounds --churn-partitions.
const benchMaxChurnPartitions = 1000

// topicChurn creates and deletes a topic of partitions partitions, over
// and over, while an e2e run measures another topic: what a cluster shared
// by many teams sees, where creating a topic must not stall the producers
// of the others. Stop ends it and reports the cycles and the first error.
type topicChurn struct {
	cancel context.CancelFunc
	done   sync.WaitGroup
	cycles int64
	err    error
}

// startTopicChurn begins churning topics named prefix-churn-N through
// admin; it runs until stop.
func startTopicChurn(ctx context.Context, admin *kadm.Client, prefix string, partitions int32) *topicChurn {
	ctx, cancel := context.WithCancel(ctx)
	c := &topicChurn{cancel: cancel}
	c.done.Add(1)
	go func() {
		defer c.done.Done()
		for ctx.Err() == nil {
			name := fmt.Sprintf("%s-churn-%d", prefix, c.cycles)
			if err := churnOnce(ctx, admin, name, partitions); err != nil {
				if ctx.Err() == nil {
					c.err = err
				}
				return
			}
			c.cycles++
		}
	}()
	return c
}

// churnOnce creates topic name with the broker's default replication
// factor and deletes it. Once begun, a cycle runs to its end even when ctx
// ends in between (a create cancelled in flight may still have created the
// topic), so that a run leaves no churn topic behind.
func churnOnce(ctx context.Context, admin *kadm.Client, name string, partitions int32) error {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), benchDrainTimeout)
	defer cancel()
	res, err := admin.CreateTopic(cctx, partitions, -1, nil, name)
	if err == nil {
		err = res.Err
	}
	if err != nil {
		return fmt.Errorf("churn: creating topic %s: %w", name, err)
	}
	del, err := admin.DeleteTopic(cctx, name)
	if err == nil {
		err = del.Err
	}
	if err != nil {
		return fmt.Errorf("churn: deleting topic %s: %w", name, err)
	}
	return nil
}

// stop ends the churn, waits for its cycle in flight, and returns the
// cycles done and the error that ended it early, if any.
func (c *topicChurn) stop() (int64, error) {
	c.cancel()
	c.done.Wait()
	return c.cycles, c.err
}
