package markdown

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/extracttest"
)

// blk is an expected block: its kind, level and exact text.
type blk struct {
	kind  extract.Kind
	level int
	text  string
}

func heading(level int, text string) blk { return blk{extract.Heading, level, text} }
func para(text string) blk               { return blk{extract.Paragraph, 0, text} }
func code(text string) blk               { return blk{extract.Code, 0, text} }
func table(text string) blk              { return blk{extract.Table, 0, text} }

var cases = []struct {
	name   string
	in     string
	want   []blk
	title  string
	meta   map[string]string // expected keys; nil for no front matter
	warned bool
}{
	{
		name:  "atx",
		in:    "Intro.\n\n# Guide #\n\n  ## Install\nRun it.\n####### seven is text\n#\n",
		want:  []blk{para("Intro."), heading(1, "# Guide #"), heading(2, "  ## Install"), para("Run it.\n####### seven is text")},
		title: "Guide",
	},
	{
		name:  "setext",
		in:    "Title\n=====\n\nBody text.\n\nTwo line\nsub title\n---\n\nMore.\n",
		want:  []blk{heading(1, "Title"), para("Body text."), heading(2, "Two line\nsub title"), para("More.")},
		title: "Title",
	},
	{
		name:  "yaml front matter",
		in:    "---\ntitle: From  YAML\ntags: [a, b]\nauthor:\n  name: Ann\n---\n# Heading\n\nBody.\n",
		want:  []blk{code("---\ntitle: From  YAML\ntags: [a, b]\nauthor:\n  name: Ann\n---"), heading(1, "# Heading"), para("Body.")},
		title: "From YAML",
		meta:  map[string]string{"title": "From  YAML", "tags": "a, b", "author.name": "Ann"},
	},
	{
		name:  "toml front matter",
		in:    "+++\r\ntitle = \"From TOML\"\r\ndraft = true\r\n+++\r\n\r\nSetext\r\n===\r\n",
		want:  []blk{code("+++\r\ntitle = \"From TOML\"\r\ndraft = true\r\n+++"), heading(1, "Setext")},
		title: "From TOML",
		meta:  map[string]string{"title": "From TOML", "draft": "true"},
	},
	{
		name:  "front matter without title",
		in:    "---\nlang: en\n---\n\n# The Heading\n",
		want:  []blk{code("---\nlang: en\n---"), heading(1, "# The Heading")},
		title: "The Heading",
		meta:  map[string]string{"lang": "en"},
	},
	{
		name:   "rules around text are not front matter",
		in:     "---\nJust text.\n\n---\n\nRest.\n",
		want:   []blk{para("Just text."), para("Rest.")},
		warned: true,
	},
	{
		name: "unclosed front matter is a rule",
		in:   "---\ntitle: x\n",
		want: []blk{para("title: x")},
	},
	{
		name: "gfm table not split",
		in:   "Before:\n| a | b |\n|---|:-:|\n| 1 | 2 |\n| # 3 | 4 |\n\nAfter.\n",
		want: []blk{para("Before:"), table("| a | b |\n|---|:-:|\n| 1 | 2 |\n| # 3 | 4 |"), para("After.")},
	},
	{
		name: "fenced code",
		in:   "```sh\n# not a heading\n\necho hi\n```\n~~~~\n~~~\n# still code\n~~~~~\n```\nunclosed\n\n",
		want: []blk{code("```sh\n# not a heading\n\necho hi\n```"), code("~~~~\n~~~\n# still code\n~~~~~"), code("```\nunclosed")},
	},
	{
		name: "indented code",
		in:   "Text.\n\n    # not a heading\n\n    more\n\nAfter.\n",
		want: []blk{para("Text."), code("    # not a heading\n\n    more"), para("After.")},
	},
	{
		name: "html block",
		in:   "<table>\n  <tr><td>\n# cell</td></tr>\n</table>\n\n<!--\n\n# hidden\n-->\nAfter.\n",
		want: []blk{code("<table>\n  <tr><td>\n# cell</td></tr>\n</table>"), code("<!--\n\n# hidden\n-->"), para("After.")},
	},
	{
		name: "containers",
		in:   "- one\n  - two\n\n  ## in a list\n\n> # quoted\n> ```\n> code\n> ```\n\n[ref]: https://example.com\n\n***\nEnd.",
		want: []blk{para("- one"), para("  - two"), para("  ## in a list"), para("> # quoted"), code("> ```\n> code\n> ```"), para("[ref]: https://example.com"), para("End.")},
	},
	{
		name: "empty",
		in:   "\n \n",
	},
}

