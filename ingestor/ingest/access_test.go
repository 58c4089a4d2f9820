package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/worker"
)

func TestAccessFrom(t *testing.T) {
	readAt := time.Date(2026, 11, 22, 1, 2, 3, 0, time.UTC)
	tests := []struct {
		name           string
		tags, metadata map[string]string
		groups         []string
		source         string
		errContains    string
	}{
		{name: "neither"},
		{name: "other tags and metadata only", tags: map[string]string{"team": "hr"}, metadata: map[string]string{"Owner": "x"}},
		{name: "tag", tags: map[string]string{"strata-groups": "hr finance"}, groups: []string{"finance", "hr"}, source: "tag"},
		{name: "tag with repeats and extra spaces", tags: map[string]string{"strata-groups": "  hr  hr finance "}, groups: []string{"finance", "hr"}, source: "tag"},
		{name: "metadata with commas", metadata: map[string]string{"strata-groups": "hr,finance"}, groups: []string{"finance", "hr"}, source: "metadata"},
		{name: "metadata as MinIO returns it", metadata: map[string]string{"Strata-Groups": "hr, finance legal"}, groups: []string{"finance", "hr", "legal"}, source: "metadata"},
		{name: "tag wins over metadata", tags: map[string]string{"strata-groups": "legal"}, metadata: map[string]string{"Strata-Groups": "hr"}, groups: []string{"legal"}, source: "tag"},
		{name: "tag key in another case", tags: map[string]string{"Strata-Groups": "ops"}, groups: []string{"ops"}, source: "tag"},
		{name: "uppercase group", tags: map[string]string{"strata-groups": "HR"}, source: "tag", errContains: `invalid group "HR"`},
		{name: "comma in a tag", tags: map[string]string{"strata-groups": "a,b"}, source: "tag", errContains: `invalid group "a,b"`},
		{name: "empty tag", tags: map[string]string{"strata-groups": ""}, source: "tag", errContains: "names no group"},
		{name: "blank tag", tags: map[string]string{"strata-groups": "   "}, source: "tag", errContains: "names no group"},
		{name: "empty metadata", metadata: map[string]string{"Strata-Groups": ""}, source: "metadata", errContains: "names no group"},
		{name: "bad metadata", metadata: map[string]string{"Strata-Groups": "hr;finance"}, source: "metadata", errContains: "invalid group"},
		// A bad tag is not replaced by good metadata: whoever set the tag
		// meant to restrict the document, and the error says so.
		{name: "bad tag over good metadata", tags: map[string]string{"strata-groups": "HR"}, metadata: map[string]string{"Strata-Groups": "hr"}, source: "tag", errContains: "invalid group"},
		{name: "two spellings disagree", tags: map[string]string{"strata-groups": "hr", "STRATA-GROUPS": "ops"}, source: "tag", errContains: "twice"},
		{name: "two spellings agree", tags: map[string]string{"strata-groups": "hr", "Strata-Groups": "hr"}, groups: []string{"hr"}, source: "tag"},
		{name: "too many groups", tags: map[string]string{"strata-groups": manyGroups(65)}, source: "tag", errContains: "more than 64"},
		// minio-js's putObject turns an x-amz-tagging header into user
		// metadata: read as the tags it was meant to be (issue 50 item 6).
		{name: "x-amz-tagging metadata", metadata: map[string]string{"X-Amz-Tagging": "strata-groups=hr&team=x"}, groups: []string{"hr"}, source: "x-amz-tagging metadata"},
		{name: "x-amz-tagging with two groups", metadata: map[string]string{"x-amz-tagging": "strata-groups=hr%20finance"}, groups: []string{"finance", "hr"}, source: "x-amz-tagging metadata"},
		{name: "a real tag wins over x-amz-tagging metadata", tags: map[string]string{"strata-groups": "legal"}, metadata: map[string]string{"X-Amz-Tagging": "strata-groups=hr"}, groups: []string{"legal"}, source: "tag"},
		{name: "x-amz-tagging wins over strata-groups metadata", metadata: map[string]string{"X-Amz-Tagging": "strata-groups=hr", "Strata-Groups": "ops"}, groups: []string{"hr"}, source: "x-amz-tagging metadata"},
		{name: "x-amz-tagging without groups", metadata: map[string]string{"X-Amz-Tagging": "team=x", "Strata-Groups": "ops"}, groups: []string{"ops"}, source: "metadata"},
		{name: "x-amz-tagging that does not parse", metadata: map[string]string{"X-Amz-Tagging": "strata-groups=hr;%zz"}, source: "x-amz-tagging metadata", errContains: "not a tag query string"},
		{name: "x-amz-tagging naming the groups twice", metadata: map[string]string{"X-Amz-Tagging": "strata-groups=hr&strata-groups=ops"}, source: "x-amz-tagging metadata", errContains: "2 times"},
		// A near miss fails closed: admins only, with the reason.
		{name: "tag strata-group", tags: map[string]string{"strata-group": "hr"}, source: "tag", errContains: `"strata-group" is not strata-groups`},
		{name: "tag strata_groups", tags: map[string]string{"strata_groups": "hr"}, source: "tag", errContains: "misspelt"},
		{name: "metadata Strata-Group", metadata: map[string]string{"Strata-Group": "hr"}, source: "metadata", errContains: "misspelt"},
		{name: "x-amz-tagging stratagroups", metadata: map[string]string{"X-Amz-Tagging": "stratagroups=hr"}, source: "x-amz-tagging metadata", errContains: "misspelt"},
		{name: "a near miss beside the right name is not read", tags: map[string]string{"strata-groups": "hr", "strata_group": "ops"}, groups: []string{"hr"}, source: "tag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := accessFrom(tt.tags, tt.metadata, readAt)
			if !slices.Equal(got.Groups, tt.groups) || got.Source != tt.source || !got.ReadAt.Equal(readAt) {
				t.Fatalf("got %+v, want groups %v source %q", got, tt.groups, tt.source)
			}
			if tt.errContains == "" && got.Error != "" || !strings.Contains(got.Error, tt.errContains) {
				t.Fatalf("error %q, want one containing %q", got.Error, tt.errContains)
			}
			if tt.errContains != "" && !strings.HasPrefix(got.Error, tt.source+" ") {
				t.Fatalf("error %q does not say it is the %s's", got.Error, tt.source)
			}
		})
	}
}

