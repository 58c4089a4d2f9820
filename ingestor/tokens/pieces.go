package tokens

import (
	"unicode"
	"unicode/utf8"
)

// cl100k_base splits text into pieces with one regular expression before
// its byte-pair merges:
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// The tokenizer runs it with a backtracking engine (regexp2), which took
// most of the counting time. pieceLen matches the same expression by hand,
// alternative by alternative, in one forward pass; FuzzCountMatchesCodec and
// TestCountMatchesCodecOnCorpus hold it to the engine's pieces, and each
// piece's token count still comes from the tokenizer (cached).

// eachPiece calls emit with every piece of s (valid UTF-8) in order. DEL
// (U+007F) is in none of the expression's classes, so it is in no piece and
// costs no token, as with the tokenizer.
func eachPiece(s string, emit func(string)) {
	for i := 0; i < len(s); {
		if s[i] == 0x7f {
			i++
			continue
		}
		n := pieceLen(s[i:])
		emit(s[i : i+n])
		i += n
	}
}

// pieceLen is the byte length of the piece at the start of s (s not empty,
// valid UTF-8, not starting with DEL).
func pieceLen(s string) int {
	r, size := utf8.DecodeRuneInString(s)
	// 1. (?i:'s|'t|'re|'ve|'m|'ll|'d): regexp2's case folding puts ſ with s.
	if r == '\'' {
		if n := contraction(s[1:]); n > 0 {
			return 1 + n
		}
	}
	// 2. [^\r\n\p{L}\p{N}]?\p{L}+
	if unicode.IsLetter(r) {
		return size + letters(s[size:])
	}
	if r != '\r' && r != '\n' && !unicode.IsNumber(r) && size < len(s) { // r is not DEL: eachPiece skips it
		if r2, size2 := utf8.DecodeRuneInString(s[size:]); unicode.IsLetter(r2) {
			return size + size2 + letters(s[size+size2:])
		}
	}
	// 3. \p{N}{1,3}
	if unicode.IsNumber(r) {
		n := size
		for range 2 {
			if n == len(s) {
				break
			}
			r2, size2 := utf8.DecodeRuneInString(s[n:])
			if !unicode.IsNumber(r2) {
				break
			}
			n += size2
		}
		return n
	}
	// 4. ` ?[^\s\p{L}\p{N}]+[\r\n]*` (the optional space is atomic: taken if there)
	start := 0
	if r == ' ' {
		start = 1
	}
	end := start
	for end < len(s) {
		r2, size2 := utf8.DecodeRuneInString(s[end:])
		if unicode.IsSpace(r2) || unicode.IsLetter(r2) || unicode.IsNumber(r2) || r2 == 0x7f {
			break
		}
		end += size2
	}
	if end > start {
		for end < len(s) && (s[end] == '\r' || s[end] == '\n') {
			end++
		}
		return end
	}
	// r is white space here. Its run is s[:run].
	run, lastSize := 0, 0
	for run < len(s) {
		r2, size2 := utf8.DecodeRuneInString(s[run:])
		if !unicode.IsSpace(r2) {
			break
		}
		if r2 == '\r' || r2 == '\n' {
			// 5. \s*[\r\n]+: regexp2 ends it with the run's first line
			// breaks ("\n \n" is "\n" then " \n"; TestPiecesMatchTheExpression).
			end := run + 1
			for end < len(s) && (s[end] == '\r' || s[end] == '\n') {
				end++
			}
			return end
		}
		lastSize = size2
		run += size2
	}
	// 6. \s+(?!\S): the run, less its last character when text follows.
	if run == len(s) {
		return run
	}
	if run-lastSize > 0 {
		return run - lastSize
	}
	// 7. \s+
	return run
}

// contraction matches s|t|re|ve|m|ll|d, ignoring case, at the start of s.
func contraction(s string) int {
	if s == "" {
		return 0
	}
	lower := func(i int) byte { return s[i] | 0x20 } // ASCII letters only; others never match
	switch {
	case lower(0) == 's' || lower(0) == 't':
		return 1
	case len(s) >= 2 && s[0] == 0xc5 && s[1] == 0xbf: // ſ, U+017F
		return 2
	case len(s) >= 2 && (lower(0) == 'r' || lower(0) == 'v') && lower(1) == 'e':
		return 2
	case lower(0) == 'm' || lower(0) == 'd':
		return 1
	case len(s) >= 2 && lower(0) == 'l' && lower(1) == 'l':
		return 2
	}
	return 0
}

// letters is the byte length of the run of letters at the start of s.
func letters(s string) int {
	n := 0
	for n < len(s) {
		if c := s[n]; c < utf8.RuneSelf {
			if c|0x20 < 'a' || c|0x20 > 'z' {
				return n
			}
			n++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[n:])
		if !unicode.IsLetter(r) {
			return n
		}
		n += size
	}
	return n
}
