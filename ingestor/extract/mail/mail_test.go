package mail_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/detect"
	"github.com/strata-kb/strata/ingestor/extract/extracttest"
	"github.com/strata-kb/strata/ingestor/extract/mail"
	"github.com/strata-kb/strata/ingestor/extract/pdf"
)

// registry reads messages as the ingestor does: attachments by their own
// formats' readers.
var registry = detect.NewRegistry(pdf.Poppler{})

func read(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func extractMessage(t *testing.T, name string, data []byte) *extract.Document {
	t.Helper()
	return extractWithin(t, name, data, extract.DefaultLimits())
}

func extractWithin(t *testing.T, name string, data []byte, lim extract.Limits) *extract.Document {
	t.Helper()
	doc, err := registry.Extract(context.Background(), data, "mail/"+name, lim)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if doc.Format != mail.Format {
		t.Fatalf("%s read as %q", name, doc.Format)
	}
	return doc
}

// TestAMessageIsReadAsAPersonReadsIt: the subject, who wrote to whom and
// when, the body once (the text alternative, not the HTML one too), and
// each attachment under a heading that names it, read by its own reader:
// no base64 left anywhere.
func TestAMessageIsReadAsAPersonReadsIt(t *testing.T) {
	doc := extractMessage(t, "launch.eml", read(t, "launch.eml"))
	if doc.Title != "Lancement du projet Héron — été 2026" {
		t.Errorf("title %q", doc.Title)
	}
	if n := strings.Count(doc.Text, "quillfeather"); n != 1 {
		t.Errorf("the body's word appears %d times, want once (the text alternative alone)", n)
	}
	for _, want := range []string{"From: Zoë Martin <zoe@example.com>", "To: Ada Lovelace <ada@example.com>, ops@example.com", "Cc: Grace Hopper <grace@example.com>", "Bonjour à tous,"} {
		if !strings.Contains(doc.Text, want) {
			t.Errorf("no %q in %q", want, extract.Truncate(doc.Text, 400))
		}
	}
	if notes, ok := extracttest.Under(doc, "Attachment: notes.txt"); !ok || !strings.Contains(notes, "bogwillow") {
		t.Errorf("notes.txt: %v %q", ok, notes)
	}
	if got, ok := extracttest.Under(doc, "Attachment: Relevé été.pdf"); !ok || !strings.Contains(got, "ledger") {
		t.Errorf("the PDF attachment: %v %q", ok, extract.Truncate(got, 300))
	}
	if strings.Contains(doc.Text, "JVBERi") || strings.Contains(doc.Text, "=C3=A0") {
		t.Error("base64 or quoted-printable left in the text")
	}
	m := doc.Metadata
	if m["subject"].Text != doc.Title || strings.Join(m["to"].List, "|") != "Ada Lovelace <ada@example.com>|ops@example.com" ||
		strings.Join(m["from"].List, "|") != "Zoë Martin <zoe@example.com>" || m["date"].Date.IsZero() || len(m["cc"].List) != 1 {
		t.Errorf("metadata %+v", m)
	}
}

// TestCharsetsAndEncodings: an ISO-8859-1 quoted-printable body and RFC
// 2047 headers become UTF-8; an HTML-only body goes through the HTML
// reader; a forwarded message has a heading of its own.
func TestCharsetsAndEncodings(t *testing.T) {
	doc := extractMessage(t, "latin1.eml", read(t, "latin1.eml"))
	if doc.Title != "Café crème" || !strings.Contains(doc.Text, "Le café crème est servi à dix heures. Mot de passe: lanterneau.") ||
		!strings.Contains(doc.Text, "From: André <andre@example.com>") {
		t.Errorf("latin1: %q %q", doc.Title, doc.Text)
	}
	doc = extractMessage(t, "html-only.eml", read(t, "html-only.eml"))
	if got, ok := extracttest.Under(doc, "Tide tables"); !ok || !strings.Contains(got, "kelpstone") {
		t.Errorf("html-only: %v %q", ok, doc.Text)
	}
	doc = extractMessage(t, "forwarded.eml", read(t, "forwarded.eml"))
	if got, ok := extracttest.Under(doc, "Forwarded: Original budget"); !ok || !strings.Contains(got, "sandpiper") || !strings.Contains(got, "From: cfo@example.com") {
		t.Errorf("forwarded: %v %q", ok, doc.Text)
	}
}

// message is a multipart/mixed message of parts (each with its headers).
func message(subject string, parts ...string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "From: a@example.com\r\nTo: b@example.com\r\nSubject: %s\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b0\"\r\n\r\n", subject)
	for _, p := range parts {
		b.WriteString("--b0\r\n" + p + "\r\n")
	}
	b.WriteString("--b0--\r\n")
	return []byte(b.String())
}

func attachment(name string, data []byte) string {
	return fmt.Sprintf("Content-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=%q\r\nContent-Transfer-Encoding: base64\r\n\r\n%s",
		name, base64.StdEncoding.EncodeToString(data))
}

// nestedMIME is a body of n multipart parts, each inside the one before.
func nestedMIME(n int) []byte {
	var b strings.Builder
	b.WriteString("From: a@example.com\r\nSubject: deep\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b0\"\r\n\r\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "--b%d\r\nContent-Type: multipart/mixed; boundary=\"b%d\"\r\n\r\n", i-1, i)
	}
	fmt.Fprintf(&b, "--b%d\r\nContent-Type: text/plain\r\n\r\ndeepest words\r\n--b%d--\r\n", n, n)
	for i := n - 1; i >= 0; i-- {
		fmt.Fprintf(&b, "--b%d--\r\n", i)
	}
	return []byte(b.String())
}

