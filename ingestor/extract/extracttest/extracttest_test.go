package extracttest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/strata-kb/strata/ingestor/chunk"
	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/shared/metadata"
)

// lines is a small extractor for the suite's own tests: each non-blank
// line is a block, "# " and "## " lines headings. broken names the way it
// breaks the contract ("" for none).
type lines struct{ broken string }

var calls atomic.Int64

func (l lines) Extract(ctx context.Context, data []byte, name string, lim extract.Limits) (*extract.Document, error) {
	if ctx.Err() != nil && l.broken != "ignores the context" {
		return nil, fmt.Errorf("%w: %v", extract.ErrTimeout, ctx.Err())
	}
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		if l.broken == "unclassified errors" {
			return nil, errors.New("bad bytes")
		}
		return nil, fmt.Errorf("%w: binary", extract.ErrCorrupt)
	}
	if l.broken == "panics on truncated input" && len(data) > 0 && data[len(data)-1] != '\n' {
		panic("no final newline")
	}
	if lim.MaxTextBytes > 0 && len(data) > lim.MaxTextBytes && l.broken != "ignores MaxTextBytes" {
		return nil, fmt.Errorf("%w: %d bytes", extract.ErrTooLarge, len(data))
	}
	doc := &extract.Document{Format: "lines", Text: string(data)}
	held := int64(len(data))
	off := 0
	for line := range strings.Lines(doc.Text) {
		text := strings.TrimRight(line, " \t\r\n")
		if strings.TrimSpace(text) != "" && !strings.HasPrefix(text, " ") {
			b := extract.Block{Kind: extract.Paragraph, Start: off, End: off + len(text)}
			if strings.HasPrefix(text, "## ") {
				b.Kind, b.Level = extract.Heading, 2
			} else if strings.HasPrefix(text, "# ") {
				b.Kind, b.Level = extract.Heading, 1
			}
			switch {
			case l.broken == "offsets off by one":
				b.Start++
			case l.broken == "heading levels" && b.Kind == extract.Heading:
				b.Level += 6
			}
			doc.Blocks = append(doc.Blocks, b)
			if err := extract.Hold(&held, extract.BlockBytes, lim); err != nil && l.broken != "ignores MaxFileBytes" {
				return nil, err
			}
		}
		off += len(line)
	}
	switch l.broken {
	case "members over the limits":
		// A container that keeps a copy of itself as a member, as if its
		// members took none of its limits.
		doc.Members = []extract.Member{{Path: "copy.txt", Doc: &extract.Document{Format: "lines", Text: doc.Text, Blocks: slices.Clone(doc.Blocks)}}}
	case "changes its input":
		if len(data) > 0 {
			data[0] = ' '
		}
	case "not deterministic":
		doc.Title = fmt.Sprint(calls.Add(1))
	case "bad metadata":
		doc.Metadata = metadata.Metadata{"Author": {Kind: metadata.String, Text: "Ann"}}
	}
	return doc, nil
}

var linesProfile = Profile{Format: "lines", TextIsInput: true, Kinds: []extract.Kind{extract.Paragraph, extract.Heading}, TrimmedBlocks: true}

func linesHarness(broken string) Harness {
	var big strings.Builder
	for big.Len() < 32<<10 {
		big.WriteString("# Chapter\n\nSome text of the chapter.\n## Part\nMore text.\n\n")
	}
	return Harness{
		Extractor: lines{broken},
		Profile:   linesProfile,
		Samples: []Sample{
			{Name: "a.txt", Data: []byte("# Title\n\nFirst line.\nSecond line.\n## Sub\nText under it.\n")},
			{Name: "b.txt", Data: []byte("Ünïcödé 日本語 🎉\n\n# Heading\nend\n")},
		},
		Big:     &Sample{Name: "big.txt", Data: []byte(big.String())},
		Hostile: []Sample{{Name: "nul.txt", Data: []byte("a\x00b"), Want: extract.ErrCorrupt}},
	}
}

