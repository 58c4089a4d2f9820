package objectstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/tags"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/ingestor/event"
	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/detect"
	"github.com/strata-kb/strata/ingestor/extract/pdf"
	"github.com/strata-kb/strata/ingestor/ingest"
	"github.com/strata-kb/strata/ingestor/tokens"
	"github.com/strata-kb/strata/shared/bucket"
	"github.com/strata-kb/strata/shared/freshness"
	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/testservers"
	"github.com/strata-kb/strata/shared/testservers/serverstest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	serverstest.StopShared()
	os.Exit(code)
}

// The watched bucket, with both of MinIO's NATS targets as the stack sets them up.
const watched = "strata"

type env struct {
	s3     *minio.Client
	nc     *nats.Conn
	js     jetstream.JetStream
	states *freshness.Store
	s3Host string
}

var (
	envOnce   sync.Once
	sharedEnv *env
)

// start returns real MinIO and NATS servers shared by this package's tests
// (each test uses its own project).
func start(t *testing.T) *env {
	t.Helper()
	if testing.Short() {
		t.Skip("needs real minio and nats-server; skipped with -short")
	}
	envOnce.Do(func() {
		ctx := context.Background()
		st := serverstest.StartShared(t)
		s3, err := bucket.Client(st.S3Endpoint, testservers.LocalS3AccessKey, testservers.LocalS3SecretKey, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := bucket.Ensure(ctx, s3, watched, bucket.NATSTargetARN(testservers.MinIONotifyID, ""), bucket.NATSTargetARN(testservers.MinIOLiveNotifyID, "")); err != nil {
			t.Fatal(err)
		}
		if err := bucket.EnsurePlain(ctx, s3, "strata-assets"); err != nil {
			t.Fatal(err)
		}
		nc, js, err := pipeline.Connect(st.NATSURL, "ingestor-test", nil)
		if err != nil {
			t.Fatal(err)
		}
		states, err := freshness.Open(ctx, js, 1)
		if err != nil {
			t.Fatal(err)
		}
		sharedEnv = &env{s3: s3, nc: nc, js: js, states: states, s3Host: st.S3Endpoint}
	})
	if sharedEnv == nil {
		t.Fatal("servers did not start")
	}
	return sharedEnv
}

// project is a project name of its own for one run of one test (the
// servers, and so the streams, outlive a run under -count).
func project(name string) string { return fmt.Sprintf("%s-%d", name, time.Now().UnixNano()) }

// countingPub publishes for real and counts what it published, by kind.
type countingPub struct {
	pipeline.Publisher
	mu     sync.Mutex
	byKind map[string]int
}

func (p *countingPub) Publish(ctx context.Context, subject, msgID string, headers map[string]string, data []byte) error {
	if err := p.Publisher.Publish(ctx, subject, msgID, headers, data); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.byKind[headers[pipeline.HeaderKind]]++
	return nil
}

func (p *countingPub) count(kind string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.byKind[kind]
}

// pipe is an ingestor fed every bucket event MinIO sends from its start on,
// through both targets as the ingestor takes them: the live subject and the
// durable OBJECTS stream (each event arrives twice).
type pipe struct {
	in  *ingest.Ingestor
	pub *countingPub
	mu  sync.Mutex
	// handled counts events handled, by "<target> <event name> <key>".
	handled map[string]int
	// raw keeps the last notification of each "<event name> <key>".
	raw  map[string][]byte
	errs []error
}

func (e *env) pipe(t *testing.T) *pipe {
	t.Helper()
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
	p := &pipe{in: in, pub: pub, handled: map[string]int{}, raw: map[string][]byte{}}
	ctx, cancel := context.WithCancel(context.Background())
	sub, err := e.nc.Subscribe(pipeline.ObjectLiveSubject, func(m *nats.Msg) { p.handle(ctx, "live", m.Data) })
	if err != nil {
		t.Fatal(err)
	}
	cons, err := e.js.OrderedConsumer(ctx, pipeline.ObjectsStream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{pipeline.ObjectEventsSubject}, DeliverPolicy: jetstream.DeliverNewPolicy})
	if err != nil {
		t.Fatal(err)
	}
	cc, err := cons.Consume(func(m jetstream.Msg) { p.handle(ctx, "durable", m.Data()) })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		cc.Stop()
		_ = sub.Unsubscribe()
	})
	return p
}

