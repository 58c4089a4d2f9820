package uselite

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf16"

	"golang.org/x/text/unicode/norm"
)

// separator replaces spaces and marks the start of the text, as in
// SentencePiece.
const separator = '\u2581'

// reservedSymbols is the number of vocabulary entries (unknown, <s>, </s>,
// extra tokens) that the tokenizer never emits by matching text.
const reservedSymbols = 6

// unknownID is emitted for characters no vocabulary piece starts with.
const unknownID = 0

// Tokenizer is a port of the @energetic-ai/embeddings (and
// @tensorflow-models/universal-sentence-encoder) tokenizer: NFKC
// normalisation, a trie over the SentencePiece pieces and a Viterbi search
// that maximises the summed piece scores. It reproduces the reference's
// quirks on purpose, because token ids must match exactly:
//   - a position whose best score is exactly 0 counts as "unset";
//   - ties go to the later candidate (shorter piece) because of ">=";
//   - back-tracking steps by the UTF-16 length of the chosen piece;
//   - runs of unknown tokens are merged into one.
type Tokenizer struct {
	pieces []string
	// utf16Len is the JavaScript string length of each piece.
	utf16Len []int
	trie     []trieNode
}

type trieNode struct {
	children map[rune]int32
	end      bool
	score    float64
	id       int32
	depth    int32 // number of runes from the root
}

// vocabEntry is one [piece, score] pair of vocab.json.
type vocabEntry struct {
	piece string
	score float64
}

func (v *vocabEntry) UnmarshalJSON(b []byte) error {
	var pair []json.RawMessage
	if err := json.Unmarshal(b, &pair); err != nil {
		return err
	}
	if len(pair) != 2 {
		return fmt.Errorf("vocabulary entry has %d fields, want 2", len(pair))
	}
	if err := json.Unmarshal(pair[0], &v.piece); err != nil {
		return err
	}
	return json.Unmarshal(pair[1], &v.score)
}

func loadTokenizer(dir string) (*Tokenizer, error) {
	path := filepath.Join(dir, "vocab.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read vocabulary: %w", err)
	}
	var entries []vocabEntry
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	if len(entries) <= reservedSymbols {
		return nil, fmt.Errorf("parse %s: vocabulary has only %d entries", path, len(entries))
	}
	return newTokenizer(entries), nil
}

func newTokenizer(entries []vocabEntry) *Tokenizer {
	t := &Tokenizer{
		pieces:   make([]string, len(entries)),
		utf16Len: make([]int, len(entries)),
		trie:     []trieNode{{}},
	}
	for id, e := range entries {
		t.pieces[id] = e.piece
		t.utf16Len[id] = len(utf16.Encode([]rune(e.piece)))
		if id < reservedSymbols {
			continue
		}
		node := int32(0)
		for _, r := range e.piece {
			next, ok := t.trie[node].children[r]
			if !ok {
				next = int32(len(t.trie))
				t.trie = append(t.trie, trieNode{depth: t.trie[node].depth + 1})
				if t.trie[node].children == nil {
					t.trie[node].children = map[rune]int32{}
				}
				t.trie[node].children[r] = next
			}
			node = next
		}
		if node != 0 {
			t.trie[node].end = true
			t.trie[node].score = e.score
			t.trie[node].id = int32(id)
		}
	}
	return t
}

// VocabSize is the number of pieces in the vocabulary.
func (t *Tokenizer) VocabSize() int { return len(t.pieces) }

// prepare applies the reference's input processing: NFKC, then "▁" at the
// start and in place of every ASCII space (other whitespace is kept).
func prepare(text string) []rune {
	normalized := norm.NFKC.String(text)
	if normalized == "" {
		return nil
	}
	return []rune(string(separator) + strings.ReplaceAll(normalized, " ", string(separator)))
}

// candidate is a vocabulary piece that matches the input at some position.
type candidate struct {
	start int
	score float64
	id    int32
}

// Encode returns the token ids for text.
func (t *Tokenizer) Encode(text string) []int32 {
	symbols := prepare(text)
	n := len(symbols)
	if n == 0 {
		return nil
	}
	// ending[e] lists the pieces that end at position e, in increasing order
	// of start position — the order in which the reference iterates them.
	ending := make([][]candidate, n+1)
	for i := 0; i < n; i++ {
		found := false
		node := int32(0)
		for j := i; j < n; j++ {
			next, ok := t.trie[node].children[symbols[j]]
			if !ok {
				break
			}
			node = next
			if tn := &t.trie[node]; tn.end {
				ending[j+1] = append(ending[j+1], candidate{start: i, score: tn.score, id: tn.id})
				found = true
			}
		}
		if !found {
			ending[i+1] = append(ending[i+1], candidate{start: i, score: 0, id: unknownID})
		}
	}
	best := make([]float64, n+1)
	words := make([]int32, n+1)
	for end := 0; end <= n; end++ {
		for _, c := range ending[end] {
			score := c.score + best[c.start]
			if best[end] == 0 || score >= best[end] {
				best[end] = score
				words[end] = c.id
			}
		}
	}
	var reversed []int32
	for pos := n; pos > 0; pos -= t.utf16Len[words[pos]] {
		reversed = append(reversed, words[pos])
	}
	out := make([]int32, 0, len(reversed))
	prevUnknown := false
	for _, id := range reversed {
		if !(prevUnknown && id == unknownID) {
			out = append(out, id)
		}
		prevUnknown = id == unknownID
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}
