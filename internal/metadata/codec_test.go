package metadata

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/strata-broker/strata/internal/base"
	"github.com/strata-broker/strata/internal/tier/remotemeta"
)

func genConfigs() *rapid.Generator[map[string]string] {
	return rapid.MapOfN(rapid.SampledFrom([]string{"a", "b", "retention.ms", ""}), rapid.String(), 0, 3)
}

// genAssignments draws replica lists, mostly valid ones.
func genAssignments(maxN int) *rapid.Generator[[][]int32] {
	valid := rapid.SliceOfNDistinct(rapid.Int32Range(0, 3), 1, 3, rapid.ID[int32])
	anyList := rapid.SliceOfN(rapid.Int32Range(-1, 3), 0, 3)
	return rapid.SliceOfN(rapid.OneOf(valid, valid, valid, anyList), 0, maxN)
}

// genCommand draws commands over a small name/id space, so that collisions,
// unknown topics and stale plans all happen.
func genCommand() *rapid.Generator[command] {
	name := rapid.SampledFrom([]string{"a", "b", "c", "bad name"})
	id := rapid.Custom(func(t *rapid.T) base.TopicID { return tid(rapid.ByteRange(0, 4).Draw(t, "id")) })
	return rapid.OneOf(
		rapid.Custom(func(t *rapid.T) command {
			return &createTopicCmd{Name: name.Draw(t, "name"), ID: id.Draw(t, "id"),
				Assignments: genAssignments(4).Draw(t, "assign"), Configs: genConfigs().Draw(t, "configs")}
		}),
		rapid.Custom(func(t *rapid.T) command {
			return &deleteTopicCmd{Name: name.Draw(t, "name"), ID: id.Draw(t, "id")}
		}),
		rapid.Custom(func(t *rapid.T) command {
			return &createPartitionsCmd{Name: name.Draw(t, "name"), ID: id.Draw(t, "id"),
				NewTotal: rapid.Int32Range(-1, 8).Draw(t, "total"), Assignments: genAssignments(4).Draw(t, "assign")}
		}),
		rapid.Custom(func(t *rapid.T) command {
			return &setTopicConfigsCmd{Name: name.Draw(t, "name"), ID: id.Draw(t, "id"), Configs: genConfigs().Draw(t, "configs")}
		}),
		rapid.Custom(func(t *rapid.T) command {
			return &setBrokerConfigsCmd{Configs: genConfigs().Draw(t, "configs")}
		}),
		rapid.Custom(func(t *rapid.T) command {
			return &setBrokerConfigsCmd{Node: new(rapid.Int32Range(-1, 3).Draw(t, "node")), Configs: genConfigs().Draw(t, "configs")}
		}),
		rapid.Custom(func(t *rapid.T) command {
			return &setGroupConfigsCmd{Group: rapid.SampledFrom([]string{"", "g", "h"}).Draw(t, "group"), Configs: genConfigs().Draw(t, "configs")}
		}),
		rapid.Custom(func(t *rapid.T) command {
			return &setClientMetricsConfigsCmd{Name: rapid.SampledFrom([]string{"", "s", "t"}).Draw(t, "name"), Configs: genConfigs().Draw(t, "configs")}
		}),
		rapid.Custom(func(t *rapid.T) command {
			return &controllerChangeCmd{NodeID: rapid.Int32Range(-1, 3).Draw(t, "node")}
		}),
		rapid.Just[command](&initClusterCmd{ClusterID: "AAAAAAAAAAAAAAAAAAAAAA"}),
		genRemoteCommand(),
		rapid.Custom(func(t *rapid.T) command { return genScramCommand().Draw(t, "scram") }),
		rapid.Custom(func(t *rapid.T) command { return genQuotaCommand().Draw(t, "quotas") }),
		genAclCommand(),
		genDelegationTokenCommand(),
	)
}

func TestCommandRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cmd := genCommand().Draw(t, "cmd")
		data, err := encodeCommand(cmd)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeCommand(data)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(normalize(got), normalize(cmd)) {
			t.Fatalf("round trip: got %#v, want %#v", got, cmd)
		}
	})
}

