package hfmodel

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// testHub serves directories in Hugging Face's URL layout,
// /<org>/<name>/resolve/<revision>/<file>, and can misbehave per file.
type testHub struct {
	*httptest.Server
	repos    map[string]string // "org/name@rev" -> directory
	requests atomic.Int64
	mu       sync.Mutex
	truncate map[string]bool // send half the file with the full Content-Length
	shorten  map[string]bool // send half the file as if it were all of it
}

func newTestHub(t *testing.T) *testHub {
	h := &testHub{repos: map[string]string{}, truncate: map[string]bool{}, shorten: map[string]bool{}}
	h.Server = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.Close)
	return h
}

func (h *testHub) serve(w http.ResponseWriter, r *http.Request) {
	h.requests.Add(1)
	// /<id>/resolve/<revision, "/" escaped>/<file>
	id, rest, ok := strings.Cut(strings.TrimPrefix(r.URL.EscapedPath(), "/"), "/resolve/")
	rev, file, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 {
		http.NotFound(w, r)
		return
	}
	id, _ = url.PathUnescape(id)
	rev, _ = url.PathUnescape(rev)
	file, _ = url.PathUnescape(file)
	dir, ok := h.repos[id+"@"+rev]
	if !ok {
		http.Error(w, "Repository Not Found", http.StatusUnauthorized) // as the hub answers
		return
	}
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(file)))
	if err != nil {
		http.Error(w, "Entry not found", http.StatusNotFound)
		return
	}
	h.mu.Lock()
	truncate, shorten := h.truncate[file], h.shorten[file]
	h.mu.Unlock()
	switch {
	case truncate:
		w.Header().Set("Content-Length", fmt.Sprint(len(data)))
		w.Write(data[:len(data)/2])
		// returning early makes the server close the connection mid-body
	case shorten:
		w.Write(data[:len(data)/2])
	default:
		w.Write(data)
	}
}

