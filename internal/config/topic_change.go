package config

// CheckTopicChange applies the rules about going from a topic's current
// overrides to next that no single config states: today, that tiered
// storage cannot be turned off. Kafka (KIP-950) allows that only together
// with remote.log.delete.on.disable=true, which deletes the remote data;
// Strata does not implement that deletion yet, and turning the tier off
// without it would leave remote data that retention no longer expires. A
// topic can still stop uploading and keep its tier readable with
// remote.log.copy.disable=true.
func CheckTopicChange(cur, next map[string]string, b *Broker) error {
	was, err := ResolveTopic(cur, b)
	if err != nil {
		return nil // nothing valid to compare with; next was validated on its own
	}
	now, err := ResolveTopic(next, b)
	if err != nil {
		return err
	}
	if was.RemoteStorageEnable && !now.RemoteStorageEnable {
		return &Error{Key: "remote.storage.enable", Value: "false",
			Msg: "turning tiered storage off is not supported yet (Kafka's remote.log.delete.on.disable, KIP-950); " +
				"to stop uploads and keep the tier readable, set remote.log.copy.disable=true"}
	}
	return nil
}
