package testservers

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// NATSNodes lists every node of a clustered NATS, the first node first, so
// that NATSNodes()[i] is strata-<i+1>.
func (s *Stack) NATSNodes() []*Process {
	return append([]*Process{s.NATS}, s.NATSPeers...)
}

// NATSMonitorPorts lists the monitoring port of every NATS node, the first
// node first.
func (s *Stack) NATSMonitorPorts() []int {
	ports := []int{s.Ports.NATSMonitor}
	for _, p := range s.opts.NATSPeers {
		ports = append(ports, p.Monitor)
	}
	return ports
}

// RestartNATSNode starts node i (0 is strata-1) of a clustered NATS again,
// on its ports and JetStream store, after it was killed (it is killed first
// if it still runs), routing to the others as startNATSCluster does, and
// waits until its JetStream answers.
func (s *Stack) RestartNATSNode(ctx context.Context, i int) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	o := s.opts
	nodes := append([]NATSPeer{{Client: o.Ports.NATS, Monitor: o.Ports.NATSMonitor, Route: o.NATSRoute}}, o.NATSPeers...)
	if len(nodes) < 2 || i < 0 || i >= len(nodes) {
		return fmt.Errorf("restart nats node %d: not a node of a %d-node cluster", i+1, len(nodes))
	}
	var routes []string
	for _, n := range nodes {
		routes = append(routes, fmt.Sprintf("nats-route://127.0.0.1:%d", n.Route))
	}
	n, name := nodes[i], NATSNodeName(i)
	cluster := fmt.Sprintf("cluster {\n  name: strata\n  listen: 127.0.0.1:%d\n  routes: [%s]\n}\n", n.Route, strings.Join(routes, ", "))
	return restartNode("restart nats node "+name, i, &s.NATS, s.NATSPeers,
		func() (*Process, error) {
			return startNATSNode(ctx, o.Bins[NATSServer.Name], NATSNodeDir(o.DataDir, i), name, n.Client, n.Monitor, cluster, filepath.Join(o.DataDir, "logs"), o.Detach)
		}, nil)
}

// restartNode puts a new process in the place of node i of a cluster whose
// node1 is *first and whose others are peers: it kills the old one (a
// no-op when it is already gone), starts the new one and, with ready set,
// waits until ready accepts it. what leads its errors.
func restartNode(what string, i int, first **Process, peers []*Process, start func() (*Process, error), ready func(*Process) error) error {
	slot := first
	if i > 0 {
		slot = &peers[i-1]
	}
	(*slot).Kill()
	p, err := start()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	*slot = p
	if ready != nil {
		if err := ready(p); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	return nil
}
