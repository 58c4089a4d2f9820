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
	sec := func(keep, chunks string) string {
		return `"sections":{"keep":[` + keep + `],"add":[[]],"chunks":[` + chunks + `]}`
	}
	oneChunk := `"chunks":{"content":["a"],"gap":[0],"tokens":[1],"kind":"t"}`
	noChunk := `"chunks":{"content":[],"gap":[],"tokens":[],"kind":""}`
	for _, body := range []string{
		`{"wire":3,"file_version_id":"x",` + sec("0", "0") + `,` + noChunk + `}`,
		`{"wire":3,"file_version_id":"` + id + `",` + sec("0", "2") + `,` + oneChunk + `}`,
		`{"wire":3,"file_version_id":"` + id + `",` + sec("0", "0") + `,` + oneChunk + `}`,
		`{"wire":3,"file_version_id":"` + id + `",` + sec("1", "0") + `,` + noChunk + `}`,
		`{"wire":3,"file_version_id":"` + id + `","sections":{"keep":[0,0],"add":[[]],"chunks":[1]},` + oneChunk + `}`,
		`{"wire":3,"file_version_id":"` + id + `",` + sec("0", "1") + `,"chunks":{"content":["a"],"gap":[],"tokens":[1],"kind":"t"}}`,
		`{"wire":3,"file_version_id":"` + id + `",` + sec("0", "1") + `,"chunks":{"content":["a"],"gap":[0],"tokens":[1],"kind":""}}`,
	} {
		var fv FileVersion
		if err := json.Unmarshal([]byte(body), &fv); err == nil {
			t.Errorf("%s: decoded", body)
		}
	}
	var fv FileVersion // the same message, whole, decodes
	if err := json.Unmarshal([]byte(`{"wire":3,"file_version_id":"`+id+`",`+sec("0", "1")+`,`+oneChunk+`}`), &fv); err != nil || len(fv.Chunks) != 1 || fv.Chunks[0].EndOffset != 1 {
		t.Fatalf("%+v, %v", fv, err)
	}
}

// A document of many tiny sections (a heading and a word each) still makes
// a message within three times its text (issue 50 item 1).
func TestEncodeFileVersionTinySections(t *testing.T) {
	fvID := ids.FileVersion(ids.File("acme", "", "tiny.md"), "v1", "sum")
	fv := FileVersion{FileVersionID: fvID, Status: StatusIndexed}
	text := 0
	for i := range 20000 {
		start := text
		text += 8 // "# a\n\nb\n\n"
		title := "a"
		fv.Sections = append(fv.Sections, Section{ID: ids.Section(fvID, i), Ordinal: i, Title: title, HeadingPath: []string{title}, Level: 1,
			StartOffset: start, EndOffset: start + 6, TokenCount: 3, ChunkCount: 1})
		sum := sha256.Sum256([]byte("# a\n\nb"))
		fv.Chunks = append(fv.Chunks, Chunk{ID: ids.Chunk(fvID, i), Index: i, SectionID: ids.Section(fvID, i), Content: "# a\n\nb",
			StartOffset: start, EndOffset: start + 6, TokenCount: 3, SourceChecksum: hex.EncodeToString(sum[:]), HeadingPath: []string{title}, Kind: "text"})
	}
	body, err := EncodeFileVersion(fv)
	if err != nil {
		t.Fatal(err)
	}
	if limit := 3*text + 64<<10; len(body) > limit {
		t.Fatalf("%d bytes for %d bytes of text, more than %d", len(body), text, limit)
	}
	var got FileVersion
	if err := json.Unmarshal(body, &got); err != nil || !reflect.DeepEqual(got, fv) {
		t.Fatalf("round trip: %v", err)
	}
}

// The message grows with the chunks' text, not with the chunks times the
// heading: a long heading over many chunks is written once.
func TestEncodeFileVersionLinear(t *testing.T) {
	heading := strings.Repeat("h", 256)
	small, _ := EncodeFileVersion(wireVersion(10, heading))
	big, _ := EncodeFileVersion(wireVersion(1010, heading))
	if perChunk := (len(big) - len(small)) / 1000; perChunk > 60 { // its content and a few numbers, not the 256-byte heading
		t.Fatalf("%d bytes a chunk of about 15 bytes of text", perChunk)
	}
}

// A container's members travel inside it, each in the compact form, and
// come back whole.
func TestEncodeFileVersionMembersRoundTrip(t *testing.T) {
	fv := wireVersion(4, "Install")
	member := wireVersion(3, "Notes") // its ids derived from its own version id below
	mid := ids.FileVersion(ids.File("acme", "", "mail/a.eml//notes.txt"), "v1", "sum")
	for i := range member.Sections {
		member.Sections[i].ID = ids.Section(mid, i)
	}
	for i := range member.Chunks {
		member.Chunks[i].ID = ids.Chunk(mid, i)
		member.Chunks[i].SectionID = ids.Section(mid, sectionOf(member, i))
	}
	member.FileVersionID, member.Object.Path = mid, "mail/a.eml//notes.txt"
	fv.Members = []FileVersion{member}
	body, err := EncodeFileVersion(fv)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(body), `"wire":3`) != 2 {
		t.Fatalf("members not in the compact form: %s", body)
	}
	var got FileVersion
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, fv) {
		t.Fatalf("round trip changed the members:\n got %+v\nwant %+v", got.Members, fv.Members)
	}
}

// sectionOf is the ordinal of the section chunk i of fv is in.
func sectionOf(fv FileVersion, i int) int {
	for o, s := range fv.Sections {
		if i < s.ChunkCount {
			return o
		}
		i -= s.ChunkCount
	}
	return -1
}
