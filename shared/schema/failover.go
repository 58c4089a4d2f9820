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

	"github.com/weaviate/weaviate-go-client/v4/weaviate"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/grpc"
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
// reset, dial timeout: a process that died), so it is never applied twice,
// unless its context says it is safe to send again (Idempotent): then each
// attempt has its own deadline, and a write held past it, or refused
// because the Raft leader was lost, is sent again to the next node. A read
// is hedged and retried across the nodes (hedge.go), within ReadTimeout.
// Weaviate coordinates replicated reads and writes itself, so any live node
// can serve any request.
type failover struct {
	hosts        []string
	next         http.RoundTripper
	good         atomic.Int64  // index of the host that answered last
	readTimeout  time.Duration // bounds one read, every attempt of it
	writeTimeout time.Duration // bounds the first attempt of an idempotent write
}

func newFailover(hosts []string) *failover {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// A node that is gone must not hold a request for long before the next is tried.
	tr.DialContext = (&net.Dialer{Timeout: 2 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	tr.MaxIdleConnsPerHost = 32
	return &failover{hosts: hosts, next: tr, readTimeout: DefaultReadTimeout, writeTimeout: DefaultWriteTimeout}
}

// ClientOptions are the deadlines of a client's requests (NewClientWith);
// a zero field takes its default.
type ClientOptions struct {
	// ReadTimeout bounds one read (GET, HEAD, GraphQL): every attempt,
	// hedge and retry of it across the nodes, unless the caller's context
	// ends first.
	ReadTimeout time.Duration
	// WriteTimeout bounds one attempt of a write marked Idempotent; each
	// attempt after it gets twice the time of the one before (a write that
	// is only slow ends at last), up to maxWriteAttemptTimeout.
	WriteTimeout time.Duration
}

const (
	// DefaultReadTimeout is a read's deadline: far above any read Strata
	// makes on a healthy cluster, far below the client's 60 s backstop.
	DefaultReadTimeout = 30 * time.Second
	// DefaultWriteTimeout is the first attempt's deadline of an idempotent
	// write: well above a healthy batch of 200 objects written with
	// consistency ALL under load (a few hundred ms to a few s on 2 cores),
	// and what a write held by the node that became Raft leader costs
	// instead of the 60 s client timeout.
	DefaultWriteTimeout = 10 * time.Second
	// maxWriteAttemptTimeout caps an attempt's deadline as it doubles.
	maxWriteAttemptTimeout = time.Minute
	// maxWriteAttempts bounds how often one idempotent write is sent.
	maxWriteAttempts = 8
	// clientTimeout is the http.Client's bound on any request (the Weaviate
	// client's default): the deadline of writes not marked Idempotent.
	clientTimeout = 60 * time.Second
)

// NewClientWith is NewClient with the given deadlines.
func NewClientWith(host, grpcHost, apiKey string, o ClientOptions) (*weaviate.Client, error) {
	hosts := Hosts(host)
	if len(hosts) == 0 {
		return nil, fmt.Errorf("weaviate client: no host in %q", host)
	}
	f := newFailover(hosts)
	if o.ReadTimeout > 0 {
		f.readTimeout = o.ReadTimeout
	}
	if o.WriteTimeout > 0 {
		f.writeTimeout = o.WriteTimeout
	}
	cfg := weaviate.Config{Host: hosts[0], Scheme: "http", StartupTimeout: 30 * time.Second,
		// A backstop on every request: reads and idempotent writes end
		// sooner, by their own deadlines.
		ConnectionClient: &http.Client{Transport: f, Timeout: max(clientTimeout, f.readTimeout+time.Second)}}
	if apiKey != "" {
		// As auth.ApiKey would, but the client takes an AuthConfig or a
		// ConnectionClient, not both; headers go with REST and gRPC alike.
		cfg.Headers = map[string]string{"authorization": "Bearer " + apiKey}
	}
	if grpcHost != "" && len(hosts) == 1 {
		cfg.GrpcConfig = &grpc.Config{Host: grpcHost, Secured: false}
	}
	c, err := weaviate.NewClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("weaviate client for %s: %w", host, err)
	}
	return c, nil
}

// idempotentKey marks a context whose writes may be sent more than once.
type idempotentKey struct{}

// Idempotent marks the writes made with ctx as safe to send again: upserts
// of objects with fixed ids and contents (a batch), merges of fixed values
// into objects (PATCH). Sent twice, such a write leaves what sending it once
// does. Each attempt then has its own deadline (ClientOptions.WriteTimeout),
// and a write that timed out, found its node gone or was refused because
// the Raft leader was lost goes to the next node.
//
// An attempt given up is cancelled, but Weaviate may still apply it: the
// tenant check with the Raft leader runs on context.Background (cluster
// QueryTenantsShards), and the replicated write after it on a context of
// its own (usecases/replica coordinator.Push, 20 s). A merge held on the
// check fails when the check does; a batch checks its objects one by one
// (adapters/repos/db/index.go putObjectBatch), so the objects after the
// held one are written if the node ever gets an answer; an attempt that was
// only slow lands within those 20 s. What lands is the content of the
// attempt that answered, and overwrites a newer write only if the caller
// wrote the same object again in between. An attempt abandoned at the
// client's 60 s timeout (before these deadlines) had the same fate; the
// default deadline, far above a healthy write, adds it for a node slow
// past 10 s.
func Idempotent(ctx context.Context) context.Context {
	return context.WithValue(ctx, idempotentKey{}, true)
}

func isIdempotent(ctx context.Context) bool {
	b, _ := ctx.Value(idempotentKey{}).(bool)
	return b
}

// heldUntilKey marks a context whose writes are made under a lease.
type heldUntilKey struct{}

// ErrLeasePassed: a request made under a lease (HeldUntil) was not sent
// because the lease may have passed.
var ErrLeasePassed = errors.New("not sent: the lease it is made under may have passed")

// HeldUntil marks the requests made with ctx as made under a lease that
// surely holds until until() (the zero time: lost). Each attempt is sent
// only before then: a holder paused (SIGSTOP, a frozen VM) between
// deciding to write and sending, past its lease, sends nothing when it
// wakes, while another holder may be writing. The body is encoded before
// the check, so what is left is the time the transport takes to put the
// request on the wire.
func HeldUntil(ctx context.Context, until func() time.Time) context.Context {
	return context.WithValue(ctx, heldUntilKey{}, until)
}

// LeasePassed says whether ctx's lease (HeldUntil) may have passed: a
// write made with it must not be sent (a caller that sends through gRPC,
// which this transport does not carry, checks it itself).
func LeasePassed(ctx context.Context) bool {
	until, ok := ctx.Value(heldUntilKey{}).(func() time.Time)
	return ok && !time.Now().Before(until())
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
	if LeasePassed(ctx) {
		return nil, fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, ErrLeasePassed)
	}
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
// cannot be reached (writes are never sent twice to live nodes), or, for an
// Idempotent write, when an attempt ran out of time or the node lost the
// Raft leader (retries).
func (f *failover) inTurn(req *http.Request, body []byte) (*http.Response, error) {
	if isIdempotent(req.Context()) {
		return f.retried(req, body)
	}
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

// retried sends an idempotent write, each attempt within its deadline
// (writeTimeout, doubling), to the next node after a node that could not be
// reached (at once), held the write past its deadline or answered that the
// Raft leader was lost (after a pause, doubling up to retryPauseMax). It
// returns the first other answer, or when the caller's context ends or the
// attempts run out, the last answer that said the leader was lost, else
// every attempt's error.
func (f *failover) retried(req *http.Request, body []byte) (*http.Response, error) {
	ctx := req.Context()
	start := int(f.good.Load())
	timeout, pause := f.writeTimeout, retryPause
	var errs []error
	var last *http.Response // the last leader-lost answer, body buffered
	for i := range maxWriteAttempts {
		n := (start + i) % len(f.hosts)
		actx, cancel := context.WithTimeout(ctx, timeout)
		resp, err := f.attempt(actx, req, body, n, false)
		switch {
		case err == nil && !leaderLostAnswer(resp):
			f.good.Store(int64(n))
			resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
			return resp, nil
		case err == nil:
			last = buffered(resp, last)
			cancel()
		default:
			cancel()
			if ctx.Err() != nil {
				return giveUp(last, append(errs, fmt.Errorf("%s: %w", f.hosts[n], err)))
			}
			if actx.Err() != nil {
				err = fmt.Errorf("attempt %d of %s: %w", i+1, timeout, err)
				timeout = min(2*timeout, maxWriteAttemptTimeout)
			} else if !unreachable(err) {
				return giveUp(last, append(errs, fmt.Errorf("%s: %w", f.hosts[n], err)))
			}
			errs = append(errs, fmt.Errorf("%s: %w", f.hosts[n], err))
			if unreachable(err) && i < len(f.hosts)-1 {
				continue // the next node at once, as any write
			}
		}
		if i == maxWriteAttempts-1 {
			break
		}
		select {
		case <-time.After(pause):
			pause = min(2*pause, retryPauseMax)
		case <-ctx.Done():
			return giveUp(last, append(errs, ctx.Err()))
		}
	}
	return giveUp(last, errs)
}

// leaderLostAnswer reports an answer that says the node could not reach the
// Raft leader (5xx or 422 with one of leaderLost's words): nothing was
// written, and the same write answers once a leader is elected. A body it
// reads is kept.
func leaderLostAnswer(resp *http.Response) bool {
	if resp.StatusCode < 500 && resp.StatusCode != http.StatusUnprocessableEntity {
		return false
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return LeaderLost(string(b))
}

// LeaderLost reports an error message of Weaviate's that says the node
// could not reach the Raft leader (a batch gives it per object, in a 200).
func LeaderLost(msg string) bool {
	for _, m := range leaderLost {
		if strings.Contains(msg, m) {
			return true
		}
	}
	return false
}

// ClassUpdating reports a per-object batch error Weaviate gives while it
// applies a collection update (a named vector or BM25 parameters added by
// another writer): every shard of the collection is read-only until the
// update is done (index.updateVectorIndexConfigs), a fraction of a second.
// Nothing was written, and the same objects are accepted right after.
func ClassUpdating(msg string) bool {
	return strings.Contains(msg, "read-only due to: UpdateVectorIndexConfigs")
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
