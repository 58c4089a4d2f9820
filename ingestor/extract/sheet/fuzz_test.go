package sheet

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/extracttest"
)

// fuzzLimits are small so the fuzzer finds the limits' edges quickly.
func fuzzLimits() extract.Limits {
	return extract.Limits{Timeout: 10 * time.Second, MaxTextBytes: 64 << 10, MaxUncompressed: 1 << 20, MaxPages: 8}
}

// FuzzExtract hands every input to the three readers: each must give a
// document that keeps its format's promises, within the limits, or an
// error callers can classify, and stop within its timeout. The seeds are
// the files in testdata and small stored (uncompressed) archives, whose
// XML mutations reach.
func FuzzExtract(f *testing.F) {
	files, err := filepath.Glob("testdata/*.*")
	if err != nil {
		f.Fatal(err)
	}
	for _, name := range files {
		if filepath.Ext(name) == ".md" {
			continue
		}
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	stored := xlsxParts(`<row r="1">`+inline("A1", "Name")+`<c r="B1" t="s"><v>0</v></c></row><row r="3"><c r="A3" s="1"><v>45366</v></c><c r="C3" t="b"><v>1</v></c></row>`,
		`<row r="1"><c r="A1"><f>1+1</f><v>2</v></c></row>`)
	stored["xl/sharedStrings.xml"] = sstXML("Owner", "a shared string long enough to stand behind a placeholder while excelize reads")
	stored["xl/styles.xml"] = `<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><numFmts count="1"><numFmt numFmtId="164" formatCode="yyyy-mm-dd"/></numFmts>` +
		`<cellXfs count="2"><xf numFmtId="0"/><xf numFmtId="164"/></cellXfs></styleSheet>`
	f.Add(zipParts(f, stored, true))
	f.Add(zipParts(f, map[string]string{"content.xml": odsContent(odsSheet("S", "ta2", `<table:table-row table:number-rows-repeated="2">`+
		odsCell("a")+`<table:covered-table-cell/><table:table-cell table:number-columns-repeated="3" office:value-type="float" office:value="1"/></table:table-row>`))}, true))
	f.Add([]byte("sep=;\na;b\n1;\"2\n3\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		// A loop that ignores the timeout would hang the fuzzer silently;
		// crash instead, so the input is saved.
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-done:
			case <-time.After(3 * fuzzLimits().Timeout):
				panic("Extract ignored its timeout")
			}
		}()
		for _, r := range []struct {
			e extract.Extractor
			p extracttest.Profile
		}{{XLSX{}, xlsxProfile}, {ODS{}, odsProfile}, {CSV{}, csvProfile}} {
			doc, err := r.e.Extract(context.Background(), data, "fuzz", fuzzLimits())
			if err != nil {
				if !extracttest.Classified(err) {
					t.Fatalf("%T: unclassified error: %v", r.e, err)
				}
				continue
			}
			extracttest.Verify(t, doc, data, r.p)
			if err := extracttest.CheckLimits(doc, fuzzLimits()); err != nil {
				t.Fatalf("%T: %v", r.e, err)
			}
		}
	})
}
