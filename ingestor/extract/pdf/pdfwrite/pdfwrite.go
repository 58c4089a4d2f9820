// Package pdfwrite writes small, valid PDFs: text in Helvetica, optional
// images and an outline. Tests read them, and load generators upload them
// (deploy/measure/strata-chaos), so no third-party files are needed.
package pdfwrite

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"sort"
	"strings"
	"unicode/utf16"
)

// Page is one page of a generated PDF.
type Page struct {
	Lines    []string
	Image    bool      // a 64x64 RGB image under the text
	Pictures []Picture // more pictures, drawn in order
}

// Picture is an image XObject written as given, for tests of how each kind
// of picture is read.
type Picture struct {
	// Dict holds the image dictionary's entries besides /Type, /Subtype
	// and /Length, e.g. "/Width 40 /Height 40 /ColorSpace /DeviceGray
	// /BitsPerComponent 8", and a /Filter that Data is encoded with.
	Dict string
	Data []byte
	// SMask, when set, is written as the picture's soft mask.
	SMask *Picture
	// InForm draws the picture from inside a form XObject.
	InForm bool
	// Inline writes the picture into the page's content (BI Dict ID Data
	// EI); Dict then uses the inline keys (/W, /H, /CS, /BPC, /F).
	Inline bool
	// ICC, when 1 or 3, gives the picture an ICCBased colour space of that
	// many components (a stand-in profile: readers fall back to the device
	// space of as many components).
	ICC int
	// FullPage draws the picture over the whole page, as a scanner does.
	FullPage bool
}

// OutlineItem is a bookmark to a page; Level 2 items nest under the previous level-1 item.
type OutlineItem struct {
	Title string
	Page  int
	Level int
}

// Make writes a PDF with the given pages and outline.
func Make(pages []Page, outline []OutlineItem) []byte { return MakeTitled("", pages, outline) }

// MakeTitled writes a PDF whose document information names a title ("" for none).
func MakeTitled(title string, pages []Page, outline []OutlineItem) []byte {
	var info map[string]string
	if title != "" {
		info = map[string]string{"Title": title}
	}
	return MakeWithInfo(info, pages, outline)
}

