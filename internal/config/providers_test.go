package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	fileClass = "org.apache.kafka.common.config.provider.FileConfigProvider"
	dirClass  = "org.apache.kafka.common.config.provider.DirectoryConfigProvider"
	envClass  = "org.apache.kafka.common.config.provider.EnvVarConfigProvider"
)

// providerFixture is a secrets properties file and a directory of secret
// files, as Kafka's FileConfigProvider and DirectoryConfigProvider read.
func providerFixture(t *testing.T) (secrets, dir string) {
	t.Helper()
	root := t.TempDir()
	secrets = filepath.Join(root, "secrets.properties")
	if err := os.WriteFile(secrets, []byte("rack = rack-from-file\nhours=48\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(root, "secrets.d")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rack"), []byte("rack-from-dir"), 0o600); err != nil {
		t.Fatal(err)
	}
	return secrets, dir
}

// References of the three built-in providers resolve wherever a value
// holds them, from the file, the environment and flags alike; the result
// is validated as a value written out would be.
func TestConfigProvidersResolveReferences(t *testing.T) {
	secrets, dir := providerFixture(t)
	providers := map[string]string{
		"config.providers":            "file,dir,env",
		"config.providers.file.class": fileClass,
		"config.providers.dir.class":  dirClass,
		"config.providers.env.class":  envClass,
	}
	with := func(extra map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range providers {
			out[k] = v
		}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	env := []string{"RACK=rack-from-env", "PATH=/bin"}
	for _, tc := range []struct {
		name, value, want string
	}{
		{"file", "${file:" + secrets + ":rack}", "rack-from-file"},
		{"directory", "${dir:" + dir + ":rack}", "rack-from-dir"},
		{"environment", "${env:RACK}", "rack-from-env"},
		{"inside a value, twice", "a-${env:RACK}-${file:" + secrets + ":rack}", "a-rack-from-env-rack-from-file"},
		{"an unconfigured provider stays", "${vault:secret/kafka:rack}", "${vault:secret/kafka:rack}"},
		{"no reference", "plain", "plain"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := mustLoad(t, "", env, with(map[string]string{"broker.rack": tc.value}))
			if b.BrokerRack != tc.want {
				t.Fatalf("broker.rack = %q, want %q", b.BrokerRack, tc.want)
			}
		})
	}
	t.Run("a STRATA_ variable", func(t *testing.T) {
		b := mustLoad(t, "", append(env, "STRATA_BROKER_RACK=${env:RACK}"), providers)
		if b.BrokerRack != "rack-from-env" {
			t.Fatalf("broker.rack = %q", b.BrokerRack)
		}
	})
	t.Run("validated after resolving", func(t *testing.T) {
		b := mustLoad(t, "", env, with(map[string]string{"log.retention.hours": "${file:" + secrets + ":hours}"}))
		if b.Retention.Duration.Hours() != 48 {
			t.Fatalf("log.retention.hours resolved to %v", b.Retention)
		}
		_, err := LoadBroker("", []string{"H=soon"}, with(map[string]string{"log.retention.hours": "${env:H}"}))
		var ce *Error
		if !errors.As(err, &ce) || ce.Key != "log.retention.hours" {
			t.Fatalf("a resolved value that is no number: %v", err)
		}
	})
	t.Run("providers set up by STRATA_ variables", func(t *testing.T) {
		b := mustLoad(t, "", []string{"RACK=r1", "STRATA_CONFIG_PROVIDERS=env", "STRATA_CONFIG_PROVIDERS_ENV_CLASS=" + envClass,
			"STRATA_CONFIG_PROVIDERS_ENV_PARAM_ALLOWLIST_PATTERN=RA.*", "STRATA_BROKER_RACK=${env:RACK}"}, nil)
		if b.BrokerRack != "r1" {
			t.Fatalf("broker.rack = %q", b.BrokerRack)
		}
	})
	t.Run("a server.properties", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "server.properties")
		body := "config.providers=file\nconfig.providers.file.class=" + fileClass + "\nbroker.rack=${file:" + secrets + ":rack}\n"
		if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if b := mustLoad(t, file, nil, nil); b.BrokerRack != "rack-from-file" {
			t.Fatalf("broker.rack = %q", b.BrokerRack)
		}
	})
}

