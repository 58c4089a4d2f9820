// Package slides reads presentations, PowerPoint's Office Open XML
// (.pptx, PPTX) and OpenDocument's (.odp, ODP), as a person reads them:
// slide after slide in presentation order, each a section titled by the
// slide's title, its text boxes, tables and pictures in reading order
// (top to bottom, then left to right), then its speaker notes. A hidden
// slide is read and marked as hidden.
//
// Both formats are zip archives of XML parts. The archive is read from
// memory and every part is streamed through a size cap shared by the
// whole file, so a hostile file (zip bomb, lying headers, deep nesting,
// huge text, ten thousand slides) fails with a clear error or reads in
// time linear in its size instead of exhausting memory or time.
package slides

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/strata-kb/strata/ingestor/extract"
)

// PPTX extracts PowerPoint presentations (Document.Format "pptx").
type PPTX struct{}

// ODP extracts OpenDocument presentations (Document.Format "odp").
type ODP struct{}

var (
	_ extract.Extractor = PPTX{}
	_ extract.Extractor = ODP{}
)

// Extract reads a .pptx file: slides in the order of ppt/presentation.xml,
// one section per slide, the slide number as the page of its blocks.
// Zero fields of lim take their value from extract.DefaultLimits.
func (PPTX) Extract(ctx context.Context, data []byte, name string, lim extract.Limits) (*extract.Document, error) {
	return extractWith(ctx, data, name, lim, "pptx", (*extraction).readPPTX)
}

// Extract reads a .odp file: the pages of content.xml in order, one
// section per slide, the slide number as the page of its blocks. Zero
// fields of lim take their value from extract.DefaultLimits.
func (ODP) Extract(ctx context.Context, data []byte, name string, lim extract.Limits) (*extract.Document, error) {
	return extractWith(ctx, data, name, lim, "odp", (*extraction).readODP)
}

// SniffPPTX reports whether data is a PPTX file: a zip archive with a
// ppt/presentation.xml entry. Only the central directory is read.
func SniffPPTX(data []byte) bool { return hasEntry(data, presentationPart) }

// SniffODP reports whether data is an ODP file: a zip archive whose
// mimetype entry, stored first and uncompressed as ODF requires, names a
// presentation.
func SniffODP(data []byte) bool {
	if !bytes.HasPrefix(data, []byte(zipMagic)) || len(data) < 30 {
		return false
	}
	nameLen := int(binary.LittleEndian.Uint16(data[26:28]))
	extraLen := int(binary.LittleEndian.Uint16(data[28:30]))
	body := 30 + nameLen + extraLen
	return string(data[30:min(30+nameLen, len(data))]) == "mimetype" && body <= len(data) &&
		bytes.HasPrefix(data[body:], []byte(odpMIME))
}

// extraction is the state of one Extract call.
type extraction struct {
	// ctx is the caller's context; deadline applies lim.Timeout. Both are
	// polled rather than combined with context.WithTimeout, which would
	// cost a timer and hide a parent that only reports through Err.
	ctx      context.Context
	deadline time.Time
	name     string // file name, cleaned for messages
	lim      extract.Limits
	b        *extract.Builder
	files    map[string]*zip.File // by partKey
	budget   int64                // bytes parts may still expand to

	layouts       map[string]*placeholders // by layout or master part
	seen          map[string]string        // picture parts tried: "" kept, else why not
	images        int                      // images kept
	imagesOverMax int                      // images dropped by lim.MaxImages
	pending       int                      // text bytes read for the slide being read, not yet added

	slides     int // slides in the presentation, read or not
	firstTitle string
	title      string         // from the document properties
	props      *extract.Props // the document properties, nil until read

	warnings, suppressed int
}

// maxWarnings keeps a broken file from growing Document.Warnings without
// bound; the rest are counted in one final warning.
const maxWarnings = 32

func extractWith(ctx context.Context, data []byte, name string, lim extract.Limits, format string,
	read func(*extraction) error) (*extract.Document, error) {
	lim = withDefaults(lim)
	x := &extraction{
		ctx:      ctx,
		deadline: time.Now().Add(lim.Timeout),
		name:     oneLine(name, maxLabelBytes),
		lim:      lim,
		b:        extract.NewBuilder(format).Within(lim),
		budget:   lim.MaxUncompressed,
		seen:     map[string]string{},
		layouts:  map[string]*placeholders{},
	}
	doc, err := x.run(data, read)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", format, x.name, err)
	}
	return doc, nil
}

func (x *extraction) run(data []byte, read func(*extraction) error) (*extract.Document, error) {
	if err := x.checkCtx(); err != nil {
		return nil, err
	}
	if bytes.HasPrefix(data, []byte(oleMagic)) {
		return nil, x.oleError(data)
	}
	files, err := openZip(data)
	if err != nil {
		return nil, err
	}
	x.files = files
	if err := read(x); err != nil {
		return nil, err
	}
	return x.finish()
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
	if lim.MaxPages <= 0 {
		lim.MaxPages = def.MaxPages
	}
	return lim
}

// errorf wraps a sentinel error with a reason. Extract adds the file name.
func (x *extraction) errorf(sentinel error, format string, args ...any) error {
	return fmt.Errorf("%w: %s", sentinel, fmt.Sprintf(format, args...))
}

// checkCtx turns a cancelled or expired context into extract.ErrTimeout.
func (x *extraction) checkCtx() error {
	if err := x.ctx.Err(); err != nil {
		return fmt.Errorf("%w: %v", extract.ErrTimeout, err)
	}
	if time.Now().After(x.deadline) {
		return fmt.Errorf("%w: %v after %v", extract.ErrTimeout, context.DeadlineExceeded, x.lim.Timeout)
	}
	return nil
}

func (x *extraction) warn(format string, args ...any) {
	if x.warnings >= maxWarnings {
		x.suppressed++
		return
	}
	x.warnings++
	// Messages quote part names from the archive, which may hold any bytes.
	x.b.Warn(oneLine(fmt.Sprintf(format, args...), 4*maxLabelBytes))
}

// oleError classifies an OLE compound file. An encrypted OOXML package
// has a stream named "EncryptionInfo"; directory entry names are
// UTF-16LE, so that is what we look for. Anything else in an OLE
// container is most likely a legacy binary .ppt, which we do not read.
func (x *extraction) oleError(data []byte) error {
	if bytes.Contains(data, utf16le("EncryptionInfo")) || bytes.Contains(data, utf16le("EncryptedPackage")) {
		return x.errorf(extract.ErrEncrypted, "password-protected presentation (OLE EncryptionInfo)")
	}
	return x.errorf(extract.ErrUnsupported, "OLE compound file, probably a legacy .ppt, not OOXML")
}

func utf16le(s string) []byte {
	out := make([]byte, 0, 2*len(s))
	for i := 0; i < len(s); i++ {
		out = append(out, s[i], 0)
	}
	return out
}
