package hfmodel

import (
	"github.com/strata-kb/strata/embedder/engine/kernel"

	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// bertConfig is the part of a transformers BertConfig (config.json) the
// forward pass needs.
type bertConfig struct {
	ModelType        string  `json:"model_type"`
	HiddenSize       int     `json:"hidden_size"`
	Layers           int     `json:"num_hidden_layers"`
	Heads            int     `json:"num_attention_heads"`
	Intermediate     int     `json:"intermediate_size"`
	LayerNormEps     float64 `json:"layer_norm_eps"`
	MaxPositions     int     `json:"max_position_embeddings"`
	TypeVocabSize    int     `json:"type_vocab_size"`
	VocabSize        int     `json:"vocab_size"`
	HiddenAct        string  `json:"hidden_act"`
	PositionEmbedder string  `json:"position_embedding_type"`
}

func readBertConfig(path string) (bertConfig, error) {
	c := bertConfig{LayerNormEps: 1e-12, HiddenAct: "gelu", TypeVocabSize: 2, PositionEmbedder: "absolute"}
	data, err := os.ReadFile(path)
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	var bad []string
	if c.ModelType != "bert" && c.ModelType != "" {
		bad = append(bad, fmt.Sprintf("model_type %q (only bert)", c.ModelType))
	}
	if c.PositionEmbedder != "absolute" {
		bad = append(bad, fmt.Sprintf("position_embedding_type %q (only absolute)", c.PositionEmbedder))
	}
	if _, ok := activations[c.HiddenAct]; !ok {
		bad = append(bad, fmt.Sprintf("hidden_act %q (gelu, gelu_new, gelu_pytorch_tanh, relu)", c.HiddenAct))
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"hidden_size", c.HiddenSize}, {"num_hidden_layers", c.Layers}, {"num_attention_heads", c.Heads},
		{"intermediate_size", c.Intermediate}, {"max_position_embeddings", c.MaxPositions}, {"type_vocab_size", c.TypeVocabSize}} {
		if f.v <= 0 {
			bad = append(bad, f.name+" missing or not positive")
		}
	}
	if c.Heads > 0 && c.HiddenSize%c.Heads != 0 {
		bad = append(bad, fmt.Sprintf("hidden_size %d is not a multiple of num_attention_heads %d", c.HiddenSize, c.Heads))
	}
	if len(bad) > 0 {
		return c, fmt.Errorf("%s: unsupported BERT configuration: %s", path, strings.Join(bad, "; "))
	}
	return c, nil
}

// activations are transformers' ACT2FN entries this package implements.
var activations = map[string]func([]float32){
	"gelu": geluErf, "gelu_new": geluTanh, "gelu_pytorch_tanh": geluTanh, "relu": relu,
}

// bertLayer holds one encoder layer; the query, key and value projections
// are concatenated into one [3H, H] weight so they run as one matmul.
type bertLayer struct {
	qkvW, qkvB     []float32
	attnW, attnB   []float32 // attention.output.dense
	ln1G, ln1B     []float32 // attention.output.LayerNorm
	interW, interB []float32 // intermediate.dense
	outW, outB     []float32 // output.dense
	ln2G, ln2B     []float32 // output.LayerNorm
}

// bert is a BertModel's encoder with its weights as float32.
type bert struct {
	cfg            bertConfig
	word, pos, typ []float32 // typ: the token type 0 row
	embG, embB     []float32
	layers         []bertLayer
	act            func([]float32)
	vocab          int
}

