package extracttest

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // Images are checked by decoding their headers.
	_ "image/png"
	"math"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/shared/metadata"
)

// Profile is what a format promises about every document it extracts,
// beyond what the extract package promises for all of them. Check holds a
// document to both.
type Profile struct {
	// Format is Document.Format ("pdf", "docx", "html", ...).
	Format string
	// TextIsInput: Document.Text is the file itself, byte for byte, so
	// offsets point into the source (Markdown, code, plain text).
	TextIsInput bool
	// Markup lists the characters besides white space that may lie between
	// blocks (Markdown's list and quote markers, rules, setext underlines).
	// Anything else outside the blocks would be text no chunk holds.
	Markup string
	// Kinds are the block kinds the format makes; nil allows all.
	Kinds []extract.Kind
	// MaxLevel is the deepest heading level; 0 means 6.
	MaxLevel int
	// StepHeadings: the first heading is at level 1 and a heading is at
	// most one level below the one before it (declarations nest: a method
	// is inside its class).
	StepHeadings bool
	// Pages: the format has pages; every block is on a page 1..Pages.
	Pages bool
	// Images: the format may carry images (with Figure blocks).
	Images bool
	// Language: Document.Language names the source language.
	Language bool
	// CleanText: Text has no control characters other than tab and line
	// feed (formats whose text is extracted, not the file itself).
	CleanText bool
	// CleanTitle: Title has no control characters (so no line breaks).
	CleanTitle bool
	// TrimmedBlocks: no block but Code (kept as it is) ends with white
	// space, nor starts with it but for indentation (in a text that is the
	// input) and a table's empty first cell.
	TrimmedBlocks bool
	// Space is the white space a block may not consist of or, with
	// TrimmedBlocks, end with; "" is extract's (Builder.Add's): space, tab,
	// line breaks, form feed, vertical tab and no-break space. Markdown's
	// is CommonMark's (a line of a form feed is a paragraph).
	Space string
	// MetadataKeys are the keys Document.Metadata may hold; nil allows any
	// lower-case key (Markdown front matter is the author's).
	MetadataKeys []string
	// CleanMetadata: string values are as extract.PropText leaves them
	// (one line, no control or format characters, single spaces, trimmed).
	CleanMetadata bool
}

func (p Profile) space() string {
	if p.Space != "" {
		return p.Space
	}
	return extractSpace
}

func (p Profile) maxLevel() int {
	if p.MaxLevel > 0 {
		return p.MaxLevel
	}
	return 6
}

// maxProblems bounds the problems one Check reports.
const maxProblems = 8

type problems struct{ errs []error }

func (p *problems) add(format string, args ...any) {
	if len(p.errs) < maxProblems {
		p.errs = append(p.errs, fmt.Errorf(format, args...))
	}
}

func (p *problems) err() error { return errors.Join(p.errs...) }

// Verify fails tb when doc breaks an invariant (Check).
func Verify(tb testing.TB, doc *extract.Document, input []byte, p Profile) {
	tb.Helper()
	if err := Check(doc, input, p); err != nil {
		tb.Fatalf("%s document breaks the extract invariants:\n%v", p.Format, err)
	}
}

// Check returns what doc, extracted from input, breaks of the invariants
// every extractor keeps and of those its format promises (p), or nil:
//
//   - Text is valid UTF-8 (the file itself when p.TextIsInput); without
//     control characters when p.CleanText.
//   - Blocks are in reading order and do not overlap: each Text[Start:End]
//     is non-empty, starts and ends on a character boundary and is not
//     blank; what lies between blocks is white space (or p.Markup), so no
//     text is outside every chunk.
//   - A Heading has a level 1..p.MaxLevel, other blocks level 0; headings
//     step one level at a time when p.StepHeadings.
//   - Pages: every block on a page 1..Pages in order when p.Pages, else
//     none. A Figure block points at an image (each image at most once),
//     other blocks at none; images are PNG or JPEG whose headers agree
//     with Width, Height and MIME, on a page of the document.
//   - Title is valid UTF-8, one line without control characters when
//     p.CleanTitle; warnings are such lines; Language is set exactly when
//     p.Language.
//   - Metadata keys are lower case (and among p.MetadataKeys); values are
//     of a known kind, within what extract.BoundValue leaves, dates read
//     back as themselves, numbers finite, strings valid UTF-8 (and clean
//     when p.CleanMetadata).
//   - Members (a container's) each have a document and a path that is
//     safe (memberPathProblem: '/'-separated, no empty, "." or ".."
//     element, no control or format character) and unique among its
//     container's members; each member's document keeps these invariants
//     for its own format (memberProfile), its members' too.
func Check(doc *extract.Document, input []byte, p Profile) error {
	if doc == nil {
		return errors.New("nil document")
	}
	var pr problems
	checkText(&pr, doc, input, p)
	checkBlocks(&pr, doc, p)
	checkImages(&pr, doc, p)
	checkLabels(&pr, doc, p)
	checkMetadata(&pr, doc.Metadata, p)
	checkMembers(&pr, doc)
	return pr.err()
}

