// Package schema defines Strata's Weaviate collections and creates them.
// Multi-tenancy is on: one tenant per project, so projects are isolated and
// scale independently. Vectors are brought by Strata (vectorizer none).
package schema

import (
	"context"
	"fmt"
	"strings"

	"github.com/weaviate/weaviate-go-client/v4/weaviate"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/strata-kb/strata/shared/metadata"
)

// Collection (class) names.
const (
	DocumentClass = "Document"
	SectionClass  = "Section"
	ChunkClass    = "Chunk"
	// VersionClass records every applied file version and delete with the
	// commit range it was visible in, for reads as of a release.
	VersionClass = "Version"
	ReleaseClass = "Release"
	// ProjectStateClass holds one object per project: the published commit
	// sequence (watermark) every read is filtered by.
	ProjectStateClass = "ProjectState"
)

// The Chunk properties of the stemmed keyword index.
const (
	ContentTermsProperty = "content_terms"
	HeadingTermsProperty = "heading_terms"
)

// Classes lists every collection.
var Classes = []string{DocumentClass, SectionClass, ChunkClass, VersionClass, ReleaseClass, ProjectStateClass}

func text(name, tokenization string) *models.Property {
	return &models.Property{Name: name, DataType: []string{"text"}, Tokenization: tokenization,
		IndexSearchable: boolp(tokenization != "field"), IndexFilterable: boolp(true)}
}

// field is an exact-match text property (identifiers, paths, statuses).
func field(name string) *models.Property { return text(name, "field") }

// ReadersProperty holds who may read the object's document (package
// access): exact group names, Everyone or Nobody. Every class of a
// document's objects carries it, so every read filters by it inside
// Weaviate and a hidden document never takes a place in a result.
const ReadersProperty = "readers"

// readers is exact-match text[]: field tokenization keeps each group one
// token (word tokenization would split "eng-team" and drop stopwords).
// CommittedReadersProperty is a Version's readers as committed.
const CommittedReadersProperty = "committed_readers"

// ValidToProperty is the sequence of the commit that replaced (or deleted)
// the file version a chunk or vector belongs to; absent while it is the
// file's latest. Searches keep only rows not replaced as of the sequence
// they read at (Replaced), so Weaviate ranks current rows rather than a
// file's every version waiting for garbage collection. It may be set late
// or, after a crash, not at all, never too early: readers still check each
// row's version (queryd's catalog).
const ValidToProperty = "valid_to"

// The metadata a Document and a Version record (package metadata): the
// merged map and its sources as JSON, read but never filtered (the catalog
// filters listings; chunks carry what searches filter by), and what the
// merge dropped.
const (
	MetadataProperty         = "metadata"
	MetadataSourcesProperty  = "metadata_sources"
	MetadataWarningsProperty = "metadata_warnings"
)

func metadataProperties() []*models.Property {
	return []*models.Property{stored(MetadataProperty, "text"), stored(MetadataSourcesProperty, "text"), stored(MetadataWarningsProperty, "text[]")}
}

// metaTokens is a chunk's metadata tokens (metadata.TokensProperty):
// exact-match, like readers.
func metaTokens() *models.Property {
	return &models.Property{Name: metadata.TokensProperty, DataType: []string{"text[]"}, Tokenization: "field",
		IndexFilterable: boolp(true), IndexSearchable: boolp(false)}
}

// RangeProperty is the definition of a metadata range property
// (metadata.RangeProperty): a number or a date with a range index.
func RangeProperty(name string, k metadata.Kind) *models.Property {
	dataType := "number"
	if k == metadata.Date {
		dataType = "date"
	}
	return &models.Property{Name: name, DataType: []string{dataType}, IndexFilterable: boolp(true), IndexRangeFilters: boolp(true)}
}

func readers() *models.Property {
	return &models.Property{Name: ReadersProperty, DataType: []string{"text[]"}, Tokenization: "field",
		IndexFilterable: boolp(true), IndexSearchable: boolp(false)}
}

func textArray(name string) *models.Property {
	return &models.Property{Name: name, DataType: []string{"text[]"}, Tokenization: "word"}
}
func integer(name string) *models.Property {
	return &models.Property{Name: name, DataType: []string{"int"}}
}

