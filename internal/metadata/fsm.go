package metadata

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"
)

// The first byte of a snapshot names its layout. Snapshots are written in the
// newest one; every older one stays decodable.
const (
	// snapshotFormatV1: JSON of imageSnapshot.
	snapshotFormatV1 byte = 1
	// snapshotFormatV2: JSON of imageSnapshotV2, v1 plus remote segment metadata.
	snapshotFormatV2 byte = 2
	// snapshotFormatV3: JSON of imageSnapshotV3, v2 plus SCRAM credentials.
	snapshotFormatV3 byte = 3
	// snapshotFormatV4: JSON of imageSnapshotV4, v3 plus ACL bindings.
	snapshotFormatV4 byte = 4
	// snapshotFormatV5: JSON of imageSnapshotV5, v4 plus broker registrations
	// (and partition epochs in topics).
	snapshotFormatV5 byte = 5
	// snapshotFormatV6: the layout of v5, whose partitions may hold a
	// reassignment in flight (AddingReplicas, RemovingReplicas).
	snapshotFormatV6 byte = 6
	// snapshotFormatV7: JSON of imageSnapshotV7, v6 plus the tier store
	// token.
	snapshotFormatV7 byte = 7
	// snapshotFormatV8: JSON of imageSnapshotV8, v7 plus the dynamic
	// configs of single brokers.
	snapshotFormatV8 byte = 8
	// snapshotFormatV9: JSON of imageSnapshotV9, v8 plus client quotas.
	snapshotFormatV9 byte = 9
	// snapshotFormatV10: the layout of v9, whose client quotas may hold
	// ip entities (connection_creation_rate).
	snapshotFormatV10 byte = 10
	// snapshotFormatV11: JSON of imageSnapshotV11, v10 plus delegation
	// tokens.
	snapshotFormatV11 byte = 11

	// snapshotFormatV12: JSON of imageSnapshotV12, v11 plus the dynamic
	// configs of consumer groups.
	snapshotFormatV12 byte = 12

	// snapshotFormatV13: JSON of imageSnapshotV13, v12 plus the finalized
	// feature levels UpdateFeatures set.
	snapshotFormatV13 byte = 13

	// snapshotFormatV14: JSON of imageSnapshotV14, v13 plus the configs
	// of client metrics subscriptions.
	snapshotFormatV14 byte = 14
	// snapshotFormatNewest is the layout encodeSnapshot writes.
	snapshotFormatNewest = snapshotFormatV14
)

// maxSnapshotBytes bounds what Restore reads into memory.
const maxSnapshotBytes = 1 << 30

// applyResult is what FSM.Apply hands back to the proposer through
// raft.ApplyFuture.Response: the new image, or why the command was rejected.
type applyResult struct {
	img *Image
	err error
}

// fsm is the raft.FSM. Raft calls Apply, Snapshot and Restore from one
// goroutine; readers only load the published image.
type fsm struct {
	image    atomic.Pointer[Image]
	watchers watchers
}

var _ raft.FSM = (*fsm)(nil)

func newFSM() *fsm {
	f := &fsm{}
	f.image.Store(emptyImage())
	return f
}

func (f *fsm) publish(img *Image) {
	f.image.Store(img)
	f.watchers.notify()
}

// Apply decodes and applies one committed command. A rejected command leaves
// the image as it was.
func (f *fsm) Apply(l *raft.Log) any {
	if l.Type != raft.LogCommand {
		return applyResult{err: fmt.Errorf("%w: log type %v", ErrInvalidCommand, l.Type)}
	}
	cmd, err := decodeCommand(l.Data)
	if err != nil {
		return applyResult{err: err}
	}
	next, err := applyCommand(f.image.Load(), cmd, l.Index)
	if err != nil {
		return applyResult{err: err}
	}
	f.publish(next)
	return applyResult{img: next}
}

// Snapshot captures the current image; it is immutable, so Persist may run
// concurrently with later Applies.
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	return &fsmSnapshot{img: f.image.Load()}, nil
}