func checkMembers(pr *problems, doc *extract.Document) {
	seen := map[string]bool{}
	for i, m := range doc.Members {
		if why := memberPathProblem(m.Path); why != "" {
			pr.add("member %d: path %q %s", i, clip(m.Path), why)
		}
		if seen[m.Path] {
			pr.add("member %d: path %q is another member's too", i, clip(m.Path))
		}
		seen[m.Path] = true
		if m.Doc == nil {
			pr.add("member %d (%q) has no document", i, clip(m.Path))
			continue
		}
		if err := Check(m.Doc, nil, memberProfile(m.Doc)); err != nil {
			pr.add("member %q: %v", clip(m.Path), err)
		}
	}
}

func checkText(pr *problems, doc *extract.Document, input []byte, p Profile) {
	if doc.Format != p.Format {
		pr.add("Format %q, want %q", doc.Format, p.Format)
	}
	if !utf8.ValidString(doc.Text) {
		pr.add("Text is not valid UTF-8")
	}
	if p.TextIsInput && input != nil && doc.Text != string(input) {
		pr.add("Text (%d bytes) is not the input (%d bytes)", len(doc.Text), len(input))
	}
	if p.CleanText {
		if i := strings.IndexFunc(doc.Text, isControl); i >= 0 {
			r, _ := utf8.DecodeRuneInString(doc.Text[i:])
			pr.add("control character %U at byte %d of Text", r, i)
		}
	}
}

// isControl is a control character other than tab and line feed.
func isControl(r rune) bool { return unicode.IsControl(r) && r != '\t' && r != '\n' }

// extractSpace is extract's notion of white space: Builder.Add skips text
// of nothing else.
const extractSpace = " \t\n\r\f\v\u00a0"

// isSpace is any white space (what may lie between blocks).
func isSpace(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune(extractSpace, r) }

