package auth

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestParseKeysAndAccess(t *testing.T) {
	k, err := ParseKeys("acme-key-0123456789=acme ; all-key-0123456789=*")
	if err != nil {
		t.Fatal(err)
	}
	p, ok := k.Lookup("acme-key-0123456789")
	if !ok || !p.CanRead("acme") || p.CanRead("beta") || p.AllowsAll() {
		t.Fatalf("acme key: %+v %v", p, ok)
	}
	p, ok = k.Lookup("all-key-0123456789")
	if !ok || !p.CanRead("beta") || !p.AllowsAll() {
		t.Fatalf("all key: %+v", p)
	}
	if _, ok := k.Lookup("acme-key-012345678"); ok {
		t.Fatal("a prefix of a key must not match")
	}
}

func TestParseKeysRejects(t *testing.T) {
	for _, spec := range []string{"", "short=acme", "nokeyseparator0123456789", "k-0123456789abcdef=bad project", "k-0123456789abcdef=../x"} {
		if _, err := ParseKeys(spec); err == nil {
			t.Errorf("ParseKeys(%q) accepted", spec)
		}
	}
}

func TestMiddleware(t *testing.T) {
	k, _ := ParseKeys("acme-key-0123456789=acme")
	h := k.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := FromContext(r.Context())
		if !p.CanRead("acme") {
			t.Error("principal not passed on")
		}
	}))
	for header, want := range map[string]int{
		"":                           http.StatusUnauthorized,
		"Bearer wrong-key-000000000": http.StatusUnauthorized,
		"Basic acme-key-0123456789":  http.StatusUnauthorized,
		"Bearer acme-key-0123456789": http.StatusOK,
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		if header != "" {
			req.Header.Set("Authorization", header)
		}
		h.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("%q: status %d, want %d", header, rec.Code, want)
		}
	}
}
