package record

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// MaxDecompressedBytes bounds one batch's decompressed records. A batch is
// itself bounded by max.message.bytes (about 1 MiB by default), but
// compression ratios are not: without a bound a few kilobytes of zstd could
// make the broker allocate gigabytes.
const MaxDecompressedBytes = 128 << 20

// Compress appends src compressed with codec to dst, in the framing Kafka's
// Java client writes (gzip member, lz4 frame, xerial-framed snappy, zstd
// frame). CodecNone appends src as is.
func Compress(codec Codec, src, dst []byte) ([]byte, error) {
	switch codec {
	case CodecNone:
		return append(dst, src...), nil
	case CodecGzip:
		return compressGzip(src, dst)
	case CodecSnappy:
		return appendXerial(dst, src), nil
	case CodecLZ4:
		return compressLZ4(src, dst)
	case CodecZstd:
		return compressZstd(src, dst), nil
	}
	return nil, corrupt("unknown compression codec %d", codec)
}

// Decompress appends src decompressed with codec to dst. Snappy input may be
// raw or xerial-framed, since producers send both. Failures are *Error with
// CORRUPT_MESSAGE: the input came from a client or a disk.
func Decompress(codec Codec, src, dst []byte) ([]byte, error) {
	return decompress(codec, src, dst, MaxDecompressedBytes)
}

func decompress(codec Codec, src, dst []byte, maxBytes int) ([]byte, error) {
	if codec != CodecNone && len(src) == 0 {
		// Every codec frames even empty input; some decoders would
		// quietly accept nothing at all.
		return nil, corrupt("empty %s payload", codecName(codec))
	}
	var out []byte
	var err error
	switch codec {
	case CodecNone:
		out, err = append(dst, src...), nil
	case CodecGzip:
		out, err = decompressGzip(src, dst, maxBytes)
	case CodecSnappy:
		out, err = decompressSnappy(src, dst, maxBytes)
	case CodecLZ4:
		out, err = decompressLZ4(src, dst, maxBytes)
	case CodecZstd:
		out, err = decompressZstd(src, dst, maxBytes)
	default:
		return nil, corrupt("unknown compression codec %d", codec)
	}
	if err != nil {
		return nil, corrupt("%s payload: %v", codecName(codec), err)
	}
	return out, nil
}

func codecName(c Codec) string {
	names := [...]string{"none", "gzip", "snappy", "lz4", "zstd"}
	if c < 0 || int(c) >= len(names) {
		return fmt.Sprintf("codec %d", c)
	}
	return names[c]
}

// errTooBig is wrapped into CORRUPT_MESSAGE: Kafka has no better code for a
// decompression bomb.
var errTooBig = &Error{Code: CodeCorruptMessage, Msg: "decompressed size exceeds MaxDecompressedBytes"}

// appendWriter is an io.Writer appending to b; pooled with each compressor
// so that Reset(&w) does not allocate.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

type gzipCompressor struct {
	w   *gzip.Writer
	out appendWriter
}

var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.DefaultCompression)
	return &gzipCompressor{w: w}
}}

func compressGzip(src, dst []byte) ([]byte, error) {
	c := gzipWriters.Get().(*gzipCompressor)
	defer gzipWriters.Put(c)
	return compressStream(c.w, &c.out, src, dst)
}

// streamWriter is a pooled compressing writer that can be pointed at a new
// output (gzip, lz4).
type streamWriter interface {
	io.WriteCloser
	Reset(io.Writer)
}

// compressStream compresses src through w into dst, using out as w's sink.
func compressStream(w streamWriter, out *appendWriter, src, dst []byte) ([]byte, error) {
	out.b = dst
	w.Reset(out)
	_, err := w.Write(src)
	if err == nil {
		err = w.Close()
	}
	b := out.b
	out.b = nil // the pool must not keep the caller's buffer alive
	return b, err
}

type lz4Compressor struct {
	w   *lz4.Writer
	out appendWriter
}

