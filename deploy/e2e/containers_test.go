package e2e

import (
	"archive/zip"
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract/pdf/pdfwrite"
	"github.com/strata-kb/strata/shared/ids"
)

// TestContainers (issue 52 item 6, as containers are read today: members
// inside their container's document): an e-mail with attachments, a
// mailbox of three messages and a ZIP with a DOCX and a PDF inside are
// uploaded with minio-go; a search finds a marker in each member, and its
// citation names the container and the member; deleting a container takes
// every member's text out of every search.
func TestContainers(t *testing.T) {
	h := start(t)
	read := func(parts ...string) string {
		data, err := os.ReadFile(filepath.Join(parts...))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	ingestor := filepath.Join("..", "..", "ingestor", "extract")
	h.put("acme/mail/launch.eml", read(ingestor, "mail", "testdata", "launch.eml"))
	h.put("acme/mail/team.mbox", read(ingestor, "mbox", "testdata", "team.mbox"))
	h.put("acme/share/bundle.zip", string(bundle(t, read("testdata", "formats", "trailing.docx"))))
	h.settle()
	// Each attachment, message and archive member is a document of its
	// own at <container>//<member>, cited by that path and its own headings.
	for _, tt := range []struct {
		query, path string
		citation    []string // the top hit's citation holds each
	}{
		{"bogwillow", "mail/launch.eml//notes.txt", nil},
		{"fennelstone", "mail/team.mbox//message-1.eml//agenda.txt", nil},
		{"quarrystone", "mail/team.mbox//message-2.eml", []string{"Deploy window"}},
		{"thistledown", "mail/team.mbox//message-3.eml", []string{"Lunch"}},
		{"docxfootnotemarker", "share/bundle.zip//reports/q3.docx", nil},
		{"zippumpmarker", "share/bundle.zip//manual.pdf", []string{"page 1"}},
	} {
		out, errText := h.call("hybrid_search", map[string]any{"query": tt.query, "project_reference": "acme", "alpha": 0})
		hits := results(out)
		if errText != "" || len(hits) == 0 {
			t.Errorf("%s: no hit: %v %s", tt.query, out, errText)
			continue
		}
		top := hits[0]
		if top["document_path"] != tt.path || !strings.Contains(strings.ToLower(fmt.Sprint(top["content"])), tt.query) {
			t.Errorf("%s: top hit is %v: %q", tt.query, top["document_path"], top["content"])
		}
		if len(hits) != 1 {
			t.Errorf("%s: %d hits, want the member's alone (its text is not its container's too)", tt.query, len(hits))
		}
		for _, want := range append(tt.citation, tt.path) {
			if !strings.Contains(fmt.Sprint(top["citation"]), want) {
				t.Errorf("%s: citation %q, want %q in it", tt.query, top["citation"], want)
			}
		}
		// A member is a file like any other: listed, read by its path.
		if chunks, errText := h.call("list_file_chunks", map[string]any{"project_reference": "acme", "file_path": tt.path}); errText != "" || len(chunksOf(chunks)) == 0 {
			t.Errorf("list_file_chunks %s: %v %s", tt.path, chunks, errText)
		}
	}
	// A message's headers are its members' metadata: filterable.
	out, errText := h.call("hybrid_search", map[string]any{"query": "bogwillow", "project_reference": "acme", "alpha": 0,
		"metadata": map[string]any{"to": "ops@example.com"}})
	if hits := results(out); errText != "" || len(hits) != 1 || hits[0]["document_path"] != "mail/launch.eml//notes.txt" {
		t.Errorf("the attachment by its message's To: %v %s", out, errText)
	}
	out, _ = h.call("hybrid_search", map[string]any{"query": "bogwillow", "project_reference": "acme", "alpha": 0,
		"metadata": map[string]any{"to": "nobody@example.com"}})
	if hits := results(out); len(hits) != 0 {
		t.Errorf("the attachment found by another To: %v", hits)
	}
	// A release reads the set of its version, a branch its own set.
	rel := h.release("acme", "", "containers-v1")
	if rel.Error != "" || rel.Release == nil {
		t.Fatalf("release: %+v", rel)
	}
	h.put("acme/share/bundle.zip", string(zipOf(t, []zipPart{{"manual.pdf", string(pdfwrite.MakeTitled("Manual", []pdfwrite.Page{{Lines: []string{"The second pump: secondpumpmarker."}}}, nil))}, {"new.txt", "newmembermarker"}})))
	h.put("acme@preview/share/bundle.zip", string(zipOf(t, []zipPart{{"branch.txt", "branchonlymarker"}})))
	h.settle()
	branchID := ids.Branch("acme", "preview")
	for _, c := range []struct {
		path  string
		extra map[string]any
		want  string // in the chunks, or in the error
	}{
		{"share/bundle.zip//manual.pdf", nil, "secondpumpmarker"},
		{"share/bundle.zip//new.txt", nil, "newmembermarker"},
		{"share/bundle.zip//reports/q3.docx", nil, "file not found"}, // gone from the new version
		{"share/bundle.zip//manual.pdf", map[string]any{"release_version": "containers-v1"}, "zippumpmarker"},
		{"share/bundle.zip//reports/q3.docx", map[string]any{"release_version": "containers-v1"}, "docxfootnotemarker"},
		{"share/bundle.zip//new.txt", map[string]any{"release_version": "containers-v1"}, "file not found"},
		{"share/bundle.zip//branch.txt", map[string]any{"branch_id": branchID}, "branchonlymarker"},
		{"share/bundle.zip//new.txt", map[string]any{"branch_id": branchID}, "file not found"}, // main's, hidden by the branch's container
		{"share/bundle.zip//branch.txt", nil, "file not found"},
	} {
		args := map[string]any{"project_reference": "acme", "file_path": c.path}
		maps.Copy(args, c.extra)
		out, errText := h.call("list_file_chunks", args)
		if got := contents(out) + errText; !strings.Contains(strings.ToLower(got), strings.ToLower(c.want)) {
			t.Errorf("%s %v: %q, want %q", c.path, c.extra, got, c.want)
		}
	}
	// Deleting the containers takes every member out of every tool.
	h.remove("acme/mail/team.mbox")
	h.remove("acme/share/bundle.zip")
	for _, q := range []string{"fennelstone", "quarrystone", "thistledown", "secondpumpmarker", "newmembermarker"} {
		h.waitFor("no hit of "+q+" once its container is deleted", "search_keyword", map[string]any{"query": q}, func(out map[string]any, _ string) bool {
			return len(results(out)) == 0
		})
	}
	for _, p := range []string{"mail/team.mbox//message-2.eml", "share/bundle.zip//manual.pdf", "share/bundle.zip//new.txt"} {
		if out, errText := h.call("list_file_chunks", map[string]any{"project_reference": "acme", "file_path": p}); len(chunksOf(out)) != 0 || errText == "" {
			t.Errorf("list_file_chunks of %s after its container's delete: %v %q", p, out, errText)
		}
	}
	if out, _ := h.call("list_files", map[string]any{"project_reference": "acme"}); strings.Contains(fmt.Sprint(out), "/acme/share/bundle.zip//") || !strings.Contains(fmt.Sprint(out), "/acme/mail/launch.eml//notes.txt") {
		t.Errorf("list_files after the deletes: %v", out)
	}
	if out, _ := h.call("search_keyword", map[string]any{"query": "bogwillow"}); len(results(out)) != 1 {
		t.Errorf("the message left in place lost its attachment: %v", out)
	}
}

func bundle(t *testing.T, docx string) []byte {
	return zipOf(t, []zipPart{
		{"reports/", ""},
		{"reports/q3.docx", docx},
		{"manual.pdf", string(pdfwrite.MakeTitled("Manual", []pdfwrite.Page{{Lines: []string{"Priming the pump: zippumpmarker."}}}, nil))},
	})
}

// zipPart is one entry of a ZIP a test makes.
type zipPart struct{ name, data string }

// zipOf writes parts into a ZIP, in order.
func zipOf(t *testing.T, parts []zipPart) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, p := range parts {
		w, err := zw.Create(p.name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(p.data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
