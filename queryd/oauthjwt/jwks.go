package oauthjwt

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"time"
)

// jwk is one key of a JWK Set (RFC 7517), the fields verification needs.
type jwk struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	N   string `json:"n"`
	E   string `json:"e"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

// publicKey decodes k; keys of other types or uses are skipped (nil, nil).
func (k jwk) publicKey() (crypto.PublicKey, error) {
	if k.Use != "" && k.Use != "sig" {
		return nil, nil
	}
	b := func(s string) ([]byte, error) { return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "=")) }
	switch k.Kty {
	case "RSA":
		n, err1 := b(k.N)
		e, err2 := b(k.E)
		if err := errors.Join(err1, err2); err != nil || len(e) > 4 {
			return nil, fmt.Errorf("rsa key %q: bad n or e", k.Kid)
		}
		return &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}, nil
	case "EC":
		var curve elliptic.Curve
		switch k.Crv {
		case "P-256":
			curve = elliptic.P256()
		case "P-384":
			curve = elliptic.P384()
		default:
			return nil, nil
		}
		x, err1 := b(k.X)
		y, err2 := b(k.Y)
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("ec key %q: bad x or y", k.Kid)
		}
		pub := &ecdsa.PublicKey{Curve: curve, X: new(big.Int).SetBytes(x), Y: new(big.Int).SetBytes(y)}
		if !curve.IsOnCurve(pub.X, pub.Y) {
			return nil, fmt.Errorf("ec key %q: point not on curve", k.Kid)
		}
		return pub, nil
	case "OKP":
		x, err := b(k.X)
		if k.Crv != "Ed25519" || err != nil || len(x) != ed25519.PublicKeySize {
			return nil, nil
		}
		return ed25519.PublicKey(x), nil
	}
	return nil, nil
}

// keySet fetches and caches the issuer's JWKS. An unknown kid refetches,
// at most every minRefresh, so a key rotation is picked up at once and a
// flood of forged kids cannot hammer the issuer.
type keySet struct {
	url        string
	client     *http.Client
	minRefresh time.Duration

	mu      sync.Mutex
	keys    map[string]crypto.PublicKey // by kid ("" for keys without one)
	fetched time.Time
}

func (s *keySet) key(ctx context.Context, kid string) (crypto.PublicKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.keys[kid]
	stale := time.Since(s.fetched) > maxKeyAge // a key the issuer withdrew stops working
	if ok && !stale {
		return k, nil
	}
	if time.Since(s.fetched) < s.minRefresh {
		return nil, fmt.Errorf("no key %q in the issuer's JWKS", kid)
	}
	keys, err := s.fetch(ctx)
	s.fetched = time.Now()
	if err != nil {
		if ok { // the issuer is unreachable: keep verifying with the keys it last published
			return k, nil
		}
		return nil, err
	}
	s.keys = keys
	if k, ok := keys[kid]; ok {
		return k, nil
	}
	return nil, fmt.Errorf("no key %q in the issuer's JWKS", kid)
}

// maxKeyAge is how long fetched keys are trusted before the JWKS is read again.
const maxKeyAge = time.Hour

func (s *keySet) fetch(ctx context.Context) (map[string]crypto.PublicKey, error) {
	var set struct{ Keys []jwk }
	if err := getJSON(ctx, s.client, s.url, &set); err != nil {
		return nil, fmt.Errorf("jwks: %w", err)
	}
	keys := map[string]crypto.PublicKey{}
	for _, k := range set.Keys {
		pub, err := k.publicKey()
		if err != nil {
			return nil, fmt.Errorf("jwks %s: %w", s.url, err)
		}
		if pub != nil {
			keys[k.Kid] = pub
		}
	}
	return keys, nil
}

// getJSON reads a small JSON document.
func getJSON(ctx context.Context, c *http.Client, url string, into any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("get %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("get %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(into); err != nil {
		return fmt.Errorf("decode %s: %w", url, err)
	}
	return nil
}

// discoverJWKS finds the issuer's jwks_uri in its authorization server
// metadata (RFC 8414), or else its OpenID configuration.
func discoverJWKS(ctx context.Context, c *http.Client, issuer string) (string, error) {
	base := strings.TrimSuffix(issuer, "/")
	var errs []error
	for _, u := range []string{base + "/.well-known/oauth-authorization-server", base + "/.well-known/openid-configuration"} {
		var meta struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if err := getJSON(ctx, c, u, &meta); err != nil {
			errs = append(errs, err)
			continue
		}
		if strings.TrimSuffix(meta.Issuer, "/") != base || meta.JWKSURI == "" {
			errs = append(errs, fmt.Errorf("%s: issuer %q or jwks_uri missing", u, meta.Issuer))
			continue
		}
		return meta.JWKSURI, nil
	}
	return "", fmt.Errorf("discover jwks of %s: %w", issuer, errors.Join(errs...))
}
