package tools

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/server"

	"github.com/strata-kb/strata/embedder/engine/hfmodel"
	"github.com/strata-kb/strata/queryd/cursor"
	"github.com/strata-kb/strata/queryd/store"
	"github.com/strata-kb/strata/shared/pipeline"
)

// writeStatic384 writes a model2vec static model with 384-d random token
// vectors (the size of all-MiniLM-L6-v2 and other small Hugging Face
// models) over the words of the fake index, and opens it as queryd does.
func writeStatic384(t *testing.T) *hfmodel.Model {
	t.Helper()
	const dim = 384
	dir := filepath.Join(t.TempDir(), "tiny-static-384")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	vocab := []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "acme", "beta", "chunk", "0", "1", "2", "3", "4"}
	ids := map[string]int{}
	rng := rand.New(rand.NewPCG(384, 1))
	var data []byte
	for i, w := range vocab {
		ids[w] = i
		for range dim {
			data = binary.LittleEndian.AppendUint32(data, math.Float32bits(float32(rng.NormFloat64())))
		}
	}
	header, _ := json.Marshal(map[string]any{"embeddings": map[string]any{"dtype": "F32", "shape": []int{len(vocab), dim}, "data_offsets": []int{0, len(data)}}})
	for len(header)%8 != 0 {
		header = append(header, ' ')
	}
	file := append(binary.LittleEndian.AppendUint64(nil, uint64(len(header))), header...)
	tok, _ := json.Marshal(map[string]any{
		"normalizer":    map[string]any{"type": "BertNormalizer", "lowercase": true},
		"pre_tokenizer": map[string]any{"type": "BertPreTokenizer"},
		"model":         map[string]any{"type": "WordPiece", "unk_token": "[UNK]", "vocab": ids},
	})
	for name, b := range map[string][]byte{"model.safetensors": append(file, data...), "tokenizer.json": tok,
		"config.json": []byte(`{"model_type": "model2vec", "normalize": true}`)} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m, err := hfmodel.Load(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if m.Dimensions() != dim || !strings.HasPrefix(m.Model(), "tiny-static-384-") {
		t.Fatalf("model %s has %d dimensions", m.Model(), m.Dimensions())
	}
	return m
}

// hashEmbedder is a deterministic stand-in model of any dimension: each
// word adds a vector seeded by its hash.
type hashEmbedder struct {
	name string
	dim  int
}

func (h hashEmbedder) Model() string   { return h.name }
func (h hashEmbedder) Dimensions() int { return h.dim }
func (h hashEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, text := range texts {
		v := make([]float32, h.dim)
		for _, w := range strings.Fields(strings.ToLower(text)) {
			sum := sha256.Sum256([]byte(w))
			rng := rand.New(rand.NewPCG(binary.LittleEndian.Uint64(sum[:8]), 2))
			for k := range v {
				v[k] += float32(rng.NormFloat64())
			}
		}
		out[i] = v
	}
	return out, nil
}

// modelVectors is a vector store holding each model's vectors of the fake
// index's chunks apart (as ChunkVector's named vectors do); a search
// compares the query with the asked model's vectors only, by cosine
// similarity, and rejects a vector of another length as Weaviate does.
type modelVectors struct {
	f    *fakeReader
	mu   sync.Mutex
	vecs map[string]map[string][]float32 // model -> chunk id -> vector
	read []string                        // the model of each SearchVector
}

// embedAll gives every chunk of project listed in which a vector of m.
func (v *modelVectors) embedAll(t *testing.T, project string, m QueryEmbedder, which ...int) {
	t.Helper()
	if v.vecs == nil {
		v.vecs = map[string]map[string][]float32{}
	}
	if v.vecs[m.Model()] == nil {
		v.vecs[m.Model()] = map[string][]float32{}
	}
	for _, c := range v.f.chunks[project] {
		if len(which) > 0 && !slices.Contains(which, c.Index) {
			continue
		}
		vecs, err := m.Embed(context.Background(), []string{c.Content})
		if err != nil {
			t.Fatal(err)
		}
		v.vecs[m.Model()][c.ID] = vecs[0]
	}
}