// TestRunConformance runs the suite on a correct extractor.
func TestRunConformance(t *testing.T) {
	RunConformance(t, linesHarness(""))
}

// TestBrokenHelper runs the suite on a broken extractor, in the child
// process TestSuiteFailsBrokenExtractors starts.
func TestBrokenHelper(t *testing.T) {
	broken := os.Getenv("EXTRACTTEST_BROKEN")
	if broken == "" {
		t.Skip("run by TestSuiteFailsBrokenExtractors")
	}
	h := linesHarness(broken)
	if known := os.Getenv("EXTRACTTEST_KNOWN"); known != "" {
		h.Known = map[string]string{}
		for _, name := range strings.Split(known, ",") {
			h.Known[name] = "a known gap"
		}
	}
	RunConformance(t, h)
}

// TestSuiteFailsBrokenExtractors: each way of breaking the contract fails
// the subtest that checks it (run in a child process, where the failure
// cannot fail this test).
func TestSuiteFailsBrokenExtractors(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite in child processes")
	}
	for broken, subtest := range map[string]string{
		"offsets off by one":        "samples",
		"heading levels":            "samples",
		"bad metadata":              "samples",
		"changes its input":         "samples",
		"not deterministic":         "deterministic",
		"ignores MaxTextBytes":      "MaxTextBytes",
		"ignores MaxFileBytes":      "MaxFileBytes",
		"members over the limits":   "MaxTextBytes",
		"ignores the context":       "cancelled",
		"panics on truncated input": "hostile",
		"unclassified errors":       "hostile",
	} {
		t.Run(broken, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenHelper$", "-test.v")
			cmd.Env = append(os.Environ(), "EXTRACTTEST_BROKEN="+broken)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed an extractor that %s:\n%s", broken, out)
			}
			want := "--- FAIL: TestBrokenHelper/" + strings.ReplaceAll(subtest, " ", "_") + " "
			if !bytes.Contains(out, []byte(want)) {
				t.Fatalf("no %q in:\n%s", want, out)
			}
			failed := regexp.MustCompile(`--- FAIL: TestBrokenHelper/(\S+)`).FindAllSubmatch(out, -1)
			t.Logf("failed: %s", slices.Collect(func(yield func(string) bool) {
				for _, f := range failed {
					yield(string(f[1]))
				}
			}))
		})
	}
}

