package epub

import (
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/shared/metadata"
)

// TestEPUB3 reads the EPUB 3 book epub-gen-memory made: its table of
// contents page is the first chapter (page 1), so the book's chapter 2,
// with the marker word, is page 3; chapters start with their own h1.
func TestEPUB3(t *testing.T) {
	doc := mustRun(t, fixture(t, "harbour-epub3.epub"))
	if doc.Title != "The Harbour Letters" || doc.Pages != 4 {
		t.Errorf("title %q, pages %d", doc.Title, doc.Pages)
	}
	checkBlocks(t, doc, []string{
		"1 heading:1 Table of Contents",
		"2 heading:1 The Harbour",
		"2 paragraph:0 The ship came in at dawn, and the harbour master counted the crates.",
		"2 heading:2 The Crates",
		"2 paragraph:0 There were forty crates of tea and one of books.",
		"2 paragraph:0 - tea from Assam",
		"2 paragraph:0 - books in Latin",
		"3 heading:1 The Letter",
		"3 paragraph:0 Inside the crate of books lay a letter with the word epubchaptermarker on it.",
		"3 table:0 Sender | Town\nMara | Lisbon",
		"3 code:0 P.S. burn this",
		"4 heading:1 The Answer",
		"4 heading:2 Reply",
		"4 paragraph:0 She wrote back the same night, and the answer was short.",
	})
	created, _ := extract.ParseDate("2024-03-01T00:00:00.000Z")
	checkMetadata(t, doc.Metadata, metadata.Metadata{
		"title":    {Kind: metadata.String, Text: "The Harbour Letters"},
		"author":   {Kind: metadata.String, Text: "Ann Lee,Bo Chen"}, // epub-gen writes one dc:creator
		"language": {Kind: metadata.String, Text: "en"},
		"created":  created,
		"modified": doc.Metadata["modified"], // the time the fixture was made
	})
	if doc.Metadata["modified"].Kind != metadata.Date {
		t.Errorf("modified %+v, want the dcterms:modified date", doc.Metadata["modified"])
	}
}

// TestEPUB2 reads the EPUB 2 book, whose chapters do not repeat their
// titles: each gets a level-1 heading titled by the NCX, and its own
// headings stay below it.
func TestEPUB2(t *testing.T) {
	doc := mustRun(t, fixture(t, "harbour-epub2.epub"))
	if doc.Title != "The Harbour Letters, Plain" || doc.Pages != 4 {
		t.Errorf("title %q, pages %d", doc.Title, doc.Pages)
	}
	checkBlocks(t, doc, []string{
		"1 heading:1 Table of Contents",
		"1 paragraph:0 1. The Harbour",
		"1 paragraph:0 2. The Letter",
		"1 paragraph:0 3. The Answer",
		"2 heading:1 1. The Harbour",
		"2 paragraph:0 The ship came in at dawn, and the harbour master counted the crates.",
		"2 heading:2 The Crates",
		"2 paragraph:0 There were forty crates of tea and one of books.",
		"2 paragraph:0 - tea from Assam",
		"2 paragraph:0 - books in Latin",
		"3 heading:1 2. The Letter",
		"3 paragraph:0 Inside the crate of books lay a letter with the word epubchaptermarker on it.",
		"3 table:0 Sender | Town\nMara | Lisbon",
		"3 code:0 P.S. burn this",
		"4 heading:1 3. The Answer",
		"4 heading:2 Reply",
		"4 paragraph:0 She wrote back the same night, and the answer was short.",
	})
	modified, _ := extract.ParseDate("2023-11-05T00:00:00.000Z")
	checkMetadata(t, doc.Metadata, metadata.Metadata{
		"title":    {Kind: metadata.String, Text: "The Harbour Letters, Plain"},
		"author":   {Kind: metadata.String, Text: "Ann Lee"},
		"language": {Kind: metadata.String, Text: "de"},
		"modified": modified, // opf:event="modification"
	})
}

