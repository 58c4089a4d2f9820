package store

import (
	"testing"

	"github.com/go-openapi/strfmt"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/terms"
)

// TestKeywordMatching on a real weaviate-server: stemmed search finds
// inflections and identifiers, weights the path and headings, exact search
// compares words as written, and a stemmed search over chunks written before
// the stemmed index existed falls back to exact matching.
func TestKeywordMatching(t *testing.T) {
	ctx := asSystem()
	const project = "keywordmatch"
	wv := weaviateWithTenant(t, project)
	type doc struct {
		path, content string
		analysed      bool // written with the stemmed index's terms
	}
	docs := []doc{
		{"runners.md", "The runners were running through the studies.", true},
		{"code/asn1.go", "func asn1_der_coding() { panicNil() }", true},
		{"code/scattered.go", "der coding of asn1 values, der again, coding again, asn1 again", true},
		{"guides/install-guide.md", "Steps to set the thing up.", true},
		{"other.md", "The install guide is elsewhere; see the guide for the install.", true},
		{"legacy.md", "legacyword only here", false},
	}
	var objs []*models.Object
	byPath := map[string]string{}
	for _, d := range docs {
		fileID := ids.File(project, "", d.path)
		fv := ids.FileVersion(fileID, "e", "s")
		chunkID := ids.Chunk(fv, 0)
		byPath[chunkID] = d.path
		props := map[string]any{"content": d.content, "file_id": fileID, "file_version_id": fv, "file_path": d.path, "branch": "",
			"index": 0, "start_offset": 0, "end_offset": len(d.content), "token_count": 1, "section_id": "", "kind": "text", "valid_from": 1}
		if d.analysed {
			props[schema.ContentTermsProperty], props[schema.HeadingTermsProperty] = terms.Of(d.content), terms.Of(d.path)
		}
		objs = append(objs,
			&models.Object{Class: schema.ChunkClass, ID: strfmt.UUID(chunkID), Tenant: project, Properties: props},
			&models.Object{Class: schema.VersionClass, ID: strfmt.UUID(fv), Tenant: project, Properties: map[string]any{
				"file_id": fileID, "file_version_id": fv, "file_path": d.path, "branch": "", "status": "indexed", "deleted": false, "valid_from": 1}})
	}
	if _, err := wv.Batch().ObjectsBatcher().WithObjects(objs...).Do(ctx); err != nil {
		t.Fatal(err)
	}
	s := New(wv)
	for _, tt := range []struct {
		query string
		match Match
		first string // "" = no hits
	}{
		{"run study", MatchStemmed, "runners.md"},
		{"run study", MatchExact, ""},
		{"running", MatchExact, "runners.md"},
		{"asn1_der_coding", MatchStemmed, "code/asn1.go"},
		{"panicNil", MatchStemmed, "code/asn1.go"},
		{"install-guide.md", MatchStemmed, "guides/install-guide.md"},
		{"legacyword", MatchStemmed, "legacy.md"}, // no terms written: the exact fallback finds it
	} {
		got, err := s.SearchKeywordMatching(ctx, project, tt.query, tt.match, 5, nil, "", 1)
		if err != nil {
			t.Fatal(err)
		}
		first := ""
		if len(got) > 0 {
			first = byPath[got[0].ID]
		}
		if first != tt.first {
			var all []string
			for _, c := range got {
				all = append(all, byPath[c.ID])
			}
			t.Errorf("%s %q: first %q, want %q (all %v)", tt.match, tt.query, first, tt.first, all)
		}
	}
}
