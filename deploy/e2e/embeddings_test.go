package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-kb/strata/shared/pipeline"
)

var embeddingDocs = map[string]string{
	"help/password.md":  "# Account help\n\nTo reset your password, open the account settings page and click Forgot password. A reset link is emailed to you within minutes.\n",
	"travel/weather.md": "# Travel notes\n\nThe weather in Paris is sunny and warm in June, perfect for long walks along the Seine.\n",
	"kitchen/bread.md":  "# Baking\n\nKnead the dough for ten minutes, let it rise for an hour, then bake the loaf at 220 degrees.\n",
}

// waitEmbedded waits until every current chunk of acme has a vector of the
// model queryd is configured with.
func (h *harness) waitEmbedded(chunks int) map[string]any {
	return h.waitFor(fmt.Sprintf("%d embedded chunks", chunks), "status", map[string]any{}, func(out map[string]any, _ string) bool {
		if out == nil {
			return false
		}
		for _, p := range out["projects"].([]any) {
			ps := p.(map[string]any)
			if ps["project"] == "acme" && ps["chunkCount"] == float64(chunks) && ps["embeddedChunkCount"] == float64(chunks) {
				return true
			}
		}
		return false
	})
}

// TestEmbeddingsAreSearchable runs the default stack (the local USE-Lite
// model in the embedder and in queryd): uploaded files get vectors, their
// chunks turn "ready", the vector tools find a paraphrase, search_files takes
// a chunk's own vector back, and bad vectors get clear errors.
func TestEmbeddingsAreSearchable(t *testing.T) {
	h := start(t)
	for path, body := range embeddingDocs {
		h.put("acme/"+path, body)
	}
	status := h.waitEmbedded(len(embeddingDocs))
	cfg := status["configuration"].(map[string]any)
	if cfg["embedding"] != "local" || cfg["model"] != "use-lite-512" || cfg["dimensions"] != 512.0 || status["searchMode"] != "hybrid" {
		t.Fatalf("configuration %v", status)
	}
	paraphrase := "I forgot my login secret, how can I change it?"
	out, errText := h.call("search_knowledge", map[string]any{"query": paraphrase, "top_k": 3})
	hits := results(out)
	if errText != "" || len(hits) != 3 || hits[0]["document_path"] != "help/password.md" {
		t.Fatalf("search_knowledge: %v %s", out, errText)
	}
	if s0, s1 := hits[0]["score"].(float64), hits[1]["score"].(float64); s0 <= s1 || s0 > 1 {
		t.Fatalf("scores are cosine similarities, best first: %v", hits)
	}
	qd, errText := h.call("query_documents", map[string]any{"query": paraphrase, "limit": 2})
	if errText != "" {
		t.Fatal(errText)
	}
	qr := qd["results"].([]any)
	first := qr[0].(map[string]any)
	if len(qr) != 2 || first["filePath"] != "/acme/help/password.md" || first["score"].(float64) > qr[1].(map[string]any)["score"].(float64) {
		t.Fatalf("query_documents (score 0 = most relevant): %v", qd)
	}

	chunkID := hits[0]["chunk_id"].(string)
	emb, errText := h.call("get_file_chunk_embedding", map[string]any{"project_reference": "acme", "chunk_id": chunkID, "include_vector": true})
	if errText != "" || emb["status"] != pipeline.EmbeddingReady || len(emb["vector"].([]any)) != 512 {
		t.Fatalf("get_file_chunk_embedding: %v %s", emb, errText)
	}
	if m := emb["model"].(map[string]any); m["name"] != "use-lite-512" || m["provider"] != "local" || m["dimension"] != 512.0 {
		t.Fatalf("model %v", m)
	}
	list, _ := h.call("list_file_chunks", map[string]any{"project_reference": "acme", "file_path": "help/password.md", "include_embeddings": true})
	if e := chunksOf(list)[0]["embedding"].(map[string]any); e["status"] != pipeline.EmbeddingReady || e["model"] != "use-lite-512" {
		t.Fatalf("list_file_chunks embedding %v", e)
	}

	vector := emb["vector"]
	sf, errText := h.call("search_files", map[string]any{"project_reference": "acme", "query_vector": vector, "dimension": "512", "similarity_threshold": 0.99})
	if errText != "" {
		t.Fatal(errText)
	}
	data := sf["data"].([]any)
	if len(data) != 1 || sf["total_matches"] != 1.0 || data[0].(map[string]any)["chunk"].(map[string]any)["id"] != chunkID {
		t.Fatalf("search_files with a chunk's own vector at 0.99: %v", sf)
	}
	if score := data[0].(map[string]any)["score"].(float64); score < 0.999 {
		t.Fatalf("own vector similarity %v", score)
	}
	all, _ := h.call("search_files", map[string]any{"project_reference": "acme", "query_vector": vector, "dimension": "512", "similarity_threshold": 0, "limit": 2})
	if all["total_matches"] != 3.0 || len(all["data"].([]any)) != 2 || all["page_info"].(map[string]any)["next"] == nil {
		t.Fatalf("threshold 0, limit 2: %v", all)
	}
	next, errText := h.call("search_files", map[string]any{"project_reference": "acme", "query_vector": vector, "dimension": "512", "similarity_threshold": 0,
		"cursor": all["page_info"].(map[string]any)["next"]})
	if errText != "" || len(next["data"].([]any)) != 1 {
		t.Fatalf("second page: %v %s", next, errText)
	}
	for name, args := range map[string]map[string]any{
		"wrong dimension": {"query_vector": vector, "dimension": "768"},
		"wrong length":    {"query_vector": []float64{1, 2, 3}, "dimension": "512"},
		"zero vector":     {"query_vector": make([]float64, 512), "dimension": "512"},
		"other cursor":    {"query_vector": vector, "dimension": "512", "cursor": all["page_info"].(map[string]any)["next"], "similarity_threshold": 0.5},
	} {
		args["project_reference"] = "acme"
		if _, errText := h.call("search_files", args); errText == "" {
			t.Errorf("%s: accepted", name)
		} else if name == "wrong dimension" && !strings.Contains(errText, "512") {
			t.Errorf("%s: the error must say what the index expects: %s", name, errText)
		}
	}
	// The object's freshness says embedded.
	kv, err := h.js.KeyValue(context.Background(), pipeline.ObjectStateBucket)
	if err != nil {
		t.Fatal(err)
	}
	e, err := kv.Get(context.Background(), pipeline.ObjectStateKey("acme", "acme/help/password.md"))
	if err != nil || !strings.Contains(string(e.Value()), `"state":"embedded"`) {
		t.Fatalf("freshness of acme/help/password.md: %v %s", err, e.Value())
	}
}

