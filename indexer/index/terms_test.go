package index

import (
	"slices"
	"strings"
	"testing"

	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/terms"
)

// TestHeadingTermsCountOnce: a title or heading the chunk shows is not
// written again into heading_terms; chunks that do not show it are found by it.
func TestHeadingTermsCountOnce(t *testing.T) {
	fv := pipeline.FileVersion{Title: "Backup Guide"}
	fv.Object.Path = "ops/backup.md"
	first := pipeline.Chunk{Content: "# Backup Guide\n\nArchives are taken nightly.", HeadingPath: []string{"Backup Guide"}}
	later := pipeline.Chunk{Content: "Keep seven daily archives.", HeadingPath: []string{"Backup Guide", "Retention"}}
	got := strings.Fields(headingTerms(fv, first, terms.Of(first.Content)))
	for _, shown := range []string{"backup", "guid"} {
		if slices.Contains(got, shown) {
			t.Errorf("first chunk's heading terms %v repeat %q, which its content has", got, shown)
		}
	}
	if !slices.Contains(got, "op") && !slices.Contains(got, "ops") {
		t.Errorf("first chunk's heading terms %v lack the path", got)
	}
	got = strings.Fields(headingTerms(fv, later, terms.Of(later.Content)))
	for _, want := range []string{"backup", "guid", "retent"} {
		if !slices.Contains(got, want) {
			t.Errorf("later chunk's heading terms %v lack %q", got, want)
		}
	}
}
