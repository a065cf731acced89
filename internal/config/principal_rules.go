package config

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

const principalRulesKey = "ssl.principal.mapping.rules"

// PrincipalRules is a parsed ssl.principal.mapping.rules (KIP-371): how the
// subject of a TLS client certificate, its distinguished name as Kafka
// prints it (RFC 2253, e.g. CN=app,OU=Eng,O=Example), becomes the
// principal's name. The zero value is DEFAULT: the name is the DN.
//
// The value is read as Kafka's SslPrincipalMapper reads it, with Kafka's
// own grammar: rules separated by commas (a comma inside a pattern or a
// replacement does not separate), each DEFAULT or RULE:pattern/replacement/
// with an optional L (lower case) or U (upper case) after it; a backslash
// escapes the next character, so \/ is a slash inside a pattern or a
// replacement (an unescaped one ends it, even inside [...]). Empty rules
// between commas are skipped. Map tries the rules in order: DEFAULT always
// applies; a RULE applies when its pattern matches the whole DN, and then
// the name is Java's dn.replaceAll(pattern, replacement), $n and ${name}
// standing for the pattern's groups. As in Kafka, that replaces every match
// of the pattern, not only the whole DN: RULE:.*/x/ maps "abc" to "xx"
// (".*" also matches the empty string at the end). Anchor patterns with ^
// and $ to get one replacement.
//
// Where Strata differs from Kafka:
//   - Patterns are Go regular expressions (RE2), not Java's: a pattern Go
//     cannot compile (lookaround, backreferences, possessive quantifiers) is
//     refused; . excludes only \n, and $ without (?m) matches only at the
//     very end.
//   - Errors that Kafka meets only when a rule applies, and then fails the
//     authentication with, are refused when the value is parsed: a
//     replacement that Java's Matcher cannot expand (a trailing backslash, a
//     $ without a group, a group the pattern lacks such as $1 without
//     groups). So is a value with no rule at all (Kafka refuses every
//     certificate then), and text that Kafka's splitter would silently skip
//     (only possible around line breaks).
//   - L and U change case rune by rune (strings.ToLower, ToUpper), where
//     Java uses full case mappings: U keeps ß, which Java makes SS.
type PrincipalRules struct {
	// rules is nil only in the zero value, which is DEFAULT; a parsed value
	// has at least one rule.
	rules []principalRule
}

// principalRule is one rule: DEFAULT when pattern is nil.
type principalRule struct {
	text       string // as Kafka prints it: DEFAULT, RULE:pattern/replacement/L
	pattern    *regexp.Regexp
	whole      *regexp.Regexp // \A(?:pattern)\z: Java's Matcher.matches
	from       *regexp.Regexp // \A.(.*?)(?:pattern): see searchFrom
	template   string         // the replacement, for pattern.ExpandString
	caseChange caseChange
}

// caseChange is what a rule's flag does to the name. The zero value is
// invalid, so an unset flag is a programmer error.
type caseChange int8

const (
	keepCase caseChange = iota + 1
	lowerCase
	upperCase
)

// Java's regex classes, spelled for RE2: . (without DOTALL) excludes Java's
// line terminators; \s is ASCII white space with \v. Kafka's grammar uses
// them, and Go's own . and \s differ.
const (
	javaDot   = `[^\n\r\x{85}\x{2028}\x{2029}]`
	javaSpace = `[\t\n\v\f\r ]`
)

// ruleGrammar is Kafka's grammar of one rule (SslPrincipalMapper's
// RULE_PATTERN) in RE2 syntax: DEFAULT; RULE:pattern/replacement/ and an
// optional L or U, then anything up to the separator (which the parser
// refuses); or anything (an empty rule, or a malformed one). Inside pattern
// and replacement a backslash escapes any character, so \/ does not end
// them, and a comma needs no escape.
const ruleGrammar = `(?P<default>DEFAULT)` +
	`|RULE:(?P<pattern>(?:\\` + javaDot + `|[^\\/])*)/(?P<replacement>(?:\\` + javaDot + `|[^\\/])*)/(?P<flag>[LU]?)` + javaDot + `*?` +
	`|` + javaDot + `*?`

var (
	// ruleSplitter finds the rules of a value as Kafka's RULE_SPLITTER
	// does: a rule, then a comma or the end, with white space around. Go
	// matches leftmost-first, as Java's backtracking does, so the rules found
	// are Kafka's.
	ruleSplitter = regexp.MustCompile(javaSpace + `*(?P<rule>` + ruleGrammar + `)` + javaSpace + `*(?:,` + javaSpace + `*|$)`)
	// ruleParser reads one rule from its start, as Kafka's RULE_PARSER
	// with lookingAt; the rule is valid only if it reads all of it.
	ruleParser = regexp.MustCompile(`\A(?:` + ruleGrammar + `)`)
	// backReference is a $n of a replacement, as Kafka looks for them.
	backReference = regexp.MustCompile(`\$([0-9]+)`)
)

