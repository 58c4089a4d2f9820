package odt

import (
	"archive/zip"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract/extracttest"
)

// richDoc has a bit of everything, and two pictures for the image limits.
func richDoc(tb testing.TB) doc {
	d := newDoc(`<text:p text:style-name="Title">Rich</text:p>` + h(1, "Intro") +
		p("Text with a note<text:note><text:note-citation>1</text:note-citation><text:note-body>"+p("The note.")+"</text:note-body></text:note>.") +
		`<text:list text:style-name="Numbering_20_123"><text:list-item>` + p("item") + `</text:list-item></text:list>` +
		`<table:table><table:table-row><table:table-cell/><table:table-cell>` + p("b") + `</table:table-cell></table:table-row></table:table>` +
		p("Pictures"+picture("Pictures/a.png", "A", "")+picture("Pictures/b.jpg", "", "B")) +
		p(`<office:annotation><dc:creator>Ann</dc:creator><text:p>A comment.</text:p></office:annotation>Commented.`))
	d["Pictures/a.png"] = samplePNG(tb)
	d["Pictures/b.jpg"] = sampleJPEG(tb)
	d["styles.xml"] = []byte(stylesXML(commonStyles, `<style:master-page style:name="Standard"><style:header>`+p("Header text")+`</style:header></style:master-page>`))
	return d
}

func TestConformance(t *testing.T) {
	rich := richDoc(t)
	var hostile []extracttest.Sample
	for _, h := range hostileDocs(t) {
		hostile = append(hostile, extracttest.Sample{Name: h.name + ".odt", Data: h.data, Want: h.want})
	}
	extracttest.RunConformance(t, extracttest.Harness{
		Extractor: Extractor{},
		Profile:   profile,
		Samples: []extracttest.Sample{
			{Name: "report.fodt", Data: fixture(t, "report.fodt")},
			{Name: "rich.odt", Data: rich.zip(t)},
			{Name: "stored.odt", Data: rich.zipWith(t, zip.Store)},
		},
		Big:       &extracttest.Sample{Name: "big.odt", Data: newDoc(bigBody(256 << 10)).zip(t)},
		Container: true,
		Hostile:   hostile,
	})
}

// TestConformancePaged runs the suite on files that record their
// layout, held to the paged profile.
func TestConformancePaged(t *testing.T) {
	paged := richDoc(t)
	paged["content.xml"] = []byte(contentXML(`<style:style style:name="P1" style:family="paragraph"><style:paragraph-properties fo:break-before="page"/></style:style>`,
		h(1, "One")+p("First page.")+`<text:p text:style-name="P1">Second page`+picture("Pictures/a.png", "A", "")+`</text:p>`+
			p("<text:soft-page-break/>Third page"+picture("Pictures/b.jpg", "B", "")), true))
	extracttest.RunConformance(t, extracttest.Harness{
		Extractor: Extractor{},
		Profile:   pagedProfile,
		Samples: []extracttest.Sample{
			{Name: "report.odt", Data: fixture(t, "report.odt")},
			{Name: "paged.odt", Data: paged.zip(t)},
		},
		Container: true,
	})
}
