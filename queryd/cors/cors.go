// Package cors lets browser-based MCP clients (the MCP Inspector in a
// browser, web agents) call queryd, and refuses every other web page.
//
// The MCP transport spec asks servers to validate the Origin header of every
// request (DNS rebinding: a page on any site could otherwise drive a
// browser to a server on localhost). Requests without an Origin come from
// programs, not pages, and pass; a request whose Origin is not allowed is
// refused with 403 before it reaches authentication.
//
// No origin is allowed by default, except that a server listening only on
// loopback (AllowLoopback) also allows pages served from this machine
// (http://localhost:*, http://127.0.0.1:*, http://[::1]:*): they can reach the
// server anyway, and a DNS-rebinding page keeps its foreign origin. "*" allows any page to call without keys
// (enough to read the 401 and discover OAuth metadata); a page of any origin
// that sends keys (an Authorization header or cookies) is refused unless
// AnyWithKeys is set, because "*" with keys lets every web site that obtains
// or guesses a key use it from a visitor's browser. queryd never sets
// Access-Control-Allow-Credentials: keys travel in the Authorization header,
// never in cookies.
package cors

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// Headers a browser client may read from an answer: the session id (protocols
// up to 2025-11-25), the negotiated version and the authentication challenge
// with its resource_metadata (OAuth discovery).
const exposed = "Mcp-Session-Id, Mcp-Protocol-Version, WWW-Authenticate"

// Headers a browser client may send. The 2026-07-28 transport adds Mcp-Method
// and Mcp-Name (and Mcp-Param-* for tool arguments), so a preflight that asks
// for other Mcp-* headers is answered with what it asked for, filtered to
// these and Mcp-*.
var allowedHeaders = []string{"authorization", "content-type", "accept", "last-event-id"}

// Policy is the set of origins allowed to call.
type Policy struct {
	origins     map[string]bool
	any         bool // "*" is in the list
	anyWithKeys bool
	loopback    bool // loopback origins are allowed as if listed
}

// Parse reads a comma-separated list of origins ("https://app.example.com",
// "http://localhost:6274") or "*". anyWithKeys lets "*" also carry keys.
func Parse(list string, anyWithKeys bool) (*Policy, error) {
	p := &Policy{origins: map[string]bool{}, anyWithKeys: anyWithKeys}
	for _, o := range strings.Split(list, ",") {
		o = strings.TrimSpace(o)
		switch {
		case o == "":
		case o == "*":
			p.any = true
		default:
			norm, err := normalize(o)
			if err != nil {
				return nil, err
			}
			p.origins[norm] = true
		}
	}
	if anyWithKeys && !p.any {
		return nil, fmt.Errorf("allowing keys from any origin needs \"*\" in the origins")
	}
	return p, nil
}

// normalize checks that o is an origin (scheme://host[:port], nothing else)
// and lowercases it as browsers send it.
func normalize(o string) (string, error) {
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("origin %q: want scheme://host[:port], e.g. https://app.example.com", o)
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), nil
}

// Enabled reports whether any origin is allowed.
func (p *Policy) Enabled() bool { return p.any || p.loopback || len(p.origins) > 0 }

// AllowLoopback allows every loopback origin (any scheme and port) as if
// listed, when the server's listen address addr (host:port) is itself a
// loopback address or "localhost"; on any other address it changes nothing.
// It returns p.
func (p *Policy) AllowLoopback(addr string) *Policy {
	host, _, err := net.SplitHostPort(addr)
	p.loopback = err == nil && isLoopbackHost(host)
	return p
}

// isLoopbackHost reports whether host (a name or an IP, without brackets) is
// this machine's loopback.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// allowed reports whether a normalized origin is listed or is a loopback
// origin that the policy allows.
func (p *Policy) allowed(norm string) bool {
	if p.origins[norm] {
		return true
	}
	if !p.loopback {
		return false
	}
	u, err := url.Parse(norm)
	return err == nil && isLoopbackHost(u.Hostname())
}

// Middleware answers preflights, refuses requests from origins not allowed,
// and adds the CORS headers to the answers of allowed ones.
func (p *Policy) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" {
			next.ServeHTTP(w, r) // not a browser page
			return
		}
		w.Header().Add("Vary", "Origin")
		preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
		allow, reason := p.decide(origin, sendsKeys(r, preflight))
		if allow == "" {
			http.Error(w, "Forbidden: "+reason, http.StatusForbidden)
			return
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", allow)
		h.Set("Access-Control-Expose-Headers", exposed)
		if !preflight {
			next.ServeHTTP(w, r)
			return
		}
		h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
		if asked := requestedHeaders(r); asked != "" {
			h.Set("Access-Control-Allow-Headers", asked)
		}
		h.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
	})
}

// decide returns the Access-Control-Allow-Origin value for origin, or "" and
// why it is refused.
func (p *Policy) decide(origin string, keys bool) (allow, reason string) {
	norm, err := normalize(origin)
	switch {
	case err == nil && p.allowed(norm):
		return origin, ""
	case p.any && keys && !p.anyWithKeys:
		return "", fmt.Sprintf("origin %s may not send keys: list it in -cors-origins (\"*\" allows only calls without keys)", origin)
	case p.any && keys:
		return origin, "" // keys from any page were explicitly allowed; echo it, as for a listed origin
	case p.any:
		return "*", ""
	default:
		return "", fmt.Sprintf("origin %s is not allowed (-cors-origins)", origin)
	}
}

// sendsKeys reports whether a request carries keys, or a preflight announces
// that the request it precedes will.
func sendsKeys(r *http.Request, preflight bool) bool {
	if !preflight {
		return r.Header.Get("Authorization") != "" || r.Header.Get("Cookie") != ""
	}
	for _, h := range strings.Split(r.Header.Get("Access-Control-Request-Headers"), ",") {
		if strings.EqualFold(strings.TrimSpace(h), "authorization") {
			return true
		}
	}
	return false
}

// requestedHeaders is the preflight's requested headers that queryd reads.
func requestedHeaders(r *http.Request) string {
	var out []string
	for _, h := range strings.Split(r.Header.Get("Access-Control-Request-Headers"), ",") {
		h = strings.ToLower(strings.TrimSpace(h))
		if h == "" {
			continue
		}
		for _, a := range allowedHeaders {
			if h == a {
				out = append(out, h)
			}
		}
		if strings.HasPrefix(h, "mcp-") {
			out = append(out, h)
		}
	}
	return strings.Join(out, ", ")
}
