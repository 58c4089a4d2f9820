package index

// Who may read a file, as the index records it: every object of a file
// version carries its readers (schema.ReadersProperty), so every read
// filters by them inside Weaviate. The Document also records why the groups
// could not be read and when they were read, which orders access records:
// of two reads of one file's groups, the later wins (pipeline.Access.ReadAt).

import (
	"slices"
	"time"

	"github.com/strata-kb/strata/shared/access"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
)

// acl is a file's readers as its objects record them.
type acl struct {
	readers []string  // access.Readers: groups, access.Everyone or access.Nobody
	err     string    // why the groups could not be read ("" if they could)
	readAt  time.Time // when the groups were read (zero: unknown)
}

// aclOf is what the index records for an access read by the ingestor.
func aclOf(a pipeline.Access) acl {
	return acl{readers: a.Readers(), err: a.Error, readAt: a.ReadAt}
}

// aclOfProps reads the acl a Document (or Version) records. Objects
// written before access existed have none: empty readers, which only
// admins match (access.Grant.Matches), and a zero read time that any
// access read is newer than.
func aclOfProps(props map[string]any) acl {
	a := acl{readers: strs(props[schema.ReadersProperty]), err: str(props, "access_error")}
	if t, err := time.Parse(time.RFC3339Nano, str(props, "access_read_at")); err == nil {
		a.readAt = t
	}
	return a
}

// aclFor is the acl a commit of a file version read at a.ReadAt records:
// its own, unless the document holds a later read (an access change
// applied while the version was on its way), which wins.
func (c current) aclFor(a pipeline.Access) acl {
	if c.exists && a.ReadAt.Before(c.acl.readAt) {
		return c.acl
	}
	return aclOf(a)
}

// deletedACL is the acl of a file's delete: the file keeps its last
// readers, so a release that still shows it shows it to the same keys.
// A file the index never had is readable by admins only (fail closed).
func deletedACL(doc current) acl {
	if !doc.exists {
		return acl{readers: []string{access.Nobody}}
	}
	return doc.acl
}

// same reports whether a and b give the same keys the same answer.
func (a acl) same(b acl) bool { return slices.Equal(a.readers, b.readers) && a.err == b.err }

// objectProps adds the readers to the properties of a Section, Chunk or ChunkVector.
func (a acl) objectProps(m map[string]any) map[string]any {
	m[schema.ReadersProperty] = nonNil(a.readers)
	return m
}

// versionProps adds the readers and the access error to a Version's properties.
func (a acl) versionProps(m map[string]any) map[string]any {
	m["access_error"] = a.err
	return a.objectProps(m)
}

// newVersionProps is versionProps for a Version being committed: it also
// records the readers it is committed with, which merges never change
// (schema.CommittedReadersProperty).
func (a acl) newVersionProps(m map[string]any) map[string]any {
	m[schema.CommittedReadersProperty] = nonNil(a.readers)
	return a.versionProps(m)
}

// documentProps adds the readers, the access error and the time they were
// read to a Document's properties.
func (a acl) documentProps(m map[string]any) map[string]any {
	if !a.readAt.IsZero() {
		m["access_read_at"] = a.readAt.UTC().Format(time.RFC3339Nano)
	}
	return a.versionProps(m)
}

// strs reads a text[] property as Weaviate returns it.
func strs(v any) []string {
	switch v := v.(type) {
	case []string:
		return v
	case []any:
		out := make([]string, 0, len(v))
		for _, s := range v {
			if s, ok := s.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
