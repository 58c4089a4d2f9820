package index

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/weaviate/weaviate-go-client/v4/weaviate"
	"github.com/weaviate/weaviate-go-client/v4/weaviate/graphql"

	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/objkey"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/wvquery"
)

// versionOn is version() on a branch ("" = main).
func versionOn(project, branch, path, etag, sequencer string, contents ...string) pipeline.FileVersion {
	fv := version(project, path, etag, sequencer, contents...)
	if branch == "" {
		return fv
	}
	fileID := ids.File(project, branch, path)
	fv.Object.Branch, fv.Object.Key, fv.FileID = branch, project+"@"+branch+"/"+path, fileID
	fv.FileVersionID = ids.FileVersion(fileID, etag+"@"+sequencer, "sum-"+etag)
	sec := ids.Section(fv.FileVersionID, 0)
	fv.Sections[0].ID = sec
	for i := range fv.Chunks {
		fv.Chunks[i].ID, fv.Chunks[i].SectionID = ids.Chunk(fv.FileVersionID, i), sec
	}
	return fv
}

// archive is a ZIP's version at path with a member per name, each member
// one chunk of text naming it and etag.
func archive(project, branch, path, etag, sequencer string, members ...string) pipeline.FileVersion {
	fv := versionOn(project, branch, path, etag, sequencer, "contents of "+path)
	fv.Format = "zip"
	for _, m := range members {
		mv := versionOn(project, branch, objkey.MemberPath(path, m), etag, sequencer, m+" of "+etag)
		mv.Object = fv.Object
		mv.Object.Path = objkey.MemberPath(path, m)
		fv.Members = append(fv.Members, mv)
	}
	return fv
}

// memberID is the file id of member m of the file at path.
func memberID(project, branch, path, m string) string {
	return ids.File(project, branch, objkey.MemberPath(path, m))
}

// validFrom lists the valid_from of each Version of the file, sorted.
func validFrom(t *testing.T, wv *weaviate.Client, project, fileID string) []int64 {
	t.Helper()
	resp, err := wv.GraphQL().Get().WithClassName(schema.VersionClass).WithTenant(project).WithWhere(textFilter("file_id", fileID)).
		WithFields(graphql.Field{Name: "valid_from"}).WithLimit(1000).Do(context.Background())
	if err != nil || len(resp.Errors) > 0 {
		t.Fatalf("read Versions of %s: %v %v", fileID, err, resp.Errors)
	}
	var out []int64
	for _, r := range resp.Data["Get"].(map[string]any)[schema.VersionClass].([]any) {
		out = append(out, int64(wvquery.Float(r.(map[string]any), "valid_from")))
	}
	slices.Sort(out)
	return out
}

// keyStates records the object keys whose state a writer records.
type keyStates struct {
	mu   sync.Mutex
	keys map[string]bool
}

func (k *keyStates) Put(_ context.Context, st pipeline.ObjectState) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.keys == nil {
		k.keys = map[string]bool{}
	}
	k.keys[st.Key] = true
	return nil
}

func (k *keyStates) RecordTags(context.Context, string, string, string, time.Time) error { return nil }

