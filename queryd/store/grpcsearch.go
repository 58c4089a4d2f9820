package store

// Filtered and keyword reads over Weaviate's gRPC API (shared/grpcsearch):
// about half the time of the same GraphQL query (BenchmarkChunkQueryProtocols),
// and the reads of read, read_around, list_file_chunks and the searches are
// such queries, and so are vector searches. Any gRPC failure but a missing tenant falls back to GraphQL:
// gRPC reaches one node, GraphQL all of -weaviate-host (hedged). A node lost
// must not stall reads, so a gRPC attempt gets grpcAttemptTimeout, and after
// a failure reads skip gRPC for grpcRetryAfter.

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"

	"github.com/strata-kb/strata/shared/grpcsearch"
)

const (
	// grpcAttemptTimeout bounds one gRPC read: far above a healthy read
	// (a keyword search at 1M chunks and 16 clients: p99 0.5 s), far below
	// a client's patience.
	grpcAttemptTimeout = time.Second
	// grpcRetryAfter is how long reads go to GraphQL after gRPC failed.
	grpcRetryAfter = 10 * time.Second
)

// searchRPC is the gRPC search client.
type searchRPC struct {
	client    *grpcsearch.Client
	failures  atomic.Int64 // reads answered over GraphQL after gRPC failed
	downUntil atomic.Int64 // unix nanoseconds: skip gRPC until then
}

// SetGRPC makes filtered and keyword reads go over Weaviate's gRPC API at
// host (host:port, plain text), with the same API key as REST. It does not
// connect until the first read.
func (s *Store) SetGRPC(host, apiKey string) error {
	c, err := grpcsearch.New(host, apiKey)
	if err != nil {
		return err
	}
	s.rpc = &searchRPC{client: c}
	return nil
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
	bm25   *bm25Query
	near   *grpcsearch.NearVector
	where  *filters.WhereBuilder
	sort   []graphql.Sort
	offset int
	limit  int
}

// find runs q over gRPC when set, else (and when gRPC fails) over GraphQL.
func (s *Store) find(ctx context.Context, class, project string, fields []graphql.Field, q getQuery) ([]map[string]any, error) {
	if s.rpc != nil && time.Now().UnixNano() >= s.rpc.downUntil.Load() {
		gq := grpcsearch.Query{Class: class, Tenant: project, Fields: fields, Where: q.where, Sort: q.sort,
			Offset: q.offset, Limit: q.limit, Consistency: s.consistency}
		if q.bm25 != nil {
			gq.BM25 = &grpcsearch.BM25{Query: q.bm25.query, Properties: q.bm25.properties}
		}
		gq.NearVector = q.near
		attempt, cancel := context.WithTimeout(ctx, grpcAttemptTimeout)
		rows, missing, err := s.rpc.client.Get(attempt, gq)
		cancel()
		switch {
		case err == nil && missing:
			return nil, nil // no index for this project yet
		case err == nil:
			return rows, nil
		case ctx.Err() != nil:
			return nil, fmt.Errorf("query %s of %s: %w", class, project, err)
		}
		s.rpc.failures.Add(1)
		s.rpc.downUntil.Store(time.Now().Add(grpcRetryAfter).UnixNano())
	}
	return s.get(ctx, class, project, fields, func(g *graphql.GetBuilder) *graphql.GetBuilder {
		if q.bm25 != nil {
			g = g.WithBM25((&graphql.BM25ArgumentBuilder{}).WithQuery(q.bm25.query).WithProperties(q.bm25.properties...))
		}
		if n := q.near; n != nil {
			near := (&graphql.NearVectorArgumentBuilder{}).WithVector(n.Vector).WithTargetVectors(n.Target)
			if n.Distance != nil {
				near = near.WithDistance(float32(*n.Distance))
			}
			g = g.WithNearVector(near)
		}
		if q.where != nil {
			g = g.WithWhere(q.where)
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
