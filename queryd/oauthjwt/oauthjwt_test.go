package oauthjwt

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-kb/strata/queryd/auth"
)

// issuer is an OAuth issuer played by the test: its metadata and JWKS over
// HTTP, and its keys to sign tokens with. (No OAuth server is built here:
// the tokens are signed by keys made in the test.)
type issuer struct {
	srv *httptest.Server
	rsa *rsa.PrivateKey
	ec  *ecdsa.PrivateKey
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func newIssuer(t *testing.T) *issuer {
	t.Helper()
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	ek, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	is := &issuer{rsa: rk, ec: ek}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": is.srv.URL, "jwks_uri": is.srv.URL + "/jwks"})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, _ *http.Request) {
		ex, ey := ek.PublicKey.X.FillBytes(make([]byte, 32)), ek.PublicKey.Y.FillBytes(make([]byte, 32))
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{
			{"kty": "RSA", "kid": "r1", "use": "sig", "n": b64(is.rsa.PublicKey.N.Bytes()), "e": b64(big.NewInt(int64(is.rsa.PublicKey.E)).Bytes())},
			{"kty": "EC", "kid": "e1", "crv": "P-256", "x": b64(ex), "y": b64(ey)},
		}})
	})
	is.srv = httptest.NewServer(mux)
	t.Cleanup(is.srv.Close)
	return is
}

func (is *issuer) sign(t *testing.T, alg, kid string, claims map[string]any) string {
	t.Helper()
	h, _ := json.Marshal(map[string]string{"alg": alg, "kid": kid, "typ": "at+jwt"})
	c, _ := json.Marshal(claims)
	signed := b64(h) + "." + b64(c)
	sum := sha256.Sum256([]byte(signed))
	var sig []byte
	switch alg {
	case "RS256":
		sig, _ = rsa.SignPKCS1v15(rand.Reader, is.rsa, crypto.SHA256, sum[:])
	case "ES256":
		r, s, _ := ecdsa.Sign(rand.Reader, is.ec, sum[:])
		sig = append(r.FillBytes(make([]byte, 32)), s.FillBytes(make([]byte, 32))...)
	}
	return signed + "." + b64(sig)
}

const audience = "https://strata.example.com/mcp"

func TestVerify(t *testing.T) {
	is := newIssuer(t)
	v, err := New(context.Background(), Config{Issuer: is.srv.URL, Audience: audience})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Unix()
	good := func() map[string]any {
		return map[string]any{"iss": is.srv.URL, "sub": "agent-7", "aud": []string{audience}, "exp": now + 300, "strata_projects": []string{"acme"}}
	}
	with := func(k string, val any) map[string]any { c := good(); c[k] = val; return c }
	for _, alg := range []string{"RS256", "ES256"} {
		kid := map[string]string{"RS256": "r1", "ES256": "e1"}[alg]
		p, err := v.Verify(context.Background(), is.sign(t, alg, kid, good()))
		if err != nil || !p.CanRead("acme") || p.CanRead("beta") {
			t.Fatalf("%s: %v %+v", alg, err, p)
		}
	}
	p, err := v.Verify(context.Background(), is.sign(t, "RS256", "r1", with("strata_projects", "acme beta")))
	if err != nil || !p.CanRead("beta") {
		t.Fatalf("space-separated projects: %v", err)
	}
	tampered := strings.Split(is.sign(t, "RS256", "r1", good()), ".")
	tampered[1] = b64([]byte(`{"iss":"` + is.srv.URL + `","sub":"x","aud":"` + audience + `","exp":9999999999,"strata_projects":"*"}`))
	for name, token := range map[string]string{
		"wrong audience":   is.sign(t, "RS256", "r1", with("aud", "https://other.example/mcp")),
		"expired":          is.sign(t, "RS256", "r1", with("exp", now-600)),
		"not yet valid":    is.sign(t, "RS256", "r1", with("nbf", now+600)),
		"other issuer":     is.sign(t, "RS256", "r1", with("iss", "https://evil.example")),
		"no projects":      is.sign(t, "RS256", "r1", with("strata_projects", nil)),
		"invalid project":  is.sign(t, "RS256", "r1", with("strata_projects", []string{"../x"})),
		"unknown kid":      is.sign(t, "RS256", "r9", good()),
		"alg of other key": strings.Replace(is.sign(t, "ES256", "e1", good()), b64([]byte(`{"alg":"ES256"`)), b64([]byte(`{"alg":"RS256"`)), 1),
		"tampered claims":  strings.Join(tampered, "."),
		"alg none":         b64([]byte(`{"alg":"none","kid":"r1"}`)) + "." + tampered[1] + ".",
		"HS256":            b64([]byte(`{"alg":"HS256","kid":"r1"}`)) + "." + tampered[1] + "." + b64([]byte("sig")),
	} {
		if _, err := v.Verify(context.Background(), token); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestAuthenticate(t *testing.T) {
	is := newIssuer(t)
	v, err := New(context.Background(), Config{Issuer: is.srv.URL, Audience: audience})
	if err != nil {
		t.Fatal(err)
	}
	keys, _ := auth.ParseKeys("api-key-0123456789ab=beta")
	h := v.Authenticate(keys.Middleware)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := auth.FromContext(r.Context())
		_, _ = w.Write([]byte(map[bool]string{true: "acme", false: "not acme"}[p.CanRead("acme")]))
	}))
	call := func(token string) (int, string) {
		r := httptest.NewRequest("POST", "/mcp", nil)
		r.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code, w.Body.String()
	}
	token := is.sign(t, "RS256", "r1", map[string]any{"iss": is.srv.URL, "sub": "agent", "aud": audience, "exp": time.Now().Unix() + 60, "strata_projects": "acme"})
	if code, body := call(token); code != 200 || body != "acme" {
		t.Fatalf("jwt: %d %s", code, body)
	}
	if code, body := call("api-key-0123456789ab"); code != 200 || body != "not acme" {
		t.Fatalf("api key: %d %s", code, body)
	}
	if code, _ := call(token[:len(token)-4] + "AAAA"); code != 401 {
		t.Fatalf("bad signature: %d", code)
	}
}

