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

// failover sends each request to the node that answered last and, when a
// node cannot be reached at all (refused, reset, dial timeout: a process
// that died), to the next one. A node that answers, even with an error
// status, keeps the request: Weaviate coordinates replicated reads and
// writes itself, so any live node can serve any request.
type failover struct {
	hosts  []string
	apiKey string // sent as a bearer token when set
	next   http.RoundTripper
	good   atomic.Int64 // index of the host that answered last
}

func newFailover(hosts []string) *failover {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// A node that is gone must not hold a request for long before the next is tried.
	tr.DialContext = (&net.Dialer{Timeout: 2 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	tr.MaxIdleConnsPerHost = 32
	return &failover{hosts: hosts, next: tr}
}

// hedgeDelay is how long a read waits for its node before the same read
// also goes to the next node. A node that holds no replica of the shard
// forwards a read to one that does, and after a replica's SIGKILL that
// forward was seen to hang for more than ten seconds, while a node holding
// the other replica answers at once.
const hedgeDelay = 750 * time.Millisecond

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
	if len(f.hosts) > 1 && isRead(req) {
		return f.hedged(req, body)
	}
	return f.inTurn(req, body)
}

// isRead reports requests that change nothing: safe to send twice.
func isRead(req *http.Request) bool {
	return req.Method == http.MethodGet || req.Method == http.MethodHead ||
		(req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/v1/graphql"))
}

// attempt is req sent to host n.
func (f *failover) attempt(ctx context.Context, req *http.Request, body []byte, n int) (*http.Response, error) {
	r := req.Clone(ctx)
	r.URL.Host, r.Host = f.hosts[n], f.hosts[n]
	if f.apiKey != "" {
		r.Header.Set("Authorization", "Bearer "+f.apiKey)
	}
	if body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		r.ContentLength = int64(len(body))
	}
	return f.next.RoundTrip(r)
}

// hedged sends a read to the preferred node and, each hedgeDelay without an
// answer (or at once when a node is unreachable), to the next one too; the
// first answer wins and the others are cancelled.
func (f *failover) hedged(req *http.Request, body []byte) (*http.Response, error) {
	start := int(f.good.Load())
	results := make(chan attemptResult, len(f.hosts))
	cancels := make([]context.CancelFunc, 0, len(f.hosts))
	launch := func(i int) {
		n := (start + i) % len(f.hosts)
		ctx, cancel := context.WithCancel(req.Context())
		cancels = append(cancels, cancel)
		go func() {
			resp, err := f.attempt(ctx, req, body, n)
			results <- attemptResult{n, resp, err}
		}()
	}
	launch(0)
	launched, pending := 1, 1
	var errs []error
	timer := time.NewTimer(hedgeDelay)
	defer timer.Stop()
	for pending > 0 {
		select {
		case r := <-results:
			pending--
			if r.err == nil {
				f.good.Store(int64(r.n))
				winner := len(cancels) // cancel the others once this body is read: keep its context
				for i, c := range cancels {
					if (start+i)%len(f.hosts) != r.n {
						c()
					} else {
						winner = i
					}
				}
				go drainLosers(results, pending)
				r.resp.Body = &cancelOnClose{ReadCloser: r.resp.Body, cancel: cancels[winner]}
				return r.resp, nil
			}
			errs = append(errs, fmt.Errorf("%s: %w", f.hosts[r.n], r.err))
			if launched < len(f.hosts) && req.Context().Err() == nil {
				launch(launched)
				launched++
				pending++
			}
		case <-timer.C:
			if launched < len(f.hosts) {
				launch(launched)
				launched++
				pending++
				timer.Reset(hedgeDelay)
			}
		}
	}
	for _, c := range cancels {
		c()
	}
	return nil, errors.Join(errs...)
}

type attemptResult struct {
	n    int
	resp *http.Response
	err  error
}

// drainLosers closes the bodies of answers that came too late.
func drainLosers(results <-chan attemptResult, pending int) {
	for range pending {
		if r := <-results; r.err == nil {
			r.resp.Body.Close()
		}
	}
}

// cancelOnClose releases a winning attempt's context with its body.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// inTurn sends a request to one node at a time, moving on only when a node
// cannot be reached (writes are never sent twice to live nodes).
func (f *failover) inTurn(req *http.Request, body []byte) (*http.Response, error) {
	start := int(f.good.Load())
	var errs []error
	for i := range f.hosts {
		n := (start + i) % len(f.hosts)
		resp, err := f.attempt(req.Context(), req, body, n)
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
