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
	"slices"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/detect"
	"github.com/strata-kb/strata/ingestor/extract/extracttest"
	"github.com/strata-kb/strata/ingestor/extract/mail"
	"github.com/strata-kb/strata/ingestor/extract/pdf"
	"github.com/strata-kb/strata/ingestor/extract/plaintext"
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
// each attachment under a heading that names it and a line that says what
// it is and where it is read: by its own reader, into a member of the
// message at its name, its text there and not in the message's. No
// base64 left anywhere.
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
	for heading, line := range map[string]string{
		"Attachment: notes.txt":      "text/plain, 86 bytes, read as a document of its own: notes.txt",
		"Attachment: Relevé été.pdf": "application/pdf, 80414 bytes, read as a document of its own: Relevé été.pdf",
	} {
		if got, ok := extracttest.Under(doc, heading); !ok || got != line {
			t.Errorf("%s: %v %q, want %q", heading, ok, got, line)
		}
	}
	for _, word := range []string{"bogwillow", "ledger"} {
		if strings.Contains(doc.Text, word) {
			t.Errorf("the attachment's word %q is in the message's text: %q", word, extract.Truncate(doc.Text, 600))
		}
	}
	if got := extracttest.MemberPaths(doc); strings.Join(got, "|") != "notes.txt|Relevé été.pdf" {
		t.Fatalf("members %q, want notes.txt and Relevé été.pdf", got)
	}
	notes, pdfDoc := extracttest.Member(doc, "notes.txt"), extracttest.Member(doc, "Relevé été.pdf")
	if notes.Format != "text" || !strings.Contains(notes.Text, "bogwillow") {
		t.Errorf("notes.txt: %s %q", notes.Format, notes.Text)
	}
	if pdfDoc.Format != "pdf" || !strings.Contains(pdfDoc.Text, "ledger") || pdfDoc.Pages == 0 {
		t.Errorf("the PDF attachment: %s, %d pages, %q", pdfDoc.Format, pdfDoc.Pages, extract.Truncate(pdfDoc.Text, 300))
	}
	for _, d := range []*extract.Document{doc, notes, pdfDoc} {
		if strings.Contains(d.Text, "JVBERi") || strings.Contains(d.Text, "=C3=A0") {
			t.Errorf("base64 or quoted-printable left in the %s text", d.Format)
		}
	}
	// The message's metadata is the message's: the ingestor gives it to
	// its attachments, the reader does not copy it.
	for _, k := range []string{"from", "to", "subject", "date"} {
		if _, ok := notes.Metadata[k]; ok {
			t.Errorf("the attachment has the message's %s: %v", k, notes.Metadata)
		}
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

// bidiAttachment is named "/abs/x<RIGHT-TO-LEFT OVERRIDE>gpj.exe" (RFC
// 2231), which shows as "xexe.jpg".
const bidiAttachment = "Content-Type: application/octet-stream\r\nContent-Disposition: attachment; filename*=utf-8''%2Fabs%2Fx%E2%80%AEgpj.exe\r\n\r\ny"

// bombLimits let a message expand to 16 MiB.
func bombLimits() extract.Limits {
	lim := extract.DefaultLimits()
	lim.MaxUncompressed = 16 << 20
	return lim
}

// TestHostileMessages: what is cut is said on the message, with the
// reason, the rest is read, nothing is written anywhere, and a file that
// is no message fails as corrupt.
func TestHostileMessages(t *testing.T) {
	var many []string
	for i := range 1200 {
		many = append(many, attachment(fmt.Sprintf("a%d.txt", i), []byte("x")))
	}
	for _, tc := range []struct {
		name, wantText, wantWarning string
		wantMembers                 []string // the first members' paths, in order
		members                     int      // how many
		data                        []byte
	}{
		{"deep.eml", "", "nested deeper than 16", nil, 0, nestedMIME(100)},
		{"many.eml", "Attachment: a999.txt", "after the first 1000", []string{"a0.txt", "a1.txt"}, 1000, message("many", many...)},
		{"paths.eml", "read as a document of its own: passwd", "", []string{"passwd", "x gpj.exe"}, 2,
			message("paths", attachment("../../etc/passwd", []byte("root")), bidiAttachment)},
		{"bomb.eml", "Attachment: report.docx", "attachment report.docx not read", nil, 0,
			message("bomb", "Content-Type: text/plain\r\n\r\nthe words around the bomb", attachment("report.docx", zipBomb(t)))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := extractWithin(t, tc.name, tc.data, bombLimits())
			extracttest.Verify(t, doc, nil, profile)
			if err := extracttest.CheckLimits(doc, bombLimits()); err != nil {
				t.Error(err)
			}
			if tc.wantText != "" && !strings.Contains(doc.Text, tc.wantText) {
				t.Errorf("no %q in %q", tc.wantText, extract.Truncate(doc.Text, 300))
			}
			if w := strings.Join(doc.Warnings, "; "); tc.wantWarning != "" && !strings.Contains(w, tc.wantWarning) {
				t.Errorf("warnings %q, want %q", w, tc.wantWarning)
			}
			paths := extracttest.MemberPaths(doc)
			if len(paths) != tc.members || len(paths) < len(tc.wantMembers) || !slices.Equal(paths[:len(tc.wantMembers)], tc.wantMembers) {
				t.Errorf("%d members %q, want %d starting with %q", len(paths), paths[:min(len(paths), 5)], tc.members, tc.wantMembers)
			}
			for _, text := range append([]string{doc.Text}, paths...) {
				if strings.Contains(text, "../") || strings.Contains(text, "\u202e") {
					t.Errorf("a path or a bidi override kept: %q", extract.Truncate(text, 300))
				}
			}
		})
	}
	if _, err := registry.Extract(context.Background(), []byte("no header here\x00\x01"), "x.eml", extract.DefaultLimits()); !errors.Is(err, extract.ErrCorrupt) {
		t.Errorf("not a message: %v", err)
	}
}

