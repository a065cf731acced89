package objstore

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

const (
	// keyMaxBytes is S3's limit on a key, which a Prefix (S3Options) also
	// eats into.
	keyMaxBytes = 1024
	// componentMaxBytes is NAME_MAX of common file systems: the directory
	// store and versitygw's posix backend store each component as a name.
	componentMaxBytes = 255
	// reservedPrefix starts the names the stores keep for themselves (the
	// directory store's temporary files); no key component may start so.
	reservedPrefix = ".strata-"
)

// ValidateKey reports whether key can name an object in every Store, and
// why not. A key is a '/'-separated path of 1 to 1024 bytes of UTF-8 with
// no control characters (NUL included); it does not start or end with '/';
// every component is non-empty, at most 255 bytes, not "." or "..", and
// does not start with ".strata-" (reserved). The same rules hold in every
// Store, so that a key good for one is good for all. The error wraps
// ErrInvalidKey.
func ValidateKey(key string) error {
	if key == "" {
		return keyError(key, "empty")
	}
	if strings.HasSuffix(key, "/") {
		return keyError(key, "ends with '/'")
	}
	return validatePath(key, false)
}

// validatePrefix checks a List or DeletePrefix prefix: empty, or the start
// of a valid key. Its last component may be partial (even empty, after a
// trailing '/'); the complete ones obey ValidateKey's rules.
func validatePrefix(prefix string) error {
	if prefix == "" {
		return nil
	}
	return validatePath(prefix, true)
}

func validatePath(p string, partialLast bool) error {
	if len(p) > keyMaxBytes {
		return keyError(p, fmt.Sprintf("%d bytes long, more than %d", len(p), keyMaxBytes))
	}
	if !utf8.ValidString(p) {
		return keyError(p, "not valid UTF-8")
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return keyError(p, fmt.Sprintf("contains the control character %U", r))
		}
	}
	if strings.HasPrefix(p, "/") {
		return keyError(p, "starts with '/'")
	}
	parts := strings.Split(p, "/")
	for i, c := range parts {
		last := i == len(parts)-1
		if partialLast && last {
			if len(c) > componentMaxBytes {
				return keyError(p, fmt.Sprintf("has a component longer than %d bytes", componentMaxBytes))
			}
			continue
		}
		switch {
		case c == "":
			return keyError(p, "has an empty component ('//')")
		case c == "." || c == "..":
			return keyError(p, fmt.Sprintf("has a %q component", c))
		case len(c) > componentMaxBytes:
			return keyError(p, fmt.Sprintf("has a component longer than %d bytes", componentMaxBytes))
		case strings.HasPrefix(c, reservedPrefix):
			return keyError(p, fmt.Sprintf("has a component starting with %q, which is reserved", reservedPrefix))
		}
	}
	return nil
}

func keyError(key, why string) error {
	const shown = 80 // a 1 KiB key in an error line helps nobody
	if len(key) > shown {
		key = key[:shown] + "…"
	}
	return fmt.Errorf("objstore: key %q %s: %w", key, why, ErrInvalidKey)
}
