package hfmodel

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/strata-kb/strata/embedder/engine/kernel"
)

// Model is a loaded local model, static or BERT. It is immutable after
// Load and safe for concurrent use; it implements engine.Provider.
type Model struct {
	name     string
	kind     string // "static" or "bert"
	dim      int
	tokenize func(string) []int32
	tok      *Tokenizer
	// static models
	static *static
	// BERT models
	bert      *bert
	pool      poolMode
	normalize bool
	// workers bounds the goroutines one Embed call uses; 0 means GOMAXPROCS.
	workers int
}

// Model names the model: its name (the directory's, or the hub id's last
// part) and the first 12 hex digits of a SHA-256 over the files it was
// loaded from, so other weights never share a name.
func (m *Model) Model() string { return m.name }

// Dimensions is the length of every vector Embed returns.
func (m *Model) Dimensions() int { return m.dim }

// Kind is "static" (model2vec) or "bert".
func (m *Model) Kind() string { return m.kind }

// Tokenizer is the model's tokenizer.
func (m *Model) Tokenizer() *Tokenizer { return m.tok }

// Tokenize returns the token ids the model runs on for text (with special
// tokens and truncation for BERT; as model2vec filters them for static).
func (m *Model) Tokenize(text string) []int32 { return m.tokenize(text) }

// WithWorkers returns a copy of m whose Embed uses at most n goroutines.
func (m *Model) WithWorkers(n int) *Model {
	c := *m
	c.workers = n
	return &c
}

// module is one entry of a sentence-transformers modules.json.
type module struct {
	Path string `json:"path"`
	Type string `json:"type"`
}

// Load reads a model directory in Hugging Face layout. It never touches the
// network. name labels the model (see Model); "" uses the directory name.
//
// A model.safetensors with an "embeddings" tensor is a model2vec static
// model (with tokenizer.json and config.json); anything else is a BERT
// encoder (config.json, tokenizer.json or vocab.txt). A sentence-
// transformers modules.json chooses where the transformer lives, the
// pooling (its Pooling module's config.json: mean, cls or max) and whether
// vectors are normalised (a Normalize module); without modules.json a BERT
// model is mean-pooled and not normalised, as sentence-transformers wraps a
// plain transformers model.
func Load(dir, name string) (*Model, error) {
	m, err := load(dir, name)
	if err != nil {
		return nil, fmt.Errorf("load local model %s: %w", dir, err)
	}
	return m, nil
}

func load(dir, name string) (*Model, error) {
	if st, err := os.Stat(dir); err != nil {
		return nil, err
	} else if !st.IsDir() {
		return nil, errors.New("not a directory")
	}
	if name == "" {
		name = filepath.Base(filepath.Clean(dir))
	}
	files := map[string]bool{} // read, relative to dir, for the fingerprint
	use := func(rel string) string { files[filepath.ToSlash(rel)] = true; return filepath.Join(dir, rel) }

	transformer, poolDir, normalize := ".", "", false
	var modules []module
	if data, err := os.ReadFile(use("modules.json")); err == nil {
		if err := json.Unmarshal(data, &modules); err != nil {
			return nil, fmt.Errorf("modules.json: %w", err)
		}
	} else if errors.Is(err, os.ErrNotExist) {
		delete(files, "modules.json")
	} else {
		return nil, err
	}
	for _, mod := range modules {
		kind := mod.Type[strings.LastIndex(mod.Type, ".")+1:]
		if strings.Contains(mod.Path, "..") || filepath.IsAbs(mod.Path) {
			return nil, fmt.Errorf("modules.json: bad path %q", mod.Path)
		}
		switch kind {
		case "Transformer", "StaticEmbedding":
			transformer = mod.Path
		case "Pooling":
			poolDir = mod.Path
		case "Normalize":
			normalize = true
		default:
			return nil, fmt.Errorf("modules.json: module %s is not supported (Transformer, Pooling, Normalize; static models in model2vec's layout)", mod.Type)
		}
	}

	st, err := openSafetensors(use(filepath.Join(transformer, "model.safetensors")))
	if err != nil {
		return nil, err
	}
	defer st.Close()
	tok, tokFiles, err := loadTokenizer(filepath.Join(dir, transformer))
	if err != nil {
		return nil, err
	}
	for _, f := range tokFiles {
		use(filepath.Join(transformer, f))
	}

	m := &Model{tok: tok}
	if _, ok := st.tensors["embeddings"]; ok {
		s, err := loadStatic(st, tok, use(filepath.Join(transformer, "config.json")))
		if err != nil {
			return nil, err
		}
		m.kind, m.static, m.dim, m.tokenize = "static", s, s.dim, s.tokenize
	} else {
		if err := m.loadBert(dir, transformer, poolDir, st, use); err != nil {
			return nil, err
		}
		m.normalize = normalize
	}
	fp, err := fingerprint(dir, files)
	if err != nil {
		return nil, err
	}
	m.name = name + "-" + fp[:12]
	return m, nil
}

