package record

import (
	"bytes"
	"testing"
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
