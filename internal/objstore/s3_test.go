package objstore

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestS3PrefixIsolation: stores with different prefixes in one bucket
// never see, overwrite or delete each other's objects.
func TestS3PrefixIsolation(t *testing.T) {
	gw := startVersityGW(t)
	bucket := gw.newBucket(t)
	p1 := gw.newStore(t, bucket, "cluster-1")
	p2 := gw.newStore(t, bucket, "cluster-1/nested/") // nested inside p1's space
	p3 := gw.newStore(t, bucket, "cluster-10")        // p1's prefix as a string prefix
	root := gw.newStore(t, bucket, "")

	put(t, p1, "k", []byte("one"))
	put(t, p2, "k", []byte("two"))
	put(t, p3, "k", []byte("ten"))
	for _, c := range []struct {
		s    Store
		want string
	}{{p1, "one"}, {p2, "two"}, {p3, "ten"}} {
		if got := get(t, c.s, "k"); string(got) != c.want {
			t.Fatalf("Get = %q, want %q", got, c.want)
		}
	}
	// p1's space holds p2's objects (p2's prefix is a key under p1), as
	// with any nesting; but "cluster-10" is not inside "cluster-1/".
	wantKeys(t, p1, "", "k", "nested/k")
	wantKeys(t, p2, "", "k")
	wantKeys(t, p3, "", "k")
	wantKeys(t, root, "", "cluster-1/k", "cluster-1/nested/k", "cluster-10/k")

	if err := p3.Delete(testCtx(t), "k"); err != nil {
		t.Fatal(err)
	}
	wantKeys(t, root, "", "cluster-1/k", "cluster-1/nested/k")
	if n, err := DeletePrefix(testCtx(t), p2, "k"); err != nil || n != 1 {
		t.Fatalf("DeletePrefix = %d, %v", n, err)
	}
	wantKeys(t, root, "", "cluster-1/k")
}

// TestS3ListSkipsNamesThatAreNotKeys: objects put by other tools under
// names no Store can use are not listed.
func TestS3ListSkipsNamesThatAreNotKeys(t *testing.T) {
	gw := startVersityGW(t)
	bucket := gw.newBucket(t)
	s := gw.newStore(t, bucket, "")
	put(t, s, "good", []byte("g"))
	raw := s.(*s3Store).client
	for _, name := range []string{".strata-tmp-x", "dir/.strata-y"} {
		if _, err := raw.PutObject(testCtx(t), &s3.PutObjectInput{
			Bucket: &bucket, Key: aws.String(name), Body: bytes.NewReader([]byte("x")), ContentLength: aws.Int64(1),
		}); err != nil {
			t.Fatalf("raw put %q: %v", name, err)
		}
	}
	wantKeys(t, s, "", "good")
}

