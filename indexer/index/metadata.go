package index

// Metadata range properties (package metadata): each number or date key
// is a property of Chunk and ChunkVector, added before its first value is
// written and shared by every project, so their number is bounded
// (metadata.MaxRangeKeys each). A key beyond the bound keeps its value in
// the document's metadata and its tokens (exists, equality on text); the
// document's metadata warnings say ranges on it are not available.

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/strata-kb/strata/shared/metadata"
	"github.com/strata-kb/strata/shared/schema"
)

// rangeProperties caches the range properties known to exist.
type rangeProperties struct {
	mu     sync.Mutex
	loaded bool
	chunk  map[string]bool // on Chunk
	vector map[string]bool // on ChunkVector (nil: the collection does not exist yet)
}

// prepareMetadata makes sure the range properties of l's numbers and dates
// exist, and marks in l those the index has no room for.
func (w *Writer) prepareMetadata(ctx context.Context, l *labels) error {
	want := metadata.RangeValues(l.meta)
	if len(want) == 0 {
		return nil
	}
	r := &w.ranges
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.loaded {
		if err := w.loadRangeProperties(ctx); err != nil {
			return err
		}
	}
	names := make([]string, 0, len(want))
	for name := range want {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if r.chunk[name] && (r.vector == nil || r.vector[name]) {
			continue
		}
		k := metadata.Number
		if strings.HasPrefix(name, "meta_d_") {
			k = metadata.Date
		}
		if !r.chunk[name] && countKind(r.chunk, name[:len("meta_n_")]) >= metadata.MaxRangeKeys {
			if l.noRange == nil {
				l.noRange = map[string]bool{}
			}
			l.noRange[name] = true
			l.metaWarnings = append(l.metaWarnings, fmt.Sprintf("metadata property %s not added: the index has %d %s properties, the most it takes; the key has no ranges", name, metadata.MaxRangeKeys, k))
			continue
		}
		if err := schema.AddRangeProperty(ctx, w.wv, schema.ChunkClass, name, k); err != nil {
			return err
		}
		r.chunk[name] = true
		if err := w.refreshVectorRanges(ctx); err != nil {
			return err
		}
		if r.vector != nil && !r.vector[name] {
			if err := schema.AddRangeProperty(ctx, w.wv, schema.ChunkVectorClass, name, k); err != nil {
				return err
			}
			r.vector[name] = true
		}
	}
	return nil
}

func (w *Writer) loadRangeProperties(ctx context.Context) error {
	chunk, err := schema.RangeProperties(ctx, w.wv, schema.ChunkClass)
	if err != nil {
		return err
	}
	if chunk == nil {
		chunk = map[string]bool{}
	}
	w.ranges.chunk, w.ranges.loaded = chunk, true
	return w.refreshVectorRanges(ctx)
}

// refreshVectorRanges reads ChunkVector's range properties while the
// collection is unknown to exist: once created (schema.EnsureVectorSpace
// copies Chunk's), it is followed here.
func (w *Writer) refreshVectorRanges(ctx context.Context) error {
	if w.ranges.vector != nil {
		return nil
	}
	vector, err := schema.RangeProperties(ctx, w.wv, schema.ChunkVectorClass)
	if err != nil {
		return err
	}
	w.ranges.vector = vector
	return nil
}

func countKind(props map[string]bool, prefix string) int {
	n := 0
	for name := range props {
		if strings.HasPrefix(name, prefix) {
			n++
		}
	}
	return n
}
