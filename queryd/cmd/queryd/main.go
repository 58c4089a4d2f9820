// Command queryd serves Strata's read-only MCP tools over streamable HTTP,
// with bearer API keys mapped to the projects they may read and the groups
// they read them with: the keys of -api-keys, and with -nats-url those made
// with `strata keys create` (the key store, queryd/auth).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/server"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/embedder/engine"
	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/queryd/budget"
	"github.com/strata-kb/strata/queryd/cursor"
	"github.com/strata-kb/strata/queryd/deadletters"
	"github.com/strata-kb/strata/queryd/mcphttp"
	"github.com/strata-kb/strata/queryd/resources"
	"github.com/strata-kb/strata/queryd/store"
	"github.com/strata-kb/strata/queryd/toolnotify"
	"github.com/strata-kb/strata/queryd/tools"
	"github.com/strata-kb/strata/shared/apikeys"
	"github.com/strata-kb/strata/shared/config"
	"github.com/strata-kb/strata/shared/freshness"
	"github.com/strata-kb/strata/shared/metrics"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/service"
	"github.com/strata-kb/strata/shared/stagehealth"
)

// version is set at build time.
var version = "dev"

// Config is queryd's configuration.
type Config struct {
	LogLevel       string
	LogFormat      string
	Addr           string
	WeaviateHost   string
	WeaviateGRPC   string
	WeaviateAPIKey string
	APIKeys        string
	CursorSecret   string
	Transport      string
	StdioAPIKey    string
	NATSURL        string
	KVReplicas     int
	ReadLevel      string
	ToolBudget     int
	ToolBudgetWarn int
	BudgetIdle     time.Duration
	BudgetSets     string
	Toolsets       string
	TokenBudget    int
	S3Endpoint     string
	S3AccessKey    string
	S3SecretKey    string
	S3Secure       bool
	Embedding      engine.Config
	Previous       engine.Config // the model before Embedding's, during a model change
	Web            webConfig     // CORS, OAuth metadata, resources (web.go)
	Pprof          bool
	SlowToolCall   time.Duration
	ReadTimeout    time.Duration // one Weaviate read, every attempt of it (schema.ClientOptions)
	ByIDHedge      time.Duration // a REST read by id alone, before a filtered query joins it
	CatalogWait    time.Duration // longest /readyz waits for the catalog's first load
}

