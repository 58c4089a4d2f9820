// Command make writes the hostile corpus of TestHostileCorpus into the
// folder above it: files that have taken readers down elsewhere (one long
// line, deep and wide nesting, huge data URIs, zip and XML entity bombs,
// a workbook claiming a billion rows, 10,000 empty slides, truncated
// Office files). Deterministic: run it again and nothing changes.
//
//	go run ./deploy/e2e/testdata/hostile/make
package main

import (
	"archive/zip"
	"bytes"
	"encoding/base64"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

func main() {
	_, self, _, _ := runtime.Caller(0)
	dir := filepath.Dir(filepath.Dir(self))
	for name, data := range corpus() {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

const mb = 1 << 20

var words = strings.Fields("strata turns files into knowledge agents search read chunks sections headings tables slides sheets mail scans")

// line is about n bytes of words on one line, sep between them.
func line(n int, sep string, word func(i int) string) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString(word(i))
		b.WriteString(sep)
	}
	return b.String()
}

func word(i int) string { return words[(i*7+i/11)%len(words)] }

func corpus() map[string][]byte {
	c := map[string][]byte{}
	put := func(name, s string) { c[name] = []byte(s) }
	// One long line of each text format (issue 50 item 1).
	put("long-line.go", "package nistec\n\nvar p256Table = [...]uint64{"+line(mb/4, ", ", func(i int) string { return fmt.Sprintf("0x%016x", uint64(i)*0x9e3779b97f4a7c15) })+"0}\n")
	put("long-line.txt", line(mb/4, " ", word))
	put("long-line.md", "# Notes\n\n"+line(mb/4, " ", func(i int) string {
		if i%9 == 0 {
			return "**" + word(i) + "**"
		}
		return "[" + word(i) + "](https://example.com/" + word(i) + ")"
	}))
	put("long-line.csv", "id,name,team,"+line(mb/4, ",", func(i int) string { return fmt.Sprintf("%d,%s,%s", i, word(i), word(i+3)) }))
	put("long-line.json", "["+line(mb/4, ", ", func(i int) string { return fmt.Sprintf(`{"id": %d, "name": %q}`, i, word(i)) })+`{"id": -1}]`)
	put("long-line.html", "<html><body><h1>Notes</h1>"+line(mb/4, "", func(i int) string { return "<p>" + word(i) + " " + word(i+1) + "</p>" })+"</body></html>")
	// Wide and deep data.
	put("wide.json", "{"+line(mb/4, ", ", func(i int) string { return fmt.Sprintf(`"key%d": %d`, i, i) })+`"end": 0}`)
	put("deep.json", strings.Repeat("[", 100000)+"1"+strings.Repeat("]", 100000))
	put("wide.yaml", line(mb/4, "\n", func(i int) string { return fmt.Sprintf("key%d: %s", i, word(i)) }))
	var deep strings.Builder
	for i := range 1000 { // 1,000 levels: 500 KB of indentation
		deep.WriteString(strings.Repeat(" ", i) + fmt.Sprintf("k%d:\n", i))
	}
	put("deep.yaml", deep.String())
	put("nested.html", "<html><body>"+strings.Repeat("<div>", 100000)+"deepest text"+strings.Repeat("</div>", 100000)+"</body></html>")
	put("nested-unclosed.html", "<html><body>"+strings.Repeat("<b><i>", 100000)+"never closed")
	cols := 100000
	put("table-100k-columns.md", "# Table\n\n|"+strings.Repeat(" c |", cols)+"\n|"+strings.Repeat("---|", cols)+"\n|"+strings.Repeat(" x |", cols)+"\n")
	put("table-100k-rows.md", "# Table\n\n| a | b |\n|---|---|\n"+strings.Repeat("| x | y |\n", 20000))
	put("data-uri.md", "# Picture\n\n![chart](data:image/png;base64,"+strings.Repeat("A", mb)+")\n\nText after the picture.\n")
	put("data-uri.html", `<html><body><p>Before.</p><img alt="chart" src="data:image/png;base64,`+strings.Repeat("A", mb)+`"><p>After.</p></body></html>`)
	put("many-headings.md", line(mb/8, "\n\n", func(i int) string { return strings.Repeat("#", 1+i%6) + " " + word(i) }))
	put("long-heading.md", "# "+line(mb/4, " ", word)+"\n\n"+line(64<<10, "\n\n", word))
	// 1.3 million one-character paragraphs: 3.9 MB of text that would
	// hold 73 MB of blocks, over a text format's 64 MiB budget.
	put("tiny-paragraphs.txt", strings.Repeat("a\n\n", 1_300_000))
	put("control-chars.txt", line(mb/8, "\x01\x02\x1b[31m", word))
	// Zip formats: bombs, entities, claims and truncation (issue 49 item 7).
	bomb := strings.Repeat(" ", 300*mb)
	c["bomb.docx"] = zipOf(map[string]string{"[Content_Types].xml": "<Types/>", "word/document.xml": `<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>x</w:t></w:r></w:p>` + bomb + `</w:body></w:document>`})
	c["bomb.xlsx"] = zipOf(map[string]string{"[Content_Types].xml": "<Types/>", "xl/workbook.xml": `<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheets><sheet name="S" sheetId="1" r:id="rId1" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"/></sheets></workbook>`, "xl/worksheets/sheet1.xml": `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>` + bomb + `</sheetData></worksheet>`})
	c["bomb.pptx"] = zipOf(map[string]string{"[Content_Types].xml": "<Types/>", "ppt/presentation.xml": `<p:presentation xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main">` + bomb + `</p:presentation>`})
	c["bomb.epub"] = zipOf(map[string]string{"mimetype": "application/epub+zip", "META-INF/container.xml": `<container><rootfiles><rootfile full-path="content.opf"/></rootfiles></container>`, "content.opf": `<package>` + bomb + `</package>`})
	laughs := `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;"><!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;"><!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;"><!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;"><!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;"><!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;"><!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;"><!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">]>`
	c["entities.docx"] = zipOf(map[string]string{"[Content_Types].xml": "<Types/>", "word/document.xml": laughs + `<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>&lol9;</w:t></w:r></w:p></w:body></w:document>`})
	c["entities.odt"] = zipOf(map[string]string{"mimetype": "application/vnd.oasis.opendocument.text", "META-INF/manifest.xml": "<manifest/>", "content.xml": laughs + `<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:body><office:text><text:p>&lol9;</text:p></office:text></office:body></office:document-content>`})
	c["external-entity.xlsx"] = zipOf(map[string]string{"[Content_Types].xml": "<Types/>", "xl/workbook.xml": `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheets><sheet name="&xxe;" sheetId="1"/></sheets></workbook>`})
	rows := `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><dimension ref="A1:XFD1048576"/><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>first</t></is></c></row><row r="1048576"><c r="XFD1048576" t="inlineStr"><is><t>last</t></is></c></row></sheetData></worksheet>`
	c["billion-rows.xlsx"] = zipOf(map[string]string{"[Content_Types].xml": "<Types/>", "xl/workbook.xml": `<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>`, "xl/_rels/workbook.xml.rels": `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>`, "xl/worksheets/sheet1.xml": rows})
	c["slides-10000.pptx"] = emptySlides(10000)
	c["many-members.epub"] = manyMembers(20000)
	for _, name := range []string{"billion-rows.xlsx", "slides-10000.pptx", "entities.docx"} {
		b := c[name]
		c["truncated-"+name] = b[:len(b)/2]
	}
	flipped := bytes.Clone(c["slides-10000.pptx"])
	for i := 100; i < len(flipped); i += 997 {
		flipped[i] ^= 0x5a
	}
	c["flipped.pptx"] = flipped
	containers(c)
	return c
}

// containers are hostile messages, archives and mailboxes (issue 52 item
// 5): each is recorded with what it could not read, and every member
// beside the hostile one is read (its marker is found).
func containers(c map[string][]byte) {
	c["bomb-attachment.eml"] = []byte(message("Quarterly numbers", "See the attached report. The besidebombmailmarker is here.",
		attachment("report.docx", c["bomb.docx"])))
	c["bomb-member.zip"] = zipOf(map[string]string{
		"report.docx": string(c["bomb.docx"]),
		"zeros.bin":   strings.Repeat("\x00", 300*mb),
		"notes.txt":   "The besidebombzipmarker is read beside the bombs.",
	})
	c["many-members.zip"] = emptyMembers(100_000)
	c["escape.zip"] = zipOf(map[string]string{
		"../../etc/passwd":        "root:x:0:0 escapezipmarker",
		"/etc/shadow":             "absolute path",
		"invoice\u202egpj.exe":    "a bidi override in a name",
		"C:\\Windows\\system.ini": "a Windows path",
	})
	nested := zipOf(map[string]string{"deepest.txt": "six archives deep"})
	for range 5 {
		nested = zipOf(map[string]string{"next.zip": string(nested)})
	}
	c["nested.zip"] = nested
	var mime strings.Builder
	mime.WriteString("From: a@example.com\r\nSubject: deep\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b0\"\r\n\r\n")
	for i := range 100 {
		fmt.Fprintf(&mime, "--b%d\r\nContent-Type: multipart/mixed; boundary=\"b%d\"\r\n\r\n", i, i+1)
	}
	mime.WriteString("--b100\r\nContent-Type: text/plain\r\n\r\ndeepest part\r\n")
	c["deep-mime.eml"] = []byte(mime.String())
	var parts []string
	for i := range 1200 {
		parts = append(parts, attachment(fmt.Sprintf("note-%04d.txt", i), []byte(word(i))))
	}
	c["many-attachments.eml"] = []byte(message("Twelve hundred notes", "Every note is attached.", parts...))
	var box strings.Builder
	for i := range 1500 {
		fmt.Fprintf(&box, "From sender@example.com Mon Nov  2 09:00:00 2026\nFrom: sender@example.com\nSubject: message %d\n\n%s\n\n", i, word(i))
	}
	c["many-messages.mbox"] = []byte(box.String())
}

// message is a multipart/mixed message: a text body and parts.
func message(subject, body string, parts ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "From: a@example.com\r\nTo: b@example.com\r\nSubject: %s\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"m0\"\r\n\r\n", subject)
	fmt.Fprintf(&b, "--m0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n%s\r\n", body)
	for _, p := range parts {
		b.WriteString("--m0\r\n" + p)
	}
	b.WriteString("--m0--\r\n")
	return b.String()
}

