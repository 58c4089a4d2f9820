package htmltext

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/extracttest"
)

// extractCases are small pages and the blocks they must give, rendered by
// render. They also seed the fuzz test.
var extractCases = []struct {
	name  string
	input string
	title string
	want  []string
}{
	{
		name:  "headings, paragraphs and inline tags",
		input: `<h1>Intro to <em>Go</em></h1><p>Go is <a href="#">a <strong>small</strong> language</a>.</p><h2>Details</h2><p>More   text` + "\n\t" + `here, <code>fmt</code> and <span>s<b>pan</b>s</span>.</p><h6>Tiny</h6>`,
		title: "Intro to Go",
		want: []string{
			`heading 1 "Intro to Go"`,
			`paragraph 0 "Go is a small language."`,
			`heading 2 "Details"`,
			`paragraph 0 "More text here, fmt and spans."`,
			`heading 6 "Tiny"`,
		},
	},
	{
		name: "main wins and furniture is removed",
		input: `<html><head><title>Shop</title><style>p{color:red}</style></head><body>
			<header><p>Site banner</p></header><nav><ul><li>Home</li></ul></nav>
			<main><h1>Real content</h1><p>Kept.</p><script>document.write("no")</script><noscript>Enable JS</noscript>
			<form><p>Newsletter</p><button>Sign up</button></form><template><p>tpl</p></template>
			<iframe src="x"></iframe><svg><title>icon</title><text>svg text</text></svg></main>
			<aside>Ads</aside><footer>Copyright</footer></body></html>`,
		title: "Shop",
		want:  []string{`heading 1 "Real content"`, `paragraph 0 "Kept."`},
	},
	{
		name:  "single article wins over body",
		input: `<body><div>Sidebar junk</div><article><h2>Post</h2><p>Body text.</p></article><div>More junk</div></body>`,
		want:  []string{`heading 2 "Post"`, `paragraph 0 "Body text."`},
	},
	{
		name:  "several articles mean the body",
		input: `<body><p>Latest posts</p><article><p>One</p><article><p>Comment</p></article></article><article><p>Two</p></article></body>`,
		want:  []string{`paragraph 0 "Latest posts"`, `paragraph 0 "One"`, `paragraph 0 "Comment"`, `paragraph 0 "Two"`},
	},
	{
		name: "page header and footer go, article header and footer stay",
		input: `<body><header><h1>Site name</h1></header><article><header><h1>Post title</h1><p>By Ann</p></header>
			<p>Text.</p><footer>Filed under tests</footer></article><footer>Copyright</footer></body>`,
		title: "Post title",
		want:  []string{`heading 1 "Post title"`, `paragraph 0 "By Ann"`, `paragraph 0 "Text."`, `paragraph 0 "Filed under tests"`},
	},
	{
		name: "hidden elements",
		input: `<p hidden>no</p><p aria-hidden="true">no</p><p aria-hidden=" TRUE ">no</p><p aria-hidden="false">yes</p>
			<div hidden><p>no</p></div><p>visible <span hidden>secret</span>text</p><select><option>opt</option></select>`,
		want: []string{`paragraph 0 "yes"`, `paragraph 0 "visible text"`},
	},
	{
		name: "table",
		input: `<p>Before</p><table><caption>Stock</caption><thead><tr><th>Name</th><th>Qty</th></tr></thead>
			<tbody><tr><td>Apple</td><td>3</td></tr><tr><td> </td><td></td></tr>
			<tr><td><b>Pear</b>   tree<br>(old)</td><td><p>10</p><p>kg</p></td></tr></tbody></table><p>After</p>`,
		want: []string{
			`paragraph 0 "Before"`,
			`paragraph 0 "Stock"`,
			`table 0 "Name | Qty\nApple | 3\nPear tree (old) | 10 kg"`,
			`paragraph 0 "After"`,
		},
	},
	{
		name:  "nested table is part of its cell",
		input: `<table><tr><td>outer</td><td><table><tr><td>in1</td><td>in2</td></tr></table></td></tr></table>`,
		want:  []string{`table 0 "outer | in1 in2"`},
	},
	{
		name: "lists",
		input: `<ul><li>Apples</li><li> Pears <em>ripe</em> </li><li></li></ul>
			<ol><li>First</li><li><p>Second</p><p>more</p></li><li>Third<ul><li>sub</li></ul>tail</li></ol>
			<ol start="7"><li>seven</li><li>eight</li></ol><li>stray item</li>`,
		want: []string{
			`paragraph 0 "- Apples"`,
			`paragraph 0 "- Pears ripe"`,
			`paragraph 0 "1. First"`,
			`paragraph 0 "2. Second"`,
			`paragraph 0 "more"`,
			`paragraph 0 "3. Third"`,
			`paragraph 0 "- sub"`,
			`paragraph 0 "tail"`,
			`paragraph 0 "7. seven"`,
			`paragraph 0 "8. eight"`,
			`paragraph 0 "- stray item"`,
		},
	},
	{
		name: "definition lists, blockquotes and loose div text",
		input: `<dl><dt>Term</dt><dd>Meaning</dd></dl><blockquote><p>Quoted</p>words</blockquote>
			<div>loose <i>text</i><div>inner</div>after<section>in section</section></div>`,
		want: []string{
			`paragraph 0 "Term"`, `paragraph 0 "Meaning"`, `paragraph 0 "Quoted"`, `paragraph 0 "words"`,
			`paragraph 0 "loose text"`, `paragraph 0 "inner"`, `paragraph 0 "after"`, `paragraph 0 "in section"`,
		},
	},
	{
		name:  "pre keeps indentation",
		input: "<p>Example:</p><pre>\nfunc main() {\n\tfmt.Println(\"a  b\")\n    <b>x</b> := 1<br>}\n\n  \n</pre><pre><code>  indented\n\n  after blank</code></pre><pre>   </pre>",
		want: []string{
			`paragraph 0 "Example:"`,
			`code 0 "func main() {\n\tfmt.Println(\"a  b\")\n    x := 1\n}"`,
			`code 0 "  indented\n\n  after blank"`,
		},
	},
	{
		name:  "line breaks",
		input: `<p>line one<br>line two <br/> <br><br><br>line three<br></p><h2>Two<br>lines</h2>`,
		title: "",
		want:  []string{`paragraph 0 "line one\nline two\n\nline three"`, `heading 2 "Two\nlines"`},
	},
	{
		name:  "entities",
		input: `<p>Tom &amp; Jerry&nbsp;&nbsp;show &#x1F600; &lt;tag&gt; &eacute;&copy</p><p>&nbsp;</p>`,
		want:  []string{`paragraph 0 "Tom & Jerry show 😀 <tag> é©"`},
	},
	{
		name:  "windows-1252 declared",
		input: "<html><head><meta charset=\"windows-1252\"></head><body><p>caf\xe9 \x93quoted\x94 \x80</p></body></html>",
		want:  []string{`paragraph 0 "café “quoted” €"`},
	},
	{
		name:  "latin-1 declared in http-equiv",
		input: "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=ISO-8859-1\"><p>na\xefve</p>",
		want:  []string{`paragraph 0 "naïve"`},
	},
	{
		name:  "shift_jis declared",
		input: "<meta charset=\"shift_jis\"><p>\x93\xfa\x96\x7b</p>",
		want:  []string{`paragraph 0 "日本"`},
	},
	{
		name:  "legacy bytes without declaration",
		input: "<p>na\xefve caf\xe9</p>",
		want:  []string{`paragraph 0 "naïve café"`},
	},
	{
		name:  "invalid UTF-8 in a UTF-8 page",
		input: "<p>Grüße \xff\xfe aus Zürich \xc3</p>",
		want:  []string{`paragraph 0 "Grüße � aus Zürich �"`},
	},
	{
		name:  "invalid UTF-8 in a page declared UTF-8",
		input: "<meta charset=utf-8><p>ok \xff\xfe\xfd end</p>",
		want:  []string{`paragraph 0 "ok � end"`},
	},
	{
		name:  "UTF-8 byte order mark",
		input: "\xef\xbb\xbf<p>caf\xc3\xa9</p>",
		want:  []string{`paragraph 0 "café"`},
	},
	{
		name:  "UTF-16 byte order mark",
		input: utf16LE("\ufeff<title>Wide</title><p>h\u00e9</p>"),
		title: "Wide",
		want:  []string{`paragraph 0 "hé"`},
	},
	{
		name:  "control characters",
		input: "<p>a\x01b\x7fc\u0085d\tx\x00y</p><pre>\tk\x02ey\x1b[0m</pre>",
		want:  []string{`paragraph 0 "abc d xy"`, `code 0 "\tkey[0m"`},
	},
	{
		name:  "images give their alt text",
		input: `<p>See <img src="a.png" alt=" a red   bicycle ">here</p><figure><img src="b.png" alt=""><img src="c.png"><figcaption>Figure 1</figcaption></figure><div><img alt="Chart"></div>`,
		want:  []string{`paragraph 0 "See [image: a red bicycle] here"`, `paragraph 0 "Figure 1"`, `paragraph 0 "[image: Chart]"`},
	},
	{
		name:  "title element wins",
		input: "<html><head><title>\n  The   <b>Title</b>\n</title></head><body><h1>Heading</h1></body></html>",
		title: "The <b>Title</b>",
		want:  []string{`heading 1 "Heading"`},
	},
	{
		name:  "title falls back to the first h1",
		input: `<svg><title>logo</title></svg><h2>Second</h2><h1>First <small>one</small></h1><h1>Other</h1>`,
		title: "First one",
		want:  []string{`heading 2 "Second"`, `heading 1 "First one"`, `heading 1 "Other"`},
	},
	{
		name:  "blank title falls back too",
		input: `<title>   </title><h1>Fallback</h1>`,
		title: "Fallback",
		want:  []string{`heading 1 "Fallback"`},
	},
	{
		name:  "math text is kept",
		input: `<p>Area is <math><mi>r</mi><mo>²</mo></math> times pi</p>`,
		want:  []string{`paragraph 0 "Area is r² times pi"`},
	},
	{
		name:  "empty input",
		input: "",
		want:  nil,
	},
	{
		name:  "no body text",
		input: "<html><head><title>Only title</title></head><body>  \n </body></html>",
		title: "Only title",
		want:  nil,
	},
}