func (p *pipe) handle(ctx context.Context, target string, data []byte) {
	err := p.in.HandleEvent(ctx, data)
	records, _ := event.Parse(data)
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range records {
		p.handled[target+" "+r.Name+" "+r.Key]++
		p.raw[r.Name+" "+r.Key] = data
	}
	if err != nil && ctx.Err() == nil {
		p.errs = append(p.errs, err)
	}
}

// waitHandled waits until both copies of n events named name of key were
// handled (the durable one follows the live one by up to 3 s).
func (p *pipe) waitHandled(t *testing.T, name, key string, n int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%d %s of %s handled from both targets", n, name, key), func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.failOnErrors(t)
		return p.handled["live "+name+" "+key] >= n && p.handled["durable "+name+" "+key] >= n
	})
}

func (p *pipe) failOnErrors(t *testing.T) {
	t.Helper()
	if len(p.errs) > 0 {
		t.Fatalf("handling events: %v", errors.Join(p.errs...))
	}
}

func (p *pipe) event(name, key string) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.raw[name+" "+key]
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !ok(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// chunks reads what the ingestor published on a project's chunks subject.
type chunks struct {
	mu   sync.Mutex
	msgs []jetstream.Msg
}

func (e *env) chunks(t *testing.T, project string) *chunks {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cons, err := e.js.OrderedConsumer(ctx, pipeline.ChunksStream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{pipeline.ChunksSubjectFor(project)}})
	if err != nil {
		t.Fatal(err)
	}
	c := &chunks{}
	cc, err := cons.Consume(func(m jetstream.Msg) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.msgs = append(c.msgs, m)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Stop(); cancel() })
	return c
}

// of returns the bodies of the messages of kind about key, in stream order.
func (c *chunks) of(kind, key string) [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out [][]byte
	for _, m := range c.msgs {
		var probe struct {
			Object pipeline.Object `json:"object"`
		}
		if m.Headers().Get(pipeline.HeaderKind) == kind && json.Unmarshal(m.Data(), &probe) == nil && probe.Object.Key == key {
			out = append(out, m.Data())
		}
	}
	return out
}

func (c *chunks) fileVersion(t *testing.T, key string) pipeline.FileVersion {
	t.Helper()
	waitFor(t, "the file version of "+key, func() bool { return len(c.of(pipeline.KindFileVersion, key)) > 0 })
	var fv pipeline.FileVersion
	if err := json.Unmarshal(c.of(pipeline.KindFileVersion, key)[0], &fv); err != nil {
		t.Fatal(err)
	}
	return fv
}

// accessChange waits for the n-th (from 1) access change of key.
func (c *chunks) accessChange(t *testing.T, key string, n int) pipeline.TagsChanged {
	t.Helper()
	waitFor(t, fmt.Sprintf("access change %d of %s", n, key), func() bool { return len(c.of(pipeline.KindTagsChanged, key)) >= n })
	var ac pipeline.TagsChanged
	if err := json.Unmarshal(c.of(pipeline.KindTagsChanged, key)[n-1], &ac); err != nil {
		t.Fatal(err)
	}
	return ac
}

func (e *env) put(t *testing.T, key, content string, opts minio.PutObjectOptions) {
	t.Helper()
	if _, err := e.s3.PutObject(context.Background(), watched, key, bytes.NewReader([]byte(content)), int64(len(content)), opts); err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
}

