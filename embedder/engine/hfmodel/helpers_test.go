package hfmodel

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// This file builds model directories for the tests: real safetensors,
// tokenizer.json / vocab.txt and config files, written by code of its own
// (not the package's readers), with random weights.

// testTensor is a tensor to write. Values are float64; they are stored in
// dtype, and quantized() gives the exact values the file holds, which is
// what the reference implementation computes with.
type testTensor struct {
	name  string
	dtype string // F32, F16, BF16, I64
	shape []int
	data  []float64
}

// encodeF16 rounds v to the nearest IEEE half (ties to even), written from
// the format's definition: 1 sign bit, 5 exponent bits (bias 15), 10
// fraction bits, subnormals below 2^-14.
func encodeF16(v float64) uint16 {
	var sign uint16
	if math.Signbit(v) {
		sign = 0x8000
		v = -v
	}
	if v == 0 {
		return sign
	}
	if v >= 65520 { // rounds to infinity
		return sign | 0x7c00
	}
	exp := math.Floor(math.Log2(v))
	if exp < -14 { // subnormal: units of 2^-24
		return sign | uint16(math.RoundToEven(v/math.Pow(2, -24)))
	}
	m := math.RoundToEven((v/math.Pow(2, exp) - 1) * 1024)
	if m == 1024 {
		m = 0
		exp++
	}
	return sign | uint16(exp+15)<<10 | uint16(m)
}

func decodeF16(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	e := int(h>>10) & 0x1f
	f := float64(h & 0x3ff)
	switch e {
	case 0:
		return sign * f * math.Pow(2, -24)
	case 31:
		if f == 0 {
			return math.Inf(int(sign))
		}
		return math.NaN()
	}
	return sign * (1 + f/1024) * math.Pow(2, float64(e-15))
}

