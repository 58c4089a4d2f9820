package chaos

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/strata-kb/strata/deploy/localstack"
	"github.com/strata-kb/strata/shared/testservers"
)

// cluster is the running stack: servers on 3+4+3 nodes and two replicas of
// every service, with what it takes to kill and restart each process.
type cluster struct {
	st *localstack.Stack
	// replicas: the second process of each service, by service, with the
	// port and environment it is restarted with.
	replicas map[string]replica
	victims  []*victim
	// mcpURLs are both queryd replicas' MCP endpoints.
	mcpURLs []string
}

type replica struct {
	port int
	env  []string
	addr string
}

// victim is one process the chaos loop may kill.
type victim struct {
	name   string // nats-1, minio-3, weaviate-2, ingestor-1, queryd-2, ...
	engine string // nats, minio, weaviate or the service's name
	kill   func()
	start  func(ctx context.Context) error
	pid    func() int // the running process's, for SIGSTOP and SIGCONT
}

// startCluster brings the whole loopback cluster up.
func startCluster(ctx context.Context, cfg Config, state string, d disks) (_ *cluster, err error) {
	ports, err := localstack.FreePorts()
	if err != nil {
		return nil, err
	}
	ingestorEnv := []string{
		"STRATA_RECONCILE_INTERVAL=" + cfg.ReconcileInterval.String(),
		"STRATA_RECONCILE_MIN_AGE=" + cfg.ReconcileMinAge.String(),
	}
	var embedderEnv []string
	if d.dirs != nil {
		// The vector cache reserves its whole size on every NATS node's
		// disk up front (1 GiB by default): a quarter of a small disk.
		embedderEnv = append(embedderEnv, "STRATA_CACHE_BYTES="+strconv.FormatInt(cfg.DiskSize/4, 10))
	}
	st, err := localstack.Up(ctx, localstack.Options{
		Root: cfg.Root, StateDir: state, Ports: ports, Progress: cfg.Progress, Prebuilt: cfg.Prebuilt,
		NATSCluster: true, WeaviateCluster: true, MinIONodes: 4,
		ServiceEnv: map[string][]string{
			// The readers make far more calls in one session than an agent run's budget.
			"queryd":   {"STRATA_TOOL_BUDGET=0"},
			"ingestor": ingestorEnv,
			"embedder": embedderEnv,
		},
	})
	if err != nil {
		if st != nil {
			st.Stop(10 * time.Second)
		}
		return nil, fmt.Errorf("start the cluster: %w", err)
	}
	c := &cluster{st: st, replicas: map[string]replica{}}
	defer func() {
		if err != nil {
			c.stop()
		}
	}()
	endpoints := st.Servers.S3Endpoints()
	// The services take one S3 endpoint each: the second ingestor and
	// queryd talk to other MinIO nodes than the first ones (node1).
	extra := map[string][]string{
		"ingestor": {"STRATA_S3_ENDPOINT=" + endpoints[1]},
		"queryd":   {"STRATA_S3_ENDPOINT=" + endpoints[2]},
	}
	for _, svc := range localstack.Services {
		free, err := testservers.FreePorts(1)
		if err != nil {
			return nil, err
		}
		cfg.logf("starting %s-2", svc)
		a, err := st.StartReplicaWith(ctx, svc, 2, free[0], extra[svc]...)
		if err != nil {
			return nil, fmt.Errorf("start %s-2: %w", svc, err)
		}
		c.replicas[svc] = replica{port: free[0], env: extra[svc], addr: a}
	}
	c.mcpURLs = []string{st.Env.MCPURL, "http://" + c.replicas["queryd"].addr + "/mcp"}
	c.victims = c.allVictims()
	return c, nil
}

func (c *cluster) stop() { c.st.Stop(15 * time.Second) }

// allVictims lists every process of the cluster.
func (c *cluster) allVictims() []*victim {
	srv := c.st.Servers
	var out []*victim
	for i := range srv.NATSNodes() {
		out = append(out, &victim{name: fmt.Sprintf("nats-%d", i+1), engine: "nats",
			kill:  func() { srv.NATSNodes()[i].Kill() },
			pid:   func() int { return srv.NATSNodes()[i].Pid() },
			start: func(ctx context.Context) error { return srv.RestartNATSNode(ctx, i) }})
	}
	for i := range srv.MinIONodes() {
		out = append(out, &victim{name: fmt.Sprintf("minio-%d", i+1), engine: "minio",
			kill:  func() { srv.MinIONodes()[i].Kill() },
			pid:   func() int { return srv.MinIONodes()[i].Pid() },
			start: func(ctx context.Context) error { return srv.RestartMinIONode(ctx, i) }})
	}
	for i := range srv.WeaviateNodes() {
		out = append(out, &victim{name: fmt.Sprintf("weaviate-%d", i+1), engine: "weaviate",
			kill:  func() { srv.WeaviateNodes()[i].Kill() },
			pid:   func() int { return srv.WeaviateNodes()[i].Pid() },
			start: func(ctx context.Context) error { return srv.RestartWeaviateNode(ctx, i) }})
	}
	for _, svc := range localstack.Services {
		out = append(out, &victim{name: svc + "-1", engine: svc,
			kill:  func() { c.st.Process(svc).Kill() },
			pid:   func() int { return c.st.Process(svc).Pid() },
			start: func(ctx context.Context) error { return c.st.StartService(ctx, svc) }})
		out = append(out, &victim{name: svc + "-2", engine: svc,
			kill: func() { c.st.Process(svc + "-2").Kill() },
			pid:  func() int { return c.st.Process(svc + "-2").Pid() },
			start: func(ctx context.Context) error {
				r := c.replicas[svc]
				_, err := c.st.StartReplicaWith(ctx, svc, 2, r.port, r.env...)
				return err
			}})
	}
	return out
}

