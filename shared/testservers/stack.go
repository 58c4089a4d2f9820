package testservers

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Local credentials: for the loopback stack only, never for a deployment.
const (
	LocalS3AccessKey    = "strata"
	LocalS3SecretKey    = "strata-local-secret"
	LocalWeaviateWriter = "strata-writer-local-key"
	LocalWeaviateReader = "strata-reader-local-key"
	// MinIONotifyID names MinIO's NATS notification target: ARN arn:minio:sqs::strata:nats.
	MinIONotifyID = "strata"
	// MinIOLiveNotifyID names MinIO's second NATS target, which publishes
	// the same events at once without a queue: ARN arn:minio:sqs::live:nats.
	MinIOLiveNotifyID = "live"
)

// Ports are the loopback ports of one stack.
type Ports struct {
	NATS, NATSMonitor                                                   int
	MinIO, MinIOConsole                                                 int
	Weaviate, WeaviateGRPC, WeaviateGossip, WeaviateData, Raft, RaftRPC int
}

// FreeStackPorts picks free loopback ports for a whole stack.
func FreeStackPorts() (Ports, error) {
	p, err := FreePorts(10)
	if err != nil {
		return Ports{}, err
	}
	return Ports{p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[9]}, nil
}

// Stack is a running nats-server, minio and weaviate-server.
type Stack struct {
	Ports            Ports
	DataDir          string
	NATS             *Process
	NATSPeers        []*Process // the other nodes of a clustered NATS
	MinIO            *Process
	MinIOPeers       []*Process // the other nodes of a distributed MinIO
	Weaviate         *Process
	WeaviatePeers    []*Process // the other nodes of a multi-node Weaviate
	NATSURL          string
	S3Endpoint       string // host:port
	WeaviateHost     string // host:port
	WeaviateGRPCHost string
	opts             StackOptions
}

// WeaviateHosts lists every Weaviate node's host:port, comma-separated,
// the first node first: what services take as -weaviate-host to survive the
// loss of any one node.
func (s *Stack) WeaviateHosts() string {
	hosts := []string{s.WeaviateHost}
	for _, p := range s.opts.WeaviatePeers {
		hosts = append(hosts, fmt.Sprintf("127.0.0.1:%d", p.HTTP))
	}
	return strings.Join(hosts, ",")
}

// StackOptions configure StartStack.
type StackOptions struct {
	Bins    map[string]string // server name -> binary path (from InstallAll)
	DataDir string            // nats/, minio/, weaviate/ and logs/ live here
	Ports   Ports
	Detach  bool
	// BeforeMinIO runs once NATS is ready and before MinIO starts: MinIO's
	// notification target needs the stream to exist.
	BeforeMinIO func(ctx context.Context, natsURL string) error
	Progress    io.Writer
	// WeaviatePeers, when set, make Weaviate a multi-node cluster: the
	// first node on the Ports.Weaviate* ports and one more per peer.
	WeaviatePeers []WeaviatePeer
	// NATSPeers, when set, make NATS a cluster: the first node on
	// Ports.NATS/NATSMonitor with route port NATSRoute, and one more node
	// per peer. MinIO's notifications go to the first node.
	NATSPeers []NATSPeer
	NATSRoute int
	// MinIOPeers, when set, make MinIO distributed and erasure coded: the
	// first node on Ports.MinIO/MinIOConsole and one more node per peer,
	// one drive each (minio_nodes.go). Every node sends its bucket
	// notifications to the first NATS node (MinIO's client fails over to
	// the others of a cluster).
	MinIOPeers []MinIOPeer
	// AsyncIndexing makes Weaviate index vectors behind the write (faster
	// bulk loads). Off by default: vectors still queued are not found by
	// vector search, so a chunk counted as embedded could be missed.
	AsyncIndexing bool
	// IndexWorkers, with AsyncIndexing, is how many goroutines index the
	// queued vectors. Weaviate runs GOMAXPROCS-1 of them (one on 2 cores,
	// so the queue drains on half the machine); n > 0 sets GOMAXPROCS to
	// n+1. 0 keeps Weaviate's default.
	IndexWorkers int
	// WeaviateEnv adds KEY=VALUE settings to every Weaviate node's
	// environment, after Strata's own (a later one wins), for experiments
	// such as GOGC or memtable sizes (strata-bench -weaviate-env).
	WeaviateEnv []string
}

