package log

import (
	"bytes"
	"errors"
	"testing"
)

// TestSealedSegmentOutlivesDeletion: the upload's descriptor reads the
// whole segment after retention deleted it, and the active segment and
// offsets that start no segment are refused.
func TestSealedSegmentOutlivesDeletion(t *testing.T) {
	l := mustOpen(t, testOptions(t))
	defer l.Close()
	first := concat(appendN(t, l, 5, 2, 50, 1000))
	if err := l.Roll(); err != nil {
		t.Fatal(err)
	}
	appendN(t, l, 3, 2, 50, 2000)

	if _, err := l.SealedSegment(10); !errors.Is(err, ErrNotSealed) {
		t.Fatalf("SealedSegment(active) = %v, want ErrNotSealed", err)
	}
	if _, err := l.SealedSegment(1); !errors.Is(err, ErrNotSealed) {
		t.Fatalf("SealedSegment(1) = %v, want ErrNotSealed", err)
	}
	s, err := l.SealedSegment(0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.File.Close()
	if s.Info.BaseOffset != 0 || s.Info.NextOffset != 10 || s.Info.SizeBytes != int64(len(first)) || s.Info.Active {
		t.Fatalf("Info = %+v", s.Info)
	}
	if err := l.DeleteSegmentsBefore(10); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, s.Info.SizeBytes)
	if _, err := s.File.ReadAt(got, 0); err != nil {
		t.Fatalf("read after delete: %v", err)
	}
	if !bytes.Equal(got, first) {
		t.Fatal("bytes read after delete differ from the appended batches")
	}
}
