package metadata

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/strata-broker/strata/internal/vfs"
)

// quorumModeFile records, in Options.Dir, whether the Raft state there was
// created by a single node or by a member of a multi-node quorum. The two
// cannot be swapped by changing the configuration: a single node's log
// holds a configuration of itself at an in-memory address, so with other
// voters in Voters it would keep electing itself while they bootstrap a
// second quorum; a member's log without Voters would wait for peers it
// cannot reach. One change is allowed: a single node started with Voters
// naming only itself becomes the one voter of a cluster's quorum (its
// address is corrected when it takes office, takeOffice), which others
// then join and AddVoter grows.
const quorumModeFile = "quorum-mode"

const (
	modeSingle  = "single"
	modeCluster = "cluster"
)

func (o Options) quorumMode() string {
	if o.clustered() {
		return modeCluster
	}
	return modeSingle
}

// checkQuorumMode refuses Raft state made in the other mode. State from
// before the file existed was made by a single node.
func (o Options) checkQuorumMode(existing bool) error {
	path := filepath.Join(o.Dir, quorumModeFile)
	if !existing {
		if err := vfs.WriteFileAtomic(o.Dir, quorumModeFile, []byte(o.quorumMode()+"\n")); err != nil {
			return fmt.Errorf("metadata: write %s: %w", path, err)
		}
		return nil
	}
	data, err := os.ReadFile(path)
	mode := strings.TrimSpace(string(data))
	switch {
	case errors.Is(err, os.ErrNotExist):
		mode = modeSingle
	case err != nil:
		return fmt.Errorf("metadata: read %s: %w", path, err)
	}
	switch {
	case mode == o.quorumMode():
		return nil
	case mode == modeSingle && o.isVoter() && len(o.Voters) == 1:
		if err := vfs.WriteFileAtomic(o.Dir, quorumModeFile, []byte(modeCluster+"\n")); err != nil {
			return fmt.Errorf("metadata: write %s: %w", path, err)
		}
		return nil
	case mode == modeSingle:
		return fmt.Errorf("metadata in %s belongs to a single-node broker, which cannot join other voters (controller.quorum.voters); to grow it into a cluster, start it with controller.quorum.voters naming only itself, start the other nodes with that, and add them with AddRaftVoter (kafka-metadata-quorum add-controller); or give this node a new data dir", o.Dir)
	case mode == modeCluster:
		return fmt.Errorf("metadata in %s belongs to a cluster member; start it with the cluster's controller.quorum.voters or controller.quorum.bootstrap.servers", o.Dir)
	}
	return fmt.Errorf("metadata: %s holds %q, neither %s nor %s; restore it or remove it", path, mode, modeSingle, modeCluster)
}