// TestS3OpenErrors: a wrong bucket, wrong credentials, a dead endpoint or
// a silent one each give one error naming the bucket and the endpoint and
// saying what to check, within the context's bound.
func TestS3OpenErrors(t *testing.T) {
	gw := startVersityGW(t)
	bucket := gw.newBucket(t)

	silent, err := net.Listen("tcp", "127.0.0.1:0") // accepts into its backlog, never answers
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	dead, err := freeLoopbackAddr()
	if err != nil {
		t.Fatal(err)
	}

	missing := gw.options("no-such-bucket", "")
	badCreds := gw.options(bucket, "")
	badCreds.SecretKey = "wrong"
	unreachable := gw.options(bucket, "")
	unreachable.Endpoint, unreachable.MaxRetries = "http://"+dead, 1
	hanging := gw.options(bucket, "")
	hanging.Endpoint = "http://" + silent.Addr().String()

	for _, c := range []struct {
		name      string
		opts      S3Options
		want      []string
		transient bool
	}{
		{"MissingBucket", missing, []string{`"no-such-bucket"`, gw.endpoint, "does not exist"}, false},
		{"BadCredentials", badCreds, []string{bucket, gw.endpoint, "access denied", "credentials"}, false},
		{"Unreachable", unreachable, []string{bucket, dead, "cannot reach", "endpoint"}, true},
		{"NoAnswer", hanging, []string{bucket, silent.Addr().String(), "no answer in time"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			start := time.Now()
			s, err := NewS3(ctx, c.opts)
			if err == nil {
				s.Close()
				t.Fatal("NewS3 succeeded")
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Fatalf("NewS3 took %v, beyond its context's bound", took)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if IsTransient(err) != c.transient {
				t.Errorf("IsTransient = %v, want %v: %v", !c.transient, c.transient, err)
			}
		})
	}
}

// TestS3ServerGoneIsTransient: once the server stops answering, every
// operation fails with an error that IsTransient, never ErrNotFound.
func TestS3ServerGoneIsTransient(t *testing.T) {
	gw := startVersityGW(t)
	opts := gw.options(gw.newBucket(t), "")
	opts.MaxRetries = 1
	s, err := NewS3(testCtx(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	put(t, s, "k", []byte("v"))
	gw.stop()

	ctx := testCtx(t)
	_, _, getErr := s.Get(ctx, "k")
	_, headErr := s.Head(ctx, "k")
	_, rangeErr := s.GetRange(ctx, "k", 0, 1)
	for i, err := range []error{
		s.Put(ctx, "k", strings.NewReader("w"), 1), getErr, headErr, rangeErr,
		s.Delete(ctx, "k"), s.List(ctx, "", func(ObjectInfo) error { return nil }),
	} {
		if !IsTransient(err) || errors.Is(err, ErrNotFound) {
			t.Errorf("op %d with the server gone = %v; want transient, not ErrNotFound", i, err)
		}
	}
}

func TestS3OptionsValidate(t *testing.T) {
	ok := S3Options{Bucket: "b", Endpoint: "http://127.0.0.1:9000"}
	for _, c := range []struct {
		name       string
		edit       func(*S3Options)
		wantPrefix string
		wantErr    string
	}{
		{"Minimal", func(*S3Options) {}, "", ""},
		{"AWSDefaultEndpoint", func(o *S3Options) { o.Endpoint = "" }, "", ""},
		{"PrefixGetsSlash", func(o *S3Options) { o.Prefix = "strata" }, "strata/", ""},
		{"PrefixKeepsSlash", func(o *S3Options) { o.Prefix = "a/b/" }, "a/b/", ""},
		{"NoBucket", func(o *S3Options) { o.Bucket = "" }, "", "no bucket"},
		{"OnlyAccessKey", func(o *S3Options) { o.AccessKey = "a" }, "", "both the access key and the secret key"},
		{"OnlySecretKey", func(o *S3Options) { o.SecretKey = "s" }, "", "both the access key and the secret key"},
		{"EndpointWithoutScheme", func(o *S3Options) { o.Endpoint = "127.0.0.1:9000" }, "", "not an http:// or https:// URL"},
		{"NegativeRetries", func(o *S3Options) { o.MaxRetries = -1 }, "", "MaxRetries"},
		{"TooManyRetries", func(o *S3Options) { o.MaxRetries = s3MaxRetriesMax + 1 }, "", "MaxRetries"},
		{"BadPrefix", func(o *S3Options) { o.Prefix = "/abs" }, "", "bad prefix"},
		{"DotDotPrefix", func(o *S3Options) { o.Prefix = "a/../b" }, "", "bad prefix"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := ok
			c.edit(&o)
			prefix, err := o.Validate()
			if c.wantErr == "" {
				if err != nil || prefix != c.wantPrefix {
					t.Fatalf("Validate = %q, %v; want %q", prefix, err, c.wantPrefix)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("Validate = %v, want an error containing %q", err, c.wantErr)
			}
		})
	}
}

// TestS3KeyTooLongAfterPrefix: the prefix counts against S3's key limit,
// and the store says so instead of sending a request S3 would refuse.
func TestS3KeyTooLongAfterPrefix(t *testing.T) {
	s := newOfflineS3(t, func(o *S3Options) { o.Prefix = "pfx" })
	key := strings.Repeat("k/", keyMaxBytes/2-1) + "k" // 1023 bytes: valid alone
	if err := ValidateKey(key); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Head(context.Background(), key); !errors.Is(err, ErrInvalidKey) {
		t.Fatalf("Head of a key too long after the prefix = %v, want ErrInvalidKey", err)
	}
}

// TestS3MissingBucketIsNotAMissingKey: if the bucket goes away, reads
// fail with an error naming it, never ErrNotFound, so that no caller
// concludes that its objects are gone.
func TestS3MissingBucketIsNotAMissingKey(t *testing.T) {
	gw := startVersityGW(t)
	bucket := gw.newBucket(t)
	s := gw.newStore(t, bucket, "")
	if _, err := s.(*s3Store).client.DeleteBucket(testCtx(t), &s3.DeleteBucketInput{Bucket: &bucket}); err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	_, headErr := s.Head(ctx, "k")
	_, _, getErr := s.Get(ctx, "k")
	_, rangeErr := s.GetRange(ctx, "k", 0, 1)
	for i, err := range []error{headErr, getErr, rangeErr, s.Delete(ctx, "k"), s.List(ctx, "", func(ObjectInfo) error { return nil })} {
		if err == nil || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), bucket) {
			t.Errorf("op %d on a deleted bucket = %v; want an error naming the bucket, not ErrNotFound", i, err)
		}
	}
	if !strings.Contains(headErr.Error(), "does not exist") {
		t.Errorf("Head's error does not say the bucket is missing: %v", headErr)
	}
}

// TestS3PutBuffersOnlySmallStreams: a body that cannot seek is buffered
// in memory up to putBufferMaxBytes; a larger one is refused unread.
func TestS3PutBuffersOnlySmallStreams(t *testing.T) {
	s := newOfflineS3(t, func(*S3Options) {})
	errRead := errors.New("body read")
	for _, c := range []struct {
		size int64
		want error
	}{{putBufferMaxBytes, errRead}, {putBufferMaxBytes + 1, ErrInvalidArgument}} {
		if err := s.Put(testCtx(t), "k", errReader{errRead}, c.size); !errors.Is(err, c.want) {
			t.Errorf("Put of a %d-byte stream = %v, want %v", c.size, err, c.want)
		}
	}
}

// newOfflineS3 returns an S3 store, as edit sets its options, on an
// endpoint where nothing listens, for what the store decides before it
// sends a request. It is closed when t ends.
func newOfflineS3(t *testing.T, edit func(*S3Options)) *s3Store {
	t.Helper()
	opts := S3Options{Bucket: "b", Endpoint: "http://127.0.0.1:1", AccessKey: "a", SecretKey: "s"}
	edit(&opts)
	s, err := newS3Store(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