// RegisterFlags registers queryd's flags.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.LogLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&c.LogFormat, "log-format", "json", "json or text")
	fs.StringVar(&c.Addr, "addr", "127.0.0.1:8090", "HTTP listen address: MCP at /mcp, /healthz, /readyz, /metrics")
	fs.StringVar(&c.WeaviateHost, "weaviate-host", "127.0.0.1:8080", config.WeaviateHostUsage)
	fs.StringVar(&c.WeaviateGRPC, "weaviate-grpc", "", "Weaviate gRPC host:port (optional): filtered reads (read, read_around, list_file_chunks) go over it, about twice as fast as GraphQL, and fall back to GraphQL when it fails")
	fs.StringVar(&c.WeaviateAPIKey, "weaviate-api-key", "", "Weaviate API key of a read-only user")
	fs.StringVar(&c.APIKeys, "api-keys", "", "API keys, their projects and groups: key1=acme,beta|hr,finance;key2=*|* (projects * = all; groups * = every document; a key without |GROUPS reads only documents without groups); may be empty with -nats-url, whose key store holds the keys made with strata keys create")
	fs.StringVar(&c.CursorSecret, "cursor-secret", "", "secret that signs pagination cursors (shared by all replicas)")
	fs.StringVar(&c.Transport, "transport", "http", "http (streamable HTTP at -addr) or stdio (one client on stdin/stdout, for desktop agents)")
	fs.StringVar(&c.StdioAPIKey, "stdio-api-key", "", "with -transport stdio: the API key whose projects and groups the client reads: one of -api-keys, or with -nats-url one made with strata keys create (looked up at every call: revoking it stops the client)")
	fs.StringVar(&c.NATSURL, "nats-url", "", "NATS URL for state shared by replicas: tool budgets, and the API keys made with strata keys create (watched; a revoked key is refused at once); empty: budgets counted per process, -api-keys only")
	fs.DurationVar(&c.ReadTimeout, "weaviate-read-timeout", schema.DefaultReadTimeout, "deadline of one Weaviate read, every hedge and retry of it across the nodes")
	fs.DurationVar(&c.ByIDHedge, "weaviate-byid-hedge", store.DefaultByIDHedge, "a read by id over REST that has not answered after this long is also sent as a filtered query on the id, which does not wait for Weaviate's Raft leader; the first answer wins")
	fs.StringVar(&c.ReadLevel, "weaviate-read-consistency", "", "read consistency on a replicated Weaviate: ONE (reads go on with a node down), QUORUM or ALL; empty on a single node")
	fs.IntVar(&c.KVReplicas, "kv-replicas", 1, "replicas of the tool-budget and API-key KV buckets (1 on a single NATS server, 3 on a cluster)")
	fs.IntVar(&c.ToolBudget, "tool-budget", 20, "tool calls per agent run: an MCP session, or without one the API key and client name (0 = unlimited)")
	fs.IntVar(&c.ToolBudgetWarn, "tool-budget-warn", 4, "answers tell the agent to wrap up when this many calls remain")
	fs.DurationVar(&c.BudgetIdle, "tool-budget-idle", budget.DefaultIdle, "a run (one agent task) ends after this long without a tool call; the next call starts a new budget")
	fs.StringVar(&c.BudgetSets, "tool-budget-toolsets", "knowledge,localrag,strata", "toolsets whose calls count against the budget (comma-separated; chunks' paging tools are not counted by default)")
	fs.StringVar(&c.Toolsets, "toolsets", strings.Join(tools.AllToolsets, ","), "toolsets to serve: knowledge, chunks, localrag, strata (comma-separated)")
	fs.IntVar(&c.TokenBudget, "token-budget", tools.DefaultTokenBudget, "tokens read and read_around return inline before paginating")
	fs.StringVar(&c.S3Endpoint, "s3-endpoint", "", "S3/MinIO endpoint host:port for view_chunk_image (empty: images not served)")
	fs.StringVar(&c.S3AccessKey, "s3-access-key", "", "S3 access key (read-only is enough)")
	fs.StringVar(&c.S3SecretKey, "s3-secret-key", "", "S3 secret key")
	fs.BoolVar(&c.S3Secure, "s3-secure", false, "use TLS to reach S3")
	c.Embedding.RegisterFlags(fs) // must match the embedder's: queries and documents share the model
	// During a model change: the model the index was embedded with before. Searches use it for a
	// project until the new model covers all its chunks, then switch.
	c.Previous.RegisterFlagsWithPrefix(fs, "previous-", "none")
	c.Web.RegisterFlags(fs)
	fs.DurationVar(&c.SlowToolCall, "slow-tool-call", 2*time.Second, "a tool call slower than this (or one that fails) sends the client a warning log notification saying why (0: failures only)")
	fs.DurationVar(&c.CatalogWait, "ready-catalog-wait", 30*time.Second, "with -nats-url, /readyz reports not ready until the catalog of commits has loaded, at most this long after start (then calls read Weaviate for what it would answer, slower)")
	fs.BoolVar(&c.Pprof, "pprof", false, "serve Go profiles at /debug/pprof/ on -addr, without auth (for profiling on loopback; keep off where -addr is reachable)")
}

