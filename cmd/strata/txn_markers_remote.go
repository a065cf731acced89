package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/broker"
	"github.com/strata-broker/strata/internal/coordinator/markers"
	"github.com/strata-broker/strata/internal/coordinator/offsets"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/partition"
	"github.com/strata-broker/strata/internal/partition/producers"
)

// markerRequestTimeout bounds one WriteTxnMarkers round trip (Kafka's
// request.timeout.ms for its marker channel). The leader answers within
// its replication timeout; a lost answer is sent again.
const markerRequestTimeout = 30 * time.Second

// errNoMarkerRoute: the partition of a marker cannot be reached now (no
// leader, no connection to its leader's broker, a leadership moving
// here). The marker writer retries it.
var errNoMarkerRoute = errors.New("the partition's leader cannot be reached now")

// markerRoute decides where the marker of one partition goes, from the
// metadata image: the partition itself when this broker leads it, its
// leader's WriteTxnMarkers when another broker does. Only this broker's
// own view of leadership sends a marker over the network, so a partition
// it hosts but does not lead is never asked of itself (which would only
// answer NOT_LEADER_OR_FOLLOWER): until the image and the partition agree,
// the marker is retried.
type markerRoute struct {
	nodeID int32
	image  func() *metadata.Image
	// client is a connection to another broker; nil on a single node,
	// where every partition is led here.
	client func(id int32) (kmsg.Requestor, error)
	// ctx ends the round trips in flight when the coordinator closes.
	ctx context.Context
}

// target is Options.Partition of the marker writer. A __consumer_offsets
// partition is asked only when groupLedElsewhere said so: led here by the
// time it is asked, its marker is retried through the group coordinator.
func (r markerRoute) target(b *broker.Broker, tp base.TopicPartition) (markers.MarkerAppender, error) {
	t, ok := r.image().Topics[tp.Topic]
	if !ok || tp.Partition < 0 || int(tp.Partition) >= len(t.Partitions) {
		return nil, markers.ErrPartitionGone
	}
	switch leader := t.Partitions[tp.Partition].Leader; {
	case leader == metadata.NoLeader:
		return nil, fmt.Errorf("%w: %v has no leader", errNoMarkerRoute, tp)
	case leader != r.nodeID && r.client == nil:
		return nil, fmt.Errorf("%w: %v is led by broker %d and this broker has no connections to others", errNoMarkerRoute, tp, leader)
	case leader != r.nodeID:
		return remoteMarkers{route: r, tp: tp, leader: leader}, nil
	case tp.Topic == offsets.TopicName:
		return nil, fmt.Errorf("%w: %v is led here now; its group coordinator takes the marker", errNoMarkerRoute, tp)
	}
	p, ok := b.Partition(tp)
	if !ok {
		return nil, fmt.Errorf("%w: %v is led here but not open yet", partition.ErrNotLeader, tp)
	}
	return p, nil // refuses with partition.ErrNotLeader until it has taken the leadership: retried
}

// groupLedElsewhere is Options.GroupLedElsewhere of the marker writer:
// whether img says another broker than nodeID leads __consumer_offsets
// partition p. One with no leader, or unknown, stays with the group
// coordinator here, which refuses it retriably (NOT_COORDINATOR).
func groupLedElsewhere(img *metadata.Image, nodeID, p int32) bool {
	t, ok := img.Topics[offsets.TopicName]
	if !ok || p < 0 || int(p) >= len(t.Partitions) {
		return false
	}
	leader := t.Partitions[p].Leader
	return leader != metadata.NoLeader && leader != nodeID
}

// remoteMarkers writes the markers of one partition led by another
// broker: one WriteTxnMarkersRequest per marker, to the leader the image
// named when the writer asked.
type remoteMarkers struct {
	route  markerRoute
	tp     base.TopicPartition
	leader int32
}

// AppendMarker sends nothing yet: the round trip is the wait, which
// returns nil once the leader has the marker durable and replicated.
// There is no local offset to report.
func (m remoteMarkers) AppendMarker(pid base.ProducerID, epoch int16, commit bool, coordinatorEpoch int32) (base.Offset, func() error, error) {
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	mk := kmsg.NewWriteTxnMarkersRequestMarker()
	mk.ProducerID, mk.ProducerEpoch, mk.Committed, mk.CoordinatorEpoch = int64(pid), epoch, commit, coordinatorEpoch
	mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	mt.Topic, mt.Partitions = m.tp.Topic, []int32{m.tp.Partition}
	mk.Topics = append(mk.Topics, mt)
	req.Markers = append(req.Markers, mk)
	return 0, func() error { return m.send(req) }, nil
}

func (m remoteMarkers) send(req *kmsg.WriteTxnMarkersRequest) error {
	cl, err := m.route.client(m.leader)
	if err != nil {
		return fmt.Errorf("%w: %v: broker %d: %w", errNoMarkerRoute, m.tp, m.leader, err)
	}
	ctx, cancel := context.WithTimeout(m.route.ctx, markerRequestTimeout)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("marker for %v to broker %d: %w", m.tp, m.leader, err)
	}
	return m.result(resp)
}

// result is the error the marker writer classifies for the leader's code:
// the fencing codes are the errors a local partition would return (the
// marker is dropped), anything else is retried. That includes
// UNKNOWN_TOPIC_OR_PARTITION: a leader whose image lags this broker's has
// not heard of the partition yet, and a deleted topic is skipped once this
// broker's own image drops it (target answers ErrPartitionGone).
func (m remoteMarkers) result(resp *kmsg.WriteTxnMarkersResponse) error {
	code, ok := markerCode(resp, m.tp)
	switch {
	case !ok:
		return fmt.Errorf("broker %d answered no marker for %v", m.leader, m.tp)
	case code == 0:
		return nil
	case code == kerr.InvalidProducerEpoch.Code:
		return fmt.Errorf("marker for %v on broker %d: %w", m.tp, m.leader, producers.ErrInvalidProducerEpoch)
	case code == kerr.TransactionCoordinatorFenced.Code:
		return fmt.Errorf("marker for %v on broker %d: %w", m.tp, m.leader, producers.ErrTransactionCoordinatorFenced)
	}
	return fmt.Errorf("marker for %v on broker %d: %w", m.tp, m.leader, kerr.ErrorForCode(code))
}

// markerCode is tp's code in a one-marker answer.
func markerCode(resp *kmsg.WriteTxnMarkersResponse, tp base.TopicPartition) (int16, bool) {
	for _, mk := range resp.Markers {
		for _, t := range mk.Topics {
			if t.Topic != tp.Topic {
				continue
			}
			for _, p := range t.Partitions {
				if p.Partition == tp.Partition {
					return p.ErrorCode, true
				}
			}
		}
	}
	return 0, false
}
