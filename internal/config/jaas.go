package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Kafka's broker JAAS keys: listener.name.<listener>.<mechanism>.sasl.jaas.config,
// with the listener name and the mechanism in lower case.
const (
	jaasKeyPrefix = "listener.name."
	jaasKeySuffix = ".sasl.jaas.config"
	jaasKeyForm   = jaasKeyPrefix + "<listener>.<mechanism>" + jaasKeySuffix
	jaasEnvPrefix = "STRATA_LISTENER_NAME_"
	jaasEnvSuffix = "_SASL_JAAS_CONFIG"
)

// The login modules Kafka's mechanisms use, and the options each takes
// besides PlainLoginModule's user_<name>.
const (
	plainLoginModule = "org.apache.kafka.common.security.plain.PlainLoginModule"
	scramLoginModule = "org.apache.kafka.common.security.scram.ScramLoginModule"
)

var (
	plainOptions = []string{"username", "password"}
	scramOptions = []string{"username", "password", "tokenauth"}
)

// jaasKey is a parsed JAAS key: the listener as the key has it (lower case)
// and the mechanism as sasl.enabled.mechanisms has it (PLAIN).
type jaasKey struct {
	listener  string
	mechanism string
}

func (k jaasKey) String() string {
	return jaasKeyPrefix + k.listener + "." + strings.ToLower(k.mechanism) + jaasKeySuffix
}

// parseJAASKey parses listener.name.<listener>.<mechanism>.sasl.jaas.config
// with a lower-case listener and a supported mechanism in lower case.
func parseJAASKey(key string) (jaasKey, bool) {
	mid, ok := strings.CutPrefix(key, jaasKeyPrefix)
	if !ok {
		return jaasKey{}, false
	}
	if mid, ok = strings.CutSuffix(mid, jaasKeySuffix); !ok {
		return jaasKey{}, false
	}
	dot := strings.LastIndexByte(mid, '.')
	if dot <= 0 {
		return jaasKey{}, false
	}
	listener, mech := mid[:dot], mid[dot+1:]
	if listener != strings.ToLower(listener) || mech != strings.ToLower(mech) ||
		!slices.Contains(mechanismNames, strings.ToUpper(mech)) {
		return jaasKey{}, false
	}
	return jaasKey{listener: listener, mechanism: strings.ToUpper(mech)}, true
}

// jaasDef is the Def of a JAAS key, for brokerPatterns.
func jaasDef(key string) (Def, bool) {
	k, ok := parseJAASKey(key)
	if !ok {
		return Def{}, false
	}
	return secret(nullDef(key, Password, "", func(v string) error {
		_, err := jaasUsers(k.mechanism, v)
		return err
	}, "JAAS login module of SASL mechanism "+k.mechanism+" on the listener, Kafka's broker form. "+jaasDoc(k.mechanism))), true
}

func jaasDoc(mechanism string) string {
	const own = "username and password are the broker's own credentials, which it presents to other brokers when the listener is inter.broker.listener.name and the mechanism is sasl.mechanism.inter.broker.protocol."
	switch mechanism {
	case MechanismPlain:
		return plainLoginModule + ` required username="<broker>" password="<password>" user_<name>="<password>" ...; each user_ option is a PLAIN user (list the broker's own user too); ` + own
	case MechanismOAuthBearer:
		return oauthLoginModule + ` required unsecuredValidatorPrincipalClaimName="sub" unsecuredValidatorRequiredScope="<scope> ..." ...; the unsecuredValidator* options configure the validation of unsecured tokens (the default handler); optional.`
	}
	return scramLoginModule + ` required username="<broker>" password="<password>";: ` + own + " The user needs a SCRAM credential in the metadata quorum (AlterUserScramCredentials)."
}

// jaasEnvKey maps STRATA_LISTENER_NAME_<LISTENER>_<MECH>_SASL_JAAS_CONFIG,
// MECH one of PLAIN, SCRAM_SHA_256 and SCRAM_SHA_512, to its JAAS key. The
// listener name may contain '_', so the mechanism is matched at the end.
func jaasEnvKey(name string) (string, bool) {
	mid, ok := strings.CutPrefix(name, jaasEnvPrefix)
	if !ok {
		return "", false
	}
	if mid, ok = strings.CutSuffix(mid, jaasEnvSuffix); !ok {
		return "", false
	}
	for _, mech := range mechanismNames {
		listener, ok := strings.CutSuffix(mid, "_"+strings.ReplaceAll(mech, "-", "_"))
		if ok && listener != "" {
			return jaasKey{listener: strings.ToLower(listener), mechanism: mech}.String(), true
		}
	}
	return "", false
}