func checkBlocks(pr *problems, doc *extract.Document, p Profile) {
	text := doc.Text
	prev, prevLevel, prevPage := 0, 0, 1
	figures := map[int]int{} // image -> block
	gapOK := func(r rune) bool { return isSpace(r) || strings.ContainsRune(p.Markup, r) }
	for i, b := range doc.Blocks {
		if b.Start < prev || b.End <= b.Start || b.End > len(text) {
			pr.add("block %d [%d,%d) is empty, out of order or out of range (previous block ends at %d, Text has %d bytes)", i, b.Start, b.End, prev, len(text))
			return // the offsets of the rest mean nothing
		}
		s := text[b.Start:b.End]
		if !utf8.RuneStart(text[b.Start]) || (b.End < len(text) && !utf8.RuneStart(text[b.End])) {
			pr.add("block %d [%d,%d) cuts a character", i, b.Start, b.End)
		}
		if gap := text[prev:b.Start]; strings.TrimFunc(gap, gapOK) != "" {
			pr.add("text %q before block %d is in no block", clip(gap), i)
		}
		if strings.Trim(s, p.space()) == "" {
			pr.add("block %d [%d,%d) is blank: %q", i, b.Start, b.End, clip(s))
		}
		if p.TrimmedBlocks {
			first, _ := utf8.DecodeRuneInString(s)
			last, _ := utf8.DecodeLastRuneInString(s)
			blank := func(r rune) bool { return strings.ContainsRune(p.space(), r) }
			if b.Kind != extract.Code && (blank(last) || blank(first) && b.Kind != extract.Table && !p.TextIsInput) {
				pr.add("block %d (%v) has white space around it: %q", i, b.Kind, clip(s))
			}
		}
		if b.Kind < extract.Paragraph || b.Kind > extract.Figure || (p.Kinds != nil && !slices.Contains(p.Kinds, b.Kind)) {
			pr.add("block %d has kind %d (%v), which %s does not make", i, int(b.Kind), b.Kind, p.Format)
		}
		switch {
		case b.Kind == extract.Heading && (b.Level < 1 || b.Level > p.maxLevel()):
			pr.add("heading block %d has level %d, want 1..%d", i, b.Level, p.maxLevel())
		case b.Kind != extract.Heading && b.Level != 0:
			pr.add("block %d (%v) has level %d, want 0", i, b.Kind, b.Level)
		case b.Kind == extract.Heading && p.StepHeadings && b.Level > prevLevel+1:
			pr.add("heading block %d at level %d follows level %d: sections must nest one level at a time", i, b.Level, prevLevel)
		}
		if b.Kind == extract.Heading {
			prevLevel = b.Level
		}
		switch {
		case !p.Pages && b.Page != 0:
			pr.add("block %d is on page %d of a format without pages", i, b.Page)
		case p.Pages && (b.Page < prevPage || b.Page > doc.Pages):
			pr.add("block %d is on page %d (previous block on page %d, %d pages)", i, b.Page, prevPage, doc.Pages)
		}
		if p.Pages && b.Page > 0 {
			prevPage = b.Page
		}
		if b.Kind == extract.Figure {
			if b.Image < 0 || b.Image >= len(doc.Images) {
				pr.add("figure block %d points at image %d of %d", i, b.Image, len(doc.Images))
			} else if j, dup := figures[b.Image]; dup {
				pr.add("figure blocks %d and %d both describe image %d", j, i, b.Image)
			} else {
				figures[b.Image] = i
				if img := doc.Images[b.Image]; img.Page != b.Page {
					pr.add("figure block %d is on page %d, its image on page %d", i, b.Page, img.Page)
				}
			}
		} else if b.Image != 0 {
			pr.add("block %d (%v) points at image %d", i, b.Kind, b.Image)
		}
		prev = b.End
	}
	if tail := text[prev:]; strings.TrimFunc(tail, gapOK) != "" {
		pr.add("text %q after the last block is in no block", clip(tail))
	}
	if !p.Pages && doc.Pages != 0 {
		pr.add("Pages %d for a format without pages", doc.Pages)
	}
	if p.Pages && (doc.Pages < 0 || (len(doc.Blocks) > 0 && doc.Pages < 1)) {
		pr.add("Pages %d with %d blocks", doc.Pages, len(doc.Blocks))
	}
}

func checkImages(pr *problems, doc *extract.Document, p Profile) {
	if !p.Images && len(doc.Images) > 0 {
		pr.add("%d images from a format without images", len(doc.Images))
		return
	}
	for i, img := range doc.Images {
		if img.Name == "" || !utf8.ValidString(img.Name) || strings.ContainsFunc(img.Name, isControl) {
			pr.add("image %d has name %q", i, img.Name)
		}
		cfg, format, err := image.DecodeConfig(bytes.NewReader(img.Data))
		switch {
		case err != nil:
			pr.add("image %d (%s, %d bytes) does not decode: %v", i, img.MIME, len(img.Data), err)
		case img.MIME != "image/"+format || (format != "png" && format != "jpeg"):
			pr.add("image %d is %s, labelled %q", i, format, img.MIME)
		case cfg.Width != img.Width || cfg.Height != img.Height:
			pr.add("image %d is %dx%d, labelled %dx%d", i, cfg.Width, cfg.Height, img.Width, img.Height)
		}
		if p.Pages && (img.Page < 1 || img.Page > doc.Pages) || !p.Pages && img.Page != 0 {
			pr.add("image %d is on page %d of %d", i, img.Page, doc.Pages)
		}
	}
}

func checkLabels(pr *problems, doc *extract.Document, p Profile) {
	if !utf8.ValidString(doc.Title) || p.CleanTitle && !oneLine(doc.Title) {
		pr.add("Title %q is not one line of text", clip(doc.Title))
	}
	if (doc.Language != "") != p.Language || !oneLine(doc.Language) {
		pr.add("Language %q (the format names one: %v)", doc.Language, p.Language)
	}
	for i, w := range doc.Warnings {
		if w == "" || !oneLine(w) {
			pr.add("warning %d %q is not one clean line", i, clip(w))
		}
	}
}

// oneLine: valid UTF-8 without control characters (so no line breaks).
func oneLine(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsFunc(s, unicode.IsControl)
}