func manyGroups(n int) string {
	var gs []string
	for i := range n {
		gs = append(gs, fmt.Sprintf("g%d", i))
	}
	return strings.Join(gs, " ")
}

// storeIngestor is an Ingestor on store, publishing to the returned fake.
func storeIngestor(t *testing.T, store fakeStore, states *fakeStates) (*Ingestor, *fakePub) {
	t.Helper()
	in, pub := newIngestor(t, nil)
	in.store, in.states = store, states
	return in, pub
}

// Every file version carries its groups: indexed, failed, unsupported and
// too large alike, a bad value included (the file is still indexed).
func TestFileVersionAccess(t *testing.T) {
	tests := []struct {
		name, key, content string
		tags, metadata     map[string]string
		status             string
		groups             []string
		source             string
		accessErr          bool
	}{
		{name: "tagged", key: "acme/a.md", content: "# A\n\ntext", tags: map[string]string{"strata-groups": "hr finance"},
			status: pipeline.StatusIndexed, groups: []string{"finance", "hr"}, source: "tag"},
		{name: "metadata", key: "acme/b.md", content: "# B", metadata: map[string]string{"Strata-Groups": "hr,finance"},
			status: pipeline.StatusIndexed, groups: []string{"finance", "hr"}, source: "metadata"},
		{name: "none", key: "acme/c.md", content: "# C", status: pipeline.StatusIndexed},
		{name: "bad value still indexed", key: "acme/d.md", content: "# D\n\nbody", tags: map[string]string{"strata-groups": "HR"},
			status: pipeline.StatusIndexed, source: "tag", accessErr: true},
		{name: "failed file", key: "acme/empty.md", content: "", tags: map[string]string{"strata-groups": "hr"},
			status: pipeline.StatusFailed, groups: []string{"hr"}, source: "tag"},
		{name: "unsupported file", key: "acme/x.bin", content: "\x7fELF\x02\x01\x00\x00binary", metadata: map[string]string{"Strata-Groups": "ops"},
			status: pipeline.StatusUnsupported, groups: []string{"ops"}, source: "metadata"},
		{name: "too large file", key: "acme/huge.md", content: strings.Repeat("a", 9000), metadata: map[string]string{"Strata-Groups": "ops"},
			status: pipeline.StatusFailed, groups: []string{"ops"}, source: "metadata"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := fakeStore{objects: map[string][]byte{tt.key: []byte(tt.content)},
				tags: map[string]map[string]string{tt.key: tt.tags}, metadata: map[string]map[string]string{tt.key: tt.metadata}}
			in, pub := storeIngestor(t, store, &fakeStates{})
			before := time.Now()
			if err := in.HandleEvent(context.Background(), eventJSON("s3:ObjectCreated:Put", tt.key, len(tt.content))); err != nil {
				t.Fatal(err)
			}
			if len(pub.msgs) != 1 {
				t.Fatalf("%d messages", len(pub.msgs))
			}
			fv := decode(t, pub.msgs[0])
			a := fv.Access
			if fv.Status != tt.status || !slices.Equal(a.Groups, tt.groups) || a.Source != tt.source || (a.Error != "") != tt.accessErr {
				t.Fatalf("status %q access %+v", fv.Status, a)
			}
			if a.ReadAt.Before(before.Add(-time.Second)) || a.ReadAt.After(fv.ExtractedAt) {
				t.Fatalf("read at %v, extracted at %v", a.ReadAt, fv.ExtractedAt)
			}
			if tt.accessErr && len(fv.Chunks) == 0 {
				t.Fatal("a bad groups value must not keep the file from being indexed")
			}
		})
	}
}