// Validate reports every problem at once.
func (c *Config) Validate() error {
	var p config.Problems
	keys, keysErr := flagKeys(c.APIKeys, c.NATSURL)
	if keysErr != nil {
		p.Addf("api-keys", "%v", keysErr)
	}
	if _, err := cursor.NewSigner(c.CursorSecret); err != nil {
		p.Addf("cursor-secret", "%v", err)
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		p.Addf("addr", "must be host:port: %v", err)
	}
	config.ValidateWeaviateHosts(&p, "weaviate-host", c.WeaviateHost)
	for _, ts := range strings.Split(c.Toolsets, ",") {
		if !slices.Contains(tools.AllToolsets, strings.TrimSpace(ts)) {
			p.Addf("toolsets", "unknown toolset %q (want some of %s)", ts, strings.Join(tools.AllToolsets, ", "))
		}
	}
	for _, ts := range strings.Split(c.BudgetSets, ",") {
		if ts = strings.TrimSpace(ts); ts != "" && !slices.Contains(tools.AllToolsets, ts) {
			p.Addf("tool-budget-toolsets", "unknown toolset %q (want some of %s)", ts, strings.Join(tools.AllToolsets, ", "))
		}
	}
	if c.BudgetIdle < time.Second {
		p.Addf("tool-budget-idle", "must be at least 1s, got %s", c.BudgetIdle)
	}
	if c.TokenBudget < 100 {
		p.Addf("token-budget", "must be at least 100, got %d", c.TokenBudget)
	}
	if c.S3Endpoint != "" && (c.S3AccessKey == "" || c.S3SecretKey == "") {
		p.Addf("s3-access-key", "S3 credentials are required with -s3-endpoint")
	}
	if c.ToolBudget < 0 || c.ToolBudgetWarn < 0 || (c.ToolBudget > 0 && c.ToolBudgetWarn >= c.ToolBudget) {
		p.Addf("tool-budget", "budget %d and warning threshold %d (-tool-budget-warn) must be >= 0, the threshold below the budget", c.ToolBudget, c.ToolBudgetWarn)
	}
	c.Embedding.Validate(&p)
	c.Previous.Validate(&p)
	c.Web.validate(&p)
	if c.ReadLevel != "" && c.ReadLevel != "ONE" && c.ReadLevel != "QUORUM" && c.ReadLevel != "ALL" {
		p.Addf("weaviate-read-consistency", "must be ONE, QUORUM, ALL or empty, got %q", c.ReadLevel)
	}
	if c.ReadTimeout < 100*time.Millisecond || c.ReadTimeout > 10*time.Minute {
		p.Addf("weaviate-read-timeout", "must be 100ms..10m, got %s", c.ReadTimeout)
	}
	if c.ByIDHedge < time.Millisecond || c.ByIDHedge > 10*time.Second {
		p.Addf("weaviate-byid-hedge", "must be 1ms..10s, got %s", c.ByIDHedge)
	}
	if c.SlowToolCall < 0 {
		p.Addf("slow-tool-call", "must be >= 0, got %s", c.SlowToolCall)
	}
	if c.CatalogWait < 0 {
		p.Addf("ready-catalog-wait", "must be >= 0, got %s", c.CatalogWait)
	}
	if c.KVReplicas < 1 || c.KVReplicas > 5 {
		p.Addf("kv-replicas", "must be 1..5, got %d", c.KVReplicas)
	}
	switch c.Transport {
	case "http":
	case "stdio":
		// With NATS the key may be in the key store: run checks it once the store is loaded.
		if _, ok := keys.Lookup(c.StdioAPIKey); !ok && keysErr == nil && c.NATSURL == "" {
			p.Addf("stdio-api-key", "must be one of the keys in -api-keys (or, with -nats-url, a key made with strata keys create)")
		}
	default:
		p.Addf("transport", "must be http or stdio, got %q", c.Transport)
	}
	return p.Err()
}

// flagKeys parses -api-keys. With -nats-url it may be empty (nil Keys, which
// know no key): every key is then one of the key store.
func flagKeys(spec, natsURL string) (*auth.Keys, error) {
	if strings.TrimSpace(spec) == "" && natsURL != "" {
		return nil, nil
	}
	return auth.ParseKeys(spec)
}

// keysLoadTimeout bounds the first read of the key store at startup.
const keysLoadTimeout = 15 * time.Second

// watchKeys follows the key store of NATS KV and returns it once its keys
// are loaded, so the first requests already see them.
func watchKeys(ctx context.Context, js jetstream.JetStream, replicas int, log *slog.Logger) (*auth.KeyStore, error) {
	if _, err := auth.OpenKeysBucket(ctx, js, replicas); err != nil {
		return nil, err // at startup, say so now rather than in a retry loop
	}
	ks := auth.NewKeyStore(log)
	go func() {
		if err := ks.Watch(ctx, js, replicas); err != nil && ctx.Err() == nil {
			log.Error("api key watch stopped", "err", err)
		}
	}()
	select {
	case <-ks.Loaded():
		return ks, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(keysLoadTimeout):
		return nil, fmt.Errorf("api keys of kv %s not loaded within %s", apikeys.Bucket, keysLoadTimeout)
	}
}

// serveStdio serves one client on in/out as the holder of key. The key is
// looked up at every call (auth.WithLiveKey), not once at startup: a key
// revoked while the client runs is refused from its next call.
func serveStdio(ctx context.Context, mcpServer *server.MCPServer, keys auth.KeyLookup, key string, in io.Reader, out io.Writer, log *slog.Logger) error {
	p, ok := keys.Lookup(key)
	if !ok {
		return errors.New("-stdio-api-key is neither one of -api-keys nor a key of the key store (strata keys list)")
	}
	log.Info("queryd serving MCP on stdio", "key", p.KeyName)
	stdio := server.NewStdioServer(mcpServer)
	stdio.SetContextFunc(func(ctx context.Context) context.Context { return auth.WithLiveKey(ctx, keys, key) })
	if err := stdio.Listen(ctx, in, out); err != nil && ctx.Err() == nil {
		return fmt.Errorf("stdio: %w", err)
	}
	return nil
}