// normalize maps empty config maps to nil: omitempty drops them on the wire.
// JSON replaces each byte of a user name that is not UTF-8 with U+FFFD, as
// string([]rune(s)) does; that is why such names are refused before they
// reach the log (validateScramUser), and such ACL strings too (aclStringsErr).
func normalize(c command) command {
	if ct, ok := c.(*createTopicCmd); ok && len(ct.Configs) == 0 {
		cp := *ct
		cp.Configs = nil
		return &cp
	}
	if sc, ok := c.(*alterScramCredentialsCmd); ok {
		cp := *sc
		cp.User = string([]rune(sc.User))
		return &cp
	}
	switch ac := c.(type) {
	case *alterClientQuotasCmd:
		return normalizeQuotaCommand(ac)
	case *createAclsCmd:
		return &createAclsCmd{Bindings: normalizeAcls(ac.Bindings)}
	case *deleteAclsCmd:
		return &deleteAclsCmd{Bindings: normalizeAcls(ac.Bindings)}
	}
	return c
}

func normalizeAcls(ws []wireAcl) []wireAcl {
	out := make([]wireAcl, len(ws))
	for i, w := range ws {
		w.ResourceName, w.Principal, w.Host = string([]rune(w.ResourceName)), string([]rune(w.Principal)), string([]rune(w.Host))
		out[i] = w
	}
	return out
}

func TestDecodeCommandRejects(t *testing.T) {
	for _, data := range []string{
		"", "\x02{}", "\x01", "\x01{}", "\x01null", "\x01{\"nope\":{}}",
		"\x01{\"delete_topic\":{\"name\":\"a\"},\"set_broker_configs\":{}}",
		"\x01{\"delete_topic\":{\"name\":\"a\"}} trailing",
	} {
		if _, err := decodeCommand([]byte(data)); !errors.Is(err, ErrInvalidCommand) {
			t.Errorf("decodeCommand(%q) = %v, want ErrInvalidCommand", data, err)
		}
	}
}

func FuzzDecodeCommand(f *testing.F) {
	seed, _ := encodeCommand(createCmd("foo", 1, 2))
	f.Add(seed)
	f.Add([]byte("\x01{\"set_broker_configs\":{\"configs\":{\"a\":\"b\"}}}"))
	f.Add([]byte("\x01{\"set_broker_configs\":{\"node\":2,\"configs\":{\"a\":\"b\"}}}"))
	f.Add([]byte("\x01{\"set_client_metrics_configs\":{\"name\":\"s\",\"configs\":{\"interval.ms\":\"60000\"}}}"))
	remote, _ := encodeCommand(upd(rseg(1, "foo", 1, 0, 0, 10, remotemeta.CopyStarted), 0))
	f.Add(remote)
	scram, _ := encodeCommand(alterScram("alice", upsert(ScramSHA256, 1), ScramSHA512))
	f.Add(scram)
	quotas, _ := encodeCommand(alterQuotas(qAlt(qUserAlice, rates(1024, 0), consumeRate), qAlt(qClientDefault, rates(0, 2048))))
	f.Add(quotas)
	createACL, _ := encodeCommand(createAcls(aclTopicRead, aclGroupRead))
	f.Add(createACL)
	deleteACL, _ := encodeCommand(deleteAcls(aclTopicRead))
	f.Add(deleteACL)
	for _, c := range []command{createToken(dtoken("t1")), renewToken("t1", pBob, 1500, 1000),
		expireToken("t1", pAlice, 1500, -1), removeExpiredAt(3000)} {
		data, _ := encodeCommand(c)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cmd, err := decodeCommand(data)
		if err != nil {
			return
		}
		// Whatever decodes must apply or be rejected without panicking.
		if img, err := applyCommand(emptyImage(), cmd, 1); err == nil {
			checkImageInvariants(t, img)
		}
	})
}