// stored is a property that is read but never filtered or searched: no
// inverted index, so writing a chunk updates only the indexes reads use
// (sections and chunks are most of what a commit writes).
func stored(name, dataType string) *models.Property {
	p := &models.Property{Name: name, DataType: []string{dataType}, IndexFilterable: boolp(false), IndexSearchable: boolp(false)}
	if dataType == "text" || dataType == "text[]" {
		p.Tokenization = "field"
	}
	return p
}

// searchable is text for BM25 only (never an exact-match filter).
func searchable(name string) *models.Property {
	return &models.Property{Name: name, DataType: []string{"text"}, Tokenization: "word", IndexSearchable: boolp(true), IndexFilterable: boolp(false)}
}

// analysed holds shared/terms output: stemmed terms separated by spaces,
// which BM25 must take as they are (Weaviate has no stemmer).
func analysed(name string) *models.Property {
	return &models.Property{Name: name, DataType: []string{"text"}, Tokenization: "whitespace", IndexSearchable: boolp(true), IndexFilterable: boolp(false)}
}

// sequence is a commit sequence: every read filters it by range
// (valid_from <= W, rollbacks > W), so it gets Weaviate's range index;
// without one a range filter walks one bitmap per distinct value, a cost
// that grows with the number of commits.
func sequence(name string) *models.Property {
	return &models.Property{Name: name, DataType: []string{"int"}, IndexFilterable: boolp(true), IndexRangeFilters: boolp(true)}
}
func date(name string) *models.Property {
	return &models.Property{Name: name, DataType: []string{"date"}}
}
func boolean(name string) *models.Property {
	return &models.Property{Name: name, DataType: []string{"boolean"}}
}
func boolp(b bool) *bool { return &b }

// Definitions returns the collection definitions.
func Definitions() []*models.Class {
	return []*models.Class{
		collection(&models.Class{
			Class:       DocumentClass,
			Description: "The current state of one file on one branch: its latest version, status and statistics.",
			Properties: append([]*models.Property{
				field("file_id"), field("file_path"), text("name", "word"), field("folder"), field("branch"),
				field("object_key"), field("etag"), field("version_id"), field("sequencer"),
				field("file_version_id"), field("checksum"), field("format"), field("language"), integer("pages"),
				textArray("warnings"), text("title", "word"),
				field("status"), text("error", "word"), boolean("deleted"), integer("size"),
				integer("text_length"), integer("token_count"), integer("chunk_count"), integer("section_count"),
				field("content_type"), date("updated_at"), date("ingested_at"), integer("commit_seq"),
				readers(), text("access_error", "word"), date("access_read_at"),
			}, metadataProperties()...),
		}),
		collection(&models.Class{
			Class:       SectionClass,
			Description: "A heading-delimited section of a file version, with statistics for adaptive reads.",
			Properties: []*models.Property{
				field("file_id"), field("file_version_id"), field("file_path"), field("branch"),
				stored("ordinal", "int"), stored("title", "text"), stored("heading_path", "text[]"), stored("level", "int"),
				stored("start_offset", "int"), stored("end_offset", "int"), stored("token_count", "int"), stored("chunk_count", "int"),
				stored("page_start", "int"), stored("page_end", "int"),
				sequence("valid_from"), readers(),
			},
		}),
		collection(&models.Class{
			Class:       ChunkClass,
			Description: "A retrievable chunk of a file version (Veryfront chunk fields plus structure).",
			InvertedIndexConfig: &models.InvertedIndexConfig{
				Bm25: &models.BM25Config{K1: ChunkBM25.K1, B: ChunkBM25.B},
			},
			Properties: []*models.Property{
				searchable("content"),
				// The stemmed keyword index (shared/terms): the content's terms, and
				// the document title's and headings' terms, which queries weight higher.
				analysed(ContentTermsProperty), analysed(HeadingTermsProperty),
				field("file_id"), field("file_version_id"), field("file_path"), field("branch"),
				integer("index"), stored("start_offset", "int"), stored("end_offset", "int"), stored("token_count", "int"),
				stored("source_checksum", "text"), stored("created_at", "date"), field("section_id"), stored("heading_path", "text[]"),
				stored("embedding_status", "text"), stored("embedding_model", "text"), stored("kind", "text"), stored("page_start", "int"),
				stored("page_end", "int"), stored("image_ref", "text"), stored("image_mime", "text"),
				// The mean OCR confidence of text read from a scan or a picture; absent otherwise.
				stored("ocr_confidence", "number"),
				// The chunk's section as of the same version (sections are immutable
				// versions too), so a chunk read needs no second read for its section's
				// name and statistics; 0 chunks means "not recorded" (older chunks).
				stored("section_title", "text"), stored("section_heading_path", "text[]"), stored("section_ordinal", "int"),
				stored("section_token_count", "int"), stored("section_chunk_count", "int"),
				sequence("valid_from"), sequence(ValidToProperty), readers(), metaTokens(),
			},
		}),
		collection(&models.Class{
			Class:       VersionClass,
			Description: "One committed file version or delete; a file's visible version at sequence W is its Version with the greatest valid_from <= W.",
			Properties: append([]*models.Property{
				field("file_id"), field("file_path"), field("branch"), field("file_version_id"), field("sequencer"),
				field("etag"), field("status"), text("error", "word"), boolean("deleted"), text("title", "word"),
				field("format"), integer("chunk_count"), sequence("valid_from"), date("committed_at"), date("ingested_at"),
				readers(), text("access_error", "word"),
				// The readers the version was committed with, never changed
				// afterwards (readers follows the document's groups): the
				// change feed judges each end of its range by them.
				stored(CommittedReadersProperty, "text[]"),
			}, metadataProperties()...),
		}),
		collection(&models.Class{
			Class:       ReleaseClass,
			Description: "A release: a version string pinning a commit sequence of a project branch.",
			Properties: []*models.Property{
				field("version"), field("branch"), integer("sequence"), date("created_at"),
			},
		}),
		collection(&models.Class{
			Class:       ProjectStateClass,
			Description: "The project's published commit sequence (watermark).",
			Properties:  []*models.Property{integer("sequence"), date("updated_at")},
		}),
	}
}

