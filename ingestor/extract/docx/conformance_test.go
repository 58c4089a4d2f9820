package docx

import (
	"archive/zip"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/extracttest"
)

func TestConformance(t *testing.T) {
	core := parts(t, para("Title", "Agreement")+para("berschrift1", "Terms")+para("", "Body."))
	core["docProps/core.xml"] = []byte(fullCoreXML)
	twoImages := parts(t, para("Heading2", "Pictures")+`<w:p>`+drawingRun(1, "rId10", "red", "")+drawingRun(2, "rId11", "", "photo")+`</w:p>`)
	var big strings.Builder
	for i := 0; big.Len() < 512<<10; i++ {
		if i%25 == 0 {
			big.WriteString(para("berschrift1", "Chapter"))
		}
		big.WriteString(para("", "A paragraph of a long contract, clause after clause, ", "with runs."))
		if i%40 == 0 {
			big.WriteString(table([]string{"Name", "Value"}, []string{"alpha", "1"}))
		}
	}
	deep := parts(t, strings.Repeat("<w:tbl><w:tr><w:tc>", 1000)+strings.Repeat("</w:tc></w:tr></w:tbl>", 1000))
	lying := lyingDocxs(t, 50<<20, 100)[0]
	extracttest.RunConformance(t, extracttest.Harness{
		Extractor: Extractor{},
		Profile:   profile,
		Samples: []extracttest.Sample{
			{Name: "rich.docx", Data: richDocx(t)},
			{Name: "core.docx", Data: zipParts(t, core)},
			{Name: "images.docx", Data: zipParts(t, twoImages)},
			{Name: "stored.docx", Data: zipPartsMethod(t, core, zip.Store)},
			{Name: "trailing.docx", Data: zipParts(t, trailingParts(t))},
		},
		Big:       &extracttest.Sample{Name: "big.docx", Data: docx(t, big.String())},
		Container: true,
		Hostile: []extracttest.Sample{
			{Name: "bomb.docx", Data: bombDocx(t, 300<<20), Want: extract.ErrTooLarge},
			{Name: "lying.docx", Data: lying, Want: extract.ErrTooLarge},
			{Name: "deep.docx", Data: zipParts(t, deep), Want: extract.ErrCorrupt},
			{Name: "entries.docx", Data: manyEntries(t, maxEntries+1), Want: extract.ErrTooLarge},
			{Name: "encrypted.docx", Data: oleFile("EncryptionInfo"), Want: extract.ErrEncrypted},
			{Name: "legacy.doc", Data: oleFile("WordDocument"), Want: extract.ErrUnsupported},
			{Name: "zip-encrypted.docx", Data: encryptedEntry(t), Want: extract.ErrEncrypted},
			{Name: "header-bomb.docx", Data: headerBomb(t, 300<<20), Want: extract.ErrTooLarge},
			{Name: "header-lying.docx", Data: lyingHeader(t, 20<<20), Want: extract.ErrTooLarge},
			{Name: "header-deep.docx", Data: trailingEdit(t, func(p map[string][]byte) {
				withHeader(p, "rId20", "header1.xml", deepTables(1000))
			})},
			{Name: "footnotes-laughs.docx", Data: trailingEdit(t, func(p map[string][]byte) {
				p["word/footnotes.xml"] = []byte(billionLaughs())
			})},
			{Name: "header-xxe.docx", Data: trailingEdit(t, func(p map[string][]byte) {
				withHeader(p, "rId20", "header1.xml", "")
				p["word/header1.xml"] = []byte(externalEntity())
			})},
		},
	})
}

// TestConformancePaged runs the suite on documents whose bodies record
// page breaks, held to the paged profile.
func TestConformancePaged(t *testing.T) {
	paged := parts(t, pagedBody())
	delete(paged, "word/media/fake.png")
	extracttest.RunConformance(t, extracttest.Harness{
		Extractor: Extractor{},
		Profile:   pagedProfile,
		Samples: []extracttest.Sample{
			{Name: "paged.docx", Data: zipParts(t, paged)},
			{Name: "paged-stored.docx", Data: zipPartsMethod(t, paged, zip.Store)},
			{Name: "trailing.docx", Data: trailingFixture(t)}, // LibreOffice's
		},
		Container: true,
		Known: map[string]string{
			"MaxPages": "MaxPages bounds the work of rendering PDF pages; a DOCX's pages are the breaks Word recorded, " +
				"its text is bounded by MaxTextBytes, and cutting at a page would drop text only from files Word happened to paginate",
		},
	})
}
