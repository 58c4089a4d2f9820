// Package extract turns the bytes of an uploaded file into text with its
// structure: headings, paragraphs, code, tables and images in reading order,
// with page numbers where the format has pages. Each format has its own
// subpackage; Detect picks one by content, not only by name.
package extract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/strata-kb/strata/shared/metadata"
)

// Kind is the kind of a block.
type Kind int

const (
	Paragraph Kind = iota
	Heading
	Code
	Table
	Figure // an image; its block text describes it
)

func (k Kind) String() string {
	switch k {
	case Heading:
		return "heading"
	case Code:
		return "code"
	case Table:
		return "table"
	case Figure:
		return "image"
	}
	return "paragraph"
}

// Block is one structural unit of a document. Text[Start:End] is its text;
// blocks are in reading order and do not overlap.
type Block struct {
	Kind  Kind
	Level int // heading level, 1 (top) to 6; Heading blocks only
	Start int // byte offset into Document.Text, inclusive
	End   int // byte offset into Document.Text, exclusive
	Page  int // 1-based page number; 0 for formats without pages
	Image int // index into Document.Images; Figure blocks only (their text is a description)
	// Confidence is the mean OCR word confidence (0-100] of a block read
	// from pixels by OCR; 0 for text the file holds as text.
	Confidence float64
}

// Image is an embedded picture, kept so agents can look at it.
type Image struct {
	Name   string // e.g. "page-3-image-1.png"
	MIME   string // image/png or image/jpeg
	Data   []byte
	Width  int
	Height int
	Page   int
}

// Document is the extracted content of one file.
type Document struct {
	Format   string // "pdf", "docx", "html", "markdown", "text", "code", "image"
	Language string // source language for code ("go", "python", ...)
	Text     string // valid UTF-8; chunk offsets refer to this text
	Blocks   []Block
	Pages    int    // page count, 0 when the format has no pages
	Title    string // the document's own title, when it has one
	// Metadata is what the file says about itself, typed, keys lower-cased
	// (nil without): Markdown front matter (nested keys joined with dots),
	// HTML <meta>, DOCX core properties, PDF document info, the last three
	// under the Prop* keys (props.go).
	Metadata metadata.Metadata
	Images   []Image
	Warnings []string // recoverable problems, e.g. pages skipped as junk
	// Members are the files inside a container (a message's attachments,
	// an archive's files, a mailbox's messages), each read by its own
	// format: documents of their own, at <container path>//<Path>
	// (objkey.MemberPath). A member's own members are in its Document.
	Members []Member
}

// Member is a file inside a container, read by its own format.
type Member struct {
	// Path is the member's path inside its container, made safe
	// (container.MemberPath) and unique among the container's members.
	Path string
	Doc  *Document
}

// HeldWithMembers is what doc and its members hold, as MaxFileBytes counts it.
func HeldWithMembers(doc *Document) int64 {
	n := Held(doc)
	for _, m := range doc.Members {
		n += HeldWithMembers(m.Doc)
	}
	return n
}

// TextWithMembers is the bytes of text of doc and its members.
func TextWithMembers(doc *Document) int {
	n := len(doc.Text)
	for _, m := range doc.Members {
		n += TextWithMembers(m.Doc)
	}
	return n
}

// Limits bound the work and memory one file may take.
type Limits struct {
	Timeout         time.Duration // whole extraction
	MaxTextBytes    int           // extracted text beyond this is an error
	MaxUncompressed int64         // bytes a container (DOCX zip) may expand to
	MaxImages       int           // embedded images kept per file
	MaxImageBytes   int64         // an embedded image larger than this is skipped
	MaxMemoryBytes  int64         // address-space limit of helper processes (poppler)
	MaxPages        int           // pages extracted per PDF
	// OCR reads pictures and pages without a text layer; nil reads none
	// (they are recorded as such). Set by the ingestor from its flags.
	OCR OCR
	// MaxOCRPages bounds the pages (or pictures) of one file read by OCR;
	// OCRTimeout bounds the time OCR may take on one file.
	MaxOCRPages int
	OCRTimeout  time.Duration
	// MaxFileBytes bounds what one file's extraction holds: its text, its
	// blocks at their size in memory, its images (Held). Readers count it as
	// they add, so a file over it stops growing there (ErrTooLarge); the
	// registry lowers it per format (detect.FormatCaps). 0: no bound.
	MaxFileBytes int64
}

// OCR reads text from a page picture (PNG, JPEG or TIFF bytes). Each block
// it returns carries the mean confidence of its words.
type OCR interface {
	Recognize(ctx context.Context, image []byte) ([]OCRBlock, error)
}

