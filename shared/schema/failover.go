package schema

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"
)

// Hosts splits a -weaviate-host value: one host:port or several,
// comma-separated (the nodes of one Weaviate cluster).
func Hosts(value string) []string {
	var out []string
	for _, h := range strings.Split(value, ",") {
		if h = strings.TrimSpace(h); h != "" {
			out = append(out, h)
		}
	}
	return out
}

// failover sends each request to the node that answered last. A write moves
// to the next node only when a node cannot be reached at all (refused,
// reset, dial timeout: a process that died), so it is never applied twice;
// a read is hedged and retried across the nodes (hedge.go). Weaviate
// coordinates replicated reads and writes itself, so any live node can
// serve any request.
type failover struct {
	hosts []string
	next  http.RoundTripper
	good  atomic.Int64 // index of the host that answered last
}

func newFailover(hosts []string) *failover {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// A node that is gone must not hold a request for long before the next is tried.
	tr.DialContext = (&net.Dialer{Timeout: 2 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	tr.MaxIdleConnsPerHost = 32
	return &failover{hosts: hosts, next: tr}
}

// RoundTrip implements http.RoundTripper.
func (f *failover) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		var err error
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, fmt.Errorf("read request body: %w", err)
		}
		req.Body.Close()
	}
	if isRead(req) {
		return f.hedged(req, body)
	}
	return f.inTurn(req, body)
}

// isSchemaRead reports reads of collections and tenants. Weaviate sends
// them to the Raft leader unless the header consistency is false
// (openapi-specs/schema.json: GET /schema, /schema/{className},
// /schema/{className}/tenants[/{tenantName}]); the node's own copy may lag
// the leader's by a commit, which Strata's readers and Ensure* tolerate.
func isSchemaRead(req *http.Request) bool {
	return (req.Method == http.MethodGet || req.Method == http.MethodHead) &&
		(strings.HasSuffix(req.URL.Path, "/v1/schema") || strings.Contains(req.URL.Path, "/v1/schema/"))
}

// isRead reports requests that change nothing: safe to send twice.
func isRead(req *http.Request) bool {
	return req.Method == http.MethodGet || req.Method == http.MethodHead ||
		(req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/v1/graphql"))
}

// attempt is req sent to host n. A schema read that is not the first
// attempt asks the node for its own copy of the schema (header
// consistency: false) instead of the Raft leader's, which may be gone.
func (f *failover) attempt(ctx context.Context, req *http.Request, body []byte, n int, again bool) (*http.Response, error) {
	r := req.Clone(ctx)
	r.URL.Host, r.Host = f.hosts[n], f.hosts[n]
	if again && isSchemaRead(r) {
		r.Header.Set("consistency", "false")
	}
	if body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		r.ContentLength = int64(len(body))
	}
	return f.next.RoundTrip(r)
}

// inTurn sends a request to one node at a time, moving on only when a node
// cannot be reached (writes are never sent twice to live nodes).
func (f *failover) inTurn(req *http.Request, body []byte) (*http.Response, error) {
	start := int(f.good.Load())
	var errs []error
	for i := range f.hosts {
		n := (start + i) % len(f.hosts)
		resp, err := f.attempt(req.Context(), req, body, n, false)
		if err == nil {
			f.good.Store(int64(n))
			return resp, nil
		}
		errs = append(errs, fmt.Errorf("%s: %w", f.hosts[n], err))
		if !unreachable(err) || req.Context().Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// unreachable reports errors that mean the node is not there (so another
// may be), as opposed to a request that reached a node and failed.
func unreachable(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	s := err.Error()
	return strings.Contains(s, "connection refused") || strings.Contains(s, "connection reset") ||
		strings.Contains(s, "broken pipe") || strings.Contains(s, "EOF")
}
