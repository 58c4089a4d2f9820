package objectstore

import (
	"maps"
	"testing"

	"github.com/minio/minio-go/v7"

	"github.com/strata-kb/strata/ingestor/event"
	"github.com/strata-kb/strata/shared/metadata"
	"github.com/strata-kb/strata/shared/pipeline"
)

// An upload's x-amz-meta-* headers and tags, as MinIO returns them, become
// the document's metadata with lower-cased keys (tags win, the access tag
// is left out, the file's own front matter loses); a tag change publishes
// the new tags and the user metadata with the groups.
func TestMetadataFromMinIO(t *testing.T) {
	e := start(t)
	p := e.pipe(t)
	proj := project("metadata")
	c := e.chunks(t, proj)
	key := proj + "/policy.md"
	const doc = "---\nteam: file-team\nversion: 2\n---\n# Policy\n\nText."
	e.put(t, key, doc, minio.PutObjectOptions{
		UserMetadata: map[string]string{"Team": "legal", "Reviewed": "2024-05-01", "strata-groups": "hr"},
		UserTags:     map[string]string{"Department": "contracts", "strata-groups": "hr"},
	})
	fv := c.fileVersion(t, key)
	if fv.Status != pipeline.StatusIndexed || len(fv.Warnings) != 0 {
		t.Fatalf("status %q, warnings %q", fv.Status, fv.Warnings)
	}
	m := fv.Metadata
	if m["team"].Text != "legal" || m["department"].Text != "contracts" || m["reviewed"].Kind != metadata.Date ||
		m["version"].Kind != metadata.Number || m["version"].Number != 2 || len(m) != 4 {
		t.Fatalf("metadata %+v", m)
	}
	if fv.MetadataSources.Object["Team"] != "legal" || fv.MetadataSources.Tags["Department"] != "contracts" || fv.MetadataSources.File["team"].Text != "file-team" {
		t.Fatalf("sources %+v", fv.MetadataSources)
	}
	p.waitHandled(t, "s3:ObjectCreated:Put", key, 1)

	e.setTags(t, key, map[string]string{"Department": "legal", "Year": "2024", "strata-groups": "ops"})
	tc := c.accessChange(t, key, 1)
	checkAccess(t, "tag change", tc.Access, []string{"ops"}, "tag", false)
	if !maps.Equal(tc.Tags, map[string]string{"Department": "legal", "Year": "2024", "strata-groups": "ops"}) {
		t.Fatalf("tags %q", tc.Tags)
	}
	if tc.UserMetadata["Team"] != "legal" || tc.UserMetadata["Reviewed"] != "2024-05-01" {
		t.Fatalf("user metadata %q", tc.UserMetadata)
	}
	// Merged again with the version's file metadata, as the indexer does.
	again, _ := metadata.Merge(metadata.Sources{Tags: tc.Tags, Object: tc.UserMetadata, File: fv.MetadataSources.File})
	if again["department"].Text != "legal" || again["year"].Text != "2024" || again["team"].Text != "legal" || again["version"].Number != 2 {
		t.Fatalf("merged after the tag change: %+v", again)
	}
	p.waitHandled(t, event.PutTagging, key, 1)
	p.failOnErrors(t)
}