// zipBomb is a DOCX-named archive whose one entry expands 1000 times, to
// more than bombLimits let a message expand.
func zipBomb(t *testing.T) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create("word/document.xml")
	if err != nil {
		t.Fatal(err)
	}
	w.Write(bytes.Repeat([]byte{'a'}, 64<<20))
	zw.Close()
	return buf.Bytes()
}

// TestHostileMessages: what is cut is said, the rest is read, nothing is
// written anywhere, and a file that is no message fails as corrupt.
// bombLimits let a message expand to 16 MiB.
func bombLimits() extract.Limits {
	lim := extract.DefaultLimits()
	lim.MaxUncompressed = 16 << 20
	return lim
}

func TestHostileMessages(t *testing.T) {
	var many []string
	for i := range 1005 {
		many = append(many, attachment(fmt.Sprintf("a%d.bin", i), []byte("x")))
	}
	for _, tc := range []struct {
		name, wantText, wantWarning string
		data                        []byte
	}{
		{"deep.eml", "", "nested deeper than 16", nestedMIME(100)},
		{"many.eml", "Attachment: a999.bin", "after the first 1000", message("many", many...)},
		{"paths.eml", "Attachment: passwd", "", message("paths", attachment("../../etc/passwd", []byte("root")), attachment("/abs/x\u202egpj.exe", []byte("y")))},
		{"bomb.eml", "Attachment: report.docx", "attachment report.docx not read", message("bomb", "Content-Type: text/plain\r\n\r\nthe words around the bomb", attachment("report.docx", zipBomb(t)))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := extractWithin(t, tc.name, tc.data, bombLimits())
			if tc.wantText != "" && !strings.Contains(doc.Text, tc.wantText) {
				t.Errorf("no %q in %q", tc.wantText, extract.Truncate(doc.Text, 300))
			}
			if w := strings.Join(doc.Warnings, "; "); tc.wantWarning != "" && !strings.Contains(w, tc.wantWarning) {
				t.Errorf("warnings %q, want %q", w, tc.wantWarning)
			}
			if strings.Contains(doc.Text, "../") || strings.Contains(doc.Text, "\u202e") {
				t.Errorf("a path or a bidi override kept: %q", extract.Truncate(doc.Text, 300))
			}
		})
	}
	if _, err := registry.Extract(context.Background(), []byte("no header here\x00\x01"), "x.eml", extract.DefaultLimits()); !errors.Is(err, extract.ErrCorrupt) {
		t.Errorf("not a message: %v", err)
	}
}

// profile is what every message's document promises.
var profile = extracttest.Profile{Format: mail.Format, Kinds: []extract.Kind{extract.Paragraph, extract.Heading, extract.Code, extract.Table},
	CleanText: true, CleanTitle: true, TrimmedBlocks: true, MetadataKeys: []string{"subject", "from", "to", "cc", "date"}, CleanMetadata: true}

// FuzzExtract: no input makes the reader panic or fail with an error
// callers cannot classify, and every document it returns keeps the
// profile's promises. Attachments are named, not read: their readers have
// fuzz tests of their own, and poppler would slow each input a thousand
// times.
func FuzzExtract(f *testing.F) {
	for _, n := range []string{"launch.eml", "latin1.eml", "forwarded.eml", "html-only.eml"} {
		data, err := os.ReadFile(filepath.Join("testdata", n))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add(nestedMIME(20))
	f.Add(message("x", attachment("../a.txt", []byte("words")), "Content-Type: message/rfc822\r\n\r\nFrom: c@example.com\r\nSubject: in\r\n\r\ninner"))
	lim := extract.DefaultLimits()
	lim.MaxTextBytes = 1 << 20
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := mail.Extractor{}.Extract(context.Background(), data, "f.eml", lim)
		if err != nil {
			if !extracttest.Classified(err) {
				t.Fatalf("unclassified error: %v", err)
			}
			return
		}
		extracttest.Verify(t, doc, nil, profile)
	})
}

func TestConformance(t *testing.T) {
	var samples []extracttest.Sample
	for _, n := range []string{"launch.eml", "latin1.eml", "forwarded.eml", "html-only.eml"} {
		samples = append(samples, extracttest.Sample{Name: n, Data: read(t, n)})
	}
	var body strings.Builder
	for i := 0; body.Len() < 256<<10; i++ {
		fmt.Fprintf(&body, "Paragraph %d of a long message, with words to find in it.\r\n\r\n", i)
	}
	big := message("big", "Content-Type: text/plain; charset=utf-8\r\n\r\n"+body.String(), attachment("notes.txt", []byte("attached words")))
	extracttest.RunConformance(t, extracttest.Harness{
		Extractor:   mail.Extractor{Attachment: registry.Extract},
		Profile:     profile,
		Samples:     samples,
		Big:         &extracttest.Sample{Name: "big.eml", Data: big},
		Container:   true,
		CutsMembers: true,
		Known:       map[string]string{"zero limits": "an attachment is read by its own format's reader, and PDF's takes a zero Timeout as a budget of nothing (as its own suite says)"},
		Hostile: []extracttest.Sample{
			{Name: "deep.eml", Data: nestedMIME(100)},
			{Name: "bomb.eml", Data: message("bomb", attachment("report.docx", zipBomb(t)))},
		},
	})
}
