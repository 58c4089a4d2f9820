// Package pdftest writes small, valid PDFs for tests.
package pdftest

import "fmt"

// Make writes one object per page.
func Make(pages int) string {
	var out string
	for i := range pages {
		out += fmt.Sprintf("%d 0 obj\n<< /Type /Page /MediaBox [0 0 612 792] >>\nendobj\n", i+3)
	}
	return out + "trailer\n<< /Root 1 0 R >>\n%%EOF\n"
}