// collection is c as every collection Definitions lists is: one tenant
// per project, created explicitly rather than by a first write, and no
// vectorizer (their objects have no vectors; ChunkVector, which holds them,
// is made apart by EnsureVectorSpace).
func collection(c *models.Class) *models.Class {
	c.Vectorizer = "none"
	c.MultiTenancyConfig = &models.MultiTenancyConfig{Enabled: true, AutoTenantCreation: false}
	return c
}

// Ensure creates every missing collection. Existing ones are left as they are.
func Ensure(ctx context.Context, c *weaviate.Client) error { return EnsureReplicated(ctx, c, 1) }

// EnsureReplicated is Ensure on a multi-node Weaviate: new collections keep
// factor copies of every shard (existing ones keep theirs).
func EnsureReplicated(ctx context.Context, c *weaviate.Client, factor int) error {
	for _, class := range Definitions() {
		class.ReplicationConfig = replication(factor)
		exists, err := c.Schema().ClassExistenceChecker().WithClassName(class.Class).Do(ctx)
		if err != nil {
			return fmt.Errorf("check collection %s: %w", class.Class, err)
		}
		if exists {
			if err := addMissingProperties(ctx, c, class); err != nil {
				return err
			}
			continue
		}
		if err := c.Schema().ClassCreator().WithClass(class).Do(ctx); err != nil {
			if strings.Contains(err.Error(), "already exists") { // a concurrent creator won
				continue
			}
			return fmt.Errorf("create collection %s: %w", class.Class, err)
		}
	}
	return nil
}

// existing reads collection class as Weaviate has it; nil when it does
// not exist.
func existing(ctx context.Context, c *weaviate.Client, class string) (*models.Class, error) {
	exists, err := c.Schema().ClassExistenceChecker().WithClassName(class).Do(ctx)
	if err != nil || !exists {
		return nil, err
	}
	have, err := c.Schema().ClassGetter().WithClassName(class).Do(ctx)
	if err != nil {
		return nil, fmt.Errorf("read collection %s: %w", class, err)
	}
	return have, nil
}

