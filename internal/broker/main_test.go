package broker

import (
	"testing"

	"go.uber.org/goleak"
)

// Every goroutine the broker starts (loops, tier loops, ISR change
// proposals) ends with Close.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