func (e *env) setTags(t *testing.T, key string, m map[string]string) {
	t.Helper()
	tt, err := tags.NewTags(m, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.s3.PutObjectTagging(context.Background(), watched, key, tt, minio.PutObjectTaggingOptions{}); err != nil {
		t.Fatalf("tag %s: %v", key, err)
	}
}

func checkAccess(t *testing.T, what string, a pipeline.Access, groups []string, source string, withError bool) {
	t.Helper()
	if !slices.Equal(a.Groups, groups) || a.Source != source || (a.Error != "") != withError || a.ReadAt.IsZero() {
		t.Fatalf("%s: access %+v, want groups %v source %q error %v", what, a, groups, source, withError)
	}
}

// Uploads with x-amz-tagging or x-amz-meta-strata-groups carry their groups
// from the first file version; a bad value is an error on a file that is
// still indexed.
func TestGroupsOnUpload(t *testing.T) {
	e := start(t)
	p := e.pipe(t)
	proj := project("groups")
	c := e.chunks(t, proj)
	const doc = "# Payroll\n\nWho is paid what."
	tests := []struct {
		name      string
		opts      minio.PutObjectOptions
		groups    []string
		source    string
		withError bool
	}{
		{"tag", minio.PutObjectOptions{UserTags: map[string]string{"strata-groups": "hr finance"}}, []string{"finance", "hr"}, "tag", false},
		{"metadata", minio.PutObjectOptions{UserMetadata: map[string]string{"strata-groups": "hr,finance"}}, []string{"finance", "hr"}, "metadata", false},
		{"tag wins", minio.PutObjectOptions{UserTags: map[string]string{"strata-groups": "legal"}, UserMetadata: map[string]string{"strata-groups": "hr"}},
			[]string{"legal"}, "tag", false},
		{"none", minio.PutObjectOptions{UserTags: map[string]string{"team": "hr"}, UserMetadata: map[string]string{"owner": "ann"}}, nil, "", false},
		{"uppercase tag", minio.PutObjectOptions{UserTags: map[string]string{"strata-groups": "HR"}}, nil, "tag", true},
		{"empty tag", minio.PutObjectOptions{UserTags: map[string]string{"strata-groups": ""}}, nil, "tag", true},
		{"bad metadata", minio.PutObjectOptions{UserMetadata: map[string]string{"strata-groups": "hr;finance"}}, nil, "metadata", true},
	}
	for _, tt := range tests {
		e.put(t, proj+"/"+strings.ReplaceAll(tt.name, " ", "-")+".md", doc, tt.opts)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fv := c.fileVersion(t, proj+"/"+strings.ReplaceAll(tt.name, " ", "-")+".md")
			checkAccess(t, "file version", fv.Access, tt.groups, tt.source, tt.withError)
			if fv.Status != pipeline.StatusIndexed || len(fv.Chunks) == 0 {
				t.Fatalf("status %q, %d chunks: the file must be indexed whatever its groups", fv.Status, len(fv.Chunks))
			}
		})
	}
	p.failOnErrors(t)
}

