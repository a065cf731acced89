package objstore

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// S3Options configures a Store on an S3 bucket (AWS S3 or any
// S3-compatible server: MinIO, R2, GCS interop, versitygw).
type S3Options struct {
	// Bucket is required; it must exist.
	Bucket string
	// Prefix is prepended to every key, with a '/' between them ("strata"
	// and "strata/" are the same), and stripped from List's keys, so that
	// several stores can share a bucket without seeing each other's keys.
	Prefix string
	// Region; empty takes it from the standard AWS configuration (AWS_REGION,
	// the shared config file), else "us-east-1", which S3-compatible
	// servers accept.
	Region string
	// Endpoint is the server's base URL (http:// or https://); empty means
	// AWS S3 itself.
	Endpoint string
	// PathStyle addresses the bucket as endpoint/bucket/key rather than
	// bucket.endpoint/key; most S3-compatible servers need it.
	PathStyle bool
	// AccessKey and SecretKey are static credentials, set both or neither;
	// neither means the standard AWS credential chain (environment, shared
	// files, SSO, web identity, instance role).
	AccessKey, SecretKey string
	// MaxRetries is how many times a failed request is retried, with
	// backoff, before the error is returned; 0 means the SDK's default (2
	// retries, 3 attempts). At most s3MaxRetriesMax.
	MaxRetries int
}

const (
	s3MaxRetriesMax = 20
	// s3ProbeTimeout bounds NewS3's HeadBucket when ctx has no deadline, so
	// that a broker with a wrong endpoint fails at start instead of hanging.
	s3ProbeTimeout = 30 * time.Second
)

// Validate checks the options on their own (not against the server) and
// returns the prefix normalised to "" or "…/".
func (o S3Options) Validate() (prefix string, err error) {
	if o.Bucket == "" {
		return "", fmt.Errorf("objstore: s3: no bucket given (set strata.remote.s3.bucket)")
	}
	if (o.AccessKey == "") != (o.SecretKey == "") {
		return "", fmt.Errorf("objstore: s3 bucket %q: set both the access key and the secret key, or neither to use the standard AWS credential chain", o.Bucket)
	}
	if o.MaxRetries < 0 || o.MaxRetries > s3MaxRetriesMax {
		return "", fmt.Errorf("objstore: s3 bucket %q: MaxRetries %d is outside [0, %d]", o.Bucket, o.MaxRetries, s3MaxRetriesMax)
	}
	if o.Endpoint != "" {
		u, err := url.Parse(o.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return "", fmt.Errorf("objstore: s3 bucket %q: endpoint %q is not an http:// or https:// URL", o.Bucket, o.Endpoint)
		}
	}
	prefix = strings.TrimSuffix(o.Prefix, "/")
	if prefix == "" {
		return "", nil
	}
	if err := ValidateKey(prefix); err != nil {
		return "", fmt.Errorf("objstore: s3 bucket %q: bad prefix: %w", o.Bucket, err)
	}
	return prefix + "/", nil
}

// endpointName is how errors name the server.
func (o S3Options) endpointName() string {
	if o.Endpoint == "" {
		return "AWS S3"
	}
	return o.Endpoint
}

// NewS3 returns a Store on the bucket of opts, after checking with a
// HeadBucket (bounded by ctx, or by 30 s if ctx has no deadline) that the
// bucket exists and the credentials may use it. The error names the
// bucket, the endpoint, and what to check.
func NewS3(ctx context.Context, opts S3Options) (Store, error) {
	s, err := newS3Store(ctx, opts)
	if err != nil {
		return nil, err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s3ProbeTimeout)
		defer cancel()
	}
	if _, err := s.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &opts.Bucket}); err != nil {
		s.Close()
		return nil, probeError(opts, err)
	}
	return s, nil
}

// newS3Store builds the client without asking the server anything.
func newS3Store(ctx context.Context, opts S3Options) (*s3Store, error) {
	prefix, err := opts.Validate()
	if err != nil {
		return nil, err
	}
	loadOpts := []func(*config.LoadOptions) error{
		// Integrity: checksums on uploads wherever the API supports them.
		config.WithRequestChecksumCalculation(aws.RequestChecksumCalculationWhenSupported),
	}
	if opts.Region != "" {
		loadOpts = append(loadOpts, config.WithRegion(opts.Region))
	}
	if opts.AccessKey != "" {
		loadOpts = append(loadOpts, config.WithCredentialsProvider(
			credentials.NewStaticCredentialsProvider(opts.AccessKey, opts.SecretKey, "")))
	}
	if opts.MaxRetries > 0 {
		loadOpts = append(loadOpts, config.WithRetryMaxAttempts(opts.MaxRetries+1))
	}
	cfg, err := config.LoadDefaultConfig(ctx, loadOpts...)
	if err != nil {
		return nil, fmt.Errorf("objstore: s3 bucket %q at %s: loading the AWS configuration: %w", opts.Bucket, opts.endpointName(), err)
	}
	// Our own transport, so that Close can release its idle connections,
	// cloned from the SDK's (which carries AWS_CA_BUNDLE, if set), with more
	// idle connections per host than 2 or 10: remote reads fetch several
	// ranges of one bucket in parallel.
	transport := awshttp.NewBuildableClient().GetTransport()
	if b, ok := cfg.HTTPClient.(*awshttp.BuildableClient); ok {
		transport = b.GetTransport()
	}
	transport.MaxIdleConnsPerHost = 64
	cfg.HTTPClient = &http.Client{
		Transport: transport,
		// As the SDK's client: a redirect (a wrong region) is an answer to
		// report, not to follow with a signature made for another host.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		if opts.Endpoint != "" {
			o.BaseEndpoint = aws.String(opts.Endpoint)
		}
		o.UsePathStyle = opts.PathStyle
		// Ranged GETs carry no whole-object checksum; that is expected,
		// not worth a warning on every read.
		o.DisableLogOutputChecksumValidationSkipped = true
	})
	return &s3Store{client: client, transport: transport, opts: opts, prefix: prefix}, nil
}

type s3Store struct {
	client    *s3.Client
	transport *http.Transport
	opts      S3Options
	prefix    string // "" or ending in '/'
}

func (s *s3Store) Close() error {
	s.transport.CloseIdleConnections()
	return nil
}

func (s *s3Store) objectKey(key string) *string { return aws.String(s.prefix + key) }