// Restore replaces the state with a snapshot. It is a gateway: the snapshot is
// validated as fully as a command.
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, maxSnapshotBytes+1))
	if err != nil {
		return fmt.Errorf("metadata: read snapshot: %w", err)
	}
	img, err := decodeSnapshot(data)
	if err != nil {
		return err
	}
	f.publish(img)
	return nil
}

// imageSnapshot is the v1 snapshot layout; topics are sorted by name so the
// bytes are a function of the image alone.
type imageSnapshot struct {
	ClusterID     string            `json:"cluster_id"`
	ControllerID  int32             `json:"controller_id"`
	Version       uint64            `json:"version"`
	BrokerConfigs map[string]string `json:"broker_configs"`
	Topics        []*Topic          `json:"topics"`
}

// imageSnapshotV2 adds the remote segment metadata, in the order encodeRemote
// writes it.
type imageSnapshotV2 struct {
	imageSnapshot
	RemoteSegments       []wireSegment       `json:"remote_segments"`
	PendingRemoteDeletes []wirePendingDelete `json:"pending_remote_deletes"`
}

// imageSnapshotV3 adds the SCRAM credentials, in the order encodeScram
// writes them.
type imageSnapshotV3 struct {
	imageSnapshotV2
	ScramCredentials []wireScramUser `json:"scram_credentials"`
}

// imageSnapshotV4 adds the ACL bindings, in the order encodeAcls writes
// them.
type imageSnapshotV4 struct {
	imageSnapshotV3
	Acls []wireAcl `json:"acls"`
}

// imageSnapshotV5 adds the broker registrations, ascending by id, and the
// next producer id block.
type imageSnapshotV5 struct {
	imageSnapshotV4
	Brokers             []*Broker `json:"brokers"`
	NextProducerIDBlock int64     `json:"next_producer_id_block,omitempty"`
}

// imageSnapshotV7 adds the tier store token.
type imageSnapshotV7 struct {
	imageSnapshotV5
	TierStore string `json:"tier_store,omitempty"`
}

// imageSnapshotV8 adds the dynamic configs of single brokers, ascending by
// node id.
type imageSnapshotV8 struct {
	imageSnapshotV7
	NodeConfigs []wireNodeConfigs `json:"node_configs,omitempty"`
}

// imageSnapshotV9 adds the client quotas, in the order
// encodeClientQuotas writes them.
type imageSnapshotV9 struct {
	imageSnapshotV8
	ClientQuotas []wireClientQuotas `json:"client_quotas,omitempty"`
}

// imageSnapshotV11 adds the delegation tokens, ascending by id.
type imageSnapshotV11 struct {
	imageSnapshotV9
	DelegationTokens []wireDelegationToken `json:"delegation_tokens,omitempty"`
}

// imageSnapshotV12 adds the dynamic configs of consumer groups, ascending
// by group id.
type imageSnapshotV12 struct {
	imageSnapshotV11
	GroupConfigs []wireGroupConfigs `json:"group_configs,omitempty"`
}

// imageSnapshotV13 adds the finalized feature levels, ascending by name,
// and the image version of their last change.
type imageSnapshotV13 struct {
	imageSnapshotV12
	Features        []wireFeature `json:"features,omitempty"`
	FeaturesVersion uint64        `json:"features_version,omitempty"`
}

// imageSnapshotV14 adds the configs of client metrics subscriptions,
// ascending by name.
type imageSnapshotV14 struct {
	imageSnapshotV13
	ClientMetricsConfigs []wireClientMetricsConfigs `json:"client_metrics_configs,omitempty"`
}

// wireFeature is one finalized feature level in a snapshot.
type wireFeature struct {
	Name  string `json:"name"`
	Level int16  `json:"level"`
}

// wireGroupConfigs is one consumer group's dynamic configs in a snapshot.
type wireGroupConfigs struct {
	Group   string            `json:"group"`
	Configs map[string]string `json:"configs"`
}

// wireClientMetricsConfigs is one client metrics subscription's configs in
// a snapshot.
type wireClientMetricsConfigs struct {
	Name    string            `json:"name"`
	Configs map[string]string `json:"configs"`
}

