package record

import (
	"bytes"
	"testing"

	"github.com/pierrec/lz4/v4"
)

// Every level of every codec round-trips; the default level is Compress;
// gzip's levels trade size as Deflater's do.
func TestCompressLevel(t *testing.T) {
	src := bytes.Repeat([]byte("strata compresses at the level a topic asks for; "), 2000)
	levels := map[Codec][]int{
		CodecGzip: {-1, 1, 5, 9},
		CodecLZ4:  {1, 4, 8, 9, 12, 17},
		CodecZstd: {-5, 1, 3, 7, 12, 22},
	}
	for codec, ls := range levels {
		for _, level := range ls {
			out, err := CompressLevel(codec, level, src, []byte("prefix"))
			if err != nil {
				t.Fatalf("%s level %d: %v", codecName(codec), level, err)
			}
			if !bytes.HasPrefix(out, []byte("prefix")) {
				t.Fatalf("%s level %d did not append to dst", codecName(codec), level)
			}
			back, err := Decompress(codec, out[len("prefix"):], nil)
			if err != nil || !bytes.Equal(back, src) {
				t.Fatalf("%s level %d: round trip: %v", codecName(codec), level, err)
			}
		}
		def, _ := CompressLevel(codec, DefaultLevel(codec), src, nil)
		plain, _ := Compress(codec, src, nil)
		if !bytes.Equal(def, plain) {
			t.Errorf("%s at its default level differs from Compress", codecName(codec))
		}
	}
	fast, _ := CompressLevel(CodecGzip, 1, src, nil)
	best, _ := CompressLevel(CodecGzip, 9, src, nil)
	if len(best) >= len(fast) {
		t.Errorf("gzip level 9 wrote %d bytes, level 1 %d: want smaller", len(best), len(fast))
	}
}

// Kafka's lz4 levels 1 to 17 map to the HC levels pierrec/lz4 has, 1 to 9;
// out of range clamps.
func TestLZ4HCLevel(t *testing.T) {
	for level, want := range map[int]lz4.CompressionLevel{-3: lz4.Level1, 0: lz4.Level1, 1: lz4.Level1, 2: lz4.Level2, 4: lz4.Level4, 9: lz4.Level9, 17: lz4.Level9} {
		if got := lz4HCLevel(level); got != want {
			t.Errorf("lz4HCLevel(%d) = %v, want %v", level, got, want)
		}
	}
}

// The defaults are Kafka's (KIP-390): gzip -1, lz4 9, zstd 3.
func TestDefaultLevelsAreKafkas(t *testing.T) {
	for codec, want := range map[Codec]int{CodecNone: 0, CodecGzip: -1, CodecSnappy: 0, CodecLZ4: 9, CodecZstd: 3} {
		if got := DefaultLevel(codec); got != want {
			t.Errorf("DefaultLevel(%s) = %d, want %d", codecName(codec), got, want)
		}
	}
}
