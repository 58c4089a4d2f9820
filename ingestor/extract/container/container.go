// Package container is what the readers of containers share. A
// container's members (a message's attachments, an archive's files, a
// mailbox's messages) are read by their own formats' readers, each into a
// document of its own: a member of the container's document
// (extract.Document.Members, at <container>//<member path>), which the
// container's own text names under a heading, with a line saying what it
// is and where it is read (AddMember). A member's own members stay in its
// document, its own warnings too.
//
// The members share their container's limits: its text (MaxTextBytes)
// counts theirs, its budget (MaxFileBytes) what they hold, its expansion
// (MaxUncompressed) theirs. Containers nest at most MaxDepth deep, a
// container reads at most MaxMembers members, and one member may take at
// most half of the container's time, so one slow member leaves time for
// the rest. What is not read is said under the member's heading and in
// the container's warnings, with the reason, and the rest is read.
package container

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"
	"unicode"

	"github.com/strata-kb/strata/ingestor/extract"
)

const (
	// MaxDepth bounds containers inside containers (a message attached
	// to a message in a ZIP is 3 deep).
	MaxDepth = 3
	// MaxMembers bounds the members one container reads and lists.
	MaxMembers = 1000
	// minMemberTime is the least a member is given; with less than twice
	// it left, no member is started (OutOfTime).
	minMemberTime = 100 * time.Millisecond
	// maxReason bounds the reason a member was not read (Reason).
	maxReason = 512
)

// Reader reads a member by its own format (the registry's Extract, which
// detects it).
type Reader func(ctx context.Context, data []byte, name string, lim extract.Limits) (*extract.Document, error)

// depthKey holds how many containers enclose the one being read: a member
// that is a container is read through Reader, by a new extraction.
type depthKey struct{}

// Depth is how many containers enclose the one ctx reads.
func Depth(ctx context.Context) int {
	n, _ := ctx.Value(depthKey{}).(int)
	return n
}

// Inside is ctx for reading a member of the container ctx reads.
func Inside(ctx context.Context) context.Context {
	return context.WithValue(ctx, depthKey{}, Depth(ctx)+1)
}

// TooDeep reports whether a member of the container ctx reads may not be
// read as a container itself.
func TooDeep(ctx context.Context) bool { return Depth(ctx) >= MaxDepth }

// Nested is ErrTooLarge for a container ctx reads as a member nested
// deeper than MaxDepth (the reason its enclosing container records).
func Nested(ctx context.Context) error {
	if TooDeep(ctx) {
		return fmt.Errorf("%w: containers nest deeper than %d", extract.ErrTooLarge, MaxDepth)
	}
	return nil
}

// Left are the limits a member is read within: the text, the budget and
// the expansion the container has left (its builder b holds what it read
// so far, its members' text and what they hold included; expanded is what
// its members expanded to), and at most half of the container's time left
// (its ctx's deadline), OCR's time included when OCR is on.
func Left(ctx context.Context, lim extract.Limits, b *extract.Builder, expanded int64) extract.Limits {
	if dl, ok := ctx.Deadline(); ok {
		half := max(time.Until(dl)/2, minMemberTime)
		lim.Timeout = half
		if lim.OCR != nil && lim.OCRTimeout > 0 { // OCR's time comes beside the reading's: the two share the half
			lim.Timeout, lim.OCRTimeout = half/2, min(lim.OCRTimeout, half-half/2)
		}
	}
	if lim.MaxTextBytes > 0 {
		lim.MaxTextBytes = max(lim.MaxTextBytes-text(b), 1)
	}
	if lim.MaxFileBytes > 0 {
		lim.MaxFileBytes = max(lim.MaxFileBytes-b.Held(), 1)
	}
	if lim.MaxUncompressed > 0 {
		lim.MaxUncompressed = max(lim.MaxUncompressed-expanded, 1)
	}
	return lim
}

// text is the text of the container b builds and of its members so far.
func text(b *extract.Builder) int { return b.Len() + b.MembersLen() }

