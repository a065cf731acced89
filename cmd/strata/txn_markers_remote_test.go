package main

import (
	"context"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/coordinator/markers"
	"github.com/strata-broker/strata/internal/coordinator/offsets"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/partition/producers"
)

// routeImage: "t" has partition 0 led by node 2, partition 1 by nobody;
// __consumer_offsets partition 0 is led here (node 1), 1 by node 2, 2 by
// nobody.
func routeImage() *metadata.Image {
	return &metadata.Image{Topics: map[string]*metadata.Topic{
		"t": {Name: "t", Partitions: []metadata.Partition{
			{Index: 0, Leader: 2, Replicas: []int32{2, 1}},
			{Index: 1, Leader: metadata.NoLeader, Replicas: []int32{1}},
		}},
		offsets.TopicName: {Name: offsets.TopicName, Partitions: []metadata.Partition{
			{Index: 0, Leader: 1, Replicas: []int32{1}},
			{Index: 1, Leader: 2, Replicas: []int32{2}},
			{Index: 2, Leader: metadata.NoLeader, Replicas: []int32{2}},
		}},
	}}
}

// TestMarkerRouteTargets: where the marker of a partition not led here
// goes, by the image. (Partitions led here are the broker's own, which the
// two-broker tests cover.)
func TestMarkerRouteTargets(t *testing.T) {
	img := routeImage()
	client := func(int32) (kmsg.Requestor, error) { return nil, errors.New("unused") }
	for _, tc := range []struct {
		name    string
		tp      base.TopicPartition
		client  func(int32) (kmsg.Requestor, error)
		remote  int32 // the leader a remote appender sends to; 0: none
		wantErr error
	}{
		{"led by node 2", base.TopicPartition{Topic: "t", Partition: 0}, client, 2, nil},
		{"offsets partition led by node 2", base.TopicPartition{Topic: offsets.TopicName, Partition: 1}, client, 2, nil},
		{"no connections to others", base.TopicPartition{Topic: "t", Partition: 0}, nil, 0, errNoMarkerRoute},
		{"no leader", base.TopicPartition{Topic: "t", Partition: 1}, client, 0, errNoMarkerRoute},
		{"offsets partition led here by now", base.TopicPartition{Topic: offsets.TopicName, Partition: 0}, client, 0, errNoMarkerRoute},
		{"deleted topic", base.TopicPartition{Topic: "gone", Partition: 0}, client, 0, markers.ErrPartitionGone},
		{"partition beyond the topic", base.TopicPartition{Topic: "t", Partition: 2}, client, 0, markers.ErrPartitionGone},
		{"negative partition", base.TopicPartition{Topic: "t", Partition: -1}, client, 0, markers.ErrPartitionGone},
	} {
		r := markerRoute{nodeID: 1, image: func() *metadata.Image { return img }, client: tc.client, ctx: context.Background()}
		a, err := r.target(nil, tc.tp)
		if !errors.Is(err, tc.wantErr) {
			t.Errorf("%s: error %v, want %v", tc.name, err, tc.wantErr)
			continue
		}
		if tc.remote != 0 {
			rm, ok := a.(remoteMarkers)
			if !ok || rm.leader != tc.remote || rm.tp != tc.tp {
				t.Errorf("%s: appender %#v, want one sending to broker %d", tc.name, a, tc.remote)
			}
		}
	}
	for p, want := range map[int32]bool{-1: false, 0: false, 1: true, 2: false, 7: false} {
		if got := groupLedElsewhere(img, 1, p); got != want {
			t.Errorf("groupLedElsewhere(%d) = %v, want %v", p, got, want)
		}
	}
}

// TestRemoteMarkerResult: a leader's answer becomes the error the marker
// writer classifies: fencing codes are skipped as a local partition's
// would be, everything else (UNKNOWN_TOPIC_OR_PARTITION included: the
// leader's image may lag) is retried.
func TestRemoteMarkerResult(t *testing.T) {
	tp := base.TopicPartition{Topic: "t", Partition: 0}
	answer := func(topic string, p int32, code int16) *kmsg.WriteTxnMarkersResponse {
		resp := kmsg.NewPtrWriteTxnMarkersResponse()
		mk := kmsg.NewWriteTxnMarkersResponseMarker()
		mt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
		sp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
		sp.Partition, sp.ErrorCode = p, code
		mt.Topic, mt.Partitions = topic, append(mt.Partitions, sp)
		mk.Topics = append(mk.Topics, mt)
		resp.Markers = append(resp.Markers, mk)
		return resp
	}
	m := remoteMarkers{tp: tp, leader: 2}
	for _, tc := range []struct {
		name string
		resp *kmsg.WriteTxnMarkersResponse
		want error // nil with retried false: success
		// retried: the error matches none of the sentinels.
		retried bool
	}{
		{"written", answer("t", 0, 0), nil, false},
		{"stale producer epoch", answer("t", 0, kerr.InvalidProducerEpoch.Code), producers.ErrInvalidProducerEpoch, false},
		{"fenced coordinator", answer("t", 0, kerr.TransactionCoordinatorFenced.Code), producers.ErrTransactionCoordinatorFenced, false},
		{"not the leader", answer("t", 0, kerr.NotLeaderForPartition.Code), kerr.NotLeaderForPartition, true},
		{"unknown to the leader", answer("t", 0, kerr.UnknownTopicOrPartition.Code), kerr.UnknownTopicOrPartition, true},
		{"not authorized", answer("t", 0, kerr.ClusterAuthorizationFailed.Code), kerr.ClusterAuthorizationFailed, true},
		{"no answer for the partition", answer("t", 1, 0), nil, true},
		{"an answer for another topic", answer("u", 0, 0), nil, true},
	} {
		err := m.result(tc.resp)
		switch {
		case !tc.retried && tc.want == nil && err != nil:
			t.Errorf("%s: error %v, want none", tc.name, err)
		case tc.want != nil && !errors.Is(err, tc.want):
			t.Errorf("%s: error %v, want %v", tc.name, err, tc.want)
		case tc.retried && (err == nil || errors.Is(err, markers.ErrPartitionGone) ||
			errors.Is(err, producers.ErrInvalidProducerEpoch) || errors.Is(err, producers.ErrTransactionCoordinatorFenced)):
			t.Errorf("%s: error %v, want one the writer retries", tc.name, err)
		}
	}
}
