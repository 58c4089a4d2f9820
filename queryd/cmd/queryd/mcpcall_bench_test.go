package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/queryd/budget"
	"github.com/strata-kb/strata/shared/metrics"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/testservers/serverstest"
)

// The cost of one MCP tool call through queryd's HTTP stack beside mcp-go's
// plain StreamableHTTPServer, on a tool that does nothing
// (docs/bench/mcp-call.md):
//
//	GOEXPERIMENT=jsonv2 GOMAXPROCS=1 go test ./queryd/cmd/queryd -run '^$' -bench MCPCall -benchmem -count 10
//
// "queryd" is everything queryd puts in front of a tool, as run wires it
// (httpHandler, newMCPServer): the Origin check, OAuth metadata routing and
// challenge, the API key, queryd/mcphttp, tool metrics, toolnotify, the tool
// budget (in NATS KV on a real nats-server, as with -nats-url) and mcp-go's
// recovery. "mcp-go" is server.NewStreamableHTTPServer on an MCPServer with
// the same tool and nothing else. Each call is a tools/call of protocol
// 2026-07-28 (no session: version, client and capabilities in _meta, method
// and tool in headers) or of 2025-11-25 in a session opened once. "direct"
// hands each request to the server's http.Handler in this process, as
// net/http does once it has read a request off a connection: the servers'
// own cost. "loopback" sends it with net/http's client over 127.0.0.1: what
// a client in this process waits for, the HTTP stack of both ends included.
// cpu-ns/op is the process's CPU time per call (GC included).
// BenchmarkMCPCallRatio makes the same calls in pairs.

const benchKey = "bench-key-0123456789"

const call2026 = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"noop","arguments":{},"_meta":{` +
	`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"bench-agent","version":"1"},` +
	`"io.modelcontextprotocol/clientCapabilities":{}}}}`

const callSession = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"noop","arguments":{}}}`

// noop is the tool both servers serve.
func addNoop(s *server.MCPServer) {
	s.AddTool(mcp.NewToolWithRawSchema("noop", "does nothing", []byte(`{"type":"object","properties":{}}`)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("ok"), nil
		})
}

// benchQueryd is queryd's HTTP handler, as run builds it, with the no-op
// tool counted by the budget (with a budget no run of the benchmark spends).
func benchQueryd(b *testing.B) http.Handler {
	b.Helper()
	var cfg Config
	fs := flag.NewFlagSet("queryd", flag.ContinueOnError)
	cfg.RegisterFlags(fs)
	if err := fs.Parse([]string{"-api-keys", benchKey + "=*|*", "-tool-budget", "1000000000"}); err != nil {
		b.Fatal(err)
	}
	nc, js, err := pipeline.Connect(serverstest.NATS(b), "bench", nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(nc.Close)
	counter, err := budget.OpenKV(context.Background(), js, 1, time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	reg := metrics.New()
	s := newMCPServer(&cfg, reg, counter, func(string) string { return "knowledge" }, slog.New(slog.DiscardHandler))
	addNoop(s)
	keys, err := auth.ParseKeys(cfg.APIKeys)
	if err != nil {
		b.Fatal(err)
	}
	h, err := cfg.httpHandler(context.Background(), s, keys, reg, func(context.Context) error { return nil })
	if err != nil {
		b.Fatal(err)
	}
	return h
}

// benchPlain is mcp-go's StreamableHTTPServer serving the no-op tool.
func benchPlain() http.Handler {
	s := server.NewMCPServer("strata", "bench", server.WithToolCapabilities(false))
	addNoop(s)
	return server.NewStreamableHTTPServer(s)
}

// caller sends one request and returns the answer's status, header and body.
type caller func(header http.Header, body string) (int, http.Header, []byte)

// directCaller hands requests to h in this process, as arriving on a
// loopback connection to 127.0.0.1:8090 (so DNS rebinding protection runs).
func directCaller(h http.Handler) caller {
	u, _ := url.Parse("http://127.0.0.1:8090/mcp")
	ctx := context.WithValue(context.Background(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8090})
	w := &recorder{header: http.Header{}}
	return func(header http.Header, body string) (int, http.Header, []byte) {
		r := (&http.Request{Method: http.MethodPost, URL: u, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Host: u.Host, RemoteAddr: "127.0.0.1:50000",
			Header: header.Clone(), Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)), RequestURI: u.Path}).WithContext(ctx)
		w.reset()
		h.ServeHTTP(w, r)
		return w.code, w.header, w.body.Bytes()
	}
}

// recorder is a reusable http.ResponseWriter that can stream.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (w *recorder) reset() {
	clear(w.header)
	w.code = 0
	w.body.Reset()
}
func (w *recorder) Header() http.Header { return w.header }
func (w *recorder) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}
func (w *recorder) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(p)
}
func (w *recorder) Flush() {}

// loopbackCaller sends requests to h served on 127.0.0.1 with net/http.
func loopbackCaller(b *testing.B, h http.Handler) caller {
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	c := srv.Client()
	var buf bytes.Buffer
	return func(header http.Header, body string) (int, http.Header, []byte) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(body))
		req.Header = header.Clone()
		resp, err := c.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		buf.Reset()
		_, _ = buf.ReadFrom(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, resp.Header, buf.Bytes()
	}
}

