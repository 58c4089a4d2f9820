package e2e

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/strata-kb/strata/shared/pipeline"
)

// writeStaticModel384 writes a model2vec static model in Hugging Face's
// layout with 384-d random token vectors (the size of all-MiniLM-L6-v2 and
// bge-small, which docs/embeddings.md offers) over the words of embeddingDocs: no
// weights are downloaded, and embedder and queryd load the same files.
func writeStaticModel384(t *testing.T) string {
	t.Helper()
	const dim = 384
	dir := filepath.Join(t.TempDir(), "tiny-static-384")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	vocab := []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]"}
	for _, body := range embeddingDocs {
		for _, w := range regexp.MustCompile(`[a-z0-9]+`).FindAllString(strings.ToLower(body), -1) {
			if !slices.Contains(vocab, w) {
				vocab = append(vocab, w)
			}
		}
	}
	ids := map[string]int{}
	rng := rand.New(rand.NewPCG(384, 7))
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
	return dir
}

// TestConfiguredDimensions runs the embedder and queryd on a 384-d Hugging
// Face model the test builds: get_file_chunk_embedding serves its vectors
// and search_files searches them with dimension "384", which Veryfront's
// published enum (kept as the served schema) does not list. Then queryd
// moves to USE-Lite (512-d) with the 384-d model as the previous one: both
// dimensions are taken, each reading its own model's vectors, and any
// other is refused naming the two.
func TestConfiguredDimensions(t *testing.T) {
	model := []string{"STRATA_EMBEDDING_PROVIDER=local", "STRATA_LOCAL_MODEL=" + writeStaticModel384(t)}
	h := startWith(t, map[string][]string{"embedder": model, "queryd": model})
	for path, body := range embeddingDocs {
		h.put("acme/"+path, body)
	}
	status := h.waitEmbedded(len(embeddingDocs))
	cfg := status["configuration"].(map[string]any)
	name, _ := cfg["model"].(string)
	if !strings.HasPrefix(name, "tiny-static-384-") || cfg["dimensions"] != 384.0 {
		t.Fatalf("configuration %v", cfg)
	}
	hits, _ := h.call("search_keyword", map[string]any{"query": "password"})
	chunkID := results(hits)[0]["chunk_id"].(string)

	// Served: the 384-d vector, by dimension and by default.
	var vector []any
	for _, args := range []map[string]any{
		{"project_reference": "acme", "chunk_id": chunkID, "include_vector": true, "dimension": "384"},
		{"project_reference": "acme", "chunk_id": chunkID, "include_vector": true},
	} {
		emb, errText := h.call("get_file_chunk_embedding", args)
		vec, _ := emb["vector"].([]any)
		if errText != "" || emb["status"] != pipeline.EmbeddingReady || len(vec) != 384 {
			t.Fatalf("get_file_chunk_embedding %v: %v %s", args, emb, errText)
		}
		if m := emb["model"].(map[string]any); m["name"] != name || m["provider"] != "local" || m["dimension"] != 384.0 {
			t.Fatalf("model %v", m)
		}
		vector = vec
	}
	// Searched: the chunk's own vector finds it, and only it at 0.99.
	sf, errText := h.call("search_files", map[string]any{"project_reference": "acme", "query_vector": vector, "dimension": "384", "similarity_threshold": 0.99})
	if errText != "" {
		t.Fatal(errText)
	}
	data := sf["data"].([]any)
	if len(data) != 1 || sf["total_matches"] != 1.0 || data[0].(map[string]any)["chunk"].(map[string]any)["id"] != chunkID ||
		data[0].(map[string]any)["score"].(float64) < 0.999 {
		t.Fatalf("search_files dimension 384 with a chunk's own vector: %v", sf)
	}
	if e := data[0].(map[string]any)["chunk"].(map[string]any)["embedding"].(map[string]any); e["model"] != name || e["status"] != pipeline.EmbeddingReady {
		t.Fatalf("the hit's embedding %v", e)
	}
	all, errText := h.call("search_files", map[string]any{"project_reference": "acme", "query_vector": vector, "dimension": "384", "similarity_threshold": 0})
	if errText != "" || all["total_matches"] != 3.0 {
		t.Fatalf("search_files dimension 384 at threshold 0: %v %s", all, errText)
	}
	// The published dimensions this index has no model of are refused, naming 384.
	for _, d := range []string{"512", "768"} {
		if _, errText := h.call("search_files", map[string]any{"project_reference": "acme", "query_vector": vector, "dimension": d}); !strings.Contains(errText,
			`its embedding model is `+name+` (384 dimensions); pass dimension "384"`) {
			t.Errorf("search_files dimension %s: %q", d, errText)
		}
		if _, errText := h.call("get_file_chunk_embedding", map[string]any{"project_reference": "acme", "chunk_id": chunkID, "dimension": d}); !strings.Contains(errText,
			`the available dimensions are "384"`) {
			t.Errorf("get_file_chunk_embedding dimension %s: %q", d, errText)
		}
	}
	// The served input schemas are Veryfront's enum (plus 512), without 384.
	tools, err := h.mcp.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools.Tools {
		if tl.Name != "search_files" && tl.Name != "get_file_chunk_embedding" {
			continue
		}
		raw, _ := json.Marshal(tl)
		if !strings.Contains(string(raw), `"768"`) || strings.Contains(string(raw), `"384"`) {
			t.Errorf("%s serves another input schema: %s", tl.Name, raw)
		}
	}

	// queryd on USE-Lite (its STRATA_EMBEDDING_MODEL_DIR) with the 384-d
	// model as the previous one.
	env := slices.DeleteFunc(slices.Clone(h.stack.ServiceEnv["queryd"]), func(kv string) bool { return strings.HasPrefix(kv, "STRATA_LOCAL_MODEL=") })
	env = append(env, "STRATA_PREVIOUS_EMBEDDING_PROVIDER=local", "STRATA_PREVIOUS_LOCAL_MODEL="+strings.TrimPrefix(model[1], "STRATA_LOCAL_MODEL="))
	if err := h.stack.Process("queryd").Stop(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	h.stack.ServiceEnv["queryd"] = env
	if err := h.stack.StartService(context.Background(), "queryd"); err != nil {
		t.Fatal(err)
	}
	h.mcp = connect(t, h.stack.Env.MCPURL, h.stack.Env.APIKey)

	emb, errText := h.call("get_file_chunk_embedding", map[string]any{"project_reference": "acme", "chunk_id": chunkID, "include_vector": true, "dimension": "384"})
	if vec, _ := emb["vector"].([]any); errText != "" || emb["status"] != pipeline.EmbeddingReady || len(vec) != 384 ||
		emb["model"].(map[string]any)["name"] != name || emb["model"].(map[string]any)["provider"] != "local" {
		t.Fatalf("get_file_chunk_embedding dimension 384 of the previous model: %v %s", emb, errText)
	}
	emb, errText = h.call("get_file_chunk_embedding", map[string]any{"project_reference": "acme", "chunk_id": chunkID, "dimension": "512"})
	if errText != "" || emb["status"] != pipeline.EmbeddingStale || emb["model"].(map[string]any)["name"] != "use-lite-512" || emb["model"].(map[string]any)["dimension"] != 512.0 {
		t.Fatalf("get_file_chunk_embedding dimension 512 (queryd's model, no vectors yet): %v %s", emb, errText)
	}
	sf, errText = h.call("search_files", map[string]any{"project_reference": "acme", "query_vector": vector, "dimension": "384", "similarity_threshold": 0.99})
	if data, _ := sf["data"].([]any); errText != "" || len(data) != 1 || data[0].(map[string]any)["chunk"].(map[string]any)["id"] != chunkID {
		t.Fatalf("search_files dimension 384 reads the previous model's vectors: %v %s", sf, errText)
	}
	vec512 := make([]float64, 512)
	vec512[0] = 1
	sf, errText = h.call("search_files", map[string]any{"project_reference": "acme", "query_vector": vec512, "dimension": "512", "similarity_threshold": 0})
	if errText != "" || sf["total_matches"] != 0.0 {
		t.Fatalf("search_files dimension 512 reads only USE-Lite's vectors (none yet): %v %s", sf, errText)
	}
	for _, d := range []string{"768", "256"} {
		_, errText := h.call("search_files", map[string]any{"project_reference": "acme", "query_vector": vector, "dimension": d})
		if !strings.Contains(errText, `its embedding models are use-lite-512 (512 dimensions) and `+name+` (384 dimensions, the previous model); pass dimension "512" or "384"`) {
			t.Errorf("search_files dimension %s: %q", d, errText)
		}
		_, errText = h.call("get_file_chunk_embedding", map[string]any{"project_reference": "acme", "chunk_id": chunkID, "dimension": d})
		if !strings.Contains(errText, `the available dimensions are "512" and "384"`) {
			t.Errorf("get_file_chunk_embedding dimension %s: %q", d, errText)
		}
	}
}
