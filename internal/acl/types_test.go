package acl

import "testing"

func TestNamesAreKafkas(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{ResourceUnknown.String(), "UNKNOWN"},
		{ResourceAny.String(), "ANY"},
		{ResourceTopic.String(), "TOPIC"},
		{ResourceGroup.String(), "GROUP"},
		{ResourceCluster.String(), "CLUSTER"},
		{ResourceTransactionalID.String(), "TRANSACTIONAL_ID"},
		{ResourceDelegationToken.String(), "DELEGATION_TOKEN"},
		{ResourceUser.String(), "USER"},
		{ResourceType(8).String(), "UNKNOWN"},
		{ResourceType(-1).String(), "UNKNOWN"},
		{PatternUnknown.String(), "UNKNOWN"},
		{PatternAny.String(), "ANY"},
		{PatternMatch.String(), "MATCH"},
		{PatternLiteral.String(), "LITERAL"},
		{PatternPrefixed.String(), "PREFIXED"},
		{PatternType(5).String(), "UNKNOWN"},
		{OpUnknown.String(), "UNKNOWN"},
		{OpAny.String(), "ANY"},
		{OpAll.String(), "ALL"},
		{OpRead.String(), "READ"},
		{OpWrite.String(), "WRITE"},
		{OpCreate.String(), "CREATE"},
		{OpDelete.String(), "DELETE"},
		{OpAlter.String(), "ALTER"},
		{OpDescribe.String(), "DESCRIBE"},
		{OpClusterAction.String(), "CLUSTER_ACTION"},
		{OpDescribeConfigs.String(), "DESCRIBE_CONFIGS"},
		{OpAlterConfigs.String(), "ALTER_CONFIGS"},
		{OpIdempotentWrite.String(), "IDEMPOTENT_WRITE"},
		{OpCreateTokens.String(), "CREATE_TOKENS"},
		{OpDescribeTokens.String(), "DESCRIBE_TOKENS"},
		{Operation(15).String(), "UNKNOWN"},
		{PermissionUnknown.String(), "UNKNOWN"},
		{PermissionAny.String(), "ANY"},
		{PermissionDeny.String(), "DENY"},
		{PermissionAllow.String(), "ALLOW"},
		{Permission(4).String(), "UNKNOWN"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
