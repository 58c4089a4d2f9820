package pdf

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/pdf/pdfwrite"
)

// TestTitleAndTextInOnePass: the title comes from pdftotext -htmlmeta's head
// (HTML-escaped there), the page text from its body byte for byte, markup
// characters included (poppler does not escape it).
func TestTitleAndTextInOnePass(t *testing.T) {
	lines := []string{"if x < y && z > 0 then", "</pre> is not the end & neither is this"}
	data := pdfwrite.MakeTitled(`Q&A <draft> "notes"`, []pdfwrite.Page{{Lines: lines}, {Lines: []string{"page two"}}}, nil)
	doc, err := Poppler{}.Extract(context.Background(), data, "titled.pdf", testLimits())
	if err != nil {
		t.Fatal(err)
	}
	if doc.Title != `Q&A <draft> "notes"` {
		t.Errorf("title = %q", doc.Title)
	}
	if doc.Pages != 2 {
		t.Errorf("pages = %d, want 2", doc.Pages)
	}
	for _, l := range append(lines, "page two") {
		if !strings.Contains(doc.Text, l) {
			t.Errorf("text lost %q:\n%s", l, doc.Text)
		}
	}
	if strings.Contains(doc.Text, "&amp;") || strings.Contains(doc.Text, "<title>") {
		t.Errorf("markup leaked into the text:\n%s", doc.Text)
	}
}

// TestTextOverTheOutputCap: pdftotext's output is capped at MaxTextBytes
// plus 64 KiB, and more is ErrTooLarge. (The cap was once bypassed: the
// capped buffer's embedded bytes.Buffer lent exec its ReadFrom.)
func TestTextOverTheOutputCap(t *testing.T) {
	var pages []pdfwrite.Page
	for p := range 40 {
		var lines []string
		for l := range 36 {
			lines = append(lines, fmt.Sprintf("Page %d line %d of a long report, with words to index.", p+1, l+1))
		}
		pages = append(pages, pdfwrite.Page{Lines: lines})
	}
	data := pdfwrite.Make(pages, nil)
	lim := testLimits()
	doc, err := Poppler{}.Extract(context.Background(), data, "long.pdf", lim)
	if err != nil || len(doc.Text) < 70<<10 {
		t.Fatalf("the file has no text over the cap: %v", err)
	}
	lim.MaxTextBytes = 1
	if doc, err := (Poppler{}).Extract(context.Background(), data, "long.pdf", lim); !errors.Is(err, extract.ErrTooLarge) || doc != nil {
		t.Fatalf("%d bytes of text, MaxTextBytes 1: %v, want ErrTooLarge", len(doc.Text), err)
	}
}

// TestPageLimitNamesTheTotal: past lim.MaxPages, pdfinfo says how many pages
// the file has, and the warning names both.
func TestPageLimitNamesTheTotal(t *testing.T) {
	var pages []pdfwrite.Page
	for i := range 5 {
		pages = append(pages, pdfwrite.Page{Lines: []string{fmt.Sprintf("page %d", i+1)}})
	}
	lim := testLimits()
	lim.MaxPages = 2
	doc, err := Poppler{}.Extract(context.Background(), pdfwrite.Make(pages, nil), "long.pdf", lim)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Pages != 5 || strings.Contains(doc.Text, "page 3") || !strings.Contains(doc.Text, "page 2") {
		t.Errorf("pages = %d, text %q", doc.Pages, doc.Text)
	}
	if w := strings.Join(doc.Warnings, "; "); !strings.Contains(w, "only the first 2 of 5 pages") {
		t.Errorf("warnings = %q", w)
	}
}

func TestParseHTMLMeta(t *testing.T) {
	head := "<!DOCTYPE html><html><head>\n<title>A &amp; B</title>\n</head>\n<body>\n<pre>\n"
	for _, c := range []struct {
		name, out string
		title     string
		pages     []string
		err       error
	}{
		{"two pages", head + "one\n\f\ftwo\n\f</pre>\n</body>\n</html>\n", "A & B", []string{"one\n", "", "two\n"}, nil},
		{"no page laid out", head + "</pre>\n</body>\n</html>\n", "A & B", nil, nil},
		{"not htmlmeta", "plain text\f", "", nil, extract.ErrCorrupt},
		{"cut short", head + "one\f", "", nil, extract.ErrCorrupt},
	} {
		got, err := ParseHTMLMeta([]byte(c.out))
		if !errors.Is(err, c.err) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.err)
			continue
		}
		if err == nil && (got.Title != c.title || fmt.Sprintf("%q", got.Pages) != fmt.Sprintf("%q", c.pages)) {
			t.Errorf("%s: got %q %q, want %q %q", c.name, got.Title, got.Pages, c.title, c.pages)
		}
	}
}

// TestLastWordsSurviveWarnings: poppler may print pages of warnings before
// the line that says why it failed; the password must still be recognised.
func TestLastWordsSurviveWarnings(t *testing.T) {
	var w tail
	w.max = 4096
	for range 1000 {
		fmt.Fprintln(&w, "Syntax Error (2): Unknown compression method in flate stream")
	}
	fmt.Fprint(&w, "Command Line Error: Incorrect password\n")
	if len(w.String()) > 4096 {
		t.Errorf("tail kept %d bytes", len(w.String()))
	}
	err := classify(fmt.Errorf("pdftotext: exit status 1: %s", strings.TrimSpace(w.String())))
	if !errors.Is(err, extract.ErrEncrypted) || !strings.HasSuffix(err.Error(), "Incorrect password") {
		t.Errorf("classify = %v", err)
	}
}
