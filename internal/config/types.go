package config

import "fmt"

// Type is a config value's type. The numbers are Kafka's ConfigType ids as sent
// in DescribeConfigs v3+, so the api layer passes them through unchanged.
type Type int8

const (
	Boolean  Type = 1
	String   Type = 2
	Int      Type = 3
	Short    Type = 4
	Long     Type = 5
	Double   Type = 6
	List     Type = 7
	Class    Type = 8
	Password Type = 9
)

func (t Type) String() string {
	switch t {
	case Boolean:
		return "BOOLEAN"
	case String:
		return "STRING"
	case Int:
		return "INT"
	case Short:
		return "SHORT"
	case Long:
		return "LONG"
	case Double:
		return "DOUBLE"
	case List:
		return "LIST"
	case Class:
		return "CLASS"
	case Password:
		return "PASSWORD"
	}
	return fmt.Sprintf("Type(%d)", int8(t))
}

// Source says where a described value came from. The numbers are Kafka's
// ConfigSource ids, as sent in DescribeConfigs.
type Source int8

const (
	Unknown              Source = 0
	DynamicTopic         Source = 1
	DynamicBroker        Source = 2
	DynamicDefaultBroker Source = 3
	StaticBroker         Source = 4
	Default              Source = 5
	ClientMetrics        Source = 7 // a client metrics subscription's config (KIP-714)
	Group                Source = 8 // a consumer group's dynamic config
)

func (s Source) String() string {
	switch s {
	case Unknown:
		return "UNKNOWN"
	case DynamicTopic:
		return "DYNAMIC_TOPIC_CONFIG"
	case DynamicBroker:
		return "DYNAMIC_BROKER_CONFIG"
	case DynamicDefaultBroker:
		return "DYNAMIC_DEFAULT_BROKER_CONFIG"
	case StaticBroker:
		return "STATIC_BROKER_CONFIG"
	case Default:
		return "DEFAULT_CONFIG"
	case ClientMetrics:
		return "CLIENT_METRICS_CONFIG"
	case Group:
		return "GROUP_CONFIG"
	}
	return fmt.Sprintf("Source(%d)", int8(s))
}

// Def defines one config key: its Kafka name, type, default and validation.
type Def struct {
	Name string
	Type Type
	// Default is the default value as Kafka prints it. A null default is
	// Default == "" with HasDefault == false; "" with HasDefault == true is an
	// empty string default.
	Default    string
	HasDefault bool
	Doc        string
	// Validate checks the allowed values or range of a value that already
	// parses as Type. Nil means every value of the type is allowed.
	Validate func(string) error
	// BrokerSynonym is, for a topic config, the broker config that supplies its
	// value when the topic has no override (retention.ms → log.retention.ms).
	BrokerSynonym string
	ReadOnly      bool
	Sensitive     bool
	// NoEffect marks a broker config accepted only for compatibility with
	// Kafka's server.properties: validated, then ignored (kafka_compat.go).
	NoEffect bool
}

// Check reports whether v is a valid value for d: it must parse as d.Type and
// pass d.Validate. The error is an *Error naming the key and the allowed
// values; it quotes v unless d is sensitive.
func (d *Def) Check(v string) error {
	shown := v
	if d.Sensitive {
		shown = hiddenValue
	}
	if err := checkType(d.Type, v); err != nil {
		return &Error{Key: d.Name, Value: shown, Msg: err.Error()}
	}
	if d.Validate != nil {
		if err := d.Validate(v); err != nil {
			return &Error{Key: d.Name, Value: shown, Msg: err.Error()}
		}
	}
	return nil
}

// hiddenValue stands for the value of a sensitive config in errors, as
// Kafka's Password prints.
const hiddenValue = "[hidden]"

// Synonym is one place a described value could come from, in precedence order.
type Synonym struct {
	Name   string
	Value  string
	IsNull bool
	Source Source
}

// Entry is one described config, as DescribeConfigs returns it.
type Entry struct {
	Name      string
	Value     string
	IsNull    bool
	Source    Source
	ReadOnly  bool
	Sensitive bool
	Type      Type
	Doc       string
	// Synonyms lists where the value could come from, highest precedence first;
	// the first one is where Value came from.
	Synonyms []Synonym
}

// Error is a bad config key or value. Its message names the key and what is
// allowed; the api layer answers INVALID_CONFIG with it.
type Error struct {
	Key   string
	Value string
	Msg   string
}

func (e *Error) Error() string { return fmt.Sprintf("%s=%q: %s", e.Key, e.Value, e.Msg) }
