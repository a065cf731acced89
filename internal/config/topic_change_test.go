package config

import (
	"errors"
	"testing"
)

func TestCheckTopicChange(t *testing.T) {
	b := &Broker{RemoteStorageSystemEnable: true}
	tiered := map[string]string{"remote.storage.enable": "true"}
	tests := []struct {
		name      string
		cur, next map[string]string
		left      bool   // the topic still has remote segments
		wantKey   string // "" for no error
	}{
		{"plain change", map[string]string{}, map[string]string{"retention.ms": "1000"}, false, ""},
		{"from a stored config that no longer resolves", map[string]string{"retention.ms": "forever"}, map[string]string{"retention.ms": "1000"}, false, ""},
		{"turning tiering on", map[string]string{}, tiered, false, ""},
		{"turning tiering on while the old remote data is deleted", map[string]string{}, tiered, true, "remote.storage.enable"},
		{"staying tiered", tiered, map[string]string{"remote.storage.enable": "true", "remote.log.copy.disable": "true"}, true, ""},
		{"turning tiering off", tiered, map[string]string{}, true, "remote.storage.enable"},
		{"turning tiering off, deleting the remote data", tiered,
			map[string]string{"remote.storage.enable": "false", "remote.log.delete.on.disable": "true"}, true, ""},
		{"turning tiering off, keeping the remote data", tiered,
			map[string]string{"remote.storage.enable": "false", "remote.log.delete.on.disable": "false"}, true, "remote.storage.enable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckTopicChange(tt.cur, tt.next, b, tt.left)
			var ce *Error
			switch {
			case tt.wantKey == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tt.wantKey != "" && (!errors.As(err, &ce) || ce.Key != tt.wantKey):
				t.Fatalf("error %v, want one naming %s", err, tt.wantKey)
			}
		})
	}
}