// loadBert reads the weights of a transformers BertModel from model.safetensors,
// with or without the "bert." prefix a BertFor... checkpoint adds.
func loadBert(st *safetensors, cfg bertConfig) (*bert, error) {
	prefix := ""
	for _, name := range st.names() {
		if p, ok := strings.CutSuffix(name, "embeddings.word_embeddings.weight"); ok {
			prefix = p
			break
		}
	}
	H, I := cfg.HiddenSize, cfg.Intermediate
	var errs []error
	get := func(name string, shape ...int) []float32 {
		v, _, err := st.float32s(prefix+name, shape...)
		if errors.Is(err, errNoTensor) && strings.HasSuffix(name, "LayerNorm.weight") {
			v, _, err = st.float32s(prefix+strings.TrimSuffix(name, "weight")+"gamma", shape...)
		} else if errors.Is(err, errNoTensor) && strings.HasSuffix(name, "LayerNorm.bias") {
			v, _, err = st.float32s(prefix+strings.TrimSuffix(name, "bias")+"beta", shape...)
		}
		if err != nil {
			errs = append(errs, err)
		}
		return v
	}
	b := &bert{cfg: cfg, act: activations[cfg.HiddenAct]}
	var wshape []int
	b.word, wshape, _ = st.float32s(prefix+"embeddings.word_embeddings.weight", -1, H)
	if b.word == nil {
		get("embeddings.word_embeddings.weight", -1, H) // records the error
	} else {
		b.vocab = wshape[0]
	}
	b.pos = get("embeddings.position_embeddings.weight", cfg.MaxPositions, H)
	if typ := get("embeddings.token_type_embeddings.weight", cfg.TypeVocabSize, H); typ != nil {
		b.typ = typ[:H]
	}
	b.embG = get("embeddings.LayerNorm.weight", H)
	b.embB = get("embeddings.LayerNorm.bias", H)
	for l := range cfg.Layers {
		p := fmt.Sprintf("encoder.layer.%d.", l)
		var L bertLayer
		q, k, v := get(p+"attention.self.query.weight", H, H), get(p+"attention.self.key.weight", H, H), get(p+"attention.self.value.weight", H, H)
		qb, kb, vb := get(p+"attention.self.query.bias", H), get(p+"attention.self.key.bias", H), get(p+"attention.self.value.bias", H)
		L.qkvW = append(append(append(make([]float32, 0, 3*H*H), q...), k...), v...)
		L.qkvB = append(append(append(make([]float32, 0, 3*H), qb...), kb...), vb...)
		L.attnW, L.attnB = get(p+"attention.output.dense.weight", H, H), get(p+"attention.output.dense.bias", H)
		L.ln1G, L.ln1B = get(p+"attention.output.LayerNorm.weight", H), get(p+"attention.output.LayerNorm.bias", H)
		L.interW, L.interB = get(p+"intermediate.dense.weight", I, H), get(p+"intermediate.dense.bias", I)
		L.outW, L.outB = get(p+"output.dense.weight", H, I), get(p+"output.dense.bias", H)
		L.ln2G, L.ln2B = get(p+"output.LayerNorm.weight", H), get(p+"output.LayerNorm.bias", H)
		b.layers = append(b.layers, L)
	}
	if len(errs) > 0 {
		if len(errs) > 4 {
			errs = append(errs[:4], fmt.Errorf("and %d more", len(errs)-4))
		}
		return nil, fmt.Errorf("BERT weights (tensor prefix %q): %w", prefix, errors.Join(errs...))
	}
	return b, nil
}

// forward runs the encoder over several token sequences packed into one
// [T, H] activation (T = their total length) and pools each. The dense
// layers see all T rows at once; attention runs per sequence, so no
// sequence sees another's tokens and none needs padding: this equals
// running each alone with an attention mask of ones.
func (b *bert) forward(seqs [][]int32, pool poolMode, threads int) [][]float32 {
	H, I, nh := b.cfg.HiddenSize, b.cfg.Intermediate, b.cfg.Heads
	dh := H / nh
	T := 0
	offs := make([]int, len(seqs))
	for s, ids := range seqs {
		offs[s] = T
		T += len(ids)
	}
	x := make([]float32, T*H)
	tmp := make([]float32, T*H)
	ctx := make([]float32, T*H)
	qkv := make([]float32, T*3*H)
	inter := make([]float32, T*I)
	eps := float32(b.cfg.LayerNormEps)

	for s, ids := range seqs {
		for i, id := range ids {
			row := x[(offs[s]+i)*H : (offs[s]+i+1)*H]
			wrow := b.word[int(id)*H : (int(id)+1)*H]
			prow := b.pos[i*H : (i+1)*H]
			for d := range row {
				row[d] = wrow[d] + prow[d] + b.typ[d]
			}
			layerNorm(row, b.embG, b.embB, eps)
		}
	}
	scale := float32(1 / math.Sqrt(float64(dh)))
	for _, L := range b.layers {
		linear(qkv, x, L.qkvW, L.qkvB, T, H, 3*H, threads)
		jobs := len(seqs) * nh
		parallelFor(threads, jobs, func() func(int) {
			var qh, kh, vt, sc, oh []float32
			return func(j int) {
				s, h := j/nh, j%nh
				n, o := len(seqs[s]), offs[s]
				qh, kh, vt = grow(qh, n*dh), grow(kh, n*dh), grow(vt, dh*n)
				sc, oh = grow(sc, n*n), grow(oh, n*dh)
				for i := range n {
					r := qkv[(o+i)*3*H:]
					copy(qh[i*dh:(i+1)*dh], r[h*dh:])
					copy(kh[i*dh:(i+1)*dh], r[H+h*dh:])
					for d := range dh {
						vt[d*n+i] = r[2*H+h*dh+d]
					}
				}
				kernel.MatmulCols(sc, qh, kh, n, dh, n, 0, n)
				for i := range n {
					softmaxScaled(sc[i*n:(i+1)*n], scale)
				}
				kernel.MatmulCols(oh, sc, vt, n, n, dh, 0, dh)
				for i := range n {
					copy(ctx[(o+i)*H+h*dh:(o+i)*H+(h+1)*dh], oh[i*dh:(i+1)*dh])
				}
			}
		})
		linear(tmp, ctx, L.attnW, L.attnB, T, H, H, threads)
		addLayerNorm(tmp, x, L.ln1G, L.ln1B, H, eps)
		x, tmp = tmp, x
		linear(inter, x, L.interW, L.interB, T, H, I, threads)
		b.act(inter)
		linear(tmp, inter, L.outW, L.outB, T, I, H, threads)
		addLayerNorm(tmp, x, L.ln2G, L.ln2B, H, eps)
		x, tmp = tmp, x
	}

	out := make([][]float32, len(seqs))
	for s, ids := range seqs {
		out[s] = pool.apply(x[offs[s]*H:(offs[s]+len(ids))*H], len(ids), H)
	}
	return out
}

