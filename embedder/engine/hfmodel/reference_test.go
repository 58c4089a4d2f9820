package hfmodel

import (
	"math"
)

// A deliberately naive float64 reference of what transformers' BertModel
// and sentence-transformers' Pooling and Normalize modules compute, written
// from the BERT paper and modeling_bert.py, sharing no code with the
// package: [][]float64 matrices, a padded batch with an attention mask (as
// transformers runs one), masked pooling as sentence-transformers does it.

type refMatrix [][]float64

// refLinear is nn.Linear: out[i][o] = b[o] + Σ_k in[i][k]·W[o][k], W stored [out, in].
func refLinear(in refMatrix, w, b []float64, outDim int) refMatrix {
	inDim := len(in[0])
	out := make(refMatrix, len(in))
	for i := range in {
		out[i] = make([]float64, outDim)
		for o := range outDim {
			s := b[o]
			for k := range inDim {
				s += in[i][k] * w[o*inDim+k]
			}
			out[i][o] = s
		}
	}
	return out
}

// refLayerNorm is nn.LayerNorm over the last dimension (biased variance).
func refLayerNorm(x []float64, g, b []float64, eps float64) []float64 {
	n := float64(len(x))
	mean := 0.0
	for _, v := range x {
		mean += v
	}
	mean /= n
	variance := 0.0
	for _, v := range x {
		variance += (v - mean) * (v - mean)
	}
	variance /= n
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = (v-mean)/math.Sqrt(variance+eps)*g[i] + b[i]
	}
	return out
}

func refAct(name string, x float64) float64 {
	switch name {
	case "gelu":
		return x / 2 * (1 + math.Erf(x/math.Sqrt2))
	case "gelu_new", "gelu_pytorch_tanh":
		return x / 2 * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*math.Pow(x, 3))))
	case "relu":
		return math.Max(0, x)
	}
	panic("activation " + name)
}

// refBertBatch runs a padded batch: ids padded with [PAD] (0) to the
// longest, attention_mask 1 for real tokens, token_type_ids 0, position_ids
// 0..n-1, then pooling and normalisation. It returns one vector per row.
func refBertBatch(c testBert, w map[string][]float64, batch [][]int32) [][]float64 {
	n := 0
	for _, ids := range batch {
		n = max(n, len(ids))
	}
	out := make([][]float64, len(batch))
	for r, ids := range batch {
		padded := make([]int32, n)
		mask := make([]float64, n)
		copy(padded, ids)
		for i := range ids {
			mask[i] = 1
		}
		out[r] = refBertRow(c, w, padded, mask)
	}
	return out
}

