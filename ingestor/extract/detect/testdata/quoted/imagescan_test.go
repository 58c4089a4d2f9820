package pdf

import (
	"fmt"
	"testing"
)

func imageObj(id int, dict string) string {
	return fmt.Sprintf("%d 0 obj\n<< /Type /XObject /Subtype /Image %s /Length 3 >>\nstream\nabc\nendstream\nendobj\n", id, dict)
}

func TestHasPictures(t *testing.T) {
	for _, c := range []struct {
		name string
		pdf  string
		want bool
	}{
		{"no image", "%PDF-1.4\n1 0 obj\n<< /Type /Page >>\nendobj\n", false},
		{"picture", "%PDF-1.4\n" + imageObj(5, "/Width 640 /Height 480 /BitsPerComponent 8"), true},
	} {
		if got := HasPictures([]byte(c.pdf)); got != c.want {
			t.Errorf("%s: %v", c.name, got)
		}
	}
}