// wireNodeConfigs is one broker's dynamic configs in a snapshot.
type wireNodeConfigs struct {
	Node    int32             `json:"node"`
	Configs map[string]string `json:"configs"`
}

func encodeSnapshot(img *Image) ([]byte, error) {
	var s imageSnapshotV14
	s.imageSnapshot = imageSnapshot{
		ClusterID:     img.ClusterID,
		ControllerID:  img.ControllerID,
		Version:       img.Version,
		BrokerConfigs: img.BrokerConfigs,
		Topics:        make([]*Topic, 0, len(img.Topics)),
	}
	for _, t := range img.Topics {
		s.Topics = append(s.Topics, t)
	}
	slices.SortFunc(s.Topics, func(a, b *Topic) int { return strings.Compare(a.Name, b.Name) })
	s.RemoteSegments, s.PendingRemoteDeletes = encodeRemote(img)
	s.ScramCredentials = encodeScram(img)
	s.Acls = encodeAcls(img)
	s.Brokers = encodeBrokers(img)
	s.NextProducerIDBlock = img.NextProducerIDBlock
	s.TierStore = img.TierStore
	for _, node := range slices.Sorted(maps.Keys(img.NodeConfigs)) {
		s.NodeConfigs = append(s.NodeConfigs, wireNodeConfigs{Node: node, Configs: img.NodeConfigs[node]})
	}
	s.ClientQuotas = encodeClientQuotas(img)
	s.DelegationTokens = encodeDelegationTokens(img)
	for _, g := range slices.Sorted(maps.Keys(img.GroupConfigs)) {
		s.GroupConfigs = append(s.GroupConfigs, wireGroupConfigs{Group: g, Configs: img.GroupConfigs[g]})
	}
	for _, name := range slices.Sorted(maps.Keys(img.Features)) {
		s.Features = append(s.Features, wireFeature{Name: name, Level: img.Features[name]})
	}
	s.FeaturesVersion = img.FeaturesVersion
	for _, name := range slices.Sorted(maps.Keys(img.ClientMetricsConfigs)) {
		s.ClientMetricsConfigs = append(s.ClientMetricsConfigs, wireClientMetricsConfigs{Name: name, Configs: img.ClientMetricsConfigs[name]})
	}
	body, err := json.Marshal(&s)
	if err != nil {
		return nil, fmt.Errorf("metadata: encode snapshot: %w", err)
	}
	return append([]byte{snapshotFormatNewest}, body...), nil
}

