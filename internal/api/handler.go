package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-broker/strata/internal/acl"
	"github.com/strata-broker/strata/internal/broker"
	"github.com/strata-broker/strata/internal/clientmetrics"
	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/coordinator/runtime"
	"github.com/strata-broker/strata/internal/logging"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/quota"
	"github.com/strata-broker/strata/internal/sasl"
	"github.com/strata-broker/strata/internal/share/leader"
)

// Request is one decoded request.
type Request struct {
	Key      int16
	Version  int16
	ClientID *string
	Body     kmsg.Request
	// ClientHost is the connection's remote host, "" when unknown; group
	// members record it.
	ClientHost string
	// ClientAddr is the connection's remote address and port (invalid when
	// unknown): client metrics subscriptions match on them (KIP-714).
	ClientAddr netip.AddrPort
	// Listener names the listener the request arrived on; answers that
	// name a broker give that listener's advertised address.
	Listener string
	// SASL is the connection's SASL session on a SASL listener, else nil.
	SASL *sasl.Session
	// Principal is who sent the request ("User:alice", "User:ANONYMOUS"),
	// what ACLs name.
	Principal string
	// ConnID names the connection the request came on (0 when unknown): a
	// share session belongs to the connection that opened it.
	ConnID uint64
	// Stopping, if not nil, is closed when the server begins to shut down:
	// long-poll fetches answer then with what they have.
	Stopping <-chan struct{}
}

// Reply is a handler's answer: a response now, or Wait, called in request
// order once earlier responses are written. NoResponse is for acks=0.
// Release, if set, is called once the response has been written, to take
// back pooled buffers it points into.
type Reply struct {
	Resp       kmsg.Response
	Wait       func() kmsg.Response
	NoResponse bool
	Release    func()
	// Splices, called after the response is ready, lists the bytes fields
	// to fill from files.
	Splices func() []Splice
	// Close closes the connection once the response is written (a failed
	// SASL authentication).
	Close bool
	// Mute holds back the connection's next requests this long: a client
	// over a quota whose request has no response (an acks=0 produce). A
	// response says it in its throttle_time_ms instead.
	Mute time.Duration
}

// Address is a host and port that clients connect to.
type Address struct {
	Host string
	Port int32
}

// Options builds a Handler.
type Options struct {
	Broker *broker.Broker
	Meta   *metadata.Store
	Config *config.Broker
	// CheckListenerTLS, when set, checks a change of this broker's
	// dynamic configs before it is made: the listener keystores and
	// truststores it would load (their files read, each new certificate
	// matched against the one it replaces). A *config.Error refuses the
	// change with INVALID_CONFIG.
	CheckListenerTLS func(*config.Broker) error
	// Advertised maps each listener's name to the address Metadata,
	// FindCoordinator and DescribeCluster give the clients of that
	// listener.
	Advertised map[string]Address
	Logger     *slog.Logger
	// Loggers are this broker's loggers, which the BROKER_LOGGER config
	// resource describes and changes (broker_loggers.go); nil serves
	// one root logger over Logger's handler.
	Loggers *logging.Registry
	// Groups runs the __consumer_offsets partitions led here. Nil answers
	// every group request COORDINATOR_NOT_AVAILABLE.
	Groups *runtime.Runtime
	// Txns runs the __transaction_state partitions led here. Nil answers
	// every transaction request COORDINATOR_NOT_AVAILABLE.
	Txns *runtime.Runtime
	// ShareStates runs the __share_group_state partitions led here (the
	// share coordinator, KIP-932). Nil answers every share-state request
	// COORDINATOR_NOT_AVAILABLE.
	ShareStates *runtime.Runtime
	// Peers connects to another broker of the cluster, by id, for the
	// requests this broker sends on behalf of its clients: a partition
	// leader verifying a transactional produce with the coordinator of
	// its transactional id (AddPartitionsToTxn v4). Nil on a single node:
	// every such request goes to this broker's own coordinators.
	Peers func(id int32) (kmsg.Requestor, error)
	// ClientMetrics answers GetTelemetrySubscriptions and PushTelemetry
	// (KIP-714) and ClientMetricsPushed keeps what clients push, for the
	// metrics endpoint. Both nil: those APIs are not advertised, and
	// clients push nothing.
	ClientMetrics       *clientmetrics.Registry
	ClientMetricsPushed *clientmetrics.Latest
}

// Validate reports the first unusable option.
func (o Options) Validate() error {
	switch {
	case o.Broker == nil:
		return errors.New("api: Broker is required")
	case o.Meta == nil:
		return errors.New("api: Meta is required")
	case o.Config == nil:
		return errors.New("api: Config is required")
	case len(o.Advertised) == 0:
		return errors.New("api: an advertised address per listener is required")
	}
	for name, a := range o.Advertised {
		if a.Host == "" || a.Port <= 0 {
			return fmt.Errorf("api: listener %s has no advertised host and port", name)
		}
	}
	return nil
}

