// Package ingest turns one bucket event into work for the indexer and the
// embedder: it fetches the object version the event names, extracts its text,
// chunks it and publishes the whole file version as one message (or a delete).
package ingest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"mime"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/sync/semaphore"

	"github.com/strata-kb/strata/ingestor/chunk"
	"github.com/strata-kb/strata/ingestor/event"
	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/container"
	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/metadata"
	"github.com/strata-kb/strata/shared/objkey"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/worker"
)

// ErrGone means the object no longer has the version an event named: a newer
// event (overwrite or delete) is on its way and will be processed instead.
var ErrGone = errors.New("object version gone")

// ErrTooLarge means the object exceeds the configured size limit.
var ErrTooLarge = errors.New("object too large")

// ObjectStore reads object versions.
type ObjectStore interface {
	// Get returns the object's bytes and user metadata if its ETag is still
	// etag, ErrGone if it changed or disappeared, ErrTooLarge past maxBytes.
	Get(ctx context.Context, bucket, key, etag string, maxBytes int64) (Fetched, error)
	// Metadata returns the user metadata of a version (the latest if
	// versionID is ""), ErrGone if it is gone or its ETag is no longer
	// etag ("": any).
	Metadata(ctx context.Context, bucket, key, versionID, etag string) (map[string]string, error)
	// Tags returns the tags of a version (the latest if versionID is ""),
	// ErrGone if it is gone.
	Tags(ctx context.Context, bucket, key, versionID string) (map[string]string, error)
}

// Fetched is an object version's bytes and user metadata.
type Fetched struct {
	Data []byte
	// Metadata is the user metadata without its x-amz-meta- prefix, keys
	// in whatever case the store returns (MinIO: "Strata-Groups").
	Metadata map[string]string
}

// States records object freshness (freshness.Store).
type States interface {
	Put(ctx context.Context, st pipeline.ObjectState) error
	// Get returns the recorded state of an object key, nil if none.
	Get(ctx context.Context, project, objectKey string) (*pipeline.ObjectState, error)
}

// Publisher publishes a message once (msgID dedupes retries and replays).
type Publisher interface {
	Publish(ctx context.Context, subject, msgID string, headers map[string]string, data []byte) error
}

// Extractor reads a file's text and structure (detect.Registry).
type Extractor interface {
	Extract(ctx context.Context, data []byte, name string, lim extract.Limits) (*extract.Document, error)
}

// AssetStore keeps images that image chunks show.
type AssetStore interface {
	// PutAsset stores data under key and returns its reference "<bucket>/<key>".
	PutAsset(ctx context.Context, key string, data []byte, mime string) (string, error)
}

// Config bounds ingestion.
type Config struct {
	MaxObjectBytes int64
	// ObjectBytesInFlight bounds the object bytes read at once (by the
	// events' sizes), so a few large files wait for room rather than take
	// the ingestor's memory together; at least MaxObjectBytes (the flag's
	// check). 0 here: no bound (tests).
	ObjectBytesInFlight int64
	TargetTokens        int
	OverlapTokens       int
	Limits              extract.Limits
	// Isolated reads a file again in a process of its own after an
	// attempt at it was cut short (isolate.Isolated); nil: in process.
	Isolated Extractor
}

// Ingestor handles bucket events.
type Ingestor struct {
	cfg       Config
	store     ObjectStore
	assets    AssetStore
	extractor Extractor
	pub       Publisher
	states    States
	counter   chunk.Counter
	log       *slog.Logger
	now       func() time.Time
	inFlight  *semaphore.Weighted // object bytes being read; nil: no bound
	copies    copies              // uploads being read here, and those published
}

// New returns an Ingestor.
func New(cfg Config, store ObjectStore, assets AssetStore, extractor Extractor, pub Publisher, states States, counter chunk.Counter, log *slog.Logger) *Ingestor {
	in := &Ingestor{cfg: cfg, store: store, assets: assets, extractor: extractor, pub: pub, states: states, counter: counter, log: log, now: time.Now}
	if cfg.ObjectBytesInFlight > 0 {
		in.inFlight = semaphore.NewWeighted(cfg.ObjectBytesInFlight)
	}
	return in
}

