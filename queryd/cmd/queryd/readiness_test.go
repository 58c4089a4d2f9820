package main

import (
	"context"
	"errors"
	"testing"
	"time"
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
