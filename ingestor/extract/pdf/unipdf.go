package pdf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/unidoc/unipdf/v3/common/license"
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

var licenseOnce sync.Once

// UniPDF extracts text in process with unipdf v3.
type UniPDF struct{ licenseErr error }

// NewUniPDF loads the license (once per process).
func NewUniPDF(l License) *UniPDF {
	u := &UniPDF{}
	licenseOnce.Do(func() {
		switch {
		case l.OfflineKey != "":
			u.licenseErr = license.SetLicenseKey(l.OfflineKey, l.CustomerName)
		case l.MeteredKey != "":
			u.licenseErr = license.SetMeteredKey(l.MeteredKey)
		}
	})
	return u
}

// Extract extracts text page by page. UniPDF has no time or memory limit of
// its own; the caller's context bounds the wait, and Fallback hands the file
// to poppler when UniPDF fails.
func (u *UniPDF) Extract(ctx context.Context, data []byte, name string, lim extract.Limits) (doc *extract.Document, err error) {
	if u.licenseErr != nil {
		return nil, fmt.Errorf("unipdf license: %w", u.licenseErr)
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
	doc = Assemble(pages, nil, nil, lim)
	doc.Pages = n
	return doc, nil
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
