package store

import (
	"fmt"
	"slices"
	"testing"
)

// TestPagingKeepsEveryVersionOfASequence: a group commit writes several
// Versions at one sequence; a page that ends inside one loses none of them,
// whichever of the sequence's Versions the store returns first, and a
// sequence of more Versions than a page is an error, not a loss.
func TestPagingKeepsEveryVersionOfASequence(t *testing.T) {
	var all []Version
	for i, seq := range []int64{1, 1, 2, 2, 2, 3, 4, 4, 5} {
		all = append(all, Version{FileVersionID: fmt.Sprintf("v%d", i), ValidFrom: seq})
	}
	// fetch is Weaviate's sorted, limited query: ties in no set order (here
	// reversed, so a page's cut sequence shows its later Versions first).
	fetch := func(versions []Version, page int) func(int64) ([]Version, error) {
		return func(after int64) ([]Version, error) {
			var rows []Version
			for _, v := range slices.Backward(versions) {
				if v.ValidFrom > after {
					rows = append(rows, v)
				}
			}
			slices.SortStableFunc(rows, func(a, b Version) int { return int(a.ValidFrom - b.ValidFrom) })
			return rows[:min(page, len(rows))], nil
		}
	}
	for page := 4; page <= 10; page++ { // more than the largest sequence (3)
		got, err := pageByValidFrom(0, page, fetch(all, page))
		if err != nil {
			t.Fatalf("page %d: %v", page, err)
		}
		var ids []string
		for _, v := range got {
			ids = append(ids, v.FileVersionID)
		}
		slices.Sort(ids)
		if want := []string{"v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8"}; !slices.Equal(ids, want) {
			t.Errorf("page %d: read %v, want each of %v once", page, ids, want)
		}
	}
	one := []Version{{ValidFrom: 7}, {ValidFrom: 7}, {ValidFrom: 7}}
	if _, err := pageByValidFrom(0, 2, fetch(one, 2)); err == nil {
		t.Error("a sequence of more Versions than a page was paged without an error")
	}
}