// Groups that cannot be read are never replaced by none: the event is
// retried, and nothing is published meanwhile.
func TestTagReadFailureIsRetried(t *testing.T) {
	store := fakeStore{objects: map[string][]byte{"acme/a.md": []byte("# A")}, tagsErr: errors.New("connection reset")}
	in, pub := storeIngestor(t, store, &fakeStates{})
	for _, ev := range [][]byte{eventJSON("s3:ObjectCreated:Put", "acme/a.md", 3), taggingJSON(event1)} {
		err := in.HandleEvent(context.Background(), ev)
		if err == nil || worker.IsPermanent(err) || !strings.Contains(err.Error(), "read tags of acme/a.md") {
			t.Fatalf("err = %v, want a retried tag read error", err)
		}
	}
	if len(pub.msgs) != 0 {
		t.Fatalf("published %d messages without groups", len(pub.msgs))
	}
}

// The object is gone by the time its tags are read: a newer event follows.
func TestTagsOfAGoneObject(t *testing.T) {
	store := fakeStore{objects: map[string][]byte{"acme/a.md": []byte("# A")}, tagsErr: fmt.Errorf("get tags of acme/a.md: NoSuchKey: %w", ErrGone)}
	in, pub := storeIngestor(t, store, &fakeStates{})
	for _, ev := range [][]byte{eventJSON("s3:ObjectCreated:Put", "acme/a.md", 3), taggingJSON(event1)} {
		if err := in.HandleEvent(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
	if len(pub.msgs) != 0 {
		t.Fatalf("published %d messages", len(pub.msgs))
	}
}

type tagEvent struct{ name, key, etag, sequencer, requestID, time string }

// event1 is a tag change of acme/a.md's upload (etag1, sequencer 0A).
var event1 = tagEvent{name: "s3:ObjectCreated:PutTagging", key: "acme/a.md", etag: "etag1", sequencer: "0A", requestID: "REQ1", time: "2026-11-22T00:05:00.001Z"}

// taggingJSON is a tag change notification as MinIO sends it: the
// sequencer is the object's modification time, the same as its upload's.
func taggingJSON(e tagEvent) []byte {
	return fmt.Appendf(nil, `{"EventName":%q,"Records":[{"eventName":%q,"eventTime":%q,"responseElements":{"x-amz-request-id":%q},"s3":{"bucket":{"name":"strata"},"object":{"key":%q,"size":3,"eTag":%q,"sequencer":%q}}}]}`,
		e.name, e.name, e.time, e.requestID, url.QueryEscape(e.key), e.etag, e.sequencer)
}

// A tag change publishes the object's groups as they are now, and nothing
// else: no file version, no freshness state.
func TestTagChange(t *testing.T) {
	const key = "acme@feature/a.md"
	store := fakeStore{objects: map[string][]byte{key: []byte("# A")},
		tags:     map[string]map[string]string{key: {"strata-groups": "ops sec", "Team": "legal"}},
		metadata: map[string]map[string]string{key: {"Strata-Groups": "hr", "Owner": "=?UTF-8?B?Wm/Dqw==?="}}}
	states := &fakeStates{}
	in, pub := storeIngestor(t, store, states)
	ev := event1
	ev.key = key
	if err := in.HandleEvent(context.Background(), taggingJSON(ev)); err != nil {
		t.Fatal(err)
	}
	if len(pub.msgs) != 1 {
		t.Fatalf("%d messages", len(pub.msgs))
	}
	m := pub.msgs[0]
	if m.subject != "strata.chunks.acme" || m.headers[pipeline.HeaderKind] != pipeline.KindTagsChanged {
		t.Fatalf("published on %s kind %s", m.subject, m.headers[pipeline.HeaderKind])
	}
	var ac pipeline.TagsChanged
	if err := json.Unmarshal(m.data, &ac); err != nil {
		t.Fatal(err)
	}
	if ac.FileID != ids.File("acme", "feature", "a.md") || ac.Object.Key != key || ac.Object.Branch != "feature" || ac.Object.Sequencer != "0A" {
		t.Fatalf("%+v", ac)
	}
	if !slices.Equal(ac.Access.Groups, []string{"ops", "sec"}) || ac.Access.Source != "tag" || ac.Access.Error != "" || ac.Access.ReadAt.IsZero() {
		t.Fatalf("access %+v", ac.Access)
	}
	// The tags and user metadata as read with the groups, for the indexer
	// to merge with the file's own metadata.
	if !maps.Equal(ac.Tags, map[string]string{"strata-groups": "ops sec", "Team": "legal"}) ||
		!maps.Equal(ac.UserMetadata, map[string]string{"Strata-Groups": "hr", "Owner": "Zoë"}) {
		t.Fatalf("tags %q, user metadata %q", ac.Tags, ac.UserMetadata)
	}
	if len(states.states) != 0 {
		t.Fatalf("a tag change recorded freshness states %+v", states.states)
	}

	// Tags removed: the metadata's groups apply again.
	store.tags[key] = nil
	ev.name, ev.requestID, ev.time = "s3:ObjectCreated:DeleteTagging", "REQ2", "2026-11-22T00:06:00Z"
	if err := in.HandleEvent(context.Background(), taggingJSON(ev)); err != nil {
		t.Fatal(err)
	}
	if len(pub.msgs) != 2 || pub.msgs[1].headers[pipeline.HeaderKind] != pipeline.KindTagsChanged {
		t.Fatalf("%d messages", len(pub.msgs))
	}
	ac = pipeline.TagsChanged{}
	if err := json.Unmarshal(pub.msgs[1].data, &ac); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ac.Access.Groups, []string{"hr"}) || ac.Access.Source != "metadata" || len(ac.Tags) != 0 || ac.UserMetadata["Owner"] != "Zoë" {
		t.Fatalf("after DeleteTagging: access %+v, tags %q, user metadata %q", ac.Access, ac.Tags, ac.UserMetadata)
	}
}

// A tag change carries its upload's sequencer and ETag (MinIO's sequencer
// is the modification time, which tagging keeps), so the copy check must not
// take it for a second copy of that committed upload.
func TestTagChangeIsNotACopyOfItsUpload(t *testing.T) {
	store := fakeStore{objects: map[string][]byte{"acme/a.md": []byte("# A")}, tags: map[string]map[string]string{"acme/a.md": {"strata-groups": "hr"}}}
	states := &fakeStates{states: []pipeline.ObjectState{{Key: "acme/a.md", Project: "acme", ETag: "etag1", Sequencer: "0A",
		State: pipeline.StateIndexed, Stages: pipeline.StageTimes{Seen: time.Now().Add(-time.Second)}}}}
	in, pub := storeIngestor(t, store, states)
	if err := in.HandleEvent(context.Background(), taggingJSON(event1)); err != nil {
		t.Fatal(err)
	}
	if len(pub.msgs) != 1 || pub.msgs[0].headers[pipeline.HeaderKind] != pipeline.KindTagsChanged {
		t.Fatalf("published %d messages, want the access change", len(pub.msgs))
	}
	if len(states.states) != 1 || states.states[0].State != pipeline.StateIndexed {
		t.Fatalf("states %+v: the upload's state must stay as it was", states.states)
	}
}

// Both copies of one tag change event (MinIO's live and durable targets)
// share a message id, for the stream to keep one; two tag changes of one
// version share the sequencer but not the message id.
func TestTagChangeMessageIDs(t *testing.T) {
	store := fakeStore{objects: map[string][]byte{"acme/a.md": []byte("# A")}}
	in, pub := storeIngestor(t, store, &fakeStates{})
	second := event1
	second.name, second.requestID, second.time = "s3:ObjectCreated:PutTagging", "REQ2", "2026-11-22T00:05:00.002Z"
	for _, ev := range []tagEvent{event1, event1, second} {
		if err := in.HandleEvent(context.Background(), taggingJSON(ev)); err != nil {
			t.Fatal(err)
		}
	}
	ids := []string{pub.msgs[0].msgID, pub.msgs[1].msgID, pub.msgs[2].msgID}
	if ids[0] != ids[1] || ids[0] == ids[2] || !strings.Contains(ids[0], "0A") {
		t.Fatalf("message ids %q", ids)
	}
}
