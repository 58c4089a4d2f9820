package store

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/shared/access"
	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/testservers"
	"github.com/strata-kb/strata/shared/testservers/serverstest"
)

// announce records, as the relabels watch would, that an access change
// gives path's file version fileVersionID the readers.
func announce(c *Catalog, project, path, fileVersionID string, readers ...string) {
	fileID := ids.File(project, "", path)
	c.setRelabel(project, fileID, &pipeline.Relabel{Project: project, FileID: fileID, FileVersionID: fileVersionID,
		Readers: readers, ReadAt: time.Now(), AnnouncedAt: time.Now()})
}

// TestAnnouncedAccessChangeDecidesEveryRead: while an access change is
// being applied, every index read takes the file's readers from its
// announcement, not from the objects (which still hold the old readers
// here): searches, reads by id, listings and counts, inside Weaviate's
// filter. Withdrawn, the objects' readers decide again. (An announcement
// the catalog's versions supersede: TestCatalogFollowsAnnouncedAccessChange.)
func TestAnnouncedAccessChangeDecidesEveryRead(t *testing.T) {
	const project = "relabel"
	s := writeAccessFixture(t, project)
	c := &Catalog{log: silentLog(), byKey: map[string]*projectCatalog{}}
	s.SetCatalog(c) // not ready: every read goes to Weaviate
	fv := func(path string) string { return ids.FileVersion(ids.File(project, "", path), "e", "s") }

	announce(c, project, "hr/secret.md", fv("hr/secret.md"), "finance")
	announce(c, project, "public/open.md", fv("public/open.md"), "hr")
	grants := map[string]access.Grant{
		"admin": {Admin: true}, "hr": {Groups: []string{"hr"}}, "finance": {Groups: []string{"finance"}}, "none": {},
	}
	announced := map[string][]string{
		"admin":   {"brokenaxolotl", "legacyibis", "openquokka", "secretwombat", "splitnarwhal"},
		"hr":      {"openquokka"},
		"finance": {"secretwombat"},
		"none":    nil,
	}
	checkEveryRead(t, s, project, grants, announced)
	// Searches over gRPC, as queryd runs, build the same filter.
	if err := s.SetGRPC(serverstest.StartShared(t).WeaviateGRPCHost, testservers.LocalWeaviateWriter, nil); err != nil {
		t.Fatal(err)
	}
	checkEveryRead(t, s, project, grants, announced)

	c.setRelabel(project, ids.File(project, "", "hr/secret.md"), nil)
	c.setRelabel(project, ids.File(project, "", "public/open.md"), nil)
	checkEveryRead(t, s, project, grants, map[string][]string{
		"admin":   {"brokenaxolotl", "legacyibis", "openquokka", "secretwombat", "splitnarwhal"},
		"hr":      {"openquokka", "secretwombat"},
		"finance": {"openquokka"},
		"none":    {"openquokka"},
	})
}

