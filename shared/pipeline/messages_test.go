package pipeline

import "testing"

func TestCompareSequencers(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"17A5F9B8C1D2E3F4", "17A5F9B8C1D2E3F4", 0},
		{"17A5F9B8C1D2E3F4", "17A5F9B8C1D2E3F5", -1},
		{"17A5F9B8C1D2E3F5", "17a5f9b8c1d2e3f4", 1},
		{"FFFFFFFF", "100000000", -1},
		{"00FF", "FF", 0},
		{"", "01", -1},
	}
	for _, tt := range tests {
		if got := CompareSequencers(tt.a, tt.b); got != tt.want {
			t.Errorf("CompareSequencers(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
