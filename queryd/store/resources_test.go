package store

import (
	"strings"
	"testing"
)

// TestAppendChunk: overlapping chunks put the text back once; a gap is a
// paragraph break; a chunk whose content does not span its offsets is kept whole.
func TestAppendChunk(t *testing.T) {
	text := "Alpha beta gamma. Delta epsilon."
	at := func(s, e int) Chunk { return Chunk{Content: string([]rune(text)[s:e]), StartOffset: s, EndOffset: e} }
	var b strings.Builder
	end := 0
	for _, c := range []Chunk{at(0, 17), at(11, 24), at(18, 24), at(24, 32)} {
		end = appendChunk(&b, c, end)
	}
	if b.String() != text || end != 32 {
		t.Fatalf("%q %d", b.String(), end)
	}
	b.Reset()
	end = appendChunk(&b, at(0, 5), 0)
	end = appendChunk(&b, at(18, 23), end)
	appendChunk(&b, Chunk{Content: "[image: a chart]", StartOffset: 23, EndOffset: 24}, end)
	if want := "Alpha\n\nDelta\n\n[image: a chart]"; b.String() != want {
		t.Fatalf("%q, want %q", b.String(), want)
	}
}