// TooLong is ErrTooLarge once the text of the container b builds, its
// members' included, is over Limits.MaxTextBytes.
func TooLong(b *extract.Builder, lim extract.Limits) error {
	if lim.MaxTextBytes > 0 && text(b) > lim.MaxTextBytes {
		return fmt.Errorf("%w: text exceeds %d bytes (MaxTextBytes)", extract.ErrTooLarge, lim.MaxTextBytes)
	}
	return nil
}

// OutOfTime reports whether the container ctx reads has no time left for
// another member: it was cancelled, or less than twice a member's least
// time is left (so a member's time always ends before its container's).
func OutOfTime(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	dl, ok := ctx.Deadline()
	return ok && time.Until(dl) < 2*minMemberTime
}

// fits reports whether n bytes of text in blocks blocks (each after a
// separator), and member with its own members when not nil, fit what b
// has left of lim's text (MaxTextBytes, its members' text included) and
// budget (MaxFileBytes).
func fits(b *extract.Builder, lim extract.Limits, n, blocks int, member *extract.Document) bool {
	t := n + 2*blocks
	held := int64(t) + int64(blocks)*extract.BlockBytes
	if member != nil {
		t += extract.TextWithMembers(member)
		held += extract.HeldWithMembers(member)
	}
	if lim.MaxTextBytes > 0 && text(b)+t > lim.MaxTextBytes {
		return false
	}
	return lim.MaxFileBytes <= 0 || b.Held()+held <= lim.MaxFileBytes
}

// Room reports whether a member named by heading can still be tried: its
// heading fits what b has left. A container stops at the first member
// without room (Cut).
func Room(b *extract.Builder, lim extract.Limits, heading string) bool {
	return fits(b, lim, len(heading), 1, nil)
}

// NotRead adds a member's heading at level and the line saying why it was
// not read, when both fit what b has left; the caller's warning says it
// either way.
func NotRead(b *extract.Builder, lim extract.Limits, level int, heading, line string) {
	if fits(b, lim, len(heading)+len(line), 2, nil) {
		b.Add(extract.Heading, level, 0, heading)
		b.Add(extract.Paragraph, 0, 0, line)
	}
}

// Cut is the warning of a container that stops before the member named
// first: its text or its budget is spent.
func Cut(kind, first string) string {
	return fmt.Sprintf("%s from %s on were not read: the container's text reached its limit (MaxTextBytes or MaxFileBytes)", kind, first)
}

// Reason is why a member was not read (or anything else a warning
// quotes, an error's text), as one line of clean text: control and format
// characters made spaces, runs of white space one space, cut to maxReason
// bytes.
func Reason(s string) string {
	s = strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(extract.Truncate(s, 4*maxReason), "\uFFFD"))), " ")
	if len(s) <= maxReason {
		return s
	}
	return extract.Truncate(s, maxReason) + "..."
}

// Read reads a member with read within lim (Left), one container deeper.
// A member that fails is the member's own problem: why is its reason, to
// record on the container, and the rest is read. err is the container's
// own: it was cancelled (ErrTimeout). A member's time ends before its
// container's (Left, OutOfTime); should the container's deadline pass all
// the same, the member is not read for that reason, and the container
// stops there with what it read (OutOfTime).
func Read(ctx context.Context, read Reader, data []byte, name string, lim extract.Limits) (doc *extract.Document, why string, err error) {
	mctx := Inside(ctx)
	if lim.Timeout > 0 {
		// The member's own time limit, whatever its reader does with lim.
		var cancel context.CancelFunc
		timeout := lim.Timeout
		if lim.OCR != nil {
			timeout += lim.OCRTimeout
		}
		mctx, cancel = context.WithTimeout(mctx, timeout)
		defer cancel()
	}
	doc, rerr := read(mctx, data, name, lim)
	switch {
	case rerr == nil:
		return doc, "", nil
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return nil, "the container's time ran out", nil
	case ctx.Err() != nil:
		return nil, "", fmt.Errorf("%w: %v", extract.ErrTimeout, ctx.Err())
	}
	why = Reason(rerr.Error())
	if errors.Is(rerr, extract.ErrTooLarge) {
		why += fmt.Sprintf(" (the container had %d bytes of text (MaxTextBytes), %d of budget (MaxFileBytes) and %d of expansion (MaxUncompressed) left)",
			lim.MaxTextBytes, lim.MaxFileBytes, lim.MaxUncompressed)
	}
	return nil, why, nil
}

