package container

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/strata-kb/strata/ingestor/extract"
)

// TestMemberPath: a member's path never leads outside its container and
// shows no control or format characters.
func TestMemberPath(t *testing.T) {
	for in, want := range map[string]string{
		"docs/report.docx":     "docs/report.docx",
		"../../etc/passwd":     "etc/passwd",
		"/etc/shadow":          "etc/shadow",
		`C:\Users\ana\a.txt`:   "C:/Users/ana/a.txt",
		"a/./b/../c.txt":       "a/b/c.txt",
		"invoice\u202egpj.exe": "invoicegpj.exe",
		"bell\x07.txt":         "bell.txt",
		"../..":                "",
		" / ":                  "",
	} {
		if got := MemberPath(in); got != want {
			t.Errorf("MemberPath(%q) = %q, want %q", in, got, want)
		}
	}
	if got := MemberName("../x/y.txt"); got != "y.txt" {
		t.Errorf("MemberName = %q", got)
	}
}

// TestLeft: a member is read within what the container has left: half of
// its time at most, the text and the expansion it has not used.
func TestLeft(t *testing.T) {
	lim := extract.DefaultLimits()
	lim.OCR = noOCR{}
	b := extract.NewBuilder("zip")
	b.Add(extract.Paragraph, 0, 0, "0123456789")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got := Left(ctx, lim, b, 1000)
	if sum := got.Timeout + got.OCRTimeout; sum > 5*time.Second+time.Millisecond || sum < 4*time.Second || got.OCRTimeout == 0 {
		t.Errorf("timeout %v and OCR %v, want about half of the 10 s left together", got.Timeout, got.OCRTimeout)
	}
	if got.MaxTextBytes != lim.MaxTextBytes-10 || got.MaxUncompressed != lim.MaxUncompressed-1000 {
		t.Errorf("text %d, expansion %d", got.MaxTextBytes, got.MaxUncompressed)
	}
	// Nothing left is a budget of one byte, never "no limit" (zero).
	lim.MaxTextBytes, lim.MaxUncompressed = 5, 500
	if got := Left(context.Background(), lim, b, 1000); got.MaxTextBytes != 1 || got.MaxUncompressed != 1 {
		t.Errorf("exhausted: text %d, expansion %d, want 1 and 1", got.MaxTextBytes, got.MaxUncompressed)
	}
}

// memberDoc is a member's document of text.
func memberDoc(text string) *extract.Document {
	b := extract.NewBuilder("text")
	b.Add(extract.Paragraph, 0, 0, text)
	return b.Doc()
}

// box is a container's builder within lim, with its title.
func box(lim extract.Limits) *extract.Builder {
	b := extract.NewBuilder("zip").Within(lim)
	b.Add(extract.Heading, 1, 0, "box.zip")
	return b
}

// TestAddMember: a member is a document of its own at its path, made
// unique; the container's text has its heading and the line that says
// where it is, not its text.
func TestAddMember(t *testing.T) {
	lim := extract.DefaultLimits()
	b := box(lim)
	for _, word := range []string{"firstmarker", "secondmarker"} {
		if !AddMember(b, lim, 2, "Member: a.txt", "text, 11 bytes", "a.txt", memberDoc(word)) {
			t.Fatal("a member that fits was not added")
		}
	}
	before := b.Len()
	if !AddMember(b, lim, 2, "", "", "message-3.eml", memberDoc("thirdmarker")) || b.Len() != before {
		t.Errorf("a member without a heading: %d bytes of text added", b.Len()-before)
	}
	if b.MembersLen() != len("firstmarker")+len("secondmarker")+len("thirdmarker") {
		t.Errorf("MembersLen %d", b.MembersLen())
	}
	doc := b.Doc()
	want := "box.zip\n\nMember: a.txt\n\ntext, 11 bytes, read as a document of its own: a.txt\n\nMember: a.txt\n\ntext, 11 bytes, read as a document of its own: a (2).txt"
	if doc.Text != want {
		t.Errorf("text %q, want %q", doc.Text, want)
	}
	var paths []string
	for _, m := range doc.Members {
		paths = append(paths, m.Path+"="+m.Doc.Text)
	}
	if strings.Join(paths, " ") != "a.txt=firstmarker a (2).txt=secondmarker message-3.eml=thirdmarker" {
		t.Errorf("members %q", paths)
	}
	if len(doc.Blocks) != 5 || doc.Blocks[1].Kind != extract.Heading || doc.Blocks[1].Level != 2 || doc.Blocks[2].Kind != extract.Paragraph {
		t.Errorf("blocks %+v", doc.Blocks)
	}
}

