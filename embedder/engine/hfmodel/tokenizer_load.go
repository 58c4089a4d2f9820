package hfmodel

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"golang.org/x/text/unicode/norm"
)

// loadTokenizer reads dir/tokenizer.json, or else dir/vocab.txt with
// dir/tokenizer_config.json (as transformers converts a slow BertTokenizer).
// It returns the names of the files it read.
func loadTokenizer(dir string) (*Tokenizer, []string, error) {
	p := filepath.Join(dir, "tokenizer.json")
	if data, err := os.ReadFile(p); err == nil {
		t, err := parseTokenizerJSON(data)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", p, err)
		}
		return t, []string{"tokenizer.json"}, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, nil, err
	}
	v := filepath.Join(dir, "vocab.txt")
	data, err := os.ReadFile(v)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, fmt.Errorf("no tokenizer in %s: neither tokenizer.json nor vocab.txt", dir)
	} else if err != nil {
		return nil, nil, err
	}
	files := []string{"vocab.txt"}
	cfgData, err := os.ReadFile(filepath.Join(dir, "tokenizer_config.json"))
	if err == nil {
		files = append(files, "tokenizer_config.json")
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, nil, err
	}
	t, err := parseVocabTxt(data, cfgData)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", v, err)
	}
	return t, files, nil
}

type tokenizerJSON struct {
	Truncation *struct {
		MaxLength int `json:"max_length"`
	} `json:"truncation"`
	AddedTokens []struct {
		ID         int32  `json:"id"`
		Content    string `json:"content"`
		Normalized bool   `json:"normalized"`
	} `json:"added_tokens"`
	Normalizer    json.RawMessage `json:"normalizer"`
	PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
	PostProcessor json.RawMessage `json:"post_processor"`
	Model         struct {
		Type          string          `json:"type"`
		UnkToken      *string         `json:"unk_token"`
		Prefix        *string         `json:"continuing_subword_prefix"`
		MaxInputChars int             `json:"max_input_chars_per_word"`
		Vocab         json.RawMessage `json:"vocab"`
	} `json:"model"`
}

func parseTokenizerJSON(data []byte) (*Tokenizer, error) {
	var tj tokenizerJSON
	if err := json.Unmarshal(data, &tj); err != nil {
		return nil, err
	}
	if tj.Model.Type != "WordPiece" {
		return nil, fmt.Errorf("tokenizer model %q is not supported (only WordPiece, as BERT and model2vec's BERT-based models use)", tj.Model.Type)
	}
	var vocab map[string]int32
	if err := json.Unmarshal(tj.Model.Vocab, &vocab); err != nil {
		return nil, fmt.Errorf("model.vocab: %w", err)
	}
	t, err := newTokenizer(vocab)
	if err != nil {
		return nil, err
	}
	if tj.Model.Prefix != nil {
		t.prefix = *tj.Model.Prefix
	}
	if tj.Model.MaxInputChars > 0 {
		t.maxInputChars = tj.Model.MaxInputChars
	}
	t.unkID = -1
	if tj.Model.UnkToken != nil {
		id, ok := vocab[*tj.Model.UnkToken]
		if !ok {
			return nil, fmt.Errorf("unk_token %q is not in the vocabulary", *tj.Model.UnkToken)
		}
		t.unkID = id
	}
	if t.norm, err = parseNormalizer(tj.Normalizer); err != nil {
		return nil, err
	}
	if t.pre, err = parsePreTokenizer(tj.PreTokenizer); err != nil {
		return nil, err
	}
	if t.cls, t.sep, err = parsePostProcessor(tj.PostProcessor); err != nil {
		return nil, err
	}
	for _, a := range tj.AddedTokens {
		if a.Content == "" {
			continue
		}
		if a.Normalized {
			c := a.Content
			for _, f := range t.norm {
				c = f(c)
			}
			t.addedNorm = append(t.addedNorm, addedToken{content: c, id: a.ID})
		} else {
			t.added = append(t.added, addedToken{content: a.Content, id: a.ID})
		}
	}
	sortAdded(t.added)
	sortAdded(t.addedNorm)
	for _, a := range append(t.added, t.addedNorm...) {
		if a.id < 0 || a.id > 1<<24 {
			return nil, fmt.Errorf("added token %q has id %d", a.content, a.id)
		}
		for int(a.id) >= len(t.tokens) {
			t.tokens = append(t.tokens, "")
		}
		if t.tokens[a.id] == "" {
			t.tokens[a.id] = a.content
		}
	}
	if tj.Truncation != nil {
		t.maxLength = tj.Truncation.MaxLength
	}
	return t, nil
}