// TestWithdrawnKey: once the keys are older than maxKeyAge, a key the
// issuer no longer publishes stops verifying.
func TestWithdrawnKey(t *testing.T) {
	is := newIssuer(t)
	v, err := New(context.Background(), Config{Issuer: is.srv.URL, Audience: audience})
	if err != nil {
		t.Fatal(err)
	}
	token := is.sign(t, "RS256", "r1", map[string]any{"iss": is.srv.URL, "sub": "a", "aud": audience, "exp": time.Now().Unix() + 60, "strata_projects": "acme"})
	if _, err := v.Verify(context.Background(), token); err != nil {
		t.Fatal(err)
	}
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	is.rsa = other // the issuer rotates: r1 is now another key
	v.keys.fetched = time.Now().Add(-maxKeyAge - time.Minute)
	if _, err := v.Verify(context.Background(), token); err == nil {
		t.Fatal("a token of a withdrawn key verified after the keys were refreshed")
	}
}

// TestGroupsClaim: the groups claim is an array or a space- or
// comma-separated string, a token without it has no groups, "*" alone is
// an admin, and an invalid group name refuses the token saying why.
func TestGroupsClaim(t *testing.T) {
	is := newIssuer(t)
	token := func(claim string, groups any) string {
		c := map[string]any{"iss": is.srv.URL, "sub": "agent-7", "aud": audience, "exp": time.Now().Unix() + 60, "strata_projects": "acme"}
		if groups != nil {
			c[claim] = groups
		}
		return is.sign(t, "RS256", "r1", c)
	}
	v, err := New(context.Background(), Config{Issuer: is.srv.URL, Audience: audience})
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		groups any
		want   []string
		admin  bool
	}{
		"array":           {[]string{"hr", "finance"}, []string{"finance", "hr"}, false},
		"space-separated": {"hr finance", []string{"finance", "hr"}, false},
		"comma-separated": {"hr,finance, legal", []string{"finance", "hr", "legal"}, false},
		"missing":         {nil, nil, false},
		"empty array":     {[]string{}, nil, false},
		"all":             {"*", nil, true},
	} {
		p, err := v.Verify(context.Background(), token("strata_groups", tc.groups))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got := p.Groups(); !slices.Equal(got, tc.want) || p.Admin() != tc.admin || !p.CanRead("acme") {
			t.Errorf("%s: groups %q admin %v, want %q admin %v", name, got, p.Admin(), tc.want, tc.admin)
		}
	}
	for name, tc := range map[string]struct {
		groups any
		want   string
	}{
		"upper case":     {[]string{"HR"}, `claim strata_groups: invalid group "HR"`},
		"bad character":  {"hr fin*ance", `claim strata_groups: invalid group "fin*ance"`},
		"too long":       {strings.Repeat("g", 65), "claim strata_groups: invalid group"},
		"not strings":    {[]any{"hr", 7}, "claim strata_groups: want group names"},
		"not a list":     {42, "claim strata_groups: want an array of group names or a string"},
		"star and group": {[]string{"*", "hr"}, "claim strata_groups: * (all groups) stands alone"},
		"empty name":     {[]string{"hr", ""}, `claim strata_groups: invalid group ""`},
	} {
		_, err := v.Verify(context.Background(), token("strata_groups", tc.groups))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", name, err, tc.want)
		}
	}
	// Another claim name: strata_groups is then an ordinary claim, ignored.
	v, err = New(context.Background(), Config{Issuer: is.srv.URL, Audience: audience, GroupsClaim: "roles"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := v.Verify(context.Background(), token("roles", []string{"hr"}))
	if err != nil || !slices.Equal(p.Groups(), []string{"hr"}) {
		t.Fatalf("claim roles: %v %q", err, p.Groups())
	}
	if p, err := v.Verify(context.Background(), token("strata_groups", []string{"hr"})); err != nil || len(p.Groups()) != 0 {
		t.Fatalf("strata_groups with -oauth-groups-claim roles: %v %q", err, p.Groups())
	}
}

// TestPrincipalName: a subject keeps one principal name across tokens (it
// names the tool budget run) and two subjects get two.
func TestPrincipalName(t *testing.T) {
	a, b := principal("https://iss", "alice", []string{"acme"}, nil), principal("https://iss", "alice", []string{"beta"}, []string{"hr"})
	c := principal("https://iss", "bob", []string{"acme"}, nil)
	if a.KeyName != b.KeyName || a.KeyName == c.KeyName || !strings.HasPrefix(a.KeyName, "jwt-") || len(a.KeyName) != 20 || strings.Contains(a.KeyName, "alice") {
		t.Fatalf("names %q %q %q", a.KeyName, b.KeyName, c.KeyName)
	}
}