func decodeSnapshot(data []byte) (*Image, error) {
	if len(data) > maxSnapshotBytes {
		return nil, fmt.Errorf("%w: snapshot larger than %d bytes", ErrInvalidCommand, maxSnapshotBytes)
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("%w: snapshot has no format byte", ErrInvalidCommand)
	}
	var s imageSnapshotV14
	var into any
	switch data[0] {
	case snapshotFormatV1:
		into = &s.imageSnapshot // a v1 snapshot holding v2 fields is corrupt
	case snapshotFormatV2:
		into = &s.imageSnapshotV2 // a v2 snapshot holding v3 fields is corrupt
	case snapshotFormatV3:
		into = &s.imageSnapshotV3 // a v3 snapshot holding v4 fields is corrupt
	case snapshotFormatV4:
		into = &s.imageSnapshotV4 // a v4 snapshot holding v5 fields is corrupt
	case snapshotFormatV5, snapshotFormatV6:
		into = &s.imageSnapshotV5 // a v6 snapshot holding v7 fields is corrupt
	case snapshotFormatV7:
		into = &s.imageSnapshotV7 // a v7 snapshot holding v8 fields is corrupt
	case snapshotFormatV8:
		into = &s.imageSnapshotV8 // a v8 snapshot holding v9 fields is corrupt
	case snapshotFormatV9, snapshotFormatV10:
		into = &s.imageSnapshotV9 // a v9 snapshot holding an ip entity is corrupt, a v10 one holding v11 fields too
	case snapshotFormatV11:
		into = &s.imageSnapshotV11 // a v11 snapshot holding v12 fields is corrupt
	case snapshotFormatV12:
		into = &s.imageSnapshotV12 // a v12 snapshot holding v13 fields is corrupt
	case snapshotFormatV13:
		into = &s.imageSnapshotV13 // a v13 snapshot holding v14 fields is corrupt
	case snapshotFormatV14:
		into = &s
	default:
		return nil, fmt.Errorf("%w: snapshot has an unknown format byte %d", ErrInvalidCommand, data[0])
	}
	dec := json.NewDecoder(bytes.NewReader(data[1:]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		return nil, fmt.Errorf("%w: snapshot: %v", ErrInvalidCommand, err)
	}
	img, err := restoreTopics(&s.imageSnapshot)
	if err != nil {
		return nil, err
	}
	if data[0] < snapshotFormatV6 {
		if err := noReassignments(img); err != nil {
			return nil, err
		}
	}
	if err := restoreRemote(img, s.PendingRemoteDeletes, s.RemoteSegments); err != nil {
		return nil, err
	}
	if err := restoreScram(img, s.ScramCredentials); err != nil {
		return nil, err
	}
	if err := restoreAcls(img, s.Acls); err != nil {
		return nil, err
	}
	if err := restoreBrokers(img, s.Brokers); err != nil {
		return nil, err
	}
	if err := restoreProducerIDs(img, s.NextProducerIDBlock); err != nil {
		return nil, err
	}
	if s.TierStore != "" {
		if err := validateTierStoreToken(s.TierStore); err != nil {
			return nil, fmt.Errorf("snapshot: %w", err)
		}
		img.TierStore = s.TierStore
	}
	if err := restoreNodeConfigs(img, s.NodeConfigs); err != nil {
		return nil, err
	}
	if err := restoreClientQuotas(img, s.ClientQuotas); err != nil {
		return nil, err
	}
	if data[0] < snapshotFormatV10 {
		for e := range img.clientQuotas {
			if e.IsIP() {
				return nil, fmt.Errorf("%w: snapshot older than v10 holds the ip entity %s", ErrInvalidCommand, e)
			}
		}
	}
	if err := restoreDelegationTokens(img, s.DelegationTokens); err != nil {
		return nil, err
	}
	if err := restoreGroupConfigs(img, s.GroupConfigs); err != nil {
		return nil, err
	}
	for _, f := range s.Features {
		if _, dup := img.Features[f.Name]; dup {
			return nil, fmt.Errorf("%w: snapshot feature %q twice", ErrInvalidCommand, f.Name)
		}
		if err := validFeatureLevel(f.Name, f.Level); err != nil {
			return nil, fmt.Errorf("snapshot: %w", err)
		}
		img.Features[f.Name] = f.Level
	}
	img.FeaturesVersion = s.FeaturesVersion
	if err := restoreClientMetricsConfigs(img, s.ClientMetricsConfigs); err != nil {
		return nil, err
	}
	return img, nil
}

// restoreClientMetricsConfigs fills img.ClientMetricsConfigs from a
// snapshot: each subscription once, named, with a valid, non-empty map.
func restoreClientMetricsConfigs(img *Image, subscriptions []wireClientMetricsConfigs) error {
	for _, c := range subscriptions {
		if err := restoreNamedConfigs(img.ClientMetricsConfigs, c.Name, c.Configs, "configs of client metrics subscription"); err != nil {
			return err
		}
	}
	return nil
}

// restoreGroupConfigs fills img.GroupConfigs from a snapshot: each group
// once, named, with a valid, non-empty map.
func restoreGroupConfigs(img *Image, groups []wireGroupConfigs) error {
	for _, g := range groups {
		if err := restoreNamedConfigs(img.GroupConfigs, g.Group, g.Configs, "dynamic configs of group"); err != nil {
			return err
		}
	}
	return nil
}

// restoreNamedConfigs puts one snapshot entry of a map of configs by name
// (groups, client metrics subscriptions) into dst: each name once, not
// empty, with a valid, non-empty map; what names the entry in errors.
func restoreNamedConfigs(dst map[string]map[string]string, name string, configs map[string]string, what string) error {
	if _, dup := dst[name]; dup || name == "" || len(configs) == 0 {
		return fmt.Errorf("%w: snapshot %s %q: repeated, unnamed or empty", ErrInvalidCommand, what, name)
	}
	if err := validateConfigs(configs); err != nil {
		return fmt.Errorf("snapshot %s %q: %w", what, name, err)
	}
	dst[name] = cloneConfigs(configs)
	return nil
}

// restoreNodeConfigs fills img.NodeConfigs from a snapshot: each node once,
// with a valid, non-empty map.
func restoreNodeConfigs(img *Image, nodes []wireNodeConfigs) error {
	for _, n := range nodes {
		if _, dup := img.NodeConfigs[n.Node]; dup || n.Node < 0 || len(n.Configs) == 0 {
			return fmt.Errorf("%w: snapshot dynamic configs of broker %d: repeated, negative or empty", ErrInvalidCommand, n.Node)
		}
		if err := validateConfigs(n.Configs); err != nil {
			return fmt.Errorf("snapshot dynamic configs of broker %d: %w", n.Node, err)
		}
		img.NodeConfigs[n.Node] = cloneConfigs(n.Configs)
	}
	return nil
}

// noReassignments refuses an image, restored from a snapshot older than
// v6, that holds a reassignment in flight: such a snapshot is corrupt.
func noReassignments(img *Image) error {
	for _, t := range img.Topics {
		for _, p := range t.Partitions {
			if p.Reassigning() {
				return fmt.Errorf("%w: snapshot older than v6 holds a reassignment of %s-%d", ErrInvalidCommand, t.Name, p.Index)
			}
		}
	}
	return nil
}

// restoreTopics builds an image from the v1 part of a snapshot, validating it.
func restoreTopics(s *imageSnapshot) (*Image, error) {
	if s.ClusterID != "" {
		if err := validateClusterID(s.ClusterID); err != nil {
			return nil, err
		}
	}
	if err := validateConfigs(s.BrokerConfigs); err != nil {
		return nil, fmt.Errorf("snapshot broker configs: %w", err)
	}
	img := emptyImage()
	img.ClusterID, img.ControllerID, img.Version = s.ClusterID, s.ControllerID, s.Version
	img.BrokerConfigs = cloneConfigs(s.BrokerConfigs)
	for _, t := range s.Topics {
		if t == nil {
			return nil, fmt.Errorf("%w: snapshot holds a null topic", ErrInvalidCommand)
		}
		if err := validateTopic(t); err != nil {
			return nil, fmt.Errorf("snapshot: %w", err)
		}
		if _, dup := img.Topics[t.Name]; dup {
			return nil, fmt.Errorf("snapshot: %w: %q twice", ErrTopicExists, t.Name)
		}
		if _, dup := img.TopicsByID[t.ID]; dup {
			return nil, fmt.Errorf("snapshot: %w: topic %q", ErrTopicIDExists, t.Name)
		}
		t.Configs = cloneConfigs(t.Configs)
		img.Topics[t.Name] = t
		img.TopicsByID[t.ID] = t
	}
	return img, nil
}

type fsmSnapshot struct{ img *Image }

func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	data, err := encodeSnapshot(s.img)
	if err == nil {
		_, err = sink.Write(data)
	}
	if err != nil {
		_ = sink.Cancel() // the write error is the one worth reporting
		return fmt.Errorf("metadata: persist snapshot: %w", err)
	}
	return sink.Close()
}

func (s *fsmSnapshot) Release() {}

// watchers hands out coalescing signal channels: each has room for one pending
// signal, and notify never blocks, so a slow reader sees one signal for any
// number of images and then reads the latest one.
type watchers struct {
	mu struct {
		sync.Mutex
		next uint64
		subs map[uint64]chan struct{}
	}
}

func (w *watchers) add() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.mu.subs == nil {
		w.mu.subs = map[uint64]chan struct{}{}
	}
	id := w.mu.next
	w.mu.next++
	w.mu.subs[id] = ch
	cancel := func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		delete(w.mu.subs, id)
	}
	return ch, cancel
}

func (w *watchers) notify() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, ch := range w.mu.subs {
		select {
		case ch <- struct{}{}:
		default: // a signal is already pending; the reader will load the latest image
		}
	}
}
