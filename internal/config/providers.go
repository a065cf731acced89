package config

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Config providers (Kafka's KIP-297): a value may hold references
// ${provider:path:key} (or ${provider:key}) that are read, when the broker
// starts, from where the provider named in config.providers looks:
//
//	config.providers=file,dir,env
//	config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider
//	ssl.keystore.password=${file:/etc/kafka/secrets.properties:keystore.password}
//
// Kafka's three built-in providers are supported: FileConfigProvider (key
// of a properties file), DirectoryConfigProvider (content of the file key
// in directory path) and EnvVarConfigProvider (environment variable key, no
// path), with their parameters allowed.paths and allowlist.pattern
// (config.providers.<name>.param.<parameter>). Unlike Kafka, which leaves a
// reference it cannot resolve in the value as it stands, a reference to a
// configured provider that finds nothing is an error naming the reference.
// References to providers config.providers does not name stay as they are,
// as in Kafka. Only the broker's static configuration is resolved (the
// file, STRATA_* variables and flags), not dynamic configs.

const (
	providersKey      = "config.providers"
	fileProviderClass = "org.apache.kafka.common.config.provider.FileConfigProvider"
	dirProviderClass  = "org.apache.kafka.common.config.provider.DirectoryConfigProvider"
	envProviderClass  = "org.apache.kafka.common.config.provider.EnvVarConfigProvider"
	allowedPathsParam = "allowed.paths"
	allowlistParam    = "allowlist.pattern"
)

// providerDefs is config.providers; the keys of each provider are
// patterns (providerDef).
var providerDefs = []Def{
	def(providersKey, List, "", "", providerNames,
		"Names of config providers (KIP-297) whose references ${name:path:key} in other values are resolved at start; each needs config.providers.<name>.class, one of Kafka's FileConfigProvider, DirectoryConfigProvider and EnvVarConfigProvider."),
}

// providerNames checks config.providers: distinct names without dots.
func providerNames(v string) error {
	names := splitList(v)
	for i, n := range names {
		if strings.ContainsAny(n, ".:${}") {
			return fmt.Errorf("provider name %q may not contain '.', ':', '$', '{' or '}'", n)
		}
		if slices.Contains(names[:i], n) {
			return fmt.Errorf("provider %q is named twice", n)
		}
	}
	return nil
}

// providerParams are the parameters each provider class takes.
var providerParams = map[string][]string{
	fileProviderClass: {allowedPathsParam},
	dirProviderClass:  {allowedPathsParam},
	envProviderClass:  {allowlistParam},
}

// providerReference is Kafka's ConfigTransformer.DEFAULT_PATTERN: provider,
// an optional path, the key.
var providerReference = regexp.MustCompile(`\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}`)

// providerKey parses config.providers.<name>.class and
// config.providers.<name>.param.<param>; param is "" for the class key.
func providerKey(key string) (name, param string, ok bool) {
	rest, ok := strings.CutPrefix(key, providersKey+".")
	if !ok {
		return "", "", false
	}
	if name, ok := strings.CutSuffix(rest, ".class"); ok && name != "" && !strings.Contains(name, ".") {
		return name, "", true
	}
	name, param, ok = strings.Cut(rest, ".param.")
	if !ok || name == "" || strings.Contains(name, ".") || param == "" {
		return "", "", false
	}
	return name, param, true
}

// providerEnvKey maps STRATA_CONFIG_PROVIDERS_<NAME>_CLASS and
// STRATA_CONFIG_PROVIDERS_<NAME>_PARAM_<PARAM> (ALLOWED_PATHS or
// ALLOWLIST_PATTERN) to their keys, the provider name in lower case.
func providerEnvKey(env string) (string, bool) {
	rest, ok := strings.CutPrefix(env, "STRATA_CONFIG_PROVIDERS_")
	if !ok {
		return "", false
	}
	if name, ok := strings.CutSuffix(rest, "_CLASS"); ok && name != "" {
		return providersKey + "." + strings.ToLower(name) + ".class", true
	}
	for _, param := range []string{allowedPathsParam, allowlistParam} {
		suffix := "_PARAM_" + strings.TrimPrefix(envForm(param), "STRATA_")
		if name, ok := strings.CutSuffix(rest, suffix); ok && name != "" {
			return providersKey + "." + strings.ToLower(name) + ".param." + param, true
		}
	}
	return "", false
}

// providerDef is the Def of a config.providers.<name>.* key.
func providerDef(key string) (Def, bool) {
	_, param, ok := providerKey(key)
	switch {
	case !ok:
		return Def{}, false
	case param == "":
		return nullDef(key, String, "", oneOf(fileProviderClass, dirProviderClass, envProviderClass),
			"The class of the config provider named "+strings.TrimSuffix(strings.TrimPrefix(key, providersKey+"."), ".class")+" in config.providers: one of Kafka's built-in providers."), true
	case param == allowedPathsParam:
		return nullDef(key, List, "", nil,
			"Absolute paths (directories or files) that a file or directory provider may read below; empty allows any."), true
	case param == allowlistParam:
		return nullDef(key, String, "", func(v string) error {
			_, err := regexp.Compile("^(?:" + v + ")$")
			return err
		}, "A regular expression the names of environment variables an env provider reads must match (default: any)."), true
	}
	return nullDef(key, String, "", func(string) error {
		return fmt.Errorf("unknown config provider parameter %q: file and directory providers take %s, the env provider %s", param, allowedPathsParam, allowlistParam)
	}, "Parameter of a config provider."), true
}

// configProvider resolves the keys of one path.
type configProvider interface {
	get(path string, keys []string) (map[string]string, error)
}

// newProviders builds the providers config.providers names from the final
// values of the config.providers keys; env is what the env provider reads.
func newProviders(values map[string]string, env []string) (map[string]configProvider, error) {
	// The providers' own keys are checked first: they are not resolved.
	for _, key := range slices.Sorted(maps.Keys(values)) {
		if key == providersKey || strings.HasPrefix(key, providersKey+".") {
			if d, ok := LookupBroker(key); ok {
				if err := d.Check(values[key]); err != nil {
					return nil, err
				}
			}
		}
	}
	out := map[string]configProvider{}
	for _, name := range splitList(values[providersKey]) {
		classKey := providersKey + "." + name + ".class"
		class, ok := values[classKey]
		if !ok {
			return nil, &Error{Key: providersKey, Value: values[providersKey],
				Msg: fmt.Sprintf("names provider %q but %s is not set; set it to %s, %s or %s", name, classKey, fileProviderClass, dirProviderClass, envProviderClass)}
		}
		param := func(p string) (string, bool) {
			v, ok := values[providersKey+"."+name+".param."+p]
			return v, ok
		}
		for key := range values {
			if n, p, ok := providerKey(key); ok && n == name && p != "" && !slices.Contains(providerParams[class], p) {
				return nil, &Error{Key: key, Value: values[key], Msg: fmt.Sprintf("%s takes no parameter %q", class, p)}
			}
		}
		switch class {
		case fileProviderClass, dirProviderClass:
			allowed, err := allowedPaths(name, param)
			if err != nil {
				return nil, err
			}
			if class == fileProviderClass {
				out[name] = fileProvider{allowed}
			} else {
				out[name] = dirProvider{allowed}
			}
		case envProviderClass:
			pattern := ".*"
			if v, ok := param(allowlistParam); ok {
				pattern = v
			}
			re, err := regexp.Compile("^(?:" + pattern + ")$")
			if err != nil {
				return nil, &Error{Key: providersKey + "." + name + ".param." + allowlistParam, Value: pattern, Msg: err.Error()}
			}
			out[name] = envProvider{env: env, allow: re}
		}
	}
	return out, nil
}

// allowedPaths reads a provider's allowed.paths: absolute paths that
// exist, cleaned; nil allows any path.
func allowedPaths(name string, param func(string) (string, bool)) ([]string, error) {
	v, ok := param(allowedPathsParam)
	if !ok {
		return nil, nil
	}
	key := providersKey + "." + name + ".param." + allowedPathsParam
	var out []string
	for _, p := range splitList(v) {
		clean := filepath.Clean(p)
		if !filepath.IsAbs(clean) {
			return nil, &Error{Key: key, Value: v, Msg: fmt.Sprintf("path %s is not absolute", p)}
		}
		if _, err := os.Stat(clean); err != nil {
			return nil, &Error{Key: key, Value: v, Msg: fmt.Sprintf("path %s does not exist", p)}
		}
		out = append(out, clean)
	}
	return out, nil
}

// allowedPath is path cleaned, or an error when it is not below one of
// allowed (nil allows any), as Kafka's AllowedPaths decides.
func allowedPath(path string, allowed []string) (string, error) {
	clean := filepath.Clean(path)
	if allowed == nil {
		return clean, nil
	}
	for _, a := range allowed {
		if rel, err := filepath.Rel(a, clean); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return clean, nil
		}
	}
	return "", fmt.Errorf("%s is outside the provider's %s (%s)", path, allowedPathsParam, strings.Join(allowed, ","))
}

