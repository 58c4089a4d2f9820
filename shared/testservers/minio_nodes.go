package testservers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// MinIOPeer is one more node of a distributed MinIO: its S3 API and
// console ports.
type MinIOPeer struct{ API, Console int }

// A distributed MinIO (StackOptions.MinIOPeers) runs every node on
// 127.0.0.1 with one drive each, all drives one erasure set: with 4 nodes
// MinIO's default parity is EC:2, so any one node can be lost and every
// object is still read and written (reads need 2 drives, writes 3).
//
// Two settings make loopback nodes work:
//   - _MINIO_SERVER_LOCAL names the node's own endpoint: inside a container
//     (a /.dockerenv file, as CI and these machines have) MinIO otherwise
//     waits forever for 127.0.0.1 "to resolve to a valid IP" and never
//     finds which endpoint is its own.
//   - MINIO_CI_CD lets MinIO use drives on the root file system (it
//     refuses them in a distributed setup otherwise) and caps its buffer
//     pool at 256 MiB a node.
//
// Every node must have the same MINIO_* environment (MinIO checks it when
// the nodes meet), so every node has both of Strata's notification targets
// with the same NATS address and the same queue directory:
//   - The address is NATS's first node. MinIO's NATS client (nats.go with
//     its defaults) learns the cluster's other nodes from the server and
//     reconnects to one of them when that node is lost; the durable
//     target's events wait in the queue directory meanwhile, the live
//     target's are dropped and come from the durable copy. One address per
//     node is not possible.
//   - The queue directory is /proc/self/cwd/events, and each node runs in
//     a directory of its own (minio-events/nodeN): the same string, a
//     directory per node, as each would have on its own machine.
const minioQueueDir = "/proc/self/cwd/events"

// minioNodes lists every node of a distributed MinIO, the first node first.
func (s *Stack) minioNodes() []MinIOPeer {
	return append([]MinIOPeer{{API: s.Ports.MinIO, Console: s.Ports.MinIOConsole}}, s.opts.MinIOPeers...)
}

// S3Endpoints lists the host:port of every MinIO node, the first node
// (S3Endpoint) first.
func (s *Stack) S3Endpoints() []string {
	var out []string
	for _, n := range s.minioNodes() {
		out = append(out, "127.0.0.1:"+strconv.Itoa(n.API))
	}
	return out
}

// MinIONodes lists every node of the MinIO cluster, node1 first, so that
// MinIONodes()[i] is node i+1.
func (s *Stack) MinIONodes() []*Process {
	return append([]*Process{s.MinIO}, s.MinIOPeers...)
}

// startMinIOCluster starts every node of a distributed MinIO and waits until
// each is ready and the cluster has its write quorum.
func (s *Stack) startMinIOCluster(ctx context.Context) error {
	nodes := s.minioNodes()
	s.MinIOPeers = make([]*Process, len(nodes)-1)
	// The nodes wait for each other: start all before waiting for any.
	for i := range nodes {
		p, err := s.startMinIONode(i)
		if err != nil {
			return err
		}
		if i == 0 {
			s.MinIO = p
		} else {
			s.MinIOPeers[i-1] = p
		}
	}
	for i, p := range s.MinIONodes() {
		if err := minioNodeReady(ctx, p, nodes[i].API); err != nil {
			return err
		}
	}
	return nil
}

// minioNodeReady waits until a node answers ready and sees a cluster with
// its write quorum.
func minioNodeReady(ctx context.Context, p *Process, port int) error {
	base := fmt.Sprintf("http://127.0.0.1:%d/minio/health/", port)
	if err := p.WaitReady(ctx, HTTPReady(base+"ready")); err != nil {
		return err
	}
	return p.WaitReady(ctx, HTTPReady(base+"cluster"))
}

// startMinIONode starts node i (0 is node1) of a distributed MinIO.
func (s *Stack) startMinIONode(i int) (*Process, error) {
	nodes := s.minioNodes()
	name := fmt.Sprintf("node%d", i+1)
	var endpoints []string
	for j, n := range nodes {
		endpoints = append(endpoints, fmt.Sprintf("http://127.0.0.1:%d%s", n.API, MinIONodeDir(s.opts.DataDir, j)))
	}
	drive := MinIONodeDir(s.opts.DataDir, i)
	queueDir := filepath.Join(s.opts.DataDir, "minio-events", name)
	for _, d := range []string{drive, queueDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	natsAddr := "127.0.0.1:" + strconv.Itoa(s.Ports.NATS)
	self := "127.0.0.1:" + strconv.Itoa(nodes[i].API)
	id, live := "_"+MinIONotifyID, "_"+MinIOLiveNotifyID
	args := append([]string{"server"}, endpoints...)
	args = append(args, "--address", self, "--console-address", "127.0.0.1:"+strconv.Itoa(nodes[i].Console), "--quiet")
	return Start(Spec{
		Name: "minio-" + name, Path: s.opts.Bins[MinIO.Name], Args: args,
		Env: []string{
			"_MINIO_SERVER_LOCAL=" + self,
			"MINIO_CI_CD=1",
			"MINIO_ROOT_USER=" + LocalS3AccessKey,
			"MINIO_ROOT_PASSWORD=" + LocalS3SecretKey,
			"MINIO_BROWSER=off",
			"MINIO_UPDATE=off",
			"MINIO_NOTIFY_NATS_ENABLE" + id + "=on",
			"MINIO_NOTIFY_NATS_ADDRESS" + id + "=" + natsAddr,
			"MINIO_NOTIFY_NATS_SUBJECT" + id + "=strata.objects.events",
			"MINIO_NOTIFY_NATS_JETSTREAM" + id + "=on",
			"MINIO_NOTIFY_NATS_QUEUE_DIR" + id + "=" + minioQueueDir,
			"MINIO_NOTIFY_NATS_ENABLE" + live + "=on",
			"MINIO_NOTIFY_NATS_ADDRESS" + live + "=" + natsAddr,
			"MINIO_NOTIFY_NATS_SUBJECT" + live + "=strata.objects.live",
		},
		LogFile: filepath.Join(s.opts.DataDir, "logs", "minio-"+name+".log"), Dir: queueDir, Detach: s.opts.Detach,
	})
}

// RestartMinIONode starts node i (0 is node1) of a distributed MinIO again,
// on its ports and drive, after it was killed (it is killed first if it
// still runs), and waits until it is ready and sees its write quorum.
func (s *Stack) RestartMinIONode(ctx context.Context, i int) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	nodes := s.minioNodes()
	if len(nodes) < 2 || i < 0 || i >= len(nodes) {
		return fmt.Errorf("restart minio node %d: not a node of a %d-node cluster", i+1, len(nodes))
	}
	return restartNode(fmt.Sprintf("restart minio node%d", i+1), i, &s.MinIO, s.MinIOPeers,
		func() (*Process, error) { return s.startMinIONode(i) },
		func(p *Process) error { return minioNodeReady(ctx, p, nodes[i].API) })
}
