// Package mcphttp serves an mcp-go MCPServer over streamable HTTP, as
// mcp-go's StreamableHTTPServer does, with tool calls taken on a shorter
// path.
//
// mcp-go v1.2.1's StreamableHTTPServer decodes a tools/call body about seven
// times, gives every request an ephemeral session with five channels (one of
// them a 100-notification buffer, 40% of the bytes a call allocates) and a
// notification goroutine, re-marshals the tool's input schema to look for
// x-mcp-header annotations on every 2026-07-28 call, and encodes the answer
// through a map. Handler reads the body once, makes the transport's checks
// itself and hands the body to MCPServer.HandleMessage, which serves the
// protocol as it does for StreamableHTTPServer: the middlewares, hooks, tool
// lookup and filters, result decoration and errors are mcp-go's. Everything
// else — GET and DELETE, initialize and every other method, notifications,
// responses the client posts, sessions this process did not register, and
// any request one of the checks would refuse or that the single read does
// not read exactly as mcp-go would — goes to a StreamableHTTPServer, which
// answers it (or refuses it) as before. So the fast path only serves what
// mcp-go would have served, and every refusal is mcp-go's own
// (TestSameAnswersAsMCPGo compares the two answer for answer).
//
// The checks the fast path makes before it serves a call, in mcp-go's words:
// DNS rebinding protection (rejectDNSRebinding), Content-Type
// (handlePost), the era of the request (detectRequestEra), on 2026-07-28 the
// transport's checks (validateModernRequest: no Last-Event-ID, the version in
// the header and in _meta, equal and supported) and the standard headers
// (validateStandardHeadersForMessage: Mcp-Method and Mcp-Name against the
// body; a tool that declares x-mcp-header parameters, whose Mcp-Param-*
// headers are checked against the arguments, is left to mcp-go), and before
// 2026-07-28 the version header (rejectUnsupportedProtocolVersion) and the
// session id (StatelessGeneratingSessionIdManager.Validate). HandleMessage
// makes the rest (JSON-RPC version, _meta's client capabilities, the
// protocol version, the tool).
//
// Notifications a call sends (log messages, progress) go out on the call's
// own response as server-sent events, as with mcp-go: the response turns into
// an event stream at the first one, which is written as soon as it is sent.
// Where the fast path differs from mcp-go: a notification sent just as the
// call returns is written, where mcp-go 1.2.1 may drop it; in a session, what
// a call sends goes to the call's response, not to whichever stream of the
// session takes it first, and requests to the client (sampling, elicitation,
// roots) go on the session's GET stream, not on the call's; and the
// CallToolRequest a tool gets has no Header (mcp-go hands the request's
// headers to HandleMessage through a context key of its own). queryd's tools
// send no requests to the client and read no headers.
package mcphttp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Handler is an http.Handler serving an MCPServer over streamable HTTP.
type Handler struct {
	server      *server.MCPServer
	fallback    *server.StreamableHTTPServer
	contextFunc server.HTTPContextFunc
	versions    []string // the protocol versions the transport serves (server/discover)
	allVersions bool     // versions are every version mcp-go implements

	// sessions are the sessions mcp-go registered in this process
	// (initialize, GET streams), by id: a call of one is served with its
	// state (log level, client info), as mcp-go serves it.
	sessions sync.Map // string -> *registered
	// headerTools caches, per tool, whether its input schema declares
	// x-mcp-header parameters (mcp.ExtractParamHeaderBindings re-marshals
	// the whole schema to find out).
	headerTools sync.Map // string -> headerTool

	enc encoder

	onServe func() // tests: told of every call the fast path serves
}

