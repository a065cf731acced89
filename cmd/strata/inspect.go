package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-broker/strata/internal/record"
)

func inspectCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "inspect",
		Short: "Look inside Strata's files",
	}
	var records bool
	seg := &cobra.Command{
		Use:   "segment FILE.log",
		Short: "Dump the batches of a segment and check their CRCs (like Kafka's DumpLogSegments)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return dumpSegment(cmd.OutOrStdout(), args[0], records)
		},
	}
	seg.Flags().BoolVar(&records, "records", false, "also print each record's offset, key and value sizes")
	cmd.AddCommand(seg, inspectIndexCmd(), inspectTierCmd())
	return cmd
}

// dumpSegment prints one line per batch and fails if any batch is invalid.
func dumpSegment(w io.Writer, path string, withRecords bool) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("cannot read segment %s: %v", path, unwrapPath(err))
	}
	fmt.Fprintf(w, "Dumping %s (%d bytes)\n", path, len(data))
	pos, batches := 0, 0
	for pos < len(data) {
		h, err := record.ParseHeader(data[pos:])
		if err != nil || h.Size() < record.HeaderSize || pos+h.Size() > len(data) {
			if zeros := len(data) - pos; bytes.Count(data[pos:], []byte{0}) == zeros {
				// The broker zero-fills an active segment ahead of its data.
				fmt.Fprintf(w, "%d zero bytes after the data (filled ahead of an active segment's writes)\n", zeros)
				break
			}
			return fmt.Errorf("segment %s: torn or corrupt batch at byte %d after %d valid batches; Strata's recovery truncates here", path, pos, batches)
		}
		b := data[pos : pos+h.Size()]
		crcOK := record.ComputeCRC(b) == h.CRC
		fmt.Fprintf(w, "baseOffset: %d lastOffset: %d count: %d position: %d size: %d magic: %d compresscodec: %s crc: %d isvalid: %t producerId: %d producerEpoch: %d baseSequence: %d isTransactional: %t isControl: %t partitionLeaderEpoch: %d CreateTime: %s\n",
			h.BaseOffset, h.LastOffset(), h.NumRecords, pos, h.Size(), h.Magic, codecName(h.Codec()), h.CRC, crcOK,
			h.ProducerID, h.ProducerEpoch, h.BaseSequence, h.Transactional(), h.Control(), h.PartitionLeaderEpoch,
			time.UnixMilli(h.MaxTimestamp).UTC().Format(time.RFC3339Nano))
		if hz, ok := h.DeleteHorizon(); ok {
			// The cleaner stamped it (KIP-534): its tombstones or marker go
			// at the first cleaning pass after this time.
			fmt.Fprintf(w, "  deleteHorizonMs: %d (%s)\n", hz, time.UnixMilli(hz).UTC().Format(time.RFC3339Nano))
		}
		if !crcOK {
			return fmt.Errorf("segment %s: batch at offset %d (byte %d) fails its CRC; the segment is corrupt", path, h.BaseOffset, pos)
		}
		if withRecords {
			if err := dumpRecords(w, b, h); err != nil {
				return fmt.Errorf("segment %s: batch at offset %d: %w", path, h.BaseOffset, err)
			}
		}
		pos += h.Size()
		batches++
	}
	fmt.Fprintf(w, "%d batches, all valid\n", batches)
	return nil
}

func dumpRecords(w io.Writer, batch []byte, h record.Header) error {
	var rr record.RecordReader
	if err := rr.Reset(batch); err != nil {
		return err
	}
	for {
		r, ok := rr.Next()
		if !ok {
			break
		}
		fmt.Fprintf(w, "| offset: %d keySize: %d valueSize: %d headers: %d",
			int64(h.BaseOffset)+int64(r.OffsetDelta), len(r.Key), len(r.Value), r.NumHeaders)
		if h.Control() {
			// Kafka's DumpLogSegments names the marker too.
			m, err := record.ParseEndTxnMarker(r.Key, r.Value)
			if err != nil {
				return err
			}
			kind := "ABORT"
			if m.Commit {
				kind = "COMMIT"
			}
			fmt.Fprintf(w, " endTxnMarker: %s coordinatorEpoch: %d", kind, m.CoordinatorEpoch)
		}
		fmt.Fprintln(w)
	}
	return rr.Err()
}

func codecName(c record.Codec) string {
	switch c {
	case record.CodecNone:
		return "none"
	case record.CodecGzip:
		return "gzip"
	case record.CodecSnappy:
		return "snappy"
	case record.CodecLZ4:
		return "lz4"
	case record.CodecZstd:
		return "zstd"
	}
	return fmt.Sprintf("unknown(%d)", c)
}