// MakeWithInfo writes a PDF with a document information dictionary of the
// given entries (none when empty), e.g. "Author": "Ann", "CreationDate":
// "D:20240131120000+01'00'". A value of printable ASCII is written as a
// literal string, another as UTF-16BE text (a hex string with a byte order
// mark), as PDF writers store non-Latin text.
func MakeWithInfo(info map[string]string, pages []Page, outline []OutlineItem) []byte {
	var objs []string // object i+1
	add := func(s string) int { objs = append(objs, s); return len(objs) }
	catalog := add("") // filled in below
	pagesObj := add("")
	font := add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	var kids []string
	var pageIDs []int
	for _, p := range pages {
		var content strings.Builder
		content.WriteString("BT /F1 14 Tf 72 720 Td 18 TL\n")
		for _, l := range p.Lines {
			fmt.Fprintf(&content, "(%s) Tj T*\n", escape(l))
		}
		content.WriteString("ET\n")
		resources := fmt.Sprintf("/Font << /F1 %d 0 R >>", font)
		var xobjects []string
		if p.Image {
			pixels := bytes.Repeat([]byte{200, 30, 30}, 64*64)
			img := add(fmt.Sprintf("<< /Type /XObject /Subtype /Image /Width 64 /Height 64 /ColorSpace /DeviceRGB /BitsPerComponent 8 /Length %d >>\nstream\n%s\nendstream", len(pixels), pixels))
			xobjects = append(xobjects, fmt.Sprintf("/Im1 %d 0 R", img))
			content.WriteString("q 128 0 0 128 72 300 cm /Im1 Do Q\n")
		}
		for i, pic := range p.Pictures {
			if pic.Inline {
				fmt.Fprintf(&content, "q 100 0 0 100 72 %d cm BI %s ID\n%s\nEI Q\n", 100+i*10, pic.Dict, pic.Data)
				continue
			}
			name := fmt.Sprintf("/P%d", i+1)
			ref := add(picture(pic, add))
			if pic.InForm {
				form := "q 100 0 0 100 0 0 cm /Inner Do Q"
				ref = add(fmt.Sprintf("<< /Type /XObject /Subtype /Form /BBox [0 0 100 100] /Resources << /XObject << /Inner %d 0 R >> >> /Length %d >>\nstream\n%s\nendstream", ref, len(form), form))
			}
			xobjects = append(xobjects, fmt.Sprintf("%s %d 0 R", name, ref))
			if pic.FullPage {
				fmt.Fprintf(&content, "q 612 0 0 792 0 0 cm %s Do Q\n", name)
				continue
			}
			fmt.Fprintf(&content, "q 100 0 0 100 72 %d cm %s Do Q\n", 100+i*10, name)
		}
		if len(xobjects) > 0 {
			resources += " /XObject << " + strings.Join(xobjects, " ") + " >>"
		}
		stream := add(fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", content.Len(), content.String()))
		id := add(fmt.Sprintf("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Resources << %s >> /Contents %d 0 R >>", pagesObj, resources, stream))
		pageIDs = append(pageIDs, id)
		kids = append(kids, fmt.Sprintf("%d 0 R", id))
	}
	objs[pagesObj-1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(pages))
	cat := fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R", pagesObj)
	if len(outline) > 0 {
		// A flat list of top-level items; items with Level 2 nest under the previous level-1 item.
		root := add("")
		type node struct {
			id       int
			item     OutlineItem
			children []int
		}
		var tops []*node
		all := map[int]*node{}
		for _, it := range outline {
			n := &node{id: add(""), item: it}
			all[n.id] = n
			if it.Level > 1 && len(tops) > 0 {
				tops[len(tops)-1].children = append(tops[len(tops)-1].children, n.id)
			} else {
				tops = append(tops, n)
			}
		}
		write := func(n *node, parent, prev, next int) {
			s := fmt.Sprintf("<< /Title (%s) /Parent %d 0 R /Dest [%d 0 R /XYZ 0 792 0]", n.item.Title, parent, pageIDs[n.item.Page-1])
			if prev > 0 {
				s += fmt.Sprintf(" /Prev %d 0 R", prev)
			}
			if next > 0 {
				s += fmt.Sprintf(" /Next %d 0 R", next)
			}
			if len(n.children) > 0 {
				s += fmt.Sprintf(" /First %d 0 R /Last %d 0 R /Count %d", n.children[0], n.children[len(n.children)-1], len(n.children))
			}
			objs[n.id-1] = s + " >>"
		}
		for i, t := range tops {
			prev, next := 0, 0
			if i > 0 {
				prev = tops[i-1].id
			}
			if i+1 < len(tops) {
				next = tops[i+1].id
			}
			write(t, root, prev, next)
			for j, c := range t.children {
				prev, next = 0, 0
				if j > 0 {
					prev = t.children[j-1]
				}
				if j+1 < len(t.children) {
					next = t.children[j+1]
				}
				write(all[c], t.id, prev, next)
			}
		}
		objs[root-1] = fmt.Sprintf("<< /Type /Outlines /First %d 0 R /Last %d 0 R /Count %d >>", tops[0].id, tops[len(tops)-1].id, len(tops))
		cat += fmt.Sprintf(" /Outlines %d 0 R /PageMode /UseOutlines", root)
	}
	objs[catalog-1] = cat + " >>"
	infoRef := ""
	if len(info) > 0 {
		names := make([]string, 0, len(info))
		for name := range info {
			names = append(names, name)
		}
		sort.Strings(names)
		var dict strings.Builder
		dict.WriteString("<<")
		for _, name := range names {
			fmt.Fprintf(&dict, " /%s %s", name, textString(info[name]))
		}
		dict.WriteString(" >>")
		infoRef = fmt.Sprintf(" /Info %d 0 R", add(dict.String()))
	}

	var buf bytes.Buffer
	buf.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = buf.Len()
		fmt.Fprintf(&buf, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := buf.Len()
	fmt.Fprintf(&buf, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&buf, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&buf, "trailer\n<< /Size %d /Root %d 0 R%s >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, catalog, infoRef, xref)
	return buf.Bytes()
}

// picture returns the image XObject pic, adding its soft mask first.
func picture(pic Picture, add func(string) int) string {
	dict := pic.Dict
	if pic.ICC > 0 {
		profile := "not a real ICC profile"
		dict += fmt.Sprintf(" /ColorSpace [/ICCBased %d 0 R]", add(fmt.Sprintf("<< /N %d /Length %d >>\nstream\n%s\nendstream", pic.ICC, len(profile), profile)))
	}
	if pic.SMask != nil {
		dict += fmt.Sprintf(" /SMask %d 0 R", add(picture(*pic.SMask, add)))
	}
	return fmt.Sprintf("<< /Type /XObject /Subtype /Image %s /Length %d >>\nstream\n%s\nendstream", dict, len(pic.Data), pic.Data)
}

// textString writes s as a PDF text string: literal when printable ASCII,
// else UTF-16BE in hex after a byte order mark.
func textString(s string) string {
	ascii := true
	for _, r := range s {
		if r < 0x20 || r > 0x7e {
			ascii = false
			break
		}
	}
	if ascii {
		return "(" + escape(s) + ")"
	}
	var b strings.Builder
	b.WriteString("<FEFF")
	for _, u := range utf16.Encode([]rune(s)) {
		fmt.Fprintf(&b, "%04X", u)
	}
	b.WriteString(">")
	return b.String()
}

// escape writes s as the body of a PDF literal string.
func escape(s string) string {
	return strings.NewReplacer(`\`, `\\`, "(", `\(`, ")", `\)`).Replace(s)
}

// ScannedBinder writes a PDF of pages scanned pages, each a letter page at
// 300 dpi (2550x3300 8-bit gray, stored raw as some scanners store it: 8.4
// MB a page), blank but for the last, which holds last at its top left (an
// inch in): a binder of 24 pages is 200 MB.
func ScannedBinder(pages int, last image.Image) []byte {
	const width, height = 2550, 3300
	dict := fmt.Sprintf("/Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8", width, height)
	blank := bytes.Repeat([]byte{255}, width*height)
	lastPage := bytes.Clone(blank)
	b := last.Bounds()
	for y := b.Min.Y; y < b.Max.Y && 300+y-b.Min.Y < height; y++ {
		for x := b.Min.X; x < b.Max.X && 300+x-b.Min.X < width; x++ {
			lastPage[(300+y-b.Min.Y)*width+300+x-b.Min.X] = color.GrayModel.Convert(last.At(x, y)).(color.Gray).Y
		}
	}
	ps := make([]Page, pages)
	for i := range ps {
		data := blank
		if i == pages-1 {
			data = lastPage
		}
		ps[i] = Page{Pictures: []Picture{{Dict: dict, Data: data, FullPage: true}}}
	}
	return MakeTitled("Scanned binder", ps, nil)
}
