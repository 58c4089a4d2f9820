package tools

import (
	"context"
	"errors"

	"github.com/strata-kb/strata/queryd/store"
)

// Fusion combines a keyword and a vector ranking into one.
type Fusion struct {
	// Method is "relative" (each list's scores min-max normalised to 0..1,
	// then weighted) or "ranked" (reciprocal rank, 1/(60+rank), weighted).
	Method string
	// Alpha weighs the vector side: 0 is keyword only, 1 vector only.
	Alpha float64
}

// DefaultFusion is used when a call does not choose one (hybrid_search,
// and query_documents always). Chosen by measurement, docs/eval/retrieval.md:
// averaged over SciFact and Cranfield, relative fusion at alpha 0.25 has the
// best nDCG@10 (0.511) of the hybrid settings, ahead of keyword alone
// (0.508), ranked fusion at 0.25 (0.452) and vector alone (0.199).
var DefaultFusion = Fusion{Method: "relative", Alpha: 0.25}

// rrfK is the usual reciprocal rank fusion constant.
const rrfK = 60

// fusedHit is one fused result with what produced it (explain): the rank
// (1-based, 0 = not found) and raw score on each side.
type fusedHit struct {
	Chunk        store.Chunk
	Score        float64 // fused, 0..1, higher is better
	KeywordRank  int
	KeywordScore float64
	VectorRank   int
	VectorScore  float64
}

// fuse merges two rankings of chunks (best first, Score set) into one,
// best first is left to the caller; the fused score is in 0..1.
func fuse(keyword, vector []store.Chunk, f Fusion) []fusedHit {
	byID := map[string]*fusedHit{}
	var order []string
	add := func(list []store.Chunk, weight float64, isVector bool) {
		lo, hi := scoreRange(list)
		for i, c := range list {
			h := byID[c.ID]
			if h == nil {
				h = &fusedHit{Chunk: c}
				byID[c.ID] = h
				order = append(order, c.ID)
			}
			var part float64
			switch f.Method {
			case "ranked":
				part = float64(rrfK+1) / float64(rrfK+i+1) // 1 for the first, normalised
			default:
				part = 1
				if hi > lo {
					part = (c.Score - lo) / (hi - lo)
				}
			}
			h.Score += weight * part
			if isVector {
				h.VectorRank, h.VectorScore = i+1, c.Score
			} else {
				h.KeywordRank, h.KeywordScore = i+1, c.Score
			}
		}
	}
	add(keyword, 1-f.Alpha, false)
	add(vector, f.Alpha, true)
	out := make([]fusedHit, 0, len(order))
	for _, id := range order {
		out = append(out, *byID[id])
	}
	return out
}

func scoreRange(list []store.Chunk) (lo, hi float64) {
	for i, c := range list {
		if i == 0 || c.Score < lo {
			lo = c.Score
		}
		if i == 0 || c.Score > hi {
			hi = c.Score
		}
	}
	return lo, hi
}

// inProject marks chunks with the project they were read from.
func inProject(project string, cs []store.Chunk) []store.Chunk {
	for i := range cs {
		cs[i].Project = project
	}
	return cs
}

// searchBoth runs a hybrid search's two sides at once, either side nil to
// skip it. Each side is a chain of Weaviate reads (and the vector side
// embeds the query first), so an answer waits for the slower side rather
// than for both in a row; the first error cancels the other side.
func searchBoth(ctx context.Context, keyword, vector func(context.Context) ([]store.Chunk, error)) (kw, vec []store.Chunk, err error) {
	if keyword == nil || vector == nil { // one side: nothing to overlap
		if keyword != nil {
			kw, err = keyword(ctx)
		}
		if vector != nil && err == nil {
			vec, err = vector(ctx)
		}
		return kw, vec, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var vecErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		if vec, vecErr = vector(ctx); vecErr != nil {
			cancel()
		}
	}()
	kw, err = keyword(ctx)
	if err != nil {
		cancel()
	}
	<-done
	// The side that failed first is the one to report: the other one's
	// error is then most likely the cancellation.
	switch {
	case err != nil && vecErr != nil && errors.Is(err, context.Canceled) && !errors.Is(vecErr, context.Canceled):
		return nil, nil, vecErr
	case err != nil:
		return nil, nil, err
	case vecErr != nil:
		return nil, nil, vecErr
	}
	return kw, vec, nil
}
