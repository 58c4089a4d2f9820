// Package embed is the embedding provider contract shared by the embedder
// (documents) and queryd (queries), so both always use the same model.
package embed

import (
	"context"
	"fmt"
)

// Provider turns texts into vectors.
type Provider interface {
	// Model names the model; vectors of different models never mix.
	Model() string
	// Dimensions is the length of every vector Embed returns.
	Dimensions() int
	// Embed returns one vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// ErrNoProvider is returned by New when no provider is configured; the
// pipeline then indexes chunks with embedding status "missing".
var ErrNoProvider = fmt.Errorf("no embedding provider configured")

// New returns the provider named by name. Providers are added by later work;
// until then only "" / "none" is accepted and means no vectors.
func New(name string) (Provider, error) {
	switch name {
	case "", "none":
		return nil, ErrNoProvider
	default:
		return nil, fmt.Errorf("unknown embedding provider %q (available: none)", name)
	}
}
