package openai

import (
	"context"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/strata-kb/strata/embedder/engine/embedtest"
)

// spread is the vector the conformance server returns for a text: every
// element depends on the text, so different texts point different ways.
func spread(text string, dims int) []float32 {
	v := make([]float32, dims)
	for i := range v {
		h := fnv.New64a()
		h.Write([]byte{byte(i)})
		h.Write([]byte(text))
		v[i] = float32(h.Sum64()%2001)/1000 - 1
	}
	return v
}

// failing is a client of a server that answers every request with handle.
func failing(t *testing.T, dims int, handle func(w http.ResponseWriter, r recorded, n int)) *Client {
	f := newFake(t, dims, handle)
	return newClient(t, Config{BaseURL: f.srv.URL, APIKey: testKey, Dimensions: dims, MaxRetries: 1})
}

func TestConformance(t *testing.T) {
	const dims = 8
	// Small batches, answered in reverse order every other time, so the
	// suite's batches cross requests and indexes matter.
	f := newFake(t, dims, func(w http.ResponseWriter, r recorded, n int) {
		data := make([]item, len(r.Req.Input))
		for i, in := range r.Req.Input {
			data[i] = item{Object: "embedding", Index: i, Embedding: spread(in, dims)}
		}
		if n%2 == 0 {
			for i, j := 0, len(data)-1; i < j; i, j = i+1, j-1 {
				data[i], data[j] = data[j], data[i]
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
	})
	c := newClient(t, Config{BaseURL: f.srv.URL, APIKey: testKey, Dimensions: dims, BatchSize: 5, MaxRequestBytes: 4096})

	// A server that never answers: Embed waits until it is cancelled. (The
	// server sees the client go only once the body is read.)
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	t.Cleanup(hang.Close)
	slow := newClient(t, Config{BaseURL: hang.URL, Dimensions: dims})

	closed := newFake(t, dims, nil)
	closed.srv.Close()
	embedtest.RunConformance(t, embedtest.Harness{
		Provider: c,
		Texts:    []string{"hello world", "search engines", "vector index", "naïve café"},
		Exact:    true, // float32s go through JSON and back unchanged
		Long:     strings.Repeat("long text ", 500),
		LongErr:  ErrTextTooLarge,
		Slow:     func() (embedtest.Provider, []string) { return slow, []string{"a", "b"} },
		Secret:   testKey,
		Failures: []embedtest.Failure{
			{Name: "HTTP 500", Contains: "status 500", Provider: failing(t, dims, func(w http.ResponseWriter, r recorded, n int) {
				http.Error(w, "boom", http.StatusInternalServerError)
			})},
			{Name: "bad JSON", Contains: "decoding response", Provider: failing(t, dims, func(w http.ResponseWriter, r recorded, n int) {
				_, _ = w.Write([]byte("<html>oops</html>"))
			})},
			{Name: "wrong dimensions", Contains: "returned 4-d vectors", Provider: failing(t, dims, func(w http.ResponseWriter, r recorded, n int) {
				writeOK(w, r.Req.Input, 4, false)
			})},
			{Name: "too few vectors", Contains: "embeddings for", Provider: failing(t, dims, func(w http.ResponseWriter, r recorded, n int) {
				writeOK(w, r.Req.Input[1:], dims, false)
			})},
			{Name: "not finite", Contains: "not a finite float32", Provider: failing(t, dims, func(w http.ResponseWriter, r recorded, n int) {
				_, _ = w.Write([]byte(`{"data":[{"index":0,"embedding":[1e39]}]}`))
			})},
			{Name: "401 echoing the key", Contains: "[REDACTED]", Provider: failing(t, dims, func(w http.ResponseWriter, r recorded, n int) {
				writeJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]any{"message": "bad key " + r.Header.Get("Authorization")}})
			})},
			{Name: "connection refused", Provider: newClient(t, Config{BaseURL: closed.srv.URL, APIKey: testKey, Dimensions: dims, MaxRetries: -1})},
		},
	})
}

// The server's vectors are the client's: no normalisation on the way.
func TestVectorsAsSent(t *testing.T) {
	f := newFake(t, 3, func(w http.ResponseWriter, r recorded, n int) {
		_, _ = w.Write([]byte(`{"data":[{"index":0,"embedding":[3,4,0]}]}`))
	})
	got, err := newClient(t, Config{BaseURL: f.srv.URL, Dimensions: 3}).Embed(context.Background(), []string{"a"})
	if err != nil || len(got) != 1 || math.Abs(float64(got[0][0])-3) > 0 || got[0][1] != 4 {
		t.Fatalf("%v %v", got, err)
	}
}
