// Package auth maps bearer API keys to the projects they may read and the
// groups they read them with (package access).
package auth

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/strata-kb/strata/shared/access"
	"github.com/strata-kb/strata/shared/objkey"
)

// AllProjects in a key's project list grants every project.
const AllProjects = "*"

// AllGroups as a key's groups makes it an admin of its projects: it reads
// every document, whatever its groups.
const AllGroups = "*"

// Principal is an authenticated caller.
type Principal struct {
	KeyName  string // a non-secret label for logs: the key's hash prefix
	projects []string
	groups   []string // sorted; nil: reads only documents without groups
	admin    bool
}

// NewPrincipal returns the principal named name that reads projects (or
// AllProjects) with groups (AllGroups: every document).
func NewPrincipal(name string, projects, groups []string) Principal {
	p := Principal{KeyName: name, projects: slices.Clone(projects)}
	for _, g := range groups {
		if g == AllGroups {
			p.admin = true
			continue
		}
		p.groups = append(p.groups, g)
	}
	slices.Sort(p.groups)
	p.groups = slices.Compact(p.groups)
	return p
}

// Grant is what the principal may read within a project it can read.
func (p Principal) Grant() access.Grant {
	return access.Grant{Admin: p.admin, Groups: p.groups}
}

// Admin reports whether the principal reads every document of its projects.
func (p Principal) Admin() bool { return p.admin }

// Groups returns the principal's groups (not AllGroups).
func (p Principal) Groups() []string { return slices.Clone(p.groups) }

// ParseGroups parses a comma-separated group list: valid group names
// (access.ValidGroup) or AllGroups alone.
func ParseGroups(spec string) ([]string, error) {
	var out []string
	for _, g := range strings.Split(spec, ",") {
		g = strings.TrimSpace(g)
		if g == "" {
			continue
		}
		if g != AllGroups && !access.ValidGroup(g) {
			return nil, fmt.Errorf("invalid group %q: want 1-%d characters of a-z 0-9 . _ : @ / + = -, or * (all)", g, access.MaxGroupLength)
		}
		out = append(out, g)
	}
	if slices.Contains(out, AllGroups) && len(out) > 1 {
		return nil, fmt.Errorf("groups %q: * (all groups) stands alone", spec)
	}
	return out, nil
}

// ParseProjects parses a comma-separated project list: project names or AllProjects.
func ParseProjects(spec string) ([]string, error) {
	var ps []string
	for _, p := range strings.Split(spec, ",") {
		p = strings.TrimSpace(p)
		if p != AllProjects && !objkey.ValidProject(p) {
			return nil, fmt.Errorf("invalid project %q", p)
		}
		ps = append(ps, p)
	}
	return ps, nil
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

// ParseKeys parses "k1=acme,beta|hr,finance;k2=*|*": semicolon-separated
// entries of a key, the comma-separated projects it may read and, after |,
// the comma-separated groups it reads them with (* for all: an admin). A
// key without |GROUPS has no groups: it reads only documents without groups.
func ParseKeys(spec string) (*Keys, error) {
	k := &Keys{byHash: map[[32]byte]Principal{}}
	for i, entry := range strings.Split(spec, ";") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		key, grant, ok := strings.Cut(entry, "=")
		key = strings.TrimSpace(key)
		if !ok || len(key) < 16 {
			return nil, fmt.Errorf("api key entry %d: want <key>=<project>[,<project>...][|<group>[,<group>...]] with a key of at least 16 characters", i+1)
		}
		projects, groupSpec, _ := strings.Cut(grant, "|")
		ps, err := ParseProjects(projects)
		if err != nil {
			return nil, fmt.Errorf("api key entry %d: %w", i+1, err)
		}
		groups, err := ParseGroups(groupSpec)
		if err != nil {
			return nil, fmt.Errorf("api key entry %d: %w", i+1, err)
		}
		h := sha256.Sum256([]byte(key))
		k.byHash[h] = NewPrincipal(fmt.Sprintf("key-%x", h[:4]), ps, groups)
	}
	if len(k.byHash) == 0 {
		return nil, fmt.Errorf("no API keys configured")
	}
	return k, nil
}

// Lookup returns the principal of key. Keys are looked up by their SHA-256,
// so lookup time reveals nothing about how much of a key matched. A nil
// *Keys (no -api-keys: every key is in the key store) knows no key.
func (k *Keys) Lookup(key string) (Principal, bool) {
	if k == nil {
		return Principal{}, false
	}
	p, ok := k.byHash[sha256.Sum256([]byte(key))]
	return p, ok
}

type ctxKey struct{}

// WithPrincipal returns ctx carrying p, and p's grant, which every index
// read made with ctx is filtered by (access.GrantFrom).
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return access.WithGrant(context.WithValue(ctx, ctxKey{}, p), p.Grant())
}

// FromContext returns the principal in ctx.
func FromContext(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(ctxKey{}).(Principal)
	return p, ok
}

// KeyLookup finds the principal of a bearer API key: the keys of
// -api-keys (*Keys), those of the key store (*KeyStore), or both (Lookups).
type KeyLookup interface {
	Lookup(key string) (Principal, bool)
}

// Middleware refuses requests without a bearer key keys knows and passes
// the principal on in the request context. keys is asked on every request,
// so a key withdrawn from it is refused from the next request on.
func Middleware(keys KeyLookup) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			p, found := keys.Lookup(strings.TrimSpace(token))
			if !ok || !found {
				w.Header().Set("WWW-Authenticate", `Bearer realm="strata"`)
				http.Error(w, "missing or invalid API key: send Authorization: Bearer <key>", http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r.WithContext(WithPrincipal(r.Context(), p)))
		})
	}
}

// Middleware is Middleware(k).
func (k *Keys) Middleware(next http.Handler) http.Handler { return Middleware(k)(next) }
