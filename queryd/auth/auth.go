// Package auth maps bearer API keys to the projects they may read.
package auth

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/strata-kb/strata/shared/objkey"
)

// AllProjects in a key's project list grants every project.
const AllProjects = "*"

// Principal is an authenticated caller.
type Principal struct {
	KeyName  string // a non-secret label for logs: the key's hash prefix
	projects []string
}

// CanRead reports whether the principal may read project.
func (p Principal) CanRead(project string) bool {
	return slices.Contains(p.projects, AllProjects) || slices.Contains(p.projects, project)
}

// AllowsAll reports whether the principal reads every project.
func (p Principal) AllowsAll() bool { return slices.Contains(p.projects, AllProjects) }

// Projects returns the explicitly granted projects (empty when AllowsAll).
func (p Principal) Projects() []string {
	return slices.DeleteFunc(slices.Clone(p.projects), func(s string) bool { return s == AllProjects })
}

// Keys is a set of API keys.
type Keys struct {
	byHash map[[32]byte]Principal
}

// ParseKeys parses "key1=acme,beta;key2=*": semicolon-separated entries of a
// key and the comma-separated projects it may read.
func ParseKeys(spec string) (*Keys, error) {
	k := &Keys{byHash: map[[32]byte]Principal{}}
	for i, entry := range strings.Split(spec, ";") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		key, projects, ok := strings.Cut(entry, "=")
		key = strings.TrimSpace(key)
		if !ok || len(key) < 16 {
			return nil, fmt.Errorf("api key entry %d: want <key>=<project>[,<project>...] with a key of at least 16 characters", i+1)
		}
		var ps []string
		for _, p := range strings.Split(projects, ",") {
			p = strings.TrimSpace(p)
			if p != AllProjects && !objkey.ValidProject(p) {
				return nil, fmt.Errorf("api key entry %d: invalid project %q", i+1, p)
			}
			ps = append(ps, p)
		}
		h := sha256.Sum256([]byte(key))
		k.byHash[h] = Principal{KeyName: fmt.Sprintf("key-%x", h[:4]), projects: ps}
	}
	if len(k.byHash) == 0 {
		return nil, fmt.Errorf("no API keys configured")
	}
	return k, nil
}

// Lookup returns the principal of key. Keys are looked up by their SHA-256,
// so lookup time reveals nothing about how much of a key matched.
func (k *Keys) Lookup(key string) (Principal, bool) {
	p, ok := k.byHash[sha256.Sum256([]byte(key))]
	return p, ok
}

type ctxKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// FromContext returns the principal in ctx.
func FromContext(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(ctxKey{}).(Principal)
	return p, ok
}

// Middleware refuses requests without a valid bearer key and passes the
// principal on in the request context.
func (k *Keys) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		p, found := k.Lookup(strings.TrimSpace(token))
		if !ok || !found {
			w.Header().Set("WWW-Authenticate", `Bearer realm="strata"`)
			http.Error(w, "missing or invalid API key: send Authorization: Bearer <key>", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r.WithContext(WithPrincipal(r.Context(), p)))
	})
}
