package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// generator makes a file of about n bytes on one line; breakAfter is what a
// newline may replace the space after (a comma for data, any space for prose).
type generator struct {
	name       string // the file name the registry is given
	breakAfter string
	make       func(n int) []byte
}

var generators = map[string]generator{
	// Go's crypto/internal/fips140/nistec/p256_table.go: one declaration of
	// a huge table on one line.
	"code": {name: "p256_table.go", breakAfter: ",", make: func(n int) []byte {
		var b bytes.Buffer
		b.WriteString("package nistec\n\nvar p256Table = [...]uint64{")
		rng := rand.New(rand.NewPCG(1, 2))
		for b.Len() < n-2 {
			fmt.Fprintf(&b, "0x%016x, ", rng.Uint64())
		}
		b.WriteString("}\n")
		return b.Bytes()
	}},
	"text": {name: "notes.txt", breakAfter: "", make: func(n int) []byte { return prose(n, "") }},
	"markdown": {name: "notes.md", breakAfter: "", make: func(n int) []byte {
		return append([]byte("# Notes\n\n"), prose(n-9, "md")...)
	}},
	"csv": {name: "export.csv", breakAfter: ",", make: func(n int) []byte {
		var b bytes.Buffer
		b.WriteString("id,name,team,amount,")
		for i := 0; b.Len() < n; i++ {
			fmt.Fprintf(&b, "%d,%s,%s,%d.%02d, ", i, words[i%len(words)], words[(i*7)%len(words)], i*37%10000, i%100)
		}
		return b.Bytes()
	}},
	"json": {name: "export.json", breakAfter: ",", make: func(n int) []byte {
		var b bytes.Buffer
		b.WriteString("[")
		for i := 0; b.Len() < n-1; i++ {
			fmt.Fprintf(&b, `{"id": %d, "name": "%s", "team": "%s"}, `, i, words[i%len(words)], words[(i*7)%len(words)])
		}
		b.WriteString(`{"id": -1}]`)
		return b.Bytes()
	}},
	"html": {name: "page.html", breakAfter: "", make: func(n int) []byte {
		var b bytes.Buffer
		b.WriteString("<html><head><title>Notes</title></head><body><h1>Notes</h1> ")
		for i := 0; b.Len() < n-16; i++ {
			fmt.Fprintf(&b, "<p>%s</p> ", prose(200+i%300, ""))
		}
		b.WriteString("</body></html>")
		return b.Bytes()
	}},
}

func formatNames() []string {
	var names []string
	for n := range generators {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

var words = strings.Fields("strata turns files into knowledge agents search read chunks sections headings tables " +
	"slides sheets mail scans ingestor indexer embedder queryd version commit watermark tenant project bucket")

// prose is words separated by single spaces; in Markdown some are bold,
// code or links.
func prose(n int, flavour string) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		w := words[(i*13+i/7)%len(words)]
		switch {
		case flavour == "md" && i%17 == 0:
			w = "**" + w + "**"
		case flavour == "md" && i%23 == 0:
			w = "`" + w + "`"
		case flavour == "md" && i%41 == 0:
			w = "[" + w + "](https://example.com/" + w + ")"
		}
		b.WriteString(w)
		b.WriteByte(' ')
	}
	return b.Bytes()[:n]
}

// withNewlines is data with the space after breakAfter (any space when it
// is "") turned into a newline about every 100 bytes: the same bytes, in lines.
func withNewlines(data []byte, breakAfter string) []byte {
	out := bytes.Clone(data)
	last := 0
	for i := 1; i < len(out); i++ {
		if out[i] != ' ' || i-last < 100 || (breakAfter != "" && string(out[i-1]) != breakAfter) {
			continue
		}
		out[i] = '\n'
		last = i
	}
	return out
}
