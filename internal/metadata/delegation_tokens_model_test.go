package metadata

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// The ids and principals genDelegationTokenCommand draws from: few, so
// that ids collide and principals are owners, renewers and strangers.
var (
	genTokenIDs        = []string{"t1", "t2", "t3"}
	genTokenPrincipals = []string{pAlice, pBob, pCarol, pOps}
	genTokenRenewers   = []string{pAlice, pBob, pCarol, pBob, pCarol, pOps}
)

// genBroken draws whether to break a rule of the next command: one time
// in eight, so that most commands reach the image's own checks.
// (The last value, not the first: rapid leans towards the first.)
func genBroken(t *rapid.T) bool { return rapid.IntRange(0, 7).Draw(t, "break") == 7 }

// genDelegationTokenCommand draws the four delegation token commands over
// a small space of ids, principals and times, so that tokens collide,
// expire and are renewed by owners, renewers and strangers; a few break a
// rule of their own (a bad id, principal, time or period, unsorted
// renewers, times out of order).
func genDelegationTokenCommand() *rapid.Generator[command] {
	id := rapid.SampledFrom(genTokenIDs)
	principal := rapid.SampledFrom(genTokenPrincipals)
	now := rapid.Int64Range(0, 400)
	period := rapid.OneOf(rapid.Int64Range(1, 150), rapid.Int64Range(1, 150), rapid.Just[int64](math.MaxInt64))
	// change draws a renew's or expire's fields, one of them broken at times.
	change := func(t *rapid.T) (string, string, int64) {
		tid, p, n := id.Draw(t, "id"), principal.Draw(t, "principal"), now.Draw(t, "now")
		if genBroken(t) {
			switch rapid.IntRange(0, 2).Draw(t, "how") {
			case 0:
				tid = ""
			case 1:
				p = rapid.SampledFrom([]string{"User:", "alice", ":alice"}).Draw(t, "bad principal")
			default:
				n = -1
			}
		}
		return tid, p, n
	}
	return rapid.OneOf(
		rapid.Custom(func(t *rapid.T) command {
			tok := DelegationToken{ID: id.Draw(t, "id"), Owner: principal.Draw(t, "owner"), Requester: principal.Draw(t, "requester"),
				Renewers: canonicalRenewers(rapid.SliceOfN(rapid.SampledFrom(genTokenRenewers), 0, 3).Draw(t, "renewers")),
				IssueMs:  rapid.Int64Range(0, 100).Draw(t, "issue")}
			tok.ExpiryMs = tok.IssueMs + rapid.Int64Range(0, 100).Draw(t, "expiry")
			tok.MaxMs = tok.ExpiryMs + rapid.Int64Range(0, 150).Draw(t, "max")
			if genBroken(t) {
				switch rapid.IntRange(0, 4).Draw(t, "how") {
				case 0:
					tok.ID = ""
				case 1:
					tok.Owner = "alice"
				case 2:
					tok.Renewers = []string{pCarol, pBob, pBob}
				case 3:
					tok.IssueMs = -1
				default:
					tok.ExpiryMs = tok.MaxMs + 1
				}
			}
			return createToken(tok)
		}),
		rapid.Custom(func(t *rapid.T) command {
			tid, p, n := change(t)
			renew := period.Draw(t, "renew")
			if genBroken(t) {
				renew = rapid.SampledFrom([]int64{0, -1, math.MinInt64}).Draw(t, "bad renew")
			}
			return renewToken(tid, p, n, renew)
		}),
		rapid.Custom(func(t *rapid.T) command {
			tid, p, n := change(t)
			expire := period.Draw(t, "period")
			if rapid.IntRange(0, 2).Draw(t, "remove") == 0 {
				expire = rapid.SampledFrom([]int64{-1, math.MinInt64}).Draw(t, "negative")
			}
			return expireToken(tid, p, n, expire)
		}),
		rapid.Custom(func(t *rapid.T) command {
			n := now.Draw(t, "now")
			if genBroken(t) {
				n = -1
			}
			return removeExpiredAt(n)
		}),
	)
}

// tokenModel is the naive model of the image's delegation tokens.
type tokenModel map[string]DelegationToken

// naivePrincipal is the rule for a principal, written again: a type, a
// colon, a name.
func naivePrincipal(p string) bool {
	i := strings.IndexByte(p, ':')
	return i > 0 && i < len(p)-1
}

// createBroken returns every rule a create of w breaks, each as its error;
// none means it must be applied. The order of checks is not specified.
func (m tokenModel) createBroken(w wireDelegationToken) []error {
	var out []error
	if w.ID == "" || !naivePrincipal(w.Owner) || !naivePrincipal(w.Requester) ||
		w.IssueMs < 0 || w.ExpiryMs < w.IssueMs || w.MaxMs < w.ExpiryMs {
		out = append(out, ErrInvalidDelegationToken)
	}
	for i, r := range w.Renewers {
		if !naivePrincipal(r) || i > 0 && !(w.Renewers[i-1] < r) {
			out = append(out, ErrInvalidDelegationToken)
		}
		if !strings.HasPrefix(r, "User:") {
			out = append(out, ErrInvalidPrincipalType)
		}
	}
	if _, ok := m[w.ID]; ok && len(out) == 0 {
		out = append(out, ErrDelegationTokenExists)
	}
	return out
}

