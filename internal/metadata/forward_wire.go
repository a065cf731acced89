package metadata

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"unicode/utf8"

	"github.com/hashicorp/raft"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/quota"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// The forwarding protocol (version 1). One request per connection:
//
//	client → server: forwardMagic (0xF5), forwardVersion (1), request frame
//	server → client: response frame; then both sides close
//
// A frame is a 4-byte big-endian length n (1 ≤ n ≤ the bound of its
// direction) followed by n bytes. A request's first byte is its kind:
//
//	forwardPropose (1): the rest is an encoded command, exactly as
//	                    encodeCommand wrote it
//	forwardJoin    (2): the rest is JSON of joinRequest
//	forwardHeartbeat (3): the rest is JSON of Heartbeat; the response
//	                    carries a HeartbeatReply
//	forwardDescribeQuorum (4): nothing more; the response carries a
//	                    QuorumState
//	forwardProbe   (5): nothing more; answered by any node, leader or not:
//	                    the response carries a probeReply
//	forwardRejoin  (6): the rest is JSON of joinRequest, from a voter that
//	                    lost its Raft state
//	forwardVoters  (7): the rest is JSON of voterRequest
//	forwardReadIndex (8): nothing more; the response's Index is the
//	                    controller's image version after a barrier
//
// A response is JSON of forwardResponse. A new layout takes a new version
// byte; the server closes a connection whose version it does not know.
const (
	forwardVersion byte = 1

	forwardPropose   byte = 1
	forwardJoin      byte = 2
	forwardHeartbeat byte = 3
	// forwardDescribeQuorum is new in this version's layout; a leader that
	// does not know it answers ErrInvalidCommand.
	forwardDescribeQuorum byte = 4
	// forwardProbe and forwardRejoin are new too (rejoin.go).
	forwardProbe  byte = 5
	forwardRejoin byte = 6
	// forwardVoters changes the voter set (voters.go).
	forwardVoters byte = 7
	// forwardReadIndex asks the controller for its image version once it
	// has applied everything committed before (read_index.go).
	forwardReadIndex byte = 8

	// maxForwardRequestBytes bounds a request frame: a kind byte and a command.
	maxForwardRequestBytes = 1 + maxCommandBytes
	// maxForwardResponseBytes bounds a response frame; messages are cut to
	// maxForwardErrorMessageBytes, so responses are far smaller.
	maxForwardResponseBytes     = 64 << 10
	maxForwardErrorMessageBytes = 4 << 10
	// frameAllocStepBytes is how much of a frame is allocated before its bytes
	// arrive: a length prefix alone never allocates more.
	frameAllocStepBytes = 64 << 10
)

// errForwardFrame classifies a malformed forwarding frame.
var errForwardFrame = errors.New("metadata: malformed forwarding frame")

// joinRequest asks the leader to add a non-voter to the Raft configuration
// (forwardJoin), or for an index committed after a rejoining voter's return
// (forwardRejoin).
type joinRequest struct {
	NodeID  int32  `json:"node_id"`
	Address string `json:"address"`
	// DirectoryID, sent only by a voter asking to move its address, is
	// its registered log directory id.
	DirectoryID *[16]byte `json:"directory_id,omitempty"`
}

// probeReply is the last Raft index a node holds, 0 while it has none,
// and the voters of its latest Raft configuration, ascending
// (voters_hold.go).
type probeReply struct {
	LastIndex uint64  `json:"last_index"`
	Voters    []int32 `json:"voters,omitempty"`
}

// forwardResponse answers one request. Index is the applied Raft index (the
// image version) on success. With an error, Index is the leader's image
// version after the attempt, so that the proposer can wait to see whatever
// made its command fail.
type forwardResponse struct {
	Index uint64     `json:"index"`
	Err   *wireError `json:"error,omitempty"`
	// Heartbeat answers a forwardHeartbeat request that succeeded.
	Heartbeat *HeartbeatReply `json:"heartbeat,omitempty"`
	// Quorum answers a forwardDescribeQuorum request that succeeded.
	Quorum *QuorumState `json:"quorum,omitempty"`
	// Probe answers a forwardProbe request.
	Probe *probeReply `json:"probe,omitempty"`
	// Leader is, from a node that does not lead, the Raft address of the
	// leader it knows ("": none), for a node that found it by
	// Options.Bootstrap.
	Leader string `json:"leader,omitempty"`
}

// wireError is an error as forwarding carries it: the codes of every error of
// forwardErrorCodes it matches (errors.Is), the typed errors that errors.As
// finds, and its message.
type wireError struct {
	Codes   []uint16 `json:"codes,omitempty"`
	Message string   `json:"message"`
	// NotApplied: the leader refused the command before appending it to the
	// Raft log, so the proposer may send it again.
	NotApplied bool            `json:"not_applied,omitempty"`
	Transition *wireTransition `json:"transition,omitempty"`
	Overlap    *wireOverlap    `json:"overlap,omitempty"`
}

// wireTransition is a *remotemeta.TransitionError; states by name, as in commands.
type wireTransition struct {
	ID   remotemeta.SegmentID `json:"id"`
	From string               `json:"from"`
	To   string               `json:"to"`
}

