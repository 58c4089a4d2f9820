package objectstore

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/strata-kb/strata/ingestor/event"
	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/detect"
	"github.com/strata-kb/strata/ingestor/extract/pdf"
	"github.com/strata-kb/strata/ingestor/ingest"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/tokens"
)

// listed returns the listed objects under prefix by key.
func listed(t *testing.T, s Store, prefix string) map[string]ingest.ObjectInfo {
	t.Helper()
	out := map[string]ingest.ObjectInfo{}
	if err := s.List(context.Background(), watched, prefix, func(o ingest.ObjectInfo) error {
		out[o.Key] = o
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func (e *env) state(t *testing.T, project, key string) *pipeline.ObjectState {
	t.Helper()
	st, err := e.states.Get(context.Background(), project, key)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// commit records what the indexer records when it commits the event st
// names: the state at a later stage, with no tags digest.
func (e *env) commit(t *testing.T, st *pipeline.ObjectState) {
	t.Helper()
	if err := e.states.Put(context.Background(), pipeline.ObjectState{Key: st.Key, Project: st.Project, ETag: st.ETag,
		VersionID: st.VersionID, Sequencer: st.Sequencer, State: pipeline.StateIndexed, Sequence: 1}); err != nil {
		t.Fatal(err)
	}
}

// The digest the lister gives a listed object (MinIO's listing with
// metadata) is the digest the event path records when it reads the same
// object's tags and user metadata, whatever they hold: encoded and
// unencoded non-ASCII metadata, empty values, tag values with S3's
// separators. Otherwise every reconcile pass would re-emit such objects.
// The indexer's commit keeps the digest; a stale one recorded is repaired
// by a reindex through NATS and the normal path.
func TestListedTagsDigestIsTheEventPaths(t *testing.T) {
	e := start(t)
	p := e.pipe(t)
	proj := project("digest")
	c := e.chunks(t, proj)
	objects := map[string]minio.PutObjectOptions{
		"plain.md": {},
		// Every character S3 tags allow (minio-go drops a set with another).
		"tagged.md": {UserTags: map[string]string{"strata-groups": "hr finance", "Dept": "a b+c=d/f:g@h.i_j-k", "Empty": ""}},
		"meta.md": {UserMetadata: map[string]string{"strata-groups": "hr,legal", "Owner": "=?UTF-8?B?Wm/Dqw==?=", "Note": "a=b&c <x> \"q\"",
			"Empty": "", "Raw": "Zoë"}},
		"both.md": {UserTags: map[string]string{"strata-groups": "ops"}, UserMetadata: map[string]string{"Strata-Groups": "hr", "team": "Legal"}},
	}
	for name, opts := range objects {
		e.put(t, proj+"/"+name, "# "+name+"\n\ntext", opts)
	}
	for name := range objects {
		c.fileVersion(t, proj+"/"+name)
		p.waitHandled(t, "s3:ObjectCreated:Put", proj+"/"+name, 1)
	}
	s := Store{Client: e.s3}
	list := listed(t, s, proj+"/")
	ctx := context.Background()
	for name := range objects {
		key := proj + "/" + name
		o, st := list[key], e.state(t, proj, key)
		if st == nil || o.TagsDigest == "" || st.TagsDigest != o.TagsDigest || st.ETag != o.ETag {
			t.Fatalf("%s: listed %+v, state %+v: want the same tags digest", name, o, st)
		}
		tags, err := s.Tags(ctx, watched, key, "")
		if err != nil {
			t.Fatal(err)
		}
		meta, err := s.Metadata(ctx, watched, key, "", "")
		if err != nil {
			t.Fatal(err)
		}
		if d := ingest.TagsDigest(tags, meta); d != o.TagsDigest {
			t.Fatalf("%s: tags %q metadata %q read one by one digest to %s, listed %s", name, tags, meta, d, o.TagsDigest)
		}
	}
	if list[proj+"/plain.md"].TagsDigest == list[proj+"/tagged.md"].TagsDigest {
		t.Fatal("different tags, same digest")
	}

	// The indexer's commit (no digest) keeps the ingestor's.
	key := proj + "/tagged.md"
	st := e.state(t, proj, key)
	e.commit(t, st)
	if got := e.state(t, proj, key); got.State != pipeline.StateIndexed || got.TagsDigest != st.TagsDigest {
		t.Fatalf("after the commit: %+v, want indexed with digest %s", got, st.TagsDigest)
	}
	r := &ingest.Reindexer{Bucket: watched, Lister: s, States: e.states, Pub: pipeline.Publisher{JS: e.js}}
	if res, err := r.Handle(ctx, pipeline.ReindexSubject+"."+proj, nil); err != nil || res.Listed != 4 || res.Retagged != 0 || res.Emitted != 0 {
		t.Fatalf("reindex with every digest recorded: %+v %v; want nothing emitted", res, err)
	}

	// A stale digest recorded (as a tag change whose notification was
	// lost leaves it): the reindex emits a tagging event, which the
	// ingestor takes from the objects stream like MinIO's.
	stale := *e.state(t, proj, key)
	stale.TagsDigest = ingest.TagsDigest(map[string]string{"strata-groups": "everyone"}, nil)
	if err := e.states.Put(ctx, stale); err != nil {
		t.Fatal(err)
	}
	res, err := r.Handle(ctx, pipeline.ReindexSubject+"."+proj, nil)
	if err != nil || res.Retagged != 1 || res.Emitted != 0 || res.Skipped != 3 {
		t.Fatalf("reindex with a stale digest: %+v %v; want one tagging event", res, err)
	}
	ac := c.accessChange(t, key, 1)
	checkAccess(t, "repaired tag change", ac.Access, []string{"finance", "hr"}, "tag", false)
	// Only on the objects stream (MinIO's live target has no copy of it).
	waitFor(t, "the tagging event handled", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.handled["durable "+event.PutTagging+" "+key] == 1
	})
	if got := e.state(t, proj, key); got.TagsDigest != list[key].TagsDigest || got.State != pipeline.StateIndexed {
		t.Fatalf("state after the repair %+v, want indexed with digest %s", got, list[key].TagsDigest)
	}
	if n := len(c.of(pipeline.KindFileVersion, key)); n != 1 {
		t.Fatalf("%d file versions: a tag repair must not re-ingest the file", n)
	}
	p.failOnErrors(t)
}

// direct hands what a reindex emits to an ingestor at once, as if it came
// from the objects stream.
type direct struct{ in *ingest.Ingestor }

func (d direct) Publish(ctx context.Context, subject, _ string, _ map[string]string, data []byte) error {
	if subject != pipeline.ObjectEventsSubject {
		return nil
	}
	return d.in.HandleEvent(ctx, data)
}

// A tag change whose notification is lost (no ingestor takes this test's
// bucket events: all of them are lost) is repaired by the next unforced
// reindex: the ETag is unchanged, the listed tags digest is not, so it
// emits a tagging event, the ingestor publishes the new groups, and the
// state ends with the new digest; the pass after emits nothing. The same
// for tags removed, and user metadata replaced in place.
func TestReconcileRepairsALostTagChange(t *testing.T) {
	e := start(t)
	proj := project("losttags")
	c := e.chunks(t, proj)
	counter, err := tokens.New()
	if err != nil {
		t.Fatal(err)
	}
	lim := extract.DefaultLimits()
	lim.Timeout = 20 * time.Second
	pub := &countingPub{Publisher: pipeline.Publisher{JS: e.js}, byKind: map[string]int{}}
	in := ingest.New(ingest.Config{MaxObjectBytes: 1 << 20, MaxMessageBytes: 1 << 20, TargetTokens: 64, Limits: lim},
		Store{Client: e.s3}, Assets{Client: e.s3, Bucket: "strata-assets"}, detect.NewRegistry(pdf.Poppler{}), pub, e.states, counter,
		slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug})))
	s := Store{Client: e.s3}
	r := &ingest.Reindexer{Bucket: watched, Lister: s, States: e.states, Pub: direct{in}}
	ctx := context.Background()
	reindex := func(what string, want ingest.ReindexResult) {
		t.Helper()
		res, err := r.Handle(ctx, pipeline.ReindexSubject+"."+proj, nil)
		if err != nil || res != want {
			t.Fatalf("%s: reindex %+v %v, want %+v", what, res, err, want)
		}
	}
	key := proj + "/payroll.md"
	e.put(t, key, "# Payroll\n\nWho is paid what.", minio.PutObjectOptions{
		UserTags: map[string]string{"strata-groups": "hr finance"}, UserMetadata: map[string]string{"strata-groups": "hr"}})
	// The upload's notification is lost too: the reindex re-emits it.
	reindex("lost upload", ingest.ReindexResult{Listed: 1, Emitted: 1})
	checkAccess(t, "upload", c.fileVersion(t, key).Access, []string{"finance", "hr"}, "tag", false)
	st := e.state(t, proj, key)
	if st == nil || st.TagsDigest == "" || st.TagsDigest != listed(t, s, key)[key].TagsDigest {
		t.Fatalf("state after the upload %+v, listed %+v", st, listed(t, s, key)[key])
	}
	// Pending: the upload is in the pipeline, not re-emitted; committed,
	// with the digest of what the listing shows: done.
	reindex("pending", ingest.ReindexResult{Listed: 1, Skipped: 1})
	e.commit(t, st)
	reindex("committed", ingest.ReindexResult{Listed: 1, Skipped: 1})

	// Access narrowed; its notification is lost.
	e.setTags(t, key, map[string]string{"strata-groups": "finance"})
	reindex("lost tag change", ingest.ReindexResult{Listed: 1, Retagged: 1})
	checkAccess(t, "repaired tag change", c.accessChange(t, key, 1).Access, []string{"finance"}, "tag", false)
	after := e.state(t, proj, key)
	if after.TagsDigest == st.TagsDigest || after.TagsDigest != listed(t, s, key)[key].TagsDigest ||
		after.State != pipeline.StateIndexed || after.Sequencer != st.Sequencer || after.ETag != st.ETag {
		t.Fatalf("state after the repair %+v (before %+v)", after, st)
	}
	reindex("repaired", ingest.ReindexResult{Listed: 1, Skipped: 1})

	// Tags removed: the user metadata's groups apply again.
	if err := e.s3.RemoveObjectTagging(ctx, watched, key, minio.RemoveObjectTaggingOptions{}); err != nil {
		t.Fatal(err)
	}
	reindex("lost tag removal", ingest.ReindexResult{Listed: 1, Retagged: 1})
	checkAccess(t, "repaired tag removal", c.accessChange(t, key, 2).Access, []string{"hr"}, "metadata", false)
	reindex("repaired removal", ingest.ReindexResult{Listed: 1, Skipped: 1})

	// User metadata replaced in place (a copy onto itself): MinIO keeps the
	// ETag, so this is the same repair.
	before := listed(t, s, key)[key]
	if _, err := e.s3.CopyObject(ctx, minio.CopyDestOptions{Bucket: watched, Object: key, ReplaceMetadata: true,
		UserMetadata: map[string]string{"strata-groups": "legal"}}, minio.CopySrcOptions{Bucket: watched, Object: key}); err != nil {
		t.Fatal(err)
	}
	now := listed(t, s, key)[key]
	t.Logf("metadata replaced in place: ETag %s -> %s, modified %v -> %v", before.ETag, now.ETag, before.LastModified, now.LastModified)
	if now.ETag == before.ETag {
		reindex("lost metadata change", ingest.ReindexResult{Listed: 1, Retagged: 1})
		checkAccess(t, "repaired metadata change", c.accessChange(t, key, 3).Access, []string{"legal"}, "metadata", false)
	} else {
		reindex("lost metadata change", ingest.ReindexResult{Listed: 1, Emitted: 1})
	}
	reindex("repaired metadata change", ingest.ReindexResult{Listed: 1, Skipped: 1})
	if n := len(c.of(pipeline.KindFileVersion, key)); n != 1 && now.ETag == before.ETag {
		t.Fatalf("%d file versions: a tag repair must not re-ingest the file", n)
	}

	// A state recorded before digests were (a newer event's, without one):
	// unforced passes compare nothing; a retag request reads the tags and
	// records the digest.
	legacy := *e.state(t, proj, key)
	legacy.Sequencer, legacy.TagsDigest, legacy.State = "7"+legacy.Sequencer[1:], "", pipeline.StateEmbedded
	if err := e.states.Put(ctx, legacy); err != nil {
		t.Fatal(err)
	}
	if got := e.state(t, proj, key); got.TagsDigest != "" || got.Sequencer != legacy.Sequencer {
		t.Fatalf("legacy state %+v", got)
	}
	e.setTags(t, key, map[string]string{"strata-groups": "ops"})
	reindex("legacy state", ingest.ReindexResult{Listed: 1, Skipped: 1})
	n := len(c.of(pipeline.KindTagsChanged, key)) // every earlier one was waited for
	res, err := r.Handle(ctx, pipeline.ReindexSubject+"."+proj, []byte(`{"retag":true}`))
	if err != nil || res != (ingest.ReindexResult{Listed: 1, Retagged: 1}) {
		t.Fatalf("retag request: %+v %v", res, err)
	}
	checkAccess(t, "retag request", c.accessChange(t, key, n+1).Access, []string{"ops"}, "tag", false)
	if got := e.state(t, proj, key); got.TagsDigest != listed(t, s, key)[key].TagsDigest || got.State != pipeline.StateEmbedded {
		t.Fatalf("state after the retag request %+v", got)
	}
	reindex("after the retag request", ingest.ReindexResult{Listed: 1, Skipped: 1})
}

// Listing with metadata on MinIO: what it returns for tags and metadata,
// logged for whoever changes the lister.
func TestListWithMetadataShowsTags(t *testing.T) {
	e := start(t)
	proj := project("listmeta")
	key := proj + "/a.md"
	e.put(t, key, "# A", minio.PutObjectOptions{UserTags: map[string]string{"strata-groups": "hr"}, UserMetadata: map[string]string{"Owner": "ann"}})
	for o := range e.s3.ListObjects(context.Background(), watched, minio.ListObjectsOptions{Prefix: key, Recursive: true, WithMetadata: true}) {
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		b, _ := json.Marshal(map[string]any{"tags": o.UserTags, "metadata": o.UserMetadata, "stripped": o.UserMetadataStripped})
		t.Logf("listed %s: %s", o.Key, b)
		if o.UserTags["strata-groups"] != "hr" || o.UserMetadataStripped["Owner"] != "ann" || !strings.Contains(string(b), "content-type") {
			t.Fatalf("listing with metadata: %s", b)
		}
	}
}
