package mbox_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/detect"
	"github.com/strata-kb/strata/ingestor/extract/extracttest"
	"github.com/strata-kb/strata/ingestor/extract/mbox"
	"github.com/strata-kb/strata/ingestor/extract/pdf"
)

// registry reads mailboxes as the ingestor does: each message by the mail
// reader, its attachments by their own readers.
var registry = detect.NewRegistry(pdf.Poppler{})

func team(t testing.TB) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "team.mbox"))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestAMailboxIsReadMessageByMessage: the list of messages (subject,
// sender, date), then each message under its subject as the mail reader
// reads it: its attachment read, a line the mailbox escaped given back as
// written, an HTML body read as HTML.
func TestAMailboxIsReadMessageByMessage(t *testing.T) {
	doc, err := registry.Extract(context.Background(), team(t), "mail/team.mbox", extract.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if doc.Format != mbox.Format || doc.Title != "team.mbox" {
		t.Fatalf("format %q, title %q", doc.Format, doc.Title)
	}
	extracttest.Verify(t, doc, nil, profile)
	list, ok := extracttest.Under(doc, "Messages")
	for _, want := range []string{"1. Réunion de lundi, from Zoë Martin <zoe@example.com>, Mon, 02 Nov 2026 09:00:00 +0100", "2. Deploy window, from ops@example.com", "3. Lunch, from Ada Lovelace <ada@example.com>"} {
		if !ok || !strings.Contains(list, want) {
			t.Errorf("the list has no %q: %q", want, list)
		}
	}
	checks := map[string][]string{
		"Réunion de lundi": {"marshwren", "Attachment: agenda.txt", "fennelstone", "From: Zoë Martin <zoe@example.com>"},
		"Deploy window":    {"\nFrom now on, deploys need two reviews", "quarrystone"},
		"Lunch":            {"heronry", "thistledown"},
	}
	for subject, wants := range checks {
		got, ok := extracttest.Under(doc, subject)
		for _, want := range wants {
			if !ok || !strings.Contains(got, want) {
				t.Errorf("message %q: no %q in %q", subject, want, got)
			}
		}
	}
	if strings.Contains(doc.Text, ">From") || strings.Contains(doc.Text, "<p>") {
		t.Errorf("an escaped line or HTML markup left: %q", doc.Text)
	}
	if len(doc.Warnings) != 0 {
		t.Errorf("warnings %q", doc.Warnings)
	}
}

// TestSplit: messages start after "From " lines at the start or after a
// blank line (an unescaped "From " inside a paragraph is body text), CRLF
// or not, the last without a final newline; what comes before the first
// is not a message; escaped body lines lose one '>'.
func TestSplit(t *testing.T) {
	in := "\xef\xbb\xbfjunk\n\nFrom a Mon\nSubject: one\n\n>From here\n>>From there\n>Fromage\nbody\nFrom now on, unescaped\n\nFrom b Tue\r\nSubject: two\r\n\r\nbody\r\n\r\nFrom c Wed\nSubject: three\n\nno newline at the end"
	got := mbox.Split([]byte(in))
	want := []string{"Subject: one\n\nFrom here\n>From there\n>Fromage\nbody\nFrom now on, unescaped\n\n", "Subject: two\r\n\r\nbody\r\n\r\n", "Subject: three\n\nno newline at the end"}
	if len(got) != len(want) {
		t.Fatalf("%d messages %q, want %d", len(got), got, len(want))
	}
	for i := range want {
		if string(got[i]) != want[i] {
			t.Errorf("message %d = %q, want %q", i+1, got[i], want[i])
		}
	}
}

// message is a small message with subject and body.
func message(subject, body string) string {
	return fmt.Sprintf("From sender@example.com Mon Nov  2 09:00:00 2026\nFrom: sender@example.com\nSubject: %s\n\n%s\n\n", subject, body)
}

// TestHostileMailboxes: what cannot be read is recorded on the mailbox
// with its reason and every other message is read.
func TestHostileMailboxes(t *testing.T) {
	var many strings.Builder
	for i := range 1500 {
		many.WriteString(message(fmt.Sprintf("m%d", i), "x"))
	}
	doc, err := registry.Extract(context.Background(), []byte(many.String()), "many.mbox", extract.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(doc.Warnings, "\n"); !strings.Contains(w, "500 messages after the first 1000 were neither listed nor read") {
		t.Errorf("1,500 messages: warnings %q", w)
	}
	// A message whose header does not parse beside one that does.
	bad := "From x\n\x00\x01 not a header at all\n\n" + message("Fine", "mboxfinemarker")
	doc, err = registry.Extract(context.Background(), []byte(bad), "bad.mbox", extract.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := extracttest.Under(doc, "Fine"); !ok || !strings.Contains(got, "mboxfinemarker") {
		t.Errorf("the message beside a broken one: %q", doc.Text)
	}
	if w := strings.Join(doc.Warnings, "\n"); !strings.Contains(w, "message 1 not read") {
		t.Errorf("the broken message is not recorded: %q", w)
	}
	for _, data := range []string{"no separator here\n", "\n\n"} {
		if _, err := registry.Extract(context.Background(), []byte(data), "x.mbox", extract.DefaultLimits()); !errors.Is(err, extract.ErrCorrupt) {
			t.Errorf("%q: %v, want ErrCorrupt", data, err)
		}
	}
}

// profile is what every mailbox's document promises.
var profile = extracttest.Profile{Format: mbox.Format, Kinds: []extract.Kind{extract.Paragraph, extract.Heading, extract.Code, extract.Table},
	CleanText: true, CleanTitle: true, TrimmedBlocks: true}

func TestConformance(t *testing.T) {
	var big strings.Builder
	for i := range 400 {
		big.WriteString(message(fmt.Sprintf("Message number %d of a long mailbox", i), "Some words of the body, to find."))
	}
	var deep bytes.Buffer
	deep.WriteString("From x\nFrom: a@example.com\nSubject: deep\nContent-Type: multipart/mixed; boundary=b0\n\n")
	for i := range 100 {
		fmt.Fprintf(&deep, "--b%d\nContent-Type: multipart/mixed; boundary=b%d\n\n", i, i+1)
	}
	extracttest.RunConformance(t, extracttest.Harness{
		Extractor:   mbox.Extractor{Message: registry.Extract},
		Profile:     profile,
		Samples:     []extracttest.Sample{{Name: "team.mbox", Data: team(t)}, {Name: "one.mbox", Data: []byte(message("Hello", "One message."))}},
		Big:         &extracttest.Sample{Name: "big.mbox", Data: []byte(big.String())},
		CutsMembers: true,
		Hostile:     []extracttest.Sample{{Name: "deep.mbox", Data: deep.Bytes()}},
	})
}

// FuzzExtract: no input makes the reader panic or fail with an error
// callers cannot classify, and every document it returns keeps the
// profile's promises. Messages are listed, not read: the mail reader has
// a fuzz test of its own.
func FuzzExtract(f *testing.F) {
	f.Add(team(f))
	f.Add([]byte(message("a", ">From b\n>>From c")))
	f.Add([]byte("From \nFrom \n\n"))
	lim := extract.DefaultLimits()
	lim.MaxTextBytes = 1 << 20
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := mbox.Extractor{}.Extract(context.Background(), data, "f.mbox", lim)
		if err != nil {
			if !extracttest.Classified(err) {
				t.Fatalf("unclassified error: %v", err)
			}
			return
		}
		extracttest.Verify(t, doc, nil, profile)
	})
}