// TestAContainerIsOneVersionWithItsMembers: a container's members are
// committed with it at one sequence, each a document of its own; an
// overwrite replaces the set (a member gone is deleted at the new
// sequence, and stays visible as of the old one); a crash before the
// publish leaves none of the set visible; a replay is a duplicate and an
// older event stale, the whole set alike; a delete removes the set at one
// sequence; no member gets an object state (it is no object of the bucket).
func TestAContainerIsOneVersionWithItsMembers(t *testing.T) {
	_, wv := newWriter(t)
	states := &keyStates{}
	w := New(Config{Weaviate: sharedClient, Sequences: sharedSeqs, States: states, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ctx := context.Background()
	const p, path = "members", "share/bundle.zip"
	a, b, c := memberID(p, "", path, "a.txt"), memberID(p, "", path, "reports/b.docx"), memberID(p, "", path, "c.txt")
	v1 := archive(p, "", path, "e1", "10", "a.txt", "reports/b.docx")
	mustApply(t, w, v1, Applied)
	wm := watermark(t, w, p)
	for _, m := range v1.Members {
		if got := visible(t, wv, p, m.FileID, wm); got[m.FileVersionID] != 1 {
			t.Fatalf("member %s at %d: %v", m.Object.Path, wm, got)
		}
		if got := validFrom(t, wv, p, m.FileID); !slices.Equal(got, []int64{wm}) {
			t.Fatalf("member %s committed at %v, want the container's sequence %d", m.Object.Path, got, wm)
		}
	}
	if d := documentOf(t, p, b); d.deleted || d.fileVersionID != v1.Members[1].FileVersionID {
		t.Fatalf("member document %+v", d)
	}
	if props, err := w.object(ctx, schema.DocumentClass, p, b); err != nil || props["folder"] != "share/bundle.zip//reports" || props["name"] != "b.docx" {
		t.Fatalf("member document's folder %q and name %q (%v)", props["folder"], props["name"], err)
	}
	if len(states.keys) != 1 || !states.keys[p+"/"+path] {
		t.Fatalf("object states recorded for %v, want the container's key only", states.keys)
	}

	// An overwrite: a.txt changed, reports/b.docx gone, c.txt new.
	v2 := archive(p, "", path, "e2", "20", "a.txt", "c.txt")
	mustApply(t, w, v2, Applied)
	wm2 := watermark(t, w, p)
	if wm2 != wm+1 {
		t.Fatalf("the overwrite took sequences %d..%d, want one", wm+1, wm2)
	}
	if got := visible(t, wv, p, a, wm2); got[v2.Members[0].FileVersionID] != 1 || len(got) != 1 {
		t.Fatalf("a.txt at %d: %v", wm2, got)
	}
	if got := visible(t, wv, p, c, wm2); got[v2.Members[1].FileVersionID] != 1 {
		t.Fatalf("c.txt at %d: %v", wm2, got)
	}
	if got := visible(t, wv, p, b, wm2); len(got) != 0 {
		t.Fatalf("the gone member is visible at %d: %v", wm2, got)
	}
	if got := visible(t, wv, p, b, wm); got[v1.Members[1].FileVersionID] != 1 {
		t.Fatalf("as of %d the gone member must still be there: %v", wm, got)
	}
	if got := validFrom(t, wv, p, b); !slices.Equal(got, []int64{wm, wm2}) {
		t.Fatalf("the gone member's Versions at %v, want its commit and its delete at the overwrite's %d", got, wm2)
	}
	if d := documentOf(t, p, b); !d.deleted {
		t.Fatalf("the gone member's document is no tombstone: %+v", d)
	}

	mustApply(t, w, v2, Duplicate)
	mustApply(t, w, v1, Stale)
	if got := watermark(t, w, p); got != wm2 {
		t.Fatalf("a replay and a stale event committed: watermark %d", got)
	}

	// A crash before the publish: none of the set is visible, and the
	// redelivery commits all of it.
	v3 := archive(p, "", path, "e3", "30", "a.txt", "d.txt")
	w.publishHook = func() error { return fmt.Errorf("simulated crash") }
	_, err := w.ApplyFileVersion(ctx, v3)
	w.publishHook = nil
	if err == nil {
		t.Fatal("the simulated crash did not happen")
	}
	if got := visible(t, wv, p, a, watermark(t, w, p)); got[v2.Members[0].FileVersionID] != 1 {
		t.Fatalf("after the crash a.txt must be v2's: %v", got)
	}
	mustApply(t, w, v3, Applied)
	wm3 := watermark(t, w, p)
	if got := visible(t, wv, p, memberID(p, "", path, "d.txt"), wm3); got[v3.Members[1].FileVersionID] != 1 {
		t.Fatalf("d.txt after the redelivery: %v", got)
	}
	if got := visible(t, wv, p, c, wm3); len(got) != 0 {
		t.Fatalf("c.txt, gone from v3, visible: %v", got)
	}

	// A delete removes the set at one sequence.
	if out, err := w.ApplyDelete(ctx, deletion(p, path, "40")); err != nil || out != Applied {
		t.Fatalf("delete: %v %v", out, err)
	}
	wm4 := watermark(t, w, p)
	for _, id := range []string{v3.FileID, a, memberID(p, "", path, "d.txt")} {
		if got := visible(t, wv, p, id, wm4); len(got) != 0 {
			t.Fatalf("%s visible after the delete: %v", id, got)
		}
		if got := validFrom(t, wv, p, id); got[len(got)-1] != wm4 {
			t.Fatalf("%s: last Version at %v, want the delete's %d", id, got, wm4)
		}
	}
	if got, _ := w.ApplyDelete(ctx, deletion(p, path, "40")); got != Duplicate {
		t.Fatalf("a replayed delete: %v", got)
	}
	// The container again, later: its members come back with it.
	v5 := archive(p, "", path, "e5", "50", "a.txt")
	mustApply(t, w, v5, Applied)
	if got := visible(t, wv, p, a, watermark(t, w, p)); got[v5.Members[0].FileVersionID] != 1 {
		t.Fatalf("a.txt after the container came back: %v", got)
	}
}

// TestASetIsNeverSplit: a container with more members than MaxGroup is
// committed whole, at one sequence, and the versions waiting beside it
// in commits of their own.
func TestASetIsNeverSplit(t *testing.T) {
	_, wv := newWriter(t)
	w := New(Config{Weaviate: sharedClient, Sequences: sharedSeqs, MaxGroup: 2, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	const p = "members-group"
	big := archive(p, "", "big.zip", "e1", "10", "1.txt", "2.txt", "3.txt", "4.txt")
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i, fv := range []pipeline.FileVersion{big, version(p, "x.md", "x1", "10", "x"), version(p, "y.md", "y1", "10", "y")} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = w.ApplyFileVersion(context.Background(), fv)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	seqs := map[int64]bool{}
	for _, fv := range append([]pipeline.FileVersion{big}, big.Members...) {
		got := validFrom(t, wv, p, fv.FileID)
		if len(got) != 1 {
			t.Fatalf("%s: Versions at %v", fv.Object.Path, got)
		}
		seqs[got[0]] = true
	}
	if len(seqs) != 1 {
		t.Fatalf("the set was committed at sequences %v, want one", seqs)
	}
}

// TestATagChangeRelabelsEveryMember: the members take the container's new
// readers and metadata, every object of theirs, and their access Versions
// are committed at one sequence with the container's.
func TestATagChangeRelabelsEveryMember(t *testing.T) {
	w, wv := newWriter(t)
	const p, path = "members-acl", "mail/launch.eml"
	t0 := time.Now().UTC()
	fv := withAccess(archive(p, "", path, "e1", "10", "notes.txt", "plan.pdf"), t0, "eng")
	fv.Format = "email"
	for i := range fv.Members {
		fv.Members[i].Access = fv.Access
	}
	mustApply(t, w, fv, Applied)
	for _, m := range fv.Members {
		mustVectors(t, w, vectorsOf(m, testModel, 3))
		wantReaders(t, wv, p, m.FileID, []string{"eng"}, nil)
	}
	ac := accessChange(fv, t0.Add(time.Second), "legal")
	ac.Tags = map[string]string{"dept": "legal"}
	mustChange(t, w, ac, Applied)
	wm := watermark(t, w, p)
	for _, f := range append([]pipeline.FileVersion{fv}, fv.Members...) {
		if f.Object.Path != path {
			wantReaders(t, wv, p, f.FileID, []string{"legal"}, nil)
		}
		if got := validFrom(t, wv, p, f.FileID); len(got) != 2 || got[1] != wm {
			t.Fatalf("%s: Versions at %v, want its commit's and the change's %d", f.Object.Path, got, wm)
		}
		if d := documentOf(t, p, f.FileID); d.labels.meta["dept"].Text != "legal" {
			t.Fatalf("%s: metadata %v", f.Object.Path, d.labels.meta)
		}
	}
	mustChange(t, w, ac, Duplicate)
}

// TestABranchContainerHidesMainsMembers: on a branch, a container's
// version shows its own members, not main's it does not have, and a
// delete of it on the branch hides main's members too; main is untouched.
func TestABranchContainerHidesMainsMembers(t *testing.T) {
	w, wv := newWriter(t)
	ctx := context.Background()
	const p, path, br = "members-branch", "bundle.zip", "preview"
	main := archive(p, "", path, "e1", "10", "a.txt", "b.txt", "c.txt")
	mustApply(t, w, main, Applied)
	onBranch := archive(p, br, path, "e2", "20", "a.txt")
	mustApply(t, w, onBranch, Applied)
	wm := watermark(t, w, p)
	// The branch hides main's b.txt and c.txt with delete Versions of its own.
	for _, m := range []string{"b.txt", "c.txt"} {
		if got := validFrom(t, wv, p, memberID(p, br, path, m)); !slices.Equal(got, []int64{wm}) {
			t.Fatalf("branch's %s: Versions at %v, want a delete at %d", m, got, wm)
		}
		if d := documentOf(t, p, memberID(p, br, path, m)); !d.deleted {
			t.Fatalf("branch's %s: %+v, want a tombstone", m, d)
		}
		if got := visible(t, wv, p, memberID(p, "", path, m), wm); len(got) != 1 {
			t.Fatalf("main's %s must stay: %v", m, got)
		}
	}
	if got := visible(t, wv, p, memberID(p, br, path, "a.txt"), wm); got[onBranch.Members[0].FileVersionID] != 1 {
		t.Fatalf("branch's a.txt: %v", got)
	}
	// Main's container changes later, with a member new to it: the
	// branch's container still hides it.
	mustApply(t, w, archive(p, "", path, "e3", "25", "a.txt", "b.txt", "c.txt", "d.txt"), Applied)
	if got := validFrom(t, wv, p, memberID(p, br, path, "d.txt")); !slices.Equal(got, []int64{watermark(t, w, p)}) {
		t.Fatalf("branch's d.txt: Versions at %v, want a delete at main's commit %d", got, watermark(t, w, p))
	}
	if got := validFrom(t, wv, p, memberID(p, br, path, "b.txt")); len(got) != 1 {
		t.Fatalf("branch's b.txt hidden again: Versions at %v", got)
	}
	// A delete on the branch hides the rest of main's.
	del := deletion(p, path, "30")
	del.Object.Branch, del.Object.Key, del.FileID = br, p+"@"+br+"/"+path, ids.File(p, br, path)
	if out, err := w.ApplyDelete(ctx, del); err != nil || out != Applied {
		t.Fatalf("branch delete: %v %v", out, err)
	}
	wm2 := watermark(t, w, p)
	var hidden []string
	for _, m := range []string{"a.txt", "b.txt", "c.txt", "d.txt"} {
		d := documentOf(t, p, memberID(p, br, path, m))
		if d.deleted {
			hidden = append(hidden, m)
		}
	}
	sort.Strings(hidden)
	if !slices.Equal(hidden, []string{"a.txt", "b.txt", "c.txt", "d.txt"}) {
		t.Fatalf("hidden on the branch after its delete: %v", hidden)
	}
	if got := validFrom(t, wv, p, memberID(p, br, path, "a.txt")); got[len(got)-1] != wm2 {
		t.Fatalf("branch's a.txt: Versions at %v, want a delete at %d", got, wm2)
	}
	if got := validFrom(t, wv, p, memberID(p, br, path, "b.txt")); len(got) != 1 {
		t.Fatalf("branch's b.txt hidden twice: Versions at %v", got)
	}
}

// TestAMemberTakesALaterTagChangeOfItsContainer: a tag change applied
// while the container's next version was on its way (read before the
// change) reaches the members that version adds, not only the container.
func TestAMemberTakesALaterTagChangeOfItsContainer(t *testing.T) {
	w, wv := newWriter(t)
	const p, path = "members-acl-late", "mail/launch.eml"
	t0 := time.Now().UTC()
	withGroups := func(fv pipeline.FileVersion, at time.Time, groups ...string) pipeline.FileVersion {
		fv = withAccess(fv, at, groups...)
		fv.Format = "email"
		for i := range fv.Members {
			fv.Members[i].Access = fv.Access
		}
		return fv
	}
	v1 := withGroups(archive(p, "", path, "e1", "10", "notes.txt"), t0, "eng")
	mustApply(t, w, v1, Applied)
	mustChange(t, w, accessChange(v1, t0.Add(2*time.Second), "legal"), Applied)
	// v2 was read at t0+1s, before the change, and adds plan.pdf.
	v2 := withGroups(archive(p, "", path, "e2", "20", "notes.txt", "plan.pdf"), t0.Add(time.Second), "eng")
	mustApply(t, w, v2, Applied)
	for _, m := range v2.Members {
		mustVectors(t, w, vectorsOf(m, testModel, 3))
		wantReaders(t, wv, p, m.FileID, []string{"legal"}, nil)
	}
}

// TestABranchsOwnMemberIsNotStaleForMainsHiding: main's commit hides its
// new member on a branch with a delete carrying the branch container's
// sequencer, so the branch's own next version with that member commits it.
func TestABranchsOwnMemberIsNotStaleForMainsHiding(t *testing.T) {
	w, wv := newWriter(t)
	const p, path, br = "members-branch-order", "bundle.zip", "preview"
	mustApply(t, w, archive(p, br, path, "b1", "20", "a.txt"), Applied)
	mustApply(t, w, archive(p, "", path, "m1", "30", "a.txt", "m.txt"), Applied) // hides m.txt on the branch
	if d := documentOf(t, p, memberID(p, br, path, "m.txt")); !d.deleted || d.sequencer != "20" {
		t.Fatalf("main's m.txt hidden on the branch by %+v, want a tombstone of the branch container's event 20", d)
	}
	v2 := archive(p, br, path, "b2", "25", "a.txt", "m.txt") // the branch's own, after its 20 (not after main's 30)
	mustApply(t, w, v2, Applied)
	if got := visible(t, wv, p, memberID(p, br, path, "m.txt"), watermark(t, w, p)); got[v2.Members[1].FileVersionID] != 1 {
		t.Fatalf("the branch's own m.txt: %v", got)
	}
}

// TestLostMemberTombstonesAreWrittenAgain: a commit whose documents were
// lost after its publish (a crash) writes them again when it is delivered
// again: the container's, its members', and the tombstones of the members
// it deleted.
func TestLostMemberTombstonesAreWrittenAgain(t *testing.T) {
	w, wv := newWriter(t)
	ctx := context.Background()
	const p, path = "members-repair", "bundle.zip"
	mustApply(t, w, archive(p, "", path, "e1", "10", "a.txt", "b.txt"), Applied)
	v2 := archive(p, "", path, "e2", "20", "a.txt")
	mustApply(t, w, v2, Applied)
	b := memberID(p, "", path, "b.txt")
	for _, id := range []string{v2.FileID, v2.Members[0].FileID, b} { // the crash: no document of the commit
		if err := wv.Data().Deleter().WithClassName(schema.DocumentClass).WithID(id).WithTenant(p).Do(ctx); err != nil {
			t.Fatal(err)
		}
	}
	mustApply(t, w, v2, Duplicate)
	if d := documentOf(t, p, b); !d.deleted {
		t.Fatalf("b.txt's tombstone was not written again: %+v", d)
	}
	if d := documentOf(t, p, v2.Members[0].FileID); d.deleted || d.fileVersionID != v2.Members[0].FileVersionID {
		t.Fatalf("a.txt's document: %+v", d)
	}
	if d := documentOf(t, p, v2.FileID); d.fileVersionID != v2.FileVersionID {
		t.Fatalf("the container's document: %+v", d)
	}
}

// TestARepairNeverBuriesAMemberCommittedSince: a repair of main's commit
// (its documents lost in a crash) writes again the tombstones of the
// members it hid on a branch, but not over one the branch committed since.
func TestARepairNeverBuriesAMemberCommittedSince(t *testing.T) {
	w, _ := newWriter(t)
	ctx := context.Background()
	const p, path, br = "members-repair-branch", "bundle.zip", "preview"
	mustApply(t, w, archive(p, br, path, "b1", "20", "a.txt"), Applied)
	onMain := archive(p, "", path, "m1", "30", "a.txt", "m.txt") // hides m.txt on the branch
	mustApply(t, w, onMain, Applied)
	branchM := memberID(p, br, path, "m.txt")
	for _, id := range []string{onMain.FileID, branchM} { // the crash: main's commit lost these documents
		if err := sharedClient.Data().Deleter().WithClassName(schema.DocumentClass).WithID(id).WithTenant(p).Do(ctx); err != nil {
			t.Fatal(err)
		}
	}
	mustApply(t, w, archive(p, br, path, "b2", "40", "a.txt", "m.txt"), Applied) // the branch's own m.txt
	mustApply(t, w, onMain, Duplicate)                                           // main's redelivery repairs its documents
	if d := documentOf(t, p, branchM); d.deleted {
		t.Fatalf("the repair buried the branch's own m.txt under main's hiding tombstone: %+v", d)
	}
	if d := documentOf(t, p, onMain.FileID); d.fileVersionID != onMain.FileVersionID {
		t.Fatalf("main's container document: %+v", d)
	}
}

// TestDecideSets: a set is decided as one (no Weaviate).
func TestDecideSets(t *testing.T) {
	t0 := time.Now()
	newSet := func() (*pendingVersion, *pendingVersion, *pendingVersion) {
		c := &pendingVersion{labels: labels{readers: []string{"legal"}, readAt: t0.Add(time.Second)}}
		a := &pendingVersion{container: c, newest: true, labels: labels{readers: []string{"eng"}, readAt: t0}}
		b := &pendingVersion{container: c, newest: true, labels: labels{readers: []string{"eng"}, readAt: t0}}
		c.members = []*pendingVersion{a, b}
		return c, a, b
	}
	c, a, b := newSet()
	b.conclude("", fmt.Errorf("read failed"))
	decideSets([]*pendingVersion{c})
	if c.err == nil || a.err == nil {
		t.Errorf("a member's failure left the set: container %v, member %v", c.err, a.err)
	}
	c, a, b = newSet()
	c.conclude(Stale, nil)
	decideSets([]*pendingVersion{c})
	if a.out != Stale || b.out != Stale {
		t.Errorf("members of a stale container: %q %q", a.out, b.out)
	}
	c, a, b = newSet()
	a.conclude(Stale, nil) // stale against a hiding delete only
	decideSets([]*pendingVersion{c})
	if a.finished || b.finished || !slices.Equal(a.labels.readers, []string{"legal"}) || !slices.Equal(b.labels.readers, []string{"legal"}) {
		t.Errorf("members of an applied container: %+v %+v", a, b)
	}
	c, a, _ = newSet()
	c.repair = true
	a.conclude(Stale, nil)
	decideSets([]*pendingVersion{c})
	if !a.finished {
		t.Errorf("a member reopened beside a container only repaired")
	}
}