// AddMember adds doc, a member read by its own reader, to the container b
// builds, at path inside it (made unique among its members:
// extract.Builder.AddMember), under a heading at level that names it and
// a line that says what it is (about: its media type, its size) and where
// it is read, when the heading, the line and what doc and its members
// hold all fit what b has left of lim's text and budget; with heading ""
// the member alone (a mailbox's list names its messages). It reports
// whether it did: a member that does not fit adds nothing, and the caller
// records it not read (NotRead).
func AddMember(b *extract.Builder, lim extract.Limits, level int, heading, about, path string, doc *extract.Document) bool {
	var line string
	n, blocks := 0, 0
	if heading != "" {
		line = about + ", read as a document of its own: " + b.UniquePath(path)
		n, blocks = len(heading)+len(line), 2
	}
	if !fits(b, lim, n, blocks, doc) {
		return false
	}
	if _, ok := b.AddMember(path, doc); !ok {
		return false
	}
	if heading != "" {
		b.Add(extract.Heading, level, 0, heading)
		b.Add(extract.Paragraph, 0, 0, line)
	}
	return true
}

// blockText is a block's text as a container holds it: cleaned (Clean),
// and trimmed but for code.
func blockText(doc *extract.Document, bl extract.Block) string {
	text := Clean(doc.Text[bl.Start:bl.End])
	if bl.Kind != extract.Code {
		text = strings.TrimSpace(text)
	}
	return text
}

// Include copies doc, a part of the container's own text read by another
// reader (a message's HTML body), into b under a heading at level: its
// headings that many levels further down (at most 6), its pictures'
// descriptions as paragraphs, its text cleaned (Clean); and its warnings,
// each after what it is (part), since they are the container's own.
func Include(b *extract.Builder, doc *extract.Document, level int, part string) {
	for _, w := range doc.Warnings {
		b.Warn(part + ": " + w)
	}
	for _, bl := range doc.Blocks {
		kind, text := bl.Kind, blockText(doc, bl)
		switch kind {
		case extract.Heading:
			b.Add(extract.Heading, min(level+bl.Level, 6), 0, text)
		case extract.Figure:
			b.Add(extract.Paragraph, 0, 0, text)
		default:
			b.Add(kind, 0, 0, text)
		}
	}
}

// Clean is text without carriage returns and with other control
// characters but tab and line feed made spaces: a container's members are
// one text.
func Clean(s string) string {
	return strings.Map(func(c rune) rune {
		switch {
		case c == '\r':
			return -1
		case c == '\n' || c == '\t':
			return c
		case unicode.IsControl(c):
			return ' '
		}
		return c
	}, s)
}

// MemberPath is a member's name made safe to show and to name a path by:
// '/'-separated, without empty, "." and ".." elements (so "../../etc/passwd"
// is "etc/passwd" and "/etc/passwd" too: a member never names a place
// outside its container), and without control or format characters (bidi
// overrides) in any element; "" when nothing is left.
func MemberPath(name string) string {
	name = strings.ReplaceAll(name, `\`, "/")
	var parts []string
	for _, p := range strings.Split(name, "/") {
		p = strings.TrimSpace(strings.Map(func(r rune) rune {
			if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
				return -1
			}
			return r
		}, p))
		if p == "" || p == "." || p == ".." {
			continue
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "/")
}

// MemberName is the last element of a member's safe path (MemberPath).
func MemberName(name string) string {
	p := MemberPath(name)
	if p == "" {
		return ""
	}
	return path.Base(p)
}