func (v *modelVectors) SearchVector(_ context.Context, project string, q store.VectorQuery) ([]store.Chunk, error) {
	v.mu.Lock()
	v.read = append(v.read, q.Model)
	v.mu.Unlock()
	var out []store.Chunk
	for _, c := range v.f.chunks[project] {
		vec, ok := v.vecs[q.Model][c.ID]
		if !ok {
			continue
		}
		if len(vec) != len(q.Vector) {
			return nil, userErrorf("vector lengths do not match: %d and %d", len(vec), len(q.Vector))
		}
		c.Project, c.Score = project, cosine32(vec, q.Vector)
		if c.Score >= q.MinSimilarity {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(x, y store.Chunk) int { return compareDesc(x.Score, y.Score) })
	return out[:min(len(out), q.Limit)], nil
}

func (v *modelVectors) Embeddings(_ context.Context, project, model string, chunkIDs []string, withVector bool) (map[string]store.ChunkVectors, error) {
	out := map[string]store.ChunkVectors{}
	for _, c := range v.f.chunks[project] {
		if !slices.Contains(chunkIDs, c.ID) {
			continue
		}
		var cv store.ChunkVectors
		for m, byID := range v.vecs {
			vec, ok := byID[c.ID]
			switch {
			case !ok:
			case m == model:
				cv.Current = &store.ChunkEmbedding{ID: "e-" + m + "-" + c.ID, ChunkID: c.ID, Model: m, SourceChecksum: c.SourceChecksum}
				if withVector {
					cv.Current.Vector = vec
				}
			default:
				cv.OtherModels = true
			}
		}
		if cv.Current != nil || cv.OtherModels {
			out[c.ID] = cv
		}
	}
	return out, nil
}

func (v *modelVectors) EmbeddedChunkCount(_ context.Context, project, model string) (int, error) {
	n := 0
	for _, c := range v.f.chunks[project] {
		if _, ok := v.vecs[model][c.ID]; ok {
			n++
		}
	}
	return n, nil
}

func (v *modelVectors) searched() []string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Clone(v.read)
}

func cosine32(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

// dimensionServer serves the tools with current as queryd's model and
// previous (nil: none) as the model before it.
func dimensionServer(t *testing.T, v *modelVectors, current, previous QueryEmbedder) *server.MCPServer {
	t.Helper()
	signer, err := cursor.NewSigner("test-secret-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	s := server.NewMCPServer("strata", "test", server.WithToolCapabilities(false))
	tl := New(v.f, signer, slog.New(slog.DiscardHandler)).SetEmbeddings(v, current, "local")
	if previous != nil {
		tl.SetPreviousEmbeddings(previous, "openai")
	}
	tl.Register(s)
	return s
}

func vectorOf(t *testing.T, m QueryEmbedder, text string) []any {
	t.Helper()
	vecs, err := m.Embed(context.Background(), []string{text})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]any, len(vecs[0]))
	for i, f := range vecs[0] {
		out[i] = float64(f)
	}
	return out
}

