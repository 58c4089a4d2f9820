package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"time"
)

// KV buckets and NATS request subjects.
const (
	// ObjectStateBucket holds the freshness of every uploaded object, keyed by ObjectStateKey.
	ObjectStateBucket = "strata_objects"
	// CommitsBucket holds each project's published commit sequence (key =
	// project, value = the sequence as 8 bytes, big-endian). The indexer
	// writes it; queryd watches it to learn of commits.
	CommitsBucket = "strata_commits"
	// ReleaseCreateSubject takes a ReleaseRequest and answers a ReleaseReply.
	ReleaseCreateSubject = "strata.release.create"
	// ReleaseListSubject takes {"project": "..."} and answers the project's releases.
	ReleaseListSubject = "strata.release.list"
)

// Object freshness states.
const (
	StatePending  = "pending"  // the event arrived; not yet searchable
	StateIndexed  = "indexed"  // keyword-searchable at Sequence
	StateEmbedded = "embedded" // vectors written too
	StateFailed   = "failed"   // see Error
	StateDeleted  = "deleted"
)

// ObjectState is the freshness of the latest event seen for one object key.
type ObjectState struct {
	Key           string    `json:"key"`
	Project       string    `json:"project"`
	ETag          string    `json:"etag,omitempty"`
	VersionID     string    `json:"version_id,omitempty"`
	Sequencer     string    `json:"sequencer"`
	State         string    `json:"state"`
	Error         string    `json:"error,omitempty"`
	Sequence      int64     `json:"sequence,omitempty"` // commit sequence it became visible at
	FileVersionID string    `json:"file_version_id,omitempty"`
	UpdatedAt     time.Time `json:"updated_at"`
	// Stages says when this event reached each stage, so an operator sees
	// where an upload's time went (`nats kv get strata_objects <key>`).
	Stages StageTimes `json:"stages,omitzero"`
	// TagsDigest is Access.TagsDigest of the read of the object's tags and
	// user metadata that the index holds (what its readers and object
	// metadata come from), recorded by the indexer once it applied that
	// read: with the upload's commit, or with a tag change since. A tag
	// change keeps the ETag, so the reconcile pass compares this with the
	// digest of what the bucket listing shows to notice a tag change whose
	// notification was lost. Of two reads the later (TagsReadAt) is kept,
	// whatever the event, as the index keeps the later read on the
	// document. "" when not recorded (states written before it existed):
	// the pass then does not compare, rather than re-emit every such
	// object at once.
	TagsDigest string `json:"tags_digest,omitempty"`
	// TagsReadAt is Access.ReadAt of the read TagsDigest is of.
	TagsReadAt time.Time `json:"tags_read_at,omitzero"`
}

// StageTimes are the moments one event reached each stage; zero until it did.
// Uploaded is MinIO's clock, the others the workers'.
type StageTimes struct {
	Uploaded  time.Time `json:"uploaded,omitzero"`  // the bucket event's time
	Seen      time.Time `json:"seen,omitzero"`      // the ingestor received the event
	Extracted time.Time `json:"extracted,omitzero"` // the ingestor published the file version
	Committed time.Time `json:"committed,omitzero"` // keyword-searchable (or failed, or deleted)
	Embedded  time.Time `json:"embedded,omitzero"`  // vector-searchable
}

// Merge returns t with every zero stage filled from other: each stage keeps
// the first time it was recorded.
func (t StageTimes) Merge(other StageTimes) StageTimes {
	first := func(a, b time.Time) time.Time {
		if a.IsZero() {
			return b
		}
		return a
	}
	return StageTimes{
		Uploaded: first(t.Uploaded, other.Uploaded), Seen: first(t.Seen, other.Seen),
		Extracted: first(t.Extracted, other.Extracted), Committed: first(t.Committed, other.Committed),
		Embedded: first(t.Embedded, other.Embedded),
	}
}

// ObjectStateKey is the KV key of an object: "<project>.<sha256(key)[:32]>"
// (KV keys cannot hold arbitrary object keys).
func ObjectStateKey(project, objectKey string) string {
	sum := sha256.Sum256([]byte(objectKey))
	return project + "." + hex.EncodeToString(sum[:16])
}

// ReleaseRequest asks to pin the current sequence of a project's branch.
type ReleaseRequest struct {
	Project string `json:"project"`
	Branch  string `json:"branch,omitempty"` // "" = main
	Version string `json:"version"`          // e.g. v1.2.0; unique per project and branch
}

// Release is a pinned, readable point of a project's history.
type Release struct {
	ReleaseID string    `json:"release_id"`
	Project   string    `json:"project"`
	Branch    string    `json:"branch,omitempty"`
	BranchID  string    `json:"branch_id,omitempty"`
	Version   string    `json:"version"`
	Sequence  int64     `json:"sequence"`
	CreatedAt time.Time `json:"created_at"`
}

// ReleaseReply answers a release request: the release, or an error.
type ReleaseReply struct {
	Release *Release `json:"release,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// ReindexRequest asks the ingestor to list a project's objects again and
// re-emit work for them: `nats pub strata.reindex.acme '{"prefix":"docs/"}'`.
type ReindexRequest struct {
	Prefix string `json:"prefix,omitempty"` // path prefix within the project
	Branch string `json:"branch,omitempty"` // "" = main
	// Force re-processes objects whose current version is already indexed
	// (e.g. after an extractor upgrade); otherwise only objects with no
	// record or a different ETag are re-emitted, and objects whose tags or
	// user metadata differ from the recorded tags digest get a tag change.
	Force bool `json:"force,omitempty"`
	// Retag re-reads the tags and user metadata of objects whose current
	// version is indexed but whose state records no tags digest to compare
	// (ingested before digests were recorded): a tag change event for each,
	// nothing extracted or embedded again. Once they have one, unforced
	// reindexes (the reconcile pass) notice their lost tag changes too.
	Retag bool `json:"retag,omitempty"`
}

// EmbeddedBucket records which file versions have vectors of which model:
// the indexer puts EmbeddedKey once a version's vectors are written, and
// queryd counts embedded chunks from it without scanning the index.
const EmbeddedBucket = "strata_embedded"

// EmbeddedMark is the value under an EmbeddedKey.
type EmbeddedMark struct {
	Project       string `json:"project"`
	FileVersionID string `json:"file_version_id"`
	Model         string `json:"model"`
	Chunks        int    `json:"chunks"`
}

// EmbeddedKey is the key of (project, file version, model). Model names may
// hold characters KV keys cannot, so the model is hashed; the value names it.
func EmbeddedKey(project, fileVersionID, model string) string {
	h := sha256.Sum256([]byte(model))
	return project + "." + fileVersionID + "." + hex.EncodeToString(h[:8])
}
