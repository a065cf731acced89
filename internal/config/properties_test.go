package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseProperties(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []property
	}{
		{"equals and colon", "a=1\nb: 2\nc = 3\n", []property{{"a", "1", 1}, {"b", "2", 2}, {"c", "3", 3}}},
		{"first separator wins", "listeners=PLAINTEXT://h:9092\nx: y=z\n",
			[]property{{"listeners", "PLAINTEXT://h:9092", 1}, {"x", "y=z", 2}}},
		{"comments and blanks", "# c\n  ! c\n\n   \na=1\n", []property{{"a", "1", 5}}},
		{"hash inside a value is kept", "a=x # not a comment\n", []property{{"a", "x # not a comment", 1}}},
		{"trims both ends", "  a  =  v v  \t\n", []property{{"a", "v v", 1}}},
		{"empty value", "a=\n", []property{{"a", "", 1}}},
		{"crlf", "a=1\r\nb=2\r\n", []property{{"a", "1", 1}, {"b", "2", 2}}},
		{"bom", "\uFEFFa=1", []property{{"a", "1", 1}}},
		{"no trailing newline", "a=1", []property{{"a", "1", 1}}},
		{"continuation", "log.dirs=/a,\\\n    /b,\\\n\t/c\nn=1\n",
			[]property{{"log.dirs", "/a,/b,/c", 1}, {"n", "1", 4}}},
		{"continuation into a comment-like line", "a=x\\\n#y\n", []property{{"a", "x#y", 1}}},
		{"continuation at end of file", "a=x\\", []property{{"a", "x", 1}}},
		{"continuation then blank line", "a=x\\\n\nb=1\n", []property{{"a", "x", 1}, {"b", "1", 3}}},
		{"comment lines never continue", "# c \\\na=1\n", []property{{"a", "1", 2}}},
		{"escaped backslash is not a continuation", "a=C:\\\\\nb=1\n", []property{{"a", `C:\`, 1}, {"b", "1", 2}}},
		{"escapes", `k\=ey\:x=a\tb\u0041\\c\ `, []property{{"k=ey:x", "a\tbA\\c ", 1}}},
		{"whitespace separator", "listeners PLAINTEXT://h:1\nb  =  2\nc :3\n",
			[]property{{"listeners", "PLAINTEXT://h:1", 1}, {"b", "2", 2}, {"c", "3", 3}}},
		{"escaped space in key", `a\ b=1`, []property{{"a b", "1", 1}}},
		{"last duplicate wins later", "a=1\na=2\n", []property{{"a", "1", 1}, {"a", "2", 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseProperties("f", []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestParsePropertiesErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"no separator", "a=1\nlog.dirs\n", "f:2: expected key=value"},
		{"key then whitespace", "log.dirs  \n", "f:1: expected key=value"},
		{"empty key", "=1\n", "f:1: empty key"},
		{"bad unicode escape", "a=\\u12\n", `f:1: a: malformed \uXXXX`},
		{"not utf8", "a=\xff\n", "not UTF-8"},
		{"too big", strings.Repeat("#", maxPropertiesBytes+1), "larger than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseProperties("f", []byte(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func FuzzParseProperties(f *testing.F) {
	f.Add([]byte("a=1\nb: 2\\\n  3\n# c\n"))
	f.Add([]byte(`k\=x=\u0041\\`))
	f.Fuzz(func(t *testing.T, data []byte) {
		props, err := parseProperties("f", data)
		if err != nil {
			return
		}
		for _, p := range props {
			if p.key == "" || p.line < 1 {
				t.Fatalf("bad property %+v", p)
			}
		}
	})
}
