package e2e

import (
	"archive/zip"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract/pdf/pdfwrite"
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
	for _, tt := range []struct {
		query, path string
		citation    []string // the top hit's citation holds each
	}{
		{"bogwillow", "mail/launch.eml", []string{"mail/launch.eml", "Attachment: notes.txt"}},
		{"fennelstone", "mail/team.mbox", []string{"mail/team.mbox", "Réunion de lundi", "Attachment: agenda.txt"}},
		{"quarrystone", "mail/team.mbox", []string{"mail/team.mbox", "Deploy window"}},
		{"thistledown", "mail/team.mbox", []string{"mail/team.mbox", "Lunch"}},
		{"docxfootnotemarker", "share/bundle.zip", []string{"share/bundle.zip", "Member: reports/q3.docx"}},
		{"zippumpmarker", "share/bundle.zip", []string{"share/bundle.zip", "Member: manual.pdf"}},
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
		for _, want := range tt.citation {
			if !strings.Contains(fmt.Sprint(top["citation"]), want) {
				t.Errorf("%s: citation %q, want %q in it", tt.query, top["citation"], want)
			}
		}
	}
	// Deleting the containers takes every member out.
	h.remove("acme/mail/team.mbox")
	h.remove("acme/share/bundle.zip")
	for _, q := range []string{"fennelstone", "quarrystone", "thistledown", "docxfootnotemarker", "zippumpmarker"} {
		h.waitFor("no hit of "+q+" once its container is deleted", "search_keyword", map[string]any{"query": q}, func(out map[string]any, _ string) bool {
			return len(results(out)) == 0
		})
	}
	if out, _ := h.call("search_keyword", map[string]any{"query": "bogwillow"}); len(results(out)) != 1 {
		t.Errorf("the message left in place lost its attachment: %v", out)
	}
}

// bundle is a ZIP as a user zips a folder: a DOCX made by LibreOffice in a
// subfolder and a text PDF.
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