// jaasModule is one parsed JAAS login module entry.
type jaasModule struct {
	class   string
	flag    string // required, requisite, sufficient or optional
	options map[string]string
}

// parseJAAS parses Kafka's sasl.jaas.config, one JAAS login module entry:
//
//	<LoginModule class> <flag> key="value" key2=bare ... ;
//
// The flag is required, requisite, sufficient or optional, in any case (as
// Kafka reads it). A value is double-quoted, with \" and \\ as the only
// escapes, or a bare token without whitespace, '=', ';' or '"'. The entry ends
// with ';' and nothing but whitespace follows. Errors quote the class, the
// flag and option names, never values, which hold passwords.
func parseJAAS(v string) (jaasModule, error) {
	s := jaasScanner{src: v}
	m := jaasModule{class: s.word(), options: make(map[string]string)}
	if m.class == "" {
		return m, errors.New("must be a JAAS login module entry: <LoginModule class> required key=\"value\" ... ;")
	}
	m.flag = s.word()
	switch strings.ToLower(m.flag) {
	case "required", "requisite", "sufficient", "optional":
	default:
		return m, fmt.Errorf("the login module %s must be followed by a flag (required, requisite, sufficient or optional), not %q", m.class, m.flag)
	}
	prev, prevBare := "", false
	for {
		s.skipSpace()
		if s.done() {
			return m, errors.New("must end with ';'")
		}
		if s.peek() == ';' {
			s.pos++
			break
		}
		start := s.pos
		key := s.word()
		s.skipSpace()
		if key == "" || s.done() || s.peek() != '=' {
			s.pos = start
			switch {
			case prevBare:
				return m, fmt.Errorf("the value of option %s is followed by more than an option; double-quote values with spaces", prev)
			case prev != "":
				return m, fmt.Errorf("expected key=value or ';' after option %s", prev)
			}
			return m, fmt.Errorf("expected key=value or ';' after the flag %s", m.flag)
		}
		s.pos++ // '='
		val, bare, err := s.value()
		if err != nil {
			return m, fmt.Errorf("option %s: %w", key, err)
		}
		if _, dup := m.options[key]; dup {
			return m, fmt.Errorf("option %s is given twice", key)
		}
		m.options[key] = val
		prev, prevBare = key, bare
	}
	if s.skipSpace(); !s.done() {
		return m, errors.New("must hold one login module: only whitespace may follow the ';'")
	}
	return m, nil
}

// jaasLogin is what a JAAS value of a mechanism holds for Strata: the users
// the server checks and the broker's own credentials.
type jaasLogin struct {
	// users are the PLAIN users (user_<name>="<password>"), by name; empty
	// for SCRAM, whose users live in the metadata quorum.
	users map[string]string
	// username and password are the options of those names: the
	// credentials the broker presents to other brokers when the listener is
	// the inter-broker listener. "" when not given.
	username, password string
}

// parseJAASLogin checks a JAAS value for the mechanism and returns what it
// holds.
func parseJAASLogin(mechanism, v string) (jaasLogin, error) {
	m, err := parseJAAS(v)
	if err != nil {
		return jaasLogin{}, err
	}
	if mechanism == MechanismOAuthBearer {
		if m.class != oauthLoginModule {
			return jaasLogin{}, fmt.Errorf("the login module of %s must be %s, not %s", mechanism, oauthLoginModule, m.class)
		}
		return jaasLogin{users: map[string]string{}}, checkOAuthOptions(m)
	}
	class, known := scramLoginModule, scramOptions
	if mechanism == MechanismPlain {
		class, known = plainLoginModule, plainOptions
	}
	if m.class != class {
		return jaasLogin{}, fmt.Errorf("the login module of %s must be %s, not %s", mechanism, class, m.class)
	}
	out := jaasLogin{users: make(map[string]string), username: m.options["username"], password: m.options["password"]}
	for _, k := range sortedKeys(m.options) {
		if slices.Contains(known, k) {
			continue
		}
		user, isUser := strings.CutPrefix(k, "user_")
		switch {
		case mechanism != MechanismPlain || !isUser:
			return jaasLogin{}, fmt.Errorf("option %s is not one %s takes: %s", k, class, jaasOptionNames(mechanism))
		case user == "":
			return jaasLogin{}, errors.New("option user_ names no user; write user_<name>=\"<password>\"")
		case m.options[k] == "":
			return jaasLogin{}, fmt.Errorf("option %s gives the user an empty password", k)
		}
		out.users[user] = m.options[k]
	}
	return out, nil
}