// NATSPeer is one more node of a clustered NATS.
type NATSPeer struct{ Client, Monitor, Route int }

// StartStack starts the three servers and waits until each is ready. On error,
// whatever was started is stopped.
func StartStack(ctx context.Context, o StackOptions) (_ *Stack, err error) {
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	p := o.Ports
	s := &Stack{
		opts:             o,
		Ports:            p,
		DataDir:          o.DataDir,
		NATSURL:          "nats://127.0.0.1:" + strconv.Itoa(p.NATS),
		S3Endpoint:       "127.0.0.1:" + strconv.Itoa(p.MinIO),
		WeaviateHost:     "127.0.0.1:" + strconv.Itoa(p.Weaviate),
		WeaviateGRPCHost: "127.0.0.1:" + strconv.Itoa(p.WeaviateGRPC),
	}
	defer func() {
		if err != nil {
			s.Stop(10 * time.Second)
		}
	}()
	logs := filepath.Join(o.DataDir, "logs")
	readyCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()

	if len(o.NATSPeers) > 0 {
		if err := s.startNATSCluster(readyCtx, logs); err != nil {
			return nil, err
		}
	} else {
		fmt.Fprintf(o.Progress, "starting nats-server on %s\n", s.NATSURL)
		if s.NATS, err = StartNATS(readyCtx, o.Bins[NATSServer.Name], filepath.Join(o.DataDir, "nats"), p.NATS, p.NATSMonitor, logs, o.Detach); err != nil {
			return nil, err
		}
	}
	if o.BeforeMinIO != nil {
		if err := o.BeforeMinIO(ctx, s.NATSURL); err != nil {
			return nil, err
		}
	}

	if len(o.MinIOPeers) > 0 {
		fmt.Fprintf(o.Progress, "starting a %d-node distributed minio on %s\n", len(o.MinIOPeers)+1, strings.Join(s.S3Endpoints(), ", "))
		if err := s.startMinIOCluster(readyCtx); err != nil {
			return nil, err
		}
	} else {
		fmt.Fprintf(o.Progress, "starting minio on %s\n", s.S3Endpoint)
		if err := s.startMinIO(readyCtx); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(o.Progress, "starting weaviate-server on %s (takes 10-20 s)\n", s.WeaviateHost)
	if err := s.startWeaviate(readyCtx); err != nil {
		return nil, err
	}
	return s, nil
}

// Stop stops the servers in reverse order of start.
func (s *Stack) Stop(timeout time.Duration) {
	procs := append(append([]*Process{}, s.WeaviatePeers...), s.Weaviate)
	procs = append(append(procs, s.MinIOPeers...), s.MinIO, s.NATS)
	for _, p := range append(procs, s.NATSPeers...) {
		if p != nil {
			_ = p.Stop(timeout)
		}
	}
}

// StartNATS starts a JetStream-enabled nats-server with its store in dir and
// waits until JetStream answers.
func StartNATS(ctx context.Context, bin, dir string, port, monitorPort int, logDir string, detach bool) (*Process, error) {
	return startNATSNode(ctx, bin, dir, "strata-local", port, monitorPort, "", logDir, detach)
}

// startNATSCluster starts every node of a clustered NATS, each routing to
// all the others, and waits until JetStream answers on each.
func (s *Stack) startNATSCluster(ctx context.Context, logs string) error {
	o := s.opts
	nodes := append([]NATSPeer{{Client: o.Ports.NATS, Monitor: o.Ports.NATSMonitor, Route: o.NATSRoute}}, o.NATSPeers...)
	var routes, urls []string
	for _, n := range nodes {
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", n.Route))
		urls = append(urls, fmt.Sprintf("nats://127.0.0.1:%d", n.Client))
	}
	s.NATSURL = strings.Join(urls, ",")
	type started struct {
		i   int
		p   *Process
		err error
	}
	results := make(chan started, len(nodes))
	for i, n := range nodes {
		name := NATSNodeName(i)
		cluster := fmt.Sprintf("cluster {\n  name: strata\n  listen: 127.0.0.1:%d\n  routes: [%s]\n}\n", n.Route, strings.Join(routes, ", "))
		fmt.Fprintf(o.Progress, "starting nats-server %s on nats://127.0.0.1:%d\n", name, n.Client)
		go func() { // JetStream waits for its peers: start every node before waiting
			p, err := startNATSNode(ctx, o.Bins[NATSServer.Name], NATSNodeDir(o.DataDir, i), name, n.Client, n.Monitor, cluster, logs, o.Detach)
			results <- started{i, p, err}
		}()
	}
	s.NATSPeers = make([]*Process, len(nodes)-1)
	var firstErr error
	for range nodes {
		r := <-results
		if r.err != nil && firstErr == nil {
			firstErr = r.err
		}
		if r.i == 0 {
			s.NATS = r.p
		} else {
			s.NATSPeers[r.i-1] = r.p
		}
	}
	return firstErr
}

func startNATSNode(ctx context.Context, bin, dir, name string, port, monitorPort int, cluster, logDir string, detach bool) (*Process, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "nats.conf")
	confText := fmt.Sprintf("listen: 127.0.0.1:%d\nhttp: 127.0.0.1:%d\nserver_name: %s\nmax_payload: 8MB\njetstream {\n  store_dir: %q\n}\n%s",
		port, monitorPort, name, filepath.Join(dir, "jetstream"), cluster)
	if err := os.WriteFile(conf, []byte(confText), 0o644); err != nil {
		return nil, err
	}
	logName := "nats-server.log"
	if cluster != "" {
		logName = name + ".log"
	}
	p, err := Start(Spec{Name: "nats-server", Path: bin, Args: []string{"-c", conf}, LogFile: filepath.Join(logDir, logName), Detach: detach})
	if err != nil {
		return nil, err
	}
	if err := p.WaitReady(ctx, HTTPReady(fmt.Sprintf("http://127.0.0.1:%d/healthz?js-enabled-only=true", monitorPort))); err != nil {
		_ = p.Stop(5 * time.Second)
		return nil, err
	}
	return p, nil
}

