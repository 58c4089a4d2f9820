package pdf

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/strata-kb/strata/ingestor/extract"
)

// TestUniPDFLicenseFailureIsReportedAndRetried: a failed license load is
// reported by every extractor and every extraction (not only the first
// one made), tried again after licenseRetry, and kept once it succeeds.
func TestUniPDFLicenseFailureIsReportedAndRetried(t *testing.T) {
	saved, savedRetry := setLicense, licenseRetry
	t.Cleanup(func() {
		setLicense, licenseRetry = saved, savedRetry
		licenseState.loaded, licenseState.err, licenseState.tried = false, nil, time.Time{}
	})
	licenseState.loaded, licenseState.err, licenseState.tried = false, nil, time.Time{}
	attempts, fail := 0, true
	setLicense = func(License) error {
		attempts++
		if fail {
			return errors.New("metered key refused")
		}
		return nil
	}
	licenseRetry = time.Hour
	key := License{MeteredKey: "k"}
	first, second := NewUniPDF(key), NewUniPDF(key)
	for i, u := range []*UniPDF{first, second, first} {
		if _, err := u.Extract(context.Background(), []byte("%PDF-1.4"), "a.pdf", extract.DefaultLimits()); err == nil || !strings.Contains(err.Error(), "metered key refused") {
			t.Fatalf("extraction %d: %v, want the license failure", i, err)
		}
	}
	if attempts != 1 {
		t.Fatalf("%d load attempts within the retry interval, want 1", attempts)
	}
	licenseRetry, fail = 0, false
	if _, err := second.Extract(context.Background(), []byte("%PDF-1.4"), "a.pdf", extract.DefaultLimits()); err != nil && strings.Contains(err.Error(), "license") {
		t.Fatalf("after the key works: %v", err)
	}
	if attempts != 2 {
		t.Fatalf("%d load attempts, want a retry after the interval", attempts)
	}
	fail = true
	_, _ = first.Extract(context.Background(), []byte("%PDF-1.4"), "a.pdf", extract.DefaultLimits())
	if attempts != 2 {
		t.Fatal("a loaded license was loaded again")
	}
}