// whole waits until every engine has all its members back and in step:
// each NATS node's /healthz (JetStream streams and consumers current on
// it), each MinIO node ready with its write quorum, the Weaviate cluster
// settled (all nodes healthy, one leader, Raft in sync) and every service
// process ready. Killing one process after this never takes two of one
// engine at once.
func (c *cluster) whole(ctx context.Context) error {
	var last error
	for {
		if last = c.wholeOnce(ctx); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster not whole: %w", last)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

func (c *cluster) wholeOnce(ctx context.Context) error {
	srv := c.st.Servers
	var errs []error
	for i, port := range srv.NATSMonitorPorts() {
		if err := get(ctx, fmt.Sprintf("http://127.0.0.1:%d/healthz", port)); err != nil {
			errs = append(errs, fmt.Errorf("nats-%d: %w", i+1, err))
		}
	}
	for i, ep := range srv.S3Endpoints() {
		if err := get(ctx, "http://"+ep+"/minio/health/cluster"); err != nil {
			errs = append(errs, fmt.Errorf("minio-%d: %w", i+1, err))
		}
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	err := localstack.WaitWeaviateSettled(wctx, c.st, len(srv.WeaviateNodes()))
	cancel()
	if err != nil {
		errs = append(errs, err)
	}
	p := c.st.Ports()
	for svc, port := range map[string]int{"ingestor": p.Ingestor, "embedder": p.Embedder, "indexer": p.Indexer, "queryd": p.Queryd} {
		if err := get(ctx, fmt.Sprintf("http://127.0.0.1:%d/readyz", port)); err != nil {
			errs = append(errs, fmt.Errorf("%s-1: %w", svc, err))
		}
		if err := get(ctx, "http://"+c.replicas[svc].addr+"/readyz"); err != nil {
			errs = append(errs, fmt.Errorf("%s-2: %w", svc, err))
		}
	}
	return errors.Join(errs...)
}

var probe = &http.Client{Timeout: 2 * time.Second}

func get(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := probe.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return errors.New(resp.Status)
	}
	return nil
}

// procs names every process of the cluster: nats-1, minio-2, ingestor-1, ...
func (c *cluster) procs() map[string]*testservers.Process {
	out := map[string]*testservers.Process{}
	srv := c.st.Servers
	for i, p := range srv.NATSNodes() {
		out["nats-"+strconv.Itoa(i+1)] = p
	}
	for i, p := range srv.MinIONodes() {
		out["minio-"+strconv.Itoa(i+1)] = p
	}
	for i, p := range srv.WeaviateNodes() {
		out["weaviate-"+strconv.Itoa(i+1)] = p
	}
	for name, p := range c.st.Services {
		if !strings.Contains(name, "-") {
			name += "-1"
		}
		out[name] = p
	}
	return out
}

// cpuSample is each process's CPU time so far, by name, with its pid.
type cpuSample map[string]struct {
	pid     int
	seconds float64
}

// sampleCPU reads every process's user and system time from /proc.
func (c *cluster) sampleCPU() cpuSample {
	out := cpuSample{}
	for name, p := range c.procs() {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.Pid()))
		if err != nil {
			continue
		}
		// Fields after the command's closing parenthesis: state is 3,
		// utime 14 and stime 15 (proc(5)), in clock ticks of 1/100 s.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseFloat(f[11], 64)
		st, _ := strconv.ParseFloat(f[12], 64)
		out[name] = struct {
			pid     int
			seconds float64
		}{p.Pid(), (u + st) / 100}
	}
	return out
}

// cpuSince is each process's CPU seconds between two samples (since its
// start when it was restarted in between).
func cpuSince(before, after cpuSample) map[string]float64 {
	out := map[string]float64{}
	for name, a := range after {
		b, ok := before[name]
		if ok && b.pid == a.pid {
			out[name] = a.seconds - b.seconds
		} else {
			out[name] = a.seconds
		}
	}
	return out
}
