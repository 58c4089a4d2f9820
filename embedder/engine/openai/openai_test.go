package openai

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The provider contract from embedder/engine, restated so the test does not
// import engine (which imports this package).
var _ interface {
	Model() string
	Dimensions() int
	Embed(ctx context.Context, texts []string) ([][]float32, error)
} = (*Client)(nil)

const testKey = "sk-test-SECRET-0123456789abcdef"

type embReq struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	Dimensions     *int     `json:"dimensions"`
	EncodingFormat string   `json:"encoding_format"`
}

type recorded struct {
	Path   string
	Query  string
	Header http.Header
	Body   []byte
	Req    embReq
}

// fake is an OpenAI-compatible test endpoint. handle decides the answer for
// request number n (1-based); nil means answer correctly.
type fake struct {
	t      *testing.T
	srv    *httptest.Server
	dims   int
	mu     sync.Mutex
	reqs   []recorded
	handle func(w http.ResponseWriter, r recorded, n int)
}

func newFake(t *testing.T, dims int, handle func(w http.ResponseWriter, r recorded, n int)) *fake {
	f := &fake{t: t, dims: dims, handle: handle}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var rec recorded
		rec.Path, rec.Query, rec.Header = r.URL.Path, r.URL.RawQuery, r.Header.Clone()
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("reading request: %v", err)
		}
		rec.Body = body
		if err := json.Unmarshal(body, &rec.Req); err != nil {
			t.Errorf("request body is not valid JSON: %v\n%s", err, body)
		}
		f.mu.Lock()
		f.reqs = append(f.reqs, rec)
		n := len(f.reqs)
		f.mu.Unlock()
		if f.handle != nil {
			f.handle(w, rec, n)
			return
		}
		writeOK(w, rec.Req.Input, f.dims, false)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fake) requests() []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]recorded(nil), f.reqs...)
}

// vecFor is the deterministic vector the fake returns for a text.
func vecFor(text string, dims int) []float32 {
	v := make([]float32, dims)
	v[0] = float32(crc32.ChecksumIEEE([]byte(text)) % 1000003)
	for i := 1; i < dims; i++ {
		v[i] = float32(i) / 8
	}
	return v
}