// New returns a handler serving s. contextFunc (may be nil) adds to a
// request's context what the tools need, as server.WithHTTPContextFunc.
// It adds session hooks to s's hooks (creating them if s has none), so call
// it before serving.
func New(s *server.MCPServer, contextFunc server.HTTPContextFunc) *Handler {
	h := &Handler{server: s, contextFunc: contextFunc}
	var opts []server.StreamableHTTPOption
	if contextFunc != nil {
		opts = append(opts, server.WithHTTPContextFunc(contextFunc))
	}
	h.fallback = server.NewStreamableHTTPServer(s, opts...)
	h.versions = server.FilterSupportedVersions(h.fallback)
	h.allVersions = slices.Equal(h.versions, mcp.ValidProtocolVersions)
	hooks := s.GetHooks()
	if hooks == nil {
		hooks = &server.Hooks{}
		server.WithHooks(hooks)(s)
	}
	hooks.AddOnRegisterSession(func(_ context.Context, cs server.ClientSession) {
		if s, ok := cs.(streamableSession); ok {
			h.sessions.Store(cs.SessionID(), &registered{streamableSession: s})
		}
	})
	hooks.AddOnUnregisterSession(func(_ context.Context, cs server.ClientSession) {
		if v, ok := h.sessions.Load(cs.SessionID()); ok && v.(*registered).streamableSession == cs {
			h.sessions.CompareAndDelete(cs.SessionID(), v)
		}
	})
	return h
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.Body == nil || !jsonContent(header(r.Header, "Content-Type")) {
		h.fallback.ServeHTTP(w, r)
		return
	}
	body, err := readBody(r)
	if err != nil {
		// mcp-go reads the body again and answers the read error itself.
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
		h.fallback.ServeHTTP(w, r)
		return
	}
	if !h.serveCall(w, r, body) {
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.fallback.ServeHTTP(w, r)
	}
}

