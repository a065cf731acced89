package api

import (
	"context"
	"reflect"
	"time"
)

func changeChans(targets []fetchTarget) []<-chan struct{} {
	out := make([]<-chan struct{}, len(targets))
	for i, t := range targets {
		out[i] = t.part.Changed()
	}
	return out
}

// waitAny blocks until one of chans closes (true), or the deadline, ctx or
// stop (nil: never) ends the wait (false). It parks long-poll fetches.
func waitAny(ctx context.Context, stop <-chan struct{}, chans []<-chan struct{}, deadline time.Time) bool {
	wait := time.Until(deadline)
	if wait <= 0 {
		return false
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	if len(chans) == 1 {
		select {
		case <-chans[0]:
			return true
		case <-timer.C:
		case <-ctx.Done():
		case <-stop:
		}
		return false
	}
	const notChans = 3 // the cases before chans'
	cases := make([]reflect.SelectCase, 0, len(chans)+notChans)
	cases = append(cases,
		reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(timer.C)},
		reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())},
		reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(stop)},
	)
	for _, c := range chans {
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(c)})
	}
	chosen, _, _ := reflect.Select(cases)
	return chosen >= notChans
}