func TestBlocks(t *testing.T) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc, err := Extractor{}.Extract(context.Background(), []byte(c.in), "x.md", extract.DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			extracttest.Verify(t, doc, []byte(c.in), profile)
			var got []blk
			for _, b := range doc.Blocks {
				got = append(got, blk{b.Kind, b.Level, c.in[b.Start:b.End]})
			}
			if len(got) != len(c.want) {
				t.Fatalf("blocks\n got %+v\nwant %+v", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Errorf("block %d: got %v %d %q, want %v %d %q", i, got[i].kind, got[i].level, got[i].text, c.want[i].kind, c.want[i].level, c.want[i].text)
				}
			}
			if doc.Title != c.title {
				t.Errorf("title %q, want %q", doc.Title, c.title)
			}
			if (doc.Metadata == nil) != (c.meta == nil) || len(doc.Metadata) != len(c.meta) {
				t.Errorf("metadata %v, want %q", doc.Metadata, c.meta)
			}
			for k, v := range c.meta {
				if doc.Metadata[k].String() != v {
					t.Errorf("metadata %s = %q, want %q", k, doc.Metadata[k].String(), v)
				}
			}
			if warned := len(doc.Warnings) > 0; warned != c.warned || (warned && strings.Contains(doc.Warnings[0], "\n")) {
				t.Errorf("warnings %q", doc.Warnings)
			}
			if got := Blocks(c.in); len(got) != len(doc.Blocks) {
				t.Errorf("Blocks gives %d blocks, Extract %d", len(got), len(doc.Blocks))
			}
		})
	}
}

func TestHeadingTitle(t *testing.T) {
	for in, want := range map[string]string{"# Guide #": "Guide", "  ## Use ##  ": "Use", "Two line\nsub  title": "Two line sub title", "#": ""} {
		if got := HeadingTitle(in); got != want {
			t.Errorf("HeadingTitle(%q) = %q, want %q", in, got, want)
		}
	}
}

// profile is what every Markdown document promises: the text is the file,
// and what lies between blocks is only markup (blank lines, rules,
// underlines, quote and list markers), so nothing readable is left out of
// the chunks.
var profile = extracttest.Profile{
	Format:        "markdown",
	TextIsInput:   true,
	Markup:        "-=*_>+#.)0123456789",
	Kinds:         []extract.Kind{extract.Paragraph, extract.Heading, extract.Code, extract.Table},
	TrimmedBlocks: true,
	Space:         " \t\r\n",
}

// checkBlocks holds blocks of text to the invariants every document keeps.
func checkBlocks(t *testing.T, text string, blocks []extract.Block) {
	t.Helper()
	extracttest.Verify(t, &extract.Document{Format: "markdown", Text: text, Blocks: blocks}, []byte(text), profile)
}

func FuzzBlocks(f *testing.F) {
	for _, c := range cases {
		f.Add(c.in)
	}
	for _, s := range []string{"> ```\n> a\n```\n", "- ```\n  a\n-\n", "\t```\n\tx\n\t```", "a\n|-|\n\x00|", "---\n---\n---", "+++\n+++", "<!--\n> -->", strings.Repeat("- ", 20) + "```\n" + strings.Repeat("  ", 20) + "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		text = strings.ToValidUTF8(text, "\uFFFD")
		blocks := Blocks(text)
		checkBlocks(t, text, blocks)
	})
}

// TestConcurrentUse runs the shared parsers from several goroutines, as the
// ingestor's workers do; run with -race.
func TestConcurrentUse(t *testing.T) {
	want := len(Blocks(cases[len(cases)-1].in))
	done := make(chan []extract.Block)
	for range 4 {
		go func() {
			var last []extract.Block
			for _, c := range cases {
				last = Blocks(c.in)
			}
			done <- last
		}()
	}
	for range 4 {
		if got := <-done; len(got) != want {
			t.Errorf("last case gave %d blocks, want %d", len(got), want)
		}
	}
}

func TestExtractCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (Extractor{}).Extract(ctx, []byte("# a\n"), "x.md", extract.DefaultLimits()); !errors.Is(err, extract.ErrTimeout) {
		t.Fatalf("cancelled extraction: %v, want ErrTimeout", err)
	}
	if _, err := (Extractor{}).Extract(context.Background(), []byte("a\x00b"), "x.md", extract.DefaultLimits()); !errors.Is(err, extract.ErrCorrupt) {
		t.Fatalf("binary content: %v, want ErrCorrupt", err)
	}
}