// ParsePrincipalRules parses a value of ssl.principal.mapping.rules (see
// PrincipalRules). The value is trimmed first. A bad value is an *Error
// for the key that names the rule and what is wrong with it.
func ParsePrincipalRules(s string) (PrincipalRules, error) {
	rules, err := parsePrincipalRules(s)
	if err != nil {
		return PrincipalRules{}, &Error{Key: principalRulesKey, Value: s, Msg: err.Error()}
	}
	return PrincipalRules{rules: rules}, nil
}

// validPrincipalRules is the validator of ssl.principal.mapping.rules.
func validPrincipalRules(v string) error {
	_, err := parsePrincipalRules(v)
	return err
}

// setPrincipalRules fills b.SSLPrincipalRules.
func (b *Broker) setPrincipalRules(g getter) {
	rules, err := ParsePrincipalRules(g.str(principalRulesKey))
	if err != nil {
		panic("config: unvalidated " + principalRulesKey) // checked by validPrincipalRules
	}
	b.SSLPrincipalRules = rules
}

// Map returns the principal's name for the subject DN of a client
// certificate: that of the first rule that applies. ok is false when no
// rule applies, where Kafka fails the authentication with "No rules apply
// to <dn>, rules <r.String()>".
func (r PrincipalRules) Map(dn string) (name string, ok bool) {
	if r.rules == nil {
		return dn, true
	}
	for i := range r.rules {
		if name, ok := r.rules[i].apply(dn); ok {
			return name, true
		}
	}
	return "", false
}

// String lists the rules as Kafka prints them, e.g. [RULE:^CN=(.*)$/$1/L,
// DEFAULT] (a rule without a flag loses its last slash, as in Kafka).
func (r PrincipalRules) String() string {
	if r.rules == nil {
		return "[DEFAULT]"
	}
	texts := make([]string, len(r.rules))
	for i, rule := range r.rules {
		texts[i] = rule.text
	}
	return "[" + strings.Join(texts, ", ") + "]"
}

// ruleSyntax is what a rule must look like, for errors.
const ruleSyntax = `DEFAULT or RULE:pattern/replacement/ with an optional L or U after it (a slash inside pattern or replacement is written \/)`

// parsePrincipalRules splits and parses the rules of v.
func parsePrincipalRules(v string) ([]principalRule, error) {
	// Kafka trims with String.trim (everything up to ' '); values are
	// already trimmed of Unicode spaces.
	v = strings.TrimFunc(v, func(r rune) bool { return r <= ' ' || unicode.IsSpace(r) })
	ruleGroup := ruleSplitter.SubexpIndex("rule")
	var rules []principalRule
	end := 0 // of the last rule found
	for _, m := range ruleSplitter.FindAllStringSubmatchIndex(v, -1) {
		if skipped := v[end:m[0]]; strings.TrimSpace(skipped) != "" {
			return nil, fmt.Errorf("has %q between rules, which is no rule (Kafka would skip it); remove it or the line break before it", skipped)
		}
		end = m[1]
		rule, ok, err := parseRule(v[m[2*ruleGroup]:m[2*ruleGroup+1]])
		if err != nil {
			return nil, err
		}
		if ok {
			rules = append(rules, rule)
		}
	}
	if skipped := v[end:]; strings.TrimSpace(skipped) != "" {
		return nil, fmt.Errorf("ends in %q, which is no rule (Kafka would skip it); remove it or the line break before it", skipped)
	}
	if len(rules) == 0 {
		return nil, errors.New("has no rule, so no client certificate would be accepted; give at least one, e.g. DEFAULT (the subject unchanged)")
	}
	return rules, nil
}

// parseRule parses the text of one rule. ok is false for an empty rule,
// which Kafka skips.
func parseRule(text string) (rule principalRule, ok bool, err error) {
	m := ruleParser.FindStringSubmatchIndex(text) // never nil: the grammar's last branch matches ""
	if m[1] != len(text) {
		if m[1] > 0 {
			return principalRule{}, false, fmt.Errorf("rule %q has %q after its end; each rule must be %s", text, text[m[1]:], ruleSyntax)
		}
		return principalRule{}, false, fmt.Errorf("rule %q must be %s", text, ruleSyntax)
	}
	group := func(name string) (string, bool) {
		i := ruleParser.SubexpIndex(name)
		if m[2*i] < 0 {
			return "", false
		}
		return text[m[2*i]:m[2*i+1]], true
	}
	if _, ok := group("default"); ok {
		return principalRule{text: text}, true, nil
	}
	pattern, ok := group("pattern")
	if !ok {
		return principalRule{}, false, nil // "": an empty rule
	}
	replacement, _ := group("replacement")
	flag, _ := group("flag")
	rule, err = newRule(text, pattern, replacement, flag)
	return rule, err == nil, err
}