// wireOverlap is a *remotemeta.OverlapError.
type wireOverlap struct {
	ID         remotemeta.SegmentID `json:"id"`
	Other      remotemeta.SegmentID `json:"other"`
	Start      base.Offset          `json:"start"`
	End        base.Offset          `json:"end"`
	OtherStart base.Offset          `json:"other_start"`
	OtherEnd   base.Offset          `json:"other_end"`
}

// forwardErrorCodes gives every error a forwarded proposal can be classified
// by a stable wire code. A code is never reused or renumbered; a new sentinel
// takes one new line (TestForwardErrorsCoverSentinels fails until it has).
var forwardErrorCodes = []struct {
	code uint16
	err  error
}{
	{1, ErrTopicExists},
	{2, ErrTopicIDExists},
	{3, ErrUnknownTopic},
	{4, ErrInvalidTopicName},
	{5, ErrInvalidPartitions},
	{6, ErrInvalidReplicationFactor},
	{7, ErrInvalidReplicaAssignment},
	{8, ErrInvalidConfig},
	{9, ErrInvalidCommand},
	{10, ErrClusterInitialized},
	{11, ErrNotController},
	{12, ErrFencedLeaderEpoch},
	{13, ErrUnknownRemoteSegment},
	{14, ErrOverlappingRemoteSegment},
	{15, ErrRemoteSegmentsRemain},
	{16, ErrInvalidScramCredential},
	{17, ErrUnsupportedScramMechanism},
	{18, ErrDuplicateScramMechanism},
	{19, ErrScramCredentialNotFound},
	{20, ErrInvalidAcl},
	{21, ErrClosed},
	{22, errStaleProposal},
	{23, ErrInvalidBrokerRegistration},
	{24, ErrUnknownBroker},
	{25, ErrStaleBrokerEpoch},
	{26, ErrNotLeader},
	{27, ErrInvalidUpdateVersion},
	{28, ErrIneligibleReplica},
	{29, ErrNoMetadata},
	{30, ErrMetadataInUse},
	{31, ErrElectionNotNeeded},
	{32, ErrPreferredLeaderNotAvailable},
	{33, ErrNoReassignmentInProgress},
	{34, ErrInvalidClientQuota},
	{35, ErrInvalidDelegationToken},
	{36, ErrInvalidPrincipalType},
	{37, ErrDelegationTokenExists},
	{38, ErrDelegationTokenNotFound},
	{39, ErrDelegationTokenExpired},
	{40, ErrDelegationTokenOwnership},
	{41, ErrEligibleLeadersNotAvailable},
	{42, ErrBrokerNotFenced},
	{43, ErrDuplicateVoter},
	{44, ErrVoterNotFound},
	{45, ErrInvalidVoter},
	{46, ErrVoterNotReady},

	// Errors of other packages that the package's errors wrap.
	{1000, remotemeta.ErrInvalidTransition},
	{1001, remotemeta.ErrOverlap},
	{1002, remotemeta.ErrInvalidSegment},
	{1010, raft.ErrNotLeader},
	{1011, raft.ErrLeadershipLost},
	{1012, raft.ErrLeadershipTransferInProgress},
	{1020, quota.ErrInvalidKey},
	{1021, quota.ErrInvalidValue},
}

// forwardErrorsByCode is forwardErrorCodes by code; built once, and a
// repeated code is a programmer error.
var forwardErrorsByCode = func() map[uint16]error {
	m := make(map[uint16]error, len(forwardErrorCodes))
	for _, e := range forwardErrorCodes {
		if _, dup := m[e.code]; dup {
			panic(fmt.Sprintf("metadata: forward error code %d used twice", e.code))
		}
		m[e.code] = e.err
	}
	return m
}()

// encodeWireError describes err for the proposer; notApplied says that the
// command certainly did not enter the log.
func encodeWireError(err error, notApplied bool) *wireError {
	w := &wireError{Message: truncateUTF8(err.Error(), maxForwardErrorMessageBytes), NotApplied: notApplied}
	for _, e := range forwardErrorCodes {
		if errors.Is(err, e.err) {
			w.Codes = append(w.Codes, e.code)
		}
	}
	if te, ok := errors.AsType[*remotemeta.TransitionError](err); ok {
		w.Transition = &wireTransition{ID: te.ID, From: te.From.String(), To: te.To.String()}
	}
	if oe, ok := errors.AsType[*remotemeta.OverlapError](err); ok {
		w.Overlap = &wireOverlap{ID: oe.ID, Other: oe.Other, Start: oe.Range.Start, End: oe.Range.End,
			OtherStart: oe.OtherRange.Start, OtherEnd: oe.OtherRange.End}
	}
	return w
}

