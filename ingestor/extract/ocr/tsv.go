package ocr

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/strata-kb/strata/ingestor/extract"
)

// tsvHeader is the first line of Tesseract's tsv output (4.0 and later).
const tsvHeader = "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext"

// minConfidence is the confidence of a paragraph none of whose words
// Tesseract was sure of at all: a block read by OCR has a confidence above
// 0, which is what text the file holds as text has.
const minConfidence = 0.01

// ParseTSV turns Tesseract's tsv output into paragraphs in reading order:
// the words (level 5 rows) of one page, block and paragraph, joined by
// single spaces across lines, with the mean confidence of the words
// Tesseract scored (conf >= 0). Paragraphs with no text are left out.
func ParseTSV(out []byte) ([]extract.OCRBlock, error) {
	header, rest, _ := bytes.Cut(out, []byte("\n"))
	if string(bytes.TrimRight(header, "\r")) != tsvHeader {
		return nil, fmt.Errorf("%w: tesseract tsv: header %q", extract.ErrCorrupt, extract.Truncate(string(header), 120))
	}
	var (
		blocks   []extract.OCRBlock
		text     strings.Builder
		confSum  float64
		confN    int
		cur, key [3]int // page, block, paragraph of the words in text
	)
	flush := func() {
		if text.Len() > 0 {
			c := minConfidence
			if confN > 0 {
				c = max(confSum/float64(confN), minConfidence)
			}
			blocks = append(blocks, extract.OCRBlock{Text: text.String(), Confidence: c})
		}
		text.Reset()
		confSum, confN = 0, 0
	}
	for n := 2; len(rest) > 0; n++ {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte("\n"))
		line = bytes.TrimRight(line, "\r")
		if len(line) == 0 {
			continue
		}
		f := strings.SplitN(string(line), "\t", 12)
		if len(f) != 12 {
			return nil, fmt.Errorf("%w: tesseract tsv line %d: %d fields, want 12", extract.ErrCorrupt, n, len(f))
		}
		if f[0] != "5" { // a page, block, paragraph or line row: no text of its own
			continue
		}
		for i := range key {
			v, err := strconv.Atoi(f[1+i])
			if err != nil {
				return nil, fmt.Errorf("%w: tesseract tsv line %d: %v", extract.ErrCorrupt, n, err)
			}
			key[i] = v
		}
		conf, err := strconv.ParseFloat(f[10], 64)
		if err != nil {
			return nil, fmt.Errorf("%w: tesseract tsv line %d: %v", extract.ErrCorrupt, n, err)
		}
		word := cleanWord(f[11])
		if word == "" {
			continue
		}
		if key != cur {
			flush()
			cur = key
		}
		if text.Len() > 0 {
			text.WriteByte(' ')
		}
		text.WriteString(word)
		if conf >= 0 {
			confSum += min(conf, 100)
			confN++
		}
	}
	flush()
	return blocks, nil
}

// cleanWord makes a word safe to index: valid UTF-8, no control or format
// characters, no inner white space (a word is one token).
func cleanWord(w string) string {
	w = strings.ToValidUTF8(w, "\uFFFD")
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.IsSpace(r) {
			return -1
		}
		return r
	}, w)
}
