package api

import (
	"testing"

	"go.uber.org/goleak"
)

// Parked fetches and produces end with their requests; the brokers of
// the tests close.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