// TestAttachmentsAreNamedUniquely: attachments of one name are members of
// their own ("notes.txt", "notes (2).txt"), each line says where its own
// is; one without a name is named by its place and its type.
func TestAttachmentsAreNamedUniquely(t *testing.T) {
	data := message("twice",
		attachment("notes.txt", []byte("the first notes: firstnotesmarker")),
		attachment("notes.txt", []byte("the second notes: secondnotesmarker")),
		"Content-Type: application/json\r\nContent-Disposition: attachment\r\n\r\n{\"word\": \"jsonmarker\"}")
	doc := extractMessage(t, "twice.eml", data)
	extracttest.Verify(t, doc, nil, profile)
	if got := extracttest.MemberPaths(doc); strings.Join(got, "|") != "notes.txt|notes (2).txt|attachment 3.json" {
		t.Fatalf("members %q", got)
	}
	for path, word := range map[string]string{"notes.txt": "firstnotesmarker", "notes (2).txt": "secondnotesmarker", "attachment 3.json": "jsonmarker"} {
		if m := extracttest.Member(doc, path); !strings.Contains(m.Text, word) {
			t.Errorf("%s: %q, want %s", path, m.Text, word)
		}
		if !strings.Contains(doc.Text, "read as a document of its own: "+path+"\n") && !strings.HasSuffix(doc.Text, "read as a document of its own: "+path) {
			t.Errorf("no line says where %s is: %q", path, doc.Text)
		}
		if strings.Contains(doc.Text, word) {
			t.Errorf("%s's text is in the message's", path)
		}
	}
}

// TestAttachmentsShareTheMessagesLimits: attachments read into members of
// their own still share the message's text and budget: under a limit
// that holds some of them, those are read, the rest recorded on the
// message with the limit's name, and the message with its members stays
// within the limit (their text and what they hold counted).
func TestAttachmentsShareTheMessagesLimits(t *testing.T) {
	var parts []string
	for i := range 40 {
		parts = append(parts, attachment(fmt.Sprintf("part%02d.txt", i), []byte(strings.Repeat(fmt.Sprintf("words of part %d. ", i), 60))))
	}
	data := message("shared", parts...)
	full := extractMessage(t, "shared.eml", data)
	if len(full.Members) != 40 {
		t.Fatalf("%d members without a tight limit, want 40", len(full.Members))
	}
	text, held := extract.TextWithMembers(full), extract.HeldWithMembers(full)
	for _, tc := range []struct {
		limit string
		lim   func(*extract.Limits)
	}{
		{"MaxTextBytes", func(l *extract.Limits) { l.MaxTextBytes = text / 3 }},
		{"MaxFileBytes", func(l *extract.Limits) { l.MaxFileBytes = held / 3 }},
	} {
		t.Run(tc.limit, func(t *testing.T) {
			lim := extract.DefaultLimits()
			tc.lim(&lim)
			doc := extractWithin(t, "shared.eml", data, lim)
			extracttest.Verify(t, doc, nil, profile)
			if n := extract.TextWithMembers(doc); lim.MaxTextBytes > 0 && n > lim.MaxTextBytes {
				t.Errorf("%d bytes of text with the members', over the %d limit", n, lim.MaxTextBytes)
			}
			if n := extract.HeldWithMembers(doc); lim.MaxFileBytes > 0 && n > lim.MaxFileBytes {
				t.Errorf("holds %d bytes with the members, over the %d budget", n, lim.MaxFileBytes)
			}
			if len(doc.Members) == 0 || len(doc.Members) >= 40 {
				t.Errorf("%d members read, want some, not all", len(doc.Members))
			}
			w := strings.Join(doc.Warnings, "\n")
			if !strings.Contains(w, "not read") || !strings.Contains(w, tc.limit) {
				t.Errorf("warnings %q, want the ones not read with %s", w, tc.limit)
			}
		})
	}
}

// profile is what every message's document promises.
var profile = extracttest.Profile{Format: mail.Format, Kinds: []extract.Kind{extract.Paragraph, extract.Heading, extract.Code, extract.Table},
	CleanText: true, CleanTitle: true, TrimmedBlocks: true, MetadataKeys: []string{"subject", "from", "to", "cc", "date"}, CleanMetadata: true}

// FuzzExtract: no input makes the reader panic or fail with an error
// callers cannot classify, and every document it returns keeps the
// profile's promises, its members (attachments) theirs, within the
// limits. Attachments are read as plain text: their own readers have fuzz
// tests of their own, and poppler would slow each input a thousand times.
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
		doc, err := mail.Extractor{Attachment: plaintext.Extractor{}.Extract}.Extract(context.Background(), data, "f.eml", lim)
		if err != nil {
			if !extracttest.Classified(err) {
				t.Fatalf("unclassified error: %v", err)
			}
			return
		}
		extracttest.Verify(t, doc, nil, profile)
		if err := extracttest.CheckLimits(doc, lim); err != nil {
			t.Fatal(err)
		}
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
