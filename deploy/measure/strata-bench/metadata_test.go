package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-kb/strata/shared/metadata"
)

// TestMetadataCorpus: every document gets dept (a tag string), year (a
// number) and reviewed (a date) from its sources, merged as the indexer
// merges them; each filter under test matches exactly 10% of 1,000
// documents, every value of each key holds 10% of them, and the keys are
// independent (two filters on different keys share 1% of the documents).
func TestMetadataCorpus(t *testing.T) {
	c := generateCorpus(1, 10000, 10, 1, 0)
	addMetadata(c, 1)
	if len(c.Files) != 1000 {
		t.Fatalf("%d files, want 1000", len(c.Files))
	}
	values := map[string]map[string]int{}
	for k, f := range c.Files {
		m := f.FV.Metadata
		merged, warnings := metadata.Merge(f.FV.MetadataSources)
		if len(warnings) > 0 || metaJSON(merged) != metaJSON(m) {
			t.Fatalf("file %d: metadata %s, its sources merge to %s (%q)", k, metaJSON(m), metaJSON(merged), warnings)
		}
		for key, kind := range map[string]metadata.Kind{"dept": metadata.String, "year": metadata.Number, "reviewed": metadata.Date} {
			v, ok := m[key]
			if !ok || v.Kind != kind {
				t.Fatalf("file %d: %s is %v %q, want a %v", k, key, v.Kind, v, kind)
			}
			if values[key] == nil {
				values[key] = map[string]int{}
			}
			bucket := v.String()
			if kind == metadata.Date { // stretches of days
				bucket = fmt.Sprint("stretch ", int(v.Date.Sub(metaReviewed0)/(24*time.Hour))/metaReviewedStep)
			}
			values[key][bucket]++
		}
	}
	for key, counts := range values {
		if len(counts) != 10 {
			t.Errorf("%s has %d values, want 10: %v", key, len(counts), counts)
		}
		for v, n := range counts {
			if n != 100 {
				t.Errorf("%s %s: %d documents, want 100", key, v, n)
			}
		}
	}
	cases := metaFilterCases()
	if len(cases) != 4 {
		t.Fatalf("%d filters, want 4", len(cases))
	}
	matched := map[string][]*corpusFile{}
	for _, fc := range cases {
		got := c.matching(fc.filter)
		if len(got) != 100 {
			t.Errorf("filter %s %s matches %d of 1000 documents, want exactly 100", fc.name, fc.raw, len(got))
		}
		if fc.where == nil {
			t.Errorf("filter %s: no Weaviate filter", fc.name)
		}
		matched[fc.name] = got
	}
	for _, fc := range metaSelectiveCases() {
		if n := len(c.matching(fc.filter)); n != 10 {
			t.Errorf("selective filter %s %s matches %d of 1000 documents, want exactly 10", fc.name, fc.raw, n)
		}
	}
	if n := len(intersect(matched["equality"], matched["number range"])); n != 10 {
		t.Errorf("equality and number range share %d documents, want 10 (independent keys)", n)
	}
	if n := len(intersect(matched["number range"], matched["date range"])); n != 10 {
		t.Errorf("number and date range share %d documents, want 10 (independent keys)", n)
	}
	// Not the file order: the first 100 files do not all share a value.
	first := 0
	for _, f := range c.Files[:100] {
		if cases[0].filter.Match(f.FV.Metadata) {
			first++
		}
	}
	if first == 0 || first > 30 {
		t.Errorf("equality matches %d of the first 100 files: the values follow the file order", first)
	}
}

func intersect(a, b []*corpusFile) []*corpusFile {
	var out []*corpusFile
	for _, f := range a {
		if slices.Contains(b, f) {
			out = append(out, f)
		}
	}
	return out
}

// TestSampleSlot: by default the first n chunks get the model's vectors;
// spread, one chunk in each stretch of chunkCount/n, each at a different
// place, n in all, in order.
func TestSampleSlot(t *testing.T) {
	c := &corpus{Files: make([]*corpusFile, 100), ChunksPerFile: 100}
	var first []int
	for g := range c.chunkCount() {
		if j := c.sampleSlot(g, 50); j >= 0 {
			first = append(first, j)
			if j != g {
				t.Fatalf("chunk %d is sample vector %d, want %d", g, j, g)
			}
		}
	}
	if len(first) != 50 {
		t.Errorf("%d chunks of the first 50 sampled", len(first))
	}
	c.SpreadSample = true
	var slots []int
	files := map[int]bool{}
	positions := map[int]bool{}
	for g := range c.chunkCount() {
		if j := c.sampleSlot(g, 100); j >= 0 {
			slots = append(slots, j)
			files[g/c.ChunksPerFile] = true
			positions[g%c.ChunksPerFile] = true
		}
	}
	if len(slots) != 100 || !slices.IsSorted(slots) || slots[99] != 99 {
		t.Errorf("spread: slots %v, want 0..99 in order", slots)
	}
	if len(files) != 100 || len(positions) != 100 {
		t.Errorf("spread: sampled chunks in %d files at %d positions, want 100 and 100", len(files), len(positions))
	}
	if c.sampleSlot(5, 0) != -1 {
		t.Error("no sample: a chunk has a slot")
	}
}

