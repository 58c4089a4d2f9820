package pdf

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/strata-kb/strata/ingestor/extract"
)

// Assemble builds the document from per-page text (as pdftotext prints it),
// the text OCR read on pages without a usable text layer (by page; nil
// without OCR), the outline and the images: paragraphs are runs of
// non-blank lines, a paragraph whose first line is an outline title of that
// page becomes a heading, a page read by OCR has its paragraphs (with their
// confidence) instead of its text, and each page's images follow its text.
func Assemble(pages []string, read map[int][]extract.OCRBlock, outline []OutlineItem, images []extract.Image, lim extract.Limits) (*extract.Document, error) {
	b := extract.NewBuilder("pdf").Within(lim)
	byPage := map[int][]OutlineItem{}
	for _, it := range outline {
		byPage[it.Page] = append(byPage[it.Page], it)
	}
	imgs := map[int][]extract.Image{}
	for _, im := range images {
		imgs[im.Page] = append(imgs[im.Page], im)
	}
	conf := map[int]float64{} // OCR confidence by block index
	var junkPages []int
	for i, raw := range pages {
		page := i + 1
		if blocks, ok := read[page]; ok {
			for _, ob := range blocks {
				if k := b.Add(extract.Paragraph, 0, page, strings.TrimSpace(Sanitize(ob.Text))); k >= 0 {
					conf[k] = ob.Confidence
				}
			}
		} else {
			assemblePage(b, page, raw, byPage[page], &junkPages)
		}
		for n, im := range imgs[page] {
			b.AddImage(im, fmt.Sprintf("Image %d on page %d (%s, %dx%d)", n+1, page, strings.ToUpper(strings.TrimPrefix(im.MIME, "image/")), im.Width, im.Height))
		}
	}
	if len(junkPages) > 0 {
		b.Warn(fmt.Sprintf("%d page(s) have no usable character mapping (text is junk) and were not indexed: %v", len(junkPages), clipInts(junkPages, 20)))
	}
	doc, err := b.Finish()
	if err != nil {
		return nil, err
	}
	for k, c := range conf {
		doc.Blocks[k].Confidence = c
	}
	return doc, nil
}

// assemblePage adds the paragraphs and headings of one page's text, or
// notes the page as junk.
func assemblePage(b *extract.Builder, page int, raw string, pending []OutlineItem, junkPages *[]int) {
	text := Sanitize(raw)
	if Junk(text) {
		*junkPages = append(*junkPages, page)
		return
	}
	for _, para := range paragraphs(text) {
		first, rest, _ := strings.Cut(para, "\n")
		if k := matchHeading(first, pending); k >= 0 {
			b.Add(extract.Heading, pending[k].Level, page, strings.TrimSpace(first))
			pending = append(pending[:k:k], pending[k+1:]...)
			b.Add(extract.Paragraph, 0, page, strings.TrimSpace(rest))
			continue
		}
		b.Add(extract.Paragraph, 0, page, para)
	}
}

// paragraphs splits text into runs of non-blank lines, each trimmed.
func paragraphs(text string) []string {
	var out []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			out = append(out, strings.TrimSpace(strings.Join(cur, "\n")))
			cur = cur[:0]
		}
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		cur = append(cur, strings.TrimRight(line, " \t"))
	}
	flush()
	return out
}

// matchHeading returns the index of the outline item whose title is line.
func matchHeading(line string, items []OutlineItem) int {
	l := fold(line)
	if l == "" {
		return -1
	}
	for i, it := range items {
		if t := fold(it.Title); t == l || (strings.HasPrefix(l, t) && len(l)-len(t) <= 8 && len(t) >= 4) {
			return i
		}
	}
	return -1
}

func fold(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }

// Sanitize makes extracted text safe to index and show: valid UTF-8, NFKC
// (ligatures and full-width forms unfolded), no control or bidi-override
// characters except newline and tab.
func Sanitize(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = norm.NFKC.String(s)
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r == '\r' || r == '\f' || r == '\v':
			return '\n'
		case unicode.IsControl(r), unicode.Is(unicode.Bidi_Control, r), r == '\u200b', r == '\ufeff':
			return -1
		}
		return r
	}, s)
}

// Junk reports whether a page's text is what a PDF without a usable character
// mapping yields: mojibake, letter soup without word breaks, or replacement
// characters. Such text would only pollute search.
func Junk(s string) bool {
	var letters, latin1, bad, total, longWordLetters int
	for _, w := range strings.Fields(s) {
		wl := 0
		for _, r := range w {
			total++
			switch {
			case r == utf8.RuneError || unicode.Is(unicode.Co, r):
				bad++
			case unicode.IsLetter(r):
				letters++
				wl++
				if r >= 0x80 && r <= 0xFF {
					latin1++
				}
			case r >= 0x80 && r <= 0xFF:
				latin1++
			}
		}
		if utf8.RuneCountInString(w) > 25 && wl*10 > utf8.RuneCountInString(w)*8 {
			longWordLetters += wl
		}
	}
	if total < 40 {
		return false
	}
	return bad*10 > total || latin1*4 > total || (letters > 0 && longWordLetters*2 > letters)
}

func clipInts(xs []int, n int) []int {
	if len(xs) > n {
		return xs[:n]
	}
	return xs
}