func grow(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}

// layerNorm normalises row in place to zero mean and unit variance (biased,
// as torch.nn.LayerNorm), then scales by g and shifts by b.
func layerNorm(row, g, b []float32, eps float32) {
	var sum float64
	for _, v := range row {
		sum += float64(v)
	}
	mean := sum / float64(len(row))
	var ss float64
	for _, v := range row {
		d := float64(v) - mean
		ss += d * d
	}
	inv := float32(1 / math.Sqrt(ss/float64(len(row))+float64(eps)))
	m := float32(mean)
	g, b = g[:len(row)], b[:len(row)]
	for i, v := range row {
		row[i] = (v-m)*inv*g[i] + b[i]
	}
}

// addLayerNorm sets every row of y to LayerNorm(y + residual).
func addLayerNorm(y, residual, g, b []float32, H int, eps float32) {
	for i := 0; i < len(y); i += H {
		row, res := y[i:i+H], residual[i:i+H]
		for d := range row {
			row[d] += res[d]
		}
		layerNorm(row, g, b, eps)
	}
}

// geluTanh is the tanh approximation ("gelu_new", "gelu_pytorch_tanh").
func geluTanh(v []float32) {
	c := math.Sqrt(2 / math.Pi)
	for i, x := range v {
		f := float64(x)
		v[i] = float32(0.5 * f * (1 + math.Tanh(c*(f+0.044715*f*f*f))))
	}
}

func relu(v []float32) {
	for i, x := range v {
		if x < 0 {
			v[i] = 0
		}
	}
}

// poolMode is how sentence-transformers' Pooling module turns the token
// vectors into one.
type poolMode string

const (
	poolMean poolMode = "mean"
	poolCLS  poolMode = "cls"
	poolMax  poolMode = "max"
)

// apply pools the n token vectors of one sequence (every token counts: the
// attention mask is all ones, [CLS] and [SEP] included).
func (p poolMode) apply(x []float32, n, H int) []float32 {
	out := make([]float32, H)
	if n == 0 { // no tokens at all (a tokenizer without [CLS] and [SEP])
		return out
	}
	switch p {
	case poolCLS:
		copy(out, x[:H])
	case poolMax:
		copy(out, x[:H])
		for i := 1; i < n; i++ {
			for d, v := range x[i*H : (i+1)*H] {
				out[d] = max(out[d], v)
			}
		}
	default:
		sum := make([]float64, H)
		for i := range n {
			for d, v := range x[i*H : (i+1)*H] {
				sum[d] += float64(v)
			}
		}
		for d := range out {
			out[d] = float32(sum[d] / float64(max(n, 1)))
		}
	}
	return out
}

// readPooling reads a sentence-transformers 1_Pooling/config.json.
func readPooling(path string) (poolMode, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var c map[string]any
	if err := json.Unmarshal(data, &c); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	var on []string
	for k, v := range c {
		if strings.HasPrefix(k, "pooling_mode_") && v == true {
			on = append(on, strings.TrimPrefix(k, "pooling_mode_"))
		}
	}
	if len(on) != 1 {
		return "", fmt.Errorf("%s: pooling modes %v: exactly one of cls_token, mean_tokens, max_tokens must be true", path, on)
	}
	switch on[0] {
	case "cls_token":
		return poolCLS, nil
	case "mean_tokens":
		return poolMean, nil
	case "max_tokens":
		return poolMax, nil
	}
	return "", fmt.Errorf("%s: pooling mode %s is not supported (cls_token, mean_tokens, max_tokens)", path, on[0])
}

// readSentenceBertConfig returns max_seq_length and do_lower_case from a
// sentence_bert_config.json (zero and false when absent).
func readSentenceBertConfig(dir string) (maxSeq int, lower bool, found bool, err error) {
	data, err := os.ReadFile(filepath.Join(dir, "sentence_bert_config.json"))
	if errors.Is(err, os.ErrNotExist) {
		return 0, false, false, nil
	} else if err != nil {
		return 0, false, false, err
	}
	var c struct {
		MaxSeqLength int  `json:"max_seq_length"`
		DoLowerCase  bool `json:"do_lower_case"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return 0, false, false, fmt.Errorf("sentence_bert_config.json: %w", err)
	}
	return c.MaxSeqLength, c.DoLowerCase, true, nil
}