// fileProvider is FileConfigProvider: keys of a properties file.
type fileProvider struct{ allowed []string }

func (p fileProvider) get(path string, keys []string) (map[string]string, error) {
	if path == "" {
		return nil, errors.New("the file provider needs a path: ${provider:/path/to/file.properties:key}")
	}
	clean, err := allowedPath(path, p.allowed)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(clean)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, err)
	}
	return PropertiesOf(path, data)
}

// dirProvider is DirectoryConfigProvider: each key is the name of a
// regular file directly in the directory path, its value the file's bytes.
type dirProvider struct{ allowed []string }

func (p dirProvider) get(path string, keys []string) (map[string]string, error) {
	if path == "" {
		return nil, errors.New("the directory provider needs a path: ${provider:/path/to/dir:file}")
	}
	dir, err := allowedPath(path, p.allowed)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, k := range keys {
		if k == "" || strings.ContainsRune(k, filepath.Separator) || k == "." || k == ".." {
			continue // not a file name directly in the directory
		}
		file := filepath.Join(dir, k)
		info, err := os.Stat(file)
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("cannot read %s: %w", file, err)
		}
		out[k] = string(data)
	}
	return out, nil
}

// envProvider is EnvVarConfigProvider: environment variables whose names
// match allow; it takes no path.
type envProvider struct {
	env   []string
	allow *regexp.Regexp
}

