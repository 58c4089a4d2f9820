package store

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	pb "github.com/weaviate/weaviate/grpc/generated/protocol/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strata-kb/strata/queryd/store/grpcsearch"
)

// slowNode is a Weaviate gRPC endpoint that answers searches of the tenant
// "slow" after delay, and others at once.
type slowNode struct {
	pb.UnimplementedWeaviateServer
	delay time.Duration
}

func (n *slowNode) Search(ctx context.Context, req *pb.SearchRequest) (*pb.SearchReply, error) {
	if req.Tenant == "slow" {
		select {
		case <-time.After(n.delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return &pb.SearchReply{}, nil
}

func startSlowNode(t *testing.T, delay time.Duration) *searchRPC {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	pb.RegisterWeaviateServer(srv, &slowNode{delay: delay})
	go srv.Serve(ln)
	t.Cleanup(srv.Stop)
	c, err := grpcsearch.New(ln.Addr().String(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &searchRPC{client: c}
}

// TestGRPCSlowReadWaitsWhileTheNodeAnswers: a read that takes longer than
// grpcAttemptTimeout is not given up while its node answers other reads
// (a loaded node, not a lost one); alone, with nothing else answered, it is.
func TestGRPCSlowReadWaitsWhileTheNodeAnswers(t *testing.T) {
	ctx := context.Background()
	r := startSlowNode(t, 5*grpcAttemptTimeout/2)
	slow, fast := grpcsearch.Query{Class: "Chunk", Tenant: "slow", Limit: 1}, grpcsearch.Query{Class: "Chunk", Tenant: "fast", Limit: 1}
	if _, _, err := r.get(ctx, fast); err != nil {
		t.Fatal(err)
	}

	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // other reads the node answers meanwhile
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			case <-time.After(grpcAttemptTimeout / 5):
				if _, _, err := r.get(ctx, fast); err != nil {
					t.Error(err)
				}
			}
		}
	}()
	_, _, err := r.get(ctx, slow)
	close(done)
	wg.Wait()
	if err != nil {
		t.Fatalf("slow read while the node answered others: %v", err)
	}

	_, _, err = r.get(ctx, slow)
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("slow read with nothing else answered: %v, want DeadlineExceeded after %s", err, grpcAttemptTimeout)
	}
}
