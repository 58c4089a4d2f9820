package container

import (
	"context"
	"testing"
	"time"

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
