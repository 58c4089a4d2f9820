// Package hfmodel runs sentence-embedding models in Hugging Face's file
// layout in pure Go (no cgo): model2vec static models and BERT-family
// encoders as sentence-transformers packages them.
//
//   - safetensors.go reads model.safetensors (F32, F16, BF16; I8 for
//     quantised model2vec tables), one tensor at a time.
//   - tokenizer.go / tokenizer_load.go: the WordPiece tokenizer of
//     tokenizer.json or vocab.txt with BERT's normalisation.
//   - bert.go: the BertModel forward pass, pooling and normalisation;
//     matmul.go and activations.go its kernels (AVX2/FMA assembly on amd64,
//     the same arithmetic in Go elsewhere), approx.go exp and erf to float32
//     precision.
//   - static.go: model2vec's mean of token vectors.
//   - hub.go: fetching a model by hub id and revision, every file checked
//     against a pinned SHA-256, into a cache that never holds a partial copy.
//
// The tests build tiny random models of both kinds as real files and
// compare the vectors with a naive float64 reference written independently
// from the BERT paper, transformers' modeling_bert and model2vec.
package hfmodel