var lz4Writers = sync.Pool{New: func() any {
	c := &lz4Compressor{}
	c.w = lz4.NewWriter(&c.out)
	// 64 KiB blocks, as the Java producer writes: every reader accepts
	// them, and a pooled writer holds far less than the 4 MiB default.
	_ = c.w.Apply(lz4.BlockSizeOption(lz4.Block64Kb))
	return c
}}

func compressLZ4(src, dst []byte) ([]byte, error) {
	c := lz4Writers.Get().(*lz4Compressor)
	defer lz4Writers.Put(c)
	return compressStream(c.w, &c.out, src, dst)
}

// zstdEncoder wraps the encoder so that a cleanup can close it when the pool
// drops it.
type zstdEncoder struct{ e *zstd.Encoder }

var zstdEncoders = sync.Pool{New: func() any {
	e, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithZeroFrames(true))
	if err != nil {
		panic("record: zstd encoder options rejected: " + err.Error())
	}
	z := &zstdEncoder{e: e}
	runtime.AddCleanup(z, func(e *zstd.Encoder) { e.Close() }, e)
	return z
}}

func compressZstd(src, dst []byte) []byte {
	z := zstdEncoders.Get().(*zstdEncoder)
	defer zstdEncoders.Put(z)
	return z.e.EncodeAll(src, dst)
}

type zstdDecoder struct{ d *zstd.Decoder }

var zstdDecoders = sync.Pool{New: func() any {
	d, err := zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderLowmem(true),
		// The decoder refuses frames declaring more, before allocating.
		zstd.WithDecoderMaxMemory(MaxDecompressedBytes))
	if err != nil {
		panic("record: zstd decoder options rejected: " + err.Error())
	}
	z := &zstdDecoder{d: d}
	runtime.AddCleanup(z, func(d *zstd.Decoder) { d.Close() }, d)
	return z
}}

func decompressZstd(src, dst []byte, maxBytes int) ([]byte, error) {
	z := zstdDecoders.Get().(*zstdDecoder)
	defer zstdDecoders.Put(z)
	start := len(dst)
	out, err := z.d.DecodeAll(src, dst)
	if err != nil {
		return nil, err
	}
	if len(out)-start > maxBytes {
		return nil, errTooBig
	}
	return out, nil
}

// gzipDecompressor keeps the reader and its source together so that a
// decompress allocates neither.
type gzipDecompressor struct {
	r   gzip.Reader
	src bytes.Reader
}

var gzipReaders = sync.Pool{New: func() any { return new(gzipDecompressor) }}

func decompressGzip(src, dst []byte, maxBytes int) ([]byte, error) {
	g := gzipReaders.Get().(*gzipDecompressor)
	defer gzipReaders.Put(g)
	g.src.Reset(src)
	if err := g.r.Reset(&g.src); err != nil {
		return nil, err
	}
	out, err := readBounded(&g.r, dst, maxBytes)
	g.src.Reset(nil)
	return out, err
}

type lz4Decompressor struct {
	r   *lz4.Reader
	src bytes.Reader
}

var lz4Readers = sync.Pool{New: func() any { return &lz4Decompressor{r: lz4.NewReader(nil)} }}

func decompressLZ4(src, dst []byte, maxBytes int) ([]byte, error) {
	l := lz4Readers.Get().(*lz4Decompressor)
	defer lz4Readers.Put(l)
	l.src.Reset(src)
	l.r.Reset(&l.src)
	out, err := readBounded(l.r, dst, maxBytes)
	l.src.Reset(nil)
	return out, err
}

// readBounded appends all of r to dst, failing once more than maxBytes
// arrive. Reads never ask for more than the bound allows, so a bomb costs
// at most maxBytes+1 of buffer.
func readBounded(r io.Reader, dst []byte, maxBytes int) ([]byte, error) {
	start := len(dst)
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		room := min(cap(dst)-len(dst), maxBytes+1-(len(dst)-start))
		n, err := r.Read(dst[len(dst) : len(dst)+room])
		dst = dst[:len(dst)+n]
		if len(dst)-start > maxBytes {
			return nil, errTooBig
		}
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return nil, err
		}
	}
}
