package metadata

import (
	"slices"
	"testing"

	"github.com/hashicorp/raft"
)

// The controllers are the configuration's voters with their addresses, by
// node id; non-voters and ids that are not node ids are left out.
func TestControllersOf(t *testing.T) {
	conf := raft.Configuration{Servers: []raft.Server{
		{Suffrage: raft.Voter, ID: "3", Address: "c:9093"},
		{Suffrage: raft.Nonvoter, ID: "4", Address: "d:9093"},
		{Suffrage: raft.Voter, ID: "1", Address: "a:9093"},
		{Suffrage: raft.Voter, ID: "x", Address: "x:9093"},
		{Suffrage: raft.Staging, ID: "5", Address: "e:9093"},
		{Suffrage: raft.Voter, ID: "2", Address: "b:9093"},
	}}
	want := []Controller{{1, "a:9093"}, {2, "b:9093"}, {3, "c:9093"}}
	if got := controllersOf(conf); !slices.Equal(got, want) {
		t.Fatalf("controllersOf = %v, want %v", got, want)
	}
	if got := controllersOf(raft.Configuration{}); len(got) != 0 {
		t.Fatalf("no servers: %v", got)
	}
}
