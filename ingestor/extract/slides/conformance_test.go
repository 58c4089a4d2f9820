package slides

import (
	"fmt"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/extracttest"
)

// bigPPTX is a deck of many slides of text and tables (hundreds of KB of
// text), for the text limits and the benchmark.
func bigPPTX(tb testing.TB, n int) []byte {
	d := deck{slides: make([]string, n)}
	for i := range d.slides {
		d.slides[i] = slideXML("", title(fmt.Sprintf("Section %d", i+1)),
			sp(`idx="1"`, 0, 1000, "A point made on a slide, with words enough to fill a line.", "Another point, and a third below it.", "The last point of this slide."),
			table(0, 2000, []string{"Name", "Value", "Note"}, []string{"alpha", "1", "first"}, []string{"beta", "2", "second"}),
			sp("-", 0, 3000, "A footnote box at the bottom of the slide."))
	}
	return d.zip(tb)
}

// bigODP is bigPPTX as an ODP.
func bigODP(tb testing.TB, n int) []byte {
	var pages strings.Builder
	for i := range n {
		pages.WriteString(odpPage("", frame("title", 1, 1, fmt.Sprintf("Section %d", i+1)),
			frame("outline", 1, 3, "A point made on a slide, with words enough to fill a line.", "Another point, and a third below it.", "The last point of this slide."),
			`<draw:frame svg:x="1cm" svg:y="8cm"><table:table>`+
				strings.Repeat(`<table:table-row><table:table-cell><text:p>alpha</text:p></table:table-cell><table:table-cell><text:p>1</text:p></table:table-cell></table:table-row>`, 3)+
				`</table:table></draw:frame>`,
			frame("", 1, 12, "A footnote box at the bottom of the slide.")))
	}
	return odp(tb, odpContent("", pages.String()), nil)
}

func hostileSamples(hs []struct {
	name string
	data []byte
	want error
}) []extracttest.Sample {
	out := make([]extracttest.Sample, len(hs))
	for i, h := range hs {
		out[i] = extracttest.Sample{Name: h.name, Data: h.data, Want: h.want}
	}
	return out
}

func TestConformancePPTX(t *testing.T) {
	extracttest.RunConformance(t, extracttest.Harness{
		Extractor: PPTX{},
		Profile:   profileOf("pptx"),
		Samples: []extracttest.Sample{
			{Name: "deck.pptx", Data: readFile(t, "deck.pptx")},
			{Name: "pptxgenjs.pptx", Data: readFile(t, "pptxgenjs.pptx")},
			{Name: "pictures.pptx", Data: picturesDeck(t)},
		},
		Big:       &extracttest.Sample{Name: "big.pptx", Data: bigPPTX(t, 300)},
		Container: true,
		Hostile:   hostileSamples(hostilePPTX(t)),
	})
}

func TestConformanceODP(t *testing.T) {
	extracttest.RunConformance(t, extracttest.Harness{
		Extractor: ODP{},
		Profile:   profileOf("odp"),
		Samples: []extracttest.Sample{
			{Name: "deck.odp", Data: readFile(t, "deck.odp")},
		},
		Big:       &extracttest.Sample{Name: "big.odp", Data: bigODP(t, 300)},
		Container: true,
		Hostile:   hostileSamples(hostileODP(t)),
		Limits:    extract.DefaultLimits(),
	})
}
