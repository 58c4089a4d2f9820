package localstack

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/strata-kb/strata/shared/testservers"
)

// Services are Strata's own programs, in start order.
var Services = []string{"indexer", "embedder", "ingestor", "queryd"}

// serviceEnvs is the environment each service starts with: the running
// servers' addresses and credentials (s.Env, s.Servers), the stack's
// secrets, the embedding model's directory, the NATS stream and KV replicas
// and the Weaviate replication factor.
func serviceEnvs(o Options, s *Stack, secrets map[string]string, modelDir string, replicas, replication int) map[string][]string {
	kvReplicas := "STRATA_KV_REPLICAS=" + strconv.Itoa(replicas)
	common := []string{"STRATA_NATS_URL=" + s.Env.NATSURL, "STRATA_LOG_FORMAT=json", "STRATA_LOG_LEVEL=info", kvReplicas}
	envs := map[string][]string{
		"ingestor": append(common, "STRATA_HTTP_ADDR="+addr(o.Ports.Ingestor), "STRATA_S3_ENDPOINT="+s.Env.S3Endpoint,
			"STRATA_S3_ACCESS_KEY="+s.Env.S3AccessKey, "STRATA_S3_SECRET_KEY="+s.Env.S3SecretKey, "STRATA_ASSETS_BUCKET="+AssetsBucket),
		"embedder": append(common, "STRATA_HTTP_ADDR="+addr(o.Ports.Embedder), "STRATA_EMBEDDING_MODEL_DIR="+modelDir),
		"indexer": append(common, "STRATA_HTTP_ADDR="+addr(o.Ports.Indexer), "STRATA_WEAVIATE_HOST="+s.Servers.WeaviateHosts(),
			"STRATA_WEAVIATE_GRPC="+s.Servers.WeaviateGRPCHost, "STRATA_WEAVIATE_API_KEY="+testservers.LocalWeaviateWriter,
			"STRATA_WEAVIATE_REPLICATION_FACTOR="+strconv.Itoa(replication)),
		"queryd": {"STRATA_ADDR=" + addr(o.Ports.Queryd), "STRATA_LOG_FORMAT=json", "STRATA_NATS_URL=" + s.Env.NATSURL,
			"STRATA_S3_ENDPOINT=" + s.Env.S3Endpoint, "STRATA_S3_ACCESS_KEY=" + s.Env.S3AccessKey, "STRATA_S3_SECRET_KEY=" + s.Env.S3SecretKey, "STRATA_WEAVIATE_HOST=" + s.Servers.WeaviateHosts(),
			"STRATA_WEAVIATE_GRPC=" + s.Servers.WeaviateGRPCHost, "STRATA_WEAVIATE_API_KEY=" + testservers.LocalWeaviateReader,
			"STRATA_API_KEYS=" + secrets["STRATA_API_KEY"] + "=" + APIKeyGrant, "STRATA_CURSOR_SECRET=" + secrets["STRATA_CURSOR_SECRET"],
			"STRATA_EMBEDDING_MODEL_DIR=" + modelDir, kvReplicas},
	}
	if o.WeaviateCluster {
		envs["queryd"] = append(envs["queryd"], "STRATA_WEAVIATE_READ_CONSISTENCY=ONE")
	}
	if dir := tmpfsScratch(); dir != "" {
		envs["ingestor"] = append(envs["ingestor"], "STRATA_PDF_SCRATCH_DIR="+dir)
	}
	return envs
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
	free, err := testservers.FreePorts(1)
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

// serviceNice is the CPU priority each service binary runs at, below the
// default: the embedder is batch work that takes every core it is given,
// and on a machine shared with queryd (the local stack, strata-chaos) its
// catching up after a restart held the queries that embed their text for
// seconds (docs/decisions.md, "The embedder runs below the query path").
var serviceNice = map[string]int{"embedder": 10}

func (s *Stack) start(ctx context.Context, name, binary string, env []string, port int) error {
	p, err := testservers.Start(testservers.Spec{Name: name, Path: filepath.Join(s.opts.StateDir, "bin", binary), Env: env,
		LogFile: filepath.Join(s.opts.StateDir, "data", "logs", name+".log"), Detach: s.opts.Detach, Nice: serviceNice[binary]})
	if err != nil {
		return err
	}
	s.Services[name] = p
	readyCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return p.WaitReady(readyCtx, testservers.HTTPReady(fmt.Sprintf("http://%s/readyz", addr(port))))
}

// Process returns a running service by name.
func (s *Stack) Process(name string) *testservers.Process { return s.Services[name] }

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
