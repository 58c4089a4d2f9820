package auth

import (
	"context"

	"github.com/strata-kb/strata/shared/access"
)

// Lookups asks each KeyLookup in turn; the first that knows a key answers.
// queryd puts -api-keys first, so a record in the key store can never
// shadow a key an operator configured on the command line.
type Lookups []KeyLookup

// Lookup implements KeyLookup.
func (ls Lookups) Lookup(key string) (Principal, bool) {
	for _, l := range ls {
		if p, ok := l.Lookup(key); ok {
			return p, true
		}
	}
	return Principal{}, false
}

// WithLiveKey returns ctx carrying key: FromContext on it, or on any
// context derived from it, asks keys for the key's principal at that
// moment. A stdio server has one context for its whole life (mcp-go calls
// its context function once); with this a key revoked (or granted other
// projects) while it runs takes effect from the next call, and a revoked
// key is "not authenticated", as over HTTP.
func WithLiveKey(ctx context.Context, keys KeyLookup, key string) context.Context {
	// The grant every index read is filtered by follows the key too
	// (without it a stdio key would read as one without groups).
	return access.WithGrantSource(liveKey{Context: ctx, keys: keys, key: key}, func() access.Grant {
		p, _ := keys.Lookup(key) // a revoked key: no groups (and "not authenticated" before any read)
		return p.Grant()
	})
}

type liveKey struct {
	context.Context
	keys KeyLookup
	key  string
}

// Value answers the principal's key with a fresh lookup; the rest goes to
// the parent. A WithPrincipal below this context still wins, as usual.
func (c liveKey) Value(k any) any {
	if _, ok := k.(ctxKey); !ok {
		return c.Context.Value(k)
	}
	if p, ok := c.keys.Lookup(c.key); ok {
		return p
	}
	return nil
}
