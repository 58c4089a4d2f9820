package index

// What the index records about a document rather than its content: who may
// read it and its metadata, both of which follow the object's tags. Every
// object of a file version carries its readers (schema.ReadersProperty) and
// every chunk and chunk vector its metadata (package metadata), so reads
// filter by both inside Weaviate. The Document also records why the groups
// could not be read and when the tags were read, which orders tag records:
// of two reads of one file's tags, the later wins (pipeline.Access.ReadAt).

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/strata-kb/strata/shared/access"
	"github.com/strata-kb/strata/shared/metadata"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/wvquery"
)

// labels are a file's readers and metadata as its objects record them.
type labels struct {
	readers []string  // access.Readers: groups, access.Everyone or access.Nobody
	err     string    // why the groups could not be read ("" if they could)
	readAt  time.Time // when the tags were read (zero: unknown)
	meta    metadata.Metadata
	sources metadata.Sources // what meta was merged from
	// metaWarnings are what the merge dropped.
	metaWarnings []string
	// noRange are the range properties the index has no room for
	// (metadata.MaxRangeKeys): the values stay in meta, never in a property.
	noRange map[string]bool
}

// labelsOf is what the index records for a file version as the ingestor
// read it. The metadata is merged from its sources again (the merge is
// deterministic, so it is the file version's), which also gives what the
// merge dropped.
func labelsOf(fv pipeline.FileVersion) labels {
	l := labels{readers: fv.Access.Readers(), err: fv.Access.Error, readAt: fv.Access.ReadAt, sources: fv.MetadataSources}
	l.meta, l.metaWarnings = metadata.Merge(l.sources)
	return l
}

// labelsOfChange is what a tag change records, the file's own metadata
// taken from file (the version it applies to).
func labelsOfChange(tc pipeline.TagsChanged, file metadata.Metadata) labels {
	l := labels{readers: tc.Access.Readers(), err: tc.Access.Error, readAt: tc.Access.ReadAt,
		sources: metadata.Sources{Tags: tc.Tags, Object: tc.UserMetadata, File: file}}
	l.meta, l.metaWarnings = metadata.Merge(l.sources)
	return l
}

// labelsOfProps reads the labels a Document (or Version) records. Objects
// written before access existed have none: empty readers, which only
// admins match (access.Grant.Matches), and a zero read time that any
// access read is newer than.
func labelsOfProps(props map[string]any) labels {
	a := labels{readers: wvquery.Strs(props, schema.ReadersProperty), err: wvquery.Str(props, "access_error"),
		metaWarnings: wvquery.Strs(props, schema.MetadataWarningsProperty)}
	if t, err := time.Parse(time.RFC3339Nano, wvquery.Str(props, "access_read_at")); err == nil {
		a.readAt = t
	}
	// Written by Strata itself: a value that does not decode is an index
	// older than metadata, which had none.
	_ = json.Unmarshal([]byte(wvquery.Str(props, schema.MetadataProperty)), &a.meta)
	_ = json.Unmarshal([]byte(wvquery.Str(props, schema.MetadataSourcesProperty)), &a.sources)
	return a
}

// labelsFor is the labels a commit of a file version read at a.ReadAt records:
// its own, unless the document holds a later read (an access change
// applied while the version was on its way), which wins.
func (c current) labelsFor(fv pipeline.FileVersion) labels {
	if c.exists && fv.Access.ReadAt.Before(c.labels.readAt) {
		// The document's tags with this version's own file metadata.
		l := c.labels
		l.sources.File = fv.MetadataSources.File
		l.meta, l.metaWarnings = metadata.Merge(l.sources)
		return l
	}
	return labelsOf(fv)
}

// deletedLabels are the labels of a file's delete: the file keeps its last
// readers, so a release that still shows it shows it to the same keys.
// A file the index never had is readable by admins only (fail closed).
func deletedLabels(doc current) labels {
	if !doc.exists {
		return labels{readers: []string{access.Nobody}}
	}
	return doc.labels
}

// same reports whether a and b give the same keys the same answer.
func (a labels) same(b labels) bool {
	return slices.Equal(a.readers, b.readers) && a.err == b.err && metaJSON(a.meta) == metaJSON(b.meta)
}
