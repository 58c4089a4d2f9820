package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/shared/pipeline"
)

func TestReadiness(t *testing.T) {
	weaviateDown := errors.New("weaviate not ready: connection refused")
	up := func(context.Context) error { return nil }
	down := func(context.Context) error { return weaviateDown }
	yes := func() bool { return true }
	no := func() bool { return false }
	later, earlier := time.Now().Add(time.Hour), time.Now().Add(-time.Second)
	for _, tc := range []struct {
		name     string
		weaviate func(context.Context) error
		loaded   func() bool
		until    time.Time
		want     error
	}{
		{"no catalog", up, nil, later, nil},
		{"catalog loading", up, no, later, errCatalogLoading},
		{"catalog loaded", up, yes, later, nil},
		{"catalog still loading after the wait", up, no, earlier, nil},
		{"weaviate down, catalog loaded", down, yes, later, weaviateDown},
		{"weaviate down, no catalog", down, nil, earlier, weaviateDown},
	} {
		if err := readiness(tc.weaviate, tc.loaded, tc.until)(context.Background()); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

// TestReadyzWaitsForTheCatalog runs queryd on a real nats-server whose
// commit buckets the indexer has not made yet: /readyz says the catalog is
// loading until they exist and the catalog has read them.
func TestReadyzWaitsForTheCatalog(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real nats-server")
	}
	url := natsWithBuckets(t)
	addr := startQueryd(t, "-nats-url", url, "-ready-catalog-wait", "1m")
	code, body := getReadyz(t, addr)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, errCatalogLoading.Error()) {
		t.Fatalf("/readyz before the catalog loaded = %d %q, want 503 %q", code, body, errCatalogLoading)
	}
	nc, js, err := pipeline.Connect(url, "readiness-test", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	for _, bucket := range []string{pipeline.CommitsBucket, pipeline.EmbeddedBucket} {
		if _, err := js.CreateKeyValue(t.Context(), jetstream.KeyValueConfig{Bucket: bucket, History: 1}); err != nil {
			t.Fatal(err)
		}
	}
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if code, body = getReadyz(t, addr); code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz 15 s after the buckets were made = %d %q, want 200", code, body)
		}
	}
}

func getReadyz(t *testing.T, addr string) (int, string) {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestReadyCatalogWaitValidated(t *testing.T) {
	for _, tc := range []struct {
		wait    string
		wantErr bool
	}{{"-1s", true}, {"0s", false}, {"45s", false}} {
		var c Config
		fs := flag.NewFlagSet("queryd", flag.ContinueOnError)
		c.RegisterFlags(fs)
		if err := fs.Parse([]string{"-api-keys", testKey + "=acme", "-cursor-secret", "0123456789abcdef0123", "-embedding-provider", "none", "-ready-catalog-wait", tc.wait}); err != nil {
			t.Fatal(err)
		}
		err := c.Validate()
		if got := err != nil && strings.Contains(err.Error(), "ready-catalog-wait"); got != tc.wantErr {
			t.Errorf("-ready-catalog-wait %s: Validate() = %v, want an error naming the flag: %v", tc.wait, err, tc.wantErr)
		}
	}
}