// change returns the one error a renew or expire of id by principal at
// nowMs must fail with, in Kafka's order; nil with the token when it
// must be applied.
func (m tokenModel) change(id, principal string, nowMs int64, periodOK bool) (DelegationToken, error) {
	if id == "" || !naivePrincipal(principal) || nowMs < 0 || !periodOK {
		return DelegationToken{}, ErrInvalidDelegationToken
	}
	tok, ok := m[id]
	switch {
	case !ok:
		return tok, ErrDelegationTokenNotFound
	case tok.ExpiryMs < nowMs || tok.MaxMs < nowMs:
		return tok, ErrDelegationTokenExpired
	case principal != tok.Owner && !slices.Contains(tok.Renewers, principal):
		return tok, ErrDelegationTokenOwnership
	}
	return tok, nil
}

// naiveExpiry is nowMs+periodMs bounded to [IssueMs, MaxMs], without
// ever computing a sum that could overflow.
func naiveExpiry(tok DelegationToken, nowMs, periodMs int64) int64 {
	e := tok.MaxMs
	if periodMs < tok.MaxMs-nowMs {
		e = nowMs + periodMs
	}
	if e < tok.IssueMs {
		e = tok.IssueMs
	}
	return e
}

// step returns the errors any one of which c may fail with (none: it must
// be applied) and the model after c.
func (m tokenModel) step(c command) ([]error, tokenModel) {
	next := maps.Clone(m)
	switch c := c.(type) {
	case *createDelegationTokenCmd:
		if broken := m.createBroken(c.Token); len(broken) > 0 {
			return broken, m
		}
		next[c.Token.ID] = c.Token.token()
	case *renewDelegationTokenCmd:
		tok, err := m.change(c.ID, c.Principal, c.NowMs, c.RenewMs > 0)
		if err != nil {
			return []error{err}, m
		}
		tok.ExpiryMs = naiveExpiry(tok, c.NowMs, c.RenewMs)
		next[c.ID] = tok
	case *expireDelegationTokenCmd:
		tok, err := m.change(c.ID, c.Principal, c.NowMs, true)
		switch {
		case err != nil:
			return []error{err}, m
		case c.PeriodMs < 0:
			delete(next, c.ID)
		default:
			tok.ExpiryMs = naiveExpiry(tok, c.NowMs, c.PeriodMs)
			next[c.ID] = tok
		}
	case *removeExpiredDelegationTokensCmd:
		if c.NowMs < 0 {
			return []error{ErrInvalidDelegationToken}, m
		}
		maps.DeleteFunc(next, func(_ string, t DelegationToken) bool { return t.ExpiryMs < c.NowMs || t.MaxMs < c.NowMs })
	default:
		panic(fmt.Sprintf("not a delegation token command: %T", c))
	}
	return nil, next
}

// aimAtStoredToken points a renew or expire at a stored token, by its
// owner or one of its renewers, so that changes are applied, not only
// refused.
func aimAtStoredToken(t *rapid.T, m tokenModel, c command, i int) {
	tok := m[rapid.SampledFrom(slices.Sorted(maps.Keys(m))).Draw(t, fmt.Sprintf("target%d", i))]
	by := rapid.SampledFrom(append([]string{tok.Owner}, tok.Renewers...)).Draw(t, fmt.Sprintf("by%d", i))
	switch c := c.(type) {
	case *renewDelegationTokenCmd:
		c.ID, c.Principal = tok.ID, by
	case *expireDelegationTokenCmd:
		c.ID, c.Principal = tok.ID, by
	}
}

func (m tokenModel) sorted() []DelegationToken {
	var out []DelegationToken
	for _, id := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[id])
	}
	return out
}

// TestDelegationTokensAgainstModel applies random sequences of the four
// commands to an image and to a plain map: a command is applied iff the
// model says so, refused with one of the errors the model names, and the
// image's tokens are the model's after every step, also after a snapshot
// round trip.
func TestDelegationTokensAgainstModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		img, model := emptyImage(), tokenModel{}
		outcomes := map[string]int{}
		for i := range rapid.IntRange(1, 60).Draw(t, "n") {
			cmd := genDelegationTokenCommand().Draw(t, fmt.Sprintf("cmd%d", i))
			if len(model) > 0 && rapid.Bool().Draw(t, fmt.Sprintf("aim%d", i)) {
				aimAtStoredToken(t, model, cmd, i)
			}
			want, nextModel := model.step(cmd)
			next, err := applyCommand(img, cmd, uint64(i+1))
			switch {
			case len(want) == 0 && err != nil:
				t.Fatalf("%#v refused: %v", cmd, err)
			case len(want) > 0 && err == nil:
				t.Fatalf("%#v applied, but the model says %v", cmd, want)
			case err != nil:
				if !slices.ContainsFunc(want, func(w error) bool { return errors.Is(err, w) }) {
					t.Fatalf("%#v refused with %v, want one of %v", cmd, err, want)
				}
				outcomes[fmt.Sprintf("%T refused", cmd)]++
				continue
			}
			outcomes[fmt.Sprintf("%T applied", cmd)]++
			img, model = next, nextModel
			if err := delegationTokenInvariantErr(img); err != nil {
				t.Fatalf("after %#v: %v", cmd, err)
			}
			if got := img.DelegationTokens(); !reflect.DeepEqual(got, model.sorted()) {
				t.Fatalf("after %#v:\n got %+v\nwant %+v", cmd, got, model.sorted())
			}
			restored, err := snapshotRoundTrip(img)
			if err != nil {
				t.Fatal(err)
			}
			if got := restored.DelegationTokens(); !reflect.DeepEqual(got, model.sorted()) {
				t.Fatalf("after a snapshot round trip:\n got %+v\nwant %+v", got, model.sorted())
			}
		}
		t.Logf("outcomes: %v", outcomes)
	})
}
