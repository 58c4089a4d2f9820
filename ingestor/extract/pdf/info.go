package pdf

import (
	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/shared/metadata"
)

// InfoMetadata types a PDF's document information dictionary (ISO 32000-1,
// 14.3.3), by entry name, as metadata: Title, Author, Subject are text;
// Keywords, one string, a list split at commas and semicolons;
// CreationDate and ModDate, PDF dates ("D:YYYYMMDDHHmmSSOHH'mm'") or dates
// as poppler prints them, are created and modified, left out with a
// warning when they are no dates (extract.ParseDate). Creator and Producer
// name the software, not the document, and are left out.
func InfoMetadata(info map[string]string) (metadata.Metadata, []string) {
	p := extract.NewProps("PDF document info")
	p.Text(extract.PropTitle, info["Title"])
	p.Text(extract.PropAuthor, info["Author"])
	p.Text(extract.PropSubject, info["Subject"])
	p.Keywords(extract.PropKeywords, info["Keywords"], ",;")
	p.Date(extract.PropCreated, info["CreationDate"])
	p.Date(extract.PropModified, info["ModDate"])
	return p.Metadata(), p.Warnings()
}