// decodeWireError rebuilds an error that errors.Is and errors.As classify as
// the leader's. Codes and states this version does not know are skipped: the
// message still says what happened.
func decodeWireError(w *wireError) error {
	e := &forwardedError{msg: w.Message}
	for _, code := range w.Codes {
		if sentinel, ok := forwardErrorsByCode[code]; ok {
			e.causes = append(e.causes, sentinel)
		}
	}
	if t := w.Transition; t != nil {
		from, okFrom := remotemeta.ParseState(t.From)
		to, okTo := remotemeta.ParseState(t.To)
		if okFrom && okTo {
			e.causes = append(e.causes, &remotemeta.TransitionError{ID: t.ID, From: from, To: to})
		}
	}
	if o := w.Overlap; o != nil {
		e.causes = append(e.causes, &remotemeta.OverlapError{ID: o.ID, Other: o.Other,
			Range: base.Range{Start: o.Start, End: o.End}, OtherRange: base.Range{Start: o.OtherStart, End: o.OtherEnd}})
	}
	return e
}

// forwardedError is an error the leader returned: its message, and the
// errors it matched.
type forwardedError struct {
	msg    string
	causes []error
}

func (e *forwardedError) Error() string   { return e.msg }
func (e *forwardedError) Unwrap() []error { return e.causes }

func truncateUTF8(s string, maxBytes int) string {
	if len(s) <= maxBytes {
		return s
	}
	s = s[:maxBytes]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// appendFrame appends body as one frame.
func appendFrame(dst, body []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(body)))
	return append(dst, body...)
}

// readFrame reads one frame of at most maxBytes. It is a gateway: the length
// is checked before anything is allocated, and memory grows only as the
// bytes arrive.
func readFrame(r io.Reader, maxBytes int) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n == 0 || uint64(n) > uint64(maxBytes) {
		return nil, fmt.Errorf("%w: length %d, want 1..%d", errForwardFrame, n, maxBytes)
	}
	var buf bytes.Buffer
	buf.Grow(min(int(n), frameAllocStepBytes))
	if _, err := io.CopyN(&buf, r, int64(n)); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("%w: %d of %d bytes: %w", errForwardFrame, buf.Len(), n, err)
	}
	return buf.Bytes(), nil
}

// encodeForwardRequest is the whole client side of a connection: the
// preamble and one request frame.
func encodeForwardRequest(kind byte, payload []byte) []byte {
	out := make([]byte, 0, 2+4+1+len(payload))
	out = append(out, forwardMagic, forwardVersion)
	out = binary.BigEndian.AppendUint32(out, uint32(1+len(payload)))
	out = append(out, kind)
	return append(out, payload...)
}

func encodeForwardResponse(r forwardResponse) []byte {
	body, err := json.Marshal(&r)
	if err != nil {
		panic(fmt.Sprintf("metadata: encode forward response: %v", err)) // plain data: cannot fail
	}
	return appendFrame(nil, body)
}

// decodeForwardResponse is the client's gateway for a response body.
func decodeForwardResponse(body []byte) (forwardResponse, error) {
	var r forwardResponse
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&r); err != nil {
		return forwardResponse{}, fmt.Errorf("%w: response: %v", errForwardFrame, err)
	}
	if dec.More() {
		return forwardResponse{}, fmt.Errorf("%w: response has trailing data", errForwardFrame)
	}
	if r.Err != nil && len(r.Err.Codes) > len(forwardErrorCodes)+64 {
		return forwardResponse{}, fmt.Errorf("%w: response names %d error codes", errForwardFrame, len(r.Err.Codes))
	}
	return r, nil
}

func encodeJoinRequest(j joinRequest) []byte {
	b, err := json.Marshal(&j)
	if err != nil {
		panic(fmt.Sprintf("metadata: encode join request: %v", err)) // plain data: cannot fail
	}
	return b
}

// decodeJoinRequest is the server's gateway for a join payload.
func decodeJoinRequest(payload []byte) (joinRequest, error) {
	var j joinRequest
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return joinRequest{}, fmt.Errorf("%w: join request: %v", ErrInvalidCommand, err)
	}
	if dec.More() {
		return joinRequest{}, fmt.Errorf("%w: join request has trailing data", ErrInvalidCommand)
	}
	if j.NodeID < 0 {
		return joinRequest{}, fmt.Errorf("%w: join request from node %d", ErrInvalidCommand, j.NodeID)
	}
	if err := validateDialAddr(j.Address); err != nil {
		return joinRequest{}, fmt.Errorf("%w: join request from node %d: %w", ErrInvalidCommand, j.NodeID, err)
	}
	return j, nil
}

// decodeHeartbeat is the server's gateway for a heartbeat payload.
func decodeHeartbeat(payload []byte) (Heartbeat, error) {
	var hb Heartbeat
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&hb); err != nil {
		return Heartbeat{}, fmt.Errorf("%w: heartbeat: %v", ErrInvalidCommand, err)
	}
	if dec.More() {
		return Heartbeat{}, fmt.Errorf("%w: heartbeat has trailing data", ErrInvalidCommand)
	}
	return hb, nil
}

// validateDialAddr checks that addr is a host:port another node can dial: a
// host that is not an unspecified IP, and a port in 1..65535.
func validateDialAddr(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("address %q: %w", addr, err)
	}
	if host == "" {
		return fmt.Errorf("address %q has no host", addr)
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		return fmt.Errorf("address %q is not one another node can dial", addr)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return fmt.Errorf("address %q: port must be 1..65535", addr)
	}
	return nil
}
