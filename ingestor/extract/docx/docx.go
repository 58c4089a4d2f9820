// Package docx extracts text, structure and images from Word documents in
// the Office Open XML format (.docx).
//
// A .docx file is a zip archive of XML parts. The archive is read from
// memory and every part is streamed through a size cap, so a hostile file
// (zip bomb, lying headers, deep nesting, huge text) fails with a clear
// error instead of exhausting memory or time.
package docx

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/strata-kb/strata/ingestor/extract"
)

const (
	// maxEntries bounds the zip central directory we are willing to walk;
	// real documents have a few dozen parts.
	maxEntries = 10000
	// oleMagic starts every OLE compound file. Password-protected OOXML
	// documents are stored in one (MS-OFFCRYPTO), as are legacy .doc files.
	oleMagic = "\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
	zipMagic = "PK\x03\x04"
)

// Extractor extracts .docx files. It implements extract.Extractor.
type Extractor struct{}

var _ extract.Extractor = Extractor{}

// Extract reads the document body of a .docx file in reading order:
// headings, paragraphs, tables (one block each) and PNG/JPEG images,
// each with the page it starts on when the file records page breaks
// (pages.go); then its headers, footers, footnotes, endnotes and
// comments, each kind under a heading of its own (trailing.go).
// Zero fields of lim take their value from extract.DefaultLimits, so a
// zero Limits never means "unlimited".
func (Extractor) Extract(ctx context.Context, data []byte, name string, lim extract.Limits) (*extract.Document, error) {
	lim = withDefaults(lim)
	x := &extraction{
		ctx:      ctx,
		deadline: time.Now().Add(lim.Timeout),
		name:     oneLine(name, maxLabelBytes),
		lim:      lim,
		b:        extract.NewBuilder("docx").Within(lim),
		seen:     map[string]bool{},
		rels:     map[string]string{},
		style:    styleSheet{},
	}
	doc, err := x.run(data)
	if err != nil {
		return nil, fmt.Errorf("docx %s: %w", x.name, err)
	}
	return doc, nil
}

func (x *extraction) run(data []byte) (*extract.Document, error) {
	if err := x.checkCtx(); err != nil {
		return nil, err
	}
	if bytes.HasPrefix(data, []byte(oleMagic)) {
		return nil, x.oleError(data)
	}
	if err := x.open(data); err != nil {
		return nil, err
	}
	if err := x.readSideParts(); err != nil {
		return nil, err
	}
	if err := x.planTrailing(); err != nil {
		return nil, err
	}
	if err := x.readBody(); err != nil {
		return nil, err
	}
	if err := x.readTrailing(); err != nil {
		return nil, err
	}
	return x.finish()
}

// Sniff reports whether data is a DOCX file: a zip archive with a
// word/document.xml entry. Only the central directory is read.
func Sniff(data []byte) bool {
	if !bytes.HasPrefix(data, []byte(zipMagic)) {
		return false
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return false
	}
	for _, f := range zr.File {
		if partKey(f.Name) == documentPart {
			return true
		}
	}
	return false
}

// withDefaults fills zero limits from extract.DefaultLimits. A negative
// MaxImages keeps no images.
func withDefaults(lim extract.Limits) extract.Limits {
	def := extract.DefaultLimits()
	if lim.Timeout <= 0 {
		lim.Timeout = def.Timeout
	}
	if lim.MaxTextBytes <= 0 {
		lim.MaxTextBytes = def.MaxTextBytes
	}
	if lim.MaxUncompressed <= 0 {
		lim.MaxUncompressed = def.MaxUncompressed
	}
	if lim.MaxImages == 0 {
		lim.MaxImages = def.MaxImages
	}
	if lim.MaxImageBytes <= 0 {
		lim.MaxImageBytes = def.MaxImageBytes
	}
	return lim
}

// oleError classifies an OLE compound file. An encrypted OOXML package
// has a stream named "EncryptionInfo"; directory entry names are
// UTF-16LE, so that is what we look for. Anything else in an OLE
// container is most likely a legacy binary .doc, which we do not read.
func (x *extraction) oleError(data []byte) error {
	if bytes.Contains(data, utf16le("EncryptionInfo")) || bytes.Contains(data, utf16le("EncryptedPackage")) {
		return x.errorf(extract.ErrEncrypted, "password-protected document (OLE EncryptionInfo)")
	}
	return x.errorf(extract.ErrUnsupported, "OLE compound file, probably a legacy .doc, not OOXML")
}

func utf16le(s string) []byte {
	out := make([]byte, 0, 2*len(s))
	for i := 0; i < len(s); i++ {
		out = append(out, s[i], 0)
	}
	return out
}
