package group

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Member epochs a ConsumerGroupHeartbeat sends to leave (Kafka's
// LEAVE_GROUP_MEMBER_EPOCH and LEAVE_GROUP_STATIC_MEMBER_EPOCH); 0 joins.
const (
	joinEpoch        = 0
	staticLeaveEpoch = -2
)

// heartbeatRefusal is a ConsumerGroupHeartbeat refused before the group
// is looked at: its error code and message.
type heartbeatRefusal struct {
	code    int16
	message string
}

// validateHeartbeat checks a ConsumerGroupHeartbeat as Kafka's
// throwIfConsumerGroupHeartbeatRequestIsInvalid does, in its order; ok
// when the zero refusal comes back. assignors are the server assignors
// the broker offers (group.consumer.assignors).
func validateHeartbeat(req *kmsg.ConsumerGroupHeartbeatRequest, assignors []string) heartbeatRefusal {
	invalid := func(msg string) heartbeatRefusal { return heartbeatRefusal{kerr.InvalidRequest.Code, msg} }
	empty := func(s *string) bool { return s != nil && strings.TrimSpace(*s) == "" }
	switch {
	case strings.TrimSpace(req.Group) == "":
		return invalid("GroupId can't be empty.")
	case empty(req.InstanceID):
		return invalid("InstanceId can't be empty.")
	case empty(req.RackID):
		return invalid("RackId can't be empty.")
	case (req.Version >= 1 || req.MemberEpoch != joinEpoch) && strings.TrimSpace(req.MemberID) == "":
		return invalid("MemberId can't be empty.")
	}
	switch e := req.MemberEpoch; {
	case e == joinEpoch:
		switch {
		case req.RebalanceTimeoutMillis == -1:
			return invalid("RebalanceTimeoutMs must be provided in first request.")
		case req.Topics == nil || len(req.Topics) != 0:
			return invalid("TopicPartitions must be empty when (re-)joining.")
		case req.SubscribedTopicNames == nil && req.SubscribedTopicRegex == nil:
			return invalid("SubscribedTopicNames or SubscribedTopicRegex must be set in first request.")
		}
	case e == staticLeaveEpoch:
		if req.InstanceID == nil {
			return invalid("InstanceId can't be null.")
		}
	case e < staticLeaveEpoch:
		return invalid("MemberEpoch is invalid.")
	}
	if req.SubscribedTopicRegex != nil && *req.SubscribedTopicRegex != "" { // "" drops the regex
		if _, err := compileTopicRegex(*req.SubscribedTopicRegex); err != nil {
			return heartbeatRefusal{kerr.InvalidRegularExpression.Code, fmt.Sprintf("SubscribedTopicRegex `%s` is not a valid regular expression: %v.", *req.SubscribedTopicRegex, err)}
		}
	}
	if req.ServerAssignor != nil && !slices.Contains(assignors, *req.ServerAssignor) {
		return heartbeatRefusal{kerr.UnsupportedAssignor.Code, fmt.Sprintf("ServerAssignor %s is not supported. Supported assignors: %s.",
			*req.ServerAssignor, strings.Join(assignors, ", "))}
	}
	return heartbeatRefusal{}
}

// compileTopicRegex compiles a subscription's regular expression (RE2
// syntax, as Kafka's RE2/J), to match whole topic names as Java's
// Matcher.matches does.
func compileTopicRegex(expr string) (*regexp.Regexp, error) {
	if strings.TrimSpace(expr) == "" {
		return nil, fmt.Errorf("it is empty")
	}
	// Alone first: wrapped, "a)|(b" would compile.
	if _, err := regexp.Compile(expr); err != nil {
		return nil, err
	}
	return regexp.Compile(`^(?:` + expr + `)$`)
}
