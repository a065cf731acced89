package config

import (
	"fmt"
	"os"
	"slices"
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
//     log.dirs, STRATA_REMOTE_DIR sets strata.remote.dir; see EnvName), or
//     STRATA_LISTENER_NAME_<LISTENER>_<MECH>_SASL_JAAS_CONFIG (see
//     jaasEnvKey) or STRATA_LISTENER_NAME_<LISTENER>_SSL_<KEY> (see
//     listenerSSLEnvKey) or STRATA_CONFIG_PROVIDERS_<NAME>_CLASS /
//     _PARAM_<PARAM> (see providerEnvKey), except the few in envNotConfig; variables
//     without the prefix are ignored;
//   - flags, broker config key → value, as the CLI parsed them.
//
// References to config providers (${provider:path:key}, providers.go) are
// resolved in every value. Values are trimmed. An unknown key, or a bad
// value, is an error of one line
// that says where it was set and wraps an *Error naming the key and what is
// allowed.
func LoadBroker(file string, env []string, flags map[string]string) (*Broker, error) {
	// Every assignment, in order of precedence, is checked; the last one
	// of a key wins. References to config providers are resolved first
	// (providers.go), with the providers the final values set up.
	type assignment struct{ key, value, where string }
	var assignments []assignment
	final := make(map[string]string)
	set := func(key, value, where string) error {
		if _, ok := LookupBroker(key); !ok {
			return fmt.Errorf("%s: %w", where, unknownBrokerKey(key, value))
		}
		value = strings.TrimSpace(value)
		assignments = append(assignments, assignment{key, value, where})
		final[key] = value
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
		key, _ := envKey(name)
		if err := set(key, vars[name], name); err != nil {
			return nil, err
		}
	}
	for _, key := range sortedKeys(flags) {
		if err := set(key, flags[key], "flag"); err != nil {
			return nil, err
		}
	}
	providers, err := newProviders(final, env)
	if err != nil {
		return nil, fmt.Errorf("config providers: %w", err)
	}
	raw := make(map[string]string)
	origin := make(map[string]string)
	for _, a := range assignments {
		d, _ := LookupBroker(a.key)
		value, err := resolveReferences(a.value, providers)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", a.where, a.key, err)
		}
		if err := d.Check(value); err != nil {
			return nil, fmt.Errorf("%s: %w", a.where, err)
		}
		raw[a.key], origin[a.key] = value, a.where
	}
	b, err := newBroker(raw, origin)
	if err != nil {
		return nil, fmt.Errorf("broker config: %w", err)
	}
	return b, nil
}

// refusedBroker are Kafka broker keys that Strata leaves out on purpose, with
// the reason its error gives.
var refusedBroker = map[string]string{
	"sasl.jaas.config": "a broker takes " + jaasKeyForm + ", e.g. listener.name.sasl_ssl.plain.sasl.jaas.config",
}

// envToRefused maps the environment variables of refusedBroker's keys to them.
var envToRefused = func() map[string]string {
	m := make(map[string]string, len(refusedBroker))
	for k := range refusedBroker {
		m[EnvName(k)] = k
	}
	return m
}()

// unknownBrokerKey is the error for a key no broker config has. Its value is
// hidden when the key looks like it holds a secret.
func unknownBrokerKey(key, value string) *Error {
	if looksSecret(key) {
		value = hiddenValue
	}
	return &Error{Key: key, Value: value, Msg: unknownBrokerMsg(key)}
}

func looksSecret(key string) bool {
	k := strings.ToLower(key)
	return strings.Contains(k, "password") || strings.Contains(k, "jaas") ||
		strings.Contains(k, "secret") || strings.HasPrefix(k, jaasKeyPrefix) || strings.HasPrefix(k, "strata_listener_name_")
}

// unknownBrokerMsg explains an unknown broker key: a key Strata refuses on
// purpose, a malformed JAAS key, or a topic key (pointing to its broker
// default).
func unknownBrokerMsg(key string) string {
	if why, ok := refusedBroker[key]; ok {
		return "unknown broker config: " + why
	}
	if isZookeeperKey(key) {
		return "unknown broker config: " + zookeeperMsg
	}
	if strings.HasPrefix(key, jaasKeyPrefix) {
		return "unknown broker config: " + badListenerKey(key)
	}
	if d, ok := topicByName[key]; ok && d.BrokerSynonym != "" {
		return fmt.Sprintf("unknown broker config (%s is a topic config; its broker default is %s); see `strata serve --help`", key, d.BrokerSynonym)
	}
	return unknownBroker
}

// badListenerKey says what is wrong with a listener.name.* key that is no
// JAAS key and no listener-prefixed TLS key.
func badListenerKey(key string) string {
	mid := strings.TrimPrefix(key, jaasKeyPrefix)
	for _, k := range listenerSSLKeys {
		if listener, ok := strings.CutSuffix(mid, "."+k); ok && listener != "" {
			return fmt.Sprintf("%s takes the listener in lower case: %s", listenerSSLKeyForm,
				listenerSSLKey{listener: strings.ToLower(listener), key: k})
		}
	}
	mid, ok := strings.CutSuffix(mid, jaasKeySuffix)
	dot := strings.LastIndexByte(mid, '.')
	if !ok || dot <= 0 {
		return fmt.Sprintf("the only per-listener configs are %s, %s, %s and %s, <key> one of: %s",
			jaasKeyForm, oauthHandlerKeyForm, oauthListenerKeyForm, listenerSSLKeyForm, strings.Join(listenerSSLKeys, ", "))
	}
	mech := strings.ToUpper(mid[dot+1:])
	switch {
	case mech == "GSSAPI":
		return mech + " is " + unsupportedMechanism
	case !slices.Contains(mechanismNames, mech):
		return fmt.Sprintf("the mechanism of %s must be plain, scram-sha-256, scram-sha-512 or oauthbearer, not %s", jaasKeyForm, mid[dot+1:])
	}
	return fmt.Sprintf("%s takes the listener and the mechanism in lower case: %s", jaasKeyForm,
		jaasKey{listener: strings.ToLower(mid[:dot]), mechanism: mech})
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
		if _, known := envKey(name); !known {
			return nil, unknownBrokerEnv(name, value)
		}
		vars[name] = value
	}
	return vars, nil
}

// unknownBrokerEnv is the error for a STRATA_* variable that names no broker
// config.
func unknownBrokerEnv(name, value string) *Error {
	if looksSecret(name) {
		value = hiddenValue
	}
	msg := "unknown broker config (no key maps to this environment variable); see `strata serve --help`"
	if key, ok := envToRefused[name]; ok {
		msg = fmt.Sprintf("unknown broker config %s: %s", key, refusedBroker[key])
	} else if strings.HasPrefix(name, jaasEnvPrefix) {
		msg = "unknown broker config: the only per-listener variables are " +
			jaasEnvPrefix + "<LISTENER>_<MECH>" + jaasEnvSuffix + ", MECH one of PLAIN, SCRAM_SHA_256, SCRAM_SHA_512, and " +
			jaasEnvPrefix + "<LISTENER>_SSL_<KEY>, the variable of " + listenerSSLKeyForm + " (e.g. " +
			EnvName(listenerSSLKey{listener: "internal", key: "ssl.keystore.location"}.String()) + ")"
	}
	return &Error{Key: name, Value: value, Msg: msg}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