// TestApplySequenceProperties applies random command sequences and checks that
// every image keeps its invariants, earlier images never change, a rejected
// command changes nothing, and every image survives a snapshot round trip;
// remote segment, SCRAM, client quota, ACL and delegation token commands
// are among them, so all of this covers remote segments, pending remote
// deletes, SCRAM credentials, client quotas, ACL bindings (with their
// index) and delegation tokens too.
func TestApplySequenceProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		img := emptyImage()
		var history []*Image
		var frozen []string
		applied := map[string]int{}
		for i := range rapid.IntRange(1, 50).Draw(t, "n") {
			cmd := genCommand().Draw(t, fmt.Sprintf("cmd%d", i))
			// 0: as drawn; 1: aimed at a topic; 2..4: aimed at remote segments.
			switch aim := rapid.IntRange(0, 4).Draw(t, fmt.Sprintf("aim%d", i)); {
			case aim == 1 && len(img.Topics) > 0:
				cmd = drawTargeted(t, img, i)
			case aim >= 2:
				if c := drawTargetedRemote(t, img, i); c != nil {
					cmd = c
				}
			}
			next, err := applyCommand(img, cmd, uint64(i+1))
			if err != nil {
				if next != nil {
					t.Fatalf("rejected %T returned an image", cmd)
				}
				if errors.Is(err, ErrOverlappingRemoteSegment) {
					applied["(refused: overlap)"]++
				}
				continue
			}
			if err := invariantErr(next); err != nil {
				t.Fatalf("after %#v: %v", cmd, err)
			}
			data, err := encodeSnapshot(next)
			if err != nil {
				t.Fatal(err)
			}
			restored, err := decodeSnapshot(data)
			if err != nil {
				t.Fatalf("restore: %v", err)
			}
			if !reflect.DeepEqual(restored, next) {
				t.Fatalf("snapshot round trip differs:\n got %#v\nwant %#v", restored, next)
			}
			history = append(history, next)
			applied[fmt.Sprintf("%T", cmd)]++
			if len(next.pendingDeletes) > 0 {
				applied["(pending remote delete)"]++
			}
			frozen = append(frozen, string(data))
			img = next
		}
		t.Logf("applied: %v", applied)
		for i, h := range history {
			data, _ := encodeSnapshot(h)
			if string(data) != frozen[i] {
				t.Fatalf("image %d changed after publication", i)
			}
		}
	})
}

func invariantErr(img *Image) error {
	if len(img.Topics) != len(img.TopicsByID) {
		return fmt.Errorf("%d topics by name, %d by id", len(img.Topics), len(img.TopicsByID))
	}
	for name, tp := range img.Topics {
		if tp.Name != name || img.TopicsByID[tp.ID] != tp {
			return fmt.Errorf("topic %q badly indexed", name)
		}
		if err := validateTopic(tp); err != nil {
			return err
		}
	}
	if err := scramInvariantErr(img); err != nil {
		return err
	}
	if err := clientQuotaInvariantErr(img); err != nil {
		return err
	}
	if err := aclInvariantErr(img); err != nil {
		return err
	}
	if err := brokerInvariantErr(img); err != nil {
		return err
	}
	if err := delegationTokenInvariantErr(img); err != nil {
		return err
	}
	if err := namedConfigsInvariantErr(img); err != nil {
		return err
	}
	return remoteInvariantErr(img)
}

// namedConfigsInvariantErr checks the invariants of the config maps kept
// by name (GroupConfigs, ClientMetricsConfigs): never nil, no entry unnamed
// or without configs.
func namedConfigsInvariantErr(img *Image) error {
	for kind, byName := range map[string]map[string]map[string]string{
		"group": img.GroupConfigs, "client metrics subscription": img.ClientMetricsConfigs,
	} {
		if byName == nil {
			return fmt.Errorf("nil map of %s configs", kind)
		}
		for name, configs := range byName {
			if name == "" || len(configs) == 0 {
				return fmt.Errorf("configs of %s %q: %v", kind, name, configs)
			}
		}
	}
	return nil
}

// drawTargeted draws a command aimed at an existing topic, so that deletes,
// config changes and partition growth are applied, not only rejected.
func drawTargeted(t *rapid.T, img *Image, i int) command {
	names := make([]string, 0, len(img.Topics))
	for name := range img.Topics {
		names = append(names, name)
	}
	slices.Sort(names)
	tp := img.Topics[rapid.SampledFrom(names).Draw(t, fmt.Sprintf("target%d", i))]
	switch rapid.IntRange(0, 2).Draw(t, fmt.Sprintf("kind%d", i)) {
	case 0:
		return &deleteTopicCmd{Name: tp.Name, ID: tp.ID}
	case 1:
		return &setTopicConfigsCmd{Name: tp.Name, ID: tp.ID, Configs: genConfigs().Draw(t, fmt.Sprintf("configs%d", i))}
	default:
		add := rapid.IntRange(1, 3).Draw(t, fmt.Sprintf("add%d", i))
		return &createPartitionsCmd{Name: tp.Name, ID: tp.ID, NewTotal: int32(len(tp.Partitions) + add),
			Assignments: genAssignments(add).Filter(func(a [][]int32) bool { return len(a) == add }).Draw(t, fmt.Sprintf("assign%d", i))}
	}
}
