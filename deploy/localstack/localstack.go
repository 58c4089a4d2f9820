// Package localstack runs the whole of Strata on one machine: the pinned
// nats-server, minio and weaviate-server, the streams, bucket, notification
// and schema, and the four services. `go tool task up` uses it detached with
// data under .strata/; the end-to-end tests use it on free ports in a temp dir.
//
// Up, in this file, does each step in order; each job has its own file:
// ports.go (which loopback ports), install.go (the pinned servers and the
// embedding model), build.go (building the services), secrets.go (the
// generated secrets and the env file), provision.go (JetStream streams, the
// buckets and the Weaviate schema), services.go (starting, restarting and
// stopping the services) and control.go (a detached stack's pid files:
// status and down).
package localstack

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/strata-kb/strata/shared/testservers"
)

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
	// MinIONodes, when 2 or more, runs MinIO distributed on that many
	// nodes (on free ports), one drive each, erasure coded (4 nodes: any
	// one may be lost); every node notifies the first NATS node, and
	// fails over to the others with NATSCluster. Services are given the
	// first node (Env.S3Endpoint);
	// Servers.S3Endpoints() lists them all (minio_cluster.go).
	MinIONodes int
	// WeaviateAsyncIndexing: see testservers.StackOptions.AsyncIndexing.
	WeaviateAsyncIndexing bool
	// WeaviateIndexWorkers: see testservers.StackOptions.IndexWorkers.
	WeaviateIndexWorkers int
	// WeaviateEnv: see testservers.StackOptions.WeaviateEnv.
	WeaviateEnv []string
	// Prebuilt: the services are already built into StateDir/bin (BuildServices).
	Prebuilt bool
}

// Stack is a running local stack.
type Stack struct {
	Env      Env
	Servers  *testservers.Stack
	Services map[string]*testservers.Process
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
	bins, modelDir, err := install(ctx, o.StateDir, o.Progress)
	if err != nil {
		return nil, err
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

	s := &Stack{opts: o, bins: bins, Services: map[string]*testservers.Process{}, ServiceEnv: map[string][]string{}}
	defer func() {
		if err != nil {
			s.Stop(10 * time.Second)
		}
	}()
	replicas := 1
	so := testservers.StackOptions{
		Bins: bins, DataDir: filepath.Join(o.StateDir, "data"), Ports: o.Ports.Ports, Detach: o.Detach, Progress: o.Progress,
		AsyncIndexing: o.WeaviateAsyncIndexing, IndexWorkers: o.WeaviateIndexWorkers, WeaviateEnv: o.WeaviateEnv,
		BeforeMinIO: func(ctx context.Context, natsURL string) error {
			return ensureStreams(ctx, natsURL, replicas, o.Progress) // replicas as set below
		},
	}
	if o.NATSCluster {
		replicas = 3
		if err := natsClusterPorts(&so); err != nil {
			return nil, err
		}
	}
	if o.MinIONodes > 1 {
		if err := minioClusterPorts(&so, o.MinIONodes); err != nil {
			return nil, err
		}
	}
	replication := 1
	if o.WeaviateCluster {
		replication = 2
		if err := weaviateClusterPorts(&so); err != nil {
			return nil, err
		}
	}
	s.Servers, err = testservers.StartStack(ctx, so)
	if err != nil {
		return nil, err
	}
	s.Env = Env{
		MCPURL: fmt.Sprintf("http://127.0.0.1:%d/mcp", o.Ports.Queryd), APIKey: secrets["STRATA_API_KEY"],
		S3Endpoint: s.Servers.S3Endpoint, S3AccessKey: testservers.LocalS3AccessKey, S3SecretKey: testservers.LocalS3SecretKey,
		Bucket: Bucket, NATSURL: s.Servers.NATSURL, WeaviateHost: s.Servers.WeaviateHost, WeaviateWriterKey: testservers.LocalWeaviateWriter,
	}
	if err := ensureBucketsAndSchema(ctx, s.Env, s.Servers, replication, o.Progress); err != nil {
		return nil, err
	}

	envs := serviceEnvs(o, s, secrets, modelDir, replicas, replication)
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

// Ports returns the stack's ports.
func (s *Stack) Ports() Ports { return s.opts.Ports }

// BinDir is where the stack's programs are.
func (s *Stack) BinDir() string { return filepath.Join(s.opts.StateDir, "bin") }