func newTokenizer(vocab map[string]int32) (*Tokenizer, error) {
	if len(vocab) == 0 {
		return nil, errors.New("empty vocabulary")
	}
	n := int32(0)
	for tok, id := range vocab {
		if id < 0 || id > 1<<24 {
			return nil, fmt.Errorf("token %q has id %d", tok, id)
		}
		n = max(n, id+1)
	}
	t := &Tokenizer{vocab: vocab, tokens: make([]string, n), prefix: "##", maxInputChars: 100, unkID: -1}
	for tok, id := range vocab {
		t.tokens[id] = tok
		t.maxTokenBytes = max(t.maxTokenBytes, len(tok))
	}
	return t, nil
}

func sortAdded(a []addedToken) {
	sort.SliceStable(a, func(i, j int) bool { return len(a[i].content) > len(a[j].content) })
}

// parseNormalizer supports BertNormalizer, Lowercase, StripAccents, the
// four Unicode normal forms and Sequence of them.
func parseNormalizer(raw json.RawMessage) ([]func(string) string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var n struct {
		Type              string            `json:"type"`
		CleanText         *bool             `json:"clean_text"`
		HandleChineseChar *bool             `json:"handle_chinese_chars"`
		StripAccents      *bool             `json:"strip_accents"`
		Lowercase         *bool             `json:"lowercase"`
		Normalizers       []json.RawMessage `json:"normalizers"`
	}
	if err := json.Unmarshal(raw, &n); err != nil {
		return nil, fmt.Errorf("normalizer: %w", err)
	}
	or := func(b *bool, def bool) bool {
		if b == nil {
			return def
		}
		return *b
	}
	switch n.Type {
	case "BertNormalizer":
		return bertNormalizer(or(n.CleanText, true), or(n.HandleChineseChar, true), n.StripAccents, or(n.Lowercase, true)), nil
	case "Lowercase":
		return []func(string) string{lowercase}, nil
	case "StripAccents":
		return []func(string) string{dropMarks}, nil
	case "NFD":
		return []func(string) string{norm.NFD.String}, nil
	case "NFC":
		return []func(string) string{norm.NFC.String}, nil
	case "NFKD":
		return []func(string) string{norm.NFKD.String}, nil
	case "NFKC":
		return []func(string) string{norm.NFKC.String}, nil
	case "Sequence":
		return parseSequence(n.Normalizers, parseNormalizer)
	}
	return nil, fmt.Errorf("normalizer %q is not supported (BertNormalizer, Lowercase, StripAccents, NFD, NFC, NFKD, NFKC, Sequence)", n.Type)
}

// parseSequence parses each step of a Sequence (of normalizers or of
// pre-tokenizers) with parse, in order.
func parseSequence[F any](steps []json.RawMessage, parse func(json.RawMessage) ([]F, error)) ([]F, error) {
	var out []F
	for _, step := range steps {
		fs, err := parse(step)
		if err != nil {
			return nil, err
		}
		out = append(out, fs...)
	}
	return out, nil
}

// bertNormalizer is BertNormalizer's order of steps; strip_accents unset
// follows lowercase.
func bertNormalizer(clean, chinese bool, strip *bool, lower bool) []func(string) string {
	var out []func(string) string
	if clean {
		out = append(out, cleanText)
	}
	if chinese {
		out = append(out, padChinese)
	}
	if (strip == nil && lower) || (strip != nil && *strip) {
		out = append(out, stripAccents)
	}
	if lower {
		out = append(out, lowercase)
	}
	return out
}

// parsePreTokenizer supports BertPreTokenizer, WhitespaceSplit and
// Sequence of them.
func parsePreTokenizer(raw json.RawMessage) ([]func([]string) []string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var p struct {
		Type          string            `json:"type"`
		PreTokenizers []json.RawMessage `json:"pretokenizers"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("pre_tokenizer: %w", err)
	}
	switch p.Type {
	case "BertPreTokenizer":
		return []func([]string) []string{bertPreTokenize}, nil
	case "WhitespaceSplit":
		return []func([]string) []string{splitWhitespace}, nil
	case "Sequence":
		return parseSequence(p.PreTokenizers, parsePreTokenizer)
	}
	return nil, fmt.Errorf("pre_tokenizer %q is not supported (BertPreTokenizer, WhitespaceSplit, Sequence)", p.Type)
}

// parsePostProcessor returns the special token ids put before and after a
// single sequence (TemplateProcessing or BertProcessing).
func parsePostProcessor(raw json.RawMessage) (before, after []int32, err error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil, nil
	}
	var p struct {
		Type   string `json:"type"`
		Single []struct {
			SpecialToken *struct {
				ID string `json:"id"`
			} `json:"SpecialToken"`
			Sequence *struct {
				ID string `json:"id"`
			} `json:"Sequence"`
		} `json:"single"`
		SpecialTokens map[string]struct {
			IDs []int32 `json:"ids"`
		} `json:"special_tokens"`
		CLS []json.RawMessage `json:"cls"`
		SEP []json.RawMessage `json:"sep"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, nil, fmt.Errorf("post_processor: %w", err)
	}
	switch p.Type {
	case "TemplateProcessing":
		seen := false
		for _, piece := range p.Single {
			switch {
			case piece.Sequence != nil:
				seen = true
			case piece.SpecialToken != nil:
				st, ok := p.SpecialTokens[piece.SpecialToken.ID]
				if !ok {
					return nil, nil, fmt.Errorf("post_processor: special token %q has no ids", piece.SpecialToken.ID)
				}
				if seen {
					after = append(after, st.IDs...)
				} else {
					before = append(before, st.IDs...)
				}
			}
		}
		return before, after, nil
	case "BertProcessing":
		cls, err1 := processingID(p.CLS)
		sep, err2 := processingID(p.SEP)
		if err := errors.Join(err1, err2); err != nil {
			return nil, nil, fmt.Errorf("post_processor: %w", err)
		}
		return []int32{cls}, []int32{sep}, nil
	}
	return nil, nil, fmt.Errorf("post_processor %q is not supported (TemplateProcessing, BertProcessing)", p.Type)
}

