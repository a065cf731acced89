package objstore

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// fakeAnswer is what the fake S3 server says to one method and path.
type fakeAnswer struct {
	status int
	code   string // the S3 error code of the XML body; "" sends no body
}

// newFakeS3 returns an S3 store on a server that answers each request
// with answers[method+" "+path] ("GET /b/k"; 200 with no body if absent),
// for the answers that versitygw never gives: throttling, a 5xx, a 404 to
// a delete. The store makes one attempt a request, so each answer is the
// final one and no backoff slows the test.
func newFakeS3(t *testing.T, answers map[string]fakeAnswer) Store {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, ok := answers[r.Method+" "+r.URL.Path]
		if !ok {
			a = fakeAnswer{status: http.StatusOK}
		}
		if a.code == "" {
			w.WriteHeader(a.status)
			return
		}
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(a.status)
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>fake</Message></Error>`, a.code)
	}))
	t.Cleanup(srv.Close)
	s := newOfflineS3(t, func(o *S3Options) { o.Endpoint, o.PathStyle = srv.URL, true })
	s.client = s3.New(s.client.Options(), func(o *s3.Options) { o.RetryMaxAttempts = 1 })
	return s
}

// errClass is how a caller must treat an error.
type errClass int

const (
	classOK errClass = iota + 1
	classNotFound
	classTransient
	classPermanent // neither missing nor worth retrying
)

func classify(err error) errClass {
	notFound, transient := errors.Is(err, ErrNotFound), IsTransient(err)
	switch {
	case err == nil:
		return classOK
	case notFound && !transient:
		return classNotFound
	case transient && !notFound:
		return classTransient
	case !transient && !notFound:
		return classPermanent
	}
	panic(fmt.Sprintf("error both missing and transient: %v", err))
}

func (c errClass) String() string {
	return [...]string{classOK: "ok", classNotFound: "not found", classTransient: "transient", classPermanent: "permanent"}[c]
}

// TestS3ErrorClassification: the server's answer decides the class of the
// error. Throttling and 5xx are transient; a missing key is ErrNotFound,
// and deleting it succeeds; a missing bucket is never ErrNotFound, even
// when a HEAD (which has no body to say so) is the question.
func TestS3ErrorClassification(t *testing.T) {
	ops := map[string]func(context.Context, Store) error{
		"get": func(ctx context.Context, s Store) error {
			rc, _, err := s.Get(ctx, "k")
			if err == nil {
				rc.Close()
			}
			return err
		},
		"head": func(ctx context.Context, s Store) error { _, err := s.Head(ctx, "k"); return err },
		"put":  func(ctx context.Context, s Store) error { return s.Put(ctx, "k", strings.NewReader("v"), 1) },
		"list": func(ctx context.Context, s Store) error {
			return s.List(ctx, "", func(ObjectInfo) error { return nil })
		},
		"delete": func(ctx context.Context, s Store) error { return s.Delete(ctx, "k") },
	}
	for _, c := range []struct {
		name    string
		op      string
		answers map[string]fakeAnswer
		want    errClass
	}{
		{"GetThrottled", "get", map[string]fakeAnswer{"GET /b/k": {status: 503, code: "SlowDown"}}, classTransient},
		{"GetServerError", "get", map[string]fakeAnswer{"GET /b/k": {status: 500, code: "InternalError"}}, classTransient},
		{"GetNoSuchKey", "get", map[string]fakeAnswer{"GET /b/k": {status: 404, code: "NoSuchKey"}}, classNotFound},
		{"GetNoSuchBucket", "get", map[string]fakeAnswer{"GET /b/k": {status: 404, code: "NoSuchBucket"}}, classPermanent},
		{"GetAccessDenied", "get", map[string]fakeAnswer{"GET /b/k": {status: 403, code: "AccessDenied"}}, classPermanent},
		{"HeadUnavailable", "head", map[string]fakeAnswer{"HEAD /b/k": {status: 503}}, classTransient},
		{"HeadMissingKey", "head", map[string]fakeAnswer{"HEAD /b/k": {status: 404}}, classNotFound},
		{"HeadMissingKeyBucketUnavailable", "head", map[string]fakeAnswer{"HEAD /b/k": {status: 404}, "HEAD /b": {status: 503}}, classTransient},
		{"HeadMissingKeyMissingBucket", "head", map[string]fakeAnswer{"HEAD /b/k": {status: 404}, "HEAD /b": {status: 404}}, classPermanent},
		{"PutThrottled", "put", map[string]fakeAnswer{"PUT /b/k": {status: 503, code: "SlowDown"}}, classTransient},
		{"ListThrottled", "list", map[string]fakeAnswer{"GET /b": {status: 503, code: "SlowDown"}}, classTransient},
		{"DeleteNoSuchKey", "delete", map[string]fakeAnswer{"DELETE /b/k": {status: 404, code: "NoSuchKey"}}, classOK},
		{"DeleteNoSuchBucket", "delete", map[string]fakeAnswer{"DELETE /b/k": {status: 404, code: "NoSuchBucket"}}, classPermanent},
		{"DeleteServerError", "delete", map[string]fakeAnswer{"DELETE /b/k": {status: 500, code: "InternalError"}}, classTransient},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := ops[c.op](testCtx(t), newFakeS3(t, c.answers))
			if got := classify(err); got != c.want {
				t.Fatalf("%s = %v (%v), want %v", c.op, err, got, c.want)
			}
		})
	}
}

// TestS3MaxRetries: MaxRetries counts retries, so a request is tried
// MaxRetries+1 times; 0 keeps the SDK's 3 attempts.
func TestS3MaxRetries(t *testing.T) {
	for _, c := range []struct{ retries, wantAttempts int }{{0, 3}, {1, 2}, {5, 6}} {
		s := newOfflineS3(t, func(o *S3Options) { o.MaxRetries = c.retries })
		if got := s.client.Options().Retryer.MaxAttempts(); got != c.wantAttempts {
			t.Errorf("MaxRetries %d: %d attempts, want %d", c.retries, got, c.wantAttempts)
		}
	}
}