// TestKnownGapsAreSkipped: checks listed in Known are skipped, with their
// reason, and the suite passes an extractor whose only gaps they are.
func TestKnownGapsAreSkipped(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestBrokenHelper$", "-test.v")
	cmd.Env = append(os.Environ(), "EXTRACTTEST_BROKEN=ignores the context", "EXTRACTTEST_KNOWN=cancelled,deadline")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	for _, want := range []string{"--- SKIP: TestBrokenHelper/cancelled", "--- SKIP: TestBrokenHelper/deadline", "known gap: a known gap"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
}

// valid is a document that keeps every invariant of a rich profile.
func valid() (*extract.Document, Profile) {
	b := extract.NewBuilder("x")
	b.Add(extract.Heading, 1, 1, "Title")
	b.Add(extract.Paragraph, 0, 1, "Some text, ünïcödé.")
	b.Add(extract.Heading, 2, 2, "Part")
	b.Add(extract.Table, 0, 2, "a | b\n1 | 2")
	b.AddImage(extract.Image{Name: "p.png", MIME: "image/png", Data: pngOf(3, 2), Width: 3, Height: 2, Page: 2}, "Image 1 (PNG, 3x2)")
	b.SetPages(2)
	b.SetTitle("Title")
	b.SetMetadata(metadata.Metadata{
		"title":   {Kind: metadata.String, Text: "Title"},
		"created": {Kind: metadata.Date, Text: "2024-01-31", Date: time.Date(2024, 1, 31, 0, 0, 0, 0, time.UTC)},
	})
	return b.Doc(), Profile{Format: "x", Pages: true, Images: true, CleanText: true, CleanTitle: true, TrimmedBlocks: true,
		MetadataKeys: []string{"title", "created"}, CleanMetadata: true, StepHeadings: true}
}

// pngOf is a PNG of w x h.
func pngOf(w, h int) []byte {
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// TestCheck breaks a valid document one invariant at a time.
func TestCheck(t *testing.T) {
	doc, p := valid()
	if err := Check(doc, nil, p); err != nil {
		t.Fatalf("a valid document: %v", err)
	}
	for _, tc := range []struct {
		name   string
		mutate func(d *extract.Document, p *Profile)
		want   string
	}{
		{"format", func(d *extract.Document, p *Profile) { d.Format = "y" }, "Format"},
		{"invalid UTF-8", func(d *extract.Document, p *Profile) { d.Text = d.Text[:len(d.Text)-1] + "\xff" }, "not valid UTF-8"},
		{"text is not the input", func(d *extract.Document, p *Profile) { p.TextIsInput = true; p.CleanText = false }, "is not the input"},
		{"control character", func(d *extract.Document, p *Profile) { d.Text = strings.Replace(d.Text, "Some", "S\x1bme", 1) }, "control character"},
		{"block past the end", func(d *extract.Document, p *Profile) { d.Blocks[4].End = len(d.Text) + 1 }, "out of range"},
		{"blocks overlap", func(d *extract.Document, p *Profile) { d.Blocks[1].Start = d.Blocks[0].End - 1 }, "out of order"},
		{"empty block", func(d *extract.Document, p *Profile) { d.Blocks[1].End = d.Blocks[1].Start }, "empty"},
		{"cut character", func(d *extract.Document, p *Profile) {
			d.Blocks[1].End = strings.Index(d.Text, "ü") + 1
		}, "cuts a character"},
		{"text in no block", func(d *extract.Document, p *Profile) { d.Blocks[1].Start += 5 }, "is in no block"},
		{"text after the last block", func(d *extract.Document, p *Profile) { d.Blocks = d.Blocks[:4] }, "after the last block"},
		{"blank block", func(d *extract.Document, p *Profile) {
			d.Text = strings.Replace(d.Text, "Some text, ünïcödé.", strings.Repeat(" ", len("Some text, ünïcödé.")-2)+"\u00a0", 1)
			p.TrimmedBlocks = false
		}, "is blank"},
		{"untrimmed block", func(d *extract.Document, p *Profile) { d.Blocks[1].End++ }, "white space around it"},
		{"kind", func(d *extract.Document, p *Profile) { d.Blocks[1].Kind = 9 }, "kind 9"},
		{"kind the format does not make", func(d *extract.Document, p *Profile) { p.Kinds = []extract.Kind{extract.Paragraph} }, "does not make"},
		{"heading level 0", func(d *extract.Document, p *Profile) { d.Blocks[0].Level = 0 }, "level 0"},
		{"heading level 7", func(d *extract.Document, p *Profile) { d.Blocks[2].Level = 7 }, "level 7"},
		{"paragraph with a level", func(d *extract.Document, p *Profile) { d.Blocks[1].Level = 2 }, "want 0"},
		{"headings skip a level", func(d *extract.Document, p *Profile) { d.Blocks[2].Level = 3 }, "one level at a time"},
		{"first heading below level 1", func(d *extract.Document, p *Profile) { d.Blocks[0].Level = 2 }, "one level at a time"},
		{"page 0", func(d *extract.Document, p *Profile) { d.Blocks[0].Page = 0 }, "page 0"},
		{"pages go back", func(d *extract.Document, p *Profile) { d.Blocks[3].Page = 1 }, "previous block on page 2"},
		{"page past the end", func(d *extract.Document, p *Profile) { d.Pages = 1 }, "1 pages"},
		{"pages without pages", func(d *extract.Document, p *Profile) { p.Pages = false }, "without pages"},
		{"figure without image", func(d *extract.Document, p *Profile) { d.Blocks[4].Image = 1 }, "points at image 1 of 1"},
		{"image without figure kind", func(d *extract.Document, p *Profile) { d.Blocks[1].Image = 1 }, "points at image"},
		{"image on another page", func(d *extract.Document, p *Profile) { d.Images[0].Page = 1 }, "its image on page 1"},
		{"image size", func(d *extract.Document, p *Profile) { d.Images[0].Width = 4 }, "labelled 4x2"},
		{"image type", func(d *extract.Document, p *Profile) { d.Images[0].MIME = "image/jpeg" }, "labelled \"image/jpeg\""},
		{"image data", func(d *extract.Document, p *Profile) { d.Images[0].Data = []byte("GIF89a") }, "does not decode"},
		{"images without images", func(d *extract.Document, p *Profile) { p.Images = false }, "without images"},
		{"title", func(d *extract.Document, p *Profile) { d.Title = "a\nb" }, "Title"},
		{"language", func(d *extract.Document, p *Profile) { d.Language = "go" }, "Language"},
		{"warning", func(d *extract.Document, p *Profile) { d.Warnings = []string{"two\nlines"} }, "warning 0"},
		{"metadata key case", func(d *extract.Document, p *Profile) {
			d.Metadata["Title"] = d.Metadata["title"]
			p.MetadataKeys = nil
		}, "not lower case"},
		{"metadata key", func(d *extract.Document, p *Profile) { d.Metadata["author"] = metadata.FromString("Ann") }, "is not one x has"},
		{"metadata date", func(d *extract.Document, p *Profile) {
			d.Metadata["created"] = metadata.Value{Kind: metadata.Date, Text: "2024-02-01", Date: time.Date(2024, 1, 31, 0, 0, 0, 0, time.UTC)}
		}, "does not read back"},
		{"metadata value", func(d *extract.Document, p *Profile) { d.Metadata["title"] = metadata.FromString(" a\x01 b") }, "not clean"},
		{"metadata too long", func(d *extract.Document, p *Profile) {
			d.Metadata["title"] = metadata.Value{Kind: metadata.String, Text: strings.Repeat("a", extract.MaxPropBytes+1)}
		}, "more than extract.MaxPropBytes"},
		{"metadata kind", func(d *extract.Document, p *Profile) { d.Metadata["title"] = metadata.Value{} }, "kind 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, p := valid()
			tc.mutate(doc, &p)
			err := Check(doc, []byte("the input"), p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check = %v; want %q", err, tc.want)
			}
		})
	}
}

func TestCheckLimits(t *testing.T) {
	doc, _ := valid()
	for _, tc := range []struct {
		lim  extract.Limits
		want string
	}{
		{extract.Limits{MaxTextBytes: 10}, "MaxTextBytes 10"},
		{extract.Limits{MaxImageBytes: 5}, "MaxImageBytes 5"},
		{extract.Limits{MaxPages: 1}, "MaxPages 1"},
	} {
		if err := CheckLimits(doc, tc.lim); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v; want %q", tc.lim, err, tc.want)
		}
	}
	doc.Images = append(doc.Images, doc.Images[0])
	if err := CheckLimits(doc, extract.Limits{MaxImages: 1}); err == nil {
		t.Error("two images pass MaxImages 1")
	}
	if err := CheckLimits(doc, extract.DefaultLimits()); err != nil {
		t.Error(err)
	}
}