// TestMetadataFlags: -metadata takes -metadata-checks, refuses -access and
// -sizes, and -metadata-checks alone is refused by name.
func TestMetadataFlags(t *testing.T) {
	c, err := parseConfig([]string{"-metadata", "-chunks", "10000"})
	if err != nil || !c.Metadata || c.MetadataChecks != 100 {
		t.Errorf("-metadata: %+v, err %v; want on, 100 checks", c, err)
	}
	for _, bad := range [][]string{{"-metadata", "-access"}, {"-metadata", "-sizes", "1000,2000"}, {"-metadata", "-metadata-checks", "-1"}} {
		if _, err := parseConfig(bad); err == nil || !strings.Contains(err.Error(), "-metadata") {
			t.Errorf("%q: err %v, want a -metadata error", bad, err)
		}
	}
	for _, stray := range [][]string{{"-metadata-checks", "5"}, {"-metadata-index", "flatSearchCutoff=5000"}} {
		if _, err := parseConfig(stray); err == nil || !strings.Contains(err.Error(), stray[0]) || !strings.Contains(err.Error(), "only apply with -metadata") {
			t.Errorf("%q without -metadata: err %v", stray, err)
		}
	}
	c, err = parseConfig([]string{"-metadata", "-metadata-index", "flatSearchCutoff=5000, filterStrategy=sweeping"})
	if want := []indexSetting{{"flatSearchCutoff", 5000}, {"filterStrategy", "sweeping"}}; err != nil || !slices.Equal(c.MetadataIndex, want) {
		t.Errorf("-metadata-index: %v, err %v; want %v", c.MetadataIndex, err, want)
	}
	for _, bad := range []string{"flatSearchCutoff", "=5", "a=1,b"} {
		if _, err := parseConfig([]string{"-metadata", "-metadata-index", bad}); err == nil || !strings.Contains(err.Error(), "-metadata-index") {
			t.Errorf("-metadata-index %q: err %v", bad, err)
		}
	}
}

// TestMetaHits reads hybrid_search's hits with their metadata and refuses
// an answer it cannot check.
func TestMetaHits(t *testing.T) {
	hits, err := metaHits(`{"query":"q","results":[{"document_id":"f1","metadata":{"dept":"legal","year":2024,"reviewed":"2024-11-20"}},{"document_id":"f2","metadata":{}}]}`)
	if err != nil || len(hits) != 2 {
		t.Fatalf("%v, %v", hits, err)
	}
	if m := hits[0].Metadata; m["year"].Kind != metadata.Number || m["reviewed"].Kind != metadata.Date || m["dept"].Text != "legal" {
		t.Errorf("metadata %v", m)
	}
	for _, bad := range []string{`{"results":[{"chunk_id":"c"}]}`, `{"status":"ok"}`, `No strong match`} {
		if _, err := metaHits(bad); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

// TestMetaGoal: a filtered row meets the goal up to 1.2x the unfiltered
// p50; Weaviate and A/A rows have none.
func TestMetaGoal(t *testing.T) {
	row := func(kind string, a, b float64) metaResult {
		r := metaResult{metaRow: metaRow{name: "x", kind: kind}}
		r.a.lat = []time.Duration{time.Duration(a * float64(time.Millisecond))}
		r.b.lat = []time.Duration{time.Duration(b * float64(time.Millisecond))}
		return r
	}
	for _, tc := range []struct {
		r    metaResult
		want string
	}{
		{row("keyword", 10, 12), "met"},
		{row("vector", 10, 12.5), "missed"},
		{row("hybrid", 10, 5), "met"},
		{row("A/A", 1, 5), "-"},
		{row("", 1, 5), "-"},
	} {
		if got := tc.r.goal(); !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: goal %q, want %s", tc.r.kind, got, tc.want)
		}
	}
}
