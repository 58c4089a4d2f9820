package tools

import (
	"testing"

	"github.com/strata-kb/strata/queryd/store"
)

// TestAListingCutAtItsLimitEndsAtAWholeSequence: a change listing that read
// as many versions as it may ends at the last sequence it read whole, so
// next_since_sequence goes on from there and the versions of a sequence cut
// by the limit are not lost; one that read fewer ends where it was asked.
func TestAListingCutAtItsLimitEndsAtAWholeSequence(t *testing.T) {
	at := func(seqs ...int64) []store.Version {
		var vs []store.Version
		for _, s := range seqs {
			vs = append(vs, store.Version{ValidFrom: s})
		}
		return vs
	}
	for _, c := range []struct {
		name     string
		versions []store.Version
		limit    int
		wantLen  int
		wantTo   int64
	}{
		{"fewer than the limit", at(1, 2, 2), 4, 3, 9},
		{"cut inside sequence 3", at(1, 2, 3, 3), 4, 2, 2},
		{"cut at the end of sequence 3", at(1, 3, 3, 3), 4, 1, 1},
		{"one sequence fills the limit", at(5, 5), 2, 2, 5},
		{"none", nil, 4, 0, 9},
	} {
		got, to := wholeSequences(c.versions, c.limit, 9)
		if len(got) != c.wantLen || to != c.wantTo {
			t.Errorf("%s: %d versions to %d, want %d to %d", c.name, len(got), to, c.wantLen, c.wantTo)
		}
	}
}
