package ingest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/strata-kb/strata/ingestor/event"
	"github.com/strata-kb/strata/shared/pipeline"
)

// The digest is one function of what two reads of the same object may
// spell differently (map order, nil or empty, metadata key case, RFC 2047
// words or their text), and tells apart anything else.
func TestTagsDigest(t *testing.T) {
	base := TagsDigest(map[string]string{"strata-groups": "hr", "Team": "legal"}, map[string]string{"Owner": "Zoë", "Strata-Groups": "ops"})
	same := map[string]struct{ tags, meta map[string]string }{
		"map order":         {map[string]string{"Team": "legal", "strata-groups": "hr"}, map[string]string{"Strata-Groups": "ops", "Owner": "Zoë"}},
		"metadata key case": {map[string]string{"strata-groups": "hr", "Team": "legal"}, map[string]string{"owner": "Zoë", "STRATA-GROUPS": "ops"}},
		"encoded metadata":  {map[string]string{"strata-groups": "hr", "Team": "legal"}, map[string]string{"Owner": "=?UTF-8?B?Wm/Dqw==?=", "Strata-Groups": "ops"}},
	}
	for name, c := range same {
		if d := TagsDigest(c.tags, c.meta); d != base {
			t.Errorf("%s: digest %s, want %s", name, d, base)
		}
	}
	if TagsDigest(nil, nil) != TagsDigest(map[string]string{}, map[string]string{}) {
		t.Error("nil and empty maps digest differently")
	}
	different := map[string]struct{ tags, meta map[string]string }{
		"a tag value":         {map[string]string{"strata-groups": "finance", "Team": "legal"}, map[string]string{"Owner": "Zoë", "Strata-Groups": "ops"}},
		"a tag key's case":    {map[string]string{"Strata-Groups": "hr", "Team": "legal"}, map[string]string{"Owner": "Zoë", "Strata-Groups": "ops"}},
		"a tag removed":       {map[string]string{"strata-groups": "hr"}, map[string]string{"Owner": "Zoë", "Strata-Groups": "ops"}},
		"an empty tag added":  {map[string]string{"strata-groups": "hr", "Team": "legal", "x": ""}, map[string]string{"Owner": "Zoë", "Strata-Groups": "ops"}},
		"a metadata value":    {map[string]string{"strata-groups": "hr", "Team": "legal"}, map[string]string{"Owner": "Zoe", "Strata-Groups": "ops"}},
		"tag moved to meta":   {map[string]string{"strata-groups": "hr"}, map[string]string{"Owner": "Zoë", "Strata-Groups": "ops", "team": "legal"}},
		"no metadata":         {map[string]string{"strata-groups": "hr", "Team": "legal"}, nil},
		"separators in value": {map[string]string{"strata-groups": "hr\" \"Team\" \"legal", "Team": "legal"}, map[string]string{"Owner": "Zoë", "Strata-Groups": "ops"}},
	}
	seen := map[string]string{base: "base"}
	for name, c := range different {
		d := TagsDigest(c.tags, c.meta)
		if other, ok := seen[d]; ok {
			t.Errorf("%s: same digest as %s", name, other)
		}
		seen[d] = name
	}
	if !strings.HasPrefix(base, tagsDigestScheme) || !comparableDigests(base, TagsDigest(nil, nil)) ||
		comparableDigests(base, "") || comparableDigests("", "") || comparableDigests(base, "t0:abc") {
		t.Errorf("digest %s: scheme comparison", base)
	}
}