// readBody reads the whole body, in one allocation when its length is known.
func readBody(r *http.Request) ([]byte, error) {
	if n := r.ContentLength; n > 0 && n <= 1<<20 {
		b := make([]byte, n+1)
		read, err := io.ReadFull(r.Body, b)
		switch {
		case err == io.ErrUnexpectedEOF && int64(read) == n:
			return b[:read], nil
		case err != nil:
			return b[:read], err
		}
		rest, err := io.ReadAll(r.Body) // longer than announced
		return append(b, rest...), err
	}
	return io.ReadAll(r.Body)
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// jsonContent reports whether a Content-Type is application/json, as
// handlePost decides it.
func jsonContent(ct string) bool {
	if ct == "application/json" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

// serveCall serves a tools/call that passes every check of the transport,
// and reports false, having written nothing, for any other request.
func (h *Handler) serveCall(w http.ResponseWriter, r *http.Request, body []byte) bool {
	call, ok := parseCall(body)
	if !ok || call.method != string(mcp.MethodToolsCall) || call.name == "" {
		return false
	}
	if dnsRebinding(r) {
		return false
	}
	headerVersion := header(r.Header, mcp.HeaderProtocolVersion)
	var session callSession
	if mcp.IsModernProtocol(call.metaVersion) || mcp.IsModernProtocol(headerVersion) {
		if !h.modernCallValid(r, call, headerVersion) {
			return false
		}
		session = &modernSession{}
	} else {
		if headerVersion != "" && !mcp.IsValidProtocolVersion(headerVersion) {
			return false
		}
		registered := h.registeredSession(header(r.Header, server.HeaderKeySessionID))
		if registered == nil {
			return false
		}
		session = newSessionCall(registered)
	}
	if h.onServe != nil {
		h.onServe()
	}
	h.serve(w, r, body, session, mcp.IsModernProtocol(call.metaVersion))
	return true
}

// modernCallValid makes the checks of validateModernRequest and
// validateStandardHeadersForMessage on a 2026-07-28 tools/call.
func (h *Handler) modernCallValid(r *http.Request, call parsedCall, headerVersion string) bool {
	if r.Header.Get(mcp.HeaderLastEventID) != "" || headerVersion == "" || call.metaVersion == "" ||
		headerVersion != call.metaVersion || !h.fallback.SupportsProtocolVersion(call.metaVersion) {
		return false
	}
	if header(r.Header, mcp.HeaderMethod) != call.method {
		return false
	}
	name, ok := mcp.DecodeHeaderValue(header(r.Header, mcp.HeaderName))
	if !ok || name == "" || name != call.name {
		return false
	}
	// Mcp-Param-* headers bind x-mcp-header arguments; a tool that declares
	// any is left to mcp-go, which checks them against the arguments.
	return !h.declaresHeaders(call.name)
}

// header is h.Get(key) for a key in canonical form, as the names of MCP's
// headers are (TestCanonicalHeaders), without canonicalizing it again.
func header(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// headerTool is a tool's input schema (identified by its bytes) and whether
// it declares x-mcp-header parameters.
type headerTool struct {
	schema   *byte
	size     int
	declares bool
}

// declaresHeaders reports whether the named tool's input schema declares
// x-mcp-header parameters; true also when the tool is unknown or its schema
// is not raw JSON, so that mcp-go answers the call.
func (h *Handler) declaresHeaders(name string) bool {
	tool := h.server.GetTool(name)
	if tool == nil || len(tool.Tool.RawInputSchema) == 0 {
		return true
	}
	raw := tool.Tool.RawInputSchema
	if v, ok := h.headerTools.Load(name); ok {
		if c := v.(headerTool); c.schema == unsafe.SliceData(raw) && c.size == len(raw) {
			return c.declares
		}
	}
	declares := len(mcp.ExtractParamHeaderBindings(&tool.Tool)) > 0
	h.headerTools.Store(name, headerTool{schema: unsafe.SliceData(raw), size: len(raw), declares: declares})
	return declares
}

// registeredSession is the session mcp-go registered under id, when id is a
// session id mcp-go issues (StatelessGeneratingSessionIdManager.Validate).
func (h *Handler) registeredSession(id string) *registered {
	rest, ok := strings.CutPrefix(id, sessionIDPrefix)
	if !ok {
		return nil
	}
	if _, err := uuid.Parse(rest); err != nil {
		return nil
	}
	v, ok := h.sessions.Load(id)
	if !ok {
		return nil
	}
	return v.(*registered)
}

// sessionIDPrefix starts the session ids mcp-go issues.
const sessionIDPrefix = "mcp-session-"

// dnsRebinding reports a request that came in on a loopback address with a
// Host that is not loopback (mcp-go's DNS rebinding protection).
func dnsRebinding(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil {
		return false
	}
	var loopback bool
	if tcp, ok := local.(*net.TCPAddr); ok && tcp.Zone == "" {
		loopback = tcp.IP.IsLoopback() // what isLoopbackHost(local.String()) says, without the string
	} else {
		loopback = isLoopbackHost(local.String())
	}
	return loopback && !isLoopbackHost(r.Host)
}

// isLoopbackHost is mcp-go's: a host or host:port on loopback.
func isLoopbackHost(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// serve hands the call to the MCP server and writes its answer, after the
// notifications it sent.
func (h *Handler) serve(w http.ResponseWriter, r *http.Request, body []byte, session callSession, modern bool) {
	out := session.stream()
	out.w, out.enc = w, &h.enc
	out.flusher, _ = w.(http.Flusher)
	ctx := h.server.WithContext(r.Context(), session)
	if !h.allVersions {
		ctx = server.WithSupportedProtocolVersions(ctx, h.versions)
	} // else what SupportedProtocolVersionsFromContext says without it
	if h.contextFunc != nil {
		ctx = h.contextFunc(ctx, r)
	}
	resp := h.server.HandleMessage(ctx, body)
	out.finish()
	if resp == nil {
		if !out.upgraded {
			w.WriteHeader(http.StatusAccepted)
		}
		return
	}
	if ctx.Err() != nil {
		return // the client is gone
	}
	if out.upgraded || (out.wantsSSE() && out.flusher != nil) {
		out.event(resp)
		return
	}
	b, err := h.enc.encode(resp)
	if err != nil {
		b, _ = json.Marshal(mcp.NewJSONRPCError(mcp.NewRequestId(nil), mcp.INTERNAL_ERROR, "encode response: "+err.Error(), nil))
	}
	status := http.StatusOK
	if e, ok := resp.(mcp.JSONRPCError); ok && modern {
		status = httpStatusForJSONRPCError(e.Error.Code)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// httpStatusForJSONRPCError is mcp-go's mapping of JSON-RPC errors onto HTTP
// statuses for protocol 2026-07-28.
func httpStatusForJSONRPCError(code int) int {
	switch code {
	case mcp.METHOD_NOT_FOUND:
		return http.StatusNotFound
	case mcp.HEADER_MISMATCH, mcp.MISSING_REQUIRED_CLIENT_CAPABILITY, mcp.UNSUPPORTED_PROTOCOL_VERSION,
		mcp.INVALID_REQUEST, mcp.INVALID_PARAMS, mcp.PARSE_ERROR:
		return http.StatusBadRequest
	default:
		return http.StatusOK
	}
}

// eventStream carries the notifications of one call to its response. The
// channel and the goroutine that writes them are made at the first
// notification; a call without any costs neither.
type eventStream struct {
	w       http.ResponseWriter
	flusher http.Flusher
	enc     *encoder

	mu       sync.Mutex
	ch       chan mcp.JSONRPCNotification // nil until the first notification
	done     chan struct{}
	exited   chan struct{}
	finished bool         // the call returned: later notifications are dropped
	want     bool         // a notification was sent (UpgradeToSSEWhenReceiveNotification)
	sticky   *atomic.Bool // the session's answers are event streams (nil: none)

	upgraded bool // the response is an event stream (written only by the writer goroutine, then by serve)
}

// notificationBuffer is how many notifications may wait to be written, as mcp-go's.
const notificationBuffer = 100

// channel is the notification channel, made (with its writer) on first use.
func (s *eventStream) channel() chan<- mcp.JSONRPCNotification {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ch
}

// upgrade is called before every notification is queued.
func (s *eventStream) upgrade() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.want = true
	if s.finished || s.ch != nil {
		return
	}
	s.ch = make(chan mcp.JSONRPCNotification, notificationBuffer)
	if s.flusher == nil {
		return // cannot stream: what is queued is dropped, as mcp-go does
	}
	s.done, s.exited = make(chan struct{}), make(chan struct{})
	go s.forward()
}

func (s *eventStream) wantsSSE() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.want || (s.sticky != nil && s.sticky.Load())
}

// forward writes notifications as they come until the call returns.
func (s *eventStream) forward() {
	defer close(s.exited)
	for {
		select {
		case n := <-s.ch:
			s.event(n)
		case <-s.done:
			return
		}
	}
}

// finish stops the writer and writes what is still queued; after it, the
// response is serve's alone.
func (s *eventStream) finish() {
	s.mu.Lock()
	s.finished = true
	ch, done := s.ch, s.done
	s.mu.Unlock()
	if done == nil {
		return
	}
	close(done)
	<-s.exited
	for {
		select {
		case n := <-ch:
			s.event(n)
		default:
			return
		}
	}
}

// event writes one message as a server-sent event, turning the response into
// an event stream first.
func (s *eventStream) event(msg any) {
	if !s.upgraded {
		h := s.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Connection", "keep-alive")
		h.Set("Cache-Control", "no-cache")
		s.w.WriteHeader(http.StatusOK)
		s.upgraded = true
	}
	data, err := s.enc.encode(msg)
	if err != nil {
		return
	}
	_, _ = fmt.Fprintf(s.w, "event: message\ndata: %s\n\n", data)
	if s.flusher != nil {
		s.flusher.Flush()
	}
}

// callSession is the session a call is served in.
type callSession interface {
	server.ClientSession
	stream() *eventStream
}

// modernSession is the session of a 2026-07-28 call, which has none: like
// mcp-go's ephemeral session, it has no id, is initialized, and holds the
// client info and capabilities HandleMessage copies from _meta.
type modernSession struct {
	events eventStream
	mu     sync.Mutex
	info   mcp.Implementation
	caps   mcp.ClientCapabilities
}

var (
	_ server.SessionWithClientInfo           = (*modernSession)(nil)
	_ server.SessionWithStreamableHTTPConfig = (*modernSession)(nil)
)

func (s *modernSession) stream() *eventStream { return &s.events }
func (s *modernSession) Initialize()          {}
func (s *modernSession) Initialized() bool    { return true }
func (s *modernSession) SessionID() string    { return "" }
func (s *modernSession) NotificationChannel() chan<- mcp.JSONRPCNotification {
	return s.events.channel()
}
func (s *modernSession) UpgradeToSSEWhenReceiveNotification() { s.events.upgrade() }

// DeliversQueued tells toolnotify that a queued notification is never
// dropped when the call returns.
func (s *modernSession) DeliversQueued() bool { return true }

func (s *modernSession) GetClientInfo() mcp.Implementation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.info
}

func (s *modernSession) SetClientInfo(info mcp.Implementation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.info = info
}

func (s *modernSession) GetClientCapabilities() mcp.ClientCapabilities {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps
}

func (s *modernSession) SetClientCapabilities(caps mcp.ClientCapabilities) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.caps = caps
}
