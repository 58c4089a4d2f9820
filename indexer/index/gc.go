package index

// Garbage collection: file versions superseded longer ago than the
// retention and pinned by no release are deleted with their objects.

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/weaviate/weaviate-go-client/v4/weaviate/filters"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"

	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/wvquery"
)

// CollectGarbage deletes file versions that were superseded more than
// retention ago and that no release pins (a release at R pins the version
// visible at R), with their sections and chunks. The latest version of every
// file is always kept. It returns how many versions it deleted.
func (w *Writer) CollectGarbage(ctx context.Context, project string, retention time.Duration) (int, error) {
	ctx, h, err := w.lock(ctx, project)
	if err != nil {
		return 0, err
	}
	defer h.unlock()
	releases, err := w.Releases(ctx, project)
	if err != nil {
		return 0, err
	}
	pins := make([]int64, 0, len(releases))
	for _, r := range releases {
		pins = append(pins, r.Sequence)
	}
	wm, err := w.Watermark(ctx, project)
	if err != nil {
		return 0, err
	}
	// Every Version, a page at a time: a project of more than 10,000
	// (Weaviate's QUERY_MAXIMUM_RESULTS) was collected only in the first
	// 10,000 it returned.
	byFile := map[string][]gcVersion{}
	err = w.eachPage(ctx, schema.VersionClass, project, intFilter("valid_from", filters.LessThanEqual, wm),
		[]graphql.Field{{Name: "file_id"}, {Name: "file_version_id"}, {Name: "valid_from"}, {Name: "committed_at"}},
		func(rows []map[string]any) error {
			for _, m := range rows {
				committed, _ := time.Parse(time.RFC3339Nano, wvquery.Str(m, "committed_at"))
				id := wvquery.Str(m, "file_id")
				byFile[id] = append(byFile[id], gcVersion{wvquery.Str(m, "file_version_id"), int64(wvquery.Float(m, "valid_from")), committed})
			}
			return nil
		})
	if err != nil {
		return 0, fmt.Errorf("gc versions of %s: %w", project, err)
	}
	classes := []string{schema.ChunkClass, schema.SectionClass, schema.VersionClass}
	if _, ok := w.vectorTenants.Load(project); ok || w.vectorClassExists(ctx) {
		// The collection may exist for other projects only: deleting from a
		// tenant that is not there fails, so make sure of it first.
		if err := w.ensureVectorTenant(ctx, project); err != nil {
			return 0, fmt.Errorf("gc vectors of %s: %w", project, err)
		}
		classes = append([]string{schema.ChunkVectorClass}, classes...)
	}
	cutoff := w.now().Add(-retention)
	deleted := 0
	for _, vs := range byFile {
		sort.Slice(vs, func(i, j int) bool { return vs[i].from < vs[j].from })
		runs := versionRuns(vs)
		for i := 0; i+1 < len(runs); i++ {
			run, next := vs[runs[i]], vs[runs[i+1]]
			if next.committed.After(cutoff) || pinned(pins, run.from, next.from) || laterRun(vs, runs, i) {
				continue
			}
			for _, class := range classes {
				if err := w.deleteWhere(ctx, class, project, textFilter("file_version_id", run.id)); err != nil {
					return deleted, fmt.Errorf("gc %s of version %s: %w", class, run.id, err)
				}
			}
			deleted++
		}
	}
	return deleted, nil
}

// versionRuns returns where each run of a file's Versions (sorted by
// valid_from) begins: consecutive Versions of one file version (an access
// change repeats the visible one, access.go) are one version, visible from
// its first Version's sequence until the next run's. Garbage collection
// deletes by file_version_id, so a run goes whole or not at all.
func versionRuns(vs []gcVersion) []int {
	var starts []int
	for i := range vs {
		if i == 0 || vs[i].id != vs[i-1].id {
			starts = append(starts, i)
		}
	}
	return starts
}

// laterRun reports whether the file version of the i-th run is visible
// again in a later run: its objects are then still in use. Not expected
// (a file version's id names its event), but deleting them would empty a
// visible version.
func laterRun(vs []gcVersion, runs []int, i int) bool {
	for _, r := range runs[i+1:] {
		if vs[r].id == vs[runs[i]].id {
			return true
		}
	}
	return false
}

// gcVersion is a Version as garbage collection reads it.
type gcVersion struct {
	id        string // file_version_id
	from      int64
	committed time.Time
}

// pinned reports whether some release sequence r has from <= r < to.
func pinned(pins []int64, from, to int64) bool {
	for _, r := range pins {
		if from <= r && r < to {
			return true
		}
	}
	return false
}

// vectorClassExists reports whether any vectors were ever written.
func (w *Writer) vectorClassExists(ctx context.Context) bool {
	exists, err := w.wv.Schema().ClassExistenceChecker().WithClassName(schema.ChunkVectorClass).Do(ctx)
	return err == nil && exists
}