// What an unforced reindex does with a listed object given its recorded
// state: the ETag decides whether the upload is re-emitted; with the same
// ETag, the tags digest whether a tag change is.
func TestReindexDecision(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	d1 := TagsDigest(map[string]string{"strata-groups": "hr"}, nil)
	d2 := TagsDigest(map[string]string{"strata-groups": "finance"}, nil)
	old := now.Add(-time.Hour)
	obj := func(etag, digest string, modified time.Time) ObjectInfo {
		return ObjectInfo{Key: "acme/a.md", ETag: etag, TagsDigest: digest, LastModified: modified}
	}
	state := func(state, etag, digest string) *pipeline.ObjectState {
		return &pipeline.ObjectState{Key: "acme/a.md", ETag: etag, State: state, Sequencer: "0A", TagsDigest: digest, UpdatedAt: now.Add(-time.Minute)}
	}
	tests := []struct {
		name         string
		st           *pipeline.ObjectState
		o            ObjectInfo
		force, retag bool // the request's
		want         action
	}{
		{"digest equal", state(pipeline.StateIndexed, "e1", d1), obj("e1", d1, old), false, false, skip},
		{"digest different", state(pipeline.StateIndexed, "e1", d1), obj("e1", d2, old), false, false, retag},
		{"digest different, embedded", state(pipeline.StateEmbedded, "e1", d1), obj("e1", d2, old), false, false, retag},
		{"digest different, failed file", state(pipeline.StateFailed, "e1", d1), obj("e1", d2, old), false, false, retag},
		{"digest different, forced", state(pipeline.StateIndexed, "e1", d1), obj("e1", d2, old), true, false, reupload},
		{"state without a digest (before digests)", state(pipeline.StateIndexed, "e1", ""), obj("e1", d2, old), false, false, skip},
		{"listing without tags (not MinIO)", state(pipeline.StateIndexed, "e1", d1), obj("e1", "", old), false, false, skip},
		{"digest of another scheme", state(pipeline.StateIndexed, "e1", "t0:abc"), obj("e1", d2, old), false, false, skip},
		{"state without a digest, retag asked", state(pipeline.StateIndexed, "e1", ""), obj("e1", d2, old), false, true, retag},
		{"digest equal, retag asked", state(pipeline.StateIndexed, "e1", d1), obj("e1", d1, old), false, true, skip},
		{"digest different, retag asked", state(pipeline.StateIndexed, "e1", d1), obj("e1", d2, old), false, true, retag},
		{"state without a digest, pending, retag asked", state(pipeline.StatePending, "e1", ""), obj("e1", d2, old), false, true, skip},
		{"state without a digest, ETag different, retag asked", state(pipeline.StateIndexed, "e1", ""), obj("e2", d2, old), false, true, reupload},
		{"digest different, upload pending", state(pipeline.StatePending, "e1", d1), obj("e1", d2, old), false, false, skip},
		{"digest different, uploaded within MinAge", state(pipeline.StateIndexed, "e1", d1), obj("e1", d2, now.Add(-30*time.Second)), false, false, skip},
		{"ETag different", state(pipeline.StateIndexed, "e1", d1), obj("e2", d1, old), false, false, reupload},
		{"ETag different, digest different", state(pipeline.StateIndexed, "e1", d1), obj("e2", d2, old), false, false, reupload},
		{"ETag different within MinAge", state(pipeline.StateIndexed, "e1", d1), obj("e2", d2, now.Add(-30*time.Second)), false, false, skip},
		{"no state", nil, obj("e1", d1, old), false, false, reupload},
		{"deleted state", state(pipeline.StateDeleted, "e1", d1), obj("e1", d2, old), false, false, reupload},
	}
	r := &Reindexer{MinAge: time.Minute}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.decide(tt.st, tt.o, pipeline.ReindexRequest{Force: tt.force, Retag: tt.retag}, now); got != tt.want {
				t.Fatalf("decide = %d, want %d", got, tt.want)
			}
		})
	}
}

// A lost tag change becomes a tagging event in MinIO's format on the
// objects stream: the upload's ETag and sequencer (like MinIO's), parsed as
// a tag change, with a message id naming the change.
func TestReindexEmitsTaggingEvents(t *testing.T) {
	old := time.Now().Add(-time.Hour)
	d1 := TagsDigest(map[string]string{"strata-groups": "hr"}, nil)
	d2 := TagsDigest(map[string]string{"strata-groups": "finance"}, nil)
	objects := fakeLister{
		{Key: "acme/same.md", ETag: "e1", TagsDigest: d1, LastModified: old},
		{Key: "acme/retagged.md", ETag: "e2", TagsDigest: d2, Size: 7, LastModified: old},
		{Key: "acme/legacy.md", ETag: "e3", TagsDigest: d2, LastModified: old},
		{Key: "acme/changed.md", ETag: "e4-new", TagsDigest: d2, LastModified: old},
	}
	states := fakeStateReader{
		"acme/same.md":     {Key: "acme/same.md", ETag: "e1", State: pipeline.StateEmbedded, Sequencer: "0A", TagsDigest: d1},
		"acme/retagged.md": {Key: "acme/retagged.md", ETag: "e2", State: pipeline.StateIndexed, Sequencer: "18EBAF9F84EC1580", TagsDigest: d1},
		"acme/legacy.md":   {Key: "acme/legacy.md", ETag: "e3", State: pipeline.StateIndexed, Sequencer: "0C"},
		"acme/changed.md":  {Key: "acme/changed.md", ETag: "e4", State: pipeline.StateIndexed, Sequencer: "0D", TagsDigest: d1},
	}
	pub := &fakePub{}
	r := &Reindexer{Bucket: "strata", Lister: objects, States: states, Pub: pub, MinAge: time.Minute}
	res, err := r.Handle(context.Background(), "strata.reindex.acme", nil)
	if err != nil || res != (ReindexResult{Listed: 4, Emitted: 1, Retagged: 1, Skipped: 2}) {
		t.Fatalf("result %+v %v", res, err)
	}
	var tagging []event.Record
	var ids []string
	for _, m := range pub.msgs {
		recs, err := event.Parse(m.data)
		if err != nil || len(recs) != 1 || m.subject != pipeline.ObjectEventsSubject {
			t.Fatalf("event on %s does not parse: %v %s", m.subject, err, m.data)
		}
		if recs[0].Op == event.Tagging {
			tagging = append(tagging, recs[0])
			ids = append(ids, m.msgID)
		} else if recs[0].Key != "acme/changed.md" || recs[0].Op != event.Put {
			t.Fatalf("re-emitted %+v", recs[0])
		}
	}
	if len(tagging) != 1 {
		t.Fatalf("%d tagging events", len(tagging))
	}
	rec := tagging[0]
	if rec.Key != "acme/retagged.md" || rec.Name != event.PutTagging || rec.ETag != "e2" || rec.Sequencer != "18EBAF9F84EC1580" ||
		rec.Size != 7 || rec.Bucket != "strata" || rec.RequestID == "" || rec.Time.IsZero() || rec.VersionID != "" {
		t.Fatalf("tagging event %+v", rec)
	}
	if !strings.HasPrefix(ids[0], "reindex-tags-acme/retagged.md-") {
		t.Fatalf("message id %s", ids[0])
	}
	// A retried request publishes the same message id, which the stream drops.
	pub2 := &fakePub{}
	r.Pub = pub2
	if _, err := r.Handle(context.Background(), "strata.reindex.acme", nil); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range pub2.msgs {
		found = found || m.msgID == ids[0]
	}
	if !found {
		t.Fatalf("a retry published other message ids than %s", ids[0])
	}
	// Asked to, it re-reads the tags of the object recorded without a digest too.
	res, err = r.Handle(context.Background(), "strata.reindex.acme", []byte(`{"retag":true}`))
	if err != nil || res != (ReindexResult{Listed: 4, Emitted: 1, Retagged: 2, Skipped: 1}) {
		t.Fatalf("retag: %+v %v", res, err)
	}
}