// OCRBlock is one paragraph read by OCR.
type OCRBlock struct {
	Text       string
	Confidence float64 // mean word confidence, 0-100
}

// ErrNoOCR means a file needs OCR and none is available (Tesseract missing
// or OCR turned off); the reason names what is missing.
var ErrNoOCR = errors.New("needs OCR, which is not available")

// DefaultLimits are generous for real documents and stop bombs early.
func DefaultLimits() Limits {
	return Limits{
		Timeout:         2 * time.Minute,
		MaxTextBytes:    16 << 20,
		MaxUncompressed: 256 << 20,
		MaxImages:       64,
		MaxImageBytes:   8 << 20,
		MaxMemoryBytes:  1 << 30,
		MaxPages:        10000,
		MaxOCRPages:     200,
		OCRTimeout:      10 * time.Minute,
		MaxFileBytes:    256 << 20,
	}
}

// BlockBytes is what one Block holds in memory.
const BlockBytes = int64(unsafe.Sizeof(Block{}))

// Held is what doc holds, as MaxFileBytes counts it.
func Held(doc *Document) int64 {
	n := int64(len(doc.Text)) + int64(len(doc.Blocks))*BlockBytes
	for _, img := range doc.Images {
		n += int64(len(img.Data))
	}
	return n
}

// Hold counts n more bytes held against lim.MaxFileBytes: ErrTooLarge once
// held passes it. Readers that build a Document without a Builder call it
// as they grow.
func Hold(held *int64, n int64, lim Limits) error {
	*held += n
	if lim.MaxFileBytes > 0 && *held > lim.MaxFileBytes {
		return overBudget(lim)
	}
	return nil
}

func overBudget(lim Limits) error {
	return fmt.Errorf("%w: reading it would hold more than %d MiB of text, structure and images (the budget of one file, -max-file-bytes, for its format)",
		ErrTooLarge, lim.MaxFileBytes>>20)
}

// Errors callers can tell apart. Each is wrapped with the reason.
var (
	ErrUnsupported = errors.New("unsupported file type")
	ErrEncrypted   = errors.New("encrypted or password-protected")
	ErrCorrupt     = errors.New("corrupt or unreadable file")
	ErrTooLarge    = errors.New("content over the size limit")
	ErrTimeout     = errors.New("extraction took too long")
	// ErrInterrupted means extraction stopped for a reason outside the
	// file (shutdown, a reader process that could not start): the file is
	// read again later, never recorded as failed for it.
	ErrInterrupted = errors.New("extraction interrupted")
	// ErrReaderDied means the process reading the file died or was killed
	// over its memory budget while reading it: the file is recorded as
	// failed with the cause.
	ErrReaderDied = errors.New("the reader process died reading this file")
)

// Extractor extracts one format.
type Extractor interface {
	Extract(ctx context.Context, data []byte, name string, lim Limits) (*Document, error)
}

// Builder assembles Text and Blocks together so offsets always agree. Within
// a budget (Within), it counts what it holds as it grows and stops at the
// budget: Err says so.
type Builder struct {
	doc  Document
	buf  []byte
	lim  Limits
	held int64
	err  error
	// memberText is the text of the members added (AddMember): a
	// container's members share its limits.
	memberText int
	paths      map[string]struct{} // member paths taken
}

// Within bounds what the builder holds by lim.MaxFileBytes.
func (b *Builder) Within(lim Limits) *Builder {
	b.lim = lim
	return b
}

// Err is ErrTooLarge once the builder's budget is spent: nothing more is
// added, and the document must not be used.
func (b *Builder) Err() error { return b.err }

// hold counts n bytes more, or records the budget spent.
func (b *Builder) hold(n int64) bool {
	if b.err != nil {
		return false
	}
	if err := Hold(&b.held, n, b.lim); err != nil {
		b.err = err
		return false
	}
	return true
}

// NewBuilder starts a document of format.
func NewBuilder(format string) *Builder { return &Builder{doc: Document{Format: format}} }

// Add appends a block with text s, separated from the previous block by a
// blank line. Empty (all-space) text adds nothing. It returns the block index or -1.
func (b *Builder) Add(kind Kind, level, page int, s string) int {
	if isBlank(s) {
		return -1
	}
	cost := int64(len(s)) + BlockBytes
	if len(b.buf) > 0 {
		cost += 2
	}
	if !b.hold(cost) {
		return -1
	}
	if len(b.buf) > 0 {
		b.buf = append(b.buf, "\n\n"...)
	}
	start := len(b.buf)
	b.buf = append(b.buf, s...)
	b.doc.Blocks = append(b.doc.Blocks, Block{Kind: kind, Level: level, Start: start, End: len(b.buf), Page: page})
	return len(b.doc.Blocks) - 1
}

