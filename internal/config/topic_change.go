package config

// CheckTopicChange applies the rules about going from a topic's current
// overrides to next that no single config states: Kafka's rules for
// turning tiered storage off and on again (KIP-950). remote.storage.enable
// may go from true to false only together with
// remote.log.delete.on.disable=true, which deletes the remote data (to stop
// uploading and keep the tier readable, remote.log.copy.disable=true is the
// way); and it may not go back to true while that deletion is still under
// way (remoteDataLeft: the topic still has remote segments).
func CheckTopicChange(cur, next map[string]string, b *Broker, remoteDataLeft bool) error {
	was, err := ResolveTopic(cur, b)
	if err != nil {
		return nil // nothing valid to compare with; next was validated on its own
	}
	now, err := ResolveTopic(next, b)
	if err != nil {
		return err
	}
	switch {
	case was.RemoteStorageEnable && !now.RemoteStorageEnable && !now.RemoteLogDeleteOnDisable:
		return &Error{Key: "remote.storage.enable", Value: "false",
			Msg: "turning tiered storage off deletes the topic's remote data and needs remote.log.delete.on.disable=true with it; " +
				"to stop uploads and keep the tier readable, set remote.log.copy.disable=true instead"}
	case !was.RemoteStorageEnable && now.RemoteStorageEnable && remoteDataLeft:
		return &Error{Key: "remote.storage.enable", Value: "true",
			Msg: "the remote data of this topic's earlier tiering is still being deleted; turn tiering on again once it is gone"}
	}
	return nil
}
