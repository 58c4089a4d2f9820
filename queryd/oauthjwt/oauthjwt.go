// Package oauthjwt accepts OAuth access tokens, as JWTs signed by one
// configured issuer, besides queryd's API keys: the token is checked
// against the issuer's published keys (JWKS), its audience must be this
// server (RFC 8707 resource indicators, as the MCP authorization spec asks),
// a claim lists the projects it may read and another the groups it reads
// them with (package access).
//
// Verification uses the standard library only (RS256/384/512, PS256,
// ES256/384, EdDSA); "none" and HMAC algorithms are refused, so a token
// cannot pick a key of its own.
package oauthjwt

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	_ "crypto/sha512" // registers crypto.SHA384 and SHA512 for RS384/RS512/ES384
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/shared/access"
	"github.com/strata-kb/strata/shared/objkey"
)

// Config names the issuer and how its tokens map to projects.
type Config struct {
	Issuer   string // the iss every token must carry
	JWKSURL  string // the issuer's keys; "" = discovered from its metadata
	Audience string // the aud every token must include: the MCP endpoint's URL
	// ProjectsClaim lists the projects a token may read: an array of
	// project names or one space- or comma-separated string; "*" is every
	// project.
	ProjectsClaim string
	// GroupsClaim lists the groups a token reads its projects with: an
	// array of group names or one space- or comma-separated string; "*"
	// alone reads every document. A token without it has no groups: it reads
	// only documents without groups.
	GroupsClaim string
	Leeway      time.Duration // clock skew allowed on exp and nbf
	Client      *http.Client  // nil: a client with a 10 s timeout
}

// Verifier checks tokens.
type Verifier struct {
	cfg  Config
	keys *keySet
	now  func() time.Time
}

// New returns a verifier; the JWKS is fetched on first use.
func New(ctx context.Context, cfg Config) (*Verifier, error) {
	if cfg.Issuer == "" || cfg.Audience == "" {
		return nil, errors.New("oauth tokens need an issuer and an audience (the endpoint's public URL)")
	}
	if cfg.ProjectsClaim == "" {
		cfg.ProjectsClaim = "strata_projects"
	}
	if cfg.GroupsClaim == "" {
		cfg.GroupsClaim = "strata_groups"
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.JWKSURL == "" {
		u, err := discoverJWKS(ctx, cfg.Client, cfg.Issuer)
		if err != nil {
			return nil, err
		}
		cfg.JWKSURL = u
	}
	return &Verifier{cfg: cfg, keys: &keySet{url: cfg.JWKSURL, client: cfg.Client, minRefresh: 30 * time.Second}, now: time.Now}, nil
}

// LooksLikeJWT tells a JWT (three base64url parts) from an API key.
func LooksLikeJWT(token string) bool { return strings.Count(token, ".") == 2 && len(token) > 20 }

// claims are the registered claims checked, plus every other one.
type claims struct {
	Iss string          `json:"iss"`
	Sub string          `json:"sub"`
	Aud json.RawMessage `json:"aud"`
	Exp *float64        `json:"exp"`
	Nbf *float64        `json:"nbf"`
}

// Verify checks token and returns the principal it stands for.
func (v *Verifier) Verify(ctx context.Context, token string) (auth.Principal, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return auth.Principal{}, errors.New("not a JWT")
	}
	var header struct{ Alg, Kid, Typ string }
	if err := decodePart(parts[0], &header); err != nil {
		return auth.Principal{}, fmt.Errorf("jwt header: %w", err)
	}
	key, err := v.keys.key(ctx, header.Kid)
	if err != nil {
		return auth.Principal{}, err
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return auth.Principal{}, errors.New("jwt signature: not base64url")
	}
	if err := verifySignature(header.Alg, key, parts[0]+"."+parts[1], sig); err != nil {
		return auth.Principal{}, err
	}
	var c claims
	var all map[string]any
	if err := errors.Join(decodePart(parts[1], &c), decodePart(parts[1], &all)); err != nil {
		return auth.Principal{}, fmt.Errorf("jwt claims: %w", err)
	}
	now := v.now()
	switch {
	case strings.TrimSuffix(c.Iss, "/") != strings.TrimSuffix(v.cfg.Issuer, "/"):
		return auth.Principal{}, fmt.Errorf("token of issuer %q, not %q", c.Iss, v.cfg.Issuer)
	case !audienceHas(c.Aud, v.cfg.Audience):
		return auth.Principal{}, fmt.Errorf("token not issued for %s (aud)", v.cfg.Audience)
	case c.Exp == nil || now.After(time.Unix(int64(*c.Exp), 0).Add(v.cfg.Leeway)):
		return auth.Principal{}, errors.New("token expired")
	case c.Nbf != nil && now.Add(v.cfg.Leeway).Before(time.Unix(int64(*c.Nbf), 0)):
		return auth.Principal{}, errors.New("token not yet valid")
	case c.Sub == "":
		return auth.Principal{}, errors.New("token without sub")
	}
	projects, err := projectsOf(all[v.cfg.ProjectsClaim])
	if err != nil {
		return auth.Principal{}, fmt.Errorf("claim %s: %w", v.cfg.ProjectsClaim, err)
	}
	groups, err := groupsOf(all[v.cfg.GroupsClaim])
	if err != nil {
		return auth.Principal{}, fmt.Errorf("claim %s: %w", v.cfg.GroupsClaim, err)
	}
	return principal(c.Iss, c.Sub, projects, groups), nil
}

