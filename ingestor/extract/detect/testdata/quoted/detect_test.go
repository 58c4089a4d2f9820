package detect

import "testing"

func TestFormatByContent(t *testing.T) {
	tests := []struct {
		name, data string
		want       string
	}{
		{"a.pdf", "%PDF-1.7\n...", PDF},
		{"misnamed.txt", "%PDF-1.4\n...", PDF},
	}
	for _, tt := range tests {
		if got, _ := Format(tt.name, []byte(tt.data)); got != tt.want {
			t.Errorf("Format(%q) = %q", tt.name, got)
		}
	}
}
