package config

import (
	"maps"
	"testing"
)

// PropertiesOf gives each key's last value; what does not parse is an error.
func TestPropertiesOf(t *testing.T) {
	got, err := PropertiesOf("meta.properties", []byte("#Sat Dec 05 2026\nnode.id=1\ncluster.id=a\ncluster.id = b\ndirectory.id=x\\:y\n"))
	if want := map[string]string{"node.id": "1", "cluster.id": "b", "directory.id": "x:y"}; err != nil || !maps.Equal(got, want) {
		t.Fatalf("PropertiesOf = %v, %v; want %v", got, err, want)
	}
	if _, err := PropertiesOf("meta.properties", []byte("just-a-key\n")); err == nil {
		t.Fatal("a line without a value parsed")
	}
}
