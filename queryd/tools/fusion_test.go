package tools

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/strata-kb/strata/queryd/store"
)

// TestSearchBothOverlaps: a hybrid search's keyword and vector sides run at
// once (each side here waits for the other to have started), and the first
// side's error is reported and cancels the other side.
func TestSearchBothOverlaps(t *testing.T) {
	ctx := context.Background()
	kwStarted, vecStarted := make(chan struct{}), make(chan struct{})
	// Long enough never to be reached unless the sides run one after the other.
	wait := func(ch chan struct{}) error {
		select {
		case <-ch:
			return nil
		case <-time.After(10 * time.Second):
			return errors.New("the other side did not start: the sides ran in turn")
		}
	}
	kw, vec, err := searchBoth(ctx, func(context.Context) ([]store.Chunk, error) {
		close(kwStarted)
		return []store.Chunk{{ID: "k"}}, wait(vecStarted)
	}, func(context.Context) ([]store.Chunk, error) {
		close(vecStarted)
		return []store.Chunk{{ID: "v"}}, wait(kwStarted)
	})
	if err != nil || len(kw) != 1 || kw[0].ID != "k" || len(vec) != 1 || vec[0].ID != "v" {
		t.Fatalf("keyword %v, vector %v, err %v", kw, vec, err)
	}

	failed := errors.New("embedding failed")
	_, _, err = searchBoth(ctx, func(ctx context.Context) ([]store.Chunk, error) {
		<-ctx.Done() // cancelled by the vector side's failure
		return nil, ctx.Err()
	}, func(context.Context) ([]store.Chunk, error) { return nil, failed })
	if !errors.Is(err, failed) {
		t.Errorf("vector side failed: err %v, want the vector side's error", err)
	}
	_, _, err = searchBoth(ctx, func(context.Context) ([]store.Chunk, error) { return nil, failed },
		func(ctx context.Context) ([]store.Chunk, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
	if !errors.Is(err, failed) {
		t.Errorf("keyword side failed: err %v, want the keyword side's error", err)
	}

	// One side only: the other is not called.
	kw, vec, err = searchBoth(ctx, func(context.Context) ([]store.Chunk, error) { return []store.Chunk{{ID: "k"}}, nil }, nil)
	if err != nil || len(kw) != 1 || vec != nil {
		t.Errorf("keyword only: keyword %v, vector %v, err %v", kw, vec, err)
	}
}
