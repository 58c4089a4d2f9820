package store

// Filtered, keyword and vector reads over Weaviate's gRPC API
// (queryd/store/grpcsearch): about half the time of the same GraphQL query
// (BenchmarkChunkQueryProtocols), and the reads of read, read_around,
// list_file_chunks and the searches are such queries. Any gRPC failure but
// a missing tenant falls back to GraphQL:
// gRPC reaches one node, GraphQL all of -weaviate-host (hedged). A node lost
// must not stall reads, so a gRPC read that gets no answer within
// grpcAttemptTimeout while the node answers nothing else either is given up
// (answer.go), and once the node looks cut off reads skip gRPC for
// grpcRetryAfter.

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/strata-kb/strata/queryd/store/grpcsearch"
)

const (
	// grpcAttemptTimeout is how long a gRPC read waits for its node when
	// the node answers nothing else meanwhile: far above a healthy read (a
	// keyword search at 1M chunks and 16 clients: p99 0.5 s), far below a
	// client's patience. A node that answers other reads is only slow, and
	// the read waits on (answer.go).
	grpcAttemptTimeout = time.Second
	// grpcRetryAfter is how long reads go to GraphQL after gRPC failed.
	grpcRetryAfter = 10 * time.Second
)

// searchRPC is the gRPC search client.
type searchRPC struct {
	client    *grpcsearch.Client
	log       *slog.Logger
	failures  atomic.Int64 // reads answered over GraphQL after gRPC failed
	answers   atomic.Int64 // reads the node answered (get, answer.go)
	downUntil atomic.Int64 // unix nanoseconds: skip gRPC until then
	loggedAt  atomic.Int64 // unix nanoseconds of the last failure logged
}

// SetGRPC makes filtered, keyword and vector reads go over Weaviate's gRPC
// API at host (host:port, plain text), with the same API key as REST. It
// does not connect until the first read. Failures are logged to log, at
// most one every grpcRetryAfter.
func (s *Store) SetGRPC(host, apiKey string, log *slog.Logger) error {
	c, err := grpcsearch.New(host, apiKey)
	if err != nil {
		return err
	}
	s.rpc = &searchRPC{client: c, log: log}
	return nil
}

// failed records a read gRPC failed (GraphQL answers it). Only a node that
// cannot be reached turns gRPC off for a while: an unreachable node
// (Unavailable) or an attempt that ran out of time on a connection that is
// not up. A query gRPC refuses or cannot express, or a slow one on a
// healthy connection, goes to GraphQL alone, so one query cannot turn gRPC
// off for every other.
func (r *searchRPC) failed(class string, err error) {
	r.failures.Add(1)
	code := status.Code(err)
	cutOff := code == codes.Unavailable || (code == codes.DeadlineExceeded && !r.client.Ready())
	if cutOff {
		r.downUntil.Store(time.Now().Add(grpcRetryAfter).UnixNano())
	}
	now, last := time.Now().UnixNano(), r.loggedAt.Load()
	if r.log != nil && now-last >= int64(grpcRetryAfter) && r.loggedAt.CompareAndSwap(last, now) {
		r.log.Warn("weaviate gRPC read failed; GraphQL answered it", "class", class, "node_cut_off", cutOff, "err", err)
	}
}

// Close releases the gRPC connection, if any.
func (s *Store) Close() error {
	if s.rpc == nil {
		return nil
	}
	return s.rpc.client.Close()
}

// GRPCFailures counts the reads gRPC failed and GraphQL answered.
func (s *Store) GRPCFailures() int64 {
	if s.rpc == nil {
		return 0
	}
	return s.rpc.failures.Load()
}

// getQuery is a filtered Get: rows matching where (ranked by bm25 when
// set), in sort order, from offset, at most limit.
type getQuery struct {
	bm25   *grpcsearch.BM25
	near   *grpcsearch.NearVector
	where  *filters.WhereBuilder
	sort   []graphql.Sort
	offset int
	limit  int
}

// find runs q over gRPC when set, else (and when gRPC fails) over GraphQL.
func (s *Store) find(ctx context.Context, class, project string, fields []graphql.Field, q getQuery) ([]map[string]any, error) {
	if q.limit <= 0 {
		return nil, nil
	}
	q.where = s.withReaders(ctx, project, class, q.where)
	if s.rpc != nil && time.Now().UnixNano() >= s.rpc.downUntil.Load() {
		gq := grpcsearch.Query{Class: class, Tenant: project, Fields: fields, BM25: q.bm25, NearVector: q.near,
			Where: q.where, Sort: q.sort, Offset: q.offset, Limit: q.limit, Consistency: s.consistency}
		rows, missing, err := s.rpc.get(ctx, gq)
		switch {
		case err == nil && missing:
			return nil, nil // no index for this project yet
		case err == nil:
			return rows, nil
		case ctx.Err() != nil:
			return nil, fmt.Errorf("query %s of %s: %w", class, project, ctx.Err())
		}
		s.rpc.failed(class, err)
	}
	return s.get(ctx, class, project, fields, q.where, func(g *graphql.GetBuilder) *graphql.GetBuilder {
		if q.bm25 != nil {
			g = g.WithBM25((&graphql.BM25ArgumentBuilder{}).WithQuery(q.bm25.Query).WithProperties(q.bm25.Properties...))
		}
		if n := q.near; n != nil {
			near := (&graphql.NearVectorArgumentBuilder{}).WithVector(n.Vector).WithTargetVectors(n.Target)
			if n.Distance != nil {
				near = near.WithDistance(float32(*n.Distance))
			}
			g = g.WithNearVector(near)
		}
		if len(q.sort) > 0 {
			g = g.WithSort(q.sort...)
		}
		if q.offset > 0 {
			g = g.WithOffset(q.offset)
		}
		return g.WithLimit(q.limit)
	})
}
