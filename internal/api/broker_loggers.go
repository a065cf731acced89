package api

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/logging"
)

// BROKER_LOGGER config resources (KIP-412): a broker's loggers and their
// levels, described with DescribeConfigs and changed with
// IncrementalAlterConfigs (SET gives a logger a level, DELETE takes it
// away so that it inherits its parent's), as Kafka's ConfigAdminManager
// does for log4j's loggers. The resource's name is the broker's id; the
// levels are Kafka's names (TRACE, DEBUG, INFO, WARN, ERROR, FATAL), and
// a change lasts until the broker restarts. Describing needs
// DESCRIBE_CONFIGS on the cluster, changing ALTER_CONFIGS.

// checkBrokerLoggerResource refuses a BROKER_LOGGER resource that does not
// name this broker, as Kafka (INVALID_REQUEST).
func (h *Handler) checkBrokerLoggerResource(name string) (int16, string) {
	self := strconv.Itoa(int(h.opts.Broker.NodeID()))
	if name != self {
		return kerr.InvalidRequest.Code, fmt.Sprintf("BROKER_LOGGER resource %q is not this broker; name it by this broker's id, %s", name, self)
	}
	return 0, ""
}

// describeBrokerLoggers are this broker's loggers as config entries: each
// with its level, from DYNAMIC_BROKER_LOGGER_CONFIG, as Kafka describes
// them; sorted by name.
func (h *Handler) describeBrokerLoggers() []configEntry {
	levels := h.opts.Loggers.Levels()
	entries := make([]configEntry, 0, len(levels))
	for _, name := range slices.Sorted(maps.Keys(levels)) {
		entries = append(entries, configEntry{
			Entry:  config.Entry{Name: name, Value: levels[name]},
			Source: int8(kmsg.ConfigSourceDynamicBrokerLoggerConfig),
		})
	}
	return entries
}

// alterBrokerLoggers applies an IncrementalAlterConfigs resource's changes
// to this broker's loggers, all of them or (refused) none; validateOnly
// checks them only.
func (h *Handler) alterBrokerLoggers(name string, changes []kmsg.IncrementalAlterConfigsRequestResourceConfig, validateOnly bool) (int16, string) {
	if code, msg := h.checkBrokerLoggerResource(name); code != 0 {
		return code, msg
	}
	if code, msg := loggerChangesRefusal(changes, h.opts.Loggers.Exists); code != 0 || validateOnly {
		return code, msg
	}
	for _, c := range changes {
		if c.Op == opDelete {
			if err := h.opts.Loggers.UnsetLevel(c.Name); err != nil {
				return kerr.InvalidConfig.Code, err.Error()
			}
			h.logger.Info("removed the level of logger " + c.Name + ": it takes its parent's")
			continue
		}
		if err := h.opts.Loggers.SetLevel(c.Name, *c.Value); err != nil {
			return kerr.InvalidConfig.Code, err.Error()
		}
		h.logger.Info("set the level of logger "+c.Name, "level", *c.Value)
	}
	return 0, ""
}

// loggerChangesRefusal is why changes to loggers (of a sound shape:
// configChangesRefusal) are refused, as Kafka's validateLogLevelConfigs
// refuses them: a logger that does not exist or a level Kafka does not
// have (INVALID_CONFIG), DELETE of the root logger's level, APPEND and
// SUBTRACT (INVALID_REQUEST). 0 when none is.
func loggerChangesRefusal(changes []kmsg.IncrementalAlterConfigsRequestResourceConfig, exists func(string) bool) (int16, string) {
	for _, c := range changes {
		if c.Op == opAppend || c.Op == opSubtract {
			return kerr.InvalidRequest.Code, fmt.Sprintf("%s is not an operation on a BROKER_LOGGER resource; use SET or DELETE", kmsg.IncrementalAlterConfigOp(c.Op))
		}
		if !exists(c.Name) {
			return kerr.InvalidConfig.Code, fmt.Sprintf("logger %s does not exist; DescribeConfigs of this BROKER_LOGGER resource lists the loggers", c.Name)
		}
		if c.Op == opDelete && c.Name == logging.Root {
			return kerr.InvalidRequest.Code, "the root logger's level cannot be removed; set it instead"
		}
		if c.Op == opSet {
			if _, err := logging.ParseLevel(*c.Value); err != nil {
				return kerr.InvalidConfig.Code, fmt.Sprintf("cannot set the level of logger %s: %v", c.Name, err)
			}
		}
	}
	return 0, ""
}