// Tag changes publish the object's new groups and nothing else: no new file
// version, one access change per change (though MinIO sends each twice, and
// every change of one version with the same sequencer).
func TestTagChanges(t *testing.T) {
	e := start(t)
	p := e.pipe(t)
	proj := project("retag")
	c := e.chunks(t, proj)
	withMeta, bare := proj+"/with-metadata.md", proj+"/bare.md"
	e.put(t, withMeta, "# Plan\n\nThe plan.", minio.PutObjectOptions{UserMetadata: map[string]string{"strata-groups": "hr,legal"}})
	e.put(t, bare, "# Notes\n\nSome notes.", minio.PutObjectOptions{UserTags: map[string]string{"strata-groups": "hr"}})
	fv := c.fileVersion(t, withMeta)
	checkAccess(t, "upload with metadata", fv.Access, []string{"hr", "legal"}, "metadata", false)
	checkAccess(t, "upload with a tag", c.fileVersion(t, bare).Access, []string{"hr"}, "tag", false)
	p.waitHandled(t, "s3:ObjectCreated:Put", withMeta, 1)

	e.setTags(t, withMeta, map[string]string{"strata-groups": "ops sec"})
	ac := c.accessChange(t, withMeta, 1)
	checkAccess(t, "first tag change", ac.Access, []string{"ops", "sec"}, "tag", false)
	if ac.FileID != fv.FileID || ac.FileID != ids.File(proj, "", "with-metadata.md") || ac.Object.Key != withMeta {
		t.Fatalf("access change of %+v, file version of %s", ac.Object, fv.FileID)
	}
	t.Logf("upload sequencer %s, tag change sequencer %s", fv.Object.Sequencer, ac.Object.Sequencer)
	p.waitHandled(t, event.PutTagging, withMeta, 1)

	e.setTags(t, withMeta, map[string]string{"strata-groups": "ops"})
	checkAccess(t, "second tag change", c.accessChange(t, withMeta, 2).Access, []string{"ops"}, "tag", false)
	p.waitHandled(t, event.PutTagging, withMeta, 2)

	if err := e.s3.RemoveObjectTagging(context.Background(), watched, withMeta, minio.RemoveObjectTaggingOptions{}); err != nil {
		t.Fatal(err)
	}
	checkAccess(t, "tags removed", c.accessChange(t, withMeta, 3).Access, []string{"hr", "legal"}, "metadata", false)
	if err := e.s3.RemoveObjectTagging(context.Background(), watched, bare, minio.RemoveObjectTaggingOptions{}); err != nil {
		t.Fatal(err)
	}
	checkAccess(t, "tags removed, no metadata", c.accessChange(t, bare, 1).Access, nil, "", false)

	p.waitHandled(t, event.DeleteTagging, withMeta, 1)
	p.waitHandled(t, event.DeleteTagging, bare, 1)
	if n := len(c.of(pipeline.KindTagsChanged, withMeta)); n != 3 {
		t.Fatalf("%d access changes of %s on the stream, want one per tag change", n, withMeta)
	}
	for _, key := range []string{withMeta, bare} {
		if n := len(c.of(pipeline.KindFileVersion, key)); n != 1 {
			t.Fatalf("%d file versions of %s: a tag change must not re-ingest the file", n, key)
		}
	}
	p.failOnErrors(t)
}

