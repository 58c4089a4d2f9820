package ingest

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/strata-kb/strata/shared/metadata"
	"github.com/strata-kb/strata/shared/pipeline"
)

// frontMatterDoc says about itself what its tags and S3 metadata say too.
const frontMatterDoc = `---
title: Travel Policy
department: handbook
team: file-team
owner: Ann
version: 3
published: 2024-03-01
tags: [travel, legal]
---
# Travel Policy

Book early.
`

// TestFileVersionMetadata: a document's metadata is its tags over its S3
// user metadata over what the file says, keys lower-cased, typed, without
// the access tag; each source is kept as given.
func TestFileVersionMetadata(t *testing.T) {
	const key = "acme/policy.md"
	tags := map[string]string{"Department": "legal", "strata-groups": "hr", "Year": "2024"}
	userMeta := map[string]string{"Department": "finance", "Team": "s3-team", "Strata-Groups": "ops", "Reviewed": "2024-05-01",
		"Reviewer": "=?UTF-8?Q?Zo=C3=AB?="}
	store := fakeStore{objects: map[string][]byte{key: []byte(frontMatterDoc)},
		tags: map[string]map[string]string{key: tags}, metadata: map[string]map[string]string{key: userMeta}}
	in, pub := storeIngestor(t, store, &fakeStates{})
	if err := in.HandleEvent(context.Background(), eventJSON("s3:ObjectCreated:Put", key, len(frontMatterDoc))); err != nil {
		t.Fatal(err)
	}
	fv := decode(t, pub.msgs[0]) // through JSON, as the indexer reads it
	if fv.Status != pipeline.StatusIndexed || len(fv.Warnings) != 0 {
		t.Fatalf("status %q, warnings %q", fv.Status, fv.Warnings)
	}
	want := metadata.Metadata{
		"department": str("legal"),          // the tag wins
		"year":       str("2024"),           // a tag is text, never a number
		"team":       str("s3-team"),        // S3 metadata wins over the file
		"reviewed":   date(t, "2024-05-01"), // a date in S3 metadata is a date
		"reviewer":   str("Zoë"),            // RFC 2047, as S3 returns non-ASCII values
		"title":      str("Travel Policy"),
		"owner":      str("Ann"),
		"version":    {Kind: metadata.Number, Number: 3},
		"published":  date(t, "2024-03-01"),
		"tags":       {Kind: metadata.List, List: []string{"travel", "legal"}},
	}
	checkMeta(t, fv.Metadata, want)
	src := fv.MetadataSources
	if !maps.Equal(src.Tags, tags) || src.Object["Team"] != "s3-team" || src.Object["Reviewer"] != "Zoë" || len(src.Object) != len(userMeta) {
		t.Errorf("sources: tags %q, object %q", src.Tags, src.Object)
	}
	if v := src.File["version"]; v.Kind != metadata.Number || src.File["team"].Text != "file-team" || len(src.File) != 7 {
		t.Errorf("file source %+v", src.File)
	}
	// The sources merge again to the same metadata (a tag change does so).
	again, _ := metadata.Merge(src)
	checkMeta(t, again, want)
}

// TestMetadataWarnings: a bad key or a value over the limits costs that
// key, with a warning on the document, never the document.
func TestMetadataWarnings(t *testing.T) {
	const key = "acme/notes.md"
	doc := "---\nsummary: " + strings.Repeat("x", metadata.MaxValueBytes+1) + "\nok: 1\n---\nBody.\n"
	store := fakeStore{objects: map[string][]byte{key: []byte(doc)},
		tags:     map[string]map[string]string{key: {"bad key!": "x", "team": "legal"}},
		metadata: map[string]map[string]string{key: {"Big": strings.Repeat("y", metadata.MaxValueBytes+1)}}}
	in, pub := storeIngestor(t, store, &fakeStates{})
	in.cfg.MaxObjectBytes = 1 << 20
	if err := in.HandleEvent(context.Background(), eventJSON("s3:ObjectCreated:Put", key, len(doc))); err != nil {
		t.Fatal(err)
	}
	fv := decode(t, pub.msgs[0])
	if fv.Status != pipeline.StatusIndexed || len(fv.Chunks) == 0 {
		t.Fatalf("status %q: bad metadata must not fail the file", fv.Status)
	}
	checkMeta(t, fv.Metadata, metadata.Metadata{"team": str("legal"), "ok": {Kind: metadata.Number, Number: 1}})
	_, warnings := metadata.Merge(fv.MetadataSources)
	w := strings.Join(warnings, "\n")
	for _, part := range []string{`tag metadata key "bad key!"`, `S3 metadata key "big" dropped`, `file metadata key "summary" dropped`} {
		if !strings.Contains(w, part) {
			t.Errorf("warnings lack %q:\n%s", part, w)
		}
	}
}

// TestMetadataOfUnreadFiles: a failed, unsupported or too large file still
// shows its tags and S3 metadata.
func TestMetadataOfUnreadFiles(t *testing.T) {
	for _, c := range []struct{ name, key, content, status string }{
		{"failed", "acme/empty.md", "", pipeline.StatusFailed},
		{"unsupported", "acme/x.bin", "\x7fELF\x02\x01\x00\x00binary", pipeline.StatusUnsupported},
		{"too large", "acme/huge.md", strings.Repeat("a", 9000), pipeline.StatusFailed},
	} {
		t.Run(c.name, func(t *testing.T) {
			store := fakeStore{objects: map[string][]byte{c.key: []byte(c.content)},
				tags:     map[string]map[string]string{c.key: {"department": "legal"}},
				metadata: map[string]map[string]string{c.key: {"Team": "ops", "Strata-Groups": "ops"}}}
			in, pub := storeIngestor(t, store, &fakeStates{})
			if err := in.HandleEvent(context.Background(), eventJSON("s3:ObjectCreated:Put", c.key, len(c.content))); err != nil {
				t.Fatal(err)
			}
			fv := decode(t, pub.msgs[0])
			if fv.Status != c.status {
				t.Fatalf("status %q", fv.Status)
			}
			checkMeta(t, fv.Metadata, metadata.Metadata{"department": str("legal"), "team": str("ops")})
			if fv.MetadataSources.File != nil || fv.MetadataSources.Tags["department"] != "legal" {
				t.Errorf("sources %+v", fv.MetadataSources)
			}
		})
	}
}

func str(s string) metadata.Value { return metadata.Value{Kind: metadata.String, Text: s} }

func date(t *testing.T, s string) metadata.Value {
	t.Helper()
	d, ok := metadata.ParseDate(s)
	if !ok {
		t.Fatalf("date %q", s)
	}
	return metadata.Value{Kind: metadata.Date, Text: s, Date: d}
}

func checkMeta(t *testing.T, got, want metadata.Metadata) {
	t.Helper()
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("no %s, want %+v", k, w)
			continue
		}
		if g.Kind != w.Kind || g.Text != w.Text || g.Number != w.Number || !g.Date.Equal(w.Date) || strings.Join(g.List, "|") != strings.Join(w.List, "|") {
			t.Errorf("%s = %+v, want %+v", k, g, w)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected %s = %+v", k, g)
		}
	}
}