// container is a valid document with members: a.txt, and b.zip holding
// c.txt.
func container() *extract.Document {
	member := func(format, text string) *extract.Document {
		b := extract.NewBuilder(format)
		b.Add(extract.Heading, 1, 0, "Member")
		b.Add(extract.Paragraph, 0, 0, text)
		return b.Doc()
	}
	doc, _ := valid()
	inner := member("zip", "Contents: c.txt")
	inner.Members = []extract.Member{{Path: "c.txt", Doc: member("text", "c's words")}}
	doc.Members = []extract.Member{{Path: "a.txt", Doc: member("text", "a's words")}, {Path: "docs/b.zip", Doc: inner}}
	return doc
}

// TestCheckMembers breaks a container's members one way at a time: each
// member's path must be safe and unique, and its document keep the
// invariants, its members' too.
func TestCheckMembers(t *testing.T) {
	_, p := valid()
	if err := Check(container(), nil, p); err != nil {
		t.Fatalf("a valid container: %v", err)
	}
	for _, tc := range []struct {
		name   string
		mutate func(d *extract.Document)
		want   string
	}{
		{"empty path", func(d *extract.Document) { d.Members[0].Path = "" }, "is empty"},
		{"dot dot", func(d *extract.Document) { d.Members[0].Path = "../a.txt" }, `".."`},
		{"absolute", func(d *extract.Document) { d.Members[0].Path = "/a.txt" }, "empty"},
		{"member separator", func(d *extract.Document) { d.Members[0].Path = "a//b.txt" }, "empty"},
		{"bidi override", func(d *extract.Document) { d.Members[0].Path = "a\u202etxt.exe" }, "format character"},
		{"control character", func(d *extract.Document) { d.Members[0].Path = "a\x07.txt" }, "control"},
		{"invalid UTF-8", func(d *extract.Document) { d.Members[0].Path = "a\xff.txt" }, "UTF-8"},
		{"same path twice", func(d *extract.Document) { d.Members[1].Path = "a.txt" }, "another member's too"},
		{"no document", func(d *extract.Document) { d.Members[0].Doc = nil }, "has no document"},
		{"member's block", func(d *extract.Document) { d.Members[0].Doc.Blocks[1].End++ }, `member "a.txt": block 1`},
		{"member's member's path", func(d *extract.Document) { d.Members[1].Doc.Members[0].Path = ".." }, `member "docs/b.zip": member 0`},
		{"member's member's text", func(d *extract.Document) { d.Members[1].Doc.Members[0].Doc.Text += "\xff" }, `member "c.txt": Text is not valid UTF-8`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := container()
			tc.mutate(doc)
			if err := Check(doc, nil, p); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check = %v; want %q", err, tc.want)
			}
		})
	}
}

