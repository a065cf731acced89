package record

import (
	"runtime"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Kafka's compression levels (KIP-390, the topic configs
// compression.gzip.level, compression.lz4.level, compression.zstd.level),
// with their defaults, at which CompressLevel is Compress.
const (
	DefaultGzipLevel = -1 // Deflater's default; else 1 (fastest) to 9
	DefaultLZ4Level  = 9  // the fast compressor; other levels, 1 to 17, are LZ4 HC
	DefaultZstdLevel = 3  // -131072 to 22
)

// DefaultLevel is codec's default level; 0 for a codec without levels.
func DefaultLevel(codec Codec) int {
	switch codec {
	case CodecGzip:
		return DefaultGzipLevel
	case CodecLZ4:
		return DefaultLZ4Level
	case CodecZstd:
		return DefaultZstdLevel
	}
	return 0
}

// CompressLevel is Compress at a Kafka compression level of codec. Levels
// map onto what the Go codecs have: gzip's are Deflater's; lz4 at 9 uses the
// fast compressor as Kafka does, and its other levels the HC compressor
// (1 to 8 as pierrec/lz4's levels of those numbers, 10 to 17 as its
// strongest, 9); zstd's fall into klauspost/compress's four speeds as that
// library maps zstd levels (below 3 fastest, 3-5 default, 6-9 better, 10
// and up best). Snappy and none have no level: level is ignored.
func CompressLevel(codec Codec, level int, src, dst []byte) ([]byte, error) {
	if level == DefaultLevel(codec) {
		return Compress(codec, src, dst)
	}
	switch codec {
	case CodecGzip:
		c := gzipLevels.pool(level).Get().(*gzipCompressor)
		defer gzipLevels.pool(level).Put(c)
		return compressStream(c.w, &c.out, src, dst)
	case CodecLZ4:
		c := lz4Levels.pool(level).Get().(*lz4Compressor)
		defer lz4Levels.pool(level).Put(c)
		return compressStream(c.w, &c.out, src, dst)
	case CodecZstd:
		z := zstdLevels.pool(level).Get().(*zstdEncoder)
		defer zstdLevels.pool(level).Put(z)
		return z.e.EncodeAll(src, dst), nil
	}
	return Compress(codec, src, dst)
}

// levelPools keeps a pool of compressors per level, made by newAt.
type levelPools struct {
	newAt func(level int) any
	m     sync.Map // level → *sync.Pool
}

func (lp *levelPools) pool(level int) *sync.Pool {
	if p, ok := lp.m.Load(level); ok {
		return p.(*sync.Pool)
	}
	p, _ := lp.m.LoadOrStore(level, &sync.Pool{New: func() any { return lp.newAt(level) }})
	return p.(*sync.Pool)
}

var gzipLevels = &levelPools{newAt: func(level int) any {
	w, err := gzip.NewWriterLevel(nil, level)
	if err != nil {
		panic("record: unvalidated gzip level: " + err.Error())
	}
	return &gzipCompressor{w: w}
}}

var lz4Levels = &levelPools{newAt: func(level int) any {
	c := &lz4Compressor{}
	c.w = lz4.NewWriter(&c.out)
	_ = c.w.Apply(lz4.BlockSizeOption(lz4.Block64Kb), lz4.CompressionLevelOption(lz4HCLevel(level)))
	return c
}}

// lz4HCLevel is pierrec/lz4's HC level for Kafka's lz4 level (not 9).
func lz4HCLevel(level int) lz4.CompressionLevel {
	n := min(max(level, 1), 9)
	return lz4.Level1 << (n - 1)
}

var zstdLevels = &levelPools{newAt: func(level int) any {
	e, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithZeroFrames(true),
		zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(level)))
	if err != nil {
		panic("record: zstd encoder options rejected: " + err.Error())
	}
	z := &zstdEncoder{e: e}
	runtime.AddCleanup(z, func(e *zstd.Encoder) { e.Close() }, e)
	return z
}}
