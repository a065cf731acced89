package api

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/metadata"
)

const maxTopicNameLen = 249

// errInvalidTopicName carries INVALID_TOPIC_EXCEPTION.
type topicNameError struct{ msg string }

func (e *topicNameError) Error() string { return e.msg }

// validateTopicName applies Kafka's rules: 1–249 characters of
// [a-zA-Z0-9._-], and not "." or "..".
func validateTopicName(name string) error {
	switch {
	case name == "":
		return &topicNameError{"topic name is empty"}
	case name == "." || name == "..":
		return &topicNameError{fmt.Sprintf("topic name %q is not allowed", name)}
	case len(name) > maxTopicNameLen:
		return &topicNameError{fmt.Sprintf("topic name is %d characters; the limit is %d", len(name), maxTopicNameLen)}
	}
	for _, c := range name {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			return &topicNameError{fmt.Sprintf("topic name %q has %q; only a-z, A-Z, 0-9, '.', '_' and '-' are allowed", name, c)}
		}
	}
	return nil
}

// topicSpec is a topic to create, with wire sentinels already resolved.
type topicSpec struct {
	name              string
	partitions        int32 // -1 = broker default
	replicationFactor int16 // -1 = broker default
	configs           map[string]string
	// assignments are a manual replica assignment, checked; nil lets the
	// controller place the replicas.
	assignments [][]int32
}

// topicCreateError pairs a Kafka code with a message for CreateTopics.
type topicCreateError struct {
	code int16
	msg  string
}

func (e *topicCreateError) Error() string { return e.msg }

// checkTopic validates a topic to create and fills in broker defaults.
func (h *Handler) checkTopic(s topicSpec) (topicSpec, error) {
	if err := validateTopicName(s.name); err != nil {
		return s, &topicCreateError{kerr.InvalidTopicException.Code, err.Error()}
	}
	if s.name == quorumTopic {
		// Kafka's name for the metadata quorum's log (DescribeQuorum
		// answers for it), which no client creates.
		return s, &topicCreateError{kerr.InvalidRequest.Code, "creation of internal topic " + quorumTopic + " is prohibited"}
	}
	if s.partitions == -1 {
		s.partitions = h.opts.Config.NumPartitions
	}
	if s.replicationFactor == -1 {
		s.replicationFactor = h.opts.Config.DefaultReplicationFactor
	}
	if s.partitions <= 0 {
		return s, &topicCreateError{kerr.InvalidPartitions.Code, fmt.Sprintf("topic %s: partitions must be at least 1, got %d", s.name, s.partitions)}
	}
	if s.assignments == nil {
		if err := h.checkReplicationFactor(s.name, s.replicationFactor); err != nil {
			return s, err
		}
	}
	if err := validateTopicConfigs(s.configs, h.brokerConfig(h.opts.Meta.Image())); err != nil {
		return s, err
	}
	img := h.opts.Meta.Image()
	if _, exists := img.Topics[s.name]; exists {
		return s, &topicCreateError{kerr.TopicAlreadyExists.Code, fmt.Sprintf("topic %s already exists", s.name)}
	}
	if other, ok := collidingTopic(s.name, img.Topics); ok {
		return s, &topicCreateError{kerr.InvalidTopicException.Code,
			fmt.Sprintf("topic '%s' collides with existing topic: %s ('.' and '_' are the same in metric names)", s.name, other)}
	}
	return s, nil
}

// collidingTopic is an existing topic whose name differs from name only
// where one has '.' and the other '_', which Kafka refuses to create, as
// the two would share their metric names.
func collidingTopic[T any](name string, topics map[string]T) (string, bool) {
	if !strings.ContainsAny(name, "._") {
		return "", false
	}
	key := strings.ReplaceAll(name, ".", "_")
	for other := range topics {
		if other != name && strings.ReplaceAll(other, ".", "_") == key {
			return other, true
		}
	}
	return "", false
}

// createTopic validates and (unless validateOnly) creates a topic.
func (h *Handler) createTopic(ctx context.Context, s topicSpec, validateOnly bool, q *mutationQuota) (*metadata.Topic, topicSpec, error) {
	s, err := h.checkTopic(s)
	if err != nil || validateOnly {
		return nil, s, err
	}
	if code, msg := q.take(s.partitions); code != 0 {
		return nil, s, &topicCreateError{code: code, msg: msg}
	}
	t, err := h.opts.Meta.CreateTopic(ctx, metadata.CreateTopic{
		Name:              s.name,
		Partitions:        s.partitions,
		ReplicationFactor: s.replicationFactor,
		Assignments:       s.assignments,
		Configs:           s.configs,
	})
	if err != nil {
		return nil, s, err
	}
	h.logger.Info("created topic", "topic", s.name, "partitions", s.partitions, "configs", s.configs)
	return t, s, nil
}

// topicErrorCode is errorCode extended with the topic-level errors.
func topicErrorCode(err error) (int16, string) {
	var tce *topicCreateError
	if errors.As(err, &tce) {
		return tce.code, tce.msg
	}
	var tne *topicNameError
	if errors.As(err, &tne) {
		return kerr.InvalidTopicException.Code, tne.msg
	}
	return errorCode(err)
}

// validateTopicConfigs checks each override and then the rules that span
// keys or depend on the broker (e.g. remote.storage.enable needs the tier).
func validateTopicConfigs(overrides map[string]string, b *config.Broker) error {
	if err := config.ValidateTopicOverrides(overrides); err != nil {
		return err
	}
	_, err := config.ResolveTopic(overrides, b)
	return err
}
