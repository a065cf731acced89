package objstore

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// checkKey is the gateway of every single-key operation of the S3 store:
// the rules of ValidateKey, and room for the key after the prefix.
func (s *s3Store) checkKey(ctx context.Context, key string) error {
	if err := checkKeyOp(ctx, key); err != nil {
		return err
	}
	if len(s.prefix)+len(key) > keyMaxBytes {
		return keyError(key, fmt.Sprintf("is too long after the prefix %q (S3 allows %d bytes)", s.prefix, keyMaxBytes))
	}
	return nil
}

// Put is one PutObject with ContentLength, which S3 makes atomic. A body
// that is an io.ReadSeeker (a file, a bytes.Reader) is sent as is, so the
// SDK can checksum it and retry; other bodies are read into memory first,
// as the SDK cannot sign or retry a stream it cannot rewind over plain
// HTTP; so that memory stays bounded, only up to putBufferMaxBytes.
func (s *s3Store) Put(ctx context.Context, key string, body io.Reader, size int64) error {
	if err := s.checkKey(ctx, key); err != nil {
		return err
	}
	if err := checkPut(ctx, key, size); err != nil {
		return err
	}
	var rs io.ReadSeeker
	if seeker, ok := body.(io.ReadSeeker); ok {
		// Check the length up front, as the directory and memory stores do
		// while copying: an HTTP request must not be sent with a wrong one.
		if err := checkSeekerLength(seeker, size); err != nil {
			return fmt.Errorf("objstore: put %s: %w", key, err)
		}
		rs = seeker
	} else {
		if size > putBufferMaxBytes {
			return fmt.Errorf("objstore: put %s: a body of %d bytes that cannot seek would be buffered in memory; pass an io.ReadSeeker (or use PutFile) above %d bytes: %w",
				key, size, putBufferMaxBytes, ErrInvalidArgument)
		}
		data, err := readExactly(ctx, body, size)
		if err != nil {
			return fmt.Errorf("objstore: put %s: %w", key, err)
		}
		rs = bytes.NewReader(data)
	}
	_, err := s.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket:        &s.opts.Bucket,
		Key:           s.objectKey(key),
		Body:          rs,
		ContentLength: aws.Int64(size),
	})
	return s.opError("put", key, err)
}

const putBufferMaxBytes = 64 << 20

// checkSeekerLength checks that r holds exactly size bytes from where it
// is, and leaves it there.
func checkSeekerLength(r io.Seeker, size int64) error {
	cur, err := r.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	end, err := r.Seek(0, io.SeekEnd)
	if err != nil {
		return err
	}
	if _, err := r.Seek(cur, io.SeekStart); err != nil {
		return err
	}
	if end-cur != size {
		return fmt.Errorf("body holds %d bytes, not %d: %w", end-cur, size, ErrSizeMismatch)
	}
	return nil
}

func (s *s3Store) PutFile(ctx context.Context, key, path string) error {
	return putFile(ctx, s, key, path)
}

func (s *s3Store) Get(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	if err := s.checkKey(ctx, key); err != nil {
		return nil, 0, err
	}
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.opts.Bucket, Key: s.objectKey(key)})
	if err != nil {
		return nil, 0, s.opError("get", key, err)
	}
	return s.wrapBody("get", key, out.Body), aws.ToInt64(out.ContentLength), nil
}

// GetRange is a GetObject with a Range header. S3 answers a range that
// starts at or past the end with 416; Head then tells an empty range at
// the end (off == size, which the contract allows) from an invalid one.
func (s *s3Store) GetRange(ctx context.Context, key string, off, n int64) (io.ReadCloser, error) {
	if err := s.checkKey(ctx, key); err != nil {
		return nil, err
	}
	if off < 0 {
		_, err := checkRange(key, off, n, 0)
		return nil, err
	}
	if n == 0 {
		return s.emptyRange(ctx, key, off)
	}
	rng := fmt.Sprintf("bytes=%d-", off)
	if n > 0 && n <= math.MaxInt64-off { // else "to the end" is what n asks for
		rng = fmt.Sprintf("bytes=%d-%d", off, off+n-1)
	}
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.opts.Bucket, Key: s.objectKey(key), Range: &rng}, noRangeChecksum)
	if err != nil {
		if httpStatus(err) == 416 {
			return s.emptyRange(ctx, key, off)
		}
		return nil, s.opError("get", key, err)
	}
	return s.wrapBody("get", key, out.Body), nil
}

// noRangeChecksum turns off the SDK's checksum of ranged GET bodies. A
// server may send the whole object's checksum when the range covers it all
// (versitygw does), and the SDK then runs a CRC-32 over every byte: a
// twentieth of the broker's CPU in remote reads, for bytes whose batches
// the tier checks with their own CRC-32C anyway. Whole-object GETs keep it.
func noRangeChecksum(o *s3.Options) {
	o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
}

func (s *s3Store) emptyRange(ctx context.Context, key string, off int64) (io.ReadCloser, error) {
	size, err := s.Head(ctx, key)
	if err != nil {
		return nil, err
	}
	if _, err := checkRange(key, off, 0, size); err != nil {
		return nil, err
	}
	return io.NopCloser(strings.NewReader("")), nil
}

func (s *s3Store) Head(ctx context.Context, key string) (int64, error) {
	if err := s.checkKey(ctx, key); err != nil {
		return 0, err
	}
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.opts.Bucket, Key: s.objectKey(key)})
	if err != nil && isS3NotFound(err) {
		// A HEAD answer has no body, so a missing bucket looks like a
		// missing key; ask about the bucket before saying "not found".
		if _, berr := s.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &s.opts.Bucket}); berr != nil {
			return 0, &s3Error{op: "head", key: key, bucket: s.opts.Bucket, err: probeError(s.opts, berr), transient: isS3Transient(berr)}
		}
	}
	if err != nil {
		return 0, s.opError("head", key, err)
	}
	return aws.ToInt64(out.ContentLength), nil
}

// List pages through ListObjectsV2 (1000 keys a page), which returns keys
// in UTF-8 byte order. Objects under the prefix whose names are not valid
// keys (a "dir/" marker made by a console, say) are skipped: no Store
// could name them.
func (s *s3Store) List(ctx context.Context, prefix string, fn func(ObjectInfo) error) error {
	if err := validatePrefix(prefix); err != nil {
		return err
	}
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{
		Bucket: &s.opts.Bucket,
		Prefix: aws.String(s.prefix + prefix),
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return s.opError("list", prefix, err)
		}
		for _, o := range page.Contents {
			key, ok := strings.CutPrefix(aws.ToString(o.Key), s.prefix)
			if !ok || ValidateKey(key) != nil {
				continue
			}
			oi := ObjectInfo{Key: key, Size: aws.ToInt64(o.Size), LastModified: aws.ToTime(o.LastModified)}
			if err := fn(oi); err != nil {
				return err
			}
		}
	}
	return nil
}

// Delete is DeleteObject, which S3 answers with success for a missing key;
// some S3-compatible servers answer 404 instead, which is success too.
func (s *s3Store) Delete(ctx context.Context, key string) error {
	if err := s.checkKey(ctx, key); err != nil {
		return err
	}
	_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.opts.Bucket, Key: s.objectKey(key)})
	if err != nil && isS3NotFound(err) {
		return nil
	}
	return s.opError("delete", key, err)
}
