package extracttest

import (
	"fmt"
	"strings"

	"github.com/strata-kb/strata/ingestor/chunk"
	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
)

// MessageBytes is the most a file version's CHUNKS message may take for a
// document of textBytes of text: three times the text and 64 KiB. A
// message that grows faster than its text (a long title repeated in every
// heading path) takes an ingestor's memory with it.
func MessageBytes(textBytes int) int { return 3*textBytes + 64<<10 }

// CheckMessage chunks doc as the ingestor does (512 tokens, no overlap),
// encodes the file version's message as it publishes it and returns what
// breaks, or nil: the title and every heading-path entry within
// extract.MaxTitleBytes, the message within MessageBytes of the text.
func CheckMessage(doc *extract.Document) error {
	c, err := tokenCounter()
	if err != nil {
		return err
	}
	var pr problems
	if len(doc.Title) > extract.MaxTitleBytes {
		pr.add("title of %d bytes, more than %d", len(doc.Title), extract.MaxTitleBytes)
	}
	secs := chunk.Split(doc, c, chunk.Options{TargetTokens: 512})
	for _, s := range secs {
		for _, h := range s.HeadingPath {
			if len(h) > extract.MaxTitleBytes {
				pr.add("section %d: a heading-path entry of %d bytes, more than %d", s.Ordinal, len(h), extract.MaxTitleBytes)
				break
			}
		}
	}
	fileID := ids.File("acme", "", "docs/file")
	id := ids.FileVersion(fileID, "version", strings.Repeat("f", 64))
	fv := pipeline.FileVersion{FileVersionID: id, FileID: fileID, Checksum: strings.Repeat("f", 64), Format: doc.Format, Language: doc.Language,
		Pages: doc.Pages, Warnings: doc.Warnings, Title: doc.Title, Status: pipeline.StatusIndexed}
	fv.Sections, fv.Chunks = chunk.Parts(id, secs)
	body, err := pipeline.EncodeFileVersion(fv)
	if err != nil {
		return err
	}
	if limit := MessageBytes(len(doc.Text)); len(body) > limit {
		pr.add("a message of %d bytes for %d bytes of text (%d sections, %d chunks), more than %d", len(body), len(doc.Text), len(fv.Sections), len(fv.Chunks), limit)
	}
	if err := pr.err(); err != nil {
		return fmt.Errorf("message: %w", err)
	}
	return nil
}
