package store

import (
	"strings"
	"testing"

	"github.com/go-openapi/strfmt"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/schema"
)

// BenchmarkSectionRead is read of a section against a real weaviate-server:
// the Section object by id, then its chunks (10 of ~90 words). Side by side:
// the two reads in a row (read before its prefetch), at once with the
// chunks asked by section id alone (read's prefetch), and the chunk query
// alone (strata-bench's direct query). Run with -count to interleave them:
//
//	go test ./store -run '^$' -bench SectionRead -count 6
func BenchmarkSectionRead(b *testing.B) {
	s, fv, secID := sectionBenchIndex(b)
	ctx := asSystem()
	const project = "sectionbench"
	check := func(b *testing.B, rows []ChunkDetail, err error) {
		if err != nil || len(rows) != 10 {
			b.Fatalf("%d chunks, %v", len(rows), err)
		}
	}
	section := func(b *testing.B) {
		row, err := s.rowByID(ctx, schema.SectionClass, project, secID, 1)
		if err != nil || row == nil || sectionOf(row).FileVersionID != fv {
			b.Fatalf("section %v, %v", row, err)
		}
	}
	b.Run("in-a-row", func(b *testing.B) {
		for b.Loop() {
			section(b)
			rows, err := s.ChunkDetails(ctx, project, ChunkQuery{FileVersionID: fv, SectionID: secID, To: -1, At: 1, Limit: 201})
			check(b, rows, err)
		}
	})
	b.Run("at-once", func(b *testing.B) {
		for b.Loop() {
			done := make(chan struct{})
			var rows []ChunkDetail
			var err error
			go func() {
				defer close(done)
				rows, err = s.ChunkDetails(ctx, project, ChunkQuery{SectionID: secID, To: -1, At: 1, Limit: 201})
			}()
			section(b)
			<-done
			check(b, rows, err)
		}
	})
	b.Run("chunks-only", func(b *testing.B) {
		for b.Loop() {
			rows, err := s.ChunkDetails(ctx, project, ChunkQuery{FileVersionID: fv, SectionID: secID, To: -1, At: 1, Limit: 201})
			check(b, rows, err)
		}
	})
}

// BenchmarkChunkQueryProtocols is one chunk query (a section's 10 chunks,
// every field read needs) over GraphQL and over gRPC, in turns:
//
//	go test ./store -run '^$' -bench ChunkQueryProtocols -count 6
func BenchmarkChunkQueryProtocols(b *testing.B) {
	plain, fv, secID := sectionBenchIndex(b)
	fast := grpcStore(b, plain.wv)
	q := ChunkQuery{FileVersionID: fv, SectionID: secID, To: -1, At: 1, Limit: 201}
	for _, c := range []struct {
		name string
		s    *Store
	}{{"graphql", plain}, {"grpc", fast}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				rows, err := c.s.ChunkDetails(asSystem(), "sectionbench", q)
				if err != nil || len(rows) != 10 {
					b.Fatalf("%d chunks, %v", len(rows), err)
				}
			}
		})
	}
	if fast.GRPCFailures() != 0 {
		b.Fatalf("%d gRPC reads failed", fast.GRPCFailures())
	}
}

// sectionBenchIndex stores one file version of 10 sections of 10 chunks
// (~90 words each) and returns a GraphQL store, the version and its fifth section.
func sectionBenchIndex(b *testing.B) (s *Store, fv, secID string) {
	const project = "sectionbench"
	wv := weaviateWithTenant(b, project)
	fileID := ids.File(project, "", "s.md")
	fv = ids.FileVersion(fileID, "e1", "s1")
	words := strings.Repeat("lorem ipsum dolor sit amet consectetur adipiscing elit ", 11)
	var objs []*models.Object
	for sec := range 10 {
		secID := ids.Section(fv, sec)
		objs = append(objs, &models.Object{Class: schema.SectionClass, ID: strfmt.UUID(secID), Tenant: project, Properties: map[string]any{
			"file_id": fileID, "file_version_id": fv, "file_path": "s.md", "branch": "", "ordinal": sec, "title": "Section",
			"heading_path": []string{"Doc", "Section"}, "level": 2, "token_count": 1200, "chunk_count": 10, "valid_from": 1,
		}})
		for i := range 10 {
			index := sec*10 + i
			objs = append(objs, &models.Object{Class: schema.ChunkClass, ID: strfmt.UUID(ids.Chunk(fv, index)), Tenant: project, Properties: map[string]any{
				"content": words, "file_id": fileID, "file_version_id": fv, "file_path": "s.md", "branch": "", "index": index,
				"start_offset": 0, "end_offset": len(words), "token_count": 120, "source_checksum": "sum", "section_id": secID,
				"kind": "text", "valid_from": 1,
			}})
		}
	}
	putObjects(b, wv, objs...)
	return New(wv), fv, ids.Section(fv, 4)
}
