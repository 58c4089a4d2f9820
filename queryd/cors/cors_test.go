package cors

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

var ok = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Mcp-Session-Id", "s1")
	_, _ = w.Write([]byte("ok"))
})

func serve(t *testing.T, p *Policy, method, origin string, header map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, "/mcp", nil)
	if origin != "" {
		r.Header.Set("Origin", origin)
	}
	for k, v := range header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	p.Middleware(ok).ServeHTTP(w, r)
	return w
}

func TestPolicy(t *testing.T) {
	key := map[string]string{"Authorization": "Bearer k"}
	preflightKey := map[string]string{"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type, mcp-protocol-version, x-evil"}
	preflightPlain := map[string]string{"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"}
	listed, _ := Parse("https://app.example.com, http://localhost:6274", false)
	none, _ := Parse("", false)
	star, _ := Parse("*", false)
	starKeys, _ := Parse("*", true)
	for _, c := range []struct {
		name, method, origin string
		p                    *Policy
		header               map[string]string
		code                 int
		allow                string
	}{
		{"program without Origin", "POST", "", none, key, 200, ""},
		{"no origin allowed by default", "POST", "https://app.example.com", none, key, 403, ""},
		{"listed origin with key", "POST", "https://app.example.com", listed, key, 200, "https://app.example.com"},
		{"listed origin, other case", "POST", "HTTP://LOCALHOST:6274", listed, key, 200, "HTTP://LOCALHOST:6274"},
		{"unlisted origin", "POST", "https://evil.example", listed, key, 403, ""},
		{"null origin", "POST", "null", listed, nil, 403, ""},
		{"preflight of a listed origin", "OPTIONS", "https://app.example.com", listed, preflightKey, 204, "https://app.example.com"},
		{"preflight of an unlisted origin", "OPTIONS", "https://evil.example", listed, preflightKey, 403, ""},
		{"star without keys", "POST", "https://any.example", star, nil, 200, "*"},
		{"star refuses keys", "POST", "https://any.example", star, key, 403, ""},
		{"star refuses cookies", "POST", "https://any.example", star, map[string]string{"Cookie": "a=b"}, 403, ""},
		{"star refuses a preflight announcing keys", "OPTIONS", "https://any.example", star, preflightKey, 403, ""},
		{"star answers a preflight without keys", "OPTIONS", "https://any.example", star, preflightPlain, 204, "*"},
		{"star with keys explicitly allowed", "POST", "https://any.example", starKeys, key, 200, "https://any.example"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := serve(t, c.p, c.method, c.origin, c.header)
			if w.Code != c.code || w.Header().Get("Access-Control-Allow-Origin") != c.allow {
				t.Fatalf("got %d allow %q, want %d allow %q: %s", w.Code, w.Header().Get("Access-Control-Allow-Origin"), c.code, c.allow, w.Body)
			}
			if w.Header().Get("Access-Control-Allow-Credentials") != "" {
				t.Fatal("credentials (cookies) are never allowed")
			}
			if c.allow != "" && w.Header().Get("Access-Control-Expose-Headers") == "" {
				t.Fatal("Mcp-Session-Id must be exposed")
			}
		})
	}
	w := serve(t, listed, "OPTIONS", "https://app.example.com", preflightKey)
	if got := w.Header().Get("Access-Control-Allow-Headers"); got != "authorization, content-type, mcp-protocol-version" {
		t.Fatalf("allowed headers %q", got)
	}
}

func TestParse(t *testing.T) {
	for _, bad := range []string{"app.example.com", "https://app.example.com/mcp", "ftp://x", "https://u@x"} {
		if _, err := Parse(bad, false); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := Parse("https://a.example", true); err == nil {
		t.Error("keys from any origin without \"*\" accepted")
	}
	if p, err := Parse("", false); err != nil || p.Enabled() {
		t.Errorf("empty list: %v %v", p, err)
	}
}

func TestLoopbackOriginsWhenListeningOnLoopback(t *testing.T) {
	key := map[string]string{"Authorization": "Bearer k"}
	for _, c := range []struct {
		addr, origin string
		code         int
	}{
		{"127.0.0.1:8090", "http://localhost:6274", 200},
		{"127.0.0.1:8090", "http://127.0.0.1:3000", 200},
		{"[::1]:8090", "http://[::1]:5173", 200},
		{"localhost:8090", "https://127.0.0.2", 200},
		{"127.0.0.1:8090", "http://evil.example.com", 403},
		{"127.0.0.1:8090", "http://localhost.evil.example.com", 403},
		{"127.0.0.1:8090", "http://127.0.0.1.nip.io", 403},
		{"127.0.0.1:8090", "null", 403},
		{"0.0.0.0:8090", "http://localhost:6274", 403}, // reachable from elsewhere: only listed origins
		{":8090", "http://localhost:6274", 403},
		{"10.0.0.5:8090", "http://127.0.0.1:3000", 403},
	} {
		p, _ := Parse("https://app.example.com", false)
		w := serve(t, p.AllowLoopback(c.addr), "POST", c.origin, key)
		if w.Code != c.code {
			t.Errorf("listening on %s, Origin %s: %d, want %d", c.addr, c.origin, w.Code, c.code)
		}
		if c.code == 200 && w.Header().Get("Access-Control-Allow-Origin") != c.origin {
			t.Errorf("listening on %s, Origin %s: allow %q", c.addr, c.origin, w.Header().Get("Access-Control-Allow-Origin"))
		}
	}
	p, _ := Parse("https://app.example.com", false)
	if w := serve(t, p.AllowLoopback("127.0.0.1:8090"), "POST", "https://app.example.com", key); w.Code != 200 {
		t.Errorf("a listed origin must stay allowed with loopback: %d", w.Code)
	}
}
