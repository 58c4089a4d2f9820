package extracttest

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/strata-kb/strata/ingestor/chunk"
	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/tokens"
)

var (
	counterOnce sync.Once
	counter     *tokens.Counter
	counterErr  error
)

// tokenCounter is the tokenizer the ingestor counts chunk tokens with.
func tokenCounter() (*tokens.Counter, error) {
	counterOnce.Do(func() { counter, counterErr = tokens.New() })
	return counter, counterErr
}

// CheckSections splits doc into sections and chunks as the ingestor does
// (chunk.Split, target tokens as given) and returns what breaks, or nil:
//
//   - Sections nest: every section but a first one without a heading
//     starts at a heading; its heading path is the headings above it, one
//     per level that is open (a heading closes those at its level and
//     deeper), ending with its title at its level.
//   - Token counts are consistent: each chunk's count is the tokenizer's
//     count of its content and a section's is the sum of its chunks'; a
//     chunk exceeds the target only when it cannot be cut (one character,
//     a whole table or code block up to twice the target, an image).
//   - Chunks are exact rune slices of Text, in order, inside their
//     section, and together hold every block.
func CheckSections(doc *extract.Document, targetTokens int) error {
	c, err := tokenCounter()
	if err != nil {
		return err
	}
	o := chunk.Options{TargetTokens: targetTokens}
	if err := checkSplit(doc, chunk.Split(doc, c, o), c, o); err != nil {
		return fmt.Errorf("chunked at %d tokens: %w", targetTokens, err)
	}
	return nil
}

// checkSplit checks secs, the sections chunk.Split made of doc.
func checkSplit(doc *extract.Document, secs []chunk.Section, c chunk.Counter, o chunk.Options) error {
	var pr problems
	runes := []rune(doc.Text)
	runeAt := runeOffsets(doc.Text)

	// The headings of the document, by rune offset of their start.
	type head struct{ start, level int }
	var heads []head
	for _, b := range doc.Blocks {
		if b.Kind == extract.Heading && b.Start >= 0 && b.End <= len(doc.Text) && b.Start < b.End {
			heads = append(heads, head{runeAt[b.Start], min(max(b.Level, 1), 6)})
		}
	}
	var open []int // levels of the open headings
	covered := make([]bool, len(runes))
	next, prevEnd, h := 0, 0, 0
	for si, s := range secs {
		if s.Ordinal != si || s.Start < prevEnd || s.End < s.Start || s.End > len(runes) {
			pr.add("section %d (ordinal %d) spans [%d,%d) after %d, in %d characters", si, s.Ordinal, s.Start, s.End, prevEnd, len(runes))
			return pr.err()
		}
		prevEnd = s.End
		// The headings this section starts with.
		n := 0
		for ; h < len(heads) && heads[h].start < s.End; h++ {
			if heads[h].start < s.Start {
				pr.add("the heading at character %d is in no section", heads[h].start)
				continue
			}
			for len(open) > 0 && open[len(open)-1] >= heads[h].level {
				open = open[:len(open)-1]
			}
			open = append(open, heads[h].level)
			n++
		}
		switch {
		case n == 0 && si > 0:
			pr.add("section %d [%d,%d) does not start at a heading", si, s.Start, s.End)
		case n > 0 && (len(s.HeadingPath) != len(open) || s.Level != open[len(open)-1]):
			pr.add("section %d (%q, level %d) has heading path %q; the open headings are at levels %v", si, s.Title, s.Level, s.HeadingPath, open)
		case n > 0 && s.HeadingPath[len(s.HeadingPath)-1] != s.Title:
			pr.add("section %d: title %q is not the end of its heading path %q", si, s.Title, s.HeadingPath)
		}
		sum := 0
		for _, ch := range s.Chunks {
			if ch.Index != next {
				pr.add("chunk index %d, want %d", ch.Index, next)
			}
			next++
			if ch.Start < s.Start || ch.End > s.End || ch.Start >= ch.End {
				pr.add("chunk %d [%d,%d) is outside section %d [%d,%d)", ch.Index, ch.Start, ch.End, si, s.Start, s.End)
				continue
			}
			if got := string(runes[ch.Start:ch.End]); got != ch.Content {
				pr.add("chunk %d content is not the text at [%d,%d): %q vs %q", ch.Index, ch.Start, ch.End, clip(ch.Content), clip(got))
			}
			if want := c.Count(ch.Content); ch.Tokens != want {
				pr.add("chunk %d has %d tokens; the tokenizer counts %d", ch.Index, ch.Tokens, want)
			}
			limit := o.TargetTokens
			if ch.Kind == chunk.KindTable || ch.Kind == chunk.KindCode {
				limit *= 2
			}
			if ch.Tokens > limit+1 && utf8.RuneCountInString(ch.Content) > 1 && ch.Kind != chunk.KindImage {
				pr.add("chunk %d (%s) has %d tokens, target %d", ch.Index, ch.Kind, ch.Tokens, o.TargetTokens)
			}
			sum += ch.Tokens
			for r := ch.Start; r < ch.End; r++ {
				covered[r] = true
			}
		}
		if s.Tokens != sum {
			pr.add("section %d has %d tokens, its chunks %d", si, s.Tokens, sum)
		}
	}
	for h < len(heads) {
		pr.add("the heading at character %d is in no section", heads[h].start)
		h++
	}
	for i, b := range doc.Blocks {
		if b.Start < 0 || b.End > len(doc.Text) || b.Start >= b.End {
			continue
		}
		for r := runeAt[b.Start]; r < runeAt[b.End]; r++ {
			if !covered[r] && !isSpace(runes[r]) {
				pr.add("block %d: character %d (%q) is in no chunk", i, r, runes[r])
				break
			}
		}
	}
	return pr.err()
}

// runeOffsets maps each byte offset of s, and len(s), to the offset of
// the character (rune, as []rune(s) counts them) it is in.
func runeOffsets(s string) []int {
	out := make([]int, len(s)+1)
	for i := range out {
		out[i] = -1
	}
	r := 0
	for i := range s {
		out[i] = r
		r++
	}
	for i := 1; i < len(s); i++ {
		if out[i] < 0 {
			out[i] = out[i-1]
		}
	}
	out[len(s)] = r
	return out
}

// Under returns the text of doc's blocks after the heading whose text is
// heading, up to the next heading at its level or above, one block a line
// (e.g. under "Attachment: notes.txt", the line a message says its
// attachment with);
// found is false when doc has no such heading.
func Under(doc *extract.Document, heading string) (text string, found bool) {
	var out []string
	level := 0
	for _, b := range doc.Blocks {
		t := doc.Text[b.Start:b.End]
		if b.Kind == extract.Heading {
			if level > 0 && b.Level <= level {
				break
			}
			if level == 0 && t == heading {
				level = b.Level
				continue
			}
		}
		if level > 0 {
			out = append(out, t)
		}
	}
	return strings.Join(out, "\n"), level > 0
}
