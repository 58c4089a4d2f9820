// Package sheet extracts spreadsheets: Excel workbooks (.xlsx, through
// excelize's streaming row reader), OpenDocument spreadsheets (.ods, and
// flat .fods, content.xml streamed token by token) and CSV/TSV files.
//
// Every sheet is one section: a level-1 heading with the sheet's name (and
// a level-2 "(hidden)" heading for a hidden sheet), then one Table block
// per row. The first row whose cells are all distinct text names the
// columns, and every later row is written "Header: value, Header: value",
// so a chunk cut anywhere still says what each value is. Values are what
// the spreadsheet displays (number formats, dates, percentages, the cached
// results of formulas). A workbook's sheets are its pages.
package sheet

import (
	"context"
	"fmt"
	"time"

	"github.com/strata-kb/strata/ingestor/extract"
)

const (
	// maxColumns is the widest sheet Excel and LibreOffice make (XFD);
	// cells past it are not read, so a row is bounded whatever it claims.
	maxColumns = 16384
	// maxRows is the longest sheet Excel and LibreOffice make.
	maxRows = 1 << 20
	// maxEntries bounds the zip central directory we walk; real
	// workbooks have a few dozen parts.
	maxEntries = 10000
	// ctxEvery is how many rows (or XML tokens) pass between context
	// checks: often enough to stop within milliseconds, rarely enough to
	// cost nothing.
	ctxEvery = 256
	// maxWarnings keeps a broken file from growing Document.Warnings
	// without bound; the rest are counted in one final warning.
	maxWarnings = 32
	// maxTitleBytes bounds a title or a heading (a sheet's name).
	maxTitleBytes = 256
	// maxLabelBytes bounds a header cell used as the label of every value
	// in its column: a long header is repeated in every row.
	maxLabelBytes = 128
)

// run is the state every extraction shares: the context and deadline,
// the limits, the document being built and its warnings.
type run struct {
	// ctx is the caller's context; deadline applies lim.Timeout. Both are
	// polled rather than combined with context.WithTimeout, which would
	// cost a timer.
	ctx      context.Context
	deadline time.Time
	lim      extract.Limits
	b        *extract.Builder

	warnings, suppressed int
}

func newRun(ctx context.Context, format string, lim extract.Limits) *run {
	lim = withDefaults(lim)
	return &run{ctx: ctx, deadline: time.Now().Add(lim.Timeout), lim: lim, b: extract.NewBuilder(format).Within(lim)}
}

// withDefaults fills zero limits from extract.DefaultLimits, so a zero
// Limits never means "nothing allowed".
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
	if lim.MaxPages <= 0 {
		lim.MaxPages = def.MaxPages
	}
	return lim
}

// failed is the error an Extract returns: err with the format and file
// name before it, as one readable line of at most 1 KiB. The XML decoder
// and excelize quote what they could not read, bytes of any kind.
func failed(format, name string, err error) error {
	return readable{msg: oneLine(fmt.Sprintf("%s %s: %v", format, oneLine(name, maxTitleBytes), err), 1024), err: err}
}

type readable struct {
	msg string
	err error
}

func (e readable) Error() string { return e.msg }
func (e readable) Unwrap() error { return e.err }

// checkCtx turns a cancelled or expired context into extract.ErrTimeout.
func (x *run) checkCtx() error {
	if err := x.ctx.Err(); err != nil {
		return fmt.Errorf("%w: %v", extract.ErrTimeout, err)
	}
	if time.Now().After(x.deadline) {
		return fmt.Errorf("%w: %v after %v", extract.ErrTimeout, context.DeadlineExceeded, x.lim.Timeout)
	}
	return nil
}

// warn records a recoverable problem, at most maxWarnings of them.
func (x *run) warn(format string, args ...any) {
	if x.warnings >= maxWarnings {
		x.suppressed++
		return
	}
	x.warnings++
	x.b.Warn(oneLine(fmt.Sprintf(format, args...), 4*maxTitleBytes))
}

// tooLarge is the error for text over lim.MaxTextBytes.
func (x *run) tooLarge() error {
	return fmt.Errorf("%w: text exceeds MaxTextBytes (%d bytes)", extract.ErrTooLarge, x.lim.MaxTextBytes)
}

// add appends a block and enforces lim.MaxTextBytes on the text so far.
func (x *run) add(kind extract.Kind, level, page int, text string) error {
	if len(text) > x.room() {
		return x.tooLarge()
	}
	x.b.Add(kind, level, page, text)
	return nil
}

// room is how many bytes the next block may have: what MaxTextBytes
// leaves, less the blank line Builder.Add puts before every block but the
// first.
func (x *run) room() int {
	if x.b.Len() == 0 {
		return x.lim.MaxTextBytes
	}
	return x.lim.MaxTextBytes - x.b.Len() - 2
}

// doc finishes the document.
func (x *run) doc() (*extract.Document, error) {
	if x.suppressed > 0 {
		x.b.Warn(fmt.Sprintf("%d more warnings not shown", x.suppressed))
	}
	return x.b.Finish()
}

// sheetHeading writes a sheet's headings: its name (or "Sheet n" when it
// has none) and "(hidden)" under it when it is hidden.
func (x *run) sheetHeading(name string, page int, hidden bool) error {
	title := oneLine(name, maxTitleBytes)
	if title == "" {
		title = fmt.Sprintf("Sheet %d", page)
	}
	if err := x.add(extract.Heading, 1, page, title); err != nil {
		return err
	}
	if hidden {
		return x.add(extract.Heading, 2, page, "(hidden)")
	}
	return nil
}

// tooManySheets warns about the sheets past lim.MaxPages, which are not
// read.
func (x *run) tooManySheets(total int) {
	if total > x.lim.MaxPages {
		x.warn("%d of %d sheets not read: more than MaxPages (%d)", total-x.lim.MaxPages, total, x.lim.MaxPages)
	}
}
