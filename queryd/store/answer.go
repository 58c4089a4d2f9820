package store

// How long a gRPC read waits. It used to be cut at grpcAttemptTimeout and
// sent again over GraphQL. On a loaded machine (strata-chaos: 16 processes
// on 2 cores, the run queue 20-35 deep) keyword searches took about a
// second, so the reads most at risk were cut, their second spent for
// nothing, and sent again as a GraphQL read of their own (hedged to a
// second node after 750 ms): 65-385 reads per queryd replica in two
// minutes (strata_queryd_weaviate_grpc_fallbacks_total), each adding work
// to a node already too slow. A read now waits while its node answers
// other reads; only a node that answers nothing for grpcAttemptTimeout
// (cut off, hung) loses it to GraphQL.

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strata-kb/strata/queryd/store/grpcsearch"
	"github.com/strata-kb/strata/shared/schema"
)

// grpcMaxWait bounds a gRPC read however busy its node is, as
// schema.DefaultReadTimeout bounds a REST read.
const grpcMaxWait = schema.DefaultReadTimeout

// get runs q over gRPC until it is answered, ctx ends, grpcMaxWait passes,
// or a whole grpcAttemptTimeout passes without the node answering any read
// (then the error is DeadlineExceeded, as the attempt's own deadline gave
// before).
func (r *searchRPC) get(ctx context.Context, q grpcsearch.Query) ([]map[string]any, bool, error) {
	attempt, cancel := context.WithTimeout(ctx, grpcMaxWait)
	defer cancel()
	type result struct {
		rows    []map[string]any
		missing bool
		err     error
	}
	done := make(chan result, 1)
	go func() {
		rows, missing, err := r.client.Get(attempt, q)
		done <- result{rows, missing, err}
	}()
	answered := r.answers.Load()
	wait := time.NewTimer(grpcAttemptTimeout)
	defer wait.Stop()
	for {
		select {
		case res := <-done:
			if res.err == nil {
				r.answers.Add(1)
			}
			return res.rows, res.missing, res.err
		case <-wait.C:
			if n := r.answers.Load(); n != answered {
				answered = n // the node answers: it is slow, not gone
				wait.Reset(grpcAttemptTimeout)
				continue
			}
			cancel()
			<-done
			return nil, false, status.Error(codes.DeadlineExceeded, fmt.Sprintf("search %s of %s: no read answered by the node in %s", q.Class, q.Tenant, grpcAttemptTimeout))
		}
	}
}