// What cannot be resolved is an error of one line that names the key, the
// reference and what to do.
func TestConfigProvidersRefuse(t *testing.T) {
	secrets, dir := providerFixture(t)
	elsewhere := t.TempDir()
	for _, tc := range []struct {
		name  string
		env   []string
		flags map[string]string
		want  []string
	}{
		{"a provider without a class", nil, map[string]string{"config.providers": "file"},
			[]string{"config.providers", "config.providers.file.class is not set", fileClass}},
		{"a class Strata does not have", nil, map[string]string{"config.providers": "v", "config.providers.v.class": "com.example.Vault"},
			[]string{"config.providers.v.class", fileClass}},
		{"a key the file lacks", nil, map[string]string{"config.providers": "file", "config.providers.file.class": fileClass,
			"broker.rack": "${file:" + secrets + ":nope}"}, []string{"broker.rack", "${file:" + secrets + ":nope}", "key nope in " + secrets + " not found"}},
		{"a file that is not there", nil, map[string]string{"config.providers": "file", "config.providers.file.class": fileClass,
			"broker.rack": "${file:/nonexistent/s.properties:rack}"}, []string{"broker.rack", "cannot read /nonexistent/s.properties"}},
		{"a file provider without a path", nil, map[string]string{"config.providers": "file", "config.providers.file.class": fileClass,
			"broker.rack": "${file:rack}"}, []string{"broker.rack", "needs a path"}},
		{"outside allowed.paths", nil, map[string]string{"config.providers": "file", "config.providers.file.class": fileClass,
			"config.providers.file.param.allowed.paths": elsewhere, "broker.rack": "${file:" + secrets + ":rack}"},
			[]string{"broker.rack", "outside the provider's allowed.paths"}},
		{"allowed.paths not absolute", nil, map[string]string{"config.providers": "file", "config.providers.file.class": fileClass,
			"config.providers.file.param.allowed.paths": "relative/dir"}, []string{"config.providers.file.param.allowed.paths", "not absolute"}},
		{"a directory entry that is no file", nil, map[string]string{"config.providers": "dir", "config.providers.dir.class": dirClass,
			"broker.rack": "${dir:" + filepath.Dir(dir) + ":secrets.d}"}, []string{"regular file secrets.d"}},
		{"a variable the allowlist leaves out", []string{"RACK=r"}, map[string]string{"config.providers": "env", "config.providers.env.class": envClass,
			"config.providers.env.param.allowlist.pattern": "KAFKA_.*", "broker.rack": "${env:RACK}"}, []string{"environment variable RACK"}},
		{"an env provider given a path", []string{"RACK=r"}, map[string]string{"config.providers": "env", "config.providers.env.class": envClass,
			"broker.rack": "${env:/x:RACK}"}, []string{"takes no path"}},
		{"a parameter the class does not take", nil, map[string]string{"config.providers": "env", "config.providers.env.class": envClass,
			"config.providers.env.param.allowed.paths": "/"}, []string{"config.providers.env.param.allowed.paths", envClass}},
		{"an unknown parameter", nil, map[string]string{"config.providers.file.param.colour": "blue"}, []string{"unknown config provider parameter"}},
		{"a provider named twice", nil, map[string]string{"config.providers": "file,file"}, []string{"named twice"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadBroker("", tc.env, tc.flags)
			if err == nil {
				t.Fatal("loaded")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error of more than one line: %q", err)
			}
		})
	}
}

func TestProviderKey(t *testing.T) {
	for _, tc := range []struct {
		key, name, param string
		ok               bool
	}{
		{"config.providers.file.class", "file", "", true},
		{"config.providers.file.param.allowed.paths", "file", "allowed.paths", true},
		{"config.providers.class", "", "", false},
		{"config.providers..class", "", "", false},
		{"config.providers.a.b.class", "", "", false},
		{"config.providers.file.param.", "", "", false},
		{"config.providers", "", "", false},
		{"config.providersx.file.class", "", "", false},
	} {
		name, param, ok := providerKey(tc.key)
		if name != tc.name || param != tc.param || ok != tc.ok {
			t.Errorf("providerKey(%q) = %q %q %v, want %q %q %v", tc.key, name, param, ok, tc.name, tc.param, tc.ok)
		}
	}
}
