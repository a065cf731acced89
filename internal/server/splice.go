package server

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// Splice fills one bytes field of a response from a file: the handler puts
// Marker (unique in the response) in the field, and the writer sends Size
// bytes of File from Pos in its place — with sendfile on plain TCP, so log
// bytes never pass through user space. The handler owns File.
type Splice struct {
	Marker []byte
	File   *os.File
	Pos    int64
	Size   int64
}

// piece is one part of a spliced response: bytes, or a file range.
type piece struct {
	bytes []byte
	file  *os.File
	pos   int64
	size  int64
}

// errSplice marks a response whose markers cannot be found as promised.
var errSplice = errors.New("server: splice marker not found")

// splicePieces cuts the encoded frame at each splice's marker and its length
// prefix, and returns the pieces to send, with the frame's size field
// patched to the final size. Markers are searched in order, so the cost is
// the response's non-record bytes. flexible says how the bytes field's
// length is encoded: a uvarint of length+1, else an int32.
func splicePieces(frame []byte, splices []Splice, flexible bool) ([]piece, error) {
	pieces := make([]piece, 0, 2*len(splices)+1)
	size := int64(len(frame) - 4)
	cursor := 0 // start of the bytes not yet cut into pieces
	for _, s := range splices {
		i := bytes.Index(frame[max(cursor, 4):], s.Marker)
		if i < 0 {
			return nil, fmt.Errorf("%w: %x", errSplice, s.Marker)
		}
		at := max(cursor, 4) + i
		oldPrefix := lengthPrefix(len(s.Marker), flexible)
		fieldAt := at - len(oldPrefix)
		if fieldAt < max(cursor, 4) || !bytes.Equal(frame[fieldAt:at], oldPrefix) {
			return nil, fmt.Errorf("%w: marker %x is not a whole bytes field", errSplice, s.Marker)
		}
		// The new length prefix (at most 5 bytes) always fits where the old
		// prefix and the marker (17+ bytes) were.
		n := copy(frame[fieldAt:], lengthPrefix(int(s.Size), flexible))
		pieces = append(pieces, piece{bytes: frame[cursor : fieldAt+n]}, piece{file: s.File, pos: s.Pos, size: s.Size})
		size += int64(n-len(oldPrefix)-len(s.Marker)) + s.Size
		cursor = at + len(s.Marker)
	}
	if size > 1<<31-1 {
		return nil, fmt.Errorf("server: spliced response of %d bytes exceeds the 2 GiB frame limit", size)
	}
	binary.BigEndian.PutUint32(frame, uint32(size))
	return append(pieces, piece{bytes: frame[cursor:]}), nil
}

func lengthPrefix(n int, flexible bool) []byte {
	if flexible {
		return binary.AppendUvarint(nil, uint64(n)+1)
	}
	return binary.BigEndian.AppendUint32(nil, uint32(n))
}

// writePieces sends the pieces in order.
func writePieces(nc net.Conn, pieces []piece) error {
	for _, p := range pieces {
		if p.file == nil {
			if _, err := nc.Write(p.bytes); err != nil {
				return err
			}
			continue
		}
		if err := sendFileRange(nc, p.file, p.pos, p.size); err != nil {
			return err
		}
	}
	return nil
}

// copyBufferBytes is the pooled buffer a file range is copied through when
// sendfile cannot be used.
const copyBufferBytes = 256 << 10

// sendFileRange sends [pos, pos+size) of f: with sendfile(2) on a TCP
// connection, else by reading and writing.
func sendFileRange(nc net.Conn, f *os.File, pos, size int64) error {
	tc, ok := nc.(*net.TCPConn)
	if !ok { // TLS: the bytes must be encrypted in user space
		buf := getBuffer(copyBufferBytes)
		defer putBuffer(buf)
		_, err := io.CopyBuffer(nc, io.NewSectionReader(f, pos, size), *buf)
		return err
	}
	src, err := f.SyscallConn()
	if err != nil {
		return err
	}
	dst, err := tc.SyscallConn()
	if err != nil {
		return err
	}
	var sendErr error
	ctlErr := src.Control(func(srcFd uintptr) {
		sendErr = sendfileAll(dst, int(srcFd), pos, size)
	})
	return errors.Join(ctlErr, sendErr)
}

// sendfileAll loops sendfile until size bytes are sent, waiting for the
// socket to be writable through the runtime poller (which honours the write
// deadline).
func sendfileAll(dst syscall.RawConn, srcFd int, pos, size int64) error {
	var err error
	werr := dst.Write(func(fd uintptr) bool {
		for size > 0 {
			n, e := unix.Sendfile(int(fd), srcFd, &pos, int(min(size, 1<<30)))
			if n > 0 {
				size -= int64(n)
			}
			switch {
			case e == unix.EAGAIN:
				return false // wait until writable
			case e == unix.EINTR:
				continue
			case e != nil:
				err = e
				return true
			case n == 0:
				err = io.ErrUnexpectedEOF // the file is shorter than promised
				return true
			}
		}
		return true
	})
	return errors.Join(werr, err)
}
