// Package access holds who may read a document: the groups an object names
// (S3 tag or user metadata "strata-groups") and the readers list the index
// stores on every object of the document, which every read filters by.
//
// Group names are compared exactly: the index keeps readers in a
// field-tokenized property (no splitting, no stopwords, no case folding).
package access

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Name is the S3 object tag and user metadata key that names a document's groups.
const Name = "strata-groups"

// Readers sentinels. Neither is a valid group name, so no key's groups can
// ever match them by accident.
const (
	// Everyone marks a document without groups: every key of its project reads it.
	Everyone = "*"
	// Nobody marks a document whose groups could not be read: only admins read it.
	Nobody = "!"
)

// Limits of a document's groups.
const (
	MaxGroupLength = 64
	MaxGroups      = 64
)

// ValidGroup reports whether g is a group name: 1-64 characters of [a-z0-9._:@/+=-].
func ValidGroup(g string) bool {
	if len(g) == 0 || len(g) > MaxGroupLength {
		return false
	}
	for i := 0; i < len(g); i++ {
		c := g[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case strings.IndexByte("._:@/+=-", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// ParseTag parses the value of the strata-groups object tag: group names
// separated by spaces (MinIO refuses commas in tag values).
func ParseTag(value string) ([]string, error) {
	return parse(value, " ")
}

// ParseMetadata parses the value of x-amz-meta-strata-groups: group names
// separated by spaces or commas.
func ParseMetadata(value string) ([]string, error) {
	return parse(value, " ,")
}

func parse(value, separators string) ([]string, error) {
	fields := strings.FieldsFunc(value, func(r rune) bool { return strings.ContainsRune(separators, r) })
	if len(fields) == 0 {
		return nil, errors.New(Name + " is present but names no group (remove it to make the document readable by the whole project)")
	}
	for _, g := range fields {
		if !ValidGroup(g) {
			return nil, fmt.Errorf("%s: invalid group %q: want 1-%d characters of a-z 0-9 . _ : @ / + = -", Name, clip(g), MaxGroupLength)
		}
	}
	slices.Sort(fields)
	fields = slices.Compact(fields)
	if len(fields) > MaxGroups {
		return nil, fmt.Errorf("%s names %d groups, more than %d", Name, len(fields), MaxGroups)
	}
	return fields, nil
}

func clip(s string) string {
	if len(s) > 80 {
		return strings.ToValidUTF8(s[:80], "") + "..."
	}
	return s
}

// Readers is what the index stores for a document with groups (nil: none)
// and the error met reading them ("" if none): the groups, Everyone, or
// Nobody when they could not be read (fail closed).
func Readers(groups []string, readErr string) []string {
	switch {
	case readErr != "":
		return []string{Nobody}
	case len(groups) == 0:
		return []string{Everyone}
	default:
		return slices.Clone(groups)
	}
}

// Grant is what a caller may read within a project: every document (Admin),
// or the documents without groups and those sharing one of Groups.
type Grant struct {
	Admin  bool
	Groups []string
}

// Matches reports whether a document with readers (as Readers makes them)
// may be read under g. Empty readers (an object written before access
// existed, until it is reindexed) match admins only, as the index filter does.
func (g Grant) Matches(readers []string) bool {
	if g.Admin {
		return true
	}
	for _, r := range readers {
		if r == Everyone || slices.Contains(g.Groups, r) {
			return true
		}
	}
	return false
}

// FilterValues are the values a readers ContainsAny filter takes for g: its
// groups and Everyone. Admins are not filtered (nil).
func (g Grant) FilterValues() []string {
	if g.Admin {
		return nil
	}
	return append([]string{Everyone}, g.Groups...)
}

type grantKey struct{}

// WithGrant returns ctx carrying g: every index read made with ctx is
// filtered by it.
func WithGrant(ctx context.Context, g Grant) context.Context {
	return context.WithValue(ctx, grantKey{}, g)
}

type grantSourceKey struct{}

// WithGrantSource returns ctx whose grant is asked of source at each read
// (unless a WithGrant below it says otherwise): for a context that lives
// longer than one caller's grant, such as stdio's, whose key may be
// revoked or given other groups while it runs.
func WithGrantSource(ctx context.Context, source func() Grant) context.Context {
	return context.WithValue(ctx, grantSourceKey{}, source)
}

// GrantFrom returns the grant ctx carries. A context without one reads as a
// caller without groups (fail closed): only documents without groups.
func GrantFrom(ctx context.Context) Grant {
	if g, ok := ctx.Value(grantKey{}).(Grant); ok {
		return g
	}
	if source, ok := ctx.Value(grantSourceKey{}).(func() Grant); ok {
		return source()
	}
	return Grant{}
}

// System returns ctx for Strata's own reads (the catalog, the indexer's
// checks): every document, whatever its groups.
func System(ctx context.Context) context.Context {
	return WithGrant(ctx, Grant{Admin: true})
}
