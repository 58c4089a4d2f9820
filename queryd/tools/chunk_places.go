package tools

// read_around reads its anchor chunk, then the anchor's window: two Weaviate
// round trips in a row, because the window is asked for by the anchor's
// version and index. Agents mostly call it with chunk ids queryd has just
// returned (search hits, a section read), so queryd remembers where those
// chunks lie and asks for the window at once, one round trip.
//
// A place is never stale: a chunk's id derives from its version's and its
// index (ids.Chunk), and a version's chunks and sections never change. What
// does change, which version is current, is still checked on every call
// (against the watermark, as without a place), and the window's anchor row
// must come back as the place says, or the call takes the two-trip path.

import (
	"sync"

	"github.com/google/uuid"

	"github.com/strata-kb/strata/queryd/store"
	"github.com/strata-kb/strata/shared/ids"
)

// chunkPlace is where a chunk lies: what read_around needs to ask for the
// chunk's window and section in one query. Ids are kept as 16 bytes, not
// 36-byte strings: about 150 bytes a place.
type chunkPlace struct {
	project                      string
	fileID, fileVersionID        uuid.UUID
	sectionID                    uuid.UUID // zero: the chunk has no section
	index                        int
	sectionTokens, sectionChunks int
}

// placesPerGeneration bounds the places kept: two generations of this many
// (about 15 MB together), the older dropped when the newer fills, so places
// used recently stay.
const placesPerGeneration = 50_000

// chunkPlaces remembers the places of chunks queryd has returned, by chunk id.
type chunkPlaces struct {
	mu       sync.Mutex
	cur, old map[uuid.UUID]chunkPlace
}

func (p *chunkPlaces) get(id uuid.UUID) (chunkPlace, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pl, ok := p.cur[id]; ok {
		return pl, true
	}
	pl, ok := p.old[id]
	if ok {
		p.putLocked(id, pl)
	}
	return pl, ok
}

func (p *chunkPlaces) put(id uuid.UUID, pl chunkPlace) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.putLocked(id, pl)
}

func (p *chunkPlaces) putLocked(id uuid.UUID, pl chunkPlace) {
	if p.cur == nil {
		p.cur = map[uuid.UUID]chunkPlace{}
	}
	if len(p.cur) >= placesPerGeneration {
		p.old, p.cur = p.cur, make(map[uuid.UUID]chunkPlace, placesPerGeneration/4)
	}
	p.cur[id] = pl
}

// remember records the places of chunks read from project's main branch.
// A section chunk is remembered only when it carries its section's totals
// (chunks written before them do not), since read_around needs them to
// choose its query.
func (p *chunkPlaces) remember(project string, cs ...store.Chunk) {
	for _, c := range cs {
		if c.Branch != "" || (c.SectionID != "" && c.SectionChunks <= 0) {
			continue
		}
		id, err1 := uuid.Parse(c.ID)
		fileID, err2 := uuid.Parse(c.FileID)
		fv, err3 := uuid.Parse(c.FileVersionID)
		var sec uuid.UUID
		var err4 error
		if c.SectionID != "" {
			sec, err4 = uuid.Parse(c.SectionID)
		}
		if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
			continue
		}
		p.put(id, chunkPlace{project: project, fileID: fileID, fileVersionID: fv, sectionID: sec, index: c.Index,
			sectionTokens: c.SectionTokens, sectionChunks: c.SectionChunks})
	}
}

func (p *chunkPlaces) rememberDetails(project string, rows []store.ChunkDetail) {
	for _, r := range rows {
		p.remember(project, r.Chunk)
	}
}

// lookup returns id's place when it is known and consistent with id: a
// place is dropped unless id is the chunk id its version and index derive.
func (p *chunkPlaces) lookup(id string) (chunkPlace, bool) {
	key, err := uuid.Parse(id)
	if err != nil {
		return chunkPlace{}, false
	}
	pl, ok := p.get(key)
	if !ok || ids.Chunk(pl.fileVersionID.String(), pl.index) != id {
		return chunkPlace{}, false
	}
	return pl, true
}

// section is the place's section as read_around's query needs it; nil when
// the chunk has none.
func (pl chunkPlace) section() *store.Section {
	if pl.sectionID == (uuid.UUID{}) {
		return nil
	}
	return &store.Section{ID: pl.sectionID.String(), TokenCount: pl.sectionTokens, ChunkCount: pl.sectionChunks}
}

// matches reports whether row, read by the place's query, is the chunk the
// place describes, in the same section with the same totals.
func (pl chunkPlace) matches(row store.ChunkDetail) bool {
	if row.Branch != "" || row.FileID != pl.fileID.String() || row.FileVersionID != pl.fileVersionID.String() || row.Index != pl.index {
		return false
	}
	if pl.sectionID == (uuid.UUID{}) {
		return row.SectionID == ""
	}
	return row.SectionID == pl.sectionID.String() && row.Section != nil &&
		row.Section.TokenCount == pl.sectionTokens && row.Section.ChunkCount == pl.sectionChunks
}
