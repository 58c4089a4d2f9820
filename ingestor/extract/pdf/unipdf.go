package pdf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/unidoc/unipdf/v3/common/license"
	"github.com/unidoc/unipdf/v3/core"
	"github.com/unidoc/unipdf/v3/extractor"
	"github.com/unidoc/unipdf/v3/model"

	"github.com/strata-kb/strata/ingestor/extract"
)

// License configures UniPDF. UniPDF refuses to extract text without one
// ("unipdf license code required"); a metered key also needs network access
// to UniDoc.
type License struct {
	MeteredKey   string // STRATA_UNIDOC_METERED_KEY
	OfflineKey   string // STRATA_UNIDOC_LICENSE_KEY (contents of the offline license)
	CustomerName string // STRATA_UNIDOC_CUSTOMER
}

// Configured reports whether a license was given.
func (l License) Configured() bool { return l.MeteredKey != "" || l.OfflineKey != "" }

// UniPDF extracts text in process with unipdf v3.
type UniPDF struct{ license License }

// NewUniPDF returns the extractor and loads the license now, so a bad key
// shows at start-up; a failure is also reported by every Extract.
func NewUniPDF(l License) *UniPDF {
	_ = loadLicense(l, time.Now())
	return &UniPDF{license: l}
}

// licenseState is the process's UniPDF license (the library keeps one per
// process). It is loaded once that succeeds; until then every extraction
// reports the failure, and the load is tried again at most every
// licenseRetry (a metered key needs UniDoc's servers, which may come back).
var licenseState struct {
	mu     sync.Mutex
	loaded bool
	err    error
	tried  time.Time
}

// licenseRetry spaces the attempts at a failed license load.
var licenseRetry = 30 * time.Second

// setLicense installs l in unipdf (a variable so tests can fail it).
var setLicense = func(l License) error {
	switch {
	case l.OfflineKey != "":
		return license.SetLicenseKey(l.OfflineKey, l.CustomerName)
	case l.MeteredKey != "":
		return license.SetMeteredKey(l.MeteredKey)
	}
	return nil // none given: unipdf refuses to extract and Fallback uses poppler
}

func loadLicense(l License, now time.Time) error {
	s := &licenseState
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.loaded {
		return nil
	}
	if !s.tried.IsZero() && now.Sub(s.tried) < licenseRetry {
		return s.err
	}
	s.tried = now
	s.err = setLicense(l)
	s.loaded = s.err == nil
	return s.err
}

// Extract extracts text page by page. UniPDF has no time or memory limit of
// its own; the caller's context bounds the wait, and Fallback hands the file
// to poppler when UniPDF fails.
func (u *UniPDF) Extract(ctx context.Context, data []byte, name string, lim extract.Limits) (doc *extract.Document, err error) {
	if err := loadLicense(u.license, time.Now()); err != nil {
		return nil, fmt.Errorf("unipdf license: %w", err)
	}
	defer func() { // a parser bug must cost one file, not the worker
		if r := recover(); r != nil {
			doc, err = nil, fmt.Errorf("pdf %s: unipdf panicked: %v: %w", name, r, extract.ErrCorrupt)
		}
	}()
	reader, err := model.NewPdfReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("pdf %s: unipdf: %w: %v", name, extract.ErrCorrupt, err)
	}
	if enc, _ := reader.IsEncrypted(); enc {
		if ok, err := reader.Decrypt(nil); err != nil || !ok {
			return nil, fmt.Errorf("pdf %s: %w", name, extract.ErrEncrypted)
		}
	}
	n, err := reader.GetNumPages()
	if err != nil {
		return nil, fmt.Errorf("pdf %s: unipdf pages: %w: %v", name, extract.ErrCorrupt, err)
	}
	pages := make([]string, 0, min(n, lim.MaxPages))
	size := 0
	for i := 1; i <= min(n, lim.MaxPages); i++ {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("pdf %s: %w: %v", name, extract.ErrTimeout, ctx.Err())
		}
		page, err := reader.GetPage(i)
		if err != nil {
			return nil, fmt.Errorf("pdf %s page %d: %w: %v", name, i, extract.ErrCorrupt, err)
		}
		ex, err := extractor.New(page)
		if err != nil {
			return nil, fmt.Errorf("pdf %s page %d: %w", name, i, err)
		}
		text, err := ex.ExtractText()
		if err != nil {
			return nil, fmt.Errorf("pdf %s page %d: unipdf: %w", name, i, err)
		}
		size += len(text)
		if size > lim.MaxTextBytes {
			return nil, fmt.Errorf("pdf %s: %w", name, extract.ErrTooLarge)
		}
		pages = append(pages, text)
	}
	if doc, err = Assemble(pages, nil, nil, nil, lim); err != nil {
		return nil, fmt.Errorf("pdf %s: %w", name, err)
	}
	doc.Pages = n
	var warnings []string
	doc.Metadata, warnings = InfoMetadata(uniPDFInfo(reader))
	doc.Warnings = append(doc.Warnings, warnings...)
	if t, ok := doc.Metadata[extract.PropTitle]; ok {
		doc.Title = t.Text
	}
	return doc, nil
}

// uniPDFInfo is the document information dictionary as InfoMetadata reads
// it; nil when there is none or it cannot be read.
func uniPDFInfo(reader *model.PdfReader) map[string]string {
	info, err := reader.GetPdfInfo()
	if err != nil || info == nil {
		return nil
	}
	out := map[string]string{}
	for name, s := range map[string]*core.PdfObjectString{"Title": info.Title, "Author": info.Author, "Subject": info.Subject, "Keywords": info.Keywords} {
		if s != nil {
			out[name] = s.Decoded()
		}
	}
	for name, d := range map[string]*model.PdfDate{"CreationDate": info.CreationDate, "ModDate": info.ModifiedDate} {
		if d != nil {
			out[name] = d.ToGoTime().Format(time.RFC3339)
		}
	}
	return out
}

// Fallback tries Primary and, when it fails or finds no text, Secondary.
// Errors that no extractor can overcome (encrypted files, timeouts) are not retried.
type Fallback struct {
	Primary, Secondary extract.Extractor
}

// Extract implements extract.Extractor.
func (f Fallback) Extract(ctx context.Context, data []byte, name string, lim extract.Limits) (*extract.Document, error) {
	doc, err := f.Primary.Extract(ctx, data, name, lim)
	if err == nil && strings.TrimSpace(doc.Text) != "" {
		return doc, nil
	}
	if errors.Is(err, extract.ErrEncrypted) || errors.Is(err, extract.ErrTimeout) {
		return nil, err
	}
	second, err2 := f.Secondary.Extract(ctx, data, name, lim)
	if err2 != nil {
		return nil, err2
	}
	if err != nil {
		second.Warnings = append(second.Warnings, "primary extractor failed, used the fallback: "+err.Error())
	}
	return second, nil
}

// New returns the PDF extractor for a configuration: UniPDF with poppler as
// fallback when licensed, else poppler.
func New(l License, p Poppler) extract.Extractor {
	if l.Configured() {
		return Fallback{Primary: NewUniPDF(l), Secondary: p}
	}
	return p
}