func main() { service.Main("queryd", run) }

// run starts queryd with the command line args and serves until ctx ends:
// service.Start parses and checks the configuration, then calls serve.
func run(ctx context.Context, args []string) error {
	return service.Start(ctx, "queryd", args, new(Config), serve)
}

// serve serves the MCP tools over HTTP, or to one client on stdio, until ctx
// ends.
func serve(ctx context.Context, cfg *Config, deps service.Deps) error {
	log, reg := deps.Log, deps.Metrics
	fromFlag, _ := flagKeys(cfg.APIKeys, cfg.NATSURL) // validated
	var keys auth.KeyLookup = fromFlag
	signer, _ := cursor.NewSigner(cfg.CursorSecret)
	wv, err := schema.NewClientWith(cfg.WeaviateHost, cfg.WeaviateGRPC, cfg.WeaviateAPIKey, schema.ClientOptions{ReadTimeout: cfg.ReadTimeout})
	if err != nil {
		return err
	}

	var counter budget.Counter = &budget.Memory{}
	var states tools.ObjectStates
	var dead tools.DeadLetters
	var stages tools.StageHealth
	var catalog *store.Catalog // with -nats-url
	st := store.New(wv).SetReadConsistency(cfg.ReadLevel).SetByIDHedge(cfg.ByIDHedge)
	if cfg.WeaviateGRPC != "" {
		if err := st.SetGRPC(cfg.WeaviateGRPC, cfg.WeaviateAPIKey, log); err != nil {
			return err
		}
		defer st.Close()
	}
	if cfg.NATSURL != "" {
		nc, js, err := pipeline.Connect(cfg.NATSURL, "strata-queryd", log)
		if err != nil {
			return err
		}
		defer nc.Close()
		kv, err := budget.OpenKV(ctx, js, cfg.KVReplicas, max(time.Hour, 2*cfg.BudgetIdle))
		if err != nil {
			return err
		}
		counter = kv
		defer func() {
			// Hand the runs this replica counts back to NATS KV (before the
			// connection closes), so that another replica continues them.
			rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			kv.Release(rctx)
		}()
		if states, err = freshness.Lookup(ctx, js); err != nil {
			return err
		}
		dead = deadletters.Reader{JS: js}
		stages = stagehealth.Reader{JS: js}
		stored, err := watchKeys(ctx, js, cfg.KVReplicas, log)
		if err != nil {
			return err
		}
		keys = auth.Lookups{fromFlag, stored} // -api-keys first: the store cannot shadow them
		// The catalog follows the indexer's commits: watermarks, version
		// visibility and counts are then read from memory, not Weaviate.
		catalog = store.NewCatalog(st, log)
		st.SetCatalog(catalog)
		go func() {
			if err := catalog.Watch(ctx, js); err != nil && ctx.Err() == nil {
				log.Error("catalog stopped; reads go to Weaviate", "err", err)
			}
		}()
	}
	grpcFallbacks(reg, st.GRPCFailures)
	var tl *tools.Tools // set below; the budget asks it for a tool's toolset at call time
	files := resources.New(st, signer, log).SetPageSize(cfg.Web.ResourcePage)
	mcpServer := newMCPServer(cfg, reg, counter, func(tool string) string { return tl.ToolsetOf(tool) }, log, files.Options()...)
	files.Register(mcpServer)
	tl = tools.New(st, signer, log).SetTokenBudget(cfg.TokenBudget).SetStrata(st, st, states, dead).SetStageHealth(stages)
	provider, err := engine.New(cfg.Embedding)
	switch {
	case errors.Is(err, engine.ErrNoProvider):
		log.Warn("no embedding provider: search_knowledge, search_files and query_documents are not served")
	case err != nil:
		return err
	default:
		tl.SetEmbeddings(st, provider, cfg.Embedding.Provider)
		previous, err := engine.New(cfg.Previous)
		switch {
		case errors.Is(err, engine.ErrNoProvider):
		case err != nil:
			return fmt.Errorf("previous embedding model: %w", err)
		default:
			tl.SetPreviousEmbeddings(previous, cfg.Previous.Provider)
			log.Info("model change: searches use the previous model until the new one covers a project", "previous", previous.Model(), "model", provider.Model())
		}
	}
	if cfg.S3Endpoint != "" {
		s3, err := minio.New(cfg.S3Endpoint, &minio.Options{Creds: credentials.NewStaticV4(cfg.S3AccessKey, cfg.S3SecretKey, ""), Secure: cfg.S3Secure})
		if err != nil {
			return fmt.Errorf("s3 client for %s: %w", cfg.S3Endpoint, err)
		}
		tl.SetImageReader(store.Images{Client: s3})
	}
	var sets []string
	for _, ts := range strings.Split(cfg.Toolsets, ",") {
		sets = append(sets, strings.TrimSpace(ts))
	}
	tl.Register(mcpServer, sets...)
	if cfg.Transport == "stdio" {
		// stdout carries the protocol; logs go to stderr.
		return serveStdio(ctx, mcpServer, keys, cfg.StdioAPIKey, os.Stdin, os.Stdout, log.With("weaviate", cfg.WeaviateHost))
	}
	weaviateReady := func(ctx context.Context) error {
		ok, err := wv.Misc().ReadyChecker().Do(ctx)
		if err == nil && !ok {
			err = errors.New("not ready")
		}
		if err != nil {
			return fmt.Errorf("weaviate not ready: %w", err)
		}
		return nil
	}
	var loaded func() bool
	if catalog != nil {
		loaded = catalog.Loaded
	}
	handler, err := cfg.httpHandler(ctx, mcpServer, keys, reg, readiness(weaviateReady, loaded, time.Now().Add(cfg.CatalogWait)))
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen %s: %w", cfg.Addr, err)
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("queryd serving MCP", "url", "http://"+ln.Addr().String()+"/mcp", "weaviate", cfg.WeaviateHost)
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	log.Info("queryd stopped")
	return nil
}