// Handler serves every registered API.
type Handler struct {
	opts     Options
	policy   *acl.Authorizer // nil: no authorizer, everything is allowed
	logger   *slog.Logger
	groups   *coordinators
	txns     *coordinators
	sessions *fetchSessionCache
	// shareStates is the share coordinator kind; shares the
	// share-partitions this broker leads for share groups, and
	// shareSessions their members' share sessions (KIP-932).
	shareStates   *coordinators
	shares        *leader.Manager
	shareSessions *shareSessionCache
	quotas        *quota.Manager
	// leaderThrottle meters what this broker sends its throttled
	// followers (leader.replication.throttled.rate, KIP-73).
	leaderThrottle *quota.ByteRate
	// off are the registered APIs this broker's config turns off: neither
	// advertised nor served.
	off map[int16]bool
	// software is what each connection's ApiVersions said of its client
	// (KIP-511); clientSubs tracks which subscription set ClientMetrics
	// was last given (client_metrics.go).
	software   *connSoftware
	clientSubs clientSubscriptions
	// clientConns forgets client metrics instances whose connection closed.
	clientConns *clientInstanceConns
}

// New returns a Handler.
func New(opts Options) (*Handler, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Loggers == nil {
		opts.Loggers = logging.New(opts.Logger.Handler(), slog.LevelInfo)
	}
	sessions := newFetchSessionCache(int(opts.Config.FetchSessionCacheSlots), time.Now)
	h := &Handler{opts: opts, logger: opts.Logger, sessions: sessions, policy: newPolicy(opts.Config),
		quotas:         quota.NewManager(quota.Config{Samples: int(opts.Config.QuotaWindowNum), Window: opts.Config.QuotaWindowSize}),
		leaderThrottle: quota.NewByteRate(ReplicationQuotaConfig(opts.Config))}
	h.groups = newGroupCoordinators(h)
	h.txns = newTxnCoordinators(h)
	h.shareStates = newShareStateCoordinators(h)
	shares, err := leader.New(leader.Options{Persister: sharePersister{h}, Clock: wallClock{}, ExpiryInterval: shareExpiryInterval, Logger: opts.Logger})
	if err != nil {
		return nil, err
	}
	h.shares = shares
	h.shareSessions = newShareSessionCache(int(opts.Config.GroupShareMaxShareSessions))
	h.off = apisOff(opts)
	h.software = newConnSoftware()
	h.clientConns = newClientInstanceConns()
	return h, nil
}

// apisOff are the APIs opts turn off: the consumer group protocol's
// without "consumer" in group.coordinator.rebalance.protocols (as Kafka,
// which then does not advertise them), and the client metrics ones
// without a registry (as Kafka without a client telemetry receiver).
func apisOff(opts Options) map[int16]bool {
	off := map[int16]bool{}
	if !opts.Config.GroupConsumerProtocol {
		off[kmsg.ConsumerGroupHeartbeat.Int16()] = true
		off[kmsg.ConsumerGroupDescribe.Int16()] = true
	}
	if opts.ClientMetrics == nil || opts.ClientMetricsPushed == nil {
		off[kmsg.GetTelemetrySubscriptions.Int16()] = true
		off[kmsg.PushTelemetry.Int16()] = true
	}
	return off
}

type handleFunc func(h *Handler, ctx context.Context, req *Request) Reply

type registration struct {
	key, min, max int16
	fn            handleFunc
}

var registry = map[int16]registration{}

// register is called from each API file's init.
func register(key, minVersion, maxVersion int16, fn handleFunc) {
	if _, dup := registry[key]; dup {
		panic("api: key registered twice")
	}
	if fresh := kmsg.RequestForKey(key); fresh == nil || maxVersion > fresh.MaxVersion() {
		panic("api: registering a version kmsg cannot encode")
	}
	registry[key] = registration{key: key, min: minVersion, max: maxVersion, fn: fn}
}

// Supported reports whether key at version is implemented.
func (h *Handler) Supported(key, version int16) bool {
	r, ok := registry[key]
	return ok && !h.off[key] && version >= r.min && version <= r.max
}

// Handle serves one request. Unsupported versions never reach here (the
// server checks Supported first), except ApiVersions, which answers them.
func (h *Handler) Handle(ctx context.Context, req *Request) Reply {
	r, ok := registry[req.Key]
	if !ok {
		panic("api: Handle called for an unregistered key")
	}
	if a, limited := h.requestQuota(req); limited {
		return h.handleMetered(ctx, req, a, r.fn)
	}
	return r.fn(h, ctx, req)
}

// registrations returns the registry sorted by key.
func registrations() []registration {
	out := make([]registration, 0, len(registry))
	for _, r := range registry {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

func done(resp kmsg.Response) Reply { return Reply{Resp: resp} }
