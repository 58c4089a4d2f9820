package pdf

import (
	"context"
	"testing"
)

// TestMemoryLimitBeforeThePDF: a tool given the PDF on stdin is under its
// address-space limit by the time the first byte of the PDF can be read.
func TestMemoryLimitBeforeThePDF(t *testing.T) {
	p := fakeTool(t, "pdftotext", "head -c 1 >/dev/null\ngrep 'Max address space' /proc/self/limits\n")
	out, err := p.run(context.Background(), testLimits(), 4096, []byte("%PDF-1.4 ..."), "pdftotext", stdinPDF)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(out)
}
