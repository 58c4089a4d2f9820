package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// testKey is the API key startQueryd configures (project acme).
const testKey = "origin-test-key-0001"

// startQueryd runs queryd in this process against a stand-in Weaviate that
// answers {} to everything (ready, empty), with extra flags, and returns its
// address once it listens.
func startQueryd(t *testing.T, extra ...string) string {
	t.Helper()
	weaviate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("{}")) }))
	t.Cleanup(weaviate.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"-addr", addr, "-api-keys", testKey + "=acme", "-cursor-secret", "0123456789abcdef0123",
			"-embedding-provider", "none", "-weaviate-host", strings.TrimPrefix(weaviate.URL, "http://"), "-log-level", "error"}, extra...))
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("queryd: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Error("queryd did not stop within 15 s")
		}
	})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		select {
		case err := <-done:
			t.Fatalf("queryd stopped before serving: %v", err)
		default:
		}
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr
		}
		if time.Now().After(deadline) {
			t.Fatal("queryd did not listen within 10 s")
		}
	}
}

// TestOriginValidatedOnEveryEndpoint runs queryd itself (against a stand-in
// Weaviate that only says it is ready) and sends raw HTTP requests: a foreign Origin gets 403
// on every endpoint, a request without Origin is served, loopback origins
// pass because queryd listens on loopback, and a -cors-origins entry passes.
func TestOriginValidatedOnEveryEndpoint(t *testing.T) {
	addr := startQueryd(t, "-cors-origins", "https://app.example.com", "-pprof")
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	endpoints := []struct{ method, path, body string }{
		{"POST", "/mcp", initialize},
		{"GET", "/metrics", ""},
		{"GET", "/healthz", ""},
		{"GET", "/readyz", ""},
		{"GET", "/.well-known/oauth-protected-resource", ""},
		{"GET", "/.well-known/oauth-protected-resource/mcp", ""},
		{"GET", "/debug/pprof/", ""},
		{"GET", "/debug/pprof/trace?seconds=0.01", ""},
	}
	for _, e := range endpoints {
		for _, c := range []struct {
			origin    string
			forbidden bool
		}{
			{"", false},
			{"http://evil.example.com", true},
			{"null", true},
			{"http://localhost:6274", false},
			{"http://127.0.0.1:3000", false},
			{"https://app.example.com", false},
		} {
			code, body := rawRequest(t, addr, e.method, e.path, c.origin, e.body)
			if (code == http.StatusForbidden) != c.forbidden {
				t.Errorf("%s %s with Origin %q: %d, want forbidden=%v: %s", e.method, e.path, c.origin, code, c.forbidden, body)
			}
			if !c.forbidden && (e.path == "/mcp" || strings.HasPrefix(e.path, "/debug/pprof/")) && code != http.StatusOK {
				t.Errorf("%s %s with Origin %q: %d: %s", e.method, e.path, c.origin, code, body)
			}
		}
	}
}

// rawRequest writes one HTTP/1.1 request by hand, as a non-browser client
// or a page's browser would send it, and returns the status and body.
func rawRequest(t *testing.T, addr, method, path, origin, body string) (int, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\nAuthorization: Bearer %s\r\n", method, path, addr, testKey)
	if origin != "" {
		fmt.Fprintf(&b, "Origin: %s\r\n", origin)
	}
	if body != "" {
		fmt.Fprintf(&b, "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n", len(body))
	}
	b.WriteString("\r\n" + body)
	if _, err := conn.Write([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var out strings.Builder
	_, _ = bufio.NewReader(resp.Body).WriteTo(&out)
	return resp.StatusCode, out.String()
}
