package embedding

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/strata-kb/strata/embedder/vectorcache"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/testservers/serverstest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	serverstest.StopShared()
	os.Exit(code)
}

func paragraphs(version string, changed int) pipeline.FileVersion {
	fv := pipeline.FileVersion{Object: pipeline.Object{Project: "acme", Path: "guide.md"}, FileID: "f", FileVersionID: version}
	for i := range 6 {
		content := fmt.Sprintf("Paragraph %d of the guide explains step %d.", i, i)
		if i == changed {
			content += " This paragraph was edited."
		}
		fv.Chunks = append(fv.Chunks, pipeline.Chunk{ID: fmt.Sprintf("%s-%d", version, i), Index: i, Content: content, SourceChecksum: checksum(content)})
	}
	return fv
}

// TestCacheReembedsOnlyChangedChunks: with the cache in a real NATS KV
// bucket, a second version of a file with one changed paragraph sends only
// that paragraph to the provider, and its published vectors are complete.
func TestCacheReembedsOnlyChangedChunks(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real nats-server; skipped with -short")
	}
	_, js, err := pipeline.Connect(serverstest.NATS(t), "cache-test", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cache, err := vectorcache.Open(ctx, js, 1, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	p := &fakeProvider{dims: 4}
	pub := &recorder{}
	e := New(p, pub, cache, 4, quiet)
	if err := e.EmbedFileVersion(ctx, paragraphs("v1", -1)); err != nil {
		t.Fatal(err)
	}
	if len(p.texts) != 6 {
		t.Fatalf("first version: %d texts embedded, want 6", len(p.texts))
	}
	v2 := paragraphs("v2", 3)
	p.texts = nil
	if err := e.EmbedFileVersion(ctx, v2); err != nil {
		t.Fatal(err)
	}
	if len(p.texts) != 1 || p.texts[0] != v2.Chunks[3].Content {
		t.Fatalf("second version re-embedded %q, want only the changed paragraph", p.texts)
	}
	var out pipeline.Vectors
	if err := json.Unmarshal(pub.data, &out); err != nil {
		t.Fatal(err)
	}
	for i, c := range out.Chunks {
		if c.ChunkID != v2.Chunks[i].ID || len(c.Vector) != 4 || c.Vector[0] != float32(len(v2.Chunks[i].Content)) {
			t.Fatalf("chunk %d: %+v", i, c)
		}
	}
	// Another model never reuses these vectors.
	other := &fakeProvider{dims: 4}
	otherModel := &renamed{other, "another-model"}
	if err := New(otherModel, pub, cache, 4, quiet).EmbedFileVersion(ctx, v2); err != nil {
		t.Fatal(err)
	}
	if len(other.texts) != 6 {
		t.Fatalf("a new model embedded %d texts, want all 6", len(other.texts))
	}
	// Identical chunks in one file are embedded once.
	p.texts = nil
	dup := paragraphs("v3", -1)
	dup.Chunks[5].Content, dup.Chunks[5].SourceChecksum = "brand new text", checksum("brand new text")
	dup.Chunks[4].Content, dup.Chunks[4].SourceChecksum = "brand new text", checksum("brand new text")
	if err := e.EmbedFileVersion(ctx, dup); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.texts, []string{"brand new text"}) {
		t.Fatalf("duplicate chunks: embedded %q", p.texts)
	}
}

type renamed struct {
	*fakeProvider
	name string
}

func (r *renamed) Model() string { return r.name }

func TestCacheRejectsBadKeys(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real nats-server; skipped with -short")
	}
	_, js, err := pipeline.Connect(serverstest.NATS(t), "cache-test", nil)
	if err != nil {
		t.Fatal(err)
	}
	cache, err := vectorcache.Open(context.Background(), js, 1, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"", "../x", "ABCDEF0123456789", "zz"} {
		if err := cache.Put(context.Background(), "m", bad, []float32{1}); err == nil {
			t.Errorf("checksum %q accepted", bad)
		}
	}
}
