package ingest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/metadata"
	"github.com/strata-kb/strata/shared/pipeline"
)

// containerReader is a small fake of the extractor: every file is a
// message whose document has the members it is given.
type containerReader struct{ members []extract.Member }

func (c containerReader) Extract(_ context.Context, _ []byte, _ string, _ extract.Limits) (*extract.Document, error) {
	doc := textDoc("Launch plan", "From: ann@example.com\n\nThe launch is on Friday.")
	doc.Format, doc.Metadata, doc.Members = "email", metadata.Metadata{"subject": str("Launch plan"), "from": str("ann@example.com")}, c.members
	return doc, nil
}

func textDoc(title, text string) *extract.Document {
	b := extract.NewBuilder("text")
	b.SetTitle(title)
	b.Add(extract.Heading, 1, 0, title)
	b.Add(extract.Paragraph, 0, 0, text)
	return b.Doc()
}

// A container's members are file versions of their own inside its
// version: flattened, each at <container>//<member>, with its own ids,
// chunks and metadata (its own, under what the message says), and the
// container's object, access and tags.
func TestMembersAreDocumentsOfTheirOwn(t *testing.T) {
	const key = "acme/mail/launch.eml"
	inner := textDoc("inner.zip", "Contents: deep.txt")
	inner.Format = "zip"
	deep := textDoc("deep.txt", "kiwi marker deep inside")
	deep.Metadata = metadata.Metadata{"subject": str("its own subject"), "owner": str("bo")}
	inner.Members = []extract.Member{{Path: "deep.txt", Doc: deep}}
	store := fakeStore{objects: map[string][]byte{key: []byte("message")}, tags: map[string]map[string]string{key: {"strata-groups": "sales", "dept": "ops"}}}
	in, pub := storeIngestor(t, store, &fakeStates{})
	in.extractor = containerReader{members: []extract.Member{{Path: "notes.txt", Doc: textDoc("notes.txt", "mango marker in the notes")}, {Path: "inner.zip", Doc: inner}}}
	if err := in.HandleEvent(context.Background(), eventJSON("s3:ObjectCreated:Put", key, 7)); err != nil {
		t.Fatal(err)
	}
	if len(pub.msgs) != 1 {
		t.Fatalf("%d messages, want the container's one", len(pub.msgs))
	}
	fv := decode(t, pub.msgs[0])
	var paths []string
	for _, m := range fv.Members {
		paths = append(paths, m.Object.Path)
	}
	if strings.Join(paths, " ") != "mail/launch.eml//notes.txt mail/launch.eml//inner.zip mail/launch.eml//inner.zip//deep.txt" {
		t.Fatalf("member paths %q", paths)
	}
	if strings.Contains(fv.Chunks[0].Content, "mango") {
		t.Fatalf("the container's text holds a member's: %q", fv.Chunks[0].Content)
	}
	for _, m := range fv.Members {
		if m.FileID != ids.File("acme", "", m.Object.Path) || m.FileVersionID == fv.FileVersionID || !ids.Valid(m.FileVersionID) ||
			m.Object.Key != fv.Object.Key || m.Object.Sequencer != fv.Object.Sequencer || m.Checksum != fv.Checksum || len(m.Members) != 0 {
			t.Errorf("member %s: ids or object %+v", m.Object.Path, m)
		}
		if m.Status != pipeline.StatusIndexed || len(m.Chunks) == 0 || m.Chunks[0].ID != ids.Chunk(m.FileVersionID, 0) {
			t.Errorf("member %s: status %q, %d chunks", m.Object.Path, m.Status, len(m.Chunks))
		}
		if strings.Join(m.Access.Groups, ",") != "sales" || m.Metadata["dept"].Text != "ops" || m.Metadata["from"].Text != "ann@example.com" {
			t.Errorf("member %s: groups %v, metadata %v", m.Object.Path, m.Access.Groups, m.Metadata)
		}
	}
	deepFV := fv.Members[2]
	if !strings.Contains(deepFV.Chunks[0].Content, "kiwi") || deepFV.Metadata["subject"].Text != "Launch plan" || deepFV.Metadata["owner"].Text != "bo" {
		t.Errorf("deep member: %q, metadata %v (the message's subject wins, its own owner stays)", deepFV.Chunks[0].Content, deepFV.Metadata)
	}
	if fv.Members[0].Title != "notes.txt" {
		t.Errorf("member title %q", fv.Members[0].Title)
	}
}

// A file carries at most MaxMembers members, its members' members
// included; what is past it is recorded on the container.
func TestMembersPastTheLimitAreRecorded(t *testing.T) {
	const key = "acme/big.zip"
	var members []extract.Member
	for i := range MaxMembers + 5 {
		members = append(members, extract.Member{Path: fmt.Sprintf("f%d.txt", i), Doc: textDoc("f", "words")})
	}
	in, pub := storeIngestor(t, fakeStore{objects: map[string][]byte{key: []byte("zip")}}, &fakeStates{})
	in.extractor = containerReader{members: members}
	if err := in.HandleEvent(context.Background(), eventJSON("s3:ObjectCreated:Put", key, 3)); err != nil {
		t.Fatal(err)
	}
	fv := decode(t, pub.msgs[0])
	if len(fv.Members) != MaxMembers || !strings.Contains(strings.Join(fv.Warnings, "\n"), fmt.Sprintf("member big.zip//f%d.txt and those after it", MaxMembers)) {
		t.Fatalf("%d members, warnings %q", len(fv.Members), fv.Warnings)
	}
}

// A member's path is one every tool takes back: a name the reader could
// not decode keeps its place as "_", and a path over the key limit is no
// document of its own, with a warning on the container.
func TestMemberPathsAreValidDocumentPaths(t *testing.T) {
	const key = "acme/share/names.zip"
	in, pub := storeIngestor(t, fakeStore{objects: map[string][]byte{key: []byte("zip")}}, &fakeStates{})
	in.extractor = containerReader{members: []extract.Member{
		{Path: "caf\uFFFD/r\uFFFDsum\uFFFD.txt", Doc: textDoc("r", "words")},
		{Path: "caf_/r_sum_.txt", Doc: textDoc("r", "other words")},
		{Path: strings.Repeat("long/", 250) + "x.txt", Doc: textDoc("x", "words")},
	}}
	if err := in.HandleEvent(context.Background(), eventJSON("s3:ObjectCreated:Put", key, 3)); err != nil {
		t.Fatal(err)
	}
	fv := decode(t, pub.msgs[0])
	if len(fv.Members) != 2 || fv.Members[0].Object.Path != "share/names.zip//caf_/r_sum_.txt" || fv.Members[1].Object.Path != "share/names.zip//caf_/r_sum_.txt (2)" {
		t.Fatalf("members %d: %+v", len(fv.Members), fv.Members)
	}
	if !strings.Contains(strings.Join(fv.Warnings, "\n"), "is not a document of its own: its path is not one a tool can take") {
		t.Fatalf("warnings %q", fv.Warnings)
	}
}