// encodeBF16 rounds a float32 to bfloat16 (the top 16 bits, ties to even).
func encodeBF16(v float64) uint16 {
	b := math.Float32bits(float32(v))
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

func decodeBF16(h uint16) float64 { return float64(math.Float32frombits(uint32(h) << 16)) }

// quantized returns the values as stored.
func (t testTensor) quantized() []float64 {
	out := make([]float64, len(t.data))
	for i, v := range t.data {
		switch t.dtype {
		case "F32":
			out[i] = float64(float32(v))
		case "F16":
			out[i] = decodeF16(encodeF16(v))
		case "BF16":
			out[i] = decodeBF16(encodeBF16(v))
		default:
			out[i] = v
		}
	}
	return out
}

// writeSafetensors writes tensors in the safetensors layout, the header
// padded with spaces to a multiple of 8 bytes as the reference writer does.
func writeSafetensors(t testing.TB, path string, tensors []testTensor) {
	t.Helper()
	header := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	var data []byte
	for _, tt := range tensors {
		begin := len(data)
		for _, v := range tt.data {
			switch tt.dtype {
			case "F32":
				data = binary.LittleEndian.AppendUint32(data, math.Float32bits(float32(v)))
			case "F16":
				data = binary.LittleEndian.AppendUint16(data, encodeF16(v))
			case "BF16":
				data = binary.LittleEndian.AppendUint16(data, encodeBF16(v))
			case "I64":
				data = binary.LittleEndian.AppendUint64(data, uint64(int64(v)))
			case "I32":
				data = binary.LittleEndian.AppendUint32(data, uint32(int32(v)))
			default:
				t.Fatalf("writeSafetensors: dtype %s", tt.dtype)
			}
		}
		header[tt.name] = map[string]any{"dtype": tt.dtype, "shape": tt.shape, "data_offsets": []int{begin, len(data)}}
	}
	h, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	for len(h)%8 != 0 {
		h = append(h, ' ')
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	out = append(append(out, h...), data...)
	writeFile(t, path, out)
}

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeJSON(t testing.TB, path string, v any) {
	t.Helper()
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, data)
}

// testVocab is a small WordPiece vocabulary: the BERT specials, words,
// continuation pieces, punctuation and two CJK characters.
var testVocab = strings.Fields(`[PAD] [UNK] [CLS] [SEP] [MASK]
	the quick brown fox jump ##s ##ed ##ing over lazy dog un ##aff ##able cafe naive
	hello world , . ! ? ' - ( ) $ 中 文 a b c i ##a ##b ##c ##̇ resume is was
	embed ##ding model text vector search file [ ]`)

// tokenizerJSON is a tokenizer.json as Hugging Face tokenizers writes it
// for BERT: BertNormalizer, BertPreTokenizer, WordPiece, [CLS] $A [SEP].
func testTokenizerJSON(vocab []string, lowercase bool, stripAccents any, maxLength int) map[string]any {
	v := map[string]int{}
	for i, tok := range vocab {
		v[tok] = i
	}
	var added []map[string]any
	for i, tok := range vocab {
		if strings.HasPrefix(tok, "[") && strings.HasSuffix(tok, "]") {
			added = append(added, map[string]any{"id": i, "content": tok, "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true})
		}
	}
	var truncation any
	if maxLength > 0 {
		truncation = map[string]any{"direction": "Right", "max_length": maxLength, "strategy": "LongestFirst", "stride": 0}
	}
	id := func(tok string) int { return v[tok] }
	return map[string]any{
		"version":      "1.0",
		"truncation":   truncation,
		"padding":      nil,
		"added_tokens": added,
		"normalizer": map[string]any{"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
			"strip_accents": stripAccents, "lowercase": lowercase},
		"pre_tokenizer": map[string]any{"type": "BertPreTokenizer"},
		"post_processor": map[string]any{
			"type": "TemplateProcessing",
			"single": []any{
				map[string]any{"SpecialToken": map[string]any{"id": "[CLS]", "type_id": 0}},
				map[string]any{"Sequence": map[string]any{"id": "A", "type_id": 0}},
				map[string]any{"SpecialToken": map[string]any{"id": "[SEP]", "type_id": 0}},
			},
			"pair": []any{},
			"special_tokens": map[string]any{
				"[CLS]": map[string]any{"id": "[CLS]", "ids": []int{id("[CLS]")}, "tokens": []string{"[CLS]"}},
				"[SEP]": map[string]any{"id": "[SEP]", "ids": []int{id("[SEP]")}, "tokens": []string{"[SEP]"}},
			},
		},
		"decoder": map[string]any{"type": "WordPiece", "prefix": "##", "cleanup": true},
		"model": map[string]any{"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
			"max_input_chars_per_word": 100, "vocab": v},
	}
}

func writeVocabTxt(t testing.TB, dir string, vocab []string, tokenizerConfig map[string]any) {
	writeFile(t, filepath.Join(dir, "vocab.txt"), []byte(strings.Join(vocab, "\n")+"\n"))
	if tokenizerConfig != nil {
		writeJSON(t, filepath.Join(dir, "tokenizer_config.json"), tokenizerConfig)
	}
}

// testBert describes a tiny random BERT model.
type testBert struct {
	H, L, heads, I, P, types int
	act                      string
	eps                      float64
	dtype                    string // of the weights
	prefix                   string // "bert." or ""
	pooling                  string // "mean", "cls", "max"; "" writes no modules.json
	normalize                bool
	maxSeq                   int // sentence_bert_config.json max_seq_length, 0: none
	vocabTxt                 bool
	seed                     uint64
	std                      float64 // of the random weights
}

func tinyBert() testBert {
	return testBert{H: 32, L: 2, heads: 4, I: 64, P: 40, types: 2, act: "gelu", eps: 1e-12, dtype: "F32",
		pooling: "mean", normalize: true, seed: 1, std: 0.25}
}

// write puts the model into dir and returns its weights as the file
// stores them, by name without prefix.
func (c testBert) write(t testing.TB, dir string, vocab []string) map[string][]float64 {
	t.Helper()
	rng := rand.New(rand.NewPCG(c.seed, 7))
	var tensors []testTensor
	add := func(name string, shape []int, gen func() float64) {
		n := 1
		for _, d := range shape {
			n *= d
		}
		data := make([]float64, n)
		for i := range data {
			data[i] = gen()
		}
		tensors = append(tensors, testTensor{name: name, dtype: c.dtype, shape: shape, data: data})
	}
	normal := func() float64 { return rng.NormFloat64() * c.std }
	gain := func() float64 { return 1 + rng.NormFloat64()*0.2 }
	bias := func() float64 { return rng.NormFloat64() * 0.1 }
	add("embeddings.word_embeddings.weight", []int{len(vocab), c.H}, func() float64 { return rng.NormFloat64() })
	add("embeddings.position_embeddings.weight", []int{c.P, c.H}, func() float64 { return rng.NormFloat64() * 0.5 })
	add("embeddings.token_type_embeddings.weight", []int{c.types, c.H}, func() float64 { return rng.NormFloat64() * 0.5 })
	add("embeddings.LayerNorm.weight", []int{c.H}, gain)
	add("embeddings.LayerNorm.bias", []int{c.H}, bias)
	for l := range c.L {
		p := "encoder.layer." + itoa(l) + "."
		for _, qkv := range []string{"query", "key", "value"} {
			add(p+"attention.self."+qkv+".weight", []int{c.H, c.H}, normal)
			add(p+"attention.self."+qkv+".bias", []int{c.H}, bias)
		}
		add(p+"attention.output.dense.weight", []int{c.H, c.H}, normal)
		add(p+"attention.output.dense.bias", []int{c.H}, bias)
		add(p+"attention.output.LayerNorm.weight", []int{c.H}, gain)
		add(p+"attention.output.LayerNorm.bias", []int{c.H}, bias)
		add(p+"intermediate.dense.weight", []int{c.I, c.H}, normal)
		add(p+"intermediate.dense.bias", []int{c.I}, bias)
		add(p+"output.dense.weight", []int{c.H, c.I}, func() float64 { return rng.NormFloat64() * c.std / 2 })
		add(p+"output.dense.bias", []int{c.H}, bias)
		add(p+"output.LayerNorm.weight", []int{c.H}, gain)
		add(p+"output.LayerNorm.bias", []int{c.H}, bias)
	}
	add("pooler.dense.weight", []int{c.H, c.H}, normal) // present in real checkpoints, unused
	weights := map[string][]float64{}
	for i := range tensors {
		weights[tensors[i].name] = tensors[i].quantized()
		tensors[i].name = c.prefix + tensors[i].name
	}
	// A buffer some checkpoints carry; integer, never read.
	pos := make([]float64, c.P)
	for i := range pos {
		pos[i] = float64(i)
	}
	tensors = append(tensors, testTensor{name: c.prefix + "embeddings.position_ids", dtype: "I64", shape: []int{1, c.P}, data: pos})
	// Shuffle the order: readers must go by the header, not by position.
	rng.Shuffle(len(tensors), func(i, j int) { tensors[i], tensors[j] = tensors[j], tensors[i] })
	writeSafetensors(t, filepath.Join(dir, "model.safetensors"), tensors)

	writeJSON(t, filepath.Join(dir, "config.json"), map[string]any{
		"architectures": []string{"BertModel"}, "model_type": "bert", "hidden_size": c.H, "num_hidden_layers": c.L,
		"num_attention_heads": c.heads, "intermediate_size": c.I, "hidden_act": c.act, "layer_norm_eps": c.eps,
		"max_position_embeddings": c.P, "type_vocab_size": c.types, "vocab_size": len(vocab),
		"hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1, "position_embedding_type": "absolute",
		"pad_token_id": 0, "torch_dtype": "float32",
	})
	if c.vocabTxt {
		writeVocabTxt(t, dir, vocab, map[string]any{"do_lower_case": true, "model_max_length": 512,
			"unk_token": "[UNK]", "cls_token": "[CLS]", "sep_token": "[SEP]", "pad_token": "[PAD]", "mask_token": "[MASK]"})
	} else {
		writeJSON(t, filepath.Join(dir, "tokenizer.json"), testTokenizerJSON(vocab, true, nil, 512))
	}
	if c.pooling != "" {
		modules := []map[string]any{
			{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
			{"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
		}
		if c.normalize {
			modules = append(modules, map[string]any{"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"})
		}
		writeJSON(t, filepath.Join(dir, "modules.json"), modules)
		writeJSON(t, filepath.Join(dir, "1_Pooling", "config.json"), map[string]any{
			"word_embedding_dimension": c.H, "pooling_mode_cls_token": c.pooling == "cls",
			"pooling_mode_mean_tokens": c.pooling == "mean", "pooling_mode_max_tokens": c.pooling == "max",
			"pooling_mode_mean_sqrt_len_tokens": false, "pooling_mode_weightedmean_tokens": false,
			"pooling_mode_lasttoken": false, "include_prompt": true,
		})
	}
	if c.maxSeq > 0 {
		writeJSON(t, filepath.Join(dir, "sentence_bert_config.json"), map[string]any{"max_seq_length": c.maxSeq, "do_lower_case": false})
	}
	return weights
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// testStatic describes a tiny model2vec model.
type testStatic struct {
	dim       int
	dtype     string
	normalize bool
	weights   bool // a per-token "weights" tensor
	mapping   int  // > 0: quantised to this many rows with a "mapping" tensor
	seed      uint64
}

// write puts the model into dir and returns the embedding rows, weights and
// mapping as stored.
func (c testStatic) write(t testing.TB, dir string, vocab []string) (emb [][]float64, weights []float64, mapping []int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(c.seed, 11))
	rows := len(vocab)
	if c.mapping > 0 {
		rows = c.mapping
	}
	e := testTensor{name: "embeddings", dtype: c.dtype, shape: []int{rows, c.dim}}
	for range rows * c.dim {
		e.data = append(e.data, rng.NormFloat64())
	}
	tensors := []testTensor{e}
	q := e.quantized()
	for r := range rows {
		emb = append(emb, q[r*c.dim:(r+1)*c.dim])
	}
	if c.weights {
		w := testTensor{name: "weights", dtype: "F32", shape: []int{len(vocab)}}
		for range vocab {
			w.data = append(w.data, 0.2+rng.Float64())
		}
		tensors = append(tensors, w)
		weights = w.quantized()
	}
	if c.mapping > 0 {
		m := testTensor{name: "mapping", dtype: "I64", shape: []int{len(vocab)}}
		for range vocab {
			r := rng.IntN(rows)
			m.data = append(m.data, float64(r))
			mapping = append(mapping, r)
		}
		tensors = append(tensors, m)
	}
	writeSafetensors(t, filepath.Join(dir, "model.safetensors"), tensors)
	writeJSON(t, filepath.Join(dir, "tokenizer.json"), testTokenizerJSON(vocab, true, nil, 0))
	writeJSON(t, filepath.Join(dir, "config.json"), map[string]any{"model_type": "model2vec", "architectures": []string{"StaticModel"},
		"hidden_dim": c.dim, "normalize": c.normalize, "apply_pca": c.dim, "apply_zipf": true, "seq_length": 1000000})
	modules := []map[string]any{{"idx": 0, "name": "0", "path": ".", "type": "sentence_transformers.models.StaticEmbedding"}}
	if c.normalize {
		modules = append(modules, map[string]any{"idx": 1, "name": "1", "path": "1_Normalize", "type": "sentence_transformers.models.Normalize"})
	}
	writeJSON(t, filepath.Join(dir, "modules.json"), modules)
	return emb, weights, mapping
}

func cosine(a []float32, b []float64) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * b[i]
		na += float64(a[i]) * float64(a[i])
		nb += b[i] * b[i]
	}
	if na == 0 && nb == 0 {
		return 1
	}
	return dot / math.Sqrt(na*nb)
}

// sortedKeys is for stable test output.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