// pinsOf pins every file under dir.
func pinsOf(t *testing.T, dir string) Pins {
	t.Helper()
	pins := Pins{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		sum := sha256.Sum256(data)
		pins[filepath.ToSlash(rel)] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pins
}

// cacheLeftovers lists what the cache holds besides the per-model
// directories, their lock files and the complete model directories in keep.
func cacheLeftovers(t *testing.T, cache string, keep ...string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(cache, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == cache || slices.Contains(keep, p) {
			if d != nil && d.IsDir() && p != cache {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(cache, p)
		depth := len(strings.Split(rel, string(filepath.Separator)))
		if (d.IsDir() && depth == 1) || (d.Name() == ".lock" && depth == 2) {
			return nil
		}
		out = append(out, rel)
		if d.IsDir() {
			return filepath.SkipDir
		}
		return nil
	})
	return out
}

func TestFetchFromHub(t *testing.T) {
	hub := newTestHub(t)
	src := filepath.Join(t.TempDir(), "tiny-bert")
	tinyBert().write(t, src, testVocab)
	hub.repos["acme/tiny-bert@0123abc"] = src
	pins := pinsOf(t, src)
	cache := t.TempDir()
	var logs []string
	opt := Options{SHA256: pins, Fetch: FetchOptions{BaseURL: hub.URL, CacheDir: cache, Log: func(s string) { logs = append(logs, s) }}}

	m, err := Open(context.Background(), "acme/tiny-bert@0123abc", opt)
	if err != nil {
		t.Fatal(err)
	}
	if got := hub.requests.Load(); got != int64(len(pins)) {
		t.Errorf("%d requests for %d files", got, len(pins))
	}
	// The same files loaded from a directory of the same name: same name, same vectors.
	local, err := Load(src, "")
	if err != nil {
		t.Fatal(err)
	}
	if m.Model() != local.Model() {
		t.Errorf("hub model %q, directory %q", m.Model(), local.Model())
	}
	a, _ := m.Embed(context.Background(), []string{"hello world"})
	b, _ := local.Embed(context.Background(), []string{"hello world"})
	if !slices.Equal(a[0], b[0]) {
		t.Error("vectors differ between the fetched copy and the source")
	}
	dir := filepath.Join(cache, "acme--tiny-bert", "0123abc-"+pins.key())
	if err := pins.verify(dir); err != nil {
		t.Fatal(err)
	}
	if left := cacheLeftovers(t, cache, dir); len(left) > 0 {
		t.Errorf("left in the cache: %v", left)
	}

	// A second start uses the cache without the network.
	hub.Close()
	if _, err := Open(context.Background(), "acme/tiny-bert@0123abc", opt); err != nil {
		t.Fatalf("cached model: %v", err)
	}

	// A damaged cached copy is fetched again.
	hub2 := newTestHub(t)
	hub2.repos["acme/tiny-bert@0123abc"] = src
	opt.Fetch.BaseURL = hub2.URL
	os.WriteFile(filepath.Join(dir, "config.json"), []byte("{}"), 0o644)
	logs = nil
	if _, err := Open(context.Background(), "acme/tiny-bert@0123abc", opt); err != nil {
		t.Fatalf("damaged cache: %v", err)
	}
	if hub2.requests.Load() != int64(len(pins)) || !strings.Contains(strings.Join(logs, "\n"), "is damaged") {
		t.Errorf("damaged cache: %d requests, logs %q", hub2.requests.Load(), logs)
	}
}

func TestFetchFailuresLeaveNothing(t *testing.T) {
	src := filepath.Join(t.TempDir(), "m")
	tinyBert().write(t, src, testVocab)
	good := pinsOf(t, src)
	cases := []struct {
		name  string
		setup func(h *testHub, pins Pins)
		want  string
	}{
		{"wrong hash", func(h *testHub, pins Pins) {
			pins["config.json"] = strings.Repeat("ab", 32)
		}, "config.json: SHA-256 " + good["config.json"] + " does not match the pin abab"},
		{"truncated transfer", func(h *testHub, pins Pins) {
			h.truncate["model.safetensors"] = true
		}, "/acme/m/resolve/v1/model.safetensors: truncated: "},
		{"truncated file", func(h *testHub, pins Pins) {
			h.shorten["model.safetensors"] = true
		}, "model.safetensors: SHA-256"},
		{"missing file", func(h *testHub, pins Pins) {
			pins["2_Dense/config.json"] = strings.Repeat("00", 32)
		}, "2_Dense/config.json: GET http://"},
		{"unknown revision", func(h *testHub, pins Pins) {
			delete(h.repos, "acme/m@v1")
		}, "401 Unauthorized"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			hub := newTestHub(t)
			hub.repos["acme/m@v1"] = src
			pins := Pins{}
			for k, v := range good {
				pins[k] = v
			}
			tc.setup(hub, pins)
			cache := t.TempDir()
			_, err := Open(context.Background(), "acme/m@v1", Options{SHA256: pins, Fetch: FetchOptions{BaseURL: hub.URL, CacheDir: cache}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to mention %q", err, tc.want)
			}
			t.Logf("error: %v", err)
			if !strings.HasPrefix(err.Error(), "fetch model acme/m@v1: ") {
				t.Errorf("error %q does not name the model", err)
			}
			if left := cacheLeftovers(t, cache); len(left) > 0 {
				t.Errorf("left in the cache: %v", left)
			}
			// Once the server behaves, the same cache works.
			hub.repos["acme/m@v1"] = src
			hub.truncate, hub.shorten = map[string]bool{}, map[string]bool{}
			if _, err := Open(context.Background(), "acme/m@v1", Options{SHA256: good, Fetch: FetchOptions{BaseURL: hub.URL, CacheDir: cache}}); err != nil {
				t.Fatalf("after the failure: %v", err)
			}
		})
	}
}

// TestFetchConcurrent: two loaders of one model download it once.
func TestFetchConcurrent(t *testing.T) {
	hub := newTestHub(t)
	src := filepath.Join(t.TempDir(), "m")
	tinyBert().write(t, src, testVocab)
	hub.repos["m@refs/pr/1"] = src // a legacy id without an org, a revision with slashes
	pins := pinsOf(t, src)
	cache := t.TempDir()
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = Fetch(context.Background(), HubRef{ID: "m", Revision: "refs/pr/1"}, pins, FetchOptions{BaseURL: hub.URL, CacheDir: cache})
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := hub.requests.Load(); got != int64(len(pins)) {
		t.Errorf("%d requests for %d files", got, len(pins))
	}
}

func TestOpenDirectoryWithPins(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "m")
	tinyBert().write(t, dir, testVocab)
	pins := pinsOf(t, dir)
	if _, err := Open(context.Background(), dir, Options{SHA256: pins}); err != nil {
		t.Fatal(err)
	}
	pins["model.safetensors"] = strings.Repeat("0", 64)
	if _, err := Open(context.Background(), dir, Options{SHA256: pins}); err == nil || !strings.Contains(err.Error(), "does not match the pin") {
		t.Fatalf("error %v", err)
	}
	if _, err := Open(context.Background(), "acme/m", Options{SHA256: pins}); err == nil || !strings.Contains(err.Error(), "want <org>/<name>@<revision>") {
		t.Fatalf("no revision: %v", err)
	}
	if _, err := Open(context.Background(), "acme/m@v1", Options{}); err == nil || !strings.Contains(err.Error(), "no SHA-256 pins") {
		t.Fatalf("no pins: %v", err)
	}
}

func TestParsePins(t *testing.T) {
	a, b := strings.Repeat("a", 64), strings.Repeat("B", 64)
	pins, err := ParsePins("model.safetensors=" + a + ", 1_Pooling/config.json=" + b)
	if err != nil {
		t.Fatal(err)
	}
	if pins["model.safetensors"] != a || pins["1_Pooling/config.json"] != strings.ToLower(b) || len(pins) != 2 {
		t.Errorf("pins %v", pins)
	}
	// sha256sum's output, text and binary mode, with a comment.
	file := filepath.Join(t.TempDir(), "SHA256SUMS")
	os.WriteFile(file, []byte("# pins\n"+a+"  model.safetensors\n"+b+" *./1_Pooling/config.json\n\n"), 0o644)
	fromFile, err := ParsePins("@" + file)
	if err != nil {
		t.Fatal(err)
	}
	if len(fromFile) != 2 || fromFile["1_Pooling/config.json"] != pins["1_Pooling/config.json"] {
		t.Errorf("from file: %v", fromFile)
	}
	for in, want := range map[string]string{
		"model.safetensors":     "want <file>=<sha256>",
		"model.safetensors=abc": "is not a SHA-256",
		"../etc/passwd=" + a:    "inside the model repository",
		"/abs=" + a:             "inside the model repository",
		"a//b=" + a:             "inside the model repository",
		"x=" + a + ",x=" + strings.Repeat("c", 64): "pinned twice",
		"":                   "no pins",
		"@/nonexistent/pins": "pin file",
	} {
		if _, err := ParsePins(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", in, err, want)
		}
	}
}

func TestParseHubRef(t *testing.T) {
	for in, want := range map[string]HubRef{
		"sentence-transformers/all-MiniLM-L6-v2@c9745ed1d9f207416be6d2e6f8de32d1f16199bf": {"sentence-transformers/all-MiniLM-L6-v2", "c9745ed1d9f207416be6d2e6f8de32d1f16199bf"},
		"minishlab/potion-base-8M@main": {"minishlab/potion-base-8M", "main"},
		"bert-base-uncased@v1.0":        {"bert-base-uncased", "v1.0"},
		"org/name@refs/pr/1":            {"org/name", "refs/pr/1"},
	} {
		got, err := ParseHubRef(in)
		if err != nil || got != want {
			t.Errorf("%q: %+v, %v", in, got, err)
		}
	}
	for _, in := range []string{"org/name", "org/name@", "a/b/c@main", "../x@main", "org/na me@main", "org/name@../x", "@main"} {
		if _, err := ParseHubRef(in); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}
