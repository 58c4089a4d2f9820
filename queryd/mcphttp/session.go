package mcphttp

import (
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// streamableSession is what mcp-go's streamable HTTP sessions are (its
// unexported streamableHttpSession): a call in a session is served with the
// session's state only when the registered session is one.
type streamableSession interface {
	server.SessionWithLogging
	server.SessionWithClientInfo
	server.SessionWithTools
	server.SessionWithResources
	server.SessionWithResourceTemplates
	server.SessionWithSampling
	server.SessionWithRoots
	server.SessionWithElicitation
	server.SessionWithStreamableHTTPConfig
	ProtocolVersion() string
}

// sessionCall is one call in a session mcp-go registered (protocols before
// 2026-07-28). Like the registered session mcp-go's POST handler serves the
// call with, it reads and changes the session's state (log level, client
// info, the session's tools); unlike it, it has a notification channel of
// its own, so that what the call sends goes out on the call's response and
// not on whatever stream of the session takes it first.
type sessionCall struct {
	streamableSession
	registered *registered
	events     eventStream
}

// registered is a session mcp-go registered in this process.
type registered struct {
	streamableSession
	// sse is set once a call of the session sent a notification: like the
	// registered session mcp-go keeps, every later answer in the session is
	// then an event stream.
	sse atomic.Bool
}

func newSessionCall(r *registered) *sessionCall {
	c := &sessionCall{streamableSession: r.streamableSession, registered: r}
	c.events.sticky = &r.sse
	return c
}

func (s *sessionCall) stream() *eventStream { return &s.events }
func (s *sessionCall) NotificationChannel() chan<- mcp.JSONRPCNotification {
	return s.events.channel()
}

// UpgradeToSSEWhenReceiveNotification upgrades this call's answer, and the
// session's later ones, as mcp-go's session does (the registered session
// is told too, for the requests mcp-go serves).
func (s *sessionCall) UpgradeToSSEWhenReceiveNotification() {
	s.registered.sse.Store(true)
	s.streamableSession.UpgradeToSSEWhenReceiveNotification()
	s.events.upgrade()
}

// DeliversQueued tells toolnotify that a queued notification is never
// dropped when the call returns.
func (s *sessionCall) DeliversQueued() bool { return true }

var (
	_ streamableSession = (*sessionCall)(nil)
	_ callSession       = (*sessionCall)(nil)
	_ callSession       = (*modernSession)(nil)
)
