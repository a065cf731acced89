package metadata

import (
	"testing"

	"go.uber.org/goleak"
)

// A waiter on a Raft future that Raft stranded at shutdown (see
// Store.result) outlives Close by design: it holds nothing.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/strata-broker/strata/internal/metadata.(*Store).await.func1"))
}
