package config

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxPropertiesBytes bounds a properties file; a real one is a few KiB.
const maxPropertiesBytes = 1 << 20

// property is one key=value of a properties file, with the line it starts on.
type property struct {
	key, value string
	line       int
}

// PropertiesOf parses data, a Java properties file (the subset
// parseProperties reads), into its keys' values, the last of a repeated
// key winning; name is only used in errors. Kafka's meta.properties is one.
func PropertiesOf(name string, data []byte) (map[string]string, error) {
	props, err := parseProperties(name, data)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(props))
	for _, p := range props {
		out[p.key] = p.value
	}
	return out, nil
}

// parseProperties parses the subset of Java's .properties format that Kafka
// users write:
//   - key=value, key: value or key value (see splitProperty), with whitespace
//     around key and value trimmed;
//   - lines starting with '#' or '!' (after whitespace) are comments; a '#'
//     later in a line is part of the value, as in Java;
//   - a line ending in an odd number of backslashes continues on the next one,
//     whose leading whitespace is dropped; comment lines never continue;
//   - escapes \t \n \r \f \uXXXX, and \ before any other character (\=, \:,
//     \#, \\, "\ ") stands for that character.
//
// Unlike Java, a line that is only a key is an error rather than a key with an
// empty value, since it is almost always a typo. name is only used in errors.
func parseProperties(name string, data []byte) ([]property, error) {
	if len(data) > maxPropertiesBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes; is it a properties file?", name, maxPropertiesBytes)
	}
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%s: not UTF-8 text", name)
	}
	text := strings.TrimPrefix(string(data), "\uFEFF")
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	var out []property
	var logical strings.Builder
	start, continuing := 0, false
	for i, raw := range lines {
		l := strings.TrimLeft(raw, " \t\f\r")
		if !continuing {
			if l == "" || l[0] == '#' || l[0] == '!' {
				continue
			}
			start = i + 1
			logical.Reset()
		}
		l = strings.TrimRight(l, "\r")
		continuing = trailingBackslashes(l)%2 == 1
		if continuing {
			l = l[:len(l)-1]
		}
		logical.WriteString(l)
		if continuing && i < len(lines)-1 {
			continue
		}
		p, err := splitProperty(logical.String())
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, start, err)
		}
		p.line = start
		out = append(out, p)
		continuing = false
	}
	return out, nil
}

// splitProperty splits one logical line as Java does: the key ends at the
// first unescaped '=', ':' or whitespace; whitespace may be followed by one
// '=' or ':'.
func splitProperty(l string) (property, error) {
	sep := -1
	for i := 0; i < len(l); i++ {
		if l[i] == '\\' {
			i++
			continue
		}
		if strings.IndexByte("=: \t\f", l[i]) >= 0 {
			sep = i
			break
		}
	}
	if sep < 0 || strings.Trim(l[sep:], " \t\f") == "" {
		return property{}, fmt.Errorf("expected key=value or key: value, got %q", l)
	}
	key, err := unescape(l[:sep])
	if err != nil {
		return property{}, err
	}
	if key == "" {
		return property{}, fmt.Errorf("empty key in %q", l)
	}
	rest := l[sep:]
	if rest[0] != '=' && rest[0] != ':' {
		rest = strings.TrimLeft(rest, " \t\f")
	}
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = rest[1:]
	}
	value, err := unescape(trimUnescaped(rest))
	if err != nil {
		return property{}, fmt.Errorf("%s: %v", key, err)
	}
	return property{key: key, value: value}, nil
}

// trimUnescaped trims whitespace at both ends, keeping trailing whitespace
// that a backslash escapes.
func trimUnescaped(s string) string {
	s = strings.TrimLeft(s, " \t\f")
	for len(s) > 0 {
		c := s[len(s)-1]
		if c != ' ' && c != '\t' && c != '\f' {
			break
		}
		if trailingBackslashes(s[:len(s)-1])%2 == 1 {
			break
		}
		s = s[:len(s)-1]
	}
	return s
}

func trailingBackslashes(s string) int {
	n := 0
	for n < len(s) && s[len(s)-1-n] == '\\' {
		n++
	}
	return n
}

func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		i++
		if i == len(s) {
			break // a lone trailing backslash stands for nothing, as in Java
		}
		switch c := s[i]; c {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+5 > len(s) {
				return "", fmt.Errorf(`malformed \uXXXX escape`)
			}
			r, err := strconv.ParseUint(s[i+1:i+5], 16, 16)
			if err != nil {
				return "", fmt.Errorf(`malformed \uXXXX escape`)
			}
			b.WriteRune(rune(r))
			i += 4
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}
