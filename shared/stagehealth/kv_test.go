package stagehealth_test

import (
	"context"
	"errors"
	"testing"

	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/stagehealth"
	"github.com/strata-kb/strata/shared/testservers/serverstest"
)

// TestReportsTravelThroughNATS: two replicas' reports, put in a real
// nats-server's KV, are read back with what each observed.
func TestReportsTravelThroughNATS(t *testing.T) {
	nc, js, err := pipeline.Connect(serverstest.NATS(t), "stagehealth-test", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx := context.Background()
	if got, err := stagehealth.Read(ctx, js); err != nil || len(got) != 0 {
		t.Fatalf("before any replica reports: %v %v", got, err)
	}
	indexer, err := stagehealth.Open(ctx, js, 1, "indexer", "host/1")
	if err != nil {
		t.Fatal(err)
	}
	ingestor, err := stagehealth.Open(ctx, js, 1, "ingestor", "host/2")
	if err != nil {
		t.Fatal(err)
	}
	indexer.Observe(errors.New("batch: shard Chunk_acme: store is read-only"))
	ingestor.Observe(errors.New("fetch: connection refused"))
	for _, r := range []*stagehealth.Reporter{indexer, ingestor} {
		if err := r.Put(ctx); err != nil {
			t.Fatal(err)
		}
	}
	got, err := stagehealth.Read(ctx, js)
	if err != nil || len(got) != 2 {
		t.Fatalf("reports %v %v", got, err)
	}
	if got[0].Stage != "indexer" || got[0].Instance != "host/1" || got[0].Refused == "" || got[0].RSSBytes <= 0 {
		t.Errorf("indexer's report %+v", got[0])
	}
	if got[1].Stage != "ingestor" || len(got[1].Conditions()) != 0 {
		t.Errorf("ingestor's report %+v: a refused connection is not a full disk", got[1])
	}
}
