package htmltext

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract/extracttest"
)

func TestConformance(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "readability", "*", "source.html"))
	paths = append([]string{filepath.Join("testdata", "page.html"), filepath.Join("testdata", "meta.html")}, paths...)
	var samples []extracttest.Sample
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		samples = append(samples, extracttest.Sample{Name: strings.ReplaceAll(filepath.ToSlash(p), "/", "-"), Data: data})
	}
	for _, tc := range extractCases {
		if len(tc.want) > 0 {
			samples = append(samples, extracttest.Sample{Name: tc.name + ".html", Data: []byte(tc.input)})
		}
	}
	var big strings.Builder
	big.WriteString("<html><head><title>Big</title></head><body><main>")
	for i := 0; big.Len() < 256<<10; i++ {
		if i%20 == 0 {
			big.WriteString("<h2>Section</h2>")
		}
		big.WriteString("<p>A paragraph of a long page, with <b>inline</b> markup and a <a href='#'>link</a>.</p>")
		if i%50 == 0 {
			big.WriteString("<table><tr><td>a</td><td>b</td></tr><tr><td>1</td><td>2</td></tr></table><pre>code\n  indented</pre>")
		}
	}
	big.WriteString("</main></body></html>")
	manyMetas := "<html><head>" + strings.Repeat(`<meta name="keywords" content="`+strings.Repeat("k,", 500)+`">`, 2000) + "</head><body><p>x</p></body></html>"
	extracttest.RunConformance(t, extracttest.Harness{
		Extractor: Extractor{},
		Profile:   profile,
		Samples:   samples,
		Big:       &extracttest.Sample{Name: "big.html", Data: []byte(big.String())},
		Hostile: []extracttest.Sample{
			{Name: "divs.html", Data: []byte(nested("<div>", "</div>", 100000, "deep text"))},
			{Name: "unclosed.html", Data: []byte(strings.Repeat("<div><p><b><table><tr><td>", 20000) + "end")},
			{Name: "lists.html", Data: []byte(nested("<ul><li>", "</li></ul>", 30000, "item"))},
			{Name: "tag-soup.html", Data: []byte(strings.Repeat("<<p></</a<b>>&#;&#x;&amp<!--<![CDATA[<table><td>", 2000))},
			{Name: "entities.html", Data: []byte("<p>" + strings.Repeat("&amp;&#x1F600;&#0;&#xD800;&nbsp;", 50000) + "</p>")},
			{Name: "many-metas.html", Data: []byte(manyMetas)},
			{Name: "long-attribute.html", Data: []byte(`<p title="` + strings.Repeat("a", 4<<20) + `">x</p>`)},
			{Name: "utf16.html", Data: []byte("\xff\xfe" + utf16LE("<html><body><p>wide</p></body></html>"))},
			{Name: "latin1.html", Data: []byte("<html><head><meta charset=\"iso-8859-1\"></head><body><p>caf\xe9</p></body></html>")},
		},
	})
}