// admit waits until the object of r fits the object bytes in flight and
// returns the function that gives its room back. An object over
// -max-object-bytes takes none (the fetch refuses it unread), and one of
// unknown size none either (the fetch bounds it).
func (in *Ingestor) admit(ctx context.Context, r event.Record) (func(), error) {
	if in.inFlight == nil || r.Size <= 0 || (in.cfg.MaxObjectBytes > 0 && r.Size > in.cfg.MaxObjectBytes) {
		return func() {}, nil
	}
	n := min(r.Size, in.cfg.ObjectBytesInFlight)
	if err := in.inFlight.Acquire(ctx, n); err != nil {
		return nil, fmt.Errorf("wait for room to read %s (%d bytes; -object-bytes-in-flight): %w", r.Key, r.Size, err)
	}
	return func() { in.inFlight.Release(n) }, nil
}

// HandleEvent processes one notification message the first time it is
// delivered. Malformed events and hostile keys are permanent errors; fetch
// and publish failures are retried.
func (in *Ingestor) HandleEvent(ctx context.Context, data []byte) error {
	return in.HandleDelivery(ctx, data, 1)
}

// HandleDelivery processes one notification message on its delivered-th
// delivery. A message delivered again may be one whose attempt was cut short
// by a crash, perhaps its file's doing: its files are read in a process of
// their own (Config.Isolated), one at a time.
func (in *Ingestor) HandleDelivery(ctx context.Context, data []byte, delivered uint64) error {
	records, err := event.Parse(data)
	if err != nil {
		return worker.Permanent(err)
	}
	var errs []error
	for _, r := range records {
		if err := in.handleRecord(ctx, r, delivered > 1); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (in *Ingestor) handleRecord(ctx context.Context, r event.Record, redelivered bool) error {
	key, err := objkey.Parse(r.Key)
	if err != nil {
		return worker.Permanent(fmt.Errorf("%s %s: %w", r.Op, r.Key, err))
	}
	obj := pipeline.Object{
		Bucket: r.Bucket, Key: r.Key, Project: key.Project, Branch: key.Branch, Path: key.Path,
		ETag: r.ETag, VersionID: r.VersionID, Sequencer: r.Sequencer, Size: r.Size,
		ContentType: r.ContentType, EventTime: r.Time, SeenAt: in.now().UTC(),
	}
	fileID := ids.File(key.Project, key.Branch, key.Path)
	log := in.log.With("project", key.Project, "branch", key.Branch, "path", key.Path, "file_id", fileID, "sequencer", r.Sequencer)
	if r.Op == event.Tagging {
		// Before the copy check: a tag change keeps the object's
		// modification time, of which MinIO makes the sequencer, so the
		// event carries the sequencer and ETag of the upload it retags and
		// would pass for a second copy of it. It records no state either:
		// the content, whose freshness states track, did not change.
		return in.retag(ctx, r, obj, fileID, log)
	}
	// MinIO announces each event twice, at once and again from its durable
	// queue up to 3 s later: the second copy of a committed event is skipped
	// here, and one whose first copy is being read in this ingestor waits
	// for it (copies). One in flight in another replica is processed again,
	// and its identical file version is dropped by the chunks stream's
	// de-duplication.
	if r.Op == event.Put {
		id := uploadOf(r)
		first, err := in.copies.claim(ctx, id, in.now())
		if err != nil {
			return err
		}
		if !first {
			log.Debug("skipping a second copy of an event this ingestor published")
			return nil
		}
		published := false
		defer func() { in.copies.done(id, published, in.now()) }()
		return in.readUpload(ctx, r, obj, key, fileID, redelivered, log, &published)
	}
	return in.readUpload(ctx, r, obj, key, fileID, redelivered, log, nil)
}

// readUpload reads the upload or deletion of r's event and publishes its
// file version or deletion; *published says whether it did.
func (in *Ingestor) readUpload(ctx context.Context, r event.Record, obj pipeline.Object, key objkey.Key, fileID string, redelivered bool, log *slog.Logger, published *bool) error {
	recorded, err := in.states.Get(ctx, key.Project, r.Key)
	if err != nil {
		return fmt.Errorf("read state of %s: %w", r.Key, err)
	}
	if committedAlready(recorded, r, in.now()) {
		log.Debug("skipping a second copy of a committed event", "state", recorded.State, "sequence", recorded.Sequence)
		return nil
	}
	// A delivery again, or an attempt at this very upload that began longer
	// ago than any read may take and has not committed: the attempt was cut
	// short (its worker died). One still in flight (the live copy of the
	// event, read a moment ago) is not.
	isolated := in.cfg.Isolated != nil && (redelivered || begunBefore(recorded, r, in.now().Add(-in.attemptWindow())))
	if r.Op == event.Put {
		if err := in.states.Put(ctx, pipeline.ObjectState{Key: r.Key, Project: key.Project, ETag: r.ETag, VersionID: r.VersionID,
			Sequencer: r.Sequencer, State: pipeline.StatePending,
			Stages: pipeline.StageTimes{Uploaded: r.Time, Seen: obj.SeenAt}}); err != nil {
			return fmt.Errorf("record %s pending: %w", r.Key, err)
		}
	}
	if r.Op == event.Delete {
		body, err := json.Marshal(pipeline.FileDeleted{Object: obj, FileID: fileID})
		if err != nil {
			return fmt.Errorf("encode delete of %s: %w", r.Key, err)
		}
		if err := in.pub.Publish(ctx, pipeline.ChunksSubjectFor(key.Project), "delete-"+fileID+"-"+r.Sequencer,
			map[string]string{pipeline.HeaderKind: pipeline.KindFileDeleted}, body); err != nil {
			return fmt.Errorf("publish delete of %s: %w", r.Key, err)
		}
		log.Info("delete published")
		return nil
	}

	release, err := in.admit(ctx, r)
	if err != nil {
		return err
	}
	defer release() // the bytes are held until the version is published
	data, got, err := in.fetch(ctx, r)
	fv := pipeline.FileVersion{Object: obj, FileID: fileID, Title: key.Name(), IngestedAt: in.now().UTC(), Access: got.access,
		MetadataSources: metadata.Sources{Tags: got.tags, Object: got.userMetadata}}
	switch {
	case errors.Is(err, ErrGone):
		log.Info("skipping superseded event", "etag", r.ETag)
		return nil
	case errors.Is(err, ErrTooLarge):
		fv.FileVersionID = ids.FileVersion(fileID, versionOf(obj), "")
		fv.Status, fv.Error = pipeline.StatusFailed, fmt.Sprintf("file is %d bytes, over the %d byte limit", r.Size, in.cfg.MaxObjectBytes)
	case err != nil:
		return err
	default:
		sum := sha256.Sum256(data)
		fv.Checksum = hex.EncodeToString(sum[:])
		fv.FileVersionID = ids.FileVersion(fileID, versionOf(obj), fv.Checksum)
		if err := in.extract(ctx, &fv, key, data, isolated); err != nil {
			return err
		}
	}
	// A failed or unsupported file still has the metadata its object was
	// given; the file's own joins it when extraction read some. What the
	// merge drops, the indexer records as the document's metadata
	// warnings (it merges the sources again, as a tag change does).
	fv.Metadata, _ = metadata.Merge(fv.MetadataSources)
	fv.ExtractedAt = in.now().UTC()
	body, err := pipeline.EncodeFileVersion(fv)
	if err != nil {
		return fmt.Errorf("encode %s: %w", r.Key, err)
	}
	if err := in.pub.Publish(ctx, pipeline.ChunksSubjectFor(key.Project), fv.FileVersionID,
		map[string]string{pipeline.HeaderKind: pipeline.KindFileVersion}, body); err != nil {
		return fmt.Errorf("publish %s: %w", r.Key, err)
	}
	log.Info("file version published", "file_version_id", fv.FileVersionID, "status", fv.Status, "format", fv.Format,
		"chunks", len(fv.Chunks), "error", fv.Error)
	if published != nil {
		*published = true
	}
	return nil
}

// objectProps is what an object's tags and user metadata say: who may read
// it, and its tags and user metadata as read (for metadata.Sources).
type objectProps struct {
	access       pipeline.Access
	tags         map[string]string
	userMetadata map[string]string // values decoded (userMetadata)
}

func propsOf(tags, meta map[string]string, readAt time.Time) objectProps {
	acc := accessFrom(tags, meta, readAt)
	acc.TagsDigest = TagsDigest(tags, meta)
	return objectProps{access: acc, tags: tags, userMetadata: userMetadata(meta)}
}

// userMetadata is the user metadata with its values decoded: S3 returns a
// value that is not US-ASCII encoded as RFC 2047 words ("=?UTF-8?B?...?="),
// which are decoded here; a value that does not decode stays as it is.
func userMetadata(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	var dec mime.WordDecoder
	for k, v := range m {
		if strings.Contains(v, "=?") {
			if d, err := dec.DecodeHeader(v); err == nil {
				v = d
			}
		}
		out[k] = v
	}
	return out
}

// fetch reads the event's object version: its bytes (none past the size
// limit, with ErrTooLarge), who may read it, its tags and user metadata. An
// error reading the groups is returned, to be retried: a version is never
// published without them.
func (in *Ingestor) fetch(ctx context.Context, r event.Record) ([]byte, objectProps, error) {
	// The tags are read before the bytes: the object then held this version
	// or a later one, and the fetch's ETag check turns a later one with
	// other bytes away (its own event follows), so these tags are never an
	// earlier version's. ReadAt is when the reads began: a tag change after
	// it is read again by its own event, later, and that read wins.
	readAt := in.now().UTC()
	tags, err := in.store.Tags(ctx, r.Bucket, r.Key, r.VersionID)
	if err != nil {
		return nil, objectProps{}, fmt.Errorf("read tags of %s: %w", r.Key, err)
	}
	f, err := in.store.Get(ctx, r.Bucket, r.Key, r.ETag, in.cfg.MaxObjectBytes)
	switch {
	case errors.Is(err, ErrTooLarge):
		// A file too large to read is still a document, with its groups
		// and metadata.
		meta, merr := in.store.Metadata(ctx, r.Bucket, r.Key, r.VersionID, r.ETag)
		if merr != nil {
			return nil, objectProps{}, fmt.Errorf("read metadata of %s: %w", r.Key, merr)
		}
		return nil, propsOf(tags, meta, readAt), err
	case err != nil:
		return nil, objectProps{}, fmt.Errorf("fetch %s: %w", r.Key, err)
	}
	return f.Data, propsOf(tags, f.Metadata, readAt), nil
}

// CopyWindow is how long after an event was first seen a second copy of it
// is skipped once committed: the durable copy follows the live one within
// seconds, or minutes behind a backlog. An older copy (a replay of the
// stream) is processed again, for the indexer to find committed or restore.
// It matches the streams' de-duplication window.
const CopyWindow = 10 * time.Minute

// committedAlready says whether st records event r as committed within
// CopyWindow: the same event (sequencer and ETag) past pending. Reindex and
// reconcile events carry newer sequencers, so they are never taken for copies.
func committedAlready(st *pipeline.ObjectState, r event.Record, now time.Time) bool {
	if st == nil || st.Sequencer != r.Sequencer || st.State == pipeline.StatePending || now.Sub(st.Stages.Seen) > CopyWindow {
		return false
	}
	if r.Op == event.Delete {
		return st.State == pipeline.StateDeleted
	}
	return st.State != pipeline.StateDeleted && st.ETag == r.ETag
}

// begunBefore says whether st records an attempt at r's upload (its
// sequencer and ETag) that began before then and has not committed.
func begunBefore(st *pipeline.ObjectState, r event.Record, then time.Time) bool {
	return st != nil && st.State == pipeline.StatePending && st.Sequencer == r.Sequencer && st.ETag == r.ETag && st.Stages.Seen.Before(then)
}

// attemptWindow is the longest one attempt at a file may take: its
// extraction's limits and a margin for fetching and publishing.
func (in *Ingestor) attemptWindow() time.Duration {
	return in.cfg.Limits.Timeout + in.cfg.Limits.OCRTimeout + time.Minute
}

// versionOf is the object-store identity of a version: its version id when
// the bucket is versioned; otherwise the ETag and the event's sequencer,
// because re-uploading the same bytes is a new version of the file (a later
// commit), and each version's chunks must keep their own history.
func versionOf(o pipeline.Object) string {
	if o.VersionID != "" {
		return o.VersionID
	}
	return o.ETag + "@" + o.Sequencer
}

// extract fills fv's format, text statistics, sections and chunks, or its
// failure. Only a failure to store images is returned, to be retried.
func (in *Ingestor) extract(ctx context.Context, fv *pipeline.FileVersion, key objkey.Key, data []byte, isolated bool) error {
	reader := in.extractor
	if isolated {
		reader = in.cfg.Isolated
		in.log.Info("reading alone in a process of its own: an earlier attempt was cut short", "path", key.Raw, "file_version_id", fv.FileVersionID)
	}
	doc, err := reader.Extract(ctx, data, key.Path, in.cfg.Limits)
	switch {
	case errors.Is(err, extract.ErrInterrupted):
		return fmt.Errorf("read %s: %w", key.Raw, err)
	case errors.Is(err, extract.ErrReaderDied):
		fv.Status, fv.Error = pipeline.StatusFailed, err.Error()+"; it was read alone after an earlier attempt at it was cut short, so it is read again only when it changes or is reindexed"
		return nil
	case errors.Is(err, extract.ErrUnsupported):
		fv.Format, fv.Status, fv.Error = "binary", pipeline.StatusUnsupported, err.Error()
		return nil
	case err != nil:
		fv.Status, fv.Error = pipeline.StatusFailed, err.Error()
		return nil
	}
	if err := in.fill(ctx, fv, key.Name(), doc); err != nil {
		return err
	}
	return in.addMembers(ctx, fv, key, doc)
}

// fill fills fv, named name, from doc: its format, text statistics,
// sections and chunks, or why it has none. Only a failure to store
// images is returned, to be retried.
func (in *Ingestor) fill(ctx context.Context, fv *pipeline.FileVersion, name string, doc *extract.Document) error {
	fv.Format, fv.Language, fv.Pages, fv.Warnings = doc.Format, doc.Language, doc.Pages, doc.Warnings
	fv.MetadataSources.File = doc.Metadata
	if doc.Title != "" {
		fv.Title = doc.Title
	}
	if len(doc.Blocks) == 0 {
		reason := "no text found"
		if doc.Format == "pdf" {
			reason += " (an empty PDF, or scanned pages OCR could not read)"
		}
		if len(doc.Warnings) > 0 {
			reason += "; " + strings.Join(doc.Warnings, "; ")
		}
		fv.Status, fv.Error = pipeline.StatusFailed, reason
		return nil
	}
	secs := chunk.Split(doc, in.counter, chunk.Options{TargetTokens: in.cfg.TargetTokens, OverlapTokens: in.cfg.OverlapTokens})
	fv.Status = pipeline.StatusIndexed
	fv.TextLength = utf8.RuneCountInString(doc.Text)
	fv.Sections, fv.Chunks = chunk.Parts(fv.FileVersionID, secs)
	for i, s := range secs {
		if fv.Sections[i].Title == "" && s.Ordinal == 0 {
			fv.Sections[i].Title = fv.Title
		}
		if fv.Title == name && s.Level == 1 && s.Title != "" && doc.Format != "code" {
			fv.Title = s.Title
		}
		fv.TokenCount += s.Tokens
	}
	refs := map[int]string{}
	for _, s := range secs {
		for _, c := range s.Chunks {
			if c.Image < 0 || c.Image >= len(doc.Images) {
				continue
			}
			img := doc.Images[c.Image]
			ref, ok := refs[c.Image]
			if !ok {
				var err error
				if ref, err = in.assets.PutAsset(ctx, fv.Object.Project+"/"+fv.FileVersionID+"/"+img.Name, img.Data, img.MIME); err != nil {
					return fmt.Errorf("store image %s of %s: %w", img.Name, fv.Object.Path, err)
				}
				refs[c.Image] = ref
			}
			fv.Chunks[c.Index].ImageRef, fv.Chunks[c.Index].ImageMIME = ref, img.MIME
		}
	}
	return nil
}

// MaxMembers bounds the members one uploaded file's version carries, its
// members' members included (container.MaxMembers bounds each
// container's own): a set is committed at once, in one commit.
const MaxMembers = container.MaxMembers

// addMembers adds the files inside doc (a message's attachments, an
// archive's files, a mailbox's messages, and theirs) to fv as documents
// of their own, at <path>//<member path>: the container's object, access
// and tags, each member's own file metadata with what every container
// around it says of itself (a message's from, to, cc, date and subject)
// over it. What is past MaxMembers is recorded on fv.
func (in *Ingestor) addMembers(ctx context.Context, fv *pipeline.FileVersion, key objkey.Key, doc *extract.Document) error {
	taken := map[string]bool{}
	var add func(parentPath string, parentMeta metadata.Metadata, d *extract.Document) error
	add = func(parentPath string, parentMeta metadata.Metadata, d *extract.Document) error {
		for _, m := range d.Members {
			// A name the reader could not decode (a ZIP's CP437 name read
			// as UTF-8) keeps its place: every tool takes the path back.
			p := objkey.MemberPath(parentPath, strings.ReplaceAll(m.Path, "\uFFFD", "_"))
			for n := 2; taken[p]; n++ { // "_" may make two names one
				p = objkey.MemberPath(parentPath, fmt.Sprintf("%s (%d)", strings.ReplaceAll(m.Path, "\uFFFD", "_"), n))
			}
			taken[p] = true
			if _, err := objkey.ParseDocument(key.Project + "/" + p); err != nil {
				fv.Warnings = append(fv.Warnings, fmt.Sprintf("member %s is not a document of its own: its path is not one a tool can take (%v)", clipPath(p), err))
				continue
			}
			if len(fv.Members) == MaxMembers {
				fv.Warnings = append(fv.Warnings, fmt.Sprintf("member %s and those after it are not documents of their own: a file carries at most %d members, its members' members included", p, MaxMembers))
				return errStop
			}
			meta := memberMetadata(m.Doc.Metadata, parentMeta)
			mfv := pipeline.FileVersion{Object: fv.Object, FileID: ids.File(key.Project, key.Branch, p), Checksum: fv.Checksum,
				Title: path.Base(m.Path), IngestedAt: fv.IngestedAt, Access: fv.Access, MetadataSources: fv.MetadataSources}
			mfv.Object.Path = p
			mfv.FileVersionID = ids.FileVersion(mfv.FileID, versionOf(fv.Object), fv.Checksum)
			md := *m.Doc
			md.Metadata, md.Members = meta, nil
			if err := in.fill(ctx, &mfv, mfv.Title, &md); err != nil {
				return err
			}
			mfv.Metadata, _ = metadata.Merge(mfv.MetadataSources)
			fv.Members = append(fv.Members, mfv)
			if err := add(p, meta, m.Doc); err != nil {
				return err
			}
		}
		return nil
	}
	if err := add(fv.Object.Path, doc.Metadata, doc); err != nil && !errors.Is(err, errStop) {
		return err
	}
	return nil
}

// errStop ends addMembers' walk at MaxMembers.
var errStop = errors.New("stop")

// memberMetadata is a member's file metadata: its own, with its
// containers' over it.
func memberMetadata(own, containers metadata.Metadata) metadata.Metadata {
	if len(containers) == 0 {
		return own
	}
	out := make(metadata.Metadata, len(own)+len(containers))
	maps.Copy(out, own)
	maps.Copy(out, containers)
	return out
}

// clipPath is p cut to 200 bytes for a warning.
func clipPath(p string) string {
	if len(p) <= 200 {
		return p
	}
	return strings.ToValidUTF8(p[:200], "") + "..."
}