// The event path sends the digest of what it read with the access, for the
// indexer to record once applied: an upload with its file version (a too
// large one too), a tag change with the change. It writes no state for it:
// what the ingestor sent is not yet what the index holds.
func TestEventPathSendsTheTagsDigest(t *testing.T) {
	const key = "acme/a.md"
	tags := map[string]string{"strata-groups": "hr", "Team": "legal"}
	meta := map[string]string{"Owner": "=?UTF-8?B?Wm/Dqw==?="}
	store := fakeStore{objects: map[string][]byte{key: []byte("# A")}, tags: map[string]map[string]string{key: tags},
		metadata: map[string]map[string]string{key: meta}}
	want := TagsDigest(tags, meta)
	sent := func(m published) pipeline.Access {
		t.Helper()
		var msg struct {
			Access pipeline.Access `json:"access"`
		}
		if err := json.Unmarshal(m.data, &msg); err != nil {
			t.Fatal(err)
		}
		return msg.Access
	}
	for name, size := range map[string]int{"upload": 3, "too large": 9000} {
		states := &fakeStates{}
		s := store
		if size > 1000 {
			s.objects = map[string][]byte{key: []byte(strings.Repeat("a", size))}
		}
		in, pub := storeIngestor(t, s, states)
		if err := in.HandleEvent(context.Background(), eventJSON("s3:ObjectCreated:Put", key, size)); err != nil {
			t.Fatal(err)
		}
		if len(pub.msgs) != 1 || pub.msgs[0].headers[pipeline.HeaderKind] != pipeline.KindFileVersion {
			t.Fatalf("%s: published %+v", name, pub.msgs)
		}
		if acc := sent(pub.msgs[0]); acc.TagsDigest != want || acc.ReadAt.IsZero() {
			t.Fatalf("%s: access %+v, want the digest %s", name, acc, want)
		}
		for _, st := range states.states {
			if st.TagsDigest != "" {
				t.Fatalf("%s: the ingestor recorded a digest: %+v", name, states.states)
			}
		}
	}
	states := &fakeStates{states: []pipeline.ObjectState{{Key: key, Project: "acme", ETag: "etag1", Sequencer: "0A",
		State: pipeline.StateIndexed, Sequence: 3, TagsDigest: "t1:old"}}}
	in, pub := storeIngestor(t, store, states)
	if err := in.HandleEvent(context.Background(), taggingJSON(event1)); err != nil {
		t.Fatal(err)
	}
	if len(pub.msgs) != 1 || pub.msgs[0].headers[pipeline.HeaderKind] != pipeline.KindTagsChanged {
		t.Fatalf("tag change: published %+v", pub.msgs)
	}
	if acc := sent(pub.msgs[0]); acc.TagsDigest != want {
		t.Fatalf("tag change: access %+v, want the digest %s", acc, want)
	}
	if len(states.states) != 1 || states.states[0].TagsDigest != "t1:old" {
		t.Fatalf("tag change: states %+v: the ingestor must not record the digest", states.states)
	}
}