// TestLibreOfficeEPUB reads the book LibreOffice exports: chapters titled
// by the navigation document, the footnote in an <aside> kept.
func TestLibreOfficeEPUB(t *testing.T) {
	doc := mustRun(t, fixture(t, "libreoffice-report.epub"))
	if doc.Title != "Harbour Survey Report" || doc.Pages != 4 {
		t.Errorf("title %q, pages %d", doc.Title, doc.Pages)
	}
	got := blockTexts(doc)
	for _, want := range []string{
		"1 heading:1 Section 1",
		"2 heading:1 Introduction",
		"2 paragraph:0 1Counted from the pier, odtfootnotemarker.",
		"3 heading:1 Results",
		"3 paragraph:0 Boxed note odttextboxmarker",
		"4 heading:1 Daily log",
		"4 paragraph:0 Day 90: 9 ships in, 2 out, wind from the east, the harbour master wrote it all down in the ledger.",
	} {
		if !contains(got, want) {
			t.Errorf("no block %q in\n%s", want, strings.Join(got, "\n"))
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// TestChapterHeadings: a chapter that starts with a level-1 heading keeps
// it; one that does not gets one, titled by the navigation document or
// "Chapter N", with its own level-1 headings moved to level 2 and deeper
// ones kept. A heading too long to be one is a paragraph.
func TestChapterHeadings(t *testing.T) {
	long := strings.Repeat("word ", 60)
	b := newBook(
		`<h1>Own Title</h1><p>One.</p><h1>Second Top</h1><h3>Deep</h3>`,
		`<p>Two.</p><h1>Inner</h1><h3>Deeper</h3><h2>`+long+`</h2>`,
		`<h2>Starts low</h2><p>Three.</p>`,
	)
	// The navigation document titles only the first two chapters.
	b["OEBPS/nav.xhtml"] = chapter("Contents", `<nav epub:type="toc"><ol><li><a href="c1.xhtml">Nav 1</a></li>`+
		`<li><a href="c2.xhtml#start">Nav   2</a><ol><li><a href="c2.xhtml#inner">Nav 2.1</a></li></ol></li></ol></nav>`)
	doc := mustRun(t, b.zip(t))
	checkBlocks(t, doc, []string{
		"1 heading:1 Own Title",
		"1 paragraph:0 One.",
		"1 heading:1 Second Top",
		"1 heading:3 Deep",
		"2 heading:1 Nav 2",
		"2 paragraph:0 Two.",
		"2 heading:2 Inner",
		"2 heading:3 Deeper",
		"2 paragraph:0 " + strings.TrimSpace(long),
		"3 heading:1 Chapter 3",
		"3 heading:2 Starts low",
		"3 paragraph:0 Three.",
	})
	if doc.Pages != 3 {
		t.Errorf("pages %d", doc.Pages)
	}
}

// TestLongTitles: titles are one line of at most 256 bytes.
func TestLongTitles(t *testing.T) {
	b := newBook(`<p>Text.</p>`)
	long := strings.Repeat("é", 300)
	b["OEBPS/nav.xhtml"] = chapter("Contents", `<nav epub:type="toc"><ol><li><a href="c1.xhtml">`+long+"\n\tmore</a></li></ol></nav>")
	b["OEBPS/content.opf"] = strings.Replace(b["OEBPS/content.opf"], "A Test Book", "Title\non two lines "+long, 1)
	doc := mustRun(t, b.zip(t))
	h := doc.Text[doc.Blocks[0].Start:doc.Blocks[0].End]
	if len(h) > maxHeadingBytes || strings.ContainsAny(h, "\n\t") || !strings.HasPrefix(h, "éé") {
		t.Errorf("heading %q (%d bytes)", h, len(h))
	}
	if len(doc.Title) > maxHeadingBytes || !strings.HasPrefix(doc.Title, "Title on two lines é") {
		t.Errorf("title %q (%d bytes)", doc.Title, len(doc.Title))
	}
}

// TestSpine: chapters are read in spine order, not manifest order;
// linear="no" entries at their place; a file listed twice once; entries
// without text (a cover picture) and non-XHTML entries are no chapters.
func TestSpine(t *testing.T) {
	b := newBook(`<p>First.</p>`, `<p>Notes.</p>`, `<p>Last.</p>`)
	b["OEBPS/cover.xhtml"] = chapter("Cover", `<div><img src="cover.png"/></div>`)
	b["OEBPS/content.opf"] = opfXML(`<dc:title>Spine</dc:title>`,
		`<item id="c3" href="c3.xhtml" media-type="application/xhtml+xml"/>`+
			`<item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/>`+
			`<item id="c2" href="c2.xhtml" media-type="application/xhtml+xml"/>`+
			`<item id="cover" href="cover.xhtml" media-type="application/xhtml+xml"/>`+
			`<item id="img" href="cover.png" media-type="image/png"/>`,
		`<itemref idref="cover"/><itemref idref="img"/><itemref idref="c1"/><itemref idref="c2" linear="no"/>`+
			`<itemref idref="c1"/><itemref idref="missing"/><itemref idref="c3"/>`)
	doc := mustRun(t, b.zip(t))
	checkBlocks(t, doc, []string{
		"1 heading:1 Chapter 1", "1 paragraph:0 First.",
		"2 heading:1 Chapter 2", "2 paragraph:0 Notes.",
		"3 heading:1 Chapter 3", "3 paragraph:0 Last.",
	})
	if doc.Pages != 3 || len(doc.Warnings) != 2 {
		t.Errorf("pages %d, warnings %q (want the picture and the missing entry)", doc.Pages, doc.Warnings)
	}
}

// TestOutsidePaths: spine entries pointing out of the archive, at an
// absolute path or at a URL are never read from anywhere but the zip.
func TestOutsidePaths(t *testing.T) {
	b := newBook(`<p>Inside.</p>`)
	b["OEBPS/content.opf"] = opfXML(`<dc:title>Paths</dc:title>`,
		`<item id="up" href="../../etc/passwd" media-type="application/xhtml+xml"/>`+
			`<item id="up2" href="sub/../../../etc/passwd" media-type="application/xhtml+xml"/>`+
			`<item id="abs" href="/etc/passwd" media-type="application/xhtml+xml"/>`+
			`<item id="url" href="http://example.com/c.xhtml" media-type="application/xhtml+xml"/>`+
			`<item id="file" href="file:///etc/passwd" media-type="application/xhtml+xml"/>`+
			`<item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/>`,
		`<itemref idref="up"/><itemref idref="up2"/><itemref idref="abs"/><itemref idref="url"/><itemref idref="file"/><itemref idref="c1"/>`)
	// An entry of that name inside the zip is the one /etc/passwd means.
	// (The manifest has no navigation document: chapters are "Chapter N".)
	b["etc/passwd"] = chapter("zip", `<p>The zip's own etc/passwd.</p>`)
	doc := mustRun(t, b.zip(t))
	checkBlocks(t, doc, []string{
		"1 heading:1 Chapter 1", "1 paragraph:0 The zip's own etc/passwd.",
		"2 heading:1 Chapter 2", "2 paragraph:0 Inside.",
	})
	if len(doc.Warnings) != 4 {
		t.Errorf("warnings %q, want one per entry outside the archive", doc.Warnings)
	}
	for _, tt := range []struct{ base, href, want string }{
		{"OEBPS/content.opf", "Text/c%201.xhtml#p3", "OEBPS/Text/c 1.xhtml"},
		{"OEBPS/Text/c1.xhtml", "../Images/a.png", "OEBPS/Images/a.png"},
		{"content.opf", "../x.xhtml", ""},
		{"OEBPS/content.opf", "..", ""},
		{"", "/OEBPS/./a.xhtml", "OEBPS/a.xhtml"},
		{"OEBPS/content.opf", "data:text/html,hi", ""},
		{"OEBPS/content.opf", "", ""},
	} {
		if got, _ := resolve(tt.base, tt.href); got != tt.want {
			t.Errorf("resolve(%q, %q) = %q, want %q", tt.base, tt.href, got, tt.want)
		}
	}
}

func TestMetadata(t *testing.T) {
	b := newBook(`<p>Text.</p>`)
	b["OEBPS/content.opf"] = strings.Replace(b["OEBPS/content.opf"], `<dc:title>A Test Book</dc:title><dc:language>en</dc:language>`,
		`<dc:title>Main &amp; Only&nbsp;Title</dc:title><dc:title>Second title</dc:title>`+
			`<dc:creator opf:role="aut">Ann Lee</dc:creator><dc:creator>Bo  Chen</dc:creator>`+
			`<dc:subject>Fiction</dc:subject><dc:subject>Sea stories</dc:subject>`+
			`<dc:description>A &lt;b&gt;short&lt;/b&gt; book.</dc:description>`+
			`<dc:date opf:event="publication">2001-05</dc:date><dc:date opf:event="modification">2020-01-02</dc:date>`+
			`<meta property="dcterms:modified">2021-02-03T04:05:06Z</meta>`+
			`<dc:language>fr-CA</dc:language><dc:language>en</dc:language>`, 1)
	doc := mustRun(t, b.zip(t))
	created, _ := extract.ParseDate("2001-05")
	modified, _ := extract.ParseDate("2020-01-02")
	checkMetadata(t, doc.Metadata, metadata.Metadata{
		"title":       {Kind: metadata.String, Text: "Main & Only Title"},
		"author":      {Kind: metadata.String, Text: "Ann Lee; Bo Chen"},
		"keywords":    {Kind: metadata.List, List: []string{"Fiction", "Sea stories"}},
		"description": {Kind: metadata.String, Text: "A <b>short</b> book."},
		"created":     created,
		"modified":    modified, // the first modification date given
		"language":    {Kind: metadata.String, Text: "fr-CA"},
	})
	if doc.Title != "Main & Only Title" {
		t.Errorf("title %q", doc.Title)
	}
}

// TestBadDate: a date that is none costs the value and a warning.
func TestBadDate(t *testing.T) {
	b := newBook(`<p>Text.</p>`)
	b["OEBPS/content.opf"] = strings.Replace(b["OEBPS/content.opf"], `<dc:language>`, `<dc:date>sometime in May</dc:date><dc:language>`, 1)
	doc := mustRun(t, b.zip(t))
	if _, ok := doc.Metadata["created"]; ok || len(doc.Warnings) != 1 || !strings.Contains(doc.Warnings[0], "created") {
		t.Errorf("metadata %v, warnings %q", doc.Metadata, doc.Warnings)
	}
}

// TestNCXTitles: without a navigation document the NCX titles chapters;
// its docTitle is the title when the OPF has none; nested navPoints are
// sections of their file.
func TestNCXTitles(t *testing.T) {
	b := newBook(`<p>One.</p>`, `<p>Two.</p>`)
	delete(b, "OEBPS/nav.xhtml")
	b["OEBPS/content.opf"] = opfXML(``,
		`<item id="ncx" href="toc.ncx" media-type="application/x-dtbncx+xml"/>`+
			`<item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/><item id="c2" href="c2.xhtml" media-type="application/xhtml+xml"/>`,
		`<itemref idref="c1"/><itemref idref="c2"/>`)
	b["OEBPS/toc.ncx"] = `<?xml version="1.0"?><ncx xmlns="http://www.daisy.org/z3986/2005/ncx/" version="2005-1">
<docTitle><text>NCX Title</text></docTitle><docAuthor><text>Not a chapter</text></docAuthor><navMap>
<navPoint id="a"><navLabel><text>Part One</text></navLabel><content src="c1.xhtml"/>
  <navPoint id="b"><navLabel><text>Section</text></navLabel><content src="c2.xhtml#s1"/></navPoint>
</navPoint>
<navPoint id="c"><navLabel><text>Part Two</text></navLabel><content src="c2.xhtml"/></navPoint>
</navMap></ncx>`
	doc := mustRun(t, b.zip(t))
	checkBlocks(t, doc, []string{
		"1 heading:1 Part One", "1 paragraph:0 One.",
		"2 heading:1 Section", "2 paragraph:0 Two.",
	})
	if doc.Title != "NCX Title" {
		t.Errorf("title %q", doc.Title)
	}
}

// TestPrepareChapter: XHTML self-closing raw-text tags do not swallow
// the chapter, and asides, headers and footers are book text.
func TestPrepareChapter(t *testing.T) {
	body := `<p>Before.</p><script src="a.js"/><p>After script.</p><textarea/><p>After textarea.</p>` +
		`<header><h1>Head in header</h1></header><p>Text<a epub:type="noteref" href="#n1">1</a>.</p>` +
		`<aside epub:type="footnote" id="n1"><p>The footnote.</p></aside><footer><p>Chapter footer.</p></footer>`
	b := newBook(body)
	b["OEBPS/c1.xhtml"] = strings.Replace(chapter("", body), "<title></title>", `<title/><style type="text/css"/>`, 1)
	doc := mustRun(t, b.zip(t))
	checkBlocks(t, doc, []string{
		"1 heading:1 Nav 1",
		"1 paragraph:0 Before.",
		"1 paragraph:0 After script.",
		"1 paragraph:0 After textarea.",
		"1 heading:2 Head in header",
		"1 paragraph:0 Text1.",
		"1 paragraph:0 The footnote.",
		"1 paragraph:0 Chapter footer.",
	})
	for _, tt := range []struct{ in, want string }{
		{`<TITLE a="/>"/>x`, `<TITLE a="/>"></TITLE>x`},
		{`<title>t</title><scripts/>`, `<title>t</title><scripts/>`},
		{`</aside><ASIDE class="x">`, `</div><div class="x">`},
		{`<asides>`, `<asides>`},
		{`<title a="unterminated`, `<title a="unterminated`},
		{`<`, `<`},
	} {
		if got := string(prepareChapter([]byte(tt.in))); got != tt.want {
			t.Errorf("prepareChapter(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestMaxPages: chapters beyond MaxPages are not read, with a warning.
func TestMaxPages(t *testing.T) {
	lim := extract.DefaultLimits()
	lim.MaxPages = 2
	doc, err := run(t, newBook(`<p>One.</p>`, `<p>Two.</p>`, `<p>Three.</p>`).zip(t), lim)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Pages != 2 || strings.Contains(doc.Text, "Three") || len(doc.Warnings) != 1 || !strings.Contains(doc.Warnings[0], "MaxPages") {
		t.Errorf("pages %d, text %q, warnings %q", doc.Pages, doc.Text, doc.Warnings)
	}
}

// TestMaxTextBytes counts the text of the whole book, not of a chapter.
func TestMaxTextBytes(t *testing.T) {
	data := newBook(`<p>`+strings.Repeat("a", 600)+`</p>`, `<p>`+strings.Repeat("b", 600)+`</p>`).zip(t)
	full := mustRun(t, data)
	lim := extract.DefaultLimits()
	lim.MaxTextBytes = len(full.Text) - 1
	if _, err := run(t, data, lim); err == nil || !strings.Contains(err.Error(), "MaxTextBytes") {
		t.Errorf("%d bytes of text, MaxTextBytes %d: %v", len(full.Text), lim.MaxTextBytes, err)
	}
}

// TestBrokenChapter: a chapter that cannot be decompressed is skipped
// with a warning; a book with no readable chapter is corrupt.
func TestBrokenChapter(t *testing.T) {
	b := newBook(`<p>Good one.</p>`, `<p>`+strings.Repeat("compressible text ", 500)+`</p>`)
	data := b.zip(t)
	corruptEntry(t, data, "OEBPS/c2.xhtml")
	doc := mustRun(t, data)
	if doc.Pages != 1 || len(doc.Warnings) != 1 || !strings.Contains(doc.Warnings[0], "c2.xhtml") {
		t.Errorf("pages %d, warnings %q", doc.Pages, doc.Warnings)
	}

	only := newBook(`<p>` + strings.Repeat("compressible text ", 500) + `</p>`).zip(t)
	corruptEntry(t, only, "OEBPS/c1.xhtml")
	if _, err := run(t, only, extract.DefaultLimits()); !errorIs(err, extract.ErrCorrupt) {
		t.Errorf("no readable chapter: %v", err)
	}
}

func checkMetadata(t *testing.T, got, want metadata.Metadata) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("metadata %+v, want %d keys", got, len(want))
	}
	for k, w := range want {
		g := got[k]
		if g.Kind != w.Kind || g.Text != w.Text || !g.Date.Equal(w.Date) || strings.Join(g.List, "|") != strings.Join(w.List, "|") {
			t.Errorf("%s = %+v, want %+v", k, g, w)
		}
	}
}
