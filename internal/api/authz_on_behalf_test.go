package api

import (
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestTokensOfOthersNeedTheirACLs: with an authorizer on, a principal may
// create a delegation token for another owner only with CREATE_TOKENS on
// that User, and sees another's token only with DESCRIBE on the token or
// DESCRIBE_TOKENS on its owner (KIP-373), as Kafka decides.
func TestTokensOfOthersNeedTheirACLs(t *testing.T) {
	rh := newReplicaHarness(t, map[string]string{
		"authorizer.class.name":       "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users":                 "User:admin",
		"delegation.token.secret.key": tokenSecret,
	})
	create := func(principal, owner string) *kmsg.CreateDelegationTokenResponse {
		r := kmsg.NewPtrCreateDelegationTokenRequest()
		r.OwnerPrincipalType, r.OwnerPrincipalName, r.MaxLifetimeMillis = kmsg.StringPtr("User"), kmsg.StringPtr(owner), -1
		return rh.handle(38, 3, r, principal).(*kmsg.CreateDelegationTokenResponse)
	}
	if code := create("User:alice", "bob").ErrorCode; code != kerr.DelegationTokenAuthorizationFailed.Code {
		t.Fatalf("alice creating bob's token without CREATE_TOKENS on User:bob: error %d, want %d", code, kerr.DelegationTokenAuthorizationFailed.Code)
	}
	rh.allow("User:alice", kmsg.ACLResourceTypeUser, "User:bob", kmsg.ACLOperationCreateTokens)
	if code := create("User:alice", "bob").ErrorCode; code != 0 {
		t.Fatalf("alice creating bob's token with CREATE_TOKENS on User:bob: error %d", code)
	}

	// The admin creates one token each for carol, dave and erin.
	tokenOf := map[string]string{}
	for _, owner := range []string{"carol", "dave", "erin"} {
		resp := create("User:admin", owner)
		if resp.ErrorCode != 0 {
			t.Fatalf("the admin creating %s's token: error %d", owner, resp.ErrorCode)
		}
		tokenOf[owner] = resp.TokenID
	}
	rh.allow("User:alice", kmsg.ACLResourceTypeDelegationToken, tokenOf["carol"], kmsg.ACLOperationDescribe)
	rh.allow("User:alice", kmsg.ACLResourceTypeUser, "User:dave", kmsg.ACLOperationDescribeTokens)
	resp := rh.handle(41, 3, kmsg.NewPtrDescribeDelegationTokenRequest(), "User:alice").(*kmsg.DescribeDelegationTokenResponse)
	if resp.ErrorCode != 0 {
		t.Fatalf("alice describing tokens: error %d", resp.ErrorCode)
	}
	var seen []string
	for _, d := range resp.TokenDetails {
		seen = append(seen, d.PrincipalName)
	}
	slices.Sort(seen)
	// bob's: she requested it; carol's: DESCRIBE on the token; dave's:
	// DESCRIBE_TOKENS on dave; not erin's.
	if want := []string{"bob", "carol", "dave"}; !slices.Equal(seen, want) {
		t.Errorf("alice sees the tokens of %v, want %v", seen, want)
	}
}

// TestCreatedTopicsConfigsNeedDescribeConfigs: a principal who may create a
// topic but not DESCRIBE_CONFIGS on it gets the topic, and in place of its
// configs TOPIC_AUTHORIZATION_FAILED, as Kafka answers.
func TestCreatedTopicsConfigsNeedDescribeConfigs(t *testing.T) {
	rh := newReplicaHarness(t, map[string]string{
		"authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users":           "User:admin",
	})
	for _, name := range []string{"created-blind", "created-seen"} {
		rh.allow("User:alice", kmsg.ACLResourceTypeTopic, name, kmsg.ACLOperationCreate)
	}
	rh.allow("User:alice", kmsg.ACLResourceTypeTopic, "created-seen", kmsg.ACLOperationDescribeConfigs)
	for _, tc := range []struct {
		topic       string
		configsCode int16
	}{
		{"created-blind", kerr.TopicAuthorizationFailed.Code},
		{"created-seen", 0},
	} {
		r := kmsg.NewPtrCreateTopicsRequest()
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = tc.topic, 1, 1
		r.Topics = append(r.Topics, rt)
		st := rh.handle(19, registry[19].max, r, "User:alice").(*kmsg.CreateTopicsResponse).Topics[0]
		if st.ErrorCode != 0 {
			t.Fatalf("alice creating %s: error %d", tc.topic, st.ErrorCode)
		}
		if st.ConfigErrorCode != tc.configsCode || (tc.configsCode != 0) != (len(st.Configs) == 0) {
			t.Errorf("alice creating %s: configs error %d with %d configs, want error %d", tc.topic, st.ConfigErrorCode, len(st.Configs), tc.configsCode)
		}
	}
}