// TestCatalogFollowsAnnouncedAccessChange: the catalog's own answers
// (listings, counts, reads of a chunk by id) take an announced change's
// readers until the catalog holds another version of the file.
func TestCatalogFollowsAnnouncedAccessChange(t *testing.T) {
	c := &Catalog{log: silentLog(), byKey: map[string]*projectCatalog{}, marks: map[string]map[string]map[string]bool{}}
	c.ready.Store(true)
	c.marksReady.Store(true)
	s := (&Store{}).SetCatalog(c)
	pc := newProjectCatalog()
	c.byKey["acme"] = pc
	id := ids.File("acme", "", "hr/pay.md")
	v1 := ids.FileVersion(id, "e1", "s1")
	pc.add([]Version{{FileID: id, FilePath: "hr/pay.md", FileVersionID: v1, Status: pipeline.StatusIndexed, ValidFrom: 1, ChunkCount: 1, Readers: []string{"hr"}}}, 1, nil)
	hr := access.WithGrant(context.Background(), access.Grant{Groups: []string{"hr"}})
	finance := access.WithGrant(context.Background(), access.Grant{Groups: []string{"finance"}})
	reads := func(ctx context.Context) bool {
		docs, _ := s.DocumentsUnder(ctx, "acme", nil, 10)
		st, _ := c.Stats(ctx, "acme")
		may, _ := s.MayRead(ctx, "acme", id)
		if (len(docs) == 1) != may || (st.Indexed == 1) != may {
			t.Fatalf("listing %d, stats %+v and MayRead %v disagree", len(docs), st, may)
		}
		return may
	}
	if !reads(hr) || reads(finance) {
		t.Fatal("before the change: hr must read the file, finance not")
	}
	announced := pipeline.Relabel{Project: "acme", FileID: id, FileVersionID: v1, Readers: []string{"finance"}, ReadAt: time.Now(), AnnouncedAt: time.Now()}
	c.setRelabel("acme", id, &announced)
	if reads(hr) || !reads(finance) {
		t.Fatal("announced: finance must read the file, hr not")
	}
	// One older than the bucket keeps records is ignored (an indexer died mid-change).
	expired := announced
	expired.AnnouncedAt = time.Now().Add(-pipeline.RelabelMaxAge - time.Minute)
	c.setRelabel("acme", id, &expired)
	if !reads(hr) || reads(finance) {
		t.Fatal("an expired announcement must not decide")
	}
	c.setRelabel("acme", id, &announced)
	// New content committed with its own read: the announcement no longer speaks for the file.
	v2 := ids.FileVersion(id, "e2", "s2")
	pc.add([]Version{{FileID: id, FilePath: "hr/pay.md", FileVersionID: v2, Status: pipeline.StatusIndexed, ValidFrom: 2, ChunkCount: 1, Readers: []string{"hr"}}}, 2, nil)
	if !reads(hr) || reads(finance) {
		t.Fatal("after a new version: its own readers (hr) decide")
	}
	if allow, deny := c.relabelled("acme", access.Grant{Groups: []string{"finance"}}); len(allow)+len(deny) != 0 {
		t.Fatalf("a superseded announcement still filters: allow %v deny %v", allow, deny)
	}
}

// TestRelabelsWatch: the catalog follows the relabels bucket: a put
// announces, a delete withdraws, an unreadable value or a key of another
// file announces nothing.
func TestRelabelsWatch(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real nats-server")
	}
	nc, js, err := pipeline.Connect(serverstest.NATS(t), "relabels-test", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: pipeline.RelabelsBucket, History: 1})
	if err != nil {
		t.Fatal(err)
	}
	c := &Catalog{log: silentLog(), byKey: map[string]*projectCatalog{}}
	done := make(chan struct{})
	go func() { defer close(done); c.watchRelabels(ctx, js) }()
	defer func() { cancel(); <-done }()

	id, other := ids.File("acme", "", "a.md"), ids.File("acme", "", "b.md")
	put := func(key string, r any) {
		val, _ := json.Marshal(r)
		if _, err := kv.Put(ctx, key, val); err != nil {
			t.Fatal(err)
		}
	}
	finance := access.Grant{Groups: []string{"finance"}}
	put(pipeline.RelabelKey("acme", id), pipeline.Relabel{Project: "acme", FileID: id, FileVersionID: "v", Readers: []string{"finance"}, AnnouncedAt: time.Now()})
	put(pipeline.RelabelKey("acme", other), pipeline.Relabel{Project: "acme", FileID: id, FileVersionID: "v", Readers: []string{"finance"}, AnnouncedAt: time.Now()}) // names another file
	put(pipeline.RelabelKey("acme", ids.File("acme", "", "c.md")), "not a relabel")
	// A good value of another project, put last: the watch delivers in
	// order, so once it is applied the two bad values were too.
	beta := ids.File("beta", "", "d.md")
	put(pipeline.RelabelKey("beta", beta), pipeline.Relabel{Project: "beta", FileID: beta, FileVersionID: "v", Readers: []string{"finance"}, AnnouncedAt: time.Now()})
	waitFor(t, "the announcement of beta's d.md, put after the bad values", func() bool { allow, _ := c.relabelled("beta", finance); return len(allow) > 0 })
	if allow, deny := c.relabelled("acme", finance); !slices.Equal(allow, []string{id}) || len(deny) != 0 {
		t.Fatalf("allow %v deny %v, want only %s allowed", allow, deny, id)
	}
	if err := kv.Delete(ctx, pipeline.RelabelKey("acme", id)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the withdrawal", func() bool { allow, deny := c.relabelled("acme", finance); return len(allow)+len(deny) == 0 })
}

func silentLog() *slog.Logger { return slog.New(slog.DiscardHandler) }
