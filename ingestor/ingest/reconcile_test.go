package ingest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/strata-kb/strata/shared/pipeline"
)

type fakeHeads []string

func (f fakeHeads) Heads(context.Context, string) ([]string, error) { return f, nil }

func TestReconcileRequestsEveryHeadOncePerInterval(t *testing.T) {
	pub := &fakePub{}
	r := &Reconciler{Bucket: "strata", Heads: fakeHeads{"acme", "acme@feature", "Bad Project"}, Pub: pub, Interval: time.Minute}
	now := time.Date(2026, 11, 22, 10, 0, 30, 0, time.UTC)
	n, err := r.Once(context.Background(), now)
	if err != nil || n != 2 {
		t.Fatalf("Once = %d, %v; want 2 requests (the invalid project is left to the event path)", n, err)
	}
	want := map[string]string{"acme": "", "acme@feature": "feature"}
	for _, m := range pub.msgs {
		if m.subject != pipeline.ReindexSubject+".acme" {
			t.Fatalf("request on %s", m.subject)
		}
		var req pipeline.ReindexRequest
		if err := json.Unmarshal(m.data, &req); err != nil || req.Force {
			t.Fatalf("request %s: %v", m.data, err)
		}
		found := false
		for head, branch := range want {
			if req.Branch == branch && m.msgID == "reconcile-"+head+"-"+"29922360" {
				found = true
			}
		}
		if !found {
			t.Fatalf("unexpected request %s id %s", m.data, m.msgID)
		}
	}
	// Another replica in the same interval publishes the same message IDs,
	// which JetStream deduplicates; the next interval gets new ones.
	pub2 := &fakePub{}
	r.Pub = pub2
	r.Once(context.Background(), now.Add(20*time.Second))
	r.Once(context.Background(), now.Add(time.Minute))
	if pub2.msgs[0].msgID != pub.msgs[0].msgID || pub2.msgs[2].msgID == pub.msgs[0].msgID {
		t.Fatalf("message ids %s %s %s", pub.msgs[0].msgID, pub2.msgs[0].msgID, pub2.msgs[2].msgID)
	}
}