// AddImage appends an image and a block describing it.
func (b *Builder) AddImage(img Image, description string) {
	if !b.hold(int64(len(img.Data))) {
		return
	}
	b.doc.Images = append(b.doc.Images, img)
	if i := b.Add(Figure, 0, img.Page, description); i >= 0 {
		b.doc.Blocks[i].Image = len(b.doc.Images) - 1
	}
}

// AddMember adds doc as a member of the document being built, at path
// inside it, made unique among its members ("notes.txt", "notes (2).txt"),
// which it returns. What the member and its own members hold counts
// against the builder's budget, and their text against the container's
// text (MembersLen): a container's members share its limits.
func (b *Builder) AddMember(path string, doc *Document) (string, bool) {
	if !b.hold(HeldWithMembers(doc)) {
		return "", false
	}
	if b.paths == nil {
		b.paths = map[string]struct{}{}
	}
	unique := b.UniquePath(path)
	b.paths[unique] = struct{}{}
	b.memberText += TextWithMembers(doc)
	b.doc.Members = append(b.doc.Members, Member{Path: unique, Doc: doc})
	return unique, true
}

// UniquePath is the path AddMember gives a member at path now: path, or,
// when a member added before has it, path with a number before its
// extension ("notes (2).txt"), the first not taken. A container that says
// where a member is before adding it asks here.
func (b *Builder) UniquePath(path string) string {
	unique, ext := path, pathExt(path)
	for n := 2; ; n++ {
		if _, taken := b.paths[unique]; !taken {
			return unique
		}
		unique = fmt.Sprintf("%s (%d)%s", strings.TrimSuffix(path, ext), n, ext)
	}
}

// pathExt is p's last element's extension (".txt"), "" without one.
func pathExt(p string) string {
	for i := len(p) - 1; i >= 0 && p[i] != '/'; i-- {
		if p[i] == '.' {
			if i == 0 || p[i-1] == '/' {
				return ""
			}
			return p[i:]
		}
	}
	return ""
}

// Len is the text length so far in bytes.
func (b *Builder) Len() int { return len(b.buf) }

// MembersLen is the text of the members added so far, in bytes.
func (b *Builder) MembersLen() int { return b.memberText }

// Held is what the builder holds so far (Hold: text, blocks, images).
func (b *Builder) Held() int64 { return b.held }

// Finish returns the document, or Err when the budget was spent; the
// builder must not be used afterwards.
func (b *Builder) Finish() (*Document, error) {
	if b.err != nil {
		return nil, b.err
	}
	return b.Doc(), nil
}

// Doc returns the document; the builder must not be used afterwards.
func (b *Builder) Doc() *Document {
	b.doc.Text = string(b.buf)
	return &b.doc
}

// SetTitle, SetPages and Warn fill the document's metadata.
func (b *Builder) SetTitle(t string)    { b.doc.Title = Title(t) }
func (b *Builder) SetPages(n int)       { b.doc.Pages = n }
func (b *Builder) Warn(w string)        { b.doc.Warnings = append(b.doc.Warnings, w) }
func (b *Builder) SetLanguage(l string) { b.doc.Language = l }

func isBlank(s string) bool {
	for _, r := range s {
		switch r {
		case ' ', '\t', '\n', '\r', '\f', '\v', '\u00a0':
		default:
			return false
		}
	}
	return true
}

// CheckText verifies that data can be read as text: valid UTF-8, no NUL
// bytes, within the size limit.
func CheckText(data []byte, lim Limits) error {
	if lim.MaxTextBytes > 0 && len(data) > lim.MaxTextBytes {
		return fmt.Errorf("%w: %d bytes of text, limit %d", ErrTooLarge, len(data), lim.MaxTextBytes)
	}
	if bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) {
		return fmt.Errorf("%w: binary or invalid UTF-8 content", ErrCorrupt)
	}
	return nil
}

// MaxTitleBytes bounds a document's title and each heading's entry in a
// heading path: a heading path is repeated in every section under it, so an
// unbounded title (a code file of one 500 KB line is one declaration)
// would make structure that grows with the square of the text.
const MaxTitleBytes = 256

// Title is s as a title: one line, runs of white space as one space,
// trimmed, at most MaxTitleBytes (cut on a character boundary).
func Title(s string) string {
	s = strings.Join(strings.Fields(Truncate(s, 4*MaxTitleBytes)), " ")
	return strings.TrimSpace(Truncate(s, MaxTitleBytes))
}

// Truncate shortens s to at most n bytes without splitting a character.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