// newRule compiles a RULE: its pattern, the anchored forms that Map needs,
// and its replacement.
func newRule(text, pattern, replacement, flag string) (principalRule, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return principalRule{}, fmt.Errorf("rule %q: the pattern does not compile as a Go (RE2) regular expression, "+
			"which has no lookaround, backreferences or possessive quantifiers: %v", text, err)
	}
	if name, dup := duplicateName(re); dup {
		return principalRule{}, fmt.Errorf("rule %q: the pattern names two groups %s; as in Java, a name may be used once", text, name)
	}
	// An unclosed \Q quotes to the end of the pattern, so it would swallow
	// the ) of the forms below; closing it first changes nothing else.
	inner := pattern
	if _, err := regexp.Compile("(?:" + inner + ")"); err != nil {
		inner += `\E`
	}
	whole, err := regexp.Compile(`\A(?:` + inner + `)\z`)
	if err != nil {
		return principalRule{}, fmt.Errorf("rule %q: the pattern cannot be anchored: %v", text, err)
	}
	from, err := regexp.Compile(`\A(?s:.)((?s:.)*?)(?:` + inner + `)`)
	if err != nil {
		return principalRule{}, fmt.Errorf("rule %q: the pattern cannot be anchored: %v", text, err)
	}
	escaped, err := kafkaEscapeBackReferences(replacement, re.NumSubexp())
	if err != nil {
		return principalRule{}, fmt.Errorf("rule %q: the replacement %s", text, err)
	}
	template, err := javaReplacement(escaped, re)
	if err != nil {
		return principalRule{}, fmt.Errorf("rule %q: the replacement %s", text, err)
	}
	rule := principalRule{text: "RULE:" + pattern + "/" + replacement, // Kafka's Rule.toString
		pattern: re, whole: whole, from: from, template: template, caseChange: keepCase}
	switch flag {
	case "L":
		rule.text, rule.caseChange = rule.text+"/L", lowerCase
	case "U":
		rule.text, rule.caseChange = rule.text+"/U", upperCase
	}
	return rule, nil
}

// duplicateName returns a group name that re uses twice: Go allows that,
// Java does not, and ${name} would be ambiguous.
func duplicateName(re *regexp.Regexp) (string, bool) {
	seen := make(map[string]bool)
	for _, name := range re.SubexpNames() {
		if name != "" && seen[name] {
			return name, true
		}
		seen[name] = true
	}
	return "", false
}

