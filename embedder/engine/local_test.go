package engine

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"flag"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-kb/strata/embedder/engine/embedtest"
	"github.com/strata-kb/strata/embedder/engine/hfmodel"
	"github.com/strata-kb/strata/shared/config"
)

// writeStaticModel writes a 4-d model2vec model of a few words (the model
// kinds themselves are tested in package hfmodel; this is the wiring).
func writeStaticModel(t *testing.T, dir string) {
	t.Helper()
	vocab := []string{"[UNK]", "hello", "world", "search"}
	v := map[string]int{}
	var data []byte
	for i, w := range vocab {
		v[w] = i
		for d := range 4 {
			data = binary.LittleEndian.AppendUint32(data, math.Float32bits(float32(i*4+d+1)))
		}
	}
	header, _ := json.Marshal(map[string]any{"embeddings": map[string]any{"dtype": "F32", "shape": []int{len(vocab), 4}, "data_offsets": []int{0, len(data)}}})
	file := append(binary.LittleEndian.AppendUint64(nil, uint64(len(header))), header...)
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("model.safetensors", append(file, data...))
	tok, _ := json.Marshal(map[string]any{
		"normalizer":    map[string]any{"type": "BertNormalizer", "lowercase": true},
		"pre_tokenizer": map[string]any{"type": "BertPreTokenizer"},
		"model":         map[string]any{"type": "WordPiece", "unk_token": "[UNK]", "vocab": v},
	})
	write("tokenizer.json", tok)
	write("config.json", []byte(`{"model_type": "model2vec", "normalize": true}`))
}

func parseConfig(t *testing.T, args ...string) *Config {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	var c Config
	c.RegisterFlags(fs)
	var prev Config
	prev.RegisterFlagsWithPrefix(fs, "previous-", "none")
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return &c
}

func problems(c *Config) string {
	var p config.Problems
	c.Validate(&p)
	if err := p.Err(); err != nil {
		return err.Error()
	}
	return ""
}

func TestLocalModelDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tiny-static")
	os.Mkdir(dir, 0o755)
	writeStaticModel(t, dir)
	c := parseConfig(t, "-embedding-provider", "local", "-local-model", dir, "-embedding-model-dir", "")
	if p := problems(c); p != "" {
		t.Fatal(p)
	}
	p, err := New(*c)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.(*hfmodel.Model); !ok || p.Dimensions() != 4 || !strings.HasPrefix(p.Model(), "tiny-static-") {
		t.Fatalf("provider %T %q, %d dimensions", p, p.Model(), p.Dimensions())
	}
	embedtest.RunConformance(t, embedtest.Harness{
		Provider:    p,
		Texts:       []string{"hello", "world", "search", "Hello world"},
		Normalized:  true, // config.json says normalize
		ZeroVectors: true, // words it does not know are no tokens
		Exact:       true,
	})
}

// TestLocalModelFromHub: -local-model org/name@rev, -local-model-sha256
// and -model-hub-url reach the fetch; the model lands in STRATA_MODEL_CACHE.
func TestLocalModelFromHub(t *testing.T) {
	src := filepath.Join(t.TempDir(), "tiny-static")
	os.Mkdir(src, 0o755)
	writeStaticModel(t, src)
	var pins []string
	for _, f := range []string{"config.json", "model.safetensors", "tokenizer.json"} {
		data, _ := os.ReadFile(filepath.Join(src, f))
		sum := sha256.Sum256(data)
		pins = append(pins, f+"="+hex.EncodeToString(sum[:]))
	}
	hub := httptest.NewServer(http.StripPrefix("/acme/tiny-static/resolve/v1/", http.FileServer(http.Dir(src))))
	defer hub.Close()
	cache := t.TempDir()
	t.Setenv("STRATA_MODEL_CACHE", cache)
	c := parseConfig(t, "-local-model", "acme/tiny-static@v1", "-local-model-sha256", strings.Join(pins, ","), "-model-hub-url", hub.URL)
	if p := problems(c); p != "" {
		t.Fatal(p)
	}
	p, err := New(*c)
	if err != nil {
		t.Fatal(err)
	}
	local, err := hfmodel.Load(src, "")
	if err != nil {
		t.Fatal(err)
	}
	if p.Model() != local.Model() {
		t.Errorf("hub model %q, the same files from a directory %q", p.Model(), local.Model())
	}
	if _, err := os.Stat(filepath.Join(cache, "acme--tiny-static")); err != nil {
		t.Errorf("not in STRATA_MODEL_CACHE: %v", err)
	}
}

func TestLocalModelConfigProblems(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-local-model", "org/name@main"}, "-local-model-sha256 (STRATA_LOCAL_MODEL_SHA256): required with a hub model"},
		{[]string{"-local-model", "org/name"}, "-local-model (STRATA_LOCAL_MODEL): not a directory, nor a hub model"},
		{[]string{"-local-model", "org/name@main", "-local-model-sha256", "model.safetensors=12"}, "is not a SHA-256"},
		{[]string{"-local-model", "org/name@main", "-local-model-sha256", "model.safetensors=" + strings.Repeat("a", 64), "-model-hub-url", "ftp://x"}, "-model-hub-url"},
		// Without -local-model, local is still USE-Lite.
		{[]string{"-embedding-model-dir", "/nonexistent"}, "no USE-Lite model in /nonexistent"},
	} {
		c := parseConfig(t, tc.args...)
		if p := problems(c); !strings.Contains(p, tc.want) {
			t.Errorf("%v: problems %q, want %q", tc.args, p, tc.want)
		}
	}
	ok := parseConfig(t, "-local-model", "org/name@0123abc", "-local-model-sha256", "model.safetensors="+strings.Repeat("a", 64))
	if p := problems(ok); p != "" {
		t.Errorf("a pinned hub model: %s", p)
	}
}