// addMissingProperties brings an existing collection up to the current
// definition, so an index written by an older version keeps working: new
// properties, and the BM25 parameters chosen since (they apply at query time).
func addMissingProperties(ctx context.Context, c *weaviate.Client, want *models.Class) error {
	have, err := c.Schema().ClassGetter().WithClassName(want.Class).Do(ctx)
	if err != nil {
		return fmt.Errorf("read collection %s: %w", want.Class, err)
	}
	if w := want.InvertedIndexConfig; w != nil && w.Bm25 != nil {
		if h := have.InvertedIndexConfig; h == nil || h.Bm25 == nil || *h.Bm25 != *w.Bm25 {
			if err := SetBM25(ctx, c, want.Class, *w.Bm25); err != nil {
				return err
			}
		}
	}
	names := map[string]bool{}
	for _, p := range have.Properties {
		names[p.Name] = true
	}
	for _, p := range want.Properties {
		if names[p.Name] {
			continue
		}
		if err := c.Schema().PropertyCreator().WithClassName(want.Class).WithProperty(p).Do(ctx); err != nil && !strings.Contains(err.Error(), "already exists") {
			return fmt.Errorf("add property %s to %s: %w", p.Name, want.Class, err)
		}
	}
	return nil
}

// EnsureTenant creates the project's tenant in every collection.
func EnsureTenant(ctx context.Context, c *weaviate.Client, project string) error {
	return EnsureTenantIn(ctx, c, project, Classes...)
}

// EnsureTenantIn creates the project's tenant in the given collections.
func EnsureTenantIn(ctx context.Context, c *weaviate.Client, project string, classes ...string) error {
	for _, class := range classes {
		ts, err := c.Schema().TenantsGetter().WithClassName(class).Do(ctx)
		if err != nil {
			return fmt.Errorf("list tenants of %s: %w", class, err)
		}
		found := false
		for _, t := range ts {
			if t.Name == project {
				found = true
				break
			}
		}
		if found {
			continue
		}
		err = c.Schema().TenantsCreator().WithClassName(class).WithTenants(models.Tenant{Name: project}).Do(ctx)
		if err != nil && !strings.Contains(err.Error(), "already exists") {
			return fmt.Errorf("create tenant %s in %s: %w", project, class, err)
		}
	}
	return nil
}

// NewClient returns a Weaviate client for host (host:port, http) with an API
// key. host may list several nodes of one cluster, comma-separated. Reads
// are hedged and retried across the nodes (see hedge.go: after the Raft
// leader's loss a read waits on every node until a new leader is elected,
// and some never return); writes go to one node and move on only when it
// is unreachable, or when marked Idempotent, also when an attempt runs out
// of time (failover.go). Deadlines are ClientOptions' defaults. gRPC
// (batches) is used with a single host only: it names one node, so with
// several, batches go over REST through the failover.
func NewClient(host, grpcHost, apiKey string) (*weaviate.Client, error) {
	return NewClientWith(host, grpcHost, apiKey, ClientOptions{})
}

// TenantExists reports whether project has a tenant (has ever had a file).
func TenantExists(ctx context.Context, c *weaviate.Client, project string) (bool, error) {
	ts, err := c.Schema().TenantsGetter().WithClassName(ChunkClass).Do(ctx)
	if err != nil {
		return false, fmt.Errorf("list tenants: %w", err)
	}
	for _, t := range ts {
		if t.Name == project {
			return true, nil
		}
	}
	return false, nil
}

// Projects lists every project with a tenant.
func Projects(ctx context.Context, c *weaviate.Client) ([]string, error) {
	ts, err := c.Schema().TenantsGetter().WithClassName(ChunkClass).Do(ctx)
	if err != nil {
		return nil, fmt.Errorf("list tenants: %w", err)
	}
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out, nil
}

// replication is the replication config of a collection (nil: Weaviate's default, 1).
func replication(factor int) *models.ReplicationConfig {
	if factor <= 1 {
		return nil
	}
	return &models.ReplicationConfig{Factor: int64(factor)}
}
