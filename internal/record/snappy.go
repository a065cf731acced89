package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/snappy"
)

// Java producers frame snappy the xerial way: an 8-byte magic, two 4-byte
// versions, then blocks of [big-endian length][raw snappy]. Others (librdkafka
// by default, some Go clients) send one raw snappy block. We write xerial, as
// the Java broker does, because every client reads it.
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

const (
	xerialHeaderLen = 16
	// xerialBlockLen is the uncompressed block size the Java stream uses.
	xerialBlockLen = 32 << 10
)

var errXerial = errors.New("malformed xerial framing")

// appendXerial appends src as xerial-framed snappy to dst. Empty input is
// written as a raw empty block instead: some readers (franz-go) take a bare
// 16-byte xerial header for raw snappy and fail.
func appendXerial(dst, src []byte) []byte {
	if len(src) == 0 {
		return append(dst, 0) // raw block: decoded length 0
	}
	dst = append(dst, xerialMagic...)
	dst = binary.BigEndian.AppendUint32(dst, 1) // version
	dst = binary.BigEndian.AppendUint32(dst, 1) // minimum compatible version
	for len(src) > 0 {
		n := min(len(src), xerialBlockLen)
		dst = slices.Grow(dst, 4+s2.MaxEncodedLen(n))
		at := len(dst) + 4
		block := s2.EncodeSnappy(dst[at:cap(dst)], src[:n])
		dst = binary.BigEndian.AppendUint32(dst, uint32(len(block)))
		dst = dst[:at+len(block)]
		src = src[n:]
	}
	return dst
}

func decompressSnappy(src, dst []byte, maxBytes int) ([]byte, error) {
	if len(src) >= xerialHeaderLen && bytes.HasPrefix(src, xerialMagic) {
		return decodeXerial(src[xerialHeaderLen:], dst, maxBytes)
	}
	return appendSnappyBlock(src, dst, maxBytes)
}

func decodeXerial(src, dst []byte, maxBytes int) ([]byte, error) {
	start := len(dst)
	for len(src) > 0 {
		if len(src) < 4 {
			return nil, errXerial
		}
		n := binary.BigEndian.Uint32(src)
		src = src[4:]
		if uint64(n) > uint64(len(src)) {
			return nil, errXerial
		}
		var err error
		dst, err = appendSnappyBlock(src[:n], dst, maxBytes-(len(dst)-start))
		if err != nil {
			return nil, err
		}
		src = src[n:]
	}
	return dst, nil
}

// appendSnappyBlock decodes one raw snappy block after dst. The block states
// its decoded length up front; checking it before decoding is what bounds
// the allocation. Strict decoding rejects s2 extensions that Java consumers
// could not read.
func appendSnappyBlock(src, dst []byte, maxBytes int) ([]byte, error) {
	n, err := snappy.DecodedLen(src)
	if err != nil {
		return nil, err
	}
	if n > maxBytes {
		return nil, errTooBig
	}
	dst = slices.Grow(dst, n)
	got, err := snappy.DecodeStrict(dst[len(dst):len(dst)+n], src)
	if err != nil {
		return nil, err
	}
	if len(got) != n {
		return nil, errXerial
	}
	return dst[:len(dst)+n], nil
}
