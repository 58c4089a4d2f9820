package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/strata-kb/strata/shared/ids"
)

// wireVersion is a file version as the ingestor makes it: a first section
// without a heading, then Guide > heading, then Guide > Use (one chunk
// each, the rest in the second).
func wireVersion(chunks int, heading string) FileVersion {
	fvID := ids.FileVersion(ids.File("acme", "", "docs/guide.md"), "v1", "sum")
	paths := [][]string{{}, {"Guide", heading}, {"Guide", "Use"}}
	titles := []string{"guide.md", heading, "Use"}
	counts := []int{1, chunks - 2, 1}
	fv := FileVersion{FileVersionID: fvID, Title: "Guide", Status: StatusIndexed, Format: "markdown"}
	for o := range paths {
		s := Section{ID: ids.Section(fvID, o), Ordinal: o, Title: titles[o], HeadingPath: paths[o], Level: len(paths[o]),
			StartOffset: 10 * o, EndOffset: 10*o + 9, TokenCount: 3, ChunkCount: counts[o], PageStart: o}
		fv.Sections = append(fv.Sections, s)
		for range counts[o] {
			i := len(fv.Chunks)
			content := "a <b> & \"c\" " + strings.Repeat("x", i%7)
			sum := sha256.Sum256([]byte(content))
			fv.Chunks = append(fv.Chunks, Chunk{ID: ids.Chunk(fvID, i), Index: i, SectionID: s.ID, Content: content,
				StartOffset: i, EndOffset: i + 1, TokenCount: 4, SourceChecksum: hex.EncodeToString(sum[:]),
				HeadingPath: paths[o], Kind: "text", PageStart: o, PageEnd: o})
		}
	}
	return fv
}

func TestEncodeFileVersionRoundTrip(t *testing.T) {
	fv := wireVersion(5, "Install")
	fv.Chunks[2].HeadingPath = []string{"Elsewhere"} // not its section's: sent as it is
	fv.Chunks[3].ImageRef, fv.Chunks[3].ImageMIME = "strata-assets/x.png", "image/png"
	fv.Chunks[4].OCRConfidence = 91.5
	body, err := EncodeFileVersion(fv)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(body), `\u003c`) || strings.Count(string(body), `"Install"`) != 1 || strings.Contains(string(body), fv.Chunks[1].SourceChecksum) {
		t.Fatalf("HTML escaped, a heading repeated or a derivable field sent: %s", body)
	}
	var got FileVersion
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, fv) {
		t.Fatalf("round trip changed the file version:\n got %+v\nwant %+v", got, fv)
	}
}

// A message written out in full (json.Marshal, an older ingestor's in a
// replayed stream) decodes as before.
func TestDecodeFileVersionWrittenOut(t *testing.T) {
	fv := wireVersion(4, "Install")
	body, err := json.Marshal(fv)
	if err != nil {
		t.Fatal(err)
	}
	var got FileVersion
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, fv) {
		t.Fatalf("got %+v\nwant %+v", got, fv)
	}
}

func TestDecodeFileVersionRefusesBrokenCounts(t *testing.T) {
	id := ids.FileVersion(ids.File("acme", "", "a.md"), "v", "s")
	for _, body := range []string{
		`{"wire":2,"file_version_id":"x","sections":[{"ordinal":0,"chunk_count":0}],"chunks":[]}`,
		`{"wire":2,"file_version_id":"` + id + `","sections":[{"ordinal":0,"chunk_count":2}],"chunks":[{"index":0}]}`,
		`{"wire":2,"file_version_id":"` + id + `","sections":[{"ordinal":0,"chunk_count":0}],"chunks":[{"index":0}]}`,
		`{"wire":2,"file_version_id":"` + id + `","sections":[{"ordinal":0,"keep":1}],"chunks":[]}`,
	} {
		var fv FileVersion
		if err := json.Unmarshal([]byte(body), &fv); err == nil {
			t.Errorf("%s: decoded", body)
		}
	}
}

// The message grows with the chunks' text, not with the chunks times the
// heading: a long heading over many chunks is written once.
func TestEncodeFileVersionLinear(t *testing.T) {
	heading := strings.Repeat("h", 256)
	small, _ := EncodeFileVersion(wireVersion(10, heading))
	big, _ := EncodeFileVersion(wireVersion(1010, heading))
	if perChunk := (len(big) - len(small)) / 1000; perChunk > 200 { // fields and numbers, not the 256-byte heading
		t.Fatalf("%d bytes a chunk of about 15 bytes of text", perChunk)
	}
}
