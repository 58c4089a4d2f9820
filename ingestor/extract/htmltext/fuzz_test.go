package htmltext

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/extracttest"
)

// FuzzExtract checks that no input makes the extractor panic, and that every
// document it returns satisfies the invariants. It calls extractHTML, which
// has no panic guard, so that panics are found rather than turned into
// errors.
func FuzzExtract(f *testing.F) {
	for _, tc := range extractCases {
		f.Add([]byte(tc.input))
	}
	if page, err := os.ReadFile(filepath.Join("testdata", "page.html")); err == nil {
		f.Add(page)
	}
	f.Add([]byte(nested("<div>", "</div>", 600, "deep")))
	f.Add([]byte(nested("<table><tr><td>", "</td></tr></table>", 300, "cell")))
	f.Add(allBytes())
	if page, err := os.ReadFile(filepath.Join("testdata", "meta.html")); err == nil {
		f.Add(page)
	}

	lim := extract.DefaultLimits()
	lim.MaxTextBytes = 1 << 20
	f.Fuzz(func(t *testing.T, data []byte) {
		Sniff(data)
		doc, err := extractHTML(context.Background(), data, lim)
		if err != nil {
			// Only a text over the limit may fail; broken markup may not.
			if !errors.Is(err, extract.ErrTooLarge) {
				t.Fatalf("unexpected error: %v", err)
			}
			return
		}
		extracttest.Verify(t, doc, nil, profile)
	})
}