// A tag change handled after its object was removed or overwritten is
// dropped: nothing to retag, or the overwrite's own event reads its groups.
func TestTagChangeOfAnObjectGoneSince(t *testing.T) {
	e := start(t)
	p := e.pipe(t)
	proj := project("gone")
	c := e.chunks(t, proj)
	removed, overwritten := proj+"/removed.md", proj+"/overwritten.md"
	for _, key := range []string{removed, overwritten} {
		e.put(t, key, "# Old\n\ntext", minio.PutObjectOptions{})
		c.fileVersion(t, key)
		e.setTags(t, key, map[string]string{"strata-groups": "hr"})
		c.accessChange(t, key, 1)
		p.waitHandled(t, event.PutTagging, key, 1)
	}
	if err := e.s3.RemoveObject(context.Background(), watched, removed, minio.RemoveObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	e.put(t, overwritten, "# New\n\nother text", minio.PutObjectOptions{})
	p.waitHandled(t, "s3:ObjectRemoved:Delete", removed, 1)
	waitFor(t, "the overwrite's file version", func() bool { return len(c.of(pipeline.KindFileVersion, overwritten)) == 2 })

	published := p.pub.count(pipeline.KindTagsChanged)
	for _, key := range []string{removed, overwritten} {
		if err := p.in.HandleEvent(context.Background(), p.event(event.PutTagging, key)); err != nil {
			t.Fatalf("late tag change of %s: %v", key, err)
		}
	}
	if n := p.pub.count(pipeline.KindTagsChanged); n != published {
		t.Fatalf("%d access changes published for objects gone since", n-published)
	}
	p.failOnErrors(t)
}

// The store reads a version's own tags, and tells a version that is gone
// (removed, overwritten, a delete marker) from a failure to read it.
func TestStoreVersions(t *testing.T) {
	e := start(t)
	ctx := context.Background()
	name := fmt.Sprintf("versioned-%d", time.Now().UnixNano())
	if err := e.s3.MakeBucket(ctx, name, minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := e.s3.EnableVersioning(ctx, name); err != nil {
		t.Fatal(err)
	}
	put := func(content, groups string) minio.UploadInfo {
		info, err := e.s3.PutObject(ctx, name, "acme/a.md", strings.NewReader(content), int64(len(content)), minio.PutObjectOptions{
			UserTags: map[string]string{"strata-groups": groups}, UserMetadata: map[string]string{"strata-groups": groups + "-meta"}})
		if err != nil {
			t.Fatal(err)
		}
		return info
	}
	v1, v2 := put("one", "hr"), put("two", "ops")
	s := Store{Client: e.s3}
	tagsOf := func(version string) string {
		t.Helper()
		m, err := s.Tags(ctx, name, "acme/a.md", version)
		if err != nil {
			t.Fatal(err)
		}
		return m["strata-groups"]
	}
	if tagsOf(v1.VersionID) != "hr" || tagsOf(v2.VersionID) != "ops" || tagsOf("") != "ops" {
		t.Fatalf("tags: v1 %q v2 %q latest %q", tagsOf(v1.VersionID), tagsOf(v2.VersionID), tagsOf(""))
	}
	f, err := s.Get(ctx, name, "acme/a.md", v2.ETag, 1<<10)
	if err != nil || string(f.Data) != "two" || f.Metadata["Strata-Groups"] != "ops-meta" {
		t.Fatalf("get: %q %v, %v", f.Data, f.Metadata, err)
	}
	if m, err := s.Metadata(ctx, name, "acme/a.md", v1.VersionID, v1.ETag); err != nil || m["Strata-Groups"] != "hr-meta" {
		t.Fatalf("metadata of v1: %v, %v", m, err)
	}

	gone := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ingest.ErrGone) {
			t.Fatalf("%s: err = %v, want ErrGone", what, err)
		}
	}
	_, err = s.Metadata(ctx, name, "acme/a.md", "", v1.ETag)
	gone("metadata of an overwritten ETag", err)
	_, err = s.Tags(ctx, name, "acme/missing.md", "")
	gone("tags of a missing key", err)
	_, err = s.Metadata(ctx, name, "acme/missing.md", "", "")
	gone("metadata of a missing key", err)
	if err := e.s3.RemoveObject(ctx, name, "acme/a.md", minio.RemoveObjectOptions{VersionID: v1.VersionID}); err != nil {
		t.Fatal(err)
	}
	_, err = s.Tags(ctx, name, "acme/a.md", v1.VersionID)
	gone("tags of a removed version", err)
	_, err = s.Metadata(ctx, name, "acme/a.md", v1.VersionID, "")
	gone("metadata of a removed version", err)
	if err := e.s3.RemoveObject(ctx, name, "acme/a.md", minio.RemoveObjectOptions{}); err != nil { // a delete marker
		t.Fatal(err)
	}
	_, err = s.Tags(ctx, name, "acme/a.md", "")
	gone("tags under a delete marker", err)
	_, err = s.Metadata(ctx, name, "acme/a.md", "", "")
	gone("metadata under a delete marker", err)
	var marker string
	for o := range e.s3.ListObjects(ctx, name, minio.ListObjectsOptions{WithVersions: true, Prefix: "acme/"}) {
		if o.IsDeleteMarker {
			marker = o.VersionID
		}
	}
	_, err = s.Tags(ctx, name, "acme/a.md", marker)
	gone("tags of a delete marker", err)

	// A store that cannot read tags is not told the object is gone: the
	// event is retried rather than published without its groups.
	denied, err := bucket.Client(e.s3Host, testservers.LocalS3AccessKey, "wrong-secret", false)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Store{Client: denied}.Tags(ctx, name, "acme/a.md", v2.VersionID)
	if err == nil || errors.Is(err, ingest.ErrGone) {
		t.Fatalf("tags read with a wrong secret: err = %v, want a failure other than ErrGone", err)
	}
}
