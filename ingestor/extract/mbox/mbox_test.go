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
	"github.com/strata-kb/strata/ingestor/extract/mail"
	"github.com/strata-kb/strata/ingestor/extract/mbox"
	"github.com/strata-kb/strata/ingestor/extract/pdf"
	"github.com/strata-kb/strata/ingestor/extract/plaintext"
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
// sender, date), and each message read by the mail reader into a member
// of the mailbox at message-N.eml: its subject, its body (a line the
// mailbox escaped given back as written, an HTML body read as HTML), its
// metadata, and its attachment a member of the message's in turn. No
// message's text is in the mailbox's.
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
	paths := extracttest.MemberPaths(doc)
	if want := "message-1.eml message-1.eml//agenda.txt message-2.eml message-3.eml"; strings.Join(paths, " ") != want {
		t.Fatalf("members %q, want %s", paths, want)
	}
	checks := map[string]struct {
		subject string
		words   []string
	}{
		"message-1.eml": {"Réunion de lundi", []string{"marshwren", "Attachment: agenda.txt", "read as a document of its own: agenda.txt", "From: Zoë Martin <zoe@example.com>"}},
		"message-2.eml": {"Deploy window", []string{"\nFrom now on, deploys need two reviews", "quarrystone"}},
		"message-3.eml": {"Lunch", []string{"heronry", "thistledown"}},
	}
	for path, c := range checks {
		m := extracttest.Member(doc, path)
		if m.Format != "email" || m.Title != c.subject || m.Metadata["subject"].Text != c.subject {
			t.Errorf("%s: format %q, title %q, metadata %v; want the message %q", path, m.Format, m.Title, m.Metadata, c.subject)
		}
		for _, want := range c.words {
			if !strings.Contains(m.Text, want) {
				t.Errorf("%s: no %q in %q", path, want, m.Text)
			}
		}
		if strings.Contains(doc.Text, c.words[0]) {
			t.Errorf("the text of %s is in the mailbox's: %q", path, doc.Text)
		}
	}
	if agenda := extracttest.Member(doc, "message-1.eml//agenda.txt"); !strings.Contains(agenda.Text, "fennelstone") {
		t.Errorf("the attachment of message 1: %q", agenda.Text)
	}
	if m := extracttest.Member(doc, "message-1.eml"); strings.Contains(m.Text, "fennelstone") {
		t.Error("the attachment's text is in its message's")
	}
	for _, path := range paths {
		if m := extracttest.Member(doc, path); strings.Contains(m.Text, ">From") || strings.Contains(m.Text, "<p>") {
			t.Errorf("%s: an escaped line or HTML markup left: %q", path, m.Text)
		}
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
	extracttest.Verify(t, doc, nil, profile)
	if w := strings.Join(doc.Warnings, "\n"); !strings.Contains(w, "500 messages after the first 1000 were neither listed nor read") {
		t.Errorf("1,500 messages: warnings %q", w)
	}
	if len(doc.Members) != 1000 || doc.Members[999].Path != "message-1000.eml" || doc.Members[999].Doc.Title != "m999" {
		t.Errorf("1,500 messages: %d members read, want the first 1000", len(doc.Members))
	}
	// A message whose header does not parse beside one that does.
	bad := "From x\n\x00\x01 not a header at all\n\n" + message("Fine", "mboxfinemarker")
	doc, err = registry.Extract(context.Background(), []byte(bad), "bad.mbox", extract.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	extracttest.Verify(t, doc, nil, profile)
	if paths := extracttest.MemberPaths(doc); len(paths) != 1 || paths[0] != "message-2.eml" || !strings.Contains(extracttest.Member(doc, "message-2.eml").Text, "mboxfinemarker") {
		t.Errorf("the message beside a broken one: members %q", paths)
	}
	if got, ok := extracttest.Under(doc, "Message 1"); !ok || !strings.Contains(got, "not read: corrupt") {
		t.Errorf("the broken message is not said in the text: %q", doc.Text)
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

// TestMessagesShareTheMailboxsLimits: messages read into members of their
// own still share the mailbox's text and budget: under a limit that holds
// some of them, those are read, the rest recorded on the mailbox with the
// limit's name, and the mailbox with its members (and theirs) stays
// within the limit.
func TestMessagesShareTheMailboxsLimits(t *testing.T) {
	var box strings.Builder
	for i := range 30 {
		box.WriteString(message(fmt.Sprintf("Message %d", i), strings.Repeat(fmt.Sprintf("Words of message %d. ", i), 40)))
	}
	data := []byte(box.String())
	full, err := registry.Extract(context.Background(), data, "box.mbox", extract.DefaultLimits())
	if err != nil || len(full.Members) != 30 {
		t.Fatalf("without a tight limit: %v, %s", err, describe(full))
	}
	text, held := extract.TextWithMembers(full), extract.HeldWithMembers(full)
	for _, tc := range []struct {
		limit string
		lim   func(*extract.Limits)
	}{
		{"MaxTextBytes", func(l *extract.Limits) { l.MaxTextBytes = text / 2 }},
		{"MaxFileBytes", func(l *extract.Limits) { l.MaxFileBytes = held / 2 }},
	} {
		t.Run(tc.limit, func(t *testing.T) {
			lim := extract.DefaultLimits()
			tc.lim(&lim)
			doc, err := registry.Extract(context.Background(), data, "box.mbox", lim)
			if err != nil {
				t.Fatal(err)
			}
			extracttest.Verify(t, doc, nil, profile)
			if n := extract.TextWithMembers(doc); lim.MaxTextBytes > 0 && n > lim.MaxTextBytes {
				t.Errorf("%d bytes of text with the members', over the %d limit", n, lim.MaxTextBytes)
			}
			if n := extract.HeldWithMembers(doc); lim.MaxFileBytes > 0 && n > lim.MaxFileBytes {
				t.Errorf("holds %d bytes with the members, over the %d budget", n, lim.MaxFileBytes)
			}
			if len(doc.Members) == 0 || len(doc.Members) >= 30 {
				t.Errorf("%d members read, want some, not all", len(doc.Members))
			}
			if w := strings.Join(doc.Warnings, "\n"); !strings.Contains(w, "not read") || !strings.Contains(w, tc.limit) {
				t.Errorf("warnings %q, want the messages not read with %s", w, tc.limit)
			}
		})
	}
}

func describe(doc *extract.Document) string {
	if doc == nil {
		return "no document"
	}
	return fmt.Sprintf("%d members", len(doc.Members))
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
// profile's promises, its members (messages, and their attachments)
// theirs, within the limits. Messages are read by the mail reader, their
// attachments as plain text (their own readers have fuzz tests of their
// own).
func FuzzExtract(f *testing.F) {
	f.Add(team(f))
	f.Add([]byte(message("a", ">From b\n>>From c")))
	f.Add([]byte("From \nFrom \n\n"))
	lim := extract.DefaultLimits()
	lim.MaxTextBytes = 1 << 20
	reader := mbox.Extractor{Message: mail.Extractor{Attachment: plaintext.Extractor{}.Extract}.Extract}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := reader.Extract(context.Background(), data, "f.mbox", lim)
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
