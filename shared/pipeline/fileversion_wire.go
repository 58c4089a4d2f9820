package pipeline

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/strata-kb/strata/shared/ids"
)

// compactWire marks a message in the compact form of EncodeFileVersion.
const compactWire = 2

// EncodeFileVersion is fv as a CHUNKS message, in a form that grows with
// the text and nothing else: what the decoder can derive is not sent (the
// sections' and chunks' IDs, a chunk's section and checksum), each
// section's heading path is sent as the entries it adds to the previous
// section's, a title that is its path's last entry and a chunk's heading
// path that is its section's are left out, and nothing is HTML-escaped.
// An unbounded message (one long heading repeated in the path of every
// section and chunk under it) once took an ingestor's memory with it.
// UnmarshalJSON puts everything back.
func EncodeFileVersion(fv FileVersion) ([]byte, error) {
	w := wireFileVersion{plainFileVersion: plainFileVersion(fv), Wire: compactWire,
		Sections: make([]wireSection, len(fv.Sections)), Chunks: make([]wireChunk, len(fv.Chunks))}
	var prev []string
	paths := make(map[string][]string, len(fv.Sections))
	for i, s := range fv.Sections {
		keep := 0
		for keep < len(prev) && keep < len(s.HeadingPath) && prev[keep] == s.HeadingPath[keep] {
			keep++
		}
		ws := wireSection{Ordinal: s.Ordinal, Title: s.Title, Keep: keep, Add: s.HeadingPath[keep:], Level: s.Level,
			StartOffset: s.StartOffset, EndOffset: s.EndOffset, TokenCount: s.TokenCount, ChunkCount: s.ChunkCount,
			PageStart: s.PageStart, PageEnd: s.PageEnd}
		if n := len(s.HeadingPath); n > 0 && s.Title == s.HeadingPath[n-1] {
			ws.Title = ""
		}
		w.Sections[i] = ws
		prev = s.HeadingPath
		paths[s.ID] = s.HeadingPath
	}
	for i, c := range fv.Chunks {
		wc := wireChunk{Index: c.Index, Content: c.Content, StartOffset: c.StartOffset, EndOffset: c.EndOffset,
			TokenCount: c.TokenCount, Kind: c.Kind, PageStart: c.PageStart, PageEnd: c.PageEnd,
			ImageRef: c.ImageRef, ImageMIME: c.ImageMIME, OCR: c.OCRConfidence}
		if p, ok := paths[c.SectionID]; !ok || !slices.Equal(c.HeadingPath, p) {
			wc.HeadingPath = c.HeadingPath
		}
		w.Chunks[i] = wc
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(w); err != nil {
		return nil, fmt.Errorf("encode file version %s: %w", fv.FileVersionID, err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// UnmarshalJSON decodes a file version in either form: EncodeFileVersion's
// compact one, or every field written out (json.Marshal's, and an older
// ingestor's messages in a replayed stream).
func (fv *FileVersion) UnmarshalJSON(b []byte) error {
	var w wireFileVersion
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if w.Wire != compactWire {
		return json.Unmarshal(b, (*plainFileVersion)(fv))
	}
	*fv = FileVersion(w.plainFileVersion)
	fv.Sections, fv.Chunks = nil, nil
	if len(w.Sections) > 0 {
		fv.Sections = make([]Section, len(w.Sections))
	}
	if len(w.Chunks) > 0 {
		fv.Chunks = make([]Chunk, len(w.Chunks))
	}
	if len(w.Sections) > 0 {
		if err := uuid.Validate(fv.FileVersionID); err != nil { // the IDs derive from it
			return fmt.Errorf("file version id %q: %w", fv.FileVersionID, err)
		}
	}
	var prev []string
	next := 0 // the next chunk to give a section
	for i, ws := range w.Sections {
		if ws.Keep < 0 || ws.Keep > len(prev) {
			return fmt.Errorf("file version %s: section %d keeps %d heading-path entries of %d", fv.FileVersionID, ws.Ordinal, ws.Keep, len(prev))
		}
		path := append(slices.Clip(prev[:ws.Keep]), ws.Add...)
		if path == nil {
			path = []string{}
		}
		s := Section{ID: ids.Section(fv.FileVersionID, ws.Ordinal), Ordinal: ws.Ordinal, Title: ws.Title, HeadingPath: path,
			Level: ws.Level, StartOffset: ws.StartOffset, EndOffset: ws.EndOffset, TokenCount: ws.TokenCount,
			ChunkCount: ws.ChunkCount, PageStart: ws.PageStart, PageEnd: ws.PageEnd}
		if s.Title == "" && len(path) > 0 {
			s.Title = path[len(path)-1]
		}
		if ws.ChunkCount < 0 || next+ws.ChunkCount > len(w.Chunks) {
			return fmt.Errorf("file version %s: section %d has %d chunks, %d are left", fv.FileVersionID, ws.Ordinal, ws.ChunkCount, len(w.Chunks)-next)
		}
		for _, wc := range w.Chunks[next : next+ws.ChunkCount] {
			sum := sha256.Sum256([]byte(wc.Content))
			c := Chunk{ID: ids.Chunk(fv.FileVersionID, wc.Index), Index: wc.Index, SectionID: s.ID, Content: wc.Content,
				StartOffset: wc.StartOffset, EndOffset: wc.EndOffset, TokenCount: wc.TokenCount,
				SourceChecksum: hex.EncodeToString(sum[:]), HeadingPath: wc.HeadingPath, Kind: wc.Kind,
				PageStart: wc.PageStart, PageEnd: wc.PageEnd, ImageRef: wc.ImageRef, ImageMIME: wc.ImageMIME,
				OCRConfidence: wc.OCR}
			if c.HeadingPath == nil {
				c.HeadingPath = path
			}
			fv.Chunks[next] = c
			next++
		}
		fv.Sections[i] = s
		prev = path
	}
	if next != len(w.Chunks) {
		return fmt.Errorf("file version %s: %d chunks belong to no section", fv.FileVersionID, len(w.Chunks)-next)
	}
	return nil
}

// plainFileVersion has FileVersion's fields without its JSON methods.
type plainFileVersion FileVersion

// wireFileVersion is the compact form; its Sections and Chunks take the
// place of the embedded ones.
type wireFileVersion struct {
	plainFileVersion
	Wire     int           `json:"wire,omitempty"`
	Sections []wireSection `json:"sections"`
	Chunks   []wireChunk   `json:"chunks"`
}

type wireSection struct {
	Ordinal     int      `json:"ordinal"`
	Title       string   `json:"title,omitempty"` // when it is not the last heading-path entry
	Keep        int      `json:"keep,omitempty"`  // entries of the previous section's heading path this one starts with
	Add         []string `json:"add,omitempty"`   // the entries that follow them
	Level       int      `json:"level,omitempty"`
	StartOffset int      `json:"start_offset"`
	EndOffset   int      `json:"end_offset"`
	TokenCount  int      `json:"token_count"`
	ChunkCount  int      `json:"chunk_count"`
	PageStart   int      `json:"page_start,omitempty"`
	PageEnd     int      `json:"page_end,omitempty"`
}

type wireChunk struct {
	Index       int      `json:"index"`
	Content     string   `json:"content"`
	StartOffset int      `json:"start_offset"`
	EndOffset   int      `json:"end_offset"`
	TokenCount  int      `json:"token_count"`
	HeadingPath []string `json:"heading_path,omitempty"` // only when it is not its section's
	Kind        string   `json:"kind"`
	PageStart   int      `json:"page_start,omitempty"`
	PageEnd     int      `json:"page_end,omitempty"`
	ImageRef    string   `json:"image_ref,omitempty"`
	ImageMIME   string   `json:"image_mime,omitempty"`
	OCR         float64  `json:"ocr_confidence,omitempty"`
}
