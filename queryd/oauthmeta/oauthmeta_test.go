package oauthmeta

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// refuse is an authenticator that answers 401 with its own challenge, as
// queryd/auth does.
var refuse = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="strata"`)
	http.Error(w, "no key", http.StatusUnauthorized)
})

func TestChallengeNamesMetadata(t *testing.T) {
	c := Config{EndpointPath: "/mcp"}
	mux := http.NewServeMux()
	c.Register(mux)
	mux.Handle("/mcp", c.Challenge(refuse))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	resp, err := http.Post(srv.URL+"/mcp", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	want := `Bearer realm="strata", resource_metadata="` + srv.URL + `/.well-known/oauth-protected-resource/mcp"`
	if got := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != 401 || got != want {
		t.Fatalf("challenge %d %q, want %q", resp.StatusCode, got, want)
	}
	for _, p := range []string{WellKnown, WellKnown + "/mcp"} {
		resp, err := http.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		var m metadata
		err = json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		if err != nil || m.Resource != srv.URL+"/mcp" || m.BearerMethodsSupported[0] != "header" || resp.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("%s: %+v %v", p, m, err)
		}
	}
}

func TestConfiguredResource(t *testing.T) {
	c := Config{Resource: "https://strata.example.com/mcp", EndpointPath: "/mcp", AuthorizationServers: []string{"https://auth.example.com"}}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "http://127.0.0.1:8090"+WellKnown, nil)
	w := httptest.NewRecorder()
	c.Handler().ServeHTTP(w, r)
	var m metadata
	if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil || m.Resource != c.Resource || m.AuthorizationServers[0] != "https://auth.example.com" {
		t.Fatalf("%s %v", w.Body, err)
	}
	if got := c.MetadataURL(r); got != "https://strata.example.com/.well-known/oauth-protected-resource/mcp" {
		t.Fatal(got)
	}
	fwd := httptest.NewRequest("GET", "http://10.0.0.5:8090/mcp", nil)
	fwd.Header.Set("X-Forwarded-Proto", "https")
	fwd.Header.Set("X-Forwarded-Host", "kb.example.com")
	if got := (Config{EndpointPath: "/mcp"}).MetadataURL(fwd); got != "https://kb.example.com/.well-known/oauth-protected-resource/mcp" {
		t.Fatal(got)
	}
	if (Config{Resource: "/mcp"}).Validate() == nil {
		t.Fatal("a relative resource is not a resource")
	}
}

func TestChallengeKeepsStreaming(t *testing.T) {
	var w http.ResponseWriter = &challengeWriter{ResponseWriter: httptest.NewRecorder()}
	if _, ok := w.(http.Flusher); !ok {
		t.Fatal("SSE needs Flush")
	}
}
