package hfmodel

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"sort"
	"unicode/utf8"
)

// static is a model2vec static embedding model: one vector per token, a
// text's embedding is the mean of its tokens' vectors. As model2vec's
// StaticModel.encode does, a text is first cut to maxTokens × the median
// vocabulary token length in characters, tokenised without special tokens,
// its unknown tokens dropped and the rest cut to maxTokens; a text with no
// tokens left embeds as zeros; config.json's "normalize" makes the result
// unit length. Optional tensors: "weights" (one factor per token id) and
// "mapping" (token id -> row of "embeddings", for quantised vocabularies).
type static struct {
	emb       []float32 // [rows, dim]
	dim       int
	weights   []float32 // per token id, or nil
	mapping   []int     // token id -> row, or nil
	normalize bool
	tok       *Tokenizer
	maxChars  int // model2vec's max_length * median_token_length
}

// staticMaxTokens is model2vec's default max_length of encode.
const staticMaxTokens = 512

func loadStatic(st *safetensors, tok *Tokenizer, configPath string) (*static, error) {
	emb, shape, err := st.float32s("embeddings", -1, -1)
	if err != nil {
		return nil, err
	}
	s := &static{emb: emb, dim: shape[1], tok: tok}
	rows := shape[0]
	if w, _, err := st.float32s("weights", tok.VocabSize()); err == nil {
		s.weights = w
	} else if !errors.Is(err, errNoTensor) {
		return nil, err
	}
	if m, mshape, err := st.ints("mapping"); err == nil {
		if len(mshape) != 1 || mshape[0] != tok.VocabSize() {
			return nil, fmt.Errorf("mapping: shape %v, want [%d]", mshape, tok.VocabSize())
		}
		for id, r := range m {
			if r < 0 || r >= rows {
				return nil, fmt.Errorf("mapping: token %d maps to row %d of %d", id, r, rows)
			}
		}
		s.mapping = m
	} else if !errors.Is(err, errNoTensor) {
		return nil, err
	} else if rows != tok.VocabSize() {
		return nil, fmt.Errorf("embeddings: %d rows for a vocabulary of %d tokens (and no mapping)", rows, tok.VocabSize())
	}
	var cfg struct {
		Normalize bool `json:"normalize"`
	}
	data, err := os.ReadFile(configPath)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", configPath, err)
	}
	s.normalize = cfg.Normalize
	s.maxChars = staticMaxTokens * medianTokenLength(tok)
	return s, nil
}

// medianTokenLength is int(np.median(len(token) for token in vocabulary)),
// in characters (the median of an even count is the mean of the middle two).
func medianTokenLength(tok *Tokenizer) int {
	lens := make([]int, 0, len(tok.vocab))
	for t := range tok.vocab {
		lens = append(lens, utf8.RuneCountInString(t))
	}
	sort.Ints(lens)
	n := len(lens)
	if n%2 == 1 {
		return lens[n/2]
	}
	return (lens[n/2-1] + lens[n/2]) / 2
}

// tokenize is model2vec's StaticModel.tokenize with max_length 512.
func (s *static) tokenize(text string) []int32 {
	if utf8.RuneCountInString(text) > s.maxChars {
		n := 0
		for i := range text {
			if n == s.maxChars {
				text = text[:i]
				break
			}
			n++
		}
	}
	ids := s.tok.EncodePieces(text)
	kept := ids[:0]
	for _, id := range ids {
		if id != s.tok.unkID && int(id) < s.tok.VocabSize() {
			kept = append(kept, id)
		}
	}
	return kept[:min(len(kept), staticMaxTokens)]
}

func (s *static) embedOne(ids []int32) []float32 {
	out := make([]float32, s.dim)
	if len(ids) == 0 {
		return out
	}
	sum := make([]float64, s.dim)
	for _, id := range ids {
		r := int(id)
		if s.mapping != nil {
			r = s.mapping[id]
		}
		w := 1.0
		if s.weights != nil {
			w = float64(s.weights[id])
		}
		for d, v := range s.emb[r*s.dim : (r+1)*s.dim] {
			sum[d] += w * float64(v)
		}
	}
	var ss float64
	for d := range sum {
		sum[d] /= float64(len(ids))
		ss += sum[d] * sum[d]
	}
	scale := 1.0
	if s.normalize {
		scale = 1 / (math.Sqrt(ss) + 1e-32)
	}
	for d := range out {
		out[d] = float32(sum[d] * scale)
	}
	return out
}
