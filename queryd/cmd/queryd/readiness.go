package main

import (
	"context"
	"errors"
	"time"
)

// errCatalogLoading is /readyz's answer while the catalog's first load runs.
var errCatalogLoading = errors.New("catalog of commits loading")

// readiness is what /readyz reports: Weaviate answers, and the catalog
// (loaded; nil without one) has loaded once or until has passed. A replica
// just restarted thus takes no calls from a load balancer before it can
// answer them from memory; the bound keeps a replica whose catalog cannot
// load (NATS down, no indexer yet) serving from Weaviate rather than out
// of service for good.
func readiness(weaviate func(context.Context) error, loaded func() bool, until time.Time) func(context.Context) error {
	return func(ctx context.Context) error {
		if err := weaviate(ctx); err != nil {
			return err
		}
		if loaded != nil && !loaded() && time.Now().Before(until) {
			return errCatalogLoading
		}
		return nil
	}
}