// TestAddMemberWithinLimits: a member is added when its heading, its line
// and its text (its members' too) fit what the container has left of
// MaxTextBytes, and what it holds what it has left of MaxFileBytes, to
// the byte; one byte less adds nothing at all.
func TestAddMemberWithinLimits(t *testing.T) {
	inner := memberDoc("the inner member's words")
	m := memberDoc("the member's own words")
	m.Members = []extract.Member{{Path: "deep.txt", Doc: inner}}
	heading, about := "Member: m.zip", "zip, 100 bytes"
	line := about + ", read as a document of its own: m.zip"
	need := len(heading) + len(line) + 4 + extract.TextWithMembers(m)
	held := int64(len(heading)+len(line)+4) + 2*extract.BlockBytes + extract.HeldWithMembers(m)
	for _, tc := range []struct {
		name string
		set  func(l *extract.Limits, n int64)
		need int64
	}{
		{"MaxTextBytes", func(l *extract.Limits, n int64) { l.MaxTextBytes = int(n) }, int64(need)},
		{"MaxFileBytes", func(l *extract.Limits, n int64) { l.MaxFileBytes = n }, held},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lim := extract.DefaultLimits()
			base := int64(box(lim).Len())
			if tc.name == "MaxFileBytes" {
				base = box(lim).Held()
			}
			tc.set(&lim, base+tc.need-1)
			b := box(lim)
			if AddMember(b, lim, 2, heading, about, "m.zip", m) {
				t.Fatal("a member one byte over what is left was added")
			}
			if b.MembersLen() != 0 || b.Held() != base && tc.name == "MaxFileBytes" || len(b.Doc().Members) != 0 || b.Err() != nil {
				t.Errorf("a member that did not fit left something: %d bytes of members' text, %d held", b.MembersLen(), b.Held())
			}
			tc.set(&lim, base+tc.need)
			b = box(lim)
			if !AddMember(b, lim, 2, heading, about, "m.zip", m) {
				t.Fatal("a member that fits to the byte was not added")
			}
			if b.Err() != nil || TooLong(b, lim) != nil || text(b) != int(base)+need && tc.name == "MaxTextBytes" || extract.HeldWithMembers(b.Doc()) != b.Held() {
				t.Errorf("text %d, held %d (the document holds %d)", text(b), b.Held(), extract.HeldWithMembers(b.Doc()))
			}
		})
	}
}

// TestMembersCountAgainstTheContainer: what is left for a member, whether
// the container is over its text, and whether a heading still fits all
// count the members' text and what they hold.
func TestMembersCountAgainstTheContainer(t *testing.T) {
	lim := extract.DefaultLimits()
	lim.MaxTextBytes = 1000
	b := box(lim)
	if !AddMember(b, lim, 2, "", "", "a.txt", memberDoc(strings.Repeat("a", 900))) {
		t.Fatal("not added")
	}
	left := Left(context.Background(), lim, b, 0)
	if left.MaxTextBytes != 1000-b.Len()-900 || left.MaxFileBytes != lim.MaxFileBytes-b.Held() || b.Held() < 900 {
		t.Errorf("left: text %d, budget %d (held %d)", left.MaxTextBytes, left.MaxFileBytes, b.Held())
	}
	if Room(b, lim, strings.Repeat("h", 100)) {
		t.Error("a heading past what the members left has room")
	}
	lim.MaxTextBytes = 900
	if err := TooLong(b, lim); err == nil {
		t.Error("a container whose members' text is over the limit is not too long")
	}
}

// TestReason: a reason is one clean line, bounded, whatever the error
// quoted in it holds.
func TestReason(t *testing.T) {
	for in, want := range map[string]string{
		"malformed header line: \x00":     "malformed header line:",
		"two\nlines\r\n and\u202e a bidi": "two lines and a bidi",
		"bad \xff byte":                   "bad \uFFFD byte",
	} {
		if got := Reason(in); got != want {
			t.Errorf("Reason(%q) = %q, want %q", in, got, want)
		}
	}
	long := Reason(strings.Repeat("é", 2000))
	if len(long) > maxReason+3 || !strings.HasSuffix(long, "...") || !utf8.ValidString(long) {
		t.Errorf("a long reason: %d bytes %q", len(long), long[len(long)-10:])
	}
}

// TestNested: containers nest MaxDepth deep, no deeper.
func TestNested(t *testing.T) {
	ctx := context.Background()
	for range MaxDepth {
		if err := Nested(ctx); err != nil {
			t.Fatalf("depth %d: %v", Depth(ctx), err)
		}
		ctx = Inside(ctx)
	}
	if err := Nested(ctx); err == nil {
		t.Errorf("depth %d read", Depth(ctx))
	}
}

// noOCR stands for an OCR engine: Left shares a member's time with OCR's
// only when OCR is on.
type noOCR struct{}

func (noOCR) Recognize(context.Context, []byte) ([]extract.OCRBlock, error) { return nil, nil }
