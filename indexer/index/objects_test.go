package index

import (
	"reflect"
	"testing"
	"time"

	"github.com/strata-kb/strata/shared/metadata"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/terms"
)

// TestChunksCarryTheirSection: every chunk object records its section's
// title, heading path, ordinal and statistics (queryd reads a chunk's
// section from it), and every property written is declared in the schema.
func TestChunksCarryTheirSection(t *testing.T) {
	fv := version("carry", "a.md", "e1", "0001", "one", "two", "three")
	fv.Sections = append(fv.Sections, pipeline.Section{ID: "sec-2", Ordinal: 1, Title: "Usage", HeadingPath: []string{"Guide", "Usage"}, TokenCount: 70, ChunkCount: 1})
	fv.Sections[0].Ordinal, fv.Sections[0].TokenCount, fv.Sections[0].ChunkCount = 0, 30, 2
	fv.Chunks[2].SectionID = "sec-2"
	fv.Chunks = append(fv.Chunks, pipeline.Chunk{ID: "orphan", Index: 3, Content: "no section"})

	declared := map[string]map[string]bool{}
	for _, c := range schema.Definitions() {
		declared[c.Class] = map[string]bool{}
		for _, p := range c.Properties {
			declared[c.Class][p.Name] = true
		}
	}
	var got []map[string]any
	for _, o := range versionObjects(fv, labelsOf(fv), 7, "2026-11-25T00:00:00Z", termsOf(fv)) {
		props := o.Properties.(map[string]any)
		for k := range props {
			if !declared[o.Class][k] {
				t.Errorf("%s property %q is not in the schema", o.Class, k)
			}
		}
		if o.Class == schema.ChunkClass {
			got = append(got, props)
		}
	}
	want := []map[string]any{
		{"section_title": "a.md", "section_heading_path": []string{}, "section_ordinal": 0, "section_token_count": 30, "section_chunk_count": 2},
		{"section_title": "a.md", "section_heading_path": []string{}, "section_ordinal": 0, "section_token_count": 30, "section_chunk_count": 2},
		{"section_title": "Usage", "section_heading_path": []string{"Guide", "Usage"}, "section_ordinal": 1, "section_token_count": 70, "section_chunk_count": 1},
		{},
	}
	if len(got) != len(want) {
		t.Fatalf("%d chunk objects, want %d", len(got), len(want))
	}
	for i, w := range want {
		have := map[string]any{}
		for k := range want[0] {
			if v, ok := got[i][k]; ok {
				have[k] = v
			}
		}
		if !reflect.DeepEqual(have, w) {
			t.Errorf("chunk %d section fields %v, want %v", i, have, w)
		}
	}
}

// TestCommitAndVectorObjects: the exported builders are what a commit of
// fv and then ApplyVectors write, with fv's own labels, and vectors that
// ApplyVectors would refuse are refused.
func TestCommitAndVectorObjects(t *testing.T) {
	fv := withAccess(version("exported", "a.md", "e1", "01", "one", "two"), time.Now(), "eng")
	fv.MetadataSources = metadata.Sources{Tags: map[string]string{"team": "docs"}}
	now := time.Date(2026, 11, 25, 1, 2, 3, 4, time.FixedZone("x", 3600))
	stamp := now.UTC().Format(time.RFC3339Nano)
	a := labelsOf(fv)
	if got, want := CommitObjects(fv, 1, now), append(versionObjects(fv, a, 1, stamp, termsOf(fv)), fileDocument(fv, a, 1, stamp)); !reflect.DeepEqual(got, want) {
		t.Errorf("CommitObjects differ from a commit's objects:\n%v\nwant\n%v", got, want)
	}
	v := pipeline.Vectors{Object: fv.Object, Project: fv.Object.Project, FileID: fv.FileID, FileVersionID: fv.FileVersionID, Model: "tiny", Dimensions: 2}
	for _, c := range fv.Chunks {
		v.Chunks = append(v.Chunks, pipeline.ChunkVector{ChunkID: c.ID, SourceChecksum: c.SourceChecksum, Vector: []float32{0.6, 0.8}})
	}
	got, err := VectorObjects(v, fv)
	if want := vectorObjects(v, &a); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("VectorObjects: %v, %v; want %v", got, err, want)
	}
	if r := got[0].Properties.(map[string]any)[schema.ReadersProperty]; !reflect.DeepEqual(r, []string{"eng"}) {
		t.Errorf("vector readers %v, want [eng]", r)
	}
	bad := v
	bad.Chunks = []pipeline.ChunkVector{{ChunkID: fv.Chunks[0].ID}}
	if objs, err := VectorObjects(bad, fv); err == nil || objs != nil {
		t.Errorf("vectors without values: %v, %v; want an error", objs, err)
	}
}

// TestVersionObjectKeys: a torn version is deleted by the keys of exactly
// the objects its commit writes, and a chunk's terms are those of its content.
func TestVersionObjectKeys(t *testing.T) {
	fv := version("keys", "a.md", "e1", "0001", "one", "two", "three")
	fv.Sections = append(fv.Sections, pipeline.Section{ID: "sec-2", Ordinal: 1, Title: "Usage"})
	objs := versionObjects(fv, labelsOf(fv), 7, "2026-11-25T00:00:00Z", termsOf(fv))
	keys := versionObjectKeys(fv)
	if len(keys) != len(objs) {
		t.Fatalf("%d keys, %d objects", len(keys), len(objs))
	}
	for i, o := range objs {
		if k := keys[i]; k.Class != o.Class || k.ID != o.ID || k.Tenant != o.Tenant || k.Properties != nil {
			t.Errorf("key %d is %s %s %s %v, object %s %s %s", i, k.Class, k.ID, k.Tenant, k.Properties, o.Class, o.ID, o.Tenant)
		}
		if o.Class == schema.ChunkClass {
			props := o.Properties.(map[string]any)
			if got, want := props[schema.ContentTermsProperty], terms.Of(props["content"].(string)); got != want {
				t.Errorf("chunk %s content terms %q, want %q", o.ID, got, want)
			}
		}
	}
}
