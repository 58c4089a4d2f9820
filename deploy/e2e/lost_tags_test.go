package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/tags"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/deploy/localstack"
	"github.com/strata-kb/strata/shared/bucket"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/testservers"
)

// TestLostTagChangeIsReconciled: with the bucket notification switched
// off, a document's tag changes from hr to finance and no event reaches
// the pipeline (as when MinIO loses its queue or NATS is down). The
// ingestor's periodic reconcile pass finds that the object's listed tags
// differ from the read the index holds and sends a tag change: the member
// (hr) loses the document and the finance key gains it, without a new file
// version. An unchanged tagged object is not sent again: the only message
// the passes add to the project's chunks subject is that one tag change,
// and later passes add nothing.
func TestLostTagChangeIsReconciled(t *testing.T) {
	h := startAccessWith(t, map[string][]string{"ingestor": {"STRATA_RECONCILE_INTERVAL=2s", "STRATA_RECONCILE_MIN_AGE=1s"}})
	ctx := context.Background()
	const token = "lostwombat"
	const key = "acme/hr/" + token + ".md"
	const steady = "acme/hr/steady" + token + ".md"
	hr := map[string]string{"strata-groups": "hr"}
	if err := h.putAccess(key, "# Bonuses\n\nThe "+token+" memo lists the bonuses.\n", "text/markdown", hr, nil); err != nil {
		t.Fatal(err)
	}
	if err := h.putAccess(steady, "# Steady\n\nThe steady"+token+" memo stays with hr.\n", "text/markdown", hr, nil); err != nil {
		t.Fatal(err)
	}
	h.settle()
	url := h.stack.Env.MCPURL
	admin := &accCaller{transport: "http-default", key: accessAdmin, c: h.mcp}
	member := &accCaller{transport: "http-default", key: accessMember, c: connect(t, url, accessMember.key)}
	finance := &accCaller{transport: "http-default", key: accessFinance, c: connect(t, url, accessFinance.key)}
	for _, k := range []string{key, steady} {
		if a := admin.call("object_status", map[string]any{"key": k, "wait_seconds": 30}); a.field("searchable") != true {
			t.Fatalf("%s not searchable: %s", k, a)
		}
	}
	sees := func(c *accCaller, word string) bool {
		a := c.call("search_keyword", map[string]any{"query": word})
		return !a.err && accMentions(a.list("results"), word)
	}
	if !sees(member, token) || sees(finance, token) || !sees(member, "steady"+token) {
		t.Fatal("before the change: the member must find both hr documents, the finance key neither")
	}
	chunksBefore := admin.call("list_file_chunks", map[string]any{"project_reference": "acme", "file_path": "hr/" + token + ".md"})
	before := admin.call("list_changes", map[string]any{"project_reference": "acme"})
	seq, _ := before.field("next_since_sequence").(float64)
	if before.err || seq == 0 {
		t.Fatalf("list_changes before the change: %s", before)
	}
	// A pass publishes a reindex request of acme to the objects stream (one
	// per interval); awaitPasses waits for n more and their handling.
	requests := pipeline.ReindexSubject + ".acme"
	passes := func() uint64 {
		t.Helper()
		st, err := h.js.Stream(ctx, pipeline.ObjectsStream)
		if err != nil {
			t.Fatal(err)
		}
		info, err := st.Info(ctx, jetstream.WithSubjectFilter(requests))
		if err != nil {
			t.Fatal(err)
		}
		return info.State.Subjects[requests]
	}
	awaitPasses := func(n uint64) {
		t.Helper()
		from := passes()
		waitUntil(t, fmt.Sprintf("%d more reconcile passes (%s requests in %s)", n, requests, pipeline.ObjectsStream), 90*time.Second, func() (bool, string) {
			got := passes() - from
			return got >= n, fmt.Sprintf("%d passes", got)
		})
		h.settle()
	}
	// Reconcile passes ran while the pipeline settled: two more, the last
	// on objects older than the minimum age, and whatever they sent is in
	// the stream, and nothing was lost yet.
	awaitPasses(2)
	subject := pipeline.ChunksSubjectFor("acme")
	sent := func() uint64 {
		t.Helper()
		st, err := h.js.Stream(ctx, pipeline.ChunksStream)
		if err != nil {
			t.Fatal(err)
		}
		info, err := st.Info(ctx, jetstream.WithSubjectFilter(subject))
		if err != nil {
			t.Fatal(err)
		}
		return info.State.Subjects[subject]
	}
	sentBefore := sent()

	// The tag change's notification is lost.
	if err := h.s3.RemoveAllBucketNotification(ctx, localstack.Bucket); err != nil {
		t.Fatal(err)
	}
	finTags, err := tags.MapToObjectTags(map[string]string{"strata-groups": "finance"})
	if err != nil {
		t.Fatal(err)
	}
	changed := time.Now()
	if err := h.s3.PutObjectTagging(ctx, localstack.Bucket, key, finTags, minio.PutObjectTaggingOptions{}); err != nil {
		t.Fatalf("put tagging: %v", err)
	}
	if err := bucket.Ensure(ctx, h.s3, localstack.Bucket, bucket.NATSTargetARN(testservers.MinIONotifyID, ""), bucket.NATSTargetARN(testservers.MinIOLiveNotifyID, "")); err != nil {
		t.Fatal(err)
	}

	var memberLost, financeGained time.Duration
	for deadline := changed.Add(45 * time.Second); memberLost == 0 || financeGained == 0; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("45 s after the lost tag change: member lost it: %v, finance gained it: %v", memberLost > 0, financeGained > 0)
		}
		if memberLost == 0 && !sees(member, token) {
			memberLost = time.Since(changed)
		}
		if financeGained == 0 && sees(finance, token) {
			financeGained = time.Since(changed)
		}
	}
	t.Logf("lost tag change reconciled: the member lost the document after %s, the finance key gained it after %s (reconcile every 2 s)",
		memberLost.Round(time.Millisecond), financeGained.Round(time.Millisecond))
	if !sees(member, "steady"+token) || sees(finance, "steady"+token) {
		t.Error("the unchanged hr document's readers changed")
	}

	// Several more passes: they find nothing else to send.
	awaitPasses(3)
	if n := sent() - sentBefore; n != 1 {
		t.Errorf("the reconcile added %d messages to %s, want 1 (the tag change; the unchanged document is not sent)", n, subject)
	}
	st, err := h.js.Stream(ctx, pipeline.ChunksStream)
	if err != nil {
		t.Fatal(err)
	}
	last, err := st.GetLastMsgForSubject(ctx, subject)
	if err != nil {
		t.Fatal(err)
	}
	if kind := last.Header.Get(pipeline.HeaderKind); kind != pipeline.KindTagsChanged {
		t.Errorf("the last message on %s is a %q, want the tag change", subject, kind)
	}
	// The change feed: a groups change is a change for those who lost or
	// gained the document, and the only one.
	for _, c := range []struct {
		caller *accCaller
		want   string
	}{{member, "deleted"}, {finance, "added"}} {
		a := c.caller.call("list_changes", map[string]any{"project_reference": "acme", "since_sequence": seq})
		if a.err || len(a.list("changes")) != 1 || !accMentions(a.list("changes"), `"change":"`+c.want+`"`) ||
			!accMentions(a.list("changes"), `"path":"hr/`+token+`.md"`) {
			t.Errorf("list_changes since %v as %s: want one change %s of hr/%s.md, got %s", seq, c.caller.key.name, c.want, token, a)
		}
	}
	idsOf := func(a accAnswer) []string {
		var out []string
		for _, c := range a.list("data") {
			m := c.(map[string]any)
			out = append(out, fmt.Sprint(m["file_version_id"], "/", m["id"]))
		}
		return out
	}
	chunksAfter := admin.call("list_file_chunks", map[string]any{"project_reference": "acme", "file_path": "hr/" + token + ".md"})
	if b, a := idsOf(chunksBefore), idsOf(chunksAfter); len(b) == 0 || !slices.Equal(b, a) {
		t.Errorf("a reconciled tag change must not make a new version: chunks before %v, after %v", b, a)
	}
}