// fakeOpenAI is an OpenAI-compatible embeddings endpoint with a tiny
// deterministic model (8-d vectors from character trigrams), standing in
// for a second model; it counts the texts it embeds.
func fakeOpenAI(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var texts atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || !strings.HasSuffix(r.URL.Path, "/embeddings") {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		texts.Add(int64(len(req.Input)))
		type item struct {
			Index     int       `json:"index"`
			Embedding []float64 `json:"embedding"`
		}
		out := struct {
			Data []item `json:"data"`
		}{}
		for i, in := range req.Input {
			v := make([]float64, 8)
			s := strings.ToLower(in)
			for j := 0; j+3 <= len(s); j++ {
				sum := sha256.Sum256([]byte(s[j : j+3]))
				v[sum[0]%8]++
			}
			norm := 0.0
			for _, f := range v {
				norm += f * f
			}
			for k := range v {
				v[k] /= math.Max(math.Sqrt(norm), 1)
			}
			v[0] += 0.001 // never all zeros
			out.Data = append(out.Data, item{Index: i, Embedding: v})
		}
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(srv.Close)
	return srv, &texts
}

// TestModelChangeEmbedsSideBySide changes the model to a second one (an
// OpenAI-compatible endpoint). A queryd with only the new model finds
// nothing before its vectors exist: it never answers from another model.
// With the old model named as the previous one, searches keep using the old
// vectors while the embedder re-embeds every file side by side (a forced
// reindex), and switch to the new model once it covers the project.
func TestModelChangeEmbedsSideBySide(t *testing.T) {
	h := start(t)
	for path, body := range embeddingDocs {
		h.put("acme/"+path, body)
	}
	h.waitEmbedded(len(embeddingDocs))
	srv, texts := fakeOpenAI(t)
	second := []string{"STRATA_EMBEDDING_PROVIDER=openai", "STRATA_OPENAI_BASE_URL=" + srv.URL + "/v1", "STRATA_OPENAI_MODEL=trigram-8", "STRATA_OPENAI_DIMENSIONS=8"}
	modelDir := ""
	for _, kv := range h.stack.ServiceEnv["queryd"] {
		if v, ok := strings.CutPrefix(kv, "STRATA_EMBEDDING_MODEL_DIR="); ok {
			modelDir = v
		}
	}
	previous := []string{"STRATA_PREVIOUS_EMBEDDING_PROVIDER=local", "STRATA_PREVIOUS_EMBEDDING_MODEL_DIR=" + modelDir}
	ctx := context.Background()
	base := map[string][]string{}
	for name, env := range h.stack.ServiceEnv {
		base[name] = slices.Clone(env)
	}
	restart := func(name string, extra ...string) {
		t.Helper()
		if err := h.stack.Process(name).Stop(30 * time.Second); err != nil {
			t.Fatal(err)
		}
		h.stack.ServiceEnv[name] = append(slices.Clone(base[name]), extra...)
		if err := h.stack.StartService(ctx, name); err != nil {
			t.Fatal(err)
		}
		if name == "queryd" {
			h.mcp = connect(t, h.stack.Env.MCPURL, h.stack.Env.APIKey)
		}
	}
	searchModel := func() string {
		out, _ := h.call("status", map[string]any{})
		for _, p := range out["projects"].([]any) {
			if ps := p.(map[string]any); ps["project"] == "acme" {
				m, _ := ps["searchModel"].(string)
				return m
			}
		}
		return ""
	}

	restart("queryd", second...)
	out, _ := h.call("search_knowledge", map[string]any{"query": "password reset"})
	if len(results(out)) != 0 {
		t.Fatalf("queryd on a model with no vectors yet must not answer from another model: %v", out)
	}
	hits, _ := h.call("search_keyword", map[string]any{"query": "password"})
	chunkID := results(hits)[0]["chunk_id"].(string)
	emb, _ := h.call("get_file_chunk_embedding", map[string]any{"project_reference": "acme", "chunk_id": chunkID})
	if emb["status"] != pipeline.EmbeddingStale || emb["model"].(map[string]any)["name"] != "openai:trigram-8:8" {
		t.Fatalf("a chunk with only the old model's vector is stale: %v", emb)
	}

	restart("queryd", append(second, previous...)...)
	if m := searchModel(); m != "use-lite-512" {
		t.Fatalf("while the new model covers nothing, searches use the previous one, got %q", m)
	}
	out, _ = h.call("search_knowledge", map[string]any{"query": "I forgot my login secret, how can I change it?", "top_k": 1})
	if r := results(out); len(r) != 1 || r[0]["document_path"] != "help/password.md" {
		t.Fatalf("search during the change answers from the previous model: %v", out)
	}

	restart("embedder", second...)
	// nats pub strata.reindex.acme '{"force":true}'
	body, _ := json.Marshal(pipeline.ReindexRequest{Force: true})
	if _, err := h.js.Publish(ctx, pipeline.ReindexSubject+".acme", body); err != nil {
		t.Fatal(err)
	}
	h.waitEmbedded(len(embeddingDocs))
	deadline := time.Now().Add(time.Minute)
	for searchModel() != "openai:trigram-8:8" {
		if time.Now().After(deadline) {
			t.Fatalf("searches did not switch to the new model once it covered the project: %q", searchModel())
		}
		time.Sleep(time.Second) // the poll interval
	}
	if texts.Load() < int64(len(embeddingDocs)) {
		t.Fatalf("the new model embedded %d texts", texts.Load())
	}
	hits, _ = h.call("search_keyword", map[string]any{"query": "password"}) // the reindexed version has new chunk ids
	chunkID = results(hits)[0]["chunk_id"].(string)
	emb, errText := h.call("get_file_chunk_embedding", map[string]any{"project_reference": "acme", "chunk_id": chunkID, "include_vector": true})
	if vec, _ := emb["vector"].([]any); emb["status"] != pipeline.EmbeddingReady || len(vec) != 8 {
		t.Fatalf("after re-embedding: %v %s", emb, errText)
	}
	out, errText = h.call("search_knowledge", map[string]any{"query": "password reset link", "top_k": 3})
	if errText != "" || len(results(out)) != 3 {
		t.Fatalf("search on the new model: %v %s", out, errText)
	}
	if sf, errText := h.call("search_files", map[string]any{"project_reference": "acme", "query_vector": make([]float64, 768), "dimension": "768"}); errText == "" ||
		!strings.Contains(errText, `pass dimension "8" or "512"`) {
		t.Fatalf("search_files must name the configured models' dimensions, the new model's 8 and the previous one's 512: %v %s", sf, errText)
	}
}
