package tools

import (
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/server"

	"github.com/strata-kb/strata/queryd/cursor"
	"github.com/strata-kb/strata/queryd/store"
)

// fakeEmbedder embeds every text as the same 4-d vector.
type fakeEmbedder struct{}

func (fakeEmbedder) Model() string   { return "fake-4" }
func (fakeEmbedder) Dimensions() int { return 4 }
func (fakeEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i := range out {
		out[i] = []float32{1, 0, 0, 0}
	}
	return out, nil
}

// fakeVectors ranks a project's chunks in reverse index order with falling
// similarity, and has a vector only for chunk 0 (the rest: missing).
type fakeVectors struct{ f *fakeReader }

func (v fakeVectors) SearchVector(_ context.Context, project string, q store.VectorQuery) ([]store.Chunk, error) {
	cs := v.f.chunks[project]
	var out []store.Chunk
	for i := len(cs) - 1; i >= 0 && len(out) < q.Limit; i-- {
		c := cs[i]
		c.Project, c.Score = project, 0.9-0.1*float64(len(out))
		if c.Score >= q.MinSimilarity {
			out = append(out, c)
		}
	}
	return out, nil
}

func (v fakeVectors) Embeddings(_ context.Context, project, model string, chunkIDs []string, _ bool) (map[string]store.ChunkVectors, error) {
	out := map[string]store.ChunkVectors{}
	for _, c := range v.f.chunks[project] {
		if c.Index == 0 {
			out[c.ID] = store.ChunkVectors{Current: &store.ChunkEmbedding{ID: "e0", ChunkID: c.ID, Model: model, SourceChecksum: c.SourceChecksum}}
		}
	}
	return out, nil
}

func (v fakeVectors) EmbeddedChunkCount(context.Context, string, string) (int, error) { return 1, nil }

func newVectorServer(t *testing.T) *server.MCPServer {
	t.Helper()
	signer, err := cursor.NewSigner("test-secret-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	f := index()
	s := server.NewMCPServer("strata", "test", server.WithToolCapabilities(false))
	New(f, signer, slog.New(slog.DiscardHandler)).SetEmbeddings(fakeVectors{f}, fakeEmbedder{}, "fake").Register(s)
	return s
}

// TestSearchFilesSchemaMatchesReference: search_files' input schema is
// Veryfront's, plus "512" in the dimension enum (Strata's local model);
// its output schema is Veryfront's exactly.
func TestSearchFilesSchemaMatchesReference(t *testing.T) {
	s := newVectorServer(t)
	out := rpc(t, s, "*", "tools/list", map[string]any{})
	var served map[string]any
	names := map[string]bool{}
	for _, tl := range out["result"].(map[string]any)["tools"].([]any) {
		m := tl.(map[string]any)
		names[m["name"].(string)] = true
		if m["name"] == "search_files" {
			served = m
		}
	}
	for _, n := range []string{"search_files", "search_knowledge", "query_documents"} {
		if !names[n] {
			t.Fatalf("%s not served with an embedding provider", n)
		}
	}
	page, err := os.ReadFile(filepath.Join("testdata", "reference", "veryfront-search_files.txt"))
	if err != nil {
		t.Fatalf("reference page: %v", err)
	}
	text := string(page)
	inStart := strings.Index(text, "{")
	outHead := strings.Index(text, "Output schema")
	var want, wantOut map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(text[inStart:outHead])), &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(text[outHead+strings.Index(text[outHead:], "{"):])), &wantOut); err != nil {
		t.Fatal(err)
	}
	dim := want["properties"].(map[string]any)["dimension"].(map[string]any)
	dim["enum"] = append([]any{"512"}, dim["enum"].([]any)...)
	dim["description"] = dim["description"].(string) + " (the reference's 768-4096, plus 512 for Strata's local model)"
	if got := served["inputSchema"]; !reflect.DeepEqual(got, any(want)) {
		t.Errorf("search_files input schema differs:\n got %v\nwant %v", got, want)
	}
	if got := served["outputSchema"]; !reflect.DeepEqual(got, any(wantOut)) {
		t.Errorf("search_files output schema differs from the reference")
	}
}

