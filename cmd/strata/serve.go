package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/strata-broker/strata/internal/api"
	"github.com/strata-broker/strata/internal/broker"
	"github.com/strata-broker/strata/internal/clock"
	"github.com/strata-broker/strata/internal/config"
	"github.com/strata-broker/strata/internal/logging"
	"github.com/strata-broker/strata/internal/metadata"
	"github.com/strata-broker/strata/internal/objstore"
	"github.com/strata-broker/strata/internal/partition"
	"github.com/strata-broker/strata/internal/replication"
	"github.com/strata-broker/strata/internal/server"
	"github.com/strata-broker/strata/internal/tier"
)

type serveFlags struct {
	configFile string
	listen     string
	dataDir    string
	overrides  []string
	logLevel   string
	cpuProfile string
}

func serveCmd() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run a broker (127.0.0.1:9092, data in ./strata-data by default)",
		Long: `Run a Strata broker.

Configuration uses Kafka's key names (listeners, log.dirs, num.partitions,
log.retention.hours, ...). Precedence, lowest first: the --config properties
file, then STRATA_* environment variables (STRATA_LOG_DIRS sets log.dirs:
upper case, '.' becomes '_'), then flags (--listen, --data-dir, --override).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return serve(cmd.Context(), f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.configFile, "config", "", "a Kafka-style server.properties file")
	fl.StringVar(&f.listen, "listen", "", "host:port to listen on (sets listeners=PLAINTEXT://host:port)")
	fl.StringVar(&f.dataDir, "data-dir", "", "directory for the log and metadata (sets log.dirs)")
	fl.StringArrayVar(&f.overrides, "override", nil, "key=value: set any broker config (repeatable)")
	fl.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error")
	fl.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file (for performance work)")
	return cmd
}

// flagConfigs turns the flags into Kafka config keys.
func (f serveFlags) flagConfigs() (map[string]string, error) {
	m := map[string]string{}
	for _, o := range f.overrides {
		k, v, ok := strings.Cut(o, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("--override %q: write it as key=value, e.g. --override num.partitions=3", o)
		}
		m[strings.TrimSpace(k)] = v
	}
	if f.listen != "" {
		m["listeners"] = "PLAINTEXT://" + f.listen
	}
	if f.dataDir != "" {
		m["log.dirs"] = f.dataDir
	}
	return m, nil
}

// newLoggers returns the broker's loggers, writing to stderr with the
// root logger at level (--log-level); the BROKER_LOGGER config resource
// changes their levels while it runs.
func newLoggers(level string) (*logging.Registry, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: use debug, info, warn or error", level)
	}
	out := slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: logging.MostVerbose})
	loggers := logging.New(out, l)
	for _, name := range namedLoggers {
		loggers.Logger(name)
	}
	return loggers, nil
}

func serve(ctx context.Context, f serveFlags) error {
	loggers, err := newLoggers(f.logLevel)
	if err != nil {
		return err
	}
	logger := loggers.Logger(logging.Root)
	flags, err := f.flagConfigs()
	if err != nil {
		return err
	}
	cfg, err := config.LoadBroker(f.configFile, os.Environ(), flags)
	if err != nil {
		return err
	}
	if err := checkSecurity(cfg); err != nil {
		return err
	}
	logConfigNotes(logger, cfg)
	dataDir := cfg.LogDirs[0]
	if err := checkDataDir(dataDir); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctxOrBackground(ctx), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if f.cpuProfile != "" {
		stopProfile, err := startCPUProfile(f.cpuProfile)
		if err != nil {
			return err
		}
		defer stopProfile()
	}

	node, err := start(ctx, cfg, loggers)
	if err != nil {
		return explainResourceError(dataDir, err)
	}
	warnOpenFiles(logger)
	node.metrics.printAddr()
	fmt.Printf("strata: listening on %s, data in %s\n", listening(node.servers, node.listenerNames), dataDir)
	// The listeners serve until node.shutdown drains them, not until the
	// signal: a cluster node's leaderships move first (clients keep being
	// answered meanwhile, NOT_LEADER_OR_FOLLOWER once they moved), and the
	// requests in flight are answered before the connections close.
	serveErr := make(chan error, len(node.allServers()))
	for _, srv := range node.allServers() {
		go func() { serveErr <- srv.Serve(context.Background()) }()
	}
	select {
	case <-ctx.Done():
	case err = <-serveErr:
	case err = <-node.registrationLost():
	case err = <-node.logFailed:
		logger.Error("leaving the cluster", "err", err)
	}
	logger.Info("shutting down")
	return explainResourceError(dataDir, errors.Join(err, node.shutdown()))
}

func ctxOrBackground(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}

// checkDataDir makes sure the data directory exists and is writable, so the
// user gets one clear line instead of a failure deep in startup.
func checkDataDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("data dir %s cannot be created (%v); choose another with --data-dir", dir, unwrapPath(err))
	}
	probe := filepath.Join(dir, ".write-test")
	if err := os.WriteFile(probe, nil, 0o644); err != nil {
		return fmt.Errorf("data dir %s is not writable (%v); fix its permissions or choose another with --data-dir", dir, unwrapPath(err))
	}
	return os.Remove(probe)
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// node is a running broker's parts, in start order.
type node struct {
	meta   *metadata.Store
	remote objstore.Store // nil when tiering is off
	reader *tier.Reader   // the remote tier's reader; nil when tiering is off
	groups *coordinatorHost
	txns   *txnCoordinator
	// shareStates is the share coordinator; stopShares ends the expiry of
	// share groups' acquisition locks, and sharesDone says it ended.
	shareStates *coordinatorHost
	stopShares  context.CancelFunc
	sharesDone  chan struct{}
	broker      *broker.Broker
	// servers serve the listeners, in the order of listeners.
	servers       []*server.Server
	listenerNames []string
	// controllerServer serves the Kafka clients of a cluster node's
	// controller listener, which controllerConns hands it; nil on a
	// single node.
	controllerServer *server.Server
	controllerConns  *connQueue
	logger           *slog.Logger
	loggers          *logging.Registry
	// metrics is the /metrics and /healthz endpoint; nil when
	// strata.metrics.listener is "".
	metrics *brokerMetrics
	// connLimits counts the connections of every listener and applies
	// max.connections and max.connections.per.ip; connWatch applies their
	// dynamic values.
	connLimits *server.ConnLimits
	connWatch  *connLimitsWatcher
	// listenerTLS is what each TLS listener's new connections get;
	// tlsWatch reloads it as this broker's dynamic configs change.
	listenerTLS *listenerTLSSet
	tlsWatch    *imageWatcher
	// plainUsers are each SASL listener's PLAIN users;
	// plainUsersWatch applies this broker's dynamic JAAS configs.
	plainUsers      *plainUsersSet
	plainUsersWatch *imageWatcher
	// cleanerWatch applies the log cleaner's dynamic configs; nil
	// without a cleaner. remoteWatch applies the remote tier's; nil
	// without a tier.
	cleanerWatch *imageWatcher
	remoteWatch  *imageWatcher
	// fetchersWatch applies num.replica.fetchers; nil on a single node.
	fetchersWatch *imageWatcher
	// tokens validate the OAUTHBEARER tokens of the SASL listeners.
	tokens *tokenValidators
	// tokenSweep removes expired delegation tokens.
	tokenSweep *tokenSweeper

	// In a cluster (controller.quorum.voters set; nil on a single node):
	// the registration and heartbeats, and the replica fetchers with their
	// connections to the other brokers.
	member         *clusterMember
	fetchers       *replication.Fetchers
	replicaClients *replicaClients
	// logFailed carries the first partition log failure, which makes a
	// cluster node leave (onLogFailure); nil on a single node.
	logFailed chan error
}

func start(ctx context.Context, cfg *config.Broker, loggers *logging.Registry) (*node, error) {
	logger := loggers.Logger(logging.Root)
	// A cluster node's controller listener opens with the quorum, before
	// its server: the Kafka clients that connect meanwhile wait for it (or
	// for the quorum to close).
	controllerConns := newConnQueue(cfg.ControllerListener.Addr())
	meta, err := openMetadata(ctx, cfg, loggers.Logger(loggerMetadata), controllerConns.conns)
	if err != nil {
		return nil, err
	}
	n := &node{meta: meta, logger: logger, loggers: loggers, metrics: newBrokerMetrics(cfg, logger), listenerTLS: newListenerTLSSet(logger),
		plainUsers: newPlainUsersSet(logger), controllerConns: controllerConns}
	if err := claimLogDir(cfg, meta.Image()); err != nil {
		return nil, errors.Join(err, n.shutdown())
	}
	// The coordinator exists before the broker: opening the broker opens
	// the __consumer_offsets partitions, which start their coordinators.
	if n.groups, err = newGroupCoordinator(cfg, meta, clock.Real{}, loggers.Logger(loggerGroups)); err != nil {
		return nil, errors.Join(err, n.shutdown())
	}
	if n.txns, err = newTxnCoordinator(cfg, clock.Real{}, loggers.Logger(loggerTxns), n); err != nil {
		return nil, errors.Join(err, n.shutdown())
	}
	if n.shareStates, err = newShareStateCoordinator(meta, clock.Real{}, loggers.Logger(loggerShareStates)); err != nil {
		return nil, errors.Join(err, n.shutdown())
	}
	var tierOpts *broker.TierDeps
	if cfg.TierOn() {
		if n.remote, err = openRemoteStore(ctx, cfg); err != nil {
			return nil, errors.Join(err, n.shutdown())
		}
		if n.reader, err = remoteReader(cfg, n.remote, loggers.Logger(loggerTier)); err != nil {
			return nil, errors.Join(err, n.shutdown())
		}
		tierOpts = tierDeps(cfg, n.remote, meta, n.reader)
		n.metrics.countTier(tierOpts)
	}
	if cfg.Clustered() {
		if err := checkClusterTier(ctx, cfg, meta, n.remote, logger); err != nil {
			return nil, errors.Join(err, n.shutdown())
		}
	}
	ls, err := listenAll(cfg)
	if err != nil {
		return nil, errors.Join(err, n.shutdown())
	}
	addrs, err := advertisedAddresses(cfg, ls)
	if err == nil && cfg.Clustered() {
		err = n.joinCluster(ctx, cfg, addrs)
	}
	if err != nil {
		closeAll(ls)
		return nil, errors.Join(err, n.shutdown())
	}
	var followers broker.Followers
	if n.fetchers != nil {
		followers = n.fetchers
	}
	n.broker, err = broker.New(broker.Options{
		DataDir:              cfg.LogDirs[0],
		OpenWorkers:          int(cfg.RecoveryThreads),
		NodeID:               cfg.NodeID,
		Meta:                 meta,
		Resolve:              topicResolver(cfg),
		RetentionInterval:    cfg.RetentionCheckInterval,
		FlushCheckInterval:   flushCheckInterval,
		HWCheckpointInterval: cfg.HWCheckpointInterval,
		ReplicaLagTimeMax:    cfg.ReplicaLagTimeMax,
		Followers:            followers,
		Clock:                clock.Real{},
		Logger:               loggers.Logger(loggerBroker),
		OnOpen:               n.onPartitionOpen,
		OnClose:              n.onPartitionClose,
		OnLogFailure:         n.onLogFailure(cfg),
		OnLogSync:            n.metrics.timeLogFlushes(),
		ReopenFailedLogs:     !cfg.Clustered(),
		Tier:                 tierOpts,
		Cleaner:              cleanerOptions(cfg),
	})
	if err != nil {
		closeAll(ls)
		return nil, errors.Join(err, n.shutdown())
	}
	n.txns.setBroker(n.broker)
	n.cleanerWatch = watchCleaner(cfg, n.meta, n.broker, logger)
	if tierOpts != nil {
		n.remoteWatch = watchRemoteSettings(cfg, n.meta, n.broker, tierOpts.Copier.Quota, n.reader, logger)
	}
	if n.fetchers != nil {
		n.fetchersWatch = watchReplicaFetchers(cfg, n.meta, n.fetchers, logger)
	}
	h, err := n.serveListeners(cfg, ls, addrs, logger)
	if err != nil {
		return nil, errors.Join(err, n.shutdown())
	}
	if err := n.metrics.serve(cfg, n.broker, clusterSource(n.meta, n.broker), h, n.connLimits, n.groups.census.total, n.listenerTLS.certificates); err != nil {
		return nil, errors.Join(err, n.shutdown())
	}
	if n.member != nil {
		n.member.start()
		if err := n.member.awaitUnfenced(ctx); err != nil {
			return nil, errors.Join(err, n.shutdown())
		}
	}
	return n, nil
}

// flushCheckInterval is how often partitions are checked for unflushed
// data older than their flush.ms. Topics without flush.ms cost one lock each
// per check.
const flushCheckInterval = 100 * time.Millisecond

// serveListeners listens on every listener and builds its server, all
// sharing one api handler (each request says which listener it came on).
func (n *node) serveListeners(cfg *config.Broker, ls []boundListener, addrs map[string]api.Address, logger *slog.Logger) (*api.Handler, error) {
	opts := api.Options{Broker: n.broker, Meta: n.meta, Config: cfg, Advertised: addrs, Logger: n.loggers.Logger(loggerAPI), Loggers: n.loggers,
		Groups: n.groups.rt, Txns: n.txns.rt, ShareStates: n.shareStates.rt}
	if n.replicaClients != nil {
		// A cluster node: partition leaders verify transactional produces
		// with the transaction coordinator on another broker.
		opts.Peers = n.replicaClients.client
	}
	if n.metrics != nil {
		opts.ClientMetrics, opts.ClientMetricsPushed = n.metrics.clients.registry, n.metrics.clients.pushed
	}
	opts.CheckListenerTLS = n.listenerTLS.check
	h, err := api.New(opts)
	if err != nil {
		closeAll(ls)
		return nil, err
	}
	n.groups.shareDeletes.set(h)
	shareCtx, stopShares := context.WithCancel(context.Background())
	n.stopShares = stopShares
	n.sharesDone = make(chan struct{})
	go func() {
		defer close(n.sharesDone)
		h.RunShares(shareCtx)
	}()
	handler := n.metrics.countRequests(handlerAdapter{h: h})
	limits, err := currentConnectionLimits(cfg, n.meta.Image())
	if err != nil {
		closeAll(ls)
		return nil, fmt.Errorf("the dynamic connection limits: %w; change them with kafka-configs --entity-type brokers", err)
	}
	if n.connLimits, err = newConnLimits(context.Background(), limits, creationBurst(cfg), systemResolver); err != nil {
		closeAll(ls)
		return nil, err
	}
	n.connWatch = watchConnLimits(cfg, n.meta, n.connLimits, limits, systemResolver, logger)
	if n.tokens, err = startTokenValidators(cfg, logger); err != nil {
		closeAll(ls)
		return nil, err
	}
	n.tokenSweep = sweepExpiredTokens(cfg, n.meta, logger)
	// A TLS listener starts with its keystore as this broker's dynamic
	// configs have it, its static one only when that fails to load.
	cluster, own := n.meta.Image().DynamicConfigsOf(cfg.NodeID)
	dynamic := cfg.WithDynamic(config.Dynamic{Default: cluster, Node: own})
	tlsFor := func(l config.Listener) (*tls.Config, error) {
		return n.listenerTLS.add(l.Name, l.Name == cfg.InterBrokerListener, dynamic.TLSFor(l.Name), cfg.TLSFor(l.Name))
	}
	plainUsers := func(listener string) *atomic.Pointer[map[string]string] { return n.plainUsers.add(listener, dynamic) }
	for i, l := range ls {
		tc, sc, err := security(cfg, l.cfg, n.meta, n.tokens.forListener(l.cfg.Name), tlsFor, plainUsers)
		if err != nil {
			closeAll(ls[i:])
			return nil, err
		}
		opts := n.serverOptions(cfg, l.cfg.Name, l.ln, handler)
		opts.InterBroker = protectedListener(cfg, l.cfg.Name)
		opts.TLS, opts.SASL = tc, sc
		opts.FailedAuthenticationDelay = cfg.FailedAuthenticationDelay
		opts.Authentications = n.metrics.countAuthentications()
		opts.MapCertificate = cfg.PrincipalRulesFor(l.cfg.Name).Map
		opts.MaxReauth = sessionLifetime(cfg, sc)
		srv, err := server.New(opts)
		if err != nil {
			closeAll(ls[i:])
			return nil, err
		}
		n.servers = append(n.servers, srv)
		n.listenerNames = append(n.listenerNames, l.cfg.Name)
	}
	n.tlsWatch = n.listenerTLS.watch(cfg, n.meta)
	n.plainUsersWatch = n.plainUsers.watch(cfg, n.meta)
	if cfg.Clustered() {
		if err := n.serveControllerListener(cfg, h, logger); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// serverOptions are what the server of every listener gets: Kafka's
// socket and connection settings, the broker's connection limits and
// request metrics.
func (n *node) serverOptions(cfg *config.Broker, name string, ln net.Listener, handler server.Handler) server.Options {
	return server.Options{
		Listener:           ln,
		Handler:            handler,
		MaxRequestBytes:    cfg.SocketRequestMaxBytes,
		IdleTimeout:        cfg.Connections.MaxIdle,
		SendBufferBytes:    cfg.Connections.SendBufferBytes,
		ReceiveBufferBytes: cfg.Connections.ReceiveBufferBytes,
		Limits:             n.connLimits,
		Logger:             n.loggers.Logger(loggerServer).With("listener", name),
		RequestTimes:       n.metrics.timeRequests(),
		ListenerName:       name,
	}
}

// onPartitionOpen and onPartitionClose start and resign the coordinators
// of internal topics' partitions.
func (n *node) onPartitionOpen(p *partition.Partition) {
	n.groups.onOpen(p)
	n.txns.onOpen(p)
	n.shareStates.onOpen(p)
}

func (n *node) onPartitionClose(p *partition.Partition) {
	n.groups.onClose(p)
	n.txns.onClose(p)
	n.shareStates.onClose(p)
	// Share groups' records locked at this partition are gone with it.
	if h := n.groups.shareDeletes.h.Load(); h != nil {
		h.DropSharePartition(p.TopicID(), p.TP().Partition)
	}
}

// shutdown stops the group coordinators (answering their waiting requests
// NOT_COORDINATOR, so that a JoinGroup parked for a rebalance does not hold
// the server's drain), then the server (finishing in-flight requests), then
// closes the partitions (syncing the log) and the metadata store.
func (n *node) shutdown() error {
	var errs []error
	n.metrics.stopServing() // /healthz answers 503 while the rest shuts down
	if n.member != nil {
		n.member.shutdown() // leaderships move before the listeners close
	}
	// Marker writes wait on the group coordinator: they stop first.
	if n.txns != nil {
		n.txns.close()
	}
	if n.stopShares != nil {
		n.stopShares()
		<-n.sharesDone
	}
	if n.groups != nil {
		n.groups.rt.Close()
	}
	n.tokens.close()
	n.tokenSweep.close()
	if n.tlsWatch != nil {
		n.tlsWatch.close()
	}
	if n.plainUsersWatch != nil {
		n.plainUsersWatch.close()
	}
	if n.cleanerWatch != nil {
		n.cleanerWatch.close()
	}
	if n.remoteWatch != nil {
		n.remoteWatch.close()
	}
	if n.fetchersWatch != nil {
		n.fetchersWatch.close()
	}
	if n.connWatch != nil {
		n.connWatch.close()
	}
	if servers := n.allServers(); len(servers) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		errs = append(errs, shutdownServers(ctx, servers))
		cancel()
	}
	// After the servers: the share acknowledgements in flight are written.
	if n.shareStates != nil {
		n.shareStates.rt.Close()
	}
	errs = append(errs, n.metrics.close())
	if n.fetchers != nil {
		n.fetchers.Close() // nothing appends to a follower after this
	}
	if n.replicaClients != nil {
		n.replicaClients.close()
	}
	if n.broker != nil {
		errs = append(errs, n.broker.Close())
	}
	if n.reader != nil {
		n.reader.Close() // stops the read-ahead, which uses the store
	}
	if n.remote != nil {
		errs = append(errs, n.remote.Close())
	}
	if n.meta != nil {
		errs = append(errs, n.meta.Close())
	}
	return errors.Join(errs...)
}

// allServers are the listeners' servers and, on a cluster node, the
// controller listener's.
func (n *node) allServers() []*server.Server {
	if n.controllerServer == nil {
		return n.servers
	}
	return append(slices.Clip(n.servers), n.controllerServer)
}

// handlerAdapter lets the api package serve the server's requests without
// either package knowing the other. On the controller listener
// (controller), only the controller's APIs are served.
type handlerAdapter struct {
	h          *api.Handler
	controller bool
}

func (a handlerAdapter) Supported(key, version int16) bool {
	if a.controller {
		return a.h.SupportedOnControllerListener(key, version)
	}
	return a.h.Supported(key, version)
}

func (a handlerAdapter) Handle(ctx context.Context, req *server.Request) server.Reply {
	ar := &api.Request{Key: req.Key, Version: req.Version, ClientID: req.ClientID, Body: req.Body, Stopping: req.Stopping}
	if req.Conn != nil {
		ar.ClientHost = clientHost(req.Conn.RemoteAddr)
		ar.ClientAddr = clientAddr(req.Conn.RemoteAddr)
		ar.Listener, ar.SASL, ar.Principal = req.Conn.Listener, req.Conn.SASL, req.Conn.Principal()
		ar.ConnID = req.Conn.ID
	}
	r := a.h.Handle(ctx, ar)
	out := server.Reply{Resp: r.Resp, Wait: r.Wait, NoResponse: r.NoResponse, Release: r.Release, Close: r.Close, Mute: r.Mute}
	if r.Splices != nil {
		out.Splices = func() []server.Splice { return serverSplices(r.Splices()) }
	}
	return out
}

func serverSplices(in []api.Splice) []server.Splice {
	out := make([]server.Splice, len(in))
	for i, s := range in {
		out[i] = server.Splice{Marker: s.Marker, File: s.File, Pos: s.Pos, Size: s.Size}
	}
	return out
}

func startCPUProfile(path string) (func(), error) {
	out, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile %s: %v", path, unwrapPath(err))
	}
	if err := pprof.StartCPUProfile(out); err != nil {
		out.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		out.Close()
	}, nil
}
