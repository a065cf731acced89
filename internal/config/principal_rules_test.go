package config

import (
	"errors"
	"strings"
	"testing"
)

// kafkaDocRules are the rules of Kafka's documentation (security.html,
// "Customizing SSL User Name").
const kafkaDocRules = `RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,` +
	`RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L,` +
	`RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L,` +
	`DEFAULT`

// kafkaTestRules are those of Kafka's SslPrincipalMapperTest.testSslPrincipalMapper.
const kafkaTestRules = `RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L, ` +
	`RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L, ` +
	`RULE:^cn=(.*?),ou=(.*?),dc=(.*?),dc=(.*?)$/$1@$2/U, ` +
	`RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U, ` +
	`DEFAULT`

func TestPrincipalRulesMap(t *testing.T) {
	tests := []struct {
		name, rules, dn string
		want            string
		ok              bool
	}{
		{"default", "DEFAULT", "CN=Duke,OU=JavaSoft,O=Sun Microsystems,C=US", "CN=Duke,OU=JavaSoft,O=Sun Microsystems,C=US", true},

		// Kafka's documentation.
		{"doc: service user", kafkaDocRules, "CN=kafka-server1,OU=ServiceUsers,O=Org,C=US", "kafka-server1", true},
		{"doc: service user 2", kafkaDocRules, "CN=serviceuser,OU=ServiceUsers,O=Unknown,L=Unknown,ST=Unknown,C=Unknown", "serviceuser", true},
		{"doc: full DN, lower case", kafkaDocRules, "CN=adminUser,OU=Admin,O=Push,L=Portland,ST=OR,C=US", "adminuser@admin", true},
		{"doc: any CN, with spaces", kafkaDocRules, "CN=Duke, OU=JavaSoft, O=Sun Microsystems", "duke", true},
		{"doc: no CN, default", kafkaDocRules, "OU=JavaSoft,O=Sun Microsystems,C=US", "OU=JavaSoft,O=Sun Microsystems,C=US", true},
		{"doc: upper case", `RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/U`,
			"CN=adminUser,OU=Admin,O=Unknown,L=Unknown,ST=Unknown,C=Unknown", "ADMINUSER@ADMIN", true},

		// Kafka's SslPrincipalMapperTest.
		{"kafka test 1", kafkaTestRules, "CN=Duke,OU=ServiceUsers,O=Org,C=US", "duke", true},
		{"kafka test 2", kafkaTestRules, "CN=Duke,OU=SME,O=mycp,L=Fulton,ST=MD,C=US", "duke@sme", true},
		{"kafka test 3", kafkaTestRules, "cn=duke,ou=sme,dc=mycp,dc=com", "DUKE@SME", true},
		{"kafka test 4", kafkaTestRules, "cN=duke,OU=JavaSoft,O=Sun Microsystems", "DUKE", true},
		{"kafka test 5", kafkaTestRules, "OU=JavaSoft,O=Sun Microsystems,C=US", "OU=JavaSoft,O=Sun Microsystems,C=US", true},
		{"kafka: escaped comma in the pattern", `RULE:^CN=((\\, *|\w)+)(,.*|$)/$1/,DEFAULT`,
			`CN=Tkac\, Adam,OU=ITZ,DC=geodis,DC=cz`, `Tkac\, Adam`, true},

		// Commas and escaped slashes inside a rule.
		{"comma in a class", `RULE:^CN=([^,]+),.*$/$1/`, "CN=app,OU=Eng", "app", true},
		{"escaped slash in the pattern", `RULE:^CN=([^\/]+)\/(.*)$/$1/`, "CN=team/app", "team", true},
		{"escaped slash in the replacement", `RULE:^CN=([^,]+),OU=([^,]+)$/$2\/$1/`, "CN=app,OU=eng", "eng/app", true},
		{"comma in the replacement", `RULE:^CN=([^,]+),OU=([^,]+)$/$1,$2/`, "CN=app,OU=eng", "app,eng", true},
		{"escaped dollar", `RULE:^CN=(.*)$/\$$1/`, "CN=app", "$app", true},

		// Flags and order.
		{"no flag keeps case", `RULE:^CN=(.*)$/$1/`, "CN=App", "App", true},
		{"L", `RULE:^CN=(.*)$/$1/L`, "CN=App", "app", true},
		{"U", `RULE:^CN=(.*)$/$1/U`, "CN=App", "APP", true},
		{"first rule that applies wins", `RULE:^CN=(.*)$/first/,RULE:^CN=(.*)$/second/`, "CN=x", "first", true},
		{"later rule applies", `RULE:^CN=a$/a/,RULE:^CN=(.*)$/$1-b/`, "CN=x", "x-b", true},

		// A RULE applies only when its pattern matches the whole DN.
		{"partial match does not apply", `RULE:CN=app/x/`, "CN=app,OU=Eng", "", false},
		{"no rule applies", `RULE:^CN=(.*),OU=Apps$/$1/`, "CN=app,OU=Eng", "", false},

		// Groups as Kafka and Java's Matcher read them.
		{"$4 without a group 4 is literal", `RULE:^CN=(.*?),OU=(.*?),O=(.*?)$/$1@$4/`, "CN=a,OU=b,O=c", "a@$4", true},
		{"$12 with 2 groups is $1 then 2", `RULE:^CN=(.*),OU=(.*)$/$12/`, "CN=a,OU=b", "a2", true},
		{"$0 is the match", `RULE:^CN=(.*)$/<$0>/`, "CN=a", "<CN=a>", true},
		{"named group", `RULE:^CN=(?P<app>[^,]*),.*$/${app}/`, "CN=a,OU=b", "a", true},
		{"unmatched group is empty", `RULE:^CN=(a)?(.*)$/[$1]/`, "CN=b", "[]", true},

		// Java's replaceAll replaces every match, which Kafka inherits.
		{"replaceAll: empty match at the end", `RULE:.*/x/`, "abc", "xx", true},
		{"replaceAll: replacement twice", `RULE:(.*)/User-$1/`, "abc", "User-abcUser-", true},
		{"replaceAll: first match is shorter", `RULE:CN=(.*?)(,.*)?/$1/`, "CN=a,OU=b", "a,OU=b", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParsePrincipalRules(tt.rules)
			if err != nil {
				t.Fatalf("ParsePrincipalRules(%q): %v", tt.rules, err)
			}
			got, ok := r.Map(tt.dn)
			if got != tt.want || ok != tt.ok {
				t.Fatalf("Map(%q) = %q, %v; want %q, %v", tt.dn, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestPrincipalRulesZeroValueIsDefault(t *testing.T) {
	var r PrincipalRules
	if got, ok := r.Map("CN=a,O=b"); got != "CN=a,O=b" || !ok {
		t.Errorf("zero value: Map = %q, %v", got, ok)
	}
	if got := r.String(); got != "[DEFAULT]" {
		t.Errorf("zero value: String = %q", got)
	}
}

// TestPrincipalRulesSplitting checks how a value is cut into rules against
// Kafka's SslPrincipalMapperTest.testRulesSplitting, which compares the
// mapper's toString.
func TestPrincipalRulesSplitting(t *testing.T) {
	tests := []struct{ rules, want string }{
		{"DEFAULT", "[DEFAULT]"},
		{"RULE://", "[RULE:/]"},
		{"RULE:/.*/", "[RULE:/.*]"},
		{"RULE:/.*/L", "[RULE:/.*/L]"},
		{"RULE://,DEFAULT", "[RULE:/, DEFAULT]"},
		{"  RULE:// ,  DEFAULT  ", "[RULE:/, DEFAULT]"},
		{"  RULE:   /     / ,  DEFAULT  ", "[RULE:   /     , DEFAULT]"},
		{"  RULE:  /     /U   ,DEFAULT  ", "[RULE:  /     /U, DEFAULT]"},
		{"  RULE:([A-Z]*)/$1/U   ,RULE:([a-z]+)/$1/,   DEFAULT  ", "[RULE:([A-Z]*)/$1/U, RULE:([a-z]+)/$1, DEFAULT]"},
		// Empty rules are skipped.
		{",,RULE://,,,DEFAULT,,", "[RULE:/, DEFAULT]"},
		{",  , RULE: /   /    ,,,   DEFAULT, ,   ", "[RULE: /   , DEFAULT]"},
		{"     ,  , RULE:   /  /U    ,,  ,DEFAULT, ,", "[RULE:   /  /U, DEFAULT]"},
		// Escapes.
		{`RULE:\/\\\(\)\n\t/\/\//`, `[RULE:\/\\\(\)\n\t/\/\/]`},
		{`RULE:\**\/+/*/L,RULE:\/*\**/**/`, `[RULE:\**\/+/*/L, RULE:\/*\**/**]`},
		// Commas and RULE: inside patterns and replacements.
		{`RULE:,RULE:,/,RULE:,\//U,RULE:,/RULE:,/,RULE:,RULE:,/L,RULE:,/L,RULE:, DEFAULT, /DEFAULT/,DEFAULT`,
			`[RULE:,RULE:,/,RULE:,\//U, RULE:,/RULE:,, RULE:,RULE:,/L,RULE:,/L, RULE:, DEFAULT, /DEFAULT, DEFAULT]`},
		{`RULE:^CN=([^,ADEFLTU,]+)(,.*|$)/$1/`, `[RULE:^CN=([^,ADEFLTU,]+)(,.*|$)/$1]`},
		{`RULE:^CN=([^,DEFAULT,]+)(,.*|$)/$1/`, `[RULE:^CN=([^,DEFAULT,]+)(,.*|$)/$1]`},
	}
	for _, tt := range tests {
		r, err := ParsePrincipalRules(tt.rules)
		if err != nil {
			t.Errorf("ParsePrincipalRules(%q): %v", tt.rules, err)
			continue
		}
		if got := r.String(); got != tt.want {
			t.Errorf("ParsePrincipalRules(%q) = %s, want %s", tt.rules, got, tt.want)
		}
	}
}

func TestPrincipalRulesErrors(t *testing.T) {
	tests := []struct {
		name, rules string
		want        []string // fragments of the message
	}{
		// Kafka's SslPrincipalMapperTest.testInvalidRules.
		{"lower-case default", "default", []string{`rule "default" must be DEFAULT or RULE:pattern/replacement/`}},
		{"DEFAUL", "DEFAUL", []string{`rule "DEFAUL" must be`}},
		{"DEFAULT/L", "DEFAULT/L", []string{`has "/L" after its end`}},
		{"DEFAULT/U", "DEFAULT/U", []string{`has "/U" after its end`}},
		// Without a RULE's slashes, the comma ends the rule.
		{"missing last slash", "RULE:CN=(.*?),OU=ServiceUsers.*/$1", []string{`rule "RULE:CN=(.*?)" must be`}},
		{"lower-case rule", "rule:^CN=(.*?),OU=ServiceUsers.*$/$1/", []string{"must be DEFAULT or RULE:"}},
		{"two flags", "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L/U", []string{`has "/U" after its end`}},
		{"flag instead of replacement, L", "RULE:^CN=(.*?),OU=ServiceUsers.*$/L", []string{"must be"}},
		{"flag instead of replacement, U", "RULE:^CN=(.*?),OU=ServiceUsers.*$/U", []string{"must be"}},
		{"LU", "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/LU", []string{`has "U" after its end`}},

		{"bad flag", "RULE:^CN=(.*)$/$1/X,DEFAULT", []string{`rule "RULE:^CN=(.*)$/$1/X" has "X" after its end`, "optional L or U"}},
		{"missing slashes", "RULE:^CN=(.*)$", []string{`rule "RULE:^CN=(.*)$" must be`, `written \/`}},
		{"unescaped slash", "RULE:^CN=a/b$/$1/", []string{`has "$1/" after its end`}},
		{"unescaped slash in a class", "RULE:^CN=([^/]+)$/$1/", []string{`has "$1/" after its end`}},
		{"bad rule after good ones", "DEFAULT,RULE:x/y/,nonsense", []string{`rule "nonsense" must be`}},

		// No rule at all: Kafka would refuse every certificate.
		{"empty", "", []string{"has no rule", "e.g. DEFAULT"}},
		{"only commas", " , ,, ", []string{"has no rule"}},

		// Patterns RE2 cannot compile.
		{"lookahead", "RULE:^CN=(?=adm)(.*)$/$1/", []string{`rule "RULE:^CN=(?=adm)(.*)$/$1/": the pattern does not compile`,
			"Go (RE2)", "no lookaround", "invalid or unsupported Perl syntax"}},
		{"lookbehind", "RULE:^(?<!x)CN=(.*)$/$1/", []string{"does not compile"}},
		{"backreference", `RULE:^CN=(a)\1$/$1/`, []string{"does not compile", "invalid escape sequence"}},
		{"possessive", "RULE:^CN=.*+$/x/", []string{"does not compile"}},
		{"unbalanced", "RULE:^CN=(.*$/x/", []string{"does not compile", "missing closing )"}},
		{"duplicate group name", "RULE:^(?P<a>x)(?P<a>y)$/${a}/", []string{"names two groups a"}},

		// Replacements Java's Matcher would refuse when the rule applies.
		{"group without groups", "RULE:^CN=.*$/$1/", []string{"refers to the group $1, but the pattern has 0 groups", `\$\1`}},
		{"two missing groups", "RULE:^(a)(b)(c)$/$1@$4$5/", []string{"refers to the group $5, but the pattern has 3 groups"}},
		{"$ at the end", "RULE:^(a)$/x$/", []string{"ends in $", `literal $ is written \$`}},
		{"$ before a letter", "RULE:^(a)$/$x/", []string{`has a $ before "x"`}},
		{"${} without a name", "RULE:^(a)$/${}/", []string{"${ without a group name"}},
		{"${ not closed", "RULE:^(?P<a>x)$/${a/", []string{"${a without its closing }"}},
		{"${ name starting with a digit", "RULE:^(a)$/${1a}/", []string{"starts with a digit"}},
		{"unknown group name", "RULE:^(?P<a>x)$/${b}/", []string{"refers to the group ${b}, which the pattern does not have"}},
		{"group number too large", "RULE:^(a)$/$99999999999/", []string{"$99999999999, which is too large"}},

		// Text Kafka's splitter would silently skip.
		{"skipped text", "nonsense\nDEFAULT", []string{`has "nonsense" between rules`, "Kafka would skip it"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParsePrincipalRules(tt.rules)
			var ce *Error
			if !errors.As(err, &ce) || ce.Key != "ssl.principal.mapping.rules" || ce.Value != tt.rules {
				t.Fatalf("ParsePrincipalRules(%q) = %#v, want an *Error for the key and the value", tt.rules, err)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
			for _, f := range tt.want {
				if !strings.Contains(msg, f) {
					t.Errorf("error %q does not contain %q", msg, f)
				}
			}
			// The def's validator gives the same error.
			d, _ := LookupBroker("ssl.principal.mapping.rules")
			var checkErr *Error
			if err := d.Check(tt.rules); !errors.As(err, &checkErr) || *checkErr != *ce {
				t.Errorf("Check(%q) = %v, want %v", tt.rules, err, ce)
			}
		})
	}
}

// TestJavaReplacementTrailingBackslash: the grammar cannot give a
// replacement that ends in a lone backslash (\ always escapes the next
// character), but Java refuses one, and so does javaReplacement.
func TestJavaReplacementTrailingBackslash(t *testing.T) {
	r, err := ParsePrincipalRules("RULE:(a)/x/")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := javaReplacement(`x\`, r.rules[0].pattern); err == nil || !strings.Contains(err.Error(), "backslash") {
		t.Errorf(`javaReplacement("x\\") = %v, want an error about the backslash`, err)
	}
}

func TestPrincipalRulesConfig(t *testing.T) {
	d, ok := LookupBroker("ssl.principal.mapping.rules")
	if !ok || d.Type != String || d.Default != "DEFAULT" || !d.HasDefault || d.Sensitive || !d.ReadOnly || d.Doc == "" {
		t.Fatalf("def = %+v", d)
	}

	b := mustLoad(t, "", nil, nil)
	if got := b.SSLPrincipalRules.String(); got != "[DEFAULT]" {
		t.Errorf("default rules %s", got)
	}
	if got, ok := b.SSLPrincipalRules.Map("CN=app,OU=Eng"); got != "CN=app,OU=Eng" || !ok {
		t.Errorf("default: Map = %q, %v", got, ok)
	}

	const rules = `RULE:^CN=([^,]+),OU=Apps,.*$/$1/L, RULE:^CN=([^\/]+)\/ops,.*$/ops-$1/`
	check := func(t *testing.T, b *Broker) {
		t.Helper()
		if b.Raw["ssl.principal.mapping.rules"] != rules {
			t.Errorf("Raw = %q", b.Raw["ssl.principal.mapping.rules"])
		}
		for dn, want := range map[string]string{"CN=Billing,OU=Apps,O=Example": "billing", "CN=eu/ops,O=Example": "ops-eu"} {
			if got, ok := b.SSLPrincipalRules.Map(dn); got != want || !ok {
				t.Errorf("Map(%q) = %q, %v; want %q", dn, got, ok, want)
			}
		}
		if got, ok := b.SSLPrincipalRules.Map("CN=x,O=Example"); ok {
			t.Errorf("Map applied no rule but gave %q", got)
		}
	}
	t.Run("flag", func(t *testing.T) {
		check(t, mustLoad(t, "", nil, map[string]string{"ssl.principal.mapping.rules": rules}))
	})
	t.Run("env", func(t *testing.T) {
		check(t, mustLoad(t, "", []string{"STRATA_SSL_PRINCIPAL_MAPPING_RULES=" + rules}, nil))
	})
	t.Run("file", func(t *testing.T) {
		// In a properties file a backslash is itself escaped, as in Kafka's
		// server.properties: \\/ there is \/ in the value.
		file := writeFile(t, "ssl.principal.mapping.rules="+strings.ReplaceAll(rules, `\`, `\\`)+"\n")
		check(t, mustLoad(t, file, nil, nil))
	})

	_, err := LoadBroker("", nil, map[string]string{"ssl.principal.mapping.rules": "RULE:^CN=(?!adm)(.*)$/$1/"})
	checkLoadErr(t, err, "ssl.principal.mapping.rules", "flag", `rule "RULE:^CN=(?!adm)(.*)$/$1/"`, "does not compile")
	file := writeFile(t, "ssl.principal.mapping.rules=RULE:^CN=(.*)$/$1/X\n")
	_, err = LoadBroker(file, nil, nil)
	checkLoadErr(t, err, "ssl.principal.mapping.rules", "server.properties:1", `has "X" after its end`)
}