// attachment is a base64 MIME part named name.
func attachment(name string, data []byte) string {
	enc := base64.StdEncoding.EncodeToString(data)
	var lines strings.Builder
	for len(enc) > 76 {
		lines.WriteString(enc[:76] + "\r\n")
		enc = enc[76:]
	}
	lines.WriteString(enc + "\r\n")
	return fmt.Sprintf("Content-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=\"%s\"\r\nContent-Transfer-Encoding: base64\r\n\r\n%s", name, lines.String())
}

// emptyMembers is a zip of n empty members, stored (no data descriptors).
func emptyMembers(n int) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for i := range n {
		if _, err := zw.CreateRaw(&zip.FileHeader{Name: fmt.Sprintf("%05d", i), Method: zip.Store}); err != nil {
			log.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		log.Fatal(err)
	}
	return b.Bytes()
}

func zipOf(members map[string]string) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, name := range sortedKeys(members) {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Deflate})
		if err != nil {
			log.Fatal(err)
		}
		if _, err := w.Write([]byte(members[name])); err != nil {
			log.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		log.Fatal(err)
	}
	return b.Bytes()
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := range keys { // insertion sort: few keys, no imports
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// emptySlides is a deck of n slides with nothing on them.
func emptySlides(n int) []byte {
	m := map[string]string{"[Content_Types].xml": `<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`}
	var ids, rels strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&ids, `<p:sldId id="%d" r:id="rId%d"/>`, 255+i, i)
		fmt.Fprintf(&rels, `<Relationship Id="rId%d" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/slide" Target="slides/slide%d.xml"/>`, i, i)
		m[fmt.Sprintf("ppt/slides/slide%d.xml", i)] = `<p:sld xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"><p:cSld><p:spTree/></p:cSld></p:sld>`
	}
	m["ppt/presentation.xml"] = `<p:presentation xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><p:sldIdLst>` + ids.String() + `</p:sldIdLst></p:presentation>`
	m["ppt/_rels/presentation.xml.rels"] = `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` + rels.String() + `</Relationships>`
	return zipOf(m)
}

// manyMembers is an e-book of n chapters of one word each.
func manyMembers(n int) []byte {
	m := map[string]string{"mimetype": "application/epub+zip",
		"META-INF/container.xml": `<container xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>`}
	var items, spine strings.Builder
	for i := range n {
		fmt.Fprintf(&items, `<item id="c%d" href="c%d.xhtml" media-type="application/xhtml+xml"/>`, i, i)
		fmt.Fprintf(&spine, `<itemref idref="c%d"/>`, i)
		m[fmt.Sprintf("c%d.xhtml", i)] = fmt.Sprintf(`<html xmlns="http://www.w3.org/1999/xhtml"><body><p>%s</p></body></html>`, word(i))
	}
	m["content.opf"] = `<package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Many</dc:title></metadata><manifest>` + items.String() + `</manifest><spine>` + spine.String() + `</spine></package>`
	return zipOf(m)
}
