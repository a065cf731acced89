package partition

import "github.com/strata-broker/strata/internal/base"

// restartHighWatermark is the high watermark a partition opens with. With
// a checkpoint it is the checkpointed one, raised to the log start and to
// the local log start (segments leave the local log only below a high
// watermark: retention, DeleteRecords and tiering never pass it) and
// lowered to the log end (a crash may lose unsynced records the checkpoint
// had counted, on a replica that then refetches them). Without one it is
// the log end: right for a partition whose only replica is here, and
// corrected by the leader's fetch responses on a follower.
func restartHighWatermark(cp CheckpointedOffset, logStart, localLogStart, logEnd base.Offset) base.Offset {
	if !cp.Set {
		return logEnd
	}
	return min(max(cp.Offset, logStart, localLogStart), logEnd)
}
