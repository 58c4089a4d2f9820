package pipeline

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/strata-kb/strata/shared/ids"
)

// compactWire marks a message in the compact form of EncodeFileVersion.
const compactWire = 3

// EncodeFileVersion is fv as a CHUNKS message, in a form that grows with
// the text and little else, whatever the shape of the document: sections
// and chunks are sent as columns of small numbers, and what the receiver
// can derive is not sent: the sections' and chunks' IDs and ordinals, a
// chunk's section, checksum and end (its start plus its content's
// length), a section's offsets (those of its chunks). Each section's
// heading path is sent as what it adds to the previous section's, a title
// that is its path's last entry and a chunk's heading path that is its
// section's are left out, and nothing is HTML-escaped. A message once grew
// with the text times its heading depth (one long heading repeated in the
// path of every chunk under it) and took an ingestor's memory with it.
// UnmarshalJSON puts everything back.
func EncodeFileVersion(fv FileVersion) ([]byte, error) {
	w := wireFileVersion{plainFileVersion: plainFileVersion(fv), Wire: compactWire}
	w.Sections, w.Chunks = wireSections{}, wireChunks{}
	var prev []string
	paths := make(map[string][]string, len(fv.Sections))
	next := 0 // the first chunk of the section
	ws := &w.Sections
	for i, s := range fv.Sections {
		keep := 0
		for keep < len(prev) && keep < len(s.HeadingPath) && prev[keep] == s.HeadingPath[keep] {
			keep++
		}
		if s.Ordinal != i {
			return nil, fmt.Errorf("encode file version %s: section %d has ordinal %d", fv.FileVersionID, i, s.Ordinal)
		}
		ws.Keep = append(ws.Keep, keep)
		ws.Add = append(ws.Add, s.HeadingPath[keep:])
		if n := len(s.HeadingPath); n == 0 || s.Title != s.HeadingPath[n-1] {
			ws.Title = setAt(ws.Title, i, s.Title)
		}
		if s.Level != len(s.HeadingPath) {
			ws.Level = setAt(ws.Level, i, s.Level)
		}
		ws.Chunks = append(ws.Chunks, s.ChunkCount)
		ws.PageStart = append(ws.PageStart, s.PageStart)
		ws.PageSpan = append(ws.PageSpan, s.PageEnd-s.PageStart)
		// Offsets and tokens as the section's chunks make them, as a rule.
		first, last, tokens := 0, 0, 0
		if s.ChunkCount > 0 && next+s.ChunkCount <= len(fv.Chunks) {
			first, last = fv.Chunks[next].StartOffset, fv.Chunks[next+s.ChunkCount-1].EndOffset
			for _, c := range fv.Chunks[next : next+s.ChunkCount] {
				tokens += c.TokenCount
			}
		}
		ws.StartShift = append(ws.StartShift, s.StartOffset-first)
		ws.EndShift = append(ws.EndShift, s.EndOffset-last)
		if s.TokenCount != tokens {
			ws.Tokens = setAt(ws.Tokens, i, s.TokenCount)
		}
		next += s.ChunkCount
		prev = s.HeadingPath
		paths[s.ID] = s.HeadingPath
	}
	wc := &w.Chunks
	end := 0
	for i, c := range fv.Chunks {
		if c.Index != i {
			return nil, fmt.Errorf("encode file version %s: chunk %d has index %d", fv.FileVersionID, i, c.Index)
		}
		wc.Content = append(wc.Content, c.Content)
		wc.Gap = append(wc.Gap, c.StartOffset-end)
		if n := utf8.RuneCountInString(c.Content); c.EndOffset != c.StartOffset+n {
			wc.End = setAt(wc.End, i, c.EndOffset)
		}
		end = c.EndOffset
		wc.Tokens = append(wc.Tokens, c.TokenCount)
		if code := kindCode(c.Kind); code != "" {
			wc.Kind += code
		} else {
			wc.Kind += "?"
			wc.OtherKind = setAt(wc.OtherKind, i, c.Kind)
		}
		wc.PageStart = append(wc.PageStart, c.PageStart)
		wc.PageSpan = append(wc.PageSpan, c.PageEnd-c.PageStart)
		if p, ok := paths[c.SectionID]; !ok || !slices.Equal(c.HeadingPath, p) {
			wc.HeadingPath = setAt(wc.HeadingPath, i, c.HeadingPath)
		}
		if c.ImageRef != "" || c.ImageMIME != "" {
			wc.ImageRef, wc.ImageMIME = setAt(wc.ImageRef, i, c.ImageRef), setAt(wc.ImageMIME, i, c.ImageMIME)
		}
		if c.OCRConfidence != 0 {
			wc.OCR = setAt(wc.OCR, i, c.OCRConfidence)
		}
	}
	// Columns of nothing but zeros (pages of a format without pages,
	// offsets as the chunks make them) are left out.
	for _, col := range []*[]int{&ws.PageStart, &ws.PageSpan, &ws.StartShift, &ws.EndShift, &wc.PageStart, &wc.PageSpan} {
		if !slices.ContainsFunc(*col, func(v int) bool { return v != 0 }) {
			*col = nil
		}
	}
	for _, m := range fv.Members {
		b, err := EncodeFileVersion(m)
		if err != nil {
			return nil, fmt.Errorf("encode member %s of %s: %w", m.Object.Path, fv.FileVersionID, err)
		}
		w.Members = append(w.Members, b)
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
	var form struct {
		Wire int `json:"wire"`
	}
	if err := json.Unmarshal(b, &form); err != nil {
		return err
	}
	if form.Wire != compactWire {
		return json.Unmarshal(b, (*plainFileVersion)(fv))
	}
	var w wireFileVersion
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*fv = FileVersion(w.plainFileVersion)
	fv.Sections, fv.Chunks, fv.Members = nil, nil, nil
	for _, raw := range w.Members {
		var m FileVersion
		if err := json.Unmarshal(raw, &m); err != nil {
			return fmt.Errorf("file version %s: member: %w", fv.FileVersionID, err)
		}
		fv.Members = append(fv.Members, m)
	}
	ws, wc := w.Sections, w.Chunks
	nSec, nChunk := len(ws.Keep), len(wc.Content)
	if nSec > 0 {
		if err := uuid.Validate(fv.FileVersionID); err != nil { // the IDs derive from it
			return fmt.Errorf("file version id %q: %w", fv.FileVersionID, err)
		}
	}
	for _, col := range []*[]int{&ws.PageStart, &ws.PageSpan, &ws.StartShift, &ws.EndShift} {
		*col = zeros(*col, nSec)
	}
	for _, col := range []*[]int{&wc.PageStart, &wc.PageSpan} {
		*col = zeros(*col, nChunk)
	}
	for _, n := range []int{len(ws.Add), len(ws.Chunks), len(ws.PageStart), len(ws.PageSpan), len(ws.StartShift), len(ws.EndShift)} {
		if n != nSec {
			return fmt.Errorf("file version %s: section columns of %d and %d values", fv.FileVersionID, nSec, n)
		}
	}
	for _, n := range []int{len(wc.Gap), len(wc.Tokens), len(wc.Kind), len(wc.PageStart), len(wc.PageSpan)} {
		if n != nChunk {
			return fmt.Errorf("file version %s: chunk columns of %d and %d values", fv.FileVersionID, nChunk, n)
		}
	}
	if nChunk > 0 {
		fv.Chunks = make([]Chunk, nChunk)
	}
	end := 0
	for i := range nChunk {
		content := wc.Content[i]
		sum := sha256.Sum256([]byte(content))
		c := Chunk{ID: ids.Chunk(fv.FileVersionID, i), Index: i, Content: content, StartOffset: end + wc.Gap[i],
			TokenCount: wc.Tokens[i], SourceChecksum: hex.EncodeToString(sum[:]), Kind: kindName(wc.Kind[i : i+1]),
			PageStart: wc.PageStart[i], PageEnd: wc.PageStart[i] + wc.PageSpan[i],
			ImageRef: wc.ImageRef[key(i)], ImageMIME: wc.ImageMIME[key(i)], OCRConfidence: wc.OCR[key(i)],
			HeadingPath: wc.HeadingPath[key(i)]}
		if k, ok := wc.OtherKind[key(i)]; ok {
			c.Kind = k
		}
		c.EndOffset = c.StartOffset + utf8.RuneCountInString(content)
		if e, ok := wc.End[key(i)]; ok {
			c.EndOffset = e
		}
		end = c.EndOffset
		fv.Chunks[i] = c
	}
	if nSec > 0 {
		fv.Sections = make([]Section, nSec)
	}
	var prev []string
	next := 0 // the section's first chunk
	for i := range nSec {
		if ws.Keep[i] < 0 || ws.Keep[i] > len(prev) {
			return fmt.Errorf("file version %s: section %d keeps %d heading-path entries of %d", fv.FileVersionID, i, ws.Keep[i], len(prev))
		}
		if ws.Chunks[i] < 0 || next+ws.Chunks[i] > nChunk {
			return fmt.Errorf("file version %s: section %d has %d chunks, %d are left", fv.FileVersionID, i, ws.Chunks[i], nChunk-next)
		}
		path := append(slices.Clip(prev[:ws.Keep[i]]), ws.Add[i]...)
		if path == nil {
			path = []string{}
		}
		s := Section{ID: ids.Section(fv.FileVersionID, i), Ordinal: i, HeadingPath: path, Level: len(path),
			ChunkCount: ws.Chunks[i], PageStart: ws.PageStart[i], PageEnd: ws.PageStart[i] + ws.PageSpan[i]}
		if l, ok := ws.Level[key(i)]; ok {
			s.Level = l
		}
		if t, ok := ws.Title[key(i)]; ok {
			s.Title = t
		} else if len(path) > 0 {
			s.Title = path[len(path)-1]
		}
		first, last := 0, 0
		if s.ChunkCount > 0 {
			first, last = fv.Chunks[next].StartOffset, fv.Chunks[next+s.ChunkCount-1].EndOffset
		}
		s.StartOffset, s.EndOffset = first+ws.StartShift[i], last+ws.EndShift[i]
		for j := next; j < next+s.ChunkCount; j++ {
			s.TokenCount += fv.Chunks[j].TokenCount
			fv.Chunks[j].SectionID = s.ID
			if fv.Chunks[j].HeadingPath == nil {
				fv.Chunks[j].HeadingPath = path
			}
		}
		if n, ok := ws.Tokens[key(i)]; ok {
			s.TokenCount = n
		}
		next += s.ChunkCount
		fv.Sections[i] = s
		prev = path
	}
	if next != nChunk {
		return fmt.Errorf("file version %s: %d chunks belong to no section", fv.FileVersionID, nChunk-next)
	}
	return nil
}

// plainFileVersion has FileVersion's fields without its JSON methods.
type plainFileVersion FileVersion

// wireFileVersion is the compact form; its Sections and Chunks take the
// place of the embedded ones.
type wireFileVersion struct {
	plainFileVersion
	Wire     int          `json:"wire,omitempty"`
	Sections wireSections `json:"sections"`
	Chunks   wireChunks   `json:"chunks"`
	// Members are each in this compact form too.
	Members []json.RawMessage `json:"members,omitempty"`
}

// wireSections are the sections as columns, one value a section; the
// maps hold the few sections that differ from the rule, by position.
type wireSections struct {
	Keep       []int             `json:"keep"`             // heading-path entries of the previous section's this one starts with
	Add        [][]string        `json:"add"`              // the entries that follow them
	Title      map[string]string `json:"title,omitempty"`  // a title that is not the last heading-path entry
	Level      map[string]int    `json:"level,omitempty"`  // a level that is not the heading path's length
	Tokens     map[string]int    `json:"tokens,omitempty"` // a count that is not its chunks' sum
	Chunks     []int             `json:"chunks"`
	PageStart  []int             `json:"page_start,omitempty"`  // left out: all 0
	PageSpan   []int             `json:"page_span,omitempty"`   // page_end - page_start
	StartShift []int             `json:"start_shift,omitempty"` // start offset - its first chunk's
	EndShift   []int             `json:"end_shift,omitempty"`   // end offset - its last chunk's
}

// wireChunks are the chunks as columns, one value a chunk.
type wireChunks struct {
	Content     []string            `json:"content"`
	Gap         []int               `json:"gap"`           // start offset - the previous chunk's end
	End         map[string]int      `json:"end,omitempty"` // an end that is not start + the content's characters
	Tokens      []int               `json:"tokens"`
	Kind        string              `json:"kind"`                 // one letter a chunk (kindCode)
	OtherKind   map[string]string   `json:"other_kind,omitempty"` // a kind without a letter ("?")
	PageStart   []int               `json:"page_start,omitempty"`
	PageSpan    []int               `json:"page_span,omitempty"`
	HeadingPath map[string][]string `json:"heading_path,omitempty"` // a path that is not the section's
	ImageRef    map[string]string   `json:"image_ref,omitempty"`
	ImageMIME   map[string]string   `json:"image_mime,omitempty"`
	OCR         map[string]float64  `json:"ocr_confidence,omitempty"`
}

func key(i int) string { return strconv.Itoa(i) }

func setAt[V any](m map[string]V, i int, v V) map[string]V {
	if m == nil {
		m = map[string]V{}
	}
	m[key(i)] = v
	return m
}

// zeros is col, or n zeros when it was left out.
func zeros(col []int, n int) []int {
	if len(col) == 0 && n > 0 {
		return make([]int, n)
	}
	return col
}

// kindCode is a chunk kind in one letter, "" for a kind without one.
func kindCode(k string) string {
	switch k {
	case "text":
		return "t"
	case "code":
		return "c"
	case "table":
		return "b"
	case "image":
		return "i"
	}
	return ""
}

func kindName(c string) string {
	switch c {
	case "t":
		return "text"
	case "c":
		return "code"
	case "b":
		return "table"
	case "i":
		return "image"
	}
	return ""
}