func baseHeader(authorized bool) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	if authorized {
		h.Set("Authorization", "Bearer "+benchKey)
	}
	return h
}

// header2026 is what a 2026-07-28 client sends with the no-op call.
func header2026(authorized bool) http.Header {
	h := baseHeader(authorized)
	h.Set(mcp.HeaderProtocolVersion, "2026-07-28")
	h.Set(mcp.HeaderMethod, "tools/call")
	h.Set(mcp.HeaderName, "noop")
	return h
}

// openSession initializes a 2025-11-25 session and returns the header its
// calls carry.
func openSession(b *testing.B, call caller, authorized bool) http.Header {
	b.Helper()
	h := baseHeader(authorized)
	code, answer, body := call(h, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench-agent","version":"1"}}}`)
	id := answer.Get("Mcp-Session-Id")
	if code != http.StatusOK || id == "" {
		b.Fatalf("initialize: %d %s", code, body)
	}
	h.Set(mcp.HeaderProtocolVersion, "2025-11-25")
	h.Set("Mcp-Session-Id", id)
	if code, _, body := call(h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != http.StatusAccepted {
		b.Fatalf("notifications/initialized: %d %s", code, body)
	}
	return h
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// measure runs call in b's loop, checking every answer, and reports the
// process's CPU time per call.
func measure(b *testing.B, call caller, header http.Header, body string) {
	b.Helper()
	if code, _, out := call(header, body); code != http.StatusOK || !bytes.Contains(out, []byte(`"text":"ok"`)) {
		b.Fatalf("%d %s", code, out)
	}
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		if code, _, _ := call(header, body); code != http.StatusOK {
			b.Fatalf("HTTP %d", code)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
}

// BenchmarkMCPCall measures one no-op tool call through queryd and through
// mcp-go's plain StreamableHTTPServer, by protocol and by how the call is
// made. Compare queryd's ns/op to mcp-go's in the same run.
func BenchmarkMCPCall(b *testing.B) {
	queryd, plain := benchQueryd(b), benchPlain()
	for _, via := range []string{"direct", "loopback"} {
		callers := map[string]caller{}
		for name, h := range map[string]http.Handler{"queryd": queryd, "mcp-go": plain} {
			if via == "direct" {
				callers[name] = directCaller(h)
			} else {
				callers[name] = loopbackCaller(b, h)
			}
		}
		for _, server := range []string{"mcp-go", "queryd"} {
			call, authorized := callers[server], server == "queryd"
			b.Run(via+"/2026-07-28/"+server, func(b *testing.B) { measure(b, call, header2026(authorized), call2026) })
			session := openSession(b, call, authorized)
			b.Run(via+"/2025-11-25-session/"+server, func(b *testing.B) { measure(b, call, session, callSession) })
		}
	}
}

// BenchmarkMCPCallRatio makes the calls of BenchmarkMCPCall in pairs, one
// through queryd and one through mcp-go (in turn first), and reports the
// median of each and their ratio: a measure that load on the machine, which
// moves whole benchmark rows, moves much less. (Garbage one server leaves
// may be collected during the other's call: mcp-go's, the larger, makes
// queryd's ratio look worse, not better.)
func BenchmarkMCPCallRatio(b *testing.B) {
	queryd, plain := benchQueryd(b), benchPlain()
	for _, via := range []string{"direct", "loopback"} {
		var q, p caller
		if via == "direct" {
			q, p = directCaller(queryd), directCaller(plain)
		} else {
			q, p = loopbackCaller(b, queryd), loopbackCaller(b, plain)
		}
		for _, era := range []string{"2026-07-28", "2025-11-25-session"} {
			var qh, ph http.Header
			var body string
			if era == "2026-07-28" {
				qh, ph, body = header2026(true), header2026(false), call2026
			} else {
				qh, ph, body = openSession(b, q, true), openSession(b, p, false), callSession
			}
			b.Run(via+"/"+era, func(b *testing.B) { pairs(b, q, qh, p, ph, body) })
		}
	}
}

// pairs times calls of q and p in turn and reports their medians.
func pairs(b *testing.B, q caller, qh http.Header, p caller, ph http.Header, body string) {
	var qd, pd []time.Duration
	one := func(call caller, h http.Header) time.Duration {
		start := time.Now()
		if code, _, _ := call(h, body); code != http.StatusOK {
			b.Fatalf("HTTP %d", code)
		}
		return time.Since(start)
	}
	i := 0
	for b.Loop() {
		if i%2 == 0 {
			qd = append(qd, one(q, qh))
			pd = append(pd, one(p, ph))
		} else {
			pd = append(pd, one(p, ph))
			qd = append(qd, one(q, qh))
		}
		i++
	}
	mq, mp := median(qd), median(pd)
	b.ReportMetric(float64(mq.Nanoseconds()), "queryd-ns/call")
	b.ReportMetric(float64(mp.Nanoseconds()), "mcp-go-ns/call")
	b.ReportMetric(float64(mq)/float64(mp), "queryd/mcp-go")
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