type item struct {
	Object    string `json:"object"`
	Index     int    `json:"index"`
	Embedding any    `json:"embedding"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeOK(w http.ResponseWriter, inputs []string, dims int, reverse bool) {
	data := make([]item, len(inputs))
	for i, in := range inputs {
		data[i] = item{Object: "embedding", Index: i, Embedding: vecFor(in, dims)}
	}
	if reverse {
		for i, j := 0, len(data)-1; i < j; i, j = i+1, j-1 {
			data[i], data[j] = data[j], data[i]
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data, "model": "m"})
}

func texts(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("text number %d", i)
	}
	return out
}

func newClient(t *testing.T, cfg Config) *Client {
	t.Helper()
	if cfg.Model == "" {
		cfg.Model = "text-embedding-3-small"
	}
	if cfg.InitialBackoff == 0 {
		cfg.InitialBackoff = time.Millisecond
	}
	if cfg.MaxBackoff == 0 {
		cfg.MaxBackoff = 5 * time.Millisecond
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

func checkVectors(t *testing.T, in []string, got [][]float32, dims int) {
	t.Helper()
	if len(got) != len(in) {
		t.Errorf("got %d vectors for %d texts", len(got), len(in))
		return
	}
	for i := range in {
		want := vecFor(in[i], dims)
		if len(got[i]) != dims || got[i][0] != want[0] || got[i][dims-1] != want[dims-1] {
			t.Errorf("vector %d is not the one for %q", i, in[i])
			return
		}
	}
}

func TestHappyPathReorderedIndexes(t *testing.T) {
	f := newFake(t, 8, func(w http.ResponseWriter, r recorded, n int) {
		writeOK(w, r.Req.Input, 8, true) // server answers in reverse order
	})
	c := newClient(t, Config{BaseURL: f.srv.URL, APIKey: testKey, Dimensions: 8})
	in := texts(5)
	got, err := c.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, in, got, 8)

	reqs := f.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Path != "/v1/embeddings" {
		t.Errorf("path %q", r.Path)
	}
	if got := r.Header.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization %q", got)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	if r.Req.Model != "text-embedding-3-small" || r.Req.EncodingFormat != "float" || len(r.Req.Input) != 5 {
		t.Errorf("request %+v", r.Req)
	}
	if r.Req.Dimensions != nil || strings.Contains(string(r.Body), "dimensions") {
		t.Errorf("dimensions sent without SendDimensions: %s", r.Body)
	}
}

func TestSendDimensions(t *testing.T) {
	f := newFake(t, 256, nil)
	c := newClient(t, Config{BaseURL: f.srv.URL, Dimensions: 256, SendDimensions: true})
	if _, err := c.Embed(context.Background(), []string{"a"}); err != nil {
		t.Fatal(err)
	}
	r := f.requests()[0]
	if r.Req.Dimensions == nil || *r.Req.Dimensions != 256 {
		t.Errorf("dimensions not sent: %s", r.Body)
	}
	if r.Header.Get("Authorization") != "" {
		t.Errorf("Authorization sent without APIKey")
	}
}

func TestEmptyInputMakesNoRequest(t *testing.T) {
	f := newFake(t, 4, nil)
	c := newClient(t, Config{BaseURL: f.srv.URL, Dimensions: 4})
	for _, in := range [][]string{nil, {}} {
		got, err := c.Embed(context.Background(), in)
		if err != nil || got == nil || len(got) != 0 {
			t.Errorf("Embed(%v) = %v, %v", in, got, err)
		}
	}
	if n := len(f.requests()); n != 0 {
		t.Errorf("%d requests for empty input", n)
	}
}

func TestBatchingByCount(t *testing.T) {
	f := newFake(t, 4, nil)
	c := newClient(t, Config{BaseURL: f.srv.URL, Dimensions: 4, BatchSize: 64})
	in := texts(150)
	got, err := c.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, in, got, 4)
	reqs := f.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	for i, want := range []int{64, 64, 22} {
		if n := len(reqs[i].Req.Input); n != want {
			t.Errorf("batch %d has %d inputs, want %d", i, n, want)
		}
	}
}

func TestDefaultBatchSize(t *testing.T) {
	f := newFake(t, 2, nil)
	c := newClient(t, Config{BaseURL: f.srv.URL, Dimensions: 2})
	if _, err := c.Embed(context.Background(), texts(129)); err != nil {
		t.Fatal(err)
	}
	if n := len(f.requests()); n != 3 {
		t.Errorf("%d requests for 129 texts with default batch 64, want 3", n)
	}
}

func TestBatchingByBytes(t *testing.T) {
	f := newFake(t, 4, nil)
	const maxBytes = 1000
	c := newClient(t, Config{BaseURL: f.srv.URL, Dimensions: 4, BatchSize: 2048, MaxRequestBytes: maxBytes})
	in := make([]string, 20)
	for i := range in {
		// ~200 bytes each, with characters that need escaping and multi-byte runes.
		in[i] = fmt.Sprintf("%03d \"quoted\"\n\tnaïve <b>&</b> ", i) + strings.Repeat("x", 160)
	}
	got, err := c.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, in, got, 4)
	reqs := f.requests()
	if len(reqs) < 5 {
		t.Fatalf("%d requests; 20 texts of ~200 bytes under a 1000-byte limit need at least 5", len(reqs))
	}
	total := 0
	for i, r := range reqs {
		if len(r.Body) > maxBytes {
			t.Errorf("request %d body is %d bytes > %d", i, len(r.Body), maxBytes)
		}
		total += len(r.Req.Input)
	}
	if total != len(in) {
		t.Errorf("sent %d texts, want %d", total, len(in))
	}
	// The batches are packed: adding the next text would have crossed the limit.
	for i := 0; i+1 < len(reqs); i++ {
		next := len(encodeJSONString(reqs[i+1].Req.Input[0])) + 1
		if len(reqs[i].Body)+next <= maxBytes {
			t.Errorf("batch %d (%d bytes) could have taken the next text", i, len(reqs[i].Body))
		}
	}
}

func TestOversizeTextIsAnError(t *testing.T) {
	f := newFake(t, 4, nil)
	c := newClient(t, Config{BaseURL: f.srv.URL, Dimensions: 4, MaxRequestBytes: 500})
	in := []string{"short", "also short", strings.Repeat("y", 600), "fine"}
	_, err := c.Embed(context.Background(), in)
	if !errors.Is(err, ErrTextTooLarge) {
		t.Fatalf("err = %v, want ErrTextTooLarge", err)
	}
	for _, want := range []string{"text 2", "600 bytes", "500"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if n := len(f.requests()); n != 0 {
		t.Errorf("%d requests made before rejecting an oversize text", n)
	}
}

func TestRetryAfter429ThenSuccess(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	f := newFake(t, 4, func(w http.ResponseWriter, r recorded, n int) {
		switch n {
		case 1:
			w.Header().Set("Retry-After", "3")
			writeJSON(w, http.StatusTooManyRequests, map[string]any{"error": map[string]any{"message": "Rate limit reached", "type": "requests"}})
		case 2:
			w.Header().Set("Retry-After", now.Add(7*time.Second).Format(http.TimeFormat))
			writeJSON(w, http.StatusTooManyRequests, map[string]any{"error": map[string]any{"message": "Rate limit reached"}})
		default:
			writeOK(w, r.Req.Input, 4, false)
		}
	})
	c := newClient(t, Config{BaseURL: f.srv.URL, Dimensions: 4})
	var mu sync.Mutex
	var waits []time.Duration
	c.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		waits = append(waits, d)
		mu.Unlock()
		return nil
	}
	c.now = func() time.Time { return now }

	in := texts(3)
	got, err := c.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, in, got, 4)
	if n := len(f.requests()); n != 3 {
		t.Errorf("%d attempts, want 3", n)
	}
	if len(waits) != 2 || waits[0] != 3*time.Second || waits[1] != 7*time.Second {
		t.Errorf("waits = %v, want [3s 7s] from Retry-After", waits)
	}
}

func TestRetryAfterTooLongGivesUp(t *testing.T) {
	f := newFake(t, 4, func(w http.ResponseWriter, r recorded, n int) {
		w.Header().Set("Retry-After", "3600")
		writeJSON(w, http.StatusTooManyRequests, map[string]any{"error": map[string]any{"message": "quota"}})
	})
	c := newClient(t, Config{BaseURL: f.srv.URL, Dimensions: 4})
	c.sleep = func(context.Context, time.Duration) error { t.Error("slept"); return nil }
	_, err := c.Embed(context.Background(), []string{"a"})
	if err == nil || !strings.Contains(err.Error(), "1h0m0s") || !strings.Contains(err.Error(), "429") {
		t.Fatalf("err = %v", err)
	}
	if n := len(f.requests()); n != 1 {
		t.Errorf("%d attempts, want 1", n)
	}
}

func Test503RetriedThenExhausted(t *testing.T) {
	f := newFake(t, 4, func(w http.ResponseWriter, r recorded, n int) {
		http.Error(w, "upstream overloaded", http.StatusServiceUnavailable)
	})
	c := newClient(t, Config{BaseURL: f.srv.URL, Dimensions: 4, MaxRetries: 3})
	_, err := c.Embed(context.Background(), []string{"a", "b"})
	if err == nil {
		t.Fatal("no error")
	}
	if n := len(f.requests()); n != 4 {
		t.Errorf("%d attempts, want 1 + 3 retries", n)
	}
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 503 {
		t.Errorf("err %v is not an APIError 503", err)
	}
	for _, want := range []string{"embeddings text-embedding-3-small batch 0", "giving up after 4 attempts", "503", "upstream overloaded"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestNoRetriesWhenNegative(t *testing.T) {
	f := newFake(t, 4, func(w http.ResponseWriter, r recorded, n int) {
		http.Error(w, "down", http.StatusBadGateway)
	})
	c := newClient(t, Config{BaseURL: f.srv.URL, Dimensions: 4, MaxRetries: -1})
	if _, err := c.Embed(context.Background(), []string{"a"}); err == nil {
		t.Fatal("no error")
	}
	if n := len(f.requests()); n != 1 {
		t.Errorf("%d attempts, want 1", n)
	}
}

func Test400NotRetriedMessageSurfaced(t *testing.T) {
	f := newFake(t, 4, func(w http.ResponseWriter, r recorded, n int) {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{
			"message": "This model's maximum context length is 8192 tokens, however you requested 9000 tokens.",
			"type":    "invalid_request_error", "param": nil, "code": nil,
		}})
	})
	c := newClient(t, Config{BaseURL: f.srv.URL, Dimensions: 4, APIKey: testKey})
	_, err := c.Embed(context.Background(), []string{"a"})
	if err == nil {
		t.Fatal("no error")
	}
	if n := len(f.requests()); n != 1 {
		t.Errorf("%d attempts, want 1 (400 is not retried)", n)
	}
	for _, want := range []string{"status 400", "maximum context length is 8192 tokens"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "invalid_request_error") || strings.Contains(err.Error(), "{") {
		t.Errorf("error %q should carry the message, not the raw JSON", err)
	}
}

func TestErrorBodyForms(t *testing.T) {
	long := strings.Repeat("é", 400) // 800 bytes, multi-byte
	cases := []struct{ body, want string }{
		{`{"error":{"message":"bad thing","type":"x"}}`, "bad thing"},
		{`{"error":"model \"foo\" not found, try pulling it first"}`, `model "foo" not found`}, // Ollama
		{`{"message":"input must not be empty"}`, "input must not be empty"},
		{`{"detail":"Not Found"}`, "Not Found"},
		{"plain text\nproblem", "plain text problem"},
	}
	c := newClient(t, Config{BaseURL: "http://x", Dimensions: 1})
	for _, tc := range cases {
		if got := c.errorMessage([]byte(tc.body)); !strings.Contains(got, tc.want) {
			t.Errorf("errorMessage(%s) = %q, want %q", tc.body, got, tc.want)
		}
	}
	got := c.errorMessage([]byte(`{"error":{"message":"` + long + `"}}`))
	if len(got) > maxErrorMessage+len("…") || !strings.HasSuffix(got, "…") || !strings.HasPrefix(got, "éé") {
		t.Errorf("long message not truncated cleanly: %d bytes", len(got))
	}
	if !json.Valid([]byte(`"` + got + `"`)) {
		t.Errorf("truncation split a rune")
	}
}

func TestAPIKeyNeverInErrors(t *testing.T) {
	echo := func(status int) func(w http.ResponseWriter, r recorded, n int) {
		return func(w http.ResponseWriter, r recorded, n int) {
			auth := r.Header.Get("Authorization") + r.Header.Get("api-key")
			writeJSON(w, status, map[string]any{"error": map[string]any{"message": "Incorrect API key provided: " + auth}})
		}
	}
	for _, tc := range []struct {
		name   string
		status int
		azure  bool
	}{
		{"401", http.StatusUnauthorized, false},
		{"401 azure", http.StatusUnauthorized, true},
		{"503 exhausted", http.StatusServiceUnavailable, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, 4, echo(tc.status))
			c := newClient(t, Config{BaseURL: f.srv.URL, Dimensions: 4, APIKey: testKey, Azure: tc.azure, MaxRetries: 1})
			_, err := c.Embed(context.Background(), []string{"a"})
			if err == nil {
				t.Fatal("no error")
			}
			if strings.Contains(err.Error(), testKey) || strings.Contains(err.Error(), "SECRET") {
				t.Errorf("API key leaked: %v", err)
			}
			if !strings.Contains(err.Error(), "[REDACTED]") {
				t.Errorf("expected redaction marker in %v", err)
			}
		})
	}
	t.Run("network error", func(t *testing.T) {
		f := newFake(t, 4, nil)
		url := f.srv.URL
		f.srv.Close()
		c := newClient(t, Config{BaseURL: url, Dimensions: 4, APIKey: testKey, MaxRetries: 1})
		_, err := c.Embed(context.Background(), []string{"a"})
		if err == nil || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("config", func(t *testing.T) {
		err := Config{BaseURL: "http://x", Model: "m", Dimensions: 1, APIKey: testKey + "\n"}.Validate()
		if err == nil || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("err = %v", err)
		}
	})
}

func TestWrongDimensions(t *testing.T) {
	f := newFake(t, 768, nil)
	c := newClient(t, Config{BaseURL: f.srv.URL, Dimensions: 1536})
	_, err := c.Embed(context.Background(), []string{"a"})
	want := "model text-embedding-3-small returned 768-d vectors, configured dimensions 1536"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want %q", err, want)
	}
	if n := len(f.requests()); n != 1 {
		t.Errorf("%d attempts; a bad response is not retried", n)
	}
}

func TestBadEmbeddingPayloads(t *testing.T) {
	nanB64 := func() string {
		b := make([]byte, 8)
		binary.LittleEndian.PutUint32(b, math.Float32bits(1))
		binary.LittleEndian.PutUint32(b[4:], math.Float32bits(float32(math.NaN())))
		return base64.StdEncoding.EncodeToString(b)
	}()
	cases := []struct {
		name, body, want string
	}{
		{"string element", `{"data":[{"index":0,"embedding":[0.1,"x"]}]}`, "element 1 is not a number"},
		{"null element", `{"data":[{"index":0,"embedding":[0.1,null]}]}`, "element 1 is not a number"},
		{"nested", `{"data":[{"index":0,"embedding":[[0.1,0.2]]}]}`, "element 0 is not a number"},
		{"string with commas", `{"data":[{"index":0,"embedding":["a,1,2"]}]}`, "element 0 is not a number"},
		{"overflow", `{"data":[{"index":0,"embedding":[0.1,1e39]}]}`, "not a finite float32"},
		{"object", `{"data":[{"index":0,"embedding":{"a":1}}]}`, "not an array of numbers"},
		{"not base64", `{"data":[{"index":0,"embedding":"not base64!"}]}`, "not base64"},
		{"base64 NaN", `{"data":[{"index":0,"embedding":"` + nanB64 + `"}]}`, "element 1 is not finite"},
		{"missing embedding", `{"data":[{"index":0}]}`, "no embedding for input 0"},
		{"null embedding", `{"data":[{"index":0,"embedding":null}]}`, "no embedding for input 0"},
		{"empty embedding", `{"data":[{"index":0,"embedding":[]}]}`, "returned 0-d vectors"},
		{"too few", `{"data":[]}`, "returned 0 embeddings for 1 inputs"},
		{"no data", `{"object":"list"}`, "returned 0 embeddings for 1 inputs"},
		{"bad index", `{"data":[{"index":5,"embedding":[1,2]}]}`, "index 5"},
		{"not json", `<html>oops</html>`, "decoding response"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, 2, func(w http.ResponseWriter, r recorded, n int) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(tc.body))
			})
			c := newClient(t, Config{BaseURL: f.srv.URL, Dimensions: 2})
			_, err := c.Embed(context.Background(), []string{"a"})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
			if !strings.Contains(err.Error(), "embeddings text-embedding-3-small batch 0: ") {
				t.Errorf("error lacks context: %v", err)
			}
		})
	}
	t.Run("duplicate index", func(t *testing.T) {
		f := newFake(t, 2, func(w http.ResponseWriter, r recorded, n int) {
			_, _ = w.Write([]byte(`{"data":[{"index":0,"embedding":[1,2]},{"index":0,"embedding":[1,2]}]}`))
		})
		c := newClient(t, Config{BaseURL: f.srv.URL, Dimensions: 2})
		if _, err := c.Embed(context.Background(), []string{"a", "b"}); err == nil || !strings.Contains(err.Error(), "index 0 twice") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestBase64AndMissingIndexAccepted(t *testing.T) {
	b := make([]byte, 12)
	for i, v := range []float32{0.5, -1.25, 3} {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	body := `{"data":[{"embedding":"` + base64.StdEncoding.EncodeToString(b) + `"},{"embedding":[ 1e-3 , -2E2, 0 ]}]}`
	f := newFake(t, 3, func(w http.ResponseWriter, r recorded, n int) { _, _ = w.Write([]byte(body)) })
	c := newClient(t, Config{BaseURL: f.srv.URL, Dimensions: 3})
	got, err := c.Embed(context.Background(), []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[[0.5 -1.25 3] [0.001 -200 0]]" {
		t.Errorf("got %v", got)
	}
}

func TestCancelDuringBackoffReturnsPromptly(t *testing.T) {
	f := newFake(t, 4, func(w http.ResponseWriter, r recorded, n int) {
		http.Error(w, "busy", http.StatusServiceUnavailable)
	})
	c := newClient(t, Config{BaseURL: f.srv.URL, Dimensions: 4, InitialBackoff: 20 * time.Second, MaxBackoff: 20 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := c.Embed(ctx, []string{"a"})
	if elapsed := time.Since(start); elapsed > 2*time.Second {
		t.Errorf("Embed took %s after cancel; backoff was 10-20s", elapsed)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("err %v should mention the last failure", err)
	}
	if n := len(f.requests()); n != 1 {
		t.Errorf("%d attempts, want 1", n)
	}
}

func TestNetworkErrorAndTimeoutRetried(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	f := newFake(t, 4, func(w http.ResponseWriter, r recorded, n int) {
		switch n {
		case 1: // drop the connection
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
		case 2: // hang past the per-attempt timeout
			select {
			case <-release:
			case <-time.After(5 * time.Second):
			}
		default:
			writeOK(w, r.Req.Input, 4, false)
		}
	})
	c := newClient(t, Config{BaseURL: f.srv.URL, Dimensions: 4, Timeout: 100 * time.Millisecond})
	in := texts(2)
	got, err := c.Embed(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	checkVectors(t, in, got, 4)
	if n := len(f.requests()); n != 3 {
		t.Errorf("%d attempts, want 3", n)
	}
}

func TestAzure(t *testing.T) {
	f := newFake(t, 4, nil)
	for _, tc := range []struct {
		base, version, wantQuery string
	}{
		{f.srv.URL, "", "api-version=" + DefaultAzureAPIVersion},
		{f.srv.URL + "/", "2024-10-21", "api-version=2024-10-21"},
		{f.srv.URL + "/openai", "2024-10-21", "api-version=2024-10-21"},
	} {
		c := newClient(t, Config{BaseURL: tc.base, Model: "my-deploy", Dimensions: 4, APIKey: testKey, Azure: true, APIVersion: tc.version})
		if _, err := c.Embed(context.Background(), []string{"a"}); err != nil {
			t.Fatal(err)
		}
		reqs := f.requests()
		r := reqs[len(reqs)-1]
		if r.Path != "/openai/deployments/my-deploy/embeddings" || r.Query != tc.wantQuery {
			t.Errorf("base %q: got %s?%s", tc.base, r.Path, r.Query)
		}
		if r.Header.Get("api-key") != testKey || r.Header.Get("Authorization") != "" {
			t.Errorf("base %q: headers api-key=%q Authorization=%q", tc.base, r.Header.Get("api-key"), r.Header.Get("Authorization"))
		}
	}
}

func TestBaseURLWithAndWithoutV1(t *testing.T) {
	f := newFake(t, 4, nil)
	for _, base := range []string{f.srv.URL, f.srv.URL + "/", f.srv.URL + "/v1", f.srv.URL + "/v1/", f.srv.URL + "/v1/embeddings"} {
		c := newClient(t, Config{BaseURL: base, Dimensions: 4})
		if _, err := c.Embed(context.Background(), []string{"a"}); err != nil {
			t.Fatalf("base %q: %v", base, err)
		}
		reqs := f.requests()
		if p := reqs[len(reqs)-1].Path; p != "/v1/embeddings" {
			t.Errorf("base %q: path %q", base, p)
		}
	}
}

func TestEndpointURL(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{BaseURL: "https://api.openai.com"}, "https://api.openai.com/v1/embeddings"},
		{Config{BaseURL: "https://api.openai.com/v1"}, "https://api.openai.com/v1/embeddings"},
		{Config{BaseURL: "http://localhost:11434/v1"}, "http://localhost:11434/v1/embeddings"},
		{Config{BaseURL: "http://localhost:11434"}, "http://localhost:11434/v1/embeddings"},
		{Config{BaseURL: "http://gw:8080/proxy/openai/v1/"}, "http://gw:8080/proxy/openai/v1/embeddings"},
		{Config{BaseURL: "http://tei:80/v1/embeddings"}, "http://tei:80/v1/embeddings"},
		{Config{BaseURL: "https://r.openai.azure.com/", Model: "emb small", Azure: true, APIVersion: "2024-02-01"},
			"https://r.openai.azure.com/openai/deployments/emb%20small/embeddings?api-version=2024-02-01"},
	} {
		if got := endpointURL(tc.cfg); got != tc.want {
			t.Errorf("endpointURL(%q) = %q, want %q", tc.cfg.BaseURL, got, tc.want)
		}
	}
}

func TestValidate(t *testing.T) {
	err := Config{}.Validate()
	if err == nil {
		t.Fatal("empty config accepted")
	}
	for _, want := range []string{"BaseURL is required", "Model is required", "Dimensions must be >= 1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %q, lacks %q", err, want)
		}
	}

	err = Config{BaseURL: "ftp://x", Model: "m", Dimensions: 3, BatchSize: 5000, MaxRequestBytes: -1, Timeout: -time.Second}.Validate()
	for _, want := range []string{"http:// or https://", "BatchSize must be between 1 and 2048", "MaxRequestBytes", "Timeout"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, lacks %q", err, want)
		}
	}
	for _, base := range []string{"localhost:11434", "http://", "https://x/v1?x=1", "://bad"} {
		if (Config{BaseURL: base, Model: "m", Dimensions: 1}).Validate() == nil {
			t.Errorf("BaseURL %q accepted", base)
		}
	}
	if err := (Config{BaseURL: "http://localhost:11434/v1", Model: "nomic-embed-text", Dimensions: 768}).Validate(); err != nil {
		t.Errorf("valid config rejected: %v", err)
	}
	if _, err := New(Config{Model: "m"}); err == nil || !strings.Contains(err.Error(), "BaseURL") {
		t.Errorf("New accepted an invalid config: %v", err)
	}
}

func TestDefaultsAndModelName(t *testing.T) {
	c, err := New(Config{BaseURL: "https://api.openai.com", Model: "text-embedding-3-large", Dimensions: 1024})
	if err != nil {
		t.Fatal(err)
	}
	if c.Model() != "openai:text-embedding-3-large:1024" || c.Dimensions() != 1024 {
		t.Errorf("Model() = %q, Dimensions() = %d", c.Model(), c.Dimensions())
	}
	cfg := c.cfg
	if cfg.BatchSize != 64 || cfg.MaxRequestBytes != 1<<20 || cfg.MaxRetries != 5 || cfg.Timeout != 30*time.Second ||
		cfg.InitialBackoff != 200*time.Millisecond || cfg.MaxBackoff != 10*time.Second {
		t.Errorf("defaults not applied: %+v", cfg)
	}
	if c.Endpoint() != "https://api.openai.com/v1/embeddings" {
		t.Errorf("Endpoint() = %q", c.Endpoint())
	}
}

func TestBackoffBounds(t *testing.T) {
	c := newClient(t, Config{BaseURL: "http://x", Dimensions: 1, InitialBackoff: 200 * time.Millisecond, MaxBackoff: 10 * time.Second})
	for attempt := 0; attempt < 70; attempt++ {
		d := min(200*time.Millisecond<<min(attempt, 20), 10*time.Second)
		for range 20 {
			got := c.backoff(attempt)
			if got < d/2 || got > d {
				t.Fatalf("backoff(%d) = %s, want in [%s, %s]", attempt, got, d/2, d)
			}
		}
	}
}

func TestRetryAfterParsing(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		h    map[string]string
		want time.Duration
	}{
		{nil, -1},
		{map[string]string{"Retry-After": "2"}, 2 * time.Second},
		{map[string]string{"Retry-After": "0"}, 0},
		{map[string]string{"Retry-After": "-3"}, -1},
		{map[string]string{"Retry-After": "soon"}, -1},
		{map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second},
		{map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0},
		{map[string]string{"Retry-After-Ms": "250", "Retry-After": "1"}, 250 * time.Millisecond},
	} {
		h := http.Header{}
		for k, v := range tc.h {
			h.Set(k, v)
		}
		if got := retryAfter(h, now); got != tc.want {
			t.Errorf("retryAfter(%v) = %s, want %s", tc.h, got, tc.want)
		}
	}
}

func TestConcurrentUse(t *testing.T) {
	var calls atomic.Int32
	f := newFake(t, 4, func(w http.ResponseWriter, r recorded, n int) {
		if calls.Add(1)%3 == 0 {
			http.Error(w, "flaky", http.StatusInternalServerError)
			return
		}
		writeOK(w, r.Req.Input, 4, n%2 == 0)
	})
	c := newClient(t, Config{BaseURL: f.srv.URL, Dimensions: 4, BatchSize: 7, MaxRetries: 10})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := make([]string, 30)
			for i := range in {
				in[i] = fmt.Sprintf("g%d-%d", g, i)
			}
			got, err := c.Embed(context.Background(), in)
			if err != nil {
				t.Error(err)
				return
			}
			checkVectors(t, in, got, 4)
		}()
	}
	wg.Wait()
}
