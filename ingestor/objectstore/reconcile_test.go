package objectstore

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/strata-kb/strata/ingestor/event"
	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/detect"
	"github.com/strata-kb/strata/ingestor/extract/pdf"
	"github.com/strata-kb/strata/ingestor/ingest"
	"github.com/strata-kb/strata/ingestor/tokens"
	"github.com/strata-kb/strata/shared/bucket"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/testservers"
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

// commit records what the indexer records when it commits fv: its state
// indexed, with the digest of the tags read it applied.
func (e *env) commit(t *testing.T, fv pipeline.FileVersion) {
	t.Helper()
	o := fv.Object
	if err := e.states.Put(context.Background(), pipeline.ObjectState{Key: o.Key, Project: o.Project, ETag: o.ETag,
		VersionID: o.VersionID, Sequencer: o.Sequencer, State: pipeline.StateIndexed, Sequence: 1,
		TagsDigest: fv.Access.TagsDigest, TagsReadAt: fv.Access.ReadAt}); err != nil {
		t.Fatal(err)
	}
}

// applied records what the indexer records when it applied ac.
func (e *env) applied(t *testing.T, ac pipeline.TagsChanged) {
	t.Helper()
	if err := e.states.RecordTags(context.Background(), ac.Object.Project, ac.Object.Key, ac.Access.TagsDigest, ac.Access.ReadAt); err != nil {
		t.Fatal(err)
	}
}