// TestConfiguredModelDimensions: with a 384-d Hugging Face model as
// queryd's model and a 512-d one before it, get_file_chunk_embedding serves
// each model's vectors by its dimension and search_files searches each
// model's vectors with a query vector of its dimension; a dimension no
// configured model has gets an error naming the available ones. The
// published input schemas are served unchanged.
func TestConfiguredModelDimensions(t *testing.T) {
	mini := writeStatic384(t)
	old := hashEmbedder{name: "old-512", dim: 512}
	v := &modelVectors{f: index()}
	v.embedAll(t, "acme", mini)
	v.embedAll(t, "acme", old)
	s := dimensionServer(t, v, mini, old)
	chunk := v.f.chunks["acme"][3]

	for _, c := range []struct {
		dimension *string
		model     QueryEmbedder
		provider  string
	}{{nil, mini, "local"}, {ptr("384"), mini, "local"}, {ptr("512"), old, "openai"}} {
		args := map[string]any{"project_reference": "acme", "chunk_id": chunk.ID, "include_vector": true}
		if c.dimension != nil {
			args["dimension"] = *c.dimension
		}
		out, errText := callTool(t, s, "acme", "get_file_chunk_embedding", args)
		if errText != "" {
			t.Fatalf("get_file_chunk_embedding %v: %s", args, errText)
		}
		want := vectorOf(t, c.model, chunk.Content)
		m := out["model"].(map[string]any)
		if out["status"] != pipeline.EmbeddingReady || m["name"] != c.model.Model() || m["provider"] != c.provider ||
			m["dimension"] != float64(c.model.Dimensions()) || !sameVector(out["vector"].([]any), want) {
			t.Fatalf("get_file_chunk_embedding %v: status %v model %v, %d values", args, out["status"], m, len(out["vector"].([]any)))
		}
	}

	for _, c := range []struct {
		dimension string
		model     QueryEmbedder
	}{{"384", mini}, {"512", old}} {
		before := len(v.searched())
		out, errText := callTool(t, s, "acme", "search_files", map[string]any{"project_reference": "acme", "dimension": c.dimension,
			"query_vector": vectorOf(t, c.model, chunk.Content), "similarity_threshold": 0.99})
		if errText != "" {
			t.Fatalf("search_files dimension %s: %s", c.dimension, errText)
		}
		data := out["data"].([]any)
		if len(data) != 1 || out["total_matches"] != 1.0 {
			t.Fatalf("search_files dimension %s at 0.99: %v", c.dimension, out)
		}
		hit := data[0].(map[string]any)
		if hit["chunk"].(map[string]any)["id"] != chunk.ID || hit["score"].(float64) < 0.9999 {
			t.Fatalf("search_files dimension %s: %v", c.dimension, hit)
		}
		if got := v.searched()[before:]; !slices.Equal(got, []string{c.model.Model()}) {
			t.Fatalf("search_files dimension %s read the vectors of %v, want %s's", c.dimension, got, c.model.Model())
		}
	}

	// A dimension no configured model has, listed in the schema or not.
	for _, d := range []string{"768", "256", "1536", "0384", "x"} {
		_, errText := callTool(t, s, "acme", "search_files", map[string]any{"project_reference": "acme", "dimension": d,
			"query_vector": vectorOf(t, mini, chunk.Content)})
		for _, want := range []string{`dimension "` + d + `" does not match this index`, mini.Model() + " (384 dimensions)",
			"old-512 (512 dimensions, the previous model)", `pass dimension "384" or "512"`} {
			if !strings.Contains(errText, want) {
				t.Errorf("search_files dimension %s: %q, want it to say %q", d, errText, want)
			}
		}
		_, errText = callTool(t, s, "acme", "get_file_chunk_embedding", map[string]any{"project_reference": "acme", "chunk_id": chunk.ID, "dimension": d})
		if !strings.Contains(errText, `dimension "`+d+`" does not match this index`) || !strings.Contains(errText, `the available dimensions are "384" and "512"`) {
			t.Errorf("get_file_chunk_embedding dimension %s: %q", d, errText)
		}
	}
	// The dimension picks the model, so the vector must be of its length.
	if _, errText := callTool(t, s, "acme", "search_files", map[string]any{"project_reference": "acme", "dimension": "384",
		"query_vector": vectorOf(t, old, chunk.Content)}); !strings.Contains(errText, "query_vector has 512 values; model "+mini.Model()+" expects exactly 384") {
		t.Errorf("a 512-d vector with dimension 384: %q", errText)
	}

	// The served input schemas are the published ones: no 384 added.
	out := rpc(t, s, "*", "tools/list", map[string]any{})
	for _, tl := range out["result"].(map[string]any)["tools"].([]any) {
		m := tl.(map[string]any)
		if m["name"] != "search_files" && m["name"] != "get_file_chunk_embedding" {
			continue
		}
		var published any
		if err := json.Unmarshal(Schema(m["name"].(string)+".input.json"), &published); err != nil {
			t.Fatal(err)
		}
		if !jsonEqual(m["inputSchema"], published) {
			t.Errorf("%s: the served input schema is not the published one: %v", m["name"], m["inputSchema"])
		}
	}
}

