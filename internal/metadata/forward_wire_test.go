package metadata

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

// packageSentinels returns the message of every exported Err* variable
// declared with errors.New in the package's non-test files, by name.
func packageSentinels(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.VAR {
				continue
			}
			for _, spec := range gen.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if !strings.HasPrefix(id.Name, "Err") {
						continue
					}
					msg, ok := errorsNewMessage(vs, i)
					if !ok {
						t.Errorf("%s: %s is not declared as errors.New(\"…\"); teach this test how to check it", name, id.Name)
						continue
					}
					out[id.Name] = msg
				}
			}
		}
	}
	return out
}

func errorsNewMessage(vs *ast.ValueSpec, i int) (string, bool) {
	if i >= len(vs.Values) {
		return "", false
	}
	call, ok := vs.Values[i].(*ast.CallExpr)
	if !ok || len(call.Args) != 1 {
		return "", false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "New" {
		return "", false
	}
	if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "errors" {
		return "", false
	}
	lit, ok := call.Args[0].(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	msg, err := strconv.Unquote(lit.Value)
	return msg, err == nil
}

// wireRoundTrip sends err through a whole response frame, as the forward
// server writes it and a proposer reads it.
func wireRoundTrip(t *testing.T, err error, notApplied bool) error {
	t.Helper()
	frame := encodeForwardResponse(forwardResponse{Index: 42, Err: encodeWireError(err, notApplied)})
	body, rerr := readFrame(bytes.NewReader(frame), maxForwardResponseBytes)
	if rerr != nil {
		t.Fatal(rerr)
	}
	resp, rerr := decodeForwardResponse(body)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if resp.Index != 42 || resp.Err == nil || resp.Err.NotApplied != notApplied {
		t.Fatalf("response %+v", resp)
	}
	return decodeWireError(resp.Err)
}

// TestForwardErrorsCoverSentinels: every exported Err* of the package has a
// wire code, and comes back from a forwarded proposal classified as it left.
func TestForwardErrorsCoverSentinels(t *testing.T) {
	sentinels := packageSentinels(t)
	if len(sentinels) < 20 {
		t.Fatalf("found only %d sentinels: %v", len(sentinels), sentinels)
	}
	byMessage := map[string]error{}
	for _, e := range forwardErrorCodes {
		byMessage[e.err.Error()] = e.err
	}
	for name, msg := range sentinels {
		sentinel, ok := byMessage[msg]
		if !ok {
			t.Errorf("%s (%q) has no line in forwardErrorCodes", name, msg)
			continue
		}
		sent := fmt.Errorf("%w: some detail", sentinel)
		got := wireRoundTrip(t, sent, false)
		sameErrorClass(t, name, got, sent)
	}
}

func TestForwardErrorCodesAreStable(t *testing.T) {
	seen := map[uint16]bool{}
	for _, e := range forwardErrorCodes {
		if seen[e.code] || e.code == 0 {
			t.Errorf("code %d used twice or zero", e.code)
		}
		seen[e.code] = true
	}
	// Codes are a wire format: a few pinned, so renumbering fails here.
	for code, want := range map[uint16]error{1: ErrTopicExists, 11: ErrNotController, 21: ErrClosed, 22: errStaleProposal,
		1000: remotemeta.ErrInvalidTransition, 1011: raft.ErrLeadershipLost} {
		if forwardErrorsByCode[code] != want {
			t.Errorf("code %d is %v, want %v", code, forwardErrorsByCode[code], want)
		}
	}
}

func TestForwardErrorRoundTripTyped(t *testing.T) {
	seg := remotemeta.SegmentID{1, 2, 3}
	transition := fmt.Errorf("update: %w", &remotemeta.TransitionError{ID: seg, From: remotemeta.CopyFinished, To: remotemeta.Dangling})
	overlap := fmt.Errorf("%w: %w", ErrOverlappingRemoteSegment, &remotemeta.OverlapError{
		ID: seg, Other: remotemeta.SegmentID{9}, Range: base.Range{Start: 5, End: 10}, OtherRange: base.Range{Start: 0, End: 7}})
	for name, tc := range map[string]struct {
		err        error
		notApplied bool
	}{
		"transition":       {transition, false},
		"overlap":          {overlap, false},
		"leadership lost":  {fmt.Errorf("%w: %w", ErrNotController, raft.ErrLeadershipLost), false},
		"not leader":       {fmt.Errorf("%w: %w", ErrNotController, raft.ErrNotLeader), true},
		"stale":            {fmt.Errorf("%w: topic changed", errStaleProposal), false},
		"invalid segment":  {fmt.Errorf("%w: %w", ErrInvalidCommand, fmt.Errorf("%w: zero id", remotemeta.ErrInvalidSegment)), false},
		"not a known kind": {errors.New("metadata: raft apply: disk on fire"), false},
	} {
		got := wireRoundTrip(t, tc.err, tc.notApplied)
		sameErrorClass(t, name, got, tc.err)
	}
	got := wireRoundTrip(t, transition, false)
	var te *remotemeta.TransitionError
	if !errors.As(got, &te) || te.ID != seg || te.From != remotemeta.CopyFinished || te.To != remotemeta.Dangling {
		t.Errorf("transition error came back as %#v", te)
	}
	got = wireRoundTrip(t, overlap, false)
	var oe *remotemeta.OverlapError
	if !errors.As(got, &oe) || oe.ID != seg || oe.Other != (remotemeta.SegmentID{9}) ||
		oe.Range != (base.Range{Start: 5, End: 10}) || oe.OtherRange != (base.Range{Start: 0, End: 7}) {
		t.Errorf("overlap error came back as %#v", oe)
	}
}

// TestForwardErrorFromANewerLeader: codes and states this version does not
// know are skipped; the message stays.
func TestForwardErrorFromANewerLeader(t *testing.T) {
	w := &wireError{Codes: []uint16{1, 60000}, Message: "metadata: something new",
		Transition: &wireTransition{From: "COPY_STARTED", To: "TELEPORTED"}}
	err := decodeWireError(w)
	if err.Error() != w.Message || !errors.Is(err, ErrTopicExists) || errors.Is(err, remotemeta.ErrInvalidTransition) {
		t.Errorf("decoded %v", err)
	}
	long := encodeWireError(errors.New(strings.Repeat("é", maxForwardErrorMessageBytes)), false)
	if len(long.Message) > maxForwardErrorMessageBytes || !strings.HasPrefix(strings.Repeat("é", maxForwardErrorMessageBytes), long.Message) {
		t.Errorf("a long message is cut to %d bytes, or not at a rune boundary", len(long.Message))
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

func TestReadFrameBounds(t *testing.T) {
	const limit = 100
	frame := func(n uint32, body string) []byte {
		return append(binary.BigEndian.AppendUint32(nil, n), body...)
	}
	for name, tc := range map[string]struct {
		in       []byte
		want     string
		wantErr  error
		consumed int // bytes read at most
	}{
		"exact limit":   {in: frame(limit, strings.Repeat("x", limit)), want: strings.Repeat("x", limit), consumed: 4 + limit},
		"one byte":      {in: frame(1, "k"), want: "k", consumed: 5},
		"over limit":    {in: frame(limit+1, strings.Repeat("x", limit+1)), wantErr: errForwardFrame, consumed: 4},
		"huge length":   {in: frame(1<<32-1, "x"), wantErr: errForwardFrame, consumed: 4},
		"empty":         {in: frame(0, ""), wantErr: errForwardFrame, consumed: 4},
		"truncated":     {in: frame(10, "abc"), wantErr: io.ErrUnexpectedEOF, consumed: 7},
		"short header":  {in: []byte{0, 0}, wantErr: io.ErrUnexpectedEOF, consumed: 2},
		"no header":     {in: nil, wantErr: io.EOF, consumed: 0},
		"trailing kept": {in: append(frame(2, "ab"), "cd"...), want: "ab", consumed: 6},
	} {
		r := &countingReader{r: bytes.NewReader(tc.in)}
		got, err := readFrame(io.LimitReader(r, int64(len(tc.in))), limit)
		if tc.wantErr != nil {
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("%s: err = %v, want %v", name, err, tc.wantErr)
			}
		} else if err != nil || string(got) != tc.want {
			t.Errorf("%s: %q, %v; want %q", name, got, err, tc.want)
		}
		if r.n > tc.consumed {
			t.Errorf("%s: read %d bytes, want at most %d", name, r.n, tc.consumed)
		}
	}
}

func TestEncodeForwardRequest(t *testing.T) {
	cmd, err := encodeCommand(&setBrokerConfigsCmd{Configs: map[string]string{"a": "b"}})
	if err != nil {
		t.Fatal(err)
	}
	raw := encodeForwardRequest(forwardPropose, cmd)
	if raw[0] != forwardMagic || raw[1] != forwardVersion {
		t.Fatalf("preamble % x", raw[:2])
	}
	body, err := readFrame(bytes.NewReader(raw[2:]), maxForwardRequestBytes)
	if err != nil || body[0] != forwardPropose || !bytes.Equal(body[1:], cmd) {
		t.Fatalf("frame %q, %v", body, err)
	}
	if _, err := decodeCommand(body[1:]); err != nil {
		t.Fatal(err)
	}
	j, err := decodeJoinRequest(encodeJoinRequest(joinRequest{NodeID: 4, Address: "broker-4.example:9093"}))
	if err != nil || j.NodeID != 4 || j.Address != "broker-4.example:9093" {
		t.Fatalf("join request %+v, %v", j, err)
	}
	for name, payload := range map[string]string{
		"negative id":   `{"node_id":-1,"address":"h:1"}`,
		"no port":       `{"node_id":1,"address":"h"}`,
		"port 0":        `{"node_id":1,"address":"h:0"}`,
		"unspecified":   `{"node_id":1,"address":"[::]:9"}`,
		"unknown field": `{"node_id":1,"address":"h:1","voter":true}`,
		"not JSON":      `node 1`,
	} {
		if _, err := decodeJoinRequest([]byte(payload)); !errors.Is(err, ErrInvalidCommand) {
			t.Errorf("%s: %v, want ErrInvalidCommand", name, err)
		}
	}
}

// FuzzForwardResponse: the proposer's gateway never panics, and what it
// accepts decodes to an error whose message is the one sent.
func FuzzForwardResponse(f *testing.F) {
	f.Add([]byte(`{"index":3}`))
	f.Add(encodeForwardResponse(forwardResponse{Index: 9, Err: encodeWireError(
		fmt.Errorf("x: %w", &remotemeta.TransitionError{From: remotemeta.CopyStarted, To: remotemeta.DeleteFinished}), true)})[4:])
	f.Add([]byte(`{"index":1,"error":{"codes":[1,2,65535],"message":"m","overlap":{"id":[1]}}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		resp, err := decodeForwardResponse(body)
		if err != nil {
			if !errors.Is(err, errForwardFrame) {
				t.Fatalf("error %v is not errForwardFrame", err)
			}
			return
		}
		if resp.Err != nil {
			if got := decodeWireError(resp.Err); got.Error() != resp.Err.Message {
				t.Fatalf("message %q, want %q", got, resp.Err.Message)
			}
		}
	})
}

// FuzzForwardRequest: the server's gateways never panic on any bytes.
func FuzzForwardRequest(f *testing.F) {
	cmd, _ := encodeCommand(&deleteTopicCmd{Name: "t", ID: base.TopicID{1}})
	f.Add(encodeForwardRequest(forwardPropose, cmd)[2:])
	f.Add(encodeForwardRequest(forwardJoin, encodeJoinRequest(joinRequest{NodeID: 1, Address: "h:1"}))[2:])
	f.Add([]byte{0, 0, 0, 1, forwardJoin})
	f.Add(encodeForwardRequest(forwardRejoin, encodeJoinRequest(joinRequest{NodeID: 3, Address: "h:1"}))[2:])
	f.Fuzz(func(t *testing.T, raw []byte) {
		body, err := readFrame(bytes.NewReader(raw), 1<<16)
		if err != nil {
			return
		}
		switch body[0] {
		case forwardPropose:
			_, _ = decodeCommand(body[1:])
		case forwardJoin, forwardRejoin:
			if j, err := decodeJoinRequest(body[1:]); err == nil && (j.NodeID < 0 || validateDialAddr(j.Address) != nil) {
				t.Fatalf("accepted %+v", j)
			}
		}
	})
}
