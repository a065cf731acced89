package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
)

// s3Error is an S3 failure classified at the gateway: errors.Is answers
// ErrNotFound and ErrTransient from what the SDK returned, and Unwrap gives
// the SDK's error for the details (status, request id).
type s3Error struct {
	op, key, bucket string
	err             error
	notFound        bool
	transient       bool
}

func (e *s3Error) Error() string {
	return fmt.Sprintf("objstore: s3 %s %s (bucket %q): %v", e.op, e.key, e.bucket, e.err)
}

func (e *s3Error) Unwrap() error { return e.err }

func (e *s3Error) Is(target error) bool {
	return (target == ErrNotFound && e.notFound) || (target == ErrTransient && e.transient)
}

// opError classifies err (nil stays nil).
func (s *s3Store) opError(op, key string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("objstore: s3 %s %s: %w", op, key, err)
	}
	return &s3Error{
		op: op, key: key, bucket: s.opts.Bucket, err: err,
		notFound:  isS3NotFound(err),
		transient: isS3Transient(err),
	}
}

// isS3NotFound: a missing key answers 404, with the code NoSuchKey on a
// GET and no body (hence "NotFound") on a HEAD. A missing bucket is not a
// missing object: it is a configuration error, reported as such.
func isS3NotFound(err error) bool {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "NoSuchKey", "NotFound":
			return true
		case "NoSuchBucket":
			return false
		}
	}
	return httpStatus(err) == 404
}

// isS3Transient uses the SDK's own judgement of what is worth retrying
// (throttling, 5xx, connection errors, timeouts) after its retries ran out.
func isS3Transient(err error) bool {
	if isNetworkTransient(err) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	return retry.IsErrorRetryables(retry.DefaultRetryables).IsErrorRetryable(err) == aws.TrueTernary
}

// httpStatus is the HTTP status of the response that failed, or 0.
func httpStatus(err error) int {
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// probeError explains a failed HeadBucket in one line: which bucket, which
// endpoint, and what to check.
func probeError(o S3Options, err error) error {
	var hint string
	status := httpStatus(err)
	switch {
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled):
		hint = "no answer in time: check that the endpoint is reachable"
	case status == 404:
		hint = "the bucket does not exist: create it, or fix the bucket name"
	case status == 403 || status == 401:
		hint = "access denied: check the credentials and that they may use this bucket"
	case status == 301 || status == 400:
		hint = "the server refused the request: check the region and the path-style setting"
	case status != 0:
		hint = fmt.Sprintf("the server answered HTTP %d", status)
	default:
		hint = "cannot reach the endpoint: check the endpoint URL and that the server is running"
	}
	return fmt.Errorf("objstore: s3 bucket %q at %s: %s: %w", o.Bucket, o.endpointName(), hint, err)
}

// wrapBody names the object in the errors of a body read that fails
// midway (a connection cut), keeping them classifiable.
func (s *s3Store) wrapBody(op, key string, body io.ReadCloser) io.ReadCloser {
	return &s3Body{ReadCloser: body, s: s, op: op, key: key}
}

type s3Body struct {
	io.ReadCloser
	s       *s3Store
	op, key string
}

func (b *s3Body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		err = b.s.opError(b.op, b.key, err)
	}
	return n, err
}