func TestSearchFilesValidatesVectors(t *testing.T) {
	s := newVectorServer(t)
	good := []any{1.0, 0.0, 0.0, 0.0}
	for name, args := range map[string]map[string]any{
		"dimension not the model's": {"query_vector": good, "dimension": "768"},
		"too short":                 {"query_vector": []any{1.0}, "dimension": "4"},
		"beyond float32":            {"query_vector": []any{1e300, 0.0, 0.0, 0.0}, "dimension": "4"},
		"threshold above 1":         {"query_vector": good, "dimension": "4", "similarity_threshold": 2},
		"tampered cursor":           {"query_vector": good, "dimension": "4", "cursor": "AAAA.BBBB"},
	} {
		args["project_reference"] = "acme"
		if _, errText := callTool(t, s, "acme", "search_files", args); errText == "" {
			t.Errorf("%s: accepted", name)
		} else if name == "dimension not the model's" && !strings.Contains(errText, `its embedding model is fake-4 (4 dimensions); pass dimension "4"`) {
			t.Errorf("the error must say what the index expects: %s", errText)
		} else if name != "dimension not the model's" && strings.Contains(errText, "does not match this index") {
			t.Errorf("%s: refused for its dimension, not for what it tests: %s", name, errText)
		}
	}
}

func TestSemanticToolsRankAndPage(t *testing.T) {
	s := newVectorServer(t)
	// The fake model's vectors are not compared (fakeVectors ranks by
	// index); search_files' ranking of real vectors is in dimensions_test.go.
	out, errText := callTool(t, s, "acme", "search_knowledge", map[string]any{"query": "anything", "top_k": 2})
	if errText != "" {
		t.Fatal(errText)
	}
	res := out["results"].([]any)
	if len(res) != 2 || res[0].(map[string]any)["index"] != 4.0 || res[0].(map[string]any)["score"] != 0.9 {
		t.Fatalf("search_knowledge: %v", out)
	}
	qd, errText := callTool(t, s, "acme", "query_documents", map[string]any{"query": "chunk 4", "limit": 3})
	if errText != "" {
		t.Fatal(errText)
	}
	rs := qd["results"].([]any)
	if len(rs) == 0 {
		t.Fatalf("query_documents: %v", qd)
	}
	prev := -1.0
	for _, r := range rs {
		m := r.(map[string]any)
		score := m["score"].(float64)
		if score < prev || score < 0 || score > 1 || !strings.HasPrefix(m["filePath"].(string), "/acme/") {
			t.Fatalf("query_documents scores are 0 (best) to 1, ascending: %v", rs)
		}
		prev = score
	}
	emb, _ := callTool(t, s, "acme", "list_file_chunks", map[string]any{"project_reference": "acme", "file_path": "a.md", "include_embeddings": true})
	data := emb["data"].([]any)
	if data[0].(map[string]any)["embedding"].(map[string]any)["status"] != "ready" || data[1].(map[string]any)["embedding"].(map[string]any)["status"] != "missing" {
		t.Fatalf("embedding statuses: %v", data)
	}
}

func TestFuse(t *testing.T) {
	kw := []store.Chunk{{ID: "a", Score: 10}, {ID: "b", Score: 5}, {ID: "c", Score: 0}}
	vec := []store.Chunk{{ID: "c", Score: 0.9}, {ID: "a", Score: 0.5}}
	for _, f := range []Fusion{{"relative", 0.5}, {"ranked", 0.5}, {"relative", 0}, {"ranked", 1}} {
		hits := fuse(kw, vec, f)
		if len(hits) != 3 {
			t.Fatalf("%+v: %d hits", f, len(hits))
		}
		for _, h := range hits {
			if h.Score < 0 || h.Score > 1+1e-9 || math.IsNaN(h.Score) {
				t.Fatalf("%+v: fused score %v out of 0..1", f, h.Score)
			}
		}
		byID := map[string]fusedHit{}
		for _, h := range hits {
			byID[h.Chunk.ID] = h
		}
		if byID["a"].KeywordRank != 1 || byID["a"].VectorRank != 2 || byID["b"].VectorRank != 0 || byID["c"].VectorScore != 0.9 {
			t.Fatalf("%+v: explain %+v", f, byID)
		}
	}
	// Keyword only: the keyword order; vector only: the vector order.
	if h := fuse(kw, vec, Fusion{"relative", 0}); h[0].Chunk.ID != "a" || h[0].Score != 1 {
		t.Fatalf("alpha 0: %+v", h)
	}
	if h := fuse(kw, vec, Fusion{"relative", 1}); best(h) != "c" {
		t.Fatalf("alpha 1: %+v", h)
	}
}

func best(hs []fusedHit) string {
	b := hs[0]
	for _, h := range hs {
		if h.Score > b.Score {
			b = h
		}
	}
	return b.Chunk.ID
}
