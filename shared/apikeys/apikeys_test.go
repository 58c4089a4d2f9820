package apikeys

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TestRecordJSON pins the stored form of a record: the records already in
// a bucket must keep decoding.
func TestRecordJSON(t *testing.T) {
	rec := Record{Name: "ci-bot", Hash: "%s", Projects: []string{"acme", "beta"}, Groups: []string{"finance", "hr"},
		CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	body, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"ci-bot","hash":"%s","projects":["acme","beta"],"groups":["finance","hr"],"created_at":"2026-01-02T03:04:05Z"}`
	if string(body) != want {
		t.Fatalf("record:\n got %s\nwant %s", body, want)
	}
	var back Record
	if err := json.Unmarshal([]byte(want), &back); err != nil || back.Name != rec.Name || !back.CreatedAt.Equal(rec.CreatedAt) ||
		strings.Join(back.Projects, ",") != "acme,beta" || strings.Join(back.Groups, ",") != "finance,hr" {
		t.Fatalf("decode: %+v, %v", back, err)
	}
}

func TestBucketAndHash(t *testing.T) {
	if Bucket != "strata_keys" {
		t.Fatalf("bucket %q: the keys already made live in strata_keys", Bucket)
	}
	if got := Hash("sk-strata-x"); len(got) != 64 || got != strings.ToLower(got) || got == Hash("sk-strata-y") {
		t.Fatalf("hash %q: want lower-case hex SHA-256", got)
	}
	if got := Hash(""); got != "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" {
		t.Fatalf("hash of the empty key %q: not SHA-256", got)
	}
	c := BucketConfig(3)
	if c.Bucket != Bucket || c.History != 1 || c.Storage != jetstream.FileStorage || c.Replicas != 3 {
		t.Fatalf("bucket config %+v", c)
	}
}
