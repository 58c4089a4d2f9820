// Package oauthmeta tells OAuth-capable MCP clients how to authenticate to
// queryd: OAuth 2.0 Protected Resource Metadata (RFC 9728) at
// /.well-known/oauth-protected-resource, and on every 401 a challenge
// `WWW-Authenticate: Bearer resource_metadata="..."` pointing at it, as the
// MCP authorization spec (2025-06-18 on) asks. A client that finds no
// authorization server in the metadata knows to use an API key.
package oauthmeta

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// WellKnown is the metadata path of RFC 9728 §3.
const WellKnown = "/.well-known/oauth-protected-resource"

// Config is what the metadata says.
type Config struct {
	// Resource is the MCP endpoint's public URL (https://strata.example.com/mcp).
	// Empty: each answer derives it from the request (Host, and
	// X-Forwarded-Proto/-Host from a proxy), right for local use; set it
	// behind proxies that rewrite neither.
	Resource string
	// EndpointPath is the MCP endpoint's path ("/mcp"), used when Resource is empty.
	EndpointPath string
	// AuthorizationServers are the issuers whose tokens queryd accepts (empty:
	// API keys only).
	AuthorizationServers []string
	// Scopes are the scopes clients should ask for.
	Scopes []string
}

// Validate checks the configured URLs.
func (c Config) Validate() error {
	if c.Resource != "" {
		if u, err := url.Parse(c.Resource); err != nil || !u.IsAbs() || u.Host == "" || u.Fragment != "" {
			return fmt.Errorf("resource %q: want the MCP endpoint's absolute URL, e.g. https://strata.example.com/mcp", c.Resource)
		}
	}
	for _, s := range c.AuthorizationServers {
		if u, err := url.Parse(s); err != nil || !u.IsAbs() || u.Host == "" {
			return fmt.Errorf("authorization server %q: want an issuer URL, e.g. https://auth.example.com", s)
		}
	}
	return nil
}

// metadata is RFC 9728 §2's document (the fields queryd fills).
type metadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers,omitempty"`
	ScopesSupported        []string `json:"scopes_supported,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name"`
}

// Paths are where the metadata is served: the bare well-known path, and the
// one RFC 9728 §3.1 derives for a resource with a path (.../mcp), which
// clients of 2025-11-25 try first.
func (c Config) Paths() []string {
	p := c.EndpointPath
	if c.Resource != "" {
		u, _ := url.Parse(c.Resource)
		p = u.Path
	}
	if p = strings.Trim(p, "/"); p == "" {
		return []string{WellKnown}
	}
	return []string{WellKnown, WellKnown + "/" + p}
}

// Register serves the metadata on mux at Paths.
func (c Config) Register(mux *http.ServeMux) {
	for _, p := range c.Paths() {
		mux.Handle(p, c.Handler())
	}
}

// Handler serves the metadata. It is public (no key) and readable from any
// origin: it only names how to authenticate.
func (c Config) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		switch r.Method {
		case http.MethodGet, http.MethodHead:
		case http.MethodOptions:
			w.Header().Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
			w.Header().Set("Access-Control-Allow-Headers", "mcp-protocol-version")
			w.WriteHeader(http.StatusNoContent)
			return
		default:
			w.Header().Set("Allow", "GET, HEAD, OPTIONS")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		body, err := json.Marshal(metadata{Resource: c.resource(r), AuthorizationServers: c.AuthorizationServers,
			ScopesSupported: c.Scopes, BearerMethodsSupported: []string{"header"}, ResourceName: "Strata"})
		if err != nil {
			http.Error(w, "encode metadata: "+err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store") // derived per request; keys may rotate to OAuth
		if r.Method == http.MethodGet {
			_, _ = w.Write(body)
		}
	})
}

// MetadataURL is the URL the challenge names: the path-specific one.
func (c Config) MetadataURL(r *http.Request) string {
	paths := c.Paths()
	return c.origin(r) + paths[len(paths)-1]
}

// resource is the configured resource or the one this request reached.
func (c Config) resource(r *http.Request) string {
	if c.Resource != "" {
		return c.Resource
	}
	return c.origin(r) + c.EndpointPath
}

// origin is scheme://host of the configured resource or of the request.
func (c Config) origin(r *http.Request) string {
	if c.Resource != "" {
		u, _ := url.Parse(c.Resource)
		return u.Scheme + "://" + u.Host
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if p := r.Header.Get("X-Forwarded-Proto"); p == "http" || p == "https" {
		scheme = p
	}
	host := r.Host
	if h := r.Header.Get("X-Forwarded-Host"); h != "" && !strings.ContainsAny(h, "/\"\\ ,") {
		host = h
	}
	return scheme + "://" + host
}

// Challenge makes every 401 below it name the metadata: whatever
// WWW-Authenticate the authenticator set is replaced by
// `Bearer realm="strata", resource_metadata="<url>"`, with
// error="invalid_token" when the request did send a token (RFC 6750 §3.1).
func (c Config) Challenge(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&challengeWriter{ResponseWriter: w, challenge: func() string { return c.challenge(r) }}, r)
	})
}

// challenge is the WWW-Authenticate value of a 401 to r.
func (c Config) challenge(r *http.Request) string {
	v := fmt.Sprintf(`Bearer realm="strata", resource_metadata=%q`, c.MetadataURL(r))
	if r.Header.Get("Authorization") != "" {
		v += `, error="invalid_token"`
	}
	return v
}

// challengeWriter sets the challenge when the status written is 401 (made
// only then: most answers are not).
type challengeWriter struct {
	http.ResponseWriter
	challenge func() string
	wrote     bool
}

func (w *challengeWriter) WriteHeader(code int) {
	if !w.wrote && code == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", w.challenge())
	}
	w.wrote = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *challengeWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

// Flush keeps server-sent event streams flowing through the wrapper.
func (w *challengeWriter) Flush() {
	w.wrote = true
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (w *challengeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
