package uselite

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sort"

	"github.com/strata-kb/strata/embedder/engine/kernel"
)

const (
	// ModelName identifies the vectors this package produces.
	ModelName = "use-lite-512"
	// Dim is the length of every embedding.
	Dim = 512
)

// Model is a loaded Universal Sentence Encoder Lite. It is immutable after
// Load and safe for concurrent use.
type Model struct {
	tok   *Tokenizer
	graph *graph
	// emptyVec is the embedding of a text with no tokens (see embedTokens).
	emptyVec []float32
	// workers bounds the goroutines one Embed call uses; 0 means GOMAXPROCS.
	workers int
}

// Load reads a model directory as produced by Install (model.json, its
// weight shards and vocab.json). It never touches the network.
func Load(dir string) (*Model, error) {
	if st, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("load use-lite model: %w", err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("load use-lite model: %s is not a directory", dir)
	}
	tok, err := loadTokenizer(dir)
	if err != nil {
		return nil, fmt.Errorf("load use-lite model from %s: %w", dir, err)
	}
	g, err := loadGraph(dir)
	if err != nil {
		return nil, fmt.Errorf("load use-lite model from %s: %w", dir, err)
	}
	m := &Model{tok: tok, graph: g}
	// The embedding of an empty text is what the reference yields for an
	// empty string followed by a non-empty one in the same batch: the graph
	// sees a row with no tokens. Run exactly that once and keep row 0.
	vecs, err := m.runBatch([][]int32{nil, {int32(reservedSymbols)}})
	if err != nil {
		return nil, fmt.Errorf("load use-lite model from %s: smoke run: %w", dir, err)
	}
	m.emptyVec = vecs[0]
	return m, nil
}

// Model names the model; vectors of different models never mix.
func (m *Model) Model() string { return ModelName }

// Dimensions is the length of every vector Embed returns.
func (m *Model) Dimensions() int { return Dim }

// Tokenizer exposes the model's tokenizer (for diagnostics and tests).
func (m *Model) Tokenizer() *Tokenizer { return m.tok }

// Embed returns one L2-normalised 512-d vector per text, in order.
//
// Texts are tokenised, sorted by length and run through the graph in small
// groups of similar length (up to GOMAXPROCS groups at a time). Grouping
// lets short texts share one pass over the 18 MB of weights; the graph's
// padding masks make every row independent of the rest of its group (the
// tests check this against single-text runs and against the reference,
// which embeds a whole batch jointly). Only the first 128 tokens of a text
// contribute, as in the model graph. ctx is checked between groups.
func (m *Model) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	if len(texts) == 0 {
		return out, nil
	}
	workers := m.workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	tokens := make([][]int32, len(texts))
	if err := kernel.Parallel(ctx, workers, len(texts), func(k int) error {
		tokens[k] = m.tok.Encode(texts[k])
		return nil
	}); err != nil {
		return nil, err
	}
	groups := groupByLength(tokens)
	err := kernel.Parallel(ctx, workers, len(groups), func(g int) error {
		batch := make([][]int32, len(groups[g]))
		for k, idx := range groups[g] {
			batch[k] = tokens[idx]
		}
		vecs, err := m.embedGroup(batch)
		if err != nil {
			return fmt.Errorf("embed text %d: %w", groups[g][0], err)
		}
		for k, idx := range groups[g] {
			out[idx] = vecs[k]
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Grouping limits: a group holds at most maxGroupTexts texts and at most
// maxGroupCells padded token positions, so padding waste and activation
// memory stay small (a full group is ~2 MB of activations per layer).
const (
	maxGroupTexts  = 32
	maxGroupCells  = 512
	graphMaxTokens = 128 // ClipToMaxLength in the model graph
)

// groupByLength orders texts by (clipped) token count and cuts the order
// into groups; texts with no tokens form their own group (the graph cannot
// run on them, see embedGroup).
func groupByLength(tokens [][]int32) [][]int {
	order := make([]int, len(tokens))
	for k := range order {
		order[k] = k
	}
	length := func(k int) int { return min(len(tokens[k]), graphMaxTokens) }
	sort.SliceStable(order, func(x, y int) bool { return length(order[x]) < length(order[y]) })
	var groups [][]int
	var cur []int
	for _, k := range order {
		n := max(length(k), 1)
		emptyBoundary := len(cur) > 0 && (length(cur[0]) == 0) != (length(k) == 0)
		if len(cur) > 0 && (len(cur) == maxGroupTexts || (len(cur)+1)*n > maxGroupCells || emptyBoundary) {
			groups = append(groups, cur)
			cur = nil
		}
		cur = append(cur, k)
	}
	if len(cur) > 0 {
		groups = append(groups, cur)
	}
	return groups
}

// embedGroup embeds texts that are all empty or all non-empty.
func (m *Model) embedGroup(batch [][]int32) ([][]float32, error) {
	if len(batch[0]) == 0 {
		// A text with no tokens (empty or only characters NFKC removes): the
		// graph cannot run on a batch without tokens, and the result depends
		// only on the weights, so it was computed once at load.
		out := make([][]float32, len(batch))
		for k := range out {
			out[k] = append([]float32(nil), m.emptyVec...)
		}
		return out, nil
	}
	return m.runBatch(batch)
}

// runBatch builds the sparse input exactly as the reference does
// (indices [[text, position], ...], values [id, ...]) and runs the graph.
// The graph's output has one row per text up to the last text that has at
// least one token, so callers must not end a batch with an empty text.
func (m *Model) runBatch(batch [][]int32) ([][]float32, error) {
	total := 0
	for _, ids := range batch {
		total += len(ids)
	}
	indices := newInt(dtInt, []int{total, 2})
	values := newInt(dtInt, []int{total})
	p := 0
	for b, ids := range batch {
		for pos, id := range ids {
			indices.i[2*p] = int32(b)
			indices.i[2*p+1] = int32(pos)
			values.i[p] = id
			p++
		}
	}
	res, err := m.graph.run(map[string]*tensor{"indices": indices, "values": values})
	if err != nil {
		return nil, fmt.Errorf("run graph: %w", err)
	}
	if res.dt != dtFloat || res.rank() != 2 || res.shape[1] != Dim || res.shape[0] != len(batch) {
		return nil, fmt.Errorf("run graph: unexpected output shape %v for %d texts", res.shape, len(batch))
	}
	out := make([][]float32, len(batch))
	for b := range out {
		out[b] = res.f[b*Dim : (b+1)*Dim : (b+1)*Dim]
	}
	return out, nil
}
