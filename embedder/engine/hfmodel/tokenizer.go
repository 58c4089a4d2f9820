package hfmodel

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Tokenizer is a WordPiece tokenizer with the semantics of Hugging Face
// tokenizers' BertNormalizer, BertPreTokenizer, WordPiece model and
// TemplateProcessing post-processor (what tokenizer.json holds for BERT
// models, and what transformers builds from a vocab.txt):
//
//  1. added tokens ([CLS], [MASK], ...) that occur literally in the text
//     are cut out first and map to their ids;
//  2. the rest is normalised: control characters removed, whitespace made
//     ' ', CJK ideographs surrounded by spaces, accents stripped (NFD, then
//     nonspacing marks dropped) and lowercased, as configured;
//  3. it is split on whitespace, and every punctuation character becomes a
//     word of its own;
//  4. each word becomes the longest vocabulary entries from its start, the
//     later ones with the "##" prefix; a word with an unmatched remainder,
//     or longer than 100 characters, becomes [UNK];
//  5. [CLS] ... [SEP] (or whatever the template says) is put around it,
//     after the pieces are truncated to the maximum length.
//
// It is immutable after loading and safe for concurrent use.
type Tokenizer struct {
	vocab         map[string]int32
	tokens        []string // by id ("" for unused ids)
	unkID         int32    // -1 when the vocabulary has no unknown token
	prefix        string   // continuing_subword_prefix, "##"
	maxInputChars int      // longer words are [UNK]
	maxTokenBytes int      // the longest vocabulary entry, bounds the search
	norm          []func(string) string
	pre           []func([]string) []string
	added         []addedToken // longest first
	addedNorm     []addedToken // matched after normalisation
	cls, sep      []int32      // put before and after the pieces
	maxLength     int          // including cls and sep; 0: no limit
}

type addedToken struct {
	content string
	id      int32
}

// VocabSize is one more than the largest token id.
func (t *Tokenizer) VocabSize() int { return len(t.tokens) }

// Token returns the text of id.
func (t *Tokenizer) Token(id int32) string {
	if id < 0 || int(id) >= len(t.tokens) {
		return ""
	}
	return t.tokens[id]
}

// MaxLength is the truncation length, special tokens included (0: none).
func (t *Tokenizer) MaxLength() int { return t.maxLength }

// Encode returns the token ids of text with the special tokens around them,
// truncated to MaxLength.
func (t *Tokenizer) Encode(text string) []int32 {
	ids := t.EncodePieces(text)
	if t.maxLength > 0 {
		room := max(0, t.maxLength-len(t.cls)-len(t.sep))
		ids = ids[:min(len(ids), room)]
	}
	out := make([]int32, 0, len(t.cls)+len(ids)+len(t.sep))
	out = append(out, t.cls...)
	out = append(out, ids...)
	return append(out, t.sep...)
}

// EncodePieces returns the token ids of text without special tokens and
// without truncation.
func (t *Tokenizer) EncodePieces(text string) []int32 {
	var out []int32
	for _, seg := range splitAdded(text, t.added) {
		if seg.id >= 0 {
			out = append(out, seg.id)
			continue
		}
		s := seg.text
		for _, f := range t.norm {
			s = f(s)
		}
		for _, seg2 := range splitAdded(s, t.addedNorm) {
			if seg2.id >= 0 {
				out = append(out, seg2.id)
				continue
			}
			words := []string{seg2.text}
			for _, p := range t.pre {
				words = p(words)
			}
			for _, w := range words {
				out = t.wordPiece(w, out)
			}
		}
	}
	return out
}

// Tokens is EncodePieces as token texts (for tests and diagnostics).
func (t *Tokenizer) Tokens(text string) []string {
	ids := t.EncodePieces(text)
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = t.Token(id)
	}
	return out
}

// wordPiece appends the pieces of one word: greedy longest match from the
// left, continuation pieces carrying the prefix.
func (t *Tokenizer) wordPiece(word string, out []int32) []int32 {
	if word == "" {
		return out
	}
	if utf8.RuneCountInString(word) > t.maxInputChars {
		return t.appendUnk(out)
	}
	mark := len(out)
	var arr [128]byte // enough for nearly every vocabulary; append grows it otherwise
	buf := arr[:0]
	for start := 0; start < len(word); {
		found := int32(-1)
		end := min(len(word), start+t.maxTokenBytes)
		for end > start {
			if end < len(word) && !utf8.RuneStart(word[end]) {
				end-- // back to a rune boundary
				continue
			}
			buf = buf[:0]
			if start > 0 {
				buf = append(buf, t.prefix...)
			}
			buf = append(buf, word[start:end]...)
			if id, ok := t.vocab[string(buf)]; ok {
				found = id
				break
			}
			end--
		}
		if found < 0 {
			return t.appendUnk(out[:mark])
		}
		out = append(out, found)
		start = end
	}
	return out
}