// kafkaEscapeBackReferences is what Kafka does to a replacement before
// Java reads it (SslPrincipalMapper's escapeLiteralBackReferences, taken
// from Apache NiFi): with at least one group, a $n whose number, cut down
// digit by digit while above 9, is still above the number of groups becomes
// the literal \$n; $0... is left alone. Without groups nothing is escaped.
// Each backslash goes in at the $'s offset in the original replacement, so
// after the first one they land early and leave their $n unescaped, which
// Java then refuses; that is kept, so that Strata refuses what Kafka cannot
// use.
func kafkaEscapeBackReferences(replacement string, groups int) (string, error) {
	if groups == 0 {
		return replacement, nil
	}
	out := replacement
	for _, m := range backReference.FindAllStringSubmatchIndex(replacement, -1) {
		digits := replacement[m[2]:m[3]]
		if digits[0] == '0' {
			continue
		}
		n, err := strconv.ParseInt(digits, 10, 64)
		if err != nil || n > math.MaxInt32 { // Java's Integer.parseInt fails
			return "", fmt.Errorf("has the group number $%s, which is too large", digits)
		}
		for n > int64(groups) && n >= 10 {
			n /= 10
		}
		if n > int64(groups) {
			out = out[:m[0]] + `\` + out[m[0]:]
		}
	}
	return out, nil
}

// javaReplacement reads a replacement as Java's Matcher.appendReplacement
// does for re, and returns it as a template for re.ExpandString: \c is the
// character c; $n is group n, n the longest run of digits that is not above
// the number of groups; ${name} is the group called name. Its errors are
// those Java throws when the rule applies.
func javaReplacement(replacement string, re *regexp.Regexp) (string, error) {
	var t strings.Builder
	for i := 0; i < len(replacement); {
		switch c := replacement[i]; c {
		case '\\':
			if i+1 == len(replacement) {
				return "", errors.New(`ends in a backslash, which escapes nothing`)
			}
			_, w := utf8.DecodeRuneInString(replacement[i+1:])
			t.WriteString(strings.ReplaceAll(replacement[i+1:i+1+w], "$", "$$"))
			i += 1 + w
		case '$':
			ref, n, err := javaGroupRef(replacement[i+1:], re)
			if err != nil {
				return "", err
			}
			fmt.Fprintf(&t, "${%d}", ref)
			i += 1 + n
		default:
			t.WriteByte(c)
			i++
		}
	}
	return t.String(), nil
}

// javaGroupRef reads the group reference after a $ in a replacement: the
// group's number and how many bytes it took.
func javaGroupRef(s string, re *regexp.Regexp) (group, n int, err error) {
	const dollar = `; a $ must be followed by a group number or {name}, and a literal $ is written \$`
	if s == "" {
		return 0, 0, errors.New("ends in $" + dollar)
	}
	if s[0] == '{' {
		j := 1
		for j < len(s) && isASCIIAlnum(s[j]) {
			j++
		}
		name := s[1:j]
		switch {
		case name == "":
			return 0, 0, errors.New("has ${ without a group name" + dollar)
		case j == len(s) || s[j] != '}':
			return 0, 0, fmt.Errorf("has ${%s without its closing }; a group name is letters and digits", name)
		case name[0] >= '0' && name[0] <= '9':
			return 0, 0, fmt.Errorf("has ${%s}, a group name that starts with a digit", name)
		}
		if group = re.SubexpIndex(name); group < 0 {
			return 0, 0, fmt.Errorf("refers to the group ${%s}, which the pattern does not have", name)
		}
		return group, j + 1, nil
	}
	if s[0] < '0' || s[0] > '9' {
		return 0, 0, errors.New("has a $ before " + strconv.Quote(s[:1]) + dollar)
	}
	group, n = int(s[0]-'0'), 1
	for n < len(s) && s[n] >= '0' && s[n] <= '9' && group*10+int(s[n]-'0') <= re.NumSubexp() {
		group, n = group*10+int(s[n]-'0'), n+1
	}
	if group > re.NumSubexp() {
		return 0, 0, fmt.Errorf("refers to the group $%d, but the pattern has %d groups; a literal $%d is written \\$\\%d", group, re.NumSubexp(), group, group)
	}
	return group, n, nil
}

func isASCIIAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// apply is the rule's name for dn; ok is false when the rule does not
// apply.
func (r *principalRule) apply(dn string) (name string, ok bool) {
	if r.pattern == nil {
		return dn, true
	}
	if !r.whole.MatchString(dn) {
		return "", false
	}
	name = r.replaceAll(dn)
	switch r.caseChange {
	case keepCase:
	case lowerCase:
		name = strings.ToLower(name)
	case upperCase:
		name = strings.ToUpper(name)
	default:
		panic(fmt.Sprintf("config: principal rule %s has no case change", r.text))
	}
	return name, true
}

// replaceAll is Java's dn.replaceAll(pattern, replacement), which is how
// Kafka computes the name. It differs from Go's ReplaceAllString in one
// thing: after a match, Java also takes an empty match where it ended.
// So the matches are found one by one, as Java's Matcher.find does: from
// the end of the last match, or one character further after an empty one.
func (r *principalRule) replaceAll(dn string) string {
	var out []byte
	done := 0 // dn[:done] is in out
	for m := r.pattern.FindStringSubmatchIndex(dn); m != nil; {
		out = append(out, dn[done:m[0]]...)
		out = r.pattern.ExpandString(out, r.template, dn, m)
		done = m[1]
		next := m[1]
		if m[0] == m[1] {
			if next == len(dn) {
				break
			}
			_, w := utf8.DecodeRuneInString(dn[next:])
			next += w
		}
		m = r.searchFrom(dn, next)
	}
	return string(append(out, dn[done:]...))
}

// searchFrom is the first match of the pattern in dn that starts at or
// after p (0 < p <= len(dn)), with its groups, as indexes into dn. Go has
// no search from an offset, and one in dn[p:] would lose what ^, \b and
// (?m)^ see before p; so r.from searches dn from the rune before p, which
// it skips, and its lazy group finds the leftmost start.
func (r *principalRule) searchFrom(dn string, p int) []int {
	_, w := utf8.DecodeLastRuneInString(dn[:p])
	base := p - w
	a := r.from.FindStringSubmatchIndex(dn[base:])
	if a == nil {
		return nil
	}
	// a holds the whole match, the skipped runes (group 1), then the
	// pattern's groups; the pattern's match starts where the skip ends.
	m := make([]int, len(a)-2)
	m[0], m[1] = a[3]+base, a[1]+base
	for i := 2; i < len(m); i++ {
		if m[i] = a[i+2]; m[i] >= 0 {
			m[i] += base
		}
	}
	return m
}