func refBertRow(c testBert, w map[string][]float64, ids []int32, mask []float64) []float64 {
	H, n := c.H, len(ids)
	dh := H / c.heads
	// Embeddings: word + position + token type 0, then LayerNorm.
	h := make(refMatrix, n)
	we, pe, te := w["embeddings.word_embeddings.weight"], w["embeddings.position_embeddings.weight"], w["embeddings.token_type_embeddings.weight"]
	for i, id := range ids {
		row := make([]float64, H)
		for d := range H {
			row[d] = we[int(id)*H+d] + pe[i*H+d] + te[0*H+d]
		}
		h[i] = refLayerNorm(row, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], c.eps)
	}
	// The extended attention mask: 0 where attended, the dtype's minimum
	// (here -inf, which softmax turns into an exact 0) where padded.
	additive := make([]float64, n)
	for j := range n {
		if mask[j] == 0 {
			additive[j] = math.Inf(-1)
		}
	}
	for l := range c.L {
		p := "encoder.layer." + itoa(l) + "."
		q := refLinear(h, w[p+"attention.self.query.weight"], w[p+"attention.self.query.bias"], H)
		k := refLinear(h, w[p+"attention.self.key.weight"], w[p+"attention.self.key.bias"], H)
		v := refLinear(h, w[p+"attention.self.value.weight"], w[p+"attention.self.value.bias"], H)
		ctx := make(refMatrix, n)
		for i := range ctx {
			ctx[i] = make([]float64, H)
		}
		for head := range c.heads {
			for i := range n {
				scores := make([]float64, n)
				best := math.Inf(-1)
				for j := range n {
					s := 0.0
					for d := range dh {
						s += q[i][head*dh+d] * k[j][head*dh+d]
					}
					scores[j] = s/math.Sqrt(float64(dh)) + additive[j]
					best = math.Max(best, scores[j])
				}
				total := 0.0
				for j := range scores {
					scores[j] = math.Exp(scores[j] - best)
					total += scores[j]
				}
				for j := range scores {
					for d := range dh {
						ctx[i][head*dh+d] += scores[j] / total * v[j][head*dh+d]
					}
				}
			}
		}
		attn := refLinear(ctx, w[p+"attention.output.dense.weight"], w[p+"attention.output.dense.bias"], H)
		for i := range n {
			for d := range H {
				attn[i][d] += h[i][d]
			}
			h[i] = refLayerNorm(attn[i], w[p+"attention.output.LayerNorm.weight"], w[p+"attention.output.LayerNorm.bias"], c.eps)
		}
		inter := refLinear(h, w[p+"intermediate.dense.weight"], w[p+"intermediate.dense.bias"], c.I)
		for i := range inter {
			for d := range inter[i] {
				inter[i][d] = refAct(c.act, inter[i][d])
			}
		}
		o := refLinear(inter, w[p+"output.dense.weight"], w[p+"output.dense.bias"], H)
		for i := range n {
			for d := range H {
				o[i][d] += h[i][d]
			}
			h[i] = refLayerNorm(o[i], w[p+"output.LayerNorm.weight"], w[p+"output.LayerNorm.bias"], c.eps)
		}
	}
	// sentence-transformers Pooling.
	pooled := make([]float64, H)
	switch c.pooling {
	case "cls":
		copy(pooled, h[0])
	case "max":
		for d := range H {
			pooled[d] = math.Inf(-1)
			for i := range n {
				v := h[i][d]
				if mask[i] == 0 {
					v = -1e9
				}
				pooled[d] = math.Max(pooled[d], v)
			}
		}
	default: // mean, also without modules.json
		count := 0.0
		for i := range n {
			for d := range H {
				pooled[d] += h[i][d] * mask[i]
			}
			count += mask[i]
		}
		for d := range H {
			pooled[d] /= math.Max(count, 1e-9)
		}
	}
	if c.normalize && c.pooling != "" {
		norm := 0.0
		for _, v := range pooled {
			norm += v * v
		}
		norm = math.Max(math.Sqrt(norm), 1e-12)
		for d := range pooled {
			pooled[d] /= norm
		}
	}
	return pooled
}

// refStatic is model2vec's StaticModel.encode (max_length 512): the text
// cut to 512 × median token length characters, tokenised without special
// tokens, unknown tokens removed, cut to 512 tokens, the weighted rows
// averaged, normalised with +1e-32 when configured.
func refStatic(tok *Tokenizer, vocab []string, emb [][]float64, weights []float64, mapping []int, normalize bool, text string) []float64 {
	lens := make([]int, len(vocab))
	for i, v := range vocab {
		lens[i] = len([]rune(v))
	}
	// median by selection, without sorting helpers from the package
	for i := range lens {
		for j := i + 1; j < len(lens); j++ {
			if lens[j] < lens[i] {
				lens[i], lens[j] = lens[j], lens[i]
			}
		}
	}
	var median int
	if len(lens)%2 == 1 {
		median = lens[len(lens)/2]
	} else {
		median = int(float64(lens[len(lens)/2-1]+lens[len(lens)/2]) / 2)
	}
	runes := []rune(text)
	if len(runes) > 512*median {
		runes = runes[:512*median]
	}
	var ids []int32
	for _, id := range tok.EncodePieces(string(runes)) {
		if vocab[id] != "[UNK]" {
			ids = append(ids, id)
		}
	}
	if len(ids) > 512 {
		ids = ids[:512]
	}
	dim := len(emb[0])
	out := make([]float64, dim)
	if len(ids) == 0 {
		return out
	}
	for _, id := range ids {
		row := int(id)
		if mapping != nil {
			row = mapping[id]
		}
		f := 1.0
		if weights != nil {
			f = weights[id]
		}
		for d := range dim {
			out[d] += emb[row][d] * f
		}
	}
	for d := range out {
		out[d] /= float64(len(ids))
	}
	if normalize {
		norm := 0.0
		for _, v := range out {
			norm += v * v
		}
		norm = math.Sqrt(norm) + 1e-32
		for d := range out {
			out[d] /= norm
		}
	}
	return out
}