func (p envProvider) get(path string, keys []string) (map[string]string, error) {
	if path != "" {
		return nil, fmt.Errorf("the env provider takes no path (%q): ${provider:NAME}", path)
	}
	out := map[string]string{}
	for _, kv := range p.env {
		name, value, ok := strings.Cut(kv, "=")
		if ok && slices.Contains(keys, name) && p.allow.MatchString(name) {
			out[name] = value
		}
	}
	return out, nil
}

// resolveReferences replaces each reference in value to a provider of
// providers with what it reads; references to other providers stay. A
// reference that reads nothing is an error naming it.
func resolveReferences(value string, providers map[string]configProvider) (string, error) {
	if len(providers) == 0 || !strings.Contains(value, "${") {
		return value, nil
	}
	var out strings.Builder
	last := 0
	for _, m := range providerReference.FindAllStringSubmatchIndex(value, -1) {
		ref := value[m[0]:m[1]]
		provider, ok := providers[value[m[2]:m[3]]]
		if !ok {
			continue
		}
		path := ""
		if m[6] >= 0 {
			path = value[m[6]:m[7]]
		}
		key := value[m[8]:m[9]]
		got, err := provider.get(path, []string{key})
		if err != nil {
			return "", fmt.Errorf("%s: %w", ref, err)
		}
		v, ok := got[key]
		if !ok {
			return "", fmt.Errorf("%s: %s not found", ref, describeMissing(provider, path, key))
		}
		out.WriteString(value[last:m[0]])
		out.WriteString(v)
		last = m[1]
	}
	out.WriteString(value[last:])
	return out.String(), nil
}

// describeMissing says what a reference looked for.
func describeMissing(p configProvider, path, key string) string {
	switch p.(type) {
	case fileProvider:
		return fmt.Sprintf("key %s in %s", key, path)
	case dirProvider:
		return fmt.Sprintf("regular file %s in %s", key, path)
	case envProvider:
		return fmt.Sprintf("environment variable %s (that the allowlist.pattern allows)", key)
	}
	return key
}