// maxMetadataKeys is what an extractor may hand the merge: front matter
// keeps four times what a document keeps, so the merge can say what it dropped.
const maxMetadataKeys = 4 * metadata.MaxKeys

func checkMetadata(pr *problems, m metadata.Metadata, p Profile) {
	if len(m) > maxMetadataKeys {
		pr.add("%d metadata keys, more than %d", len(m), maxMetadataKeys)
	}
	for _, k := range m.Keys() {
		v := m[k]
		if k == "" || k != strings.ToLower(k) || !utf8.ValidString(k) {
			pr.add("metadata key %q is not lower case", k)
		}
		if p.MetadataKeys != nil && !slices.Contains(p.MetadataKeys, k) {
			pr.add("metadata key %q is not one %s has (%v)", k, p.Format, p.MetadataKeys)
		}
		checkValue(pr, k, v, p)
	}
}

func checkValue(pr *problems, k string, v metadata.Value, p Profile) {
	texts := []string{v.Text}
	switch v.Kind {
	case metadata.String:
	case metadata.Date:
		if d, ok := metadata.ParseDate(v.Text); !ok || !d.Equal(v.Date) {
			pr.add("metadata %s: date %q does not read back as %v", k, v.Text, v.Date)
		}
	case metadata.Number:
		if math.IsNaN(v.Number) || math.IsInf(v.Number, 0) {
			pr.add("metadata %s: number %v", k, v.Number)
		}
	case metadata.List:
		texts = v.List
		if len(v.List) > metadata.MaxListItems+1 {
			pr.add("metadata %s: list of %d items, more than extract.BoundValue leaves", k, len(v.List))
		}
	default:
		pr.add("metadata %s: kind %d", k, v.Kind)
	}
	for _, s := range texts {
		switch {
		case !utf8.ValidString(s):
			pr.add("metadata %s: value %q is not valid UTF-8", k, clip(s))
		case len(s) > extract.MaxPropBytes:
			pr.add("metadata %s: value of %d bytes, more than extract.MaxPropBytes", k, len(s))
		case p.CleanMetadata && s != extract.PropText(s):
			pr.add("metadata %s: value %q is not clean (extract.PropText)", k, clip(s))
		}
	}
}

// CheckLimits returns how doc exceeds lim, or nil: more text than
// MaxTextBytes or more held than MaxFileBytes (extract.Held), its
// members' counted in both (a container's members share its limits);
// more images than MaxImages, an image over MaxImageBytes or a block on a
// page past MaxPages in doc or in any of its members (each a document of
// its own). Zero fields are not checked.
func CheckLimits(doc *extract.Document, lim extract.Limits) error {
	var pr problems
	if n := extract.TextWithMembers(doc); lim.MaxTextBytes > 0 && n > lim.MaxTextBytes {
		pr.add("%d bytes of text%s, MaxTextBytes %d", n, withMembers(doc), lim.MaxTextBytes)
	}
	if n := extract.HeldWithMembers(doc); lim.MaxFileBytes > 0 && n > lim.MaxFileBytes {
		pr.add("holds %d bytes%s, MaxFileBytes %d", n, withMembers(doc), lim.MaxFileBytes)
	}
	eachDoc(doc, func(path string, d *extract.Document) {
		if path != "" {
			path = "member " + path + ": "
		}
		if lim.MaxImages > 0 && len(d.Images) > lim.MaxImages {
			pr.add("%s%d images, MaxImages %d", path, len(d.Images), lim.MaxImages)
		}
		for i, img := range d.Images {
			if lim.MaxImageBytes > 0 && int64(len(img.Data)) > lim.MaxImageBytes {
				pr.add("%simage %d has %d bytes, MaxImageBytes %d", path, i, len(img.Data), lim.MaxImageBytes)
			}
		}
		for i, b := range d.Blocks {
			if lim.MaxPages > 0 && b.Page > lim.MaxPages {
				pr.add("%sblock %d is on page %d, MaxPages %d", path, i, b.Page, lim.MaxPages)
				break
			}
		}
	})
	return pr.err()
}

// withMembers says that a container's members are counted with it.
func withMembers(doc *extract.Document) string {
	if len(doc.Members) == 0 {
		return ""
	}
	return fmt.Sprintf(" (with its %d members' and theirs)", len(doc.Members))
}

// clip shortens s for a message.
func clip(s string) string {
	if len(s) <= 80 {
		return s
	}
	return extract.Truncate(s, 80) + "…"
}