func (s *Stack) startMinIO(ctx context.Context) (err error) {
	p := s.Ports
	minioDir := filepath.Join(s.opts.DataDir, "minio")
	queueDir := filepath.Join(s.opts.DataDir, "minio-events")
	for _, d := range []string{minioDir, queueDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	id, live := "_"+MinIONotifyID, "_"+MinIOLiveNotifyID
	s.MinIO, err = Start(Spec{
		Name: "minio", Path: s.opts.Bins[MinIO.Name],
		Args: []string{"server", minioDir, "--address", s.S3Endpoint, "--console-address", "127.0.0.1:" + strconv.Itoa(p.MinIOConsole), "--quiet"},
		Env: []string{
			"MINIO_ROOT_USER=" + LocalS3AccessKey,
			"MINIO_ROOT_PASSWORD=" + LocalS3SecretKey,
			"MINIO_BROWSER=off",
			"MINIO_UPDATE=off",
			"MINIO_NOTIFY_NATS_ENABLE" + id + "=on",
			"MINIO_NOTIFY_NATS_ADDRESS" + id + "=127.0.0.1:" + strconv.Itoa(p.NATS),
			"MINIO_NOTIFY_NATS_SUBJECT" + id + "=strata.objects.events",
			"MINIO_NOTIFY_NATS_JETSTREAM" + id + "=on",
			// Events wait on disk while NATS is unreachable instead of being lost.
			"MINIO_NOTIFY_NATS_QUEUE_DIR" + id + "=" + queueDir,
			// The same events at once on plain NATS: the durable target's
			// queue is replayed only every 3 s (see ingestor/live).
			"MINIO_NOTIFY_NATS_ENABLE" + live + "=on",
			"MINIO_NOTIFY_NATS_ADDRESS" + live + "=127.0.0.1:" + strconv.Itoa(p.NATS),
			"MINIO_NOTIFY_NATS_SUBJECT" + live + "=strata.objects.live",
		},
		LogFile: filepath.Join(filepath.Join(s.opts.DataDir, "logs"), "minio.log"), Detach: s.opts.Detach,
	})
	if err != nil {
		return err
	}
	if err := s.MinIO.WaitReady(ctx, HTTPReady("http://"+s.S3Endpoint+"/minio/health/ready")); err != nil {
		return err
	}

	return nil
}

func (s *Stack) startWeaviate(ctx context.Context) (err error) {
	p := s.Ports
	first := WeaviatePeer{HTTP: p.Weaviate, GRPC: p.WeaviateGRPC, Gossip: p.WeaviateGossip, Data: p.WeaviateData, Raft: p.Raft, RaftRPC: p.RaftRPC}
	if len(s.opts.WeaviatePeers) == 0 {
		if s.Weaviate, err = s.startWeaviateNode("node1", first, "", "node1", 1); err != nil {
			return err
		}
		return weaviateReady(ctx, s.Weaviate, first.HTTP)
	}
	nodes := append([]WeaviatePeer{first}, s.opts.WeaviatePeers...)
	var raftJoin []string
	for i, n := range nodes {
		raftJoin = append(raftJoin, fmt.Sprintf("node%d:%d", i+1, n.Raft))
	}
	// The others join the first node's gossip, so it must listen first;
	// readiness needs the Raft quorum, so every node starts before any is waited for.
	if s.Weaviate, err = s.startWeaviateNode("node1", first, "", strings.Join(raftJoin, ","), len(nodes)); err != nil {
		return err
	}
	if err := waitListening(ctx, first.Gossip); err != nil {
		return fmt.Errorf("weaviate node1 gossip: %w", err)
	}
	s.WeaviatePeers = nil
	for i, n := range nodes[1:] {
		p, err := s.startWeaviateNode(fmt.Sprintf("node%d", i+2), n, fmt.Sprintf("127.0.0.1:%d", first.Gossip), strings.Join(raftJoin, ","), len(nodes))
		if err != nil {
			return err
		}
		s.WeaviatePeers = append(s.WeaviatePeers, p)
	}
	for i, n := range nodes {
		p := s.Weaviate
		if i > 0 {
			p = s.WeaviatePeers[i-1]
		}
		if err := weaviateReady(ctx, p, n.HTTP); err != nil {
			return err
		}
	}
	return nil
}

func weaviateReady(ctx context.Context, p *Process, port int) error {
	return p.WaitReady(ctx, HTTPReady(fmt.Sprintf("http://127.0.0.1:%d/v1/.well-known/ready", port)))
}

// waitListening waits until something accepts TCP connections on port.
func waitListening(ctx context.Context, port int) error {
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err == nil {
			return c.Close()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// WeaviatePeer is one more node of a multi-node Weaviate.
type WeaviatePeer struct{ HTTP, GRPC, Gossip, Data, Raft, RaftRPC int }

func (s *Stack) startWeaviateNode(name string, n WeaviatePeer, clusterJoin, raftJoin string, expect int) (*Process, error) {
	wvDir := filepath.Join(s.opts.DataDir, "weaviate")
	logName := "weaviate-server.log"
	if expect > 1 {
		wvDir = filepath.Join(wvDir, name)
		logName = "weaviate-" + name + ".log"
	}
	if err := os.MkdirAll(wvDir, 0o755); err != nil {
		return nil, err
	}
	env := []string{
		"PERSISTENCE_DATA_PATH=" + wvDir,
		"CLUSTER_HOSTNAME=" + name,
		"CLUSTER_ADVERTISE_ADDR=127.0.0.1",
		"CLUSTER_GOSSIP_BIND_PORT=" + strconv.Itoa(n.Gossip),
		"CLUSTER_DATA_BIND_PORT=" + strconv.Itoa(n.Data),
		"RAFT_PORT=" + strconv.Itoa(n.Raft),
		"RAFT_INTERNAL_RPC_PORT=" + strconv.Itoa(n.RaftRPC),
		"RAFT_JOIN=" + raftJoin,
		"RAFT_BOOTSTRAP_EXPECT=" + strconv.Itoa(expect),
		"GRPC_PORT=" + strconv.Itoa(n.GRPC),
		"DISABLE_TELEMETRY=true",
		"DEFAULT_VECTORIZER_MODULE=none",
		"ENABLE_MODULES=",
		"QUERY_DEFAULTS_LIMIT=100",
		"LOG_LEVEL=warning",
		// Half as many garbage collections: 9% more chunks stored a second
		// loading to 200k (docs/bench/loading.md), for a larger heap between
		// collections (up to three times the live heap instead of two).
		"GOGC=200",
		// Objects rewritten in place (an access change merges the readers
		// of every chunk of a document) sit in the memtable until it is
		// flushed, a minute after its first write by default, and a BM25
		// search over a memtable full of them took 100-400 ms instead of
		// 3 ms on this machine; flushed after 2 s, 2-50 ms
		// (docs/bench/access-changes.md, docs/bench/loading.md).
		"PERSISTENCE_MEMTABLES_FLUSH_DIRTY_AFTER_SECONDS=2",
		// A filtered vector search that admits fewer vectors than
		// flatSearchCutoff (40,000) scans them; Weaviate scans on one
		// goroutine unless told otherwise. One per CPU: a key reading a
		// tenth of 100k chunks, or a metadata filter keeping a tenth, gets
		// its vector answers about 3 ms sooner at one client
		// (docs/bench/metadata.md, docs/bench/access.md).
		"HNSW_FLAT_SEARCH_CONCURRENCY=" + strconv.Itoa(runtime.NumCPU()),
		// Two API keys: the indexer writes, queryd can only read.
		"AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED=false",
		"AUTHENTICATION_APIKEY_ENABLED=true",
		"AUTHENTICATION_APIKEY_ALLOWED_KEYS=" + LocalWeaviateWriter + "," + LocalWeaviateReader,
		"AUTHENTICATION_APIKEY_USERS=strata-writer,strata-reader",
		"AUTHORIZATION_ADMINLIST_ENABLED=true",
		"AUTHORIZATION_ADMINLIST_USERS=strata-writer",
		"AUTHORIZATION_ADMINLIST_READONLY_USERS=strata-reader",
	}
	if s.opts.AsyncIndexing {
		env = append(env, "ASYNC_INDEXING=true")
		if s.opts.IndexWorkers > 0 {
			env = append(env, "GOMAXPROCS="+strconv.Itoa(s.opts.IndexWorkers+1))
		}
	}
	env = append(env, s.opts.WeaviateEnv...)
	if clusterJoin != "" {
		env = append(env, "CLUSTER_JOIN="+clusterJoin)
	}
	if expect > 1 {
		// Nodes on one host: a peer's data and Raft RPC ports are its gossip and Raft ports plus one.
		env = append(env, "CLUSTER_IN_LOCALHOST=true")
		env = append(env, clusterFailover...)
	}
	p, err := Start(Spec{
		Name: "weaviate-server", Path: s.opts.Bins[Weaviate.Name],
		Args:    []string{"--host", "127.0.0.1", "--port", strconv.Itoa(n.HTTP), "--scheme", "http"},
		Env:     env,
		LogFile: filepath.Join(s.opts.DataDir, "logs", logName), Detach: s.opts.Detach,
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Restart kills one server with SIGKILL, as a crash would, and starts it
// again on the same ports and data: "nats-server", "minio" or "weaviate-server".
func (s *Stack) Restart(ctx context.Context, name string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	switch name {
	case NATSServer.Name:
		s.NATS.Kill()
		p, err := StartNATS(ctx, s.opts.Bins[NATSServer.Name], filepath.Join(s.opts.DataDir, "nats"), s.Ports.NATS, s.Ports.NATSMonitor, filepath.Join(s.opts.DataDir, "logs"), s.opts.Detach)
		s.NATS = p
		return err
	case MinIO.Name:
		s.MinIO.Kill()
		return s.startMinIO(ctx)
	case Weaviate.Name:
		s.Weaviate.Kill()
		return s.startWeaviate(ctx)
	}
	return fmt.Errorf("restart: unknown server %q", name)
}
