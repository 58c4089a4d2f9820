package store

// The catalog's chunk index: the id of every chunk of every committed
// version, mapped to its file. A chunk id derives from its version's
// (ids.Chunk), so the index is computed from the Versions the catalog
// loads, without reading a chunk. It lets a read by id of a chunk the
// caller may not read be answered from memory, exactly as a read of a
// chunk that does not exist, and a readable one take the REST GET an
// admin's read takes: no filtered query, no time to tell them apart.

import (
	"context"

	"github.com/google/uuid"

	"github.com/strata-kb/strata/shared/ids"
)

// chunkIndex maps chunk ids to the index of their file in files. About 30
// bytes a chunk: 30 MB at a million.
type chunkIndex struct {
	file     map[uuid.UUID]uint32
	files    []string            // file ids
	fileNo   map[string]uint32   // file id -> index in files
	versions map[string]struct{} // file versions indexed (an access change repeats one)
}

func newChunkIndex() chunkIndex {
	return chunkIndex{file: map[uuid.UUID]uint32{}, fileNo: map[string]uint32{}, versions: map[string]struct{}{}}
}

// add indexes the chunks of v, once per file version.
func (x *chunkIndex) add(v Version) {
	if v.Deleted || v.ChunkCount == 0 || !ids.Valid(v.FileVersionID) {
		return
	}
	if _, done := x.versions[v.FileVersionID]; done {
		return
	}
	x.versions[v.FileVersionID] = struct{}{}
	n, ok := x.fileNo[v.FileID]
	if !ok {
		n = uint32(len(x.files))
		x.files = append(x.files, v.FileID)
		x.fileNo[v.FileID] = n
	}
	for i := range v.ChunkCount {
		if id, err := uuid.Parse(ids.Chunk(v.FileVersionID, i)); err == nil {
			x.file[id] = n
		}
	}
}

// chunkReadable reports, for a chunk id, whether the caller in ctx may
// read it as far as the catalog knows: known is false when the catalog
// cannot answer (not ready); readable is false for a chunk of a file the
// caller may not read and for an id no committed version has.
func (c *Catalog) chunkReadable(ctx context.Context, project, chunkID string) (readable, known bool) {
	id, err := uuid.Parse(chunkID)
	if err != nil {
		return false, false
	}
	known = c.readProject(project, func(pc *projectCatalog) {
		n, ok := pc.chunks.file[id]
		if !ok {
			return
		}
		list := pc.files[pc.chunks.files[n]]
		readable = len(list) > 0 && pc.readable(ctx, list[len(list)-1])
	})
	return readable, known
}
