package config

import (
	"fmt"
	"os"
	"sort"
	"strings"
)

// unknownBroker is the message of the error for a key no broker config has.
const unknownBroker = "unknown broker config; see `strata serve --help`"

// LoadBroker reads the broker configuration. Values come from, lowest
// precedence first:
//   - file, a Java-style properties file (see parseProperties), unless "";
//   - env, "NAME=value" entries as os.Environ returns them: every STRATA_*
//     variable must be the EnvName of a broker config (STRATA_LOG_DIRS sets
//     log.dirs, STRATA_REMOTE_DIR sets strata.remote.dir; see EnvName), except
//     the few in envNotConfig; variables without the prefix are ignored;
//   - flags, broker config key → value, as the CLI parsed them.
//
// Values are trimmed. An unknown key, or a bad value, is an error of one line
// that says where it was set and wraps an *Error naming the key and what is
// allowed.
func LoadBroker(file string, env []string, flags map[string]string) (*Broker, error) {
	raw := make(map[string]string)
	origin := make(map[string]string)
	set := func(key, value, where string) error {
		d, ok := brokerByName[key]
		if !ok {
			return fmt.Errorf("%s: %w", where, &Error{Key: key, Value: value, Msg: unknownBrokerMsg(key)})
		}
		value = strings.TrimSpace(value)
		if err := d.Check(value); err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
		raw[key], origin[key] = value, where
		return nil
	}
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("config file: %w", err)
		}
		props, err := parseProperties(file, data)
		if err != nil {
			return nil, err
		}
		for _, p := range props {
			if err := set(p.key, p.value, fmt.Sprintf("%s:%d", file, p.line)); err != nil {
				return nil, err
			}
		}
	}
	vars, err := strataEnv(env)
	if err != nil {
		return nil, err
	}
	for _, name := range sortedKeys(vars) {
		if err := set(envToKey[name], vars[name], name); err != nil {
			return nil, err
		}
	}
	for _, key := range sortedKeys(flags) {
		if err := set(key, flags[key], "flag"); err != nil {
			return nil, err
		}
	}
	b, err := newBroker(raw, origin)
	if err != nil {
		return nil, fmt.Errorf("broker config: %w", err)
	}
	return b, nil
}

// unknownBrokerMsg explains an unknown broker key, pointing from a topic key
// to its broker default.
func unknownBrokerMsg(key string) string {
	if d, ok := topicByName[key]; ok && d.BrokerSynonym != "" {
		return fmt.Sprintf("unknown broker config (%s is a topic config; its broker default is %s); see `strata serve --help`", key, d.BrokerSynonym)
	}
	return unknownBroker
}

// strataEnv picks the STRATA_* variables out of env (the last of duplicates
// wins, as in a shell) and rejects those that name no broker config.
func strataEnv(env []string) (map[string]string, error) {
	vars := make(map[string]string)
	for _, kv := range env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, "STRATA_") || envNotConfig[name] {
			continue
		}
		if _, known := envToKey[name]; !known {
			return nil, &Error{Key: name, Value: value,
				Msg: "unknown broker config (no key maps to this environment variable); see `strata serve --help`"}
		}
		vars[name] = value
	}
	return vars, nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
