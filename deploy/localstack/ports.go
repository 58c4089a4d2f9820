package localstack

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/strata-kb/strata/shared/testservers"
)

// Ports are every loopback port the local stack uses.
type Ports struct {
	testservers.Ports
	Ingestor, Embedder, Indexer, Queryd int
}

// DefaultPorts are the ports of `task up`; each can be overridden with
// STRATA_PORT_<NAME> (e.g. STRATA_PORT_WEAVIATE=18080).
func DefaultPorts() (Ports, error) {
	p := Ports{Ports: testservers.Ports{NATS: 4222, NATSMonitor: 8222, MinIO: 9000, MinIOConsole: 9001, Weaviate: 8080,
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
	sp, err := testservers.FreeStackPorts()
	if err != nil {
		return Ports{}, err
	}
	q, err := testservers.FreePorts(4)
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

// natsClusterPorts gives so two more NATS nodes on free ports, and the
// first node its route port (Options.NATSCluster).
func natsClusterPorts(so *testservers.StackOptions) error {
	fp, err := testservers.FreePorts(7)
	if err != nil {
		return err
	}
	so.NATSRoute = fp[0]
	so.NATSPeers = []testservers.NATSPeer{{Client: fp[1], Monitor: fp[2], Route: fp[3]}, {Client: fp[4], Monitor: fp[5], Route: fp[6]}}
	return nil
}

// weaviateClusterPorts gives so two more Weaviate nodes on free ports, and
// the first node free gossip, data and Raft ports (Options.WeaviateCluster).
func weaviateClusterPorts(so *testservers.StackOptions) error {
	fp, err := testservers.FreePorts(4)
	if err != nil {
		return err
	}
	pairs, err := testservers.FreePortPairs(6) // gossip+data and raft+rpc of each node
	if err != nil {
		return err
	}
	so.Ports.WeaviateGossip, so.Ports.WeaviateData, so.Ports.Raft, so.Ports.RaftRPC = pairs[0][0], pairs[0][1], pairs[1][0], pairs[1][1]
	for i := range 2 {
		g, r := pairs[2+2*i], pairs[3+2*i]
		so.WeaviatePeers = append(so.WeaviatePeers, testservers.WeaviatePeer{HTTP: fp[2*i], GRPC: fp[2*i+1], Gossip: g[0], Data: g[1], Raft: r[0], RaftRPC: r[1]})
	}
	return nil
}

func addr(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }
