package record

import (
	"bytes"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/snappy/xerial"
	"github.com/twmb/franz-go/pkg/kgo"
)

func testPayloads() map[string][]byte {
	big := make([]byte, 300<<10) // several xerial and lz4 blocks
	for i := range big {
		big[i] = byte(i * 7 / 13)
	}
	return map[string][]byte{
		"empty":    {},
		"one byte": {'x'},
		"small":    []byte("hello, strata"),
		"big":      big,
	}
}

func TestCompressRoundTrip(t *testing.T) {
	for _, c := range allCodecs {
		for name, src := range testPayloads() {
			prefix := []byte("keep")
			comp, err := Compress(c, src, append([]byte(nil), prefix...))
			if err != nil || !bytes.HasPrefix(comp, prefix) {
				t.Fatalf("%s %s: compress: %v", codecName(c), name, err)
			}
			got, err := Decompress(c, comp[len(prefix):], append([]byte(nil), prefix...))
			if err != nil || !bytes.Equal(got[len(prefix):], src) || !bytes.HasPrefix(got, prefix) {
				t.Fatalf("%s %s: decompress: %v", codecName(c), name, err)
			}
		}
	}
}

// TestInteropWithFranzGo decodes what franz-go's producer writes, and has
// franz-go's consumer decode what we write.
func TestInteropWithFranzGo(t *testing.T) {
	codecs := map[Codec]kgo.CompressionCodec{
		CodecGzip:   kgo.GzipCompression(),
		CodecSnappy: kgo.SnappyCompression(),
		CodecLZ4:    kgo.Lz4Compression(),
		CodecZstd:   kgo.ZstdCompression(),
	}
	dec := kgo.DefaultDecompressor()
	for c, kc := range codecs {
		comp, err := kgo.DefaultCompressor(kc)
		if err != nil {
			t.Fatal(err)
		}
		for name, src := range testPayloads() {
			theirs, typ := comp.Compress(new(bytes.Buffer), src)
			if int8(typ) != int8(c) {
				t.Fatalf("franz-go used codec %d for %d", typ, c)
			}
			got, err := Decompress(c, theirs, nil)
			if err != nil || !bytes.Equal(got, src) {
				t.Fatalf("%s %s: decoding franz-go's output: %v", codecName(c), name, err)
			}
			ours, _ := Compress(c, src, nil)
			got, err = dec.Decompress(ours, kgo.CompressionCodecType(c))
			if err != nil || !bytes.Equal(got, src) {
				t.Fatalf("%s %s: franz-go decoding ours: %v", codecName(c), name, err)
			}
		}
	}
}

func TestSnappyAcceptsRawAndXerial(t *testing.T) {
	for name, src := range testPayloads() {
		for form, comp := range map[string][]byte{
			"raw":             s2.EncodeSnappy(nil, src),
			"xerial":          xerial.Encode(nil, src),
			"xerial no block": xerial.Encode(nil, nil),
		} {
			want := src
			if form == "xerial no block" {
				want = nil
			}
			got, err := Decompress(CodecSnappy, comp, nil)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("%s %s: %v", form, name, err)
			}
		}
	}
}

func TestDecompressRejectsGarbage(t *testing.T) {
	xerialTorn := xerial.Encode(nil, []byte("some bytes to frame"))
	for _, c := range allCodecs[1:] {
		for name, src := range map[string][]byte{
			"empty":       nil,
			"garbage":     []byte("definitely not compressed data"),
			"xerial torn": xerialTorn[:len(xerialTorn)-2],
		} {
			if c != CodecSnappy && name == "xerial torn" {
				continue
			}
			_, err := Decompress(c, src, nil)
			if e, ok := err.(*Error); !ok || e.Code != CodeCorruptMessage {
				t.Errorf("%s %s: got %v", codecName(c), name, err)
			}
		}
	}
	_, err := Decompress(Codec(6), []byte{1}, nil)
	mustCode(t, err, CodeCorruptMessage)
}

// TestDecompressBounded checks that every codec stops a decompression bomb at
// the bound instead of allocating its full output.
func TestDecompressBounded(t *testing.T) {
	const limit = 64 << 10
	zeros := make([]byte, 4*limit)
	for _, c := range allCodecs[1:] {
		comp, _ := Compress(c, zeros, nil)
		if _, err := decompress(c, comp, nil, limit); err == nil {
			t.Fatalf("%s: %d bytes passed a %d byte bound", codecName(c), len(zeros), limit)
		}
		if _, err := decompress(c, comp, nil, len(zeros)); err != nil {
			t.Fatalf("%s: exact bound rejected: %v", codecName(c), err)
		}
		// The bound counts what is decompressed, not what dst held.
		prefix := make([]byte, 3*limit, 8*limit)
		if _, err := decompress(c, comp, prefix, len(zeros)); err != nil {
			t.Fatalf("%s: exact bound after %d bytes of dst rejected: %v", codecName(c), len(prefix), err)
		}
		if _, err := decompress(c, comp, prefix, len(zeros)-1); err == nil {
			t.Fatalf("%s: %d bytes passed a %d byte bound after %d bytes of dst", codecName(c), len(zeros), len(zeros)-1, len(prefix))
		}
	}
}

// TestXerialFraming: the header is the one Java's snappy-java writes
// (magic, version 1, minimum compatible version 1), and a stream whose
// last block length is cut short is refused.
func TestXerialFraming(t *testing.T) {
	comp, _ := Compress(CodecSnappy, []byte("framed"), nil)
	want := append(append([]byte(nil), xerialMagic...), 0, 0, 0, 1, 0, 0, 0, 1)
	if !bytes.HasPrefix(comp, want) {
		t.Fatalf("xerial header % x, want % x", comp[:xerialHeaderLen], want)
	}
	for _, extra := range [][]byte{{0}, {0, 0, 0}} {
		if _, err := Decompress(CodecSnappy, append(append([]byte(nil), comp...), extra...), nil); err == nil {
			t.Errorf("%d stray bytes after the last block accepted", len(extra))
		}
	}
}

func TestCodecNames(t *testing.T) {
	for c, want := range map[Codec]string{-1: "codec -1", CodecNone: "none", CodecGzip: "gzip", CodecSnappy: "snappy", CodecLZ4: "lz4", CodecZstd: "zstd", 5: "codec 5"} {
		if got := codecName(c); got != want {
			t.Errorf("codecName(%d) = %q, want %q", c, got, want)
		}
	}
}

// TestCodecsReusePooledState checks that a warm decompress into a buffer
// with room allocates (almost) nothing: codec state comes from pools.
func TestCodecsReusePooledState(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	src := testPayloads()["big"]
	for _, c := range allCodecs[1:] {
		comp, _ := Compress(c, src, nil)
		dst := make([]byte, 0, 2*len(src))
		allocs := testing.AllocsPerRun(20, func() {
			if _, err := Decompress(c, comp, dst); err != nil {
				t.Fatal(err)
			}
		})
		if allocs > 2 {
			t.Errorf("%s: %v allocations per decompress", codecName(c), allocs)
		}
	}
}