// processingID reads BertProcessing's ["[CLS]", 101].
func processingID(pair []json.RawMessage) (int32, error) {
	var id int32
	if len(pair) != 2 {
		return 0, errors.New(`cls and sep must be ["token", id]`)
	}
	if err := json.Unmarshal(pair[1], &id); err != nil {
		return 0, err
	}
	return id, nil
}

// parseVocabTxt builds the tokenizer transformers would convert a slow
// BertTokenizer (vocab.txt, one token per line, id = line number) into.
func parseVocabTxt(data, configJSON []byte) (*Tokenizer, error) {
	vocab := map[string]int32{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for id := int32(0); sc.Scan(); id++ {
		tok := sc.Text() // transformers strips only the newline
		if _, dup := vocab[tok]; !dup {
			vocab[tok] = id
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	t, err := newTokenizer(vocab)
	if err != nil {
		return nil, err
	}
	var cfg struct {
		DoLowerCase    *bool   `json:"do_lower_case"`
		StripAccents   *bool   `json:"strip_accents"`
		ChineseChars   *bool   `json:"tokenize_chinese_chars"`
		ModelMaxLength float64 `json:"model_max_length"`
		AddedTokensDec map[string]struct {
			Content string `json:"content"`
		} `json:"added_tokens_decoder"`
	}
	var raw map[string]json.RawMessage
	if len(configJSON) > 0 {
		if err := json.Unmarshal(configJSON, &raw); err != nil {
			return nil, fmt.Errorf("tokenizer_config.json: %w", err)
		}
		if err := json.Unmarshal(configJSON, &cfg); err != nil {
			return nil, fmt.Errorf("tokenizer_config.json: %w", err)
		}
	}
	lower, chinese := true, true
	if cfg.DoLowerCase != nil {
		lower = *cfg.DoLowerCase
	}
	if cfg.ChineseChars != nil {
		chinese = *cfg.ChineseChars
	}
	t.norm = bertNormalizer(true, chinese, cfg.StripAccents, lower)
	t.pre = []func([]string) []string{bertPreTokenize}
	special := func(raw json.RawMessage, def string) string {
		if len(raw) == 0 {
			return def
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
		var obj struct{ Content string }
		if json.Unmarshal(raw, &obj) == nil && obj.Content != "" {
			return obj.Content
		}
		return def
	}
	unk, cls, sep := special(raw["unk_token"], "[UNK]"), special(raw["cls_token"], "[CLS]"), special(raw["sep_token"], "[SEP]")
	names := []string{unk, cls, sep, special(raw["pad_token"], "[PAD]"), special(raw["mask_token"], "[MASK]")}
	for _, a := range cfg.AddedTokensDec {
		names = append(names, a.Content)
	}
	if id, ok := vocab[unk]; ok {
		t.unkID = id
	} else {
		return nil, fmt.Errorf("unk_token %q is not in the vocabulary", unk)
	}
	clsID, ok1 := vocab[cls]
	sepID, ok2 := vocab[sep]
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("cls_token %q or sep_token %q is not in the vocabulary", cls, sep)
	}
	t.cls, t.sep = []int32{clsID}, []int32{sepID}
	seen := map[string]bool{}
	for _, n := range names {
		if id, ok := vocab[n]; ok && n != "" && !seen[n] {
			seen[n] = true
			t.added = append(t.added, addedToken{content: n, id: id})
		}
	}
	sortAdded(t.added)
	if cfg.ModelMaxLength > 0 && cfg.ModelMaxLength < 1e6 {
		t.maxLength = int(cfg.ModelMaxLength)
	}
	return t, nil
}