// jaasUsers checks a JAAS value for the mechanism and returns the PLAIN users
// it defines (user_<name>="<password>"), none for SCRAM.
func jaasUsers(mechanism, v string) (map[string]string, error) {
	l, err := parseJAASLogin(mechanism, v)
	return l.users, err
}

func jaasOptionNames(mechanism string) string {
	if mechanism == MechanismPlain {
		return strings.Join(plainOptions, ", ") + ", user_<name>"
	}
	return strings.Join(scramOptions, ", ")
}

// jaasScanner reads the tokens of a JAAS entry.
type jaasScanner struct {
	src string
	pos int
}

func (s *jaasScanner) done() bool { return s.pos >= len(s.src) }
func (s *jaasScanner) peek() byte { return s.src[s.pos] }

func (s *jaasScanner) skipSpace() {
	for !s.done() && isJAASSpace(s.peek()) {
		s.pos++
	}
}

// word reads a bare token after any whitespace; "" if there is none.
func (s *jaasScanner) word() string {
	s.skipSpace()
	start := s.pos
	for !s.done() && !isJAASSpace(s.peek()) && !strings.ContainsRune(`=;"`, rune(s.peek())) {
		s.pos++
	}
	return s.src[start:s.pos]
}

// value reads an option value after '=': a quoted string or a bare token.
func (s *jaasScanner) value() (v string, bare bool, err error) {
	s.skipSpace()
	if s.done() || s.peek() != '"' {
		if v = s.word(); v == "" {
			return "", false, errors.New(`has no value; write key="value"`)
		}
		return v, true, nil
	}
	s.pos++
	var b strings.Builder
	for !s.done() {
		c := s.peek()
		s.pos++
		switch c {
		case '"':
			return b.String(), false, nil
		case '\\':
			if s.done() || (s.peek() != '"' && s.peek() != '\\') {
				return "", false, errors.New(`a quoted value may only escape \" and \\`)
			}
			c = s.peek()
			s.pos++
		}
		b.WriteByte(c)
	}
	return "", false, errors.New(`the quoted value has no closing "`)
}

func isJAASSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

// setSASL fills b.SASLMechanisms and b.PlainUsers and checks the JAAS keys
// against the listeners and the mechanisms: each names a SASL listener and an
// enabled mechanism, and with PLAIN enabled every SASL listener has PLAIN
// users.
func (b *Broker) setSASL(g getter) error {
	b.SASLMechanisms = splitList(g.str("sasl.enabled.mechanisms"))
	for _, key := range sortedKeys(b.Raw) {
		k, ok := parseJAASKey(key)
		if !ok {
			continue
		}
		l, err := b.prefixedSASLListener(key, hiddenValue, k.listener)
		switch {
		case err != nil:
			return err
		case !slices.Contains(b.SASLMechanisms, k.mechanism):
			return &Error{Key: key, Value: hiddenValue,
				Msg: fmt.Sprintf("is for %s, which sasl.enabled.mechanisms (%s) does not enable; add it there", k.mechanism, g.str("sasl.enabled.mechanisms"))}
		}
		if k.mechanism != MechanismPlain {
			continue
		}
		users, err := jaasUsers(k.mechanism, b.Raw[key])
		if err != nil {
			panic("config: unvalidated " + key)
		}
		if len(users) > 0 {
			if b.PlainUsers == nil {
				b.PlainUsers = make(map[string]map[string]string)
			}
			b.PlainUsers[l.Name] = users
		}
	}
	if !slices.Contains(b.SASLMechanisms, MechanismPlain) {
		return nil
	}
	for _, l := range b.Listeners {
		if l.UsesSASL() && len(b.PlainUsers[l.Name]) == 0 {
			key := jaasKey{listener: strings.ToLower(l.Name), mechanism: MechanismPlain}.String()
			v, set := b.Raw[key]
			if set {
				v = hiddenValue
			}
			return &Error{Key: key, Value: v,
				Msg: fmt.Sprintf(`must define PLAIN users of listener %s (sasl.enabled.mechanisms has PLAIN): %s required user_<name>="<password>" ...;`, l.Name, plainLoginModule)}
		}
	}
	return nil
}