// The digest the lister gives a listed object (MinIO's listing with
// metadata) is the digest the event path sends with the file version when it
// reads the same object's tags and user metadata, whatever they hold:
// encoded and unencoded non-ASCII metadata, empty values, tag values with
// S3's separators. Otherwise every reconcile pass would re-emit such
// objects. Once the indexer recorded it, a reindex emits nothing; a digest
// recorded that the bucket no longer has is repaired by a reindex through
// NATS and the normal path.
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
	fvs := map[string]pipeline.FileVersion{}
	for name := range objects {
		fvs[name] = c.fileVersion(t, proj+"/"+name)
		p.waitHandled(t, "s3:ObjectCreated:Put", proj+"/"+name, 1)
	}
	s := Store{Client: e.s3}
	list := listed(t, s, proj+"/")
	ctx := context.Background()
	for name, fv := range fvs {
		key := proj + "/" + name
		o := list[key]
		if o.TagsDigest == "" || fv.Access.TagsDigest != o.TagsDigest || fv.Object.ETag != o.ETag {
			t.Fatalf("%s: listed %+v, sent %+v: want the same tags digest", name, o, fv.Access)
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

	// The indexer commits every file with the digest it was sent.
	for _, fv := range fvs {
		e.commit(t, fv)
	}
	r := &ingest.Reindexer{Bucket: watched, Lister: s, States: e.states, Pub: pipeline.Publisher{JS: e.js}}
	if res, err := r.Handle(ctx, pipeline.ReindexSubject+"."+proj, nil); err != nil || res != (ingest.ReindexResult{Listed: 4, Skipped: 4}) {
		t.Fatalf("reindex with every digest recorded: %+v %v; want nothing emitted", res, err)
	}

	// The index holds a read the bucket no longer has (as a tag change
	// whose notification was lost leaves it): the reindex emits a tagging
	// event, which the ingestor takes from the objects stream like MinIO's.
	key := proj + "/tagged.md"
	held := fvs["tagged.md"].Access.ReadAt.Add(time.Millisecond)
	if err := e.states.RecordTags(ctx, proj, key, ingest.TagsDigest(map[string]string{"strata-groups": "everyone"}, nil), held); err != nil {
		t.Fatal(err)
	}
	res, err := r.Handle(ctx, pipeline.ReindexSubject+"."+proj, nil)
	if err != nil || res != (ingest.ReindexResult{Listed: 4, Retagged: 1, Skipped: 3}) {
		t.Fatalf("reindex with a stale digest: %+v %v; want one tagging event", res, err)
	}
	ac := c.accessChange(t, key, 1)
	checkAccess(t, "repaired tag change", ac.Access, []string{"finance", "hr"}, "tag", false)
	if ac.Access.TagsDigest != list[key].TagsDigest || !ac.Access.ReadAt.After(held) {
		t.Fatalf("repaired tag change %+v: want the listed digest %s, read after %s", ac.Access, list[key].TagsDigest, held)
	}
	// Only on the objects stream (MinIO's live target has no copy of it).
	waitFor(t, "the tagging event handled", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.handled["durable "+event.PutTagging+" "+key] == 1
	})
	// A retried request before the indexer applied it publishes the same
	// message again, which the stream drops.
	if res, err := r.Handle(ctx, pipeline.ReindexSubject+"."+proj, nil); err != nil || res.Retagged != 1 {
		t.Fatalf("retried reindex: %+v %v", res, err)
	}
	e.applied(t, ac)
	if got := e.state(t, proj, key); got.TagsDigest != list[key].TagsDigest || got.State != pipeline.StateIndexed {
		t.Fatalf("state after the repair %+v, want indexed with digest %s", got, list[key].TagsDigest)
	}
	if res, err := r.Handle(ctx, pipeline.ReindexSubject+"."+proj, nil); err != nil || res != (ingest.ReindexResult{Listed: 4, Skipped: 4}) {
		t.Fatalf("reindex after the repair: %+v %v; want nothing emitted", res, err)
	}
	time.Sleep(time.Second) // a second tagging event would have been handled by now
	if n := len(c.of(pipeline.KindTagsChanged, key)); n != 1 {
		t.Fatalf("%d access changes, want 1 (the retried request's copy is dropped)", n)
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
// reindex: the ETag is unchanged, the listed tags digest is not the one the
// index holds, so it emits a tagging event, the ingestor publishes the new
// groups with the new digest, which the indexer records (simulated here;
// deploy/e2e runs the real one); the pass after emits nothing. The same for
// tags removed, and user metadata replaced in place.
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
	in := ingest.New(ingest.Config{MaxObjectBytes: 1 << 20, TargetTokens: 64, Limits: lim},
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
	fv := c.fileVersion(t, key)
	checkAccess(t, "upload", fv.Access, []string{"finance", "hr"}, "tag", false)
	if fv.Access.TagsDigest != listed(t, s, key)[key].TagsDigest {
		t.Fatalf("upload sent %+v, listed %+v", fv.Access, listed(t, s, key)[key])
	}
	// Pending: the upload is in the pipeline, not re-emitted; committed,
	// with the digest of what the listing shows: done.
	reindex("pending", ingest.ReindexResult{Listed: 1, Skipped: 1})
	e.commit(t, fv)
	st := e.state(t, proj, key)
	reindex("committed", ingest.ReindexResult{Listed: 1, Skipped: 1})

	// Access narrowed; its notification is lost.
	e.setTags(t, key, map[string]string{"strata-groups": "finance"})
	reindex("lost tag change", ingest.ReindexResult{Listed: 1, Retagged: 1})
	ac := c.accessChange(t, key, 1)
	checkAccess(t, "repaired tag change", ac.Access, []string{"finance"}, "tag", false)
	// Sent, not yet applied: the next pass sends it again (the same
	// message, which the stream would drop; this test's publisher does not).
	reindex("sent, not applied", ingest.ReindexResult{Listed: 1, Retagged: 1})
	e.applied(t, ac)
	after := e.state(t, proj, key)
	if after.TagsDigest == st.TagsDigest || after.TagsDigest != listed(t, s, key)[key].TagsDigest ||
		after.State != pipeline.StateIndexed || after.Sequencer != st.Sequencer || after.ETag != st.ETag {
		t.Fatalf("state after the repair %+v (before %+v)", after, st)
	}
	reindex("repaired", ingest.ReindexResult{Listed: 1, Skipped: 1})
	n := len(c.of(pipeline.KindTagsChanged, key))

	// Tags removed: the user metadata's groups apply again.
	if err := e.s3.RemoveObjectTagging(ctx, watched, key, minio.RemoveObjectTaggingOptions{}); err != nil {
		t.Fatal(err)
	}
	reindex("lost tag removal", ingest.ReindexResult{Listed: 1, Retagged: 1})
	n++
	ac = c.accessChange(t, key, n)
	checkAccess(t, "repaired tag removal", ac.Access, []string{"hr"}, "metadata", false)
	e.applied(t, ac)
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
	if now.ETag != before.ETag {
		t.Fatalf("MinIO changed the ETag of a copy onto itself: %s -> %s", before.ETag, now.ETag)
	}
	reindex("lost metadata change", ingest.ReindexResult{Listed: 1, Retagged: 1})
	n++
	ac = c.accessChange(t, key, n)
	checkAccess(t, "repaired metadata change", ac.Access, []string{"legal"}, "metadata", false)
	e.applied(t, ac)
	reindex("repaired metadata change", ingest.ReindexResult{Listed: 1, Skipped: 1})
	if n := len(c.of(pipeline.KindFileVersion, key)); n != 1 {
		t.Fatalf("%d file versions: a tag repair must not re-ingest the file", n)
	}

	// A state recorded before digests were (written as it was then):
	// unforced passes compare nothing; a retag request reads the tags,
	// whose digest the indexer then records.
	legacy := *e.state(t, proj, key)
	legacy.TagsDigest, legacy.TagsReadAt = "", time.Time{}
	body, err := json.Marshal(legacy)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := e.js.KeyValue(ctx, pipeline.ObjectStateBucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, pipeline.ObjectStateKey(proj, key), body); err != nil {
		t.Fatal(err)
	}
	e.setTags(t, key, map[string]string{"strata-groups": "ops"})
	reindex("legacy state", ingest.ReindexResult{Listed: 1, Skipped: 1})
	res, err := r.Handle(ctx, pipeline.ReindexSubject+"."+proj, []byte(`{"retag":true}`))
	if err != nil || res != (ingest.ReindexResult{Listed: 1, Retagged: 1}) {
		t.Fatalf("retag request: %+v %v", res, err)
	}
	n++
	ac = c.accessChange(t, key, n)
	checkAccess(t, "retag request", ac.Access, []string{"ops"}, "tag", false)
	e.applied(t, ac)
	if got := e.state(t, proj, key); got.TagsDigest != listed(t, s, key)[key].TagsDigest || got.State != pipeline.StateIndexed {
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

// countingTransport counts the listing requests a client sends and the
// bytes of their answers.
type countingTransport struct {
	mu           sync.Mutex
	lists, bytes int
	base         http.RoundTripper
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(r)
	if err != nil || !r.URL.Query().Has("list-type") {
		return resp, err
	}
	c.mu.Lock()
	c.lists++
	c.mu.Unlock()
	resp.Body = &countingBody{ReadCloser: resp.Body, c: c}
	return resp, nil
}

type countingBody struct {
	io.ReadCloser
	c *countingTransport
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.c.mu.Lock()
	b.c.bytes += n
	b.c.mu.Unlock()
	return n, err
}

// What comparing tags costs a reconcile pass: the listing with metadata
// takes as many requests as the plain one (a page per 1000 objects), not
// one more per object, and gives every object a digest; only the answers
// grow (logged, with the time of each listing).
func TestListingWithTagsCostsNoRequestPerObject(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	const plainBucket = "strata-listcost" // no notifications: these uploads feed no pipeline
	if err := bucket.EnsurePlain(ctx, e.s3, plainBucket); err != nil {
		t.Fatal(err)
	}
	proj := project("listcost")
	const n = 2100
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 8)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			body := fmt.Sprintf("# Doc %d", i)
			_, err := e.s3.PutObject(ctx, plainBucket, fmt.Sprintf("%s/d%05d.md", proj, i), strings.NewReader(body), int64(len(body)),
				minio.PutObjectOptions{UserTags: map[string]string{"strata-groups": "hr finance"}, UserMetadata: map[string]string{"Owner": "ann"}})
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	ct := &countingTransport{base: http.DefaultTransport.(*http.Transport).Clone()}
	client, err := minio.New(e.s3Host, &minio.Options{Creds: credentials.NewStaticV4(testservers.LocalS3AccessKey, testservers.LocalS3SecretKey, ""), Transport: ct})
	if err != nil {
		t.Fatal(err)
	}
	// One listing: what it listed, its requests, the bytes of its answers,
	// its time.
	measure := func(list func() (int, error)) (count, lists, bytes int, took time.Duration) {
		t.Helper()
		ct.mu.Lock()
		ct.lists, ct.bytes = 0, 0
		ct.mu.Unlock()
		start := time.Now()
		count, err := list()
		if err != nil {
			t.Fatal(err)
		}
		took = time.Since(start)
		ct.mu.Lock()
		defer ct.mu.Unlock()
		return count, ct.lists, ct.bytes, took
	}
	plain := func() (int, error) {
		listed := 0
		for o := range client.ListObjects(ctx, plainBucket, minio.ListObjectsOptions{Prefix: proj + "/", Recursive: true}) {
			if o.Err != nil {
				return listed, o.Err
			}
			listed++
		}
		return listed, nil
	}
	digests := map[string]bool{}
	withTags := func() (int, error) {
		listed := 0
		err := Store{Client: client}.List(ctx, plainBucket, proj+"/", func(o ingest.ObjectInfo) error {
			listed++
			digests[o.TagsDigest] = true
			return nil
		})
		return listed, err
	}
	// Alternately, each one's best of 5: the machine is shared, and the
	// first listing warms MinIO's caches.
	var plainN, plainLists, plainBytes, tagsN, tagsLists, tagsBytes int
	var plainTook, tagsTook time.Duration
	for range 5 {
		c, l, b, d := measure(plain)
		if plainN, plainLists, plainBytes = c, l, b; plainTook == 0 || d < plainTook {
			plainTook = d
		}
		c, l, b, d = measure(withTags)
		if tagsN, tagsLists, tagsBytes = c, l, b; tagsTook == 0 || d < tagsTook {
			tagsTook = d
		}
	}
	t.Logf("%d objects: plain listing %d requests, %d bytes, %s; with tags %d requests, %d bytes (%.0f more per object), %s",
		plainN, plainLists, plainBytes, plainTook.Round(time.Millisecond), tagsLists, tagsBytes,
		float64(tagsBytes-plainBytes)/n, tagsTook.Round(time.Millisecond))
	// Every object has the same tags: one digest, never "".
	if plainN != n || tagsN != n || tagsLists != plainLists || plainLists != (n+999)/1000 || len(digests) != 1 || digests[""] {
		t.Fatalf("listed %d plain, %d with tags; requests %d plain, %d with tags (want %d each); digests %v",
			plainN, tagsN, plainLists, tagsLists, (n+999)/1000, digests)
	}
}