// principal makes the auth.Principal of a token's subject, named by a
// prefix of the hash of issuer and subject: stable across tokens, so it
// names the subject's tool budget run, short in logs and free of personal
// data. 64 bits: subjects do not collide by chance.
func principal(iss, sub string, projects, groups []string) auth.Principal {
	sum := sha256.Sum256([]byte(iss + "\x00" + sub))
	return auth.NewPrincipal("jwt-"+hex.EncodeToString(sum[:8]), projects, groups)
}

func projectsOf(v any) ([]string, error) {
	if v == nil {
		return nil, errors.New("missing: the token grants no project")
	}
	list, err := namesOf(v, "project")
	if err != nil {
		return nil, err
	}
	for _, p := range list {
		if p != auth.AllProjects && !objkey.ValidProject(p) {
			return nil, fmt.Errorf("invalid project %q", p)
		}
	}
	if len(list) == 0 {
		return nil, errors.New("the token grants no project")
	}
	return list, nil
}

// groupsOf reads the groups claim. Missing or empty, the token has no
// groups (documents without groups only): the issuer grants groups, so
// their absence grants nothing beyond the projects. A name that is not a
// valid group refuses the whole token rather than dropping the name, so a
// misconfigured issuer shows up at once instead of as missing documents.
func groupsOf(v any) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	list, err := namesOf(v, "group")
	if err != nil {
		return nil, err
	}
	for _, g := range list {
		if g != auth.AllGroups && !access.ValidGroup(g) {
			if len(g) > 80 { // the error is sent back in the 401: no echo of a huge claim
				g = g[:80] + "..."
			}
			return nil, fmt.Errorf("invalid group %q: want 1-%d characters of a-z 0-9 . _ : @ / + = -, or * (all) alone", g, access.MaxGroupLength)
		}
	}
	if slices.Contains(list, auth.AllGroups) && len(list) > 1 {
		return nil, errors.New("* (all groups) stands alone")
	}
	return list, nil
}

// namesOf reads a claim that lists names (of what: project, group): an
// array of strings, or one string of names separated by spaces or commas.
func namesOf(v any, what string) ([]string, error) {
	switch v := v.(type) {
	case string:
		return strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == ',' }), nil
	case []any:
		var list []string
		for _, n := range v {
			s, ok := n.(string)
			if !ok {
				return nil, fmt.Errorf("want %s names", what)
			}
			list = append(list, s)
		}
		return list, nil
	}
	return nil, fmt.Errorf("want an array of %s names or a string", what)
}

func audienceHas(raw json.RawMessage, want string) bool {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return one == want
	}
	var many []string
	return json.Unmarshal(raw, &many) == nil && slices.Contains(many, want)
}

func decodePart(part string, into any) error {
	b, err := base64.RawURLEncoding.DecodeString(part)
	if err != nil {
		return errors.New("not base64url")
	}
	return json.Unmarshal(b, into)
}

// verifySignature checks a JWS signature (RFC 7518 §3) with the key the
// issuer published; the algorithm must fit the key's type.
func verifySignature(alg string, key crypto.PublicKey, signed string, sig []byte) error {
	hashOf := func(h crypto.Hash) []byte {
		w := h.New()
		w.Write([]byte(signed))
		return w.Sum(nil)
	}
	bad := fmt.Errorf("jwt signature (%s) does not verify", alg)
	switch k := key.(type) {
	case *rsa.PublicKey:
		h, ok := map[string]crypto.Hash{"RS256": crypto.SHA256, "RS384": crypto.SHA384, "RS512": crypto.SHA512, "PS256": crypto.SHA256}[alg]
		if !ok {
			return fmt.Errorf("algorithm %q does not fit an RSA key", alg)
		}
		var err error
		if strings.HasPrefix(alg, "PS") {
			err = rsa.VerifyPSS(k, h, hashOf(h), sig, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
		} else {
			err = rsa.VerifyPKCS1v15(k, h, hashOf(h), sig)
		}
		if err != nil {
			return bad
		}
		return nil
	case *ecdsa.PublicKey:
		h, size := crypto.SHA256, 32
		switch {
		case alg == "ES256" && k.Curve.Params().Name == "P-256":
		case alg == "ES384" && k.Curve.Params().Name == "P-384":
			h, size = crypto.SHA384, 48
		default:
			return fmt.Errorf("algorithm %q does not fit an EC key on %s", alg, k.Curve.Params().Name)
		}
		if len(sig) != 2*size {
			return bad
		}
		r, s := new(big.Int).SetBytes(sig[:size]), new(big.Int).SetBytes(sig[size:])
		if !ecdsa.Verify(k, hashOf(h), r, s) {
			return bad
		}
		return nil
	case ed25519.PublicKey:
		if alg != "EdDSA" || !ed25519.Verify(k, []byte(signed), sig) {
			return bad
		}
		return nil
	}
	return fmt.Errorf("unsupported key for %q", alg)
}

// Authenticate returns an authenticator for queryd's endpoint: a bearer
// token that looks like a JWT is verified here, anything else goes to keys
// (API keys). A refused token answers 401 (the challenge middleware adds
// where to find the metadata).
func (v *Verifier) Authenticate(keys func(http.Handler) http.Handler) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		byKey := keys(next)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if token = strings.TrimSpace(token); !ok || !LooksLikeJWT(token) {
				byKey.ServeHTTP(w, r)
				return
			}
			p, err := v.Verify(r.Context(), token)
			if err != nil {
				w.Header().Set("WWW-Authenticate", `Bearer realm="strata", error="invalid_token"`)
				http.Error(w, "invalid token: "+err.Error(), http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r.WithContext(auth.WithPrincipal(r.Context(), p)))
		})
	}
}
