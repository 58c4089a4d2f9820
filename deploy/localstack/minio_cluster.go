package localstack

import (
	"context"
	"fmt"
	"slices"

	"github.com/strata-kb/strata/shared/testservers"
)

// minioClusterPorts gives so n-1 more MinIO nodes on free ports
// (Options.MinIONodes).
func minioClusterPorts(so *testservers.StackOptions, n int) error {
	fp, err := testservers.FreePorts(2 * (n - 1))
	if err != nil {
		return err
	}
	for i := range n - 1 {
		so.MinIOPeers = append(so.MinIOPeers, testservers.MinIOPeer{API: fp[2*i], Console: fp[2*i+1]})
	}
	return nil
}

// StartReplicaWith starts replica n (n >= 2, named "<service>-<n>") of a
// service as StartReplica does, on port (a free one when 0) and with env
// added after the service's own (the last value of a variable wins), for
// a replica that talks to other servers than the first: another MinIO
// node, say. Called again with the same port and env after the replica
// was killed, it starts it again as it was. It returns the replica's HTTP
// address.
func (s *Stack) StartReplicaWith(ctx context.Context, service string, n, port int, env ...string) (string, error) {
	if port == 0 {
		free, err := testservers.FreePorts(1)
		if err != nil {
			return "", err
		}
		port = free[0]
	}
	addrVar := "STRATA_HTTP_ADDR="
	if service == "queryd" {
		addrVar = "STRATA_ADDR="
	}
	all := append(append(slices.Clone(s.ServiceEnv[service]), env...), addrVar+addr(port))
	name := fmt.Sprintf("%s-%d", service, n)
	return addr(port), s.start(ctx, name, service, all, port)
}
