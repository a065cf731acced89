package api

import (
	"cmp"
	"crypto/rand"
	"encoding/binary"
	"os"
	"slices"
	"sync/atomic"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/partition"
)

// Splice asks the server to send Size bytes of File from Pos in place of
// the response bytes field that holds exactly Marker (see server.Splice).
type Splice struct {
	Marker []byte
	File   *os.File
	Pos    int64
	Size   int64

	// order is where the field lies in the response: splices go to the
	// server in that order, whichever order the partitions were read in.
	order int
	// region is what File and its range came from; closing it closes
	// File and lets a chunk cache reuse the bytes.
	region partition.Region
}

// A fetch reads from a file region (sent with sendfile) instead of copying
// when the partition's limit allows a large read and the consumer is
// behind by enough records to fill it; a consumer at the tail reads a few
// small batches, for which one pread is cheaper than dup+sendfile+close.
const (
	spliceMinBytes   = 64 << 10
	spliceMinRecords = 64
)

// fetchBuffers holds what one fetch response points into until it is
// written: pooled read bytes and file regions.
type fetchBuffers struct {
	read    *readBuffer
	splices []Splice
}

func newFetchBuffers() *fetchBuffers { return &fetchBuffers{read: getReadBuffer()} }

// reset drops what a previous fill read, before filling again.
func (f *fetchBuffers) reset() {
	f.read.b = f.read.b[:0]
	for _, s := range f.splices {
		s.region.Close()
	}
	f.splices = f.splices[:0]
}

// release is called once the response is written.
func (f *fetchBuffers) release() {
	f.reset()
	putReadBuffer(f.read)
	f.read = nil
}

// spliceList is the regions in the order of their fields in the response,
// as the server finds the markers.
func (f *fetchBuffers) spliceList() []Splice {
	slices.SortFunc(f.splices, func(a, b Splice) int { return cmp.Compare(a.order, b.order) })
	return f.splices
}

// wantsRegion says whether a read of up to limit bytes from offset is worth
// serving as a file region.
func wantsRegion(limit int, offset, highWatermark base.Offset) bool {
	return limit >= spliceMinBytes && highWatermark-offset >= spliceMinRecords
}

// addRegion records a region to splice as the records of the partition
// at place order of the response, and returns its marker.
func (f *fetchBuffers) addRegion(r partition.Region, order int) []byte {
	m := newMarker()
	f.splices = append(f.splices, Splice{Marker: m, File: r.File, Pos: r.Pos, Size: r.Size, order: order, region: r})
	return m
}

// markerPrefix makes markers unique to this process; the counter makes them
// unique within it. A marker colliding with real response bytes would need
// those bytes to match 128 bits, and the server also checks the length
// prefix in front of it.
var (
	markerPrefix  = randomUint64()
	markerCounter atomic.Uint64
)

func newMarker() []byte {
	m := make([]byte, 16)
	binary.BigEndian.PutUint64(m, markerPrefix)
	binary.BigEndian.PutUint64(m[8:], markerCounter.Add(1))
	return m
}

func randomUint64() uint64 {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("api: no randomness for fetch markers: " + err.Error())
	}
	return binary.BigEndian.Uint64(b[:])
}