// utf16LE encodes s as UTF-16 little-endian, for the byte order mark test.
func utf16LE(s string) string {
	var b []byte
	for _, r := range s {
		if r >= 0x10000 {
			panic("utf16LE: only the basic plane is needed")
		}
		b = append(b, byte(r), byte(r>>8))
	}
	return string(b)
}

func TestExtract(t *testing.T) {
	for _, tc := range extractCases {
		t.Run(tc.name, func(t *testing.T) {
			doc := mustExtract(t, []byte(tc.input), extract.DefaultLimits())
			got := render(doc)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("blocks:\n got %s\nwant %s", strings.Join(got, "\n     "), strings.Join(tc.want, "\n     "))
			}
			if doc.Title != tc.title {
				t.Errorf("title = %q, want %q", doc.Title, tc.title)
			}
		})
	}
}

func TestSniff(t *testing.T) {
	cases := []struct {
		input string
		want  bool
	}{
		{"<!DOCTYPE html><p>x", true},
		{"<!doctype HTML>", true},
		{"\xef\xbb\xbf  \n<HTML lang=en>", true},
		{"\t<head><title>x</title>", true},
		{"<Body>text", true},
		{"<!-- generated -->\n<html>", true},
		{strings.Repeat(" ", 900) + "<p><body>", true},
		{strings.Repeat("x", 1100) + "<html>", false},
		{"<p>fragment only</p>", false},
		{"# Markdown title\n\nSome text.", false},
		{"%PDF-1.7\n", false},
		{"", false},
		{"<?xml version=\"1.0\"?><root/>", false},
	}
	for _, tc := range cases {
		if got := Sniff([]byte(tc.input)); got != tc.want {
			t.Errorf("Sniff(%.40q) = %v, want %v", tc.input, got, tc.want)
		}
	}
}

// mustExtract extracts data, fails the test on an error and checks the
// document's invariants.
func mustExtract(t testing.TB, data []byte, lim extract.Limits) *extract.Document {
	t.Helper()
	doc, err := Extractor{}.Extract(context.Background(), data, "test.html", lim)
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	extracttest.Verify(t, doc, nil, profile)
	return doc
}

// profile is what every HTML document promises: clean one-line text in
// blocks without surrounding white space (code keeps its indentation), no
// pages, images or figures, and the page's properties under the keys of
// metaKeys and its title, cleaned.
var profile = extracttest.Profile{
	Format:        "html",
	Kinds:         []extract.Kind{extract.Paragraph, extract.Heading, extract.Code, extract.Table},
	CleanText:     true,
	CleanTitle:    true,
	TrimmedBlocks: true,
	MetadataKeys:  append(slices.Collect(maps.Keys(metaKeys)), extract.PropTitle),
	CleanMetadata: true,
}

// render describes the blocks one per line: kind, level and quoted text.
func render(doc *extract.Document) []string {
	var lines []string
	for _, b := range doc.Blocks {
		lines = append(lines, fmt.Sprintf("%v %d %q", b.Kind, b.Level, doc.Text[b.Start:b.End]))
	}
	return lines
}