// TestMemberHelpers: members by their joined paths, in order, and the
// warnings of a member's member.
func TestMemberHelpers(t *testing.T) {
	doc := container()
	if got := strings.Join(MemberPaths(doc), " "); got != "a.txt docs/b.zip docs/b.zip//c.txt" {
		t.Errorf("MemberPaths = %q", got)
	}
	if m := Member(doc, "docs/b.zip//c.txt"); m == nil || !strings.Contains(m.Text, "c's words") {
		t.Errorf("Member(docs/b.zip//c.txt) = %v", m)
	}
	if Member(doc, "c.txt") != nil || Member(doc, "docs/b.zip//a.txt") != nil {
		t.Error("a member found where there is none")
	}
	if Warned(doc, "not read", "MaxTextBytes") {
		t.Error("a warning found where there is none")
	}
	Member(doc, "docs/b.zip").Warnings = []string{"member d.txt not read: over MaxTextBytes"}
	if !Warned(doc, "not read", "MaxTextBytes") || Warned(doc, "not read", "MaxFileBytes") {
		t.Error("a member's warning is not found by all its words")
	}
}

// TestCheckLimitsCountsMembers: a container's members count against its
// text and budget, and each keeps the image and page limits.
func TestCheckLimitsCountsMembers(t *testing.T) {
	doc := container()
	text, held := extract.TextWithMembers(doc), extract.HeldWithMembers(doc)
	if text <= len(doc.Text) || held <= extract.Held(doc) {
		t.Fatalf("the members count nothing: %d, %d", text, held)
	}
	for _, tc := range []struct {
		lim  extract.Limits
		want string
	}{
		{extract.Limits{MaxTextBytes: text - 1}, fmt.Sprintf("%d bytes of text (with its 2 members' and theirs), MaxTextBytes %d", text, text-1)},
		{extract.Limits{MaxFileBytes: held - 1}, fmt.Sprintf("holds %d bytes (with its 2 members' and theirs), MaxFileBytes %d", held, held-1)},
		{extract.Limits{MaxPages: 1}, "MaxPages 1"},
	} {
		if err := CheckLimits(doc, tc.lim); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v; want %q", tc.lim, err, tc.want)
		}
	}
	if err := CheckLimits(doc, extract.Limits{MaxTextBytes: text, MaxFileBytes: held}); err != nil {
		t.Errorf("at the limits: %v", err)
	}
	img, _ := valid()
	doc.Members[1].Doc.Members[0].Doc.Images = img.Images
	if err := CheckLimits(doc, extract.Limits{MaxImageBytes: 5}); err == nil || !strings.Contains(err.Error(), "member docs/b.zip//c.txt: image 0") {
		t.Errorf("an image of a member's member over MaxImageBytes: %v", err)
	}
}

