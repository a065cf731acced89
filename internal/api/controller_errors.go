package api

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-broker/strata/internal/metadata"
)

// controllerAnswerCode maps the errors any per-partition request to the
// controller may meet (elections, reassignments): no such partition, no
// controller reachable now (retriable: the admin client asks again once
// one is known), a timeout; the rest as errorCode does.
func controllerAnswerCode(err error) (int16, string) {
	switch {
	case err == nil:
		return 0, ""
	case errors.Is(err, metadata.ErrUnknownTopic), errors.Is(err, metadata.ErrInvalidPartitions):
		return kerr.UnknownTopicOrPartition.Code, err.Error()
	case errors.Is(err, metadata.ErrNotController), errors.Is(err, metadata.ErrClosed):
		return kerr.NotController.Code, err.Error()
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return kerr.RequestTimedOut.Code, err.Error()
	}
	return errorCode(err)
}
