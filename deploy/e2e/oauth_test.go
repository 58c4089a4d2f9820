package e2e

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/strata-kb/strata/deploy/localstack"
)

// testIssuer is an OAuth authorization server played by the test: RFC 8414
// metadata, a JWKS, and a token endpoint for the client_credentials grant
// that issues RS256 JWTs for the requested resource, with the client's
// projects in strata_projects. It is not a real OAuth server (none builds
// from the module proxy with a projects claim); its keys are made here.
type testIssuer struct {
	srv     *httptest.Server
	key     *rsa.PrivateKey
	clients map[string][2]string // client id -> secret, projects
}

func newTestIssuer(t *testing.T, clients map[string][2]string) *testIssuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	is := &testIssuer{key: key, clients: clients}
	b64 := base64.RawURLEncoding.EncodeToString
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		// authorization_endpoint is required by RFC 8414 (and the SDK's
		// schema) though the client_credentials grant never uses it.
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": is.srv.URL, "token_endpoint": is.srv.URL + "/token",
			"authorization_endpoint": is.srv.URL + "/authorize",
			"jwks_uri":               is.srv.URL + "/jwks", "grant_types_supported": []string{"client_credentials"},
			"token_endpoint_auth_methods_supported": []string{"client_secret_basic"}, "response_types_supported": []string{"code"}})
	})
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{{"kty": "RSA", "kid": "k1", "use": "sig", "alg": "RS256",
			"n": b64(key.PublicKey.N.Bytes()), "e": b64(big.NewInt(int64(key.PublicKey.E)).Bytes())}}})
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		id, secret, _ := r.BasicAuth()
		c, ok := is.clients[id]
		if !ok || c[0] != secret || r.FormValue("grant_type") != "client_credentials" || r.FormValue("resource") == "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":"invalid_client"}`))
			return
		}
		token := is.sign(map[string]any{"iss": is.srv.URL, "sub": id, "aud": r.FormValue("resource"),
			"exp": time.Now().Add(5 * time.Minute).Unix(), "strata_projects": c[1]})
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": token, "token_type": "Bearer", "expires_in": 300})
	})
	is.srv = httptest.NewServer(mux)
	t.Cleanup(is.srv.Close)
	return is
}

func (is *testIssuer) sign(claims map[string]any) string {
	b64 := base64.RawURLEncoding.EncodeToString
	h, _ := json.Marshal(map[string]string{"alg": "RS256", "kid": "k1", "typ": "at+jwt"})
	c, _ := json.Marshal(claims)
	signed := b64(h) + "." + b64(c)
	sum := sha256.Sum256([]byte(signed))
	sig, _ := rsa.SignPKCS1v15(rand.Reader, is.key, crypto.SHA256, sum[:])
	return signed + "." + b64(sig)
}

// TestOAuthClientCredentials: the TypeScript SDK, given only client
// credentials, is refused, follows resource_metadata to the issuer, gets a
// token for queryd and reads the projects its token grants, no others.
func TestOAuthClientCredentials(t *testing.T) {
	tsClient(t)
	is := newTestIssuer(t, map[string][2]string{"agent-acme": {"acme-secret", "acme"}, "agent-beta": {"beta-secret", "beta"}})
	ports, err := localstack.FreePorts()
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/mcp", ports.Queryd)
	st := upWith(t, t.TempDir(), &ports, false, map[string][]string{"queryd": {"STRATA_OAUTH_ISSUER=" + is.srv.URL, "STRATA_PUBLIC_URL=" + url}})
	t.Cleanup(func() {
		st.Stop(15 * time.Second)
		dumpLogsOnFailure(t, st)
	})
	h := harnessFor(t, st) // API keys still work
	h.put("acme/oauth.md", "# OAuth\n\nthe oauthword paragraph\n")
	h.settle()

	search := []map[string]any{{"op": "call", "name": "search_keyword", "arguments": map[string]any{"query": "oauthword"}}}
	acme := runTS(t, tsPlan{URL: url, OAuth: map[string]string{"clientId": "agent-acme", "clientSecret": "acme-secret", "expectedIssuer": is.srv.URL}, Steps: search})
	if acme.ConnectError != "" {
		t.Fatalf("OAuth client: %s", acme.ConnectError)
	}
	if c := acme.calls(t, 0)[0]; c.IsError || !strings.Contains(c.Text, "the oauthword paragraph") {
		t.Fatalf("token for acme reads acme: %+v", c)
	}
	beta := runTS(t, tsPlan{URL: url, OAuth: map[string]string{"clientId": "agent-beta", "clientSecret": "beta-secret", "expectedIssuer": is.srv.URL}, Steps: search})
	if c := beta.calls(t, 0)[0]; beta.ConnectError != "" || !strings.Contains(c.Text, `"results":[]`) {
		t.Fatalf("token for beta must not read acme: %s %+v", beta.ConnectError, c)
	}
	wrong := runTS(t, tsPlan{URL: url, OAuth: map[string]string{"clientId": "agent-acme", "clientSecret": "wrong", "expectedIssuer": is.srv.URL}, Steps: search})
	if wrong.ConnectError == "" {
		t.Fatal("bad client credentials must not connect")
	}
	forged := is.sign(map[string]any{"iss": is.srv.URL, "sub": "x", "aud": "https://elsewhere.example/mcp", "exp": time.Now().Add(time.Minute).Unix(), "strata_projects": "*"})
	r := runTS(t, tsPlan{URL: url, Headers: map[string]string{"Authorization": "Bearer " + forged}, Steps: search})
	if !strings.Contains(r.ConnectError, "invalid token: token not issued for "+url) {
		t.Fatalf("a token for another resource must be refused: %+v", r)
	}
	d := runTS(t, tsPlan{URL: url, Steps: []map[string]any{{"op": "discover"}}})
	var disc struct{ WellKnown map[string]any }
	d.step(t, 0, &disc)
	if servers, _ := disc.WellKnown["authorization_servers"].([]any); len(servers) != 1 || servers[0] != is.srv.URL {
		t.Fatalf("metadata names the issuer: %+v", disc.WellKnown)
	}
}