// TestDiffComparesMembers: two extractions that differ only in a member
// differ.
func TestDiffComparesMembers(t *testing.T) {
	a, b := container(), container()
	if d := diff(a, b); d != "" {
		t.Fatalf("the same container differs: %s", d)
	}
	b.Members[1].Doc.Members[0].Doc.Title = "other"
	if d := diff(a, b); !strings.Contains(d, "member docs/b.zip: member c.txt") {
		t.Errorf("diff = %q", d)
	}
	b = container()
	b.Members[1].Path = "docs/b (2).zip"
	if d := diff(a, b); !strings.Contains(d, "member 1 is at") {
		t.Errorf("diff = %q", d)
	}
}

// TestCheckSplit breaks the sections of a valid document one way at a time.
func TestCheckSplit(t *testing.T) {
	doc, _ := valid()
	c, err := tokenCounter()
	if err != nil {
		t.Fatal(err)
	}
	o := chunk.Options{TargetTokens: 4}
	if err := CheckSections(doc, o.TargetTokens); err != nil {
		t.Fatalf("a valid document: %v", err)
	}
	for _, tc := range []struct {
		name   string
		mutate func(s []chunk.Section) []chunk.Section
		want   string
	}{
		{"token count", func(s []chunk.Section) []chunk.Section { s[0].Chunks[0].Tokens++; return s }, "the tokenizer counts"},
		{"section tokens", func(s []chunk.Section) []chunk.Section { s[1].Tokens++; return s }, "its chunks"},
		{"content", func(s []chunk.Section) []chunk.Section { s[0].Chunks[0].Content += "x"; return s }, "is not the text"},
		{"heading path", func(s []chunk.Section) []chunk.Section { s[1].HeadingPath = s[1].HeadingPath[1:]; return s }, "open headings"},
		{"level", func(s []chunk.Section) []chunk.Section { s[1].Level = 1; return s }, "open headings"},
		{"title", func(s []chunk.Section) []chunk.Section { s[1].Title = "Other"; return s }, "end of its heading path"},
		{"lost chunk", func(s []chunk.Section) []chunk.Section {
			s[1].Chunks = s[1].Chunks[:len(s[1].Chunks)-1]
			s[1].Tokens = 0
			for _, ch := range s[1].Chunks {
				s[1].Tokens += ch.Tokens
			}
			return s
		}, "in no chunk"},
		{"lost section", func(s []chunk.Section) []chunk.Section { return s[:1] }, "in no section"},
		{"chunk index", func(s []chunk.Section) []chunk.Section { s[1].Chunks[0].Index = 0; return s }, "chunk index"},
		{"oversized chunk", func(s []chunk.Section) []chunk.Section {
			s[0].Chunks[0].Tokens = 100
			return s
		}, "target 4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			secs := tc.mutate(chunk.Split(doc, c, o))
			if err := checkSplit(doc, secs, c, o); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("checkSplit = %v; want %q", err, tc.want)
			}
		})
	}
}
