package acl

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestClipBoundsMessages: client text up to 128 bytes goes into a message
// whole; longer text is cut at a rune boundary at or before byte 128.
func TestClipBoundsMessages(t *testing.T) {
	ascii := func(n int) string { return strings.Repeat("x", n) }
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"one under the limit", ascii(127), ascii(127)},
		{"at the limit", ascii(128), ascii(128)},
		{"one over the limit", ascii(129), ascii(128) + "..."},
		{"a two-byte rune across the limit", ascii(127) + "é", ascii(127) + "..."},
		{"a four-byte rune across the limit", ascii(126) + "𝄞", ascii(126) + "..."},
		{"a rune ending at the limit", ascii(126) + "é" + "y", ascii(126) + "é..."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := clip(tc.in)
			if got != tc.want {
				t.Errorf("clip = %q, want %q", got, tc.want)
			}
			if !utf8.ValidString(got) {
				t.Errorf("clip = %q, not valid UTF-8", got)
			}
		})
	}
}