// TestOnlyModelDimension: with one 384-d model, the listed dimensions it
// does not have (512 the local USE-Lite's, 768-4096 the reference's) are
// refused as before, naming 384.
func TestOnlyModelDimension(t *testing.T) {
	mini := writeStatic384(t)
	v := &modelVectors{f: index()}
	v.embedAll(t, "acme", mini)
	s := dimensionServer(t, v, mini, nil)
	chunk := v.f.chunks["acme"][1]
	out, errText := callTool(t, s, "acme", "search_files", map[string]any{"project_reference": "acme", "dimension": "384",
		"query_vector": vectorOf(t, mini, chunk.Content), "similarity_threshold": 0})
	if data, _ := out["data"].([]any); errText != "" || len(data) != 5 || data[0].(map[string]any)["chunk"].(map[string]any)["id"] != chunk.ID {
		t.Fatalf("search_files dimension 384: %v %s", out, errText)
	}
	// The hits' embeddings are the 384-d model's.
	if e := out["data"].([]any)[0].(map[string]any)["chunk"].(map[string]any)["embedding"].(map[string]any); e["model"] != mini.Model() || e["status"] != "ready" {
		t.Fatalf("hit embedding %v", e)
	}
	for _, d := range []string{"512", "768", "1024", "1536", "3072", "4096"} {
		_, errText := callTool(t, s, "acme", "search_files", map[string]any{"project_reference": "acme", "dimension": d,
			"query_vector": vectorOf(t, mini, chunk.Content)})
		want := `dimension "` + d + `" does not match this index: its embedding model is ` + mini.Model() + ` (384 dimensions); pass dimension "384" and a query_vector of that many values`
		if errText != want {
			t.Errorf("search_files dimension %s: %q, want %q", d, errText, want)
		}
		_, errText = callTool(t, s, "acme", "get_file_chunk_embedding", map[string]any{"project_reference": "acme", "chunk_id": chunk.ID, "dimension": d})
		want = `dimension "` + d + `" does not match this index: its embedding model is ` + mini.Model() + ` (384 dimensions); the available dimensions are "384"`
		if errText != want {
			t.Errorf("get_file_chunk_embedding dimension %s: %q, want %q", d, errText, want)
		}
	}
	// The argument's type is still checked against the schema.
	if _, errText := callTool(t, s, "acme", "search_files", map[string]any{"project_reference": "acme", "dimension": 384,
		"query_vector": vectorOf(t, mini, chunk.Content)}); errText != "dimension must be a string, not a number" {
		t.Errorf("a numeric dimension: %q", errText)
	}
}

// TestSameDimensionFollowsCoverage: when the previous model has the same
// dimension as queryd's, search_files reads the model searches use (the
// previous one until queryd's covers the project).
func TestSameDimensionFollowsCoverage(t *testing.T) {
	mini := writeStatic384(t)
	other := hashEmbedder{name: "other-384", dim: 384}
	v := &modelVectors{f: index()}
	v.embedAll(t, "acme", mini, 0, 1) // queryd's model covers 2 of 5 chunks
	v.embedAll(t, "acme", other)
	s := dimensionServer(t, v, mini, other)
	chunk := v.f.chunks["acme"][4]
	out, errText := callTool(t, s, "acme", "search_files", map[string]any{"project_reference": "acme", "dimension": "384",
		"query_vector": vectorOf(t, other, chunk.Content), "similarity_threshold": 0.99})
	if data, _ := out["data"].([]any); errText != "" || len(data) != 1 || !slices.Equal(v.searched(), []string{"other-384"}) {
		t.Fatalf("search_files during a model change of one dimension: %v %s, read %v", out, errText, v.searched())
	}
	emb, errText := callTool(t, s, "acme", "get_file_chunk_embedding", map[string]any{"project_reference": "acme", "chunk_id": chunk.ID, "dimension": "384"})
	if errText != "" || emb["model"].(map[string]any)["name"] != mini.Model() || emb["status"] != pipeline.EmbeddingStale {
		t.Fatalf("get_file_chunk_embedding answers for queryd's model when both have the dimension: %v %s", emb, errText)
	}
}

// TestDimensionWithoutModel: without an embedding provider the published
// dimensions still answer "missing"; another is refused naming them.
func TestDimensionWithoutModel(t *testing.T) {
	s := newServer(t)
	chunk := index().chunks["acme"][0]
	out, errText := callTool(t, s, "acme", "get_file_chunk_embedding", map[string]any{"project_reference": "acme", "chunk_id": chunk.ID, "dimension": "768"})
	if errText != "" || out["status"] != pipeline.EmbeddingMissing || out["model"].(map[string]any)["dimension"] != 768.0 {
		t.Fatalf("dimension 768 without a model: %v %s", out, errText)
	}
	_, errText = callTool(t, s, "acme", "get_file_chunk_embedding", map[string]any{"project_reference": "acme", "chunk_id": chunk.ID, "dimension": "384"})
	if want := `dimension must be one of "512", "768", "1024", "1536", "3072", "4096" (no embedding model is configured)`; errText != want {
		t.Fatalf("dimension 384 without a model: %q, want %q", errText, want)
	}
}

// sameVector compares a vector read from JSON with one as float32 values.
func sameVector(got, want []any) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if float32(got[i].(float64)) != float32(want[i].(float64)) {
			return false
		}
	}
	return true
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