// newMCPServer is queryd's MCP server without its tools: tool metrics, the
// warnings toolnotify sends, the tool budget (applied to the tools whose
// toolset, named by toolsetOf, -tool-budget-toolsets lists), recovery, and
// extra (the resources' options).
func newMCPServer(cfg *Config, reg *metrics.Registry, counter budget.Counter, toolsetOf func(tool string) string, log *slog.Logger, extra ...server.ServerOption) *server.MCPServer {
	budgeted := map[string]bool{}
	for _, ts := range strings.Split(cfg.BudgetSets, ",") {
		budgeted[strings.TrimSpace(ts)] = true
	}
	return server.NewMCPServer("strata", version, append(extra,
		server.WithToolHandlerMiddleware(toolMetrics(reg)),
		server.WithLogging(), // logging/setLevel, and the warnings toolnotify sends
		server.WithToolHandlerMiddleware(toolnotify.Middleware(toolnotify.Config{Slow: cfg.SlowToolCall,
			OnSendError: func(tool string, err error) { log.Warn("tool call warning not delivered", "tool", tool, "err", err) }})),
		server.WithToolHandlerMiddleware(budget.Middleware(budget.Config{Limit: cfg.ToolBudget, Warn: cfg.ToolBudgetWarn, Idle: cfg.BudgetIdle,
			Applies: func(tool string) bool { return budgeted[toolsetOf(tool)] }}, counter)),
		server.WithToolCapabilities(false),
		server.WithRecovery(),
		server.WithInstructions("Strata: search and read the files of the projects your API key can read. All tools are read-only."),
	)...)
}

// httpHandler is queryd's HTTP surface: the MCP endpoint at /mcp (API keys,
// and with -oauth-issuer the issuer's tokens), OAuth metadata, /metrics,
// /healthz, /readyz (ready: see readiness) and with -pprof the
// profiles, every endpoint behind the Origin check.
//
// The MCP transport is queryd/mcphttp: mcp-go's streamable HTTP transport
// with tool calls on a shorter path. Session ids are issued but not tracked
// in memory (mcp-go's default generating manager), so any replica answers any
// request of a session; per-session state (the tool budget) lives in NATS KV.
func (c *Config) httpHandler(ctx context.Context, mcpServer *server.MCPServer, keys auth.KeyLookup, reg *metrics.Registry, ready func(context.Context) error) (http.Handler, error) {
	// A call's context is made from its request's, which carries the
	// principal the authenticator found: no context function is needed.
	mcpHTTP := mcphttp.New(mcpServer, nil)
	mux := http.NewServeMux()
	authenticate, err := c.Web.authenticator(ctx, auth.Middleware(keys))
	if err != nil {
		return nil, err
	}
	c.Web.mount(mux, mcpHTTP, authenticate)
	mux.Handle("GET /metrics", reg.Handler())
	if c.Pprof {
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace) // where a call waits: go tool trace -pprof=sync (or net)
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if err := ready(r.Context()); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	return c.Web.guard(mux, c.Addr), nil
}
