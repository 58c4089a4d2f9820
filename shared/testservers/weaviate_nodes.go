package testservers

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// WeaviateNodes lists every node of the Weaviate cluster, node1 first, so
// that WeaviateNodes()[i] is node i+1.
func (s *Stack) WeaviateNodes() []*Process {
	return append([]*Process{s.Weaviate}, s.WeaviatePeers...)
}

// RestartWeaviateNode starts node i (0 is node1) of a multi-node Weaviate
// again, on its ports and data, after it was killed: it joins the gossip of
// the others (node1 too, which founded it) and waits until it is ready.
func (s *Stack) RestartWeaviateNode(ctx context.Context, i int) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	p := s.Ports
	nodes := append([]WeaviatePeer{{HTTP: p.Weaviate, GRPC: p.WeaviateGRPC, Gossip: p.WeaviateGossip, Data: p.WeaviateData, Raft: p.Raft, RaftRPC: p.RaftRPC}}, s.opts.WeaviatePeers...)
	if len(nodes) < 2 || i < 0 || i >= len(nodes) {
		return fmt.Errorf("restart weaviate node %d: not a node of a %d-node cluster", i+1, len(nodes))
	}
	var raftJoin, gossip []string
	for j, n := range nodes {
		raftJoin = append(raftJoin, fmt.Sprintf("node%d:%d", j+1, n.Raft))
		if j != i {
			gossip = append(gossip, fmt.Sprintf("127.0.0.1:%d", n.Gossip))
		}
	}
	return restartNode(fmt.Sprintf("restart weaviate node%d", i+1), i, &s.Weaviate, s.WeaviatePeers,
		func() (*Process, error) {
			return s.startWeaviateNode(fmt.Sprintf("node%d", i+1), nodes[i], strings.Join(gossip, ","), strings.Join(raftJoin, ","), len(nodes))
		},
		func(p *Process) error { return weaviateReady(ctx, p, nodes[i].HTTP) })
}
