package pdf

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeTool writes an executable shell script named tool into a new BinDir.
func fakeTool(t *testing.T, tool, script string) Poppler {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, tool), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	return Poppler{BinDir: dir}
}

// TestMemoryLimitBeforeThePDF: a tool given the PDF on stdin is under its
// address-space limit by the time the first byte of the PDF can be read.
func TestMemoryLimitBeforeThePDF(t *testing.T) {
	p := fakeTool(t, "pdftotext", "head -c 1 >/dev/null\ngrep 'Max address space' /proc/self/limits\n")
	lim := testLimits()
	lim.MaxMemoryBytes = 536870912
	out, err := p.run(context.Background(), lim, 4096, []byte("%PDF-1.4 ..."), "pdftotext", stdinPDF)
	if err != nil {
		t.Fatal(err)
	}
	if fields := strings.Fields(string(out)); len(fields) < 5 || fields[3] != "536870912" || fields[4] != "536870912" {
		t.Errorf("limits seen by the tool: %q", out)
	}
}

// TestToolThatIgnoresItsInput: a tool that exits without reading a large PDF
// neither blocks the run nor hides its exit status.
func TestToolThatIgnoresItsInput(t *testing.T) {
	p := fakeTool(t, "pdftotext", "echo 'Syntax Error: nope' >&2\nexit 3\n")
	start := time.Now()
	_, err := p.run(context.Background(), testLimits(), 4096, bytes.Repeat([]byte("x"), 32<<20), "pdftotext", stdinPDF)
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || !strings.Contains(err.Error(), "Syntax Error: nope") {
		t.Fatalf("err = %v", err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("took %v", took)
	}
}

// TestPictureReaderDataLimit: the picture reader, a Go program, runs under
// a data-segment limit (an address-space limit kills a Go runtime at random)
// set before it reads the PDF.
func TestPictureReaderDataLimit(t *testing.T) {
	p := fakeTool(t, "strata-pdf-pictures", "head -c 1 >/dev/null\ngrep -E 'Max (data size|address space)' /proc/self/limits\n")
	p.PictureReader = filepath.Join(p.BinDir, "strata-pdf-pictures")
	lim := testLimits()
	lim.MaxMemoryBytes = 536870912
	out, err := p.run(context.Background(), lim, 4096, []byte("%PDF-1.4 ..."), p.PictureReader)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{} // "data size" or "address space": soft limit
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(line); len(f) >= 5 {
			seen[f[1]+" "+f[2]] = f[3]
		}
	}
	if seen["data size"] != "536870912" || seen["address space"] != "unlimited" {
		t.Errorf("limits seen by the reader: %q", out)
	}
}