func (t *Tokenizer) appendUnk(out []int32) []int32 {
	if t.unkID >= 0 {
		out = append(out, t.unkID)
	}
	return out
}

type segment struct {
	text string
	id   int32 // >= 0: an added token
}

// splitAdded cuts the leftmost-longest occurrences of the added tokens out
// of s (tokens are sorted longest first).
func splitAdded(s string, added []addedToken) []segment {
	if len(added) == 0 {
		return []segment{{text: s, id: -1}}
	}
	var out []segment
	last := 0
	for i := 0; i < len(s); i++ {
		for _, a := range added {
			if strings.HasPrefix(s[i:], a.content) {
				if i > last {
					out = append(out, segment{text: s[last:i], id: -1})
				}
				out = append(out, segment{id: a.id})
				i += len(a.content) - 1
				last = i + 1
				break
			}
		}
	}
	if last < len(s) {
		out = append(out, segment{text: s[last:], id: -1})
	}
	return out
}

// Normalisation steps (Hugging Face tokenizers' normalizers).

// cleanText drops NUL, U+FFFD and control characters and turns every
// whitespace character into ' ' (BertNormalizer.clean_text). Controls are
// dropped first, so \v, \f and U+0085 are removed, as in tokenizers.
func cleanText(s string) string {
	return strings.Map(func(r rune) rune {
		if r == 0 || r == utf8.RuneError || isControl(r) {
			return -1
		}
		if isWhitespace(r) {
			return ' '
		}
		return r
	}, s)
}

func isWhitespace(r rune) bool { return r == '\t' || r == '\n' || r == '\r' || unicode.IsSpace(r) }

// isControl is the "other" category (Cc, Cf, Co, Cs and unassigned),
// except tab, newline and carriage return.
func isControl(r rune) bool {
	if r == '\t' || r == '\n' || r == '\r' {
		return false
	}
	if unicode.Is(unicode.C, r) {
		return true
	}
	return !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z)
}

// padChinese surrounds CJK ideographs with spaces (handle_chinese_chars).
func padChinese(s string) string {
	if !strings.ContainsFunc(s, isChineseChar) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isChineseChar(r) {
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// isChineseChar is the CJK Unified Ideographs blocks BERT treats as words.
func isChineseChar(r rune) bool {
	return (r >= 0x4E00 && r <= 0x9FFF) || (r >= 0x3400 && r <= 0x4DBF) ||
		(r >= 0x20000 && r <= 0x2A6DF) || (r >= 0x2A700 && r <= 0x2B73F) ||
		(r >= 0x2B740 && r <= 0x2B81F) || (r >= 0x2B920 && r <= 0x2CEAF) ||
		(r >= 0xF900 && r <= 0xFAFF) || (r >= 0x2F800 && r <= 0x2FA1F)
}

// stripAccents is BertNormalizer's: NFD, then nonspacing marks dropped.
func stripAccents(s string) string { return dropMarks(norm.NFD.String(s)) }

// dropMarks drops nonspacing marks (the StripAccents normalizer).
func dropMarks(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, s)
}

// lowercase maps each character to its full lowercase mapping, as Rust's
// char::to_lowercase does (the only multi-character one is U+0130).
func lowercase(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return unicode.ToLower(r) != r }) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r == '\u0130' {
			b.WriteString("i\u0307")
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// Pre-tokenizers.

// splitWhitespace splits on whitespace, dropping it (WhitespaceSplit).
func splitWhitespace(words []string) []string {
	var out []string
	for _, w := range words {
		out = append(out, strings.FieldsFunc(w, unicode.IsSpace)...)
	}
	return out
}

// splitPunctuation makes every punctuation character a word of its own.
func splitPunctuation(words []string) []string {
	var out []string
	for _, w := range words {
		start := 0
		for i, r := range w {
			if isPunctuation(r) {
				if i > start {
					out = append(out, w[start:i])
				}
				n := utf8.RuneLen(r)
				out = append(out, w[i:i+n])
				start = i + n
			}
		}
		if start < len(w) {
			out = append(out, w[start:])
		}
	}
	return out
}

// bertPreTokenize is BertPreTokenizer: whitespace, then punctuation.
func bertPreTokenize(words []string) []string { return splitPunctuation(splitWhitespace(words)) }

// isPunctuation is ASCII punctuation (which includes symbols such as $ and
// ^) or a Unicode punctuation character (category P).
func isPunctuation(r rune) bool {
	if r < 128 {
		return (r >= 33 && r <= 47) || (r >= 58 && r <= 64) || (r >= 91 && r <= 96) || (r >= 123 && r <= 126)
	}
	return unicode.IsPunct(r)
}
