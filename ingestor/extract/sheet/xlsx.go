package sheet

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/xuri/excelize/v2"

	"github.com/strata-kb/strata/ingestor/extract"
)

// XLSX extracts Excel workbooks (.xlsx, .xlsm) through excelize's
// streaming row reader. It implements extract.Extractor; Document.Format
// is "xlsx".
type XLSX struct{}

var _ extract.Extractor = XLSX{}

// maxRowSteps bounds the rows excelize's iterator steps through in one
// workbook, empty ones included: it walks every row number up to the
// last one a sheet names, so a sheet that names only row 1,048,576 costs
// a million steps, and two thousand such sheets would cost minutes. Real
// workbooks within MaxTextBytes stay far below it.
const maxRowSteps = 16 * maxRows

// Extract reads every sheet in workbook order (up to lim.MaxPages), each
// on its own page: a heading with its name, then its rows as displayed,
// formulas by their cached values. Zero fields of lim take their values
// from extract.DefaultLimits.
func (XLSX) Extract(ctx context.Context, data []byte, name string, lim extract.Limits) (doc *extract.Document, err error) {
	x := newRun(ctx, "xlsx", lim)
	defer func() {
		// excelize parses hostile bytes; a panic in it must fail this
		// file, not the ingestor.
		if p := recover(); p != nil {
			doc, err = nil, failed("xlsx", name, fmt.Errorf("%w: the workbook reader failed: %v", extract.ErrCorrupt, p))
		}
	}()
	if doc, err = x.xlsx(data); err != nil {
		return nil, failed("xlsx", name, err)
	}
	return doc, nil
}

func (x *run) xlsx(data []byte) (*extract.Document, error) {
	if err := x.checkCtx(); err != nil {
		return nil, err
	}
	if bytes.HasPrefix(data, []byte(oleMagic)) {
		return nil, oleError(data, "binary .xls")
	}
	// excelize decompresses every part when it opens the file: all count
	// against MaxUncompressed.
	a, err := x.openZip(data, func(string) bool { return true })
	if err != nil {
		return nil, err
	}
	if err := x.verify(a); err != nil {
		return nil, err
	}
	// Every part stays in memory (UnzipXMLSizeLimit equal to the whole
	// budget): no temporary files, and the guard can see the parts.
	f, err := excelize.OpenReader(bytes.NewReader(data), excelize.Options{
		UnzipSizeLimit:    x.lim.MaxUncompressed,
		UnzipXMLSizeLimit: x.lim.MaxUncompressed,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: opening the workbook: %v", extract.ErrCorrupt, err)
	}
	defer f.Close()
	if f.WorkBook == nil || len(f.WorkBook.Sheets.Sheet) == 0 {
		return nil, fmt.Errorf("%w: the workbook has no sheets", extract.ErrCorrupt)
	}
	g, err := x.guard(f)
	if err != nil {
		return nil, err
	}
	x.xlsxProps(f)

	sheets := f.WorkBook.Sheets.Sheet
	folded := make(map[string]int, len(sheets))
	for _, s := range sheets {
		folded[fold(s.Name)]++
	}
	x.b.SetPages(len(sheets))
	x.tooManySheets(len(sheets))
	steps := 0
	for i, s := range sheets[:min(len(sheets), x.lim.MaxPages)] {
		if err := x.checkCtx(); err != nil {
			return nil, err
		}
		hidden := s.State == "hidden" || s.State == "veryHidden"
		if err := x.sheetHeading(s.Name, i+1, hidden); err != nil {
			return nil, err
		}
		if folded[fold(s.Name)] > 1 {
			// excelize finds a sheet by its name without regard to case:
			// which of two such sheets it would read is left to chance.
			x.warn("sheet %d (%s) not read: another sheet has the same name", i+1, oneLine(s.Name, maxTitleBytes))
			continue
		}
		if err := x.xlsxSheet(f, g, s.Name, i+1, &steps); err != nil {
			return nil, err
		}
		if steps > maxRowSteps {
			if rest := min(len(sheets), x.lim.MaxPages) - i - 1; rest > 0 {
				x.warn("%d sheets after sheet %d not read: the workbook names more than %d rows", rest, i+1, maxRowSteps)
			}
			break
		}
	}
	return x.doc()
}

// fold is a sheet name without case, as excelize matches names
// (strings.EqualFold).
func fold(name string) string { return strings.ToLower(strings.ToUpper(name)) }

// xlsxSheet writes one sheet's rows, counting the iterator's steps.
func (x *run) xlsxSheet(f *excelize.File, g *guard, name string, page int, steps *int) error {
	rows, err := f.Rows(name)
	if err != nil {
		x.warn("sheet %d (%s) not read: %v", page, oneLine(name, maxTitleBytes), err)
		return nil
	}
	defer rows.Close()
	t := newTable(x, page)
	bad := 0 // rows excelize could not read whole
	for rows.Next() {
		if *steps++; *steps%ctxEvery == 0 {
			if err := x.checkCtx(); err != nil {
				return err
			}
		}
		if *steps > maxRowSteps {
			x.warn("sheet %d (%s) read in part: the workbook names more than %d rows", page, oneLine(name, maxTitleBytes), maxRowSteps)
			break
		}
		values, err := rows.Columns()
		if err != nil {
			bad++
		}
		for col, v := range values[:min(len(values), maxColumns)] {
			if v == "" {
				continue
			}
			v, ok := g.expand(v, x.room())
			if !ok {
				return x.tooLarge()
			}
			if err := t.cell(col, v, looksNumeric(v)); err != nil {
				return err
			}
		}
		if err := t.endRow(1); err != nil {
			return err
		}
	}
	if bad > 0 {
		x.warn("sheet %d (%s): %d rows with cells that could not be read", page, oneLine(name, maxTitleBytes), bad)
	}
	if err := rows.Error(); err != nil {
		x.warn("sheet %d (%s): rows past row %d not read: %v", page, oneLine(name, maxTitleBytes), maxRows, err)
	}
	return t.end()
}

// xlsxProps takes the title and the document properties from
// docProps/core.xml. A broken part costs a warning, not the workbook.
func (x *run) xlsxProps(f *excelize.File) {
	p, err := f.GetDocProps()
	if err != nil {
		x.warn("document properties ignored: %v", err)
		return
	}
	x.b.SetTitle(oneLine(p.Title, maxTitleBytes))
	props := extract.NewProps("document property")
	props.Text(extract.PropTitle, p.Title)
	props.Text(extract.PropAuthor, p.Creator)
	props.Text(extract.PropSubject, p.Subject)
	props.Text(extract.PropDescription, p.Description)
	props.Keywords(extract.PropKeywords, p.Keywords, ",;")
	props.Date(extract.PropCreated, p.Created)
	props.Date(extract.PropModified, p.Modified)
	x.b.SetMetadata(props.Metadata())
	for _, w := range props.Warnings() {
		x.warn("%s", w)
	}
}