func (m *Model) loadBert(dir, transformer, poolDir string, st *safetensors, use func(string) string) error {
	cfg, err := readBertConfig(use(filepath.Join(transformer, "config.json")))
	if err != nil {
		return err
	}
	b, err := loadBert(st, cfg)
	if err != nil {
		return err
	}
	if b.vocab < m.tok.VocabSize() {
		return fmt.Errorf("the tokenizer has %d tokens but word_embeddings only %d rows", m.tok.VocabSize(), b.vocab)
	}
	m.pool = poolMean
	if poolDir != "" {
		if m.pool, err = readPooling(use(filepath.Join(poolDir, "config.json"))); err != nil {
			return err
		}
	}
	maxSeq, lower, found, err := readSentenceBertConfig(filepath.Join(dir, transformer))
	if err != nil {
		return err
	}
	if found {
		use(filepath.Join(transformer, "sentence_bert_config.json"))
	}
	// The length sentence-transformers truncates to: max_seq_length, else
	// the tokenizer's own, never more than there are position embeddings.
	n := m.tok.maxLength
	if maxSeq > 0 {
		n = maxSeq
	}
	if n <= 0 || n > cfg.MaxPositions {
		n = cfg.MaxPositions
	}
	m.tok.maxLength = n
	m.kind, m.bert, m.dim = "bert", b, cfg.HiddenSize
	m.tokenize = m.tok.Encode
	if lower {
		m.tokenize = func(s string) []int32 { return m.tok.Encode(strings.ToLower(s)) }
	}
	return nil
}

// fingerprint is the SHA-256 of "name sha256\n" lines of the files, sorted.
func fingerprint(dir string, files map[string]bool) (string, error) {
	names := make([]string, 0, len(files))
	for f := range files {
		names = append(names, f)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, f := range names {
		sum, err := fileSHA256(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %s\n", filepath.Clean(f), sum)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Packing limits for BERT: a pack holds texts of similar length whose
// tokens together are at most packTokens (one long text may exceed it).
const (
	packTokens = 512
	packTexts  = 64
)

// Embed returns one vector per text, in order. Texts are tokenised, sorted
// by length and packed; packs run in parallel (up to GOMAXPROCS, or
// WithWorkers), and when there are fewer packs than workers each pack's
// matrix products are split across the rest. ctx is checked between packs.
func (m *Model) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	if len(texts) == 0 {
		return out, nil
	}
	workers := m.workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ids := make([][]int32, len(texts))
	if err := kernel.Parallel(ctx, workers, len(texts), func(k int) error {
		ids[k] = m.tokenize(texts[k])
		return nil
	}); err != nil {
		return nil, err
	}
	if m.static != nil {
		for k := range ids {
			out[k] = m.static.embedOne(ids[k])
		}
		return out, nil
	}
	packs := packByLength(ids)
	running := min(workers, len(packs))
	threads := max(1, workers/running)
	err := kernel.Parallel(ctx, running, len(packs), func(p int) error {
		seqs := make([][]int32, len(packs[p]))
		for k, idx := range packs[p] {
			seqs[k] = ids[idx]
		}
		vecs := m.bert.forward(seqs, m.pool, threads)
		for k, idx := range packs[p] {
			if m.normalize {
				l2normalize(vecs[k])
			}
			out[idx] = vecs[k]
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// l2normalize divides v by max(‖v‖, 1e-12), as torch's F.normalize.
func l2normalize(v []float32) {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	inv := 1 / max(math.Sqrt(ss), 1e-12)
	for i := range v {
		v[i] = float32(float64(v[i]) * inv)
	}
}

// packByLength orders the texts by token count and cuts the order into packs.
func packByLength(ids [][]int32) [][]int {
	order := make([]int, len(ids))
	for k := range order {
		order[k] = k
	}
	sort.SliceStable(order, func(x, y int) bool { return len(ids[order[x]]) < len(ids[order[y]]) })
	var packs [][]int
	var cur []int
	tokens := 0
	for _, k := range order {
		n := len(ids[k])
		if len(cur) > 0 && (len(cur) == packTexts || tokens+n > packTokens) {
			packs = append(packs, cur)
			cur, tokens = nil, 0
		}
		cur = append(cur, k)
		tokens += n
	}
	if len(cur) > 0 {
		packs = append(packs, cur)
	}
	return packs
}

// parallelFor runs jobs 0..n-1 on up to workers goroutines; newWorker makes
// each goroutine's job function (so it can keep its own scratch buffers).
func parallelFor(workers, n int, newWorker func() func(int)) {
	workers = max(1, min(workers, n))
	var next atomic.Int64
	var wg sync.WaitGroup
	run := func() {
		defer wg.Done()
		f := newWorker()
		for {
			k := int(next.Add(1) - 1)
			if k >= n {
				return
			}
			f(k)
		}
	}
	wg.Add(workers)
	for w := 1; w < workers; w++ {
		go run()
	}
	run()
	wg.Wait()
}
