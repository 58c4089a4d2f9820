package pipeline

import (
	"strings"
	"time"
)

// RelabelsBucket holds the access changes the indexer is applying: while
// every object of a large document gets its new readers (seconds for
// thousands of chunks), queryd reads the document with the readers its
// Relabel names, so who may read it changes when the change is read, not
// when its last chunk is written. The indexer puts RelabelKey before it
// starts and deletes it when it is done; records of a crashed indexer age
// out (RelabelMaxAge).
const RelabelsBucket = "strata_relabels"

// RelabelMaxAge bounds how long a record outlives an indexer that died
// while applying it and never came back for the change.
const RelabelMaxAge = time.Hour

// Relabel is the value under a RelabelKey.
type Relabel struct {
	Project string `json:"project"`
	FileID  string `json:"file_id"`
	// FileVersionID is the file version the change applies to: once the
	// project commits another (new content, a delete), the record says
	// nothing about the file any more and readers ignore it.
	FileVersionID string `json:"file_version_id"`
	// Readers are the file's readers after the change (access.Readers).
	Readers []string `json:"readers"`
	// ReadAt orders records of one file: a later read wins.
	ReadAt time.Time `json:"read_at"`
	// AnnouncedAt is when the indexer put the record: readers ignore a
	// record older than RelabelMaxAge, as the bucket drops it.
	AnnouncedAt time.Time `json:"announced_at"`
}

// Expired reports whether r is older than RelabelMaxAge at now.
func (r Relabel) Expired(now time.Time) bool { return now.Sub(r.AnnouncedAt) > RelabelMaxAge }

// RelabelKey is the KV key of a file's access change: "<project>.<file id>".
func RelabelKey(project, fileID string) string { return project + "." + fileID }

// ParseRelabelKey splits a RelabelKey (project names hold no dot).
func ParseRelabelKey(key string) (project, fileID string, ok bool) {
	return strings.Cut(key, ".")
}
