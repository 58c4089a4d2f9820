package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// corpusReport measures each file of dir once, in process, and lists them
// by the heap's peak: where a reader's memory goes.
func corpusReport(ctx context.Context, p *ingestPipeline, dir string, w io.Writer) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	type result struct {
		name string
		size int
		m    measure
	}
	var rs []result
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return err
		}
		m, err := p.measure(ctx, e.Name(), data)
		if err != nil {
			return fmt.Errorf("%s: %w", e.Name(), err)
		}
		rs = append(rs, result{e.Name(), len(data), m})
	}
	slices.SortFunc(rs, func(a, b result) int { return int(b.m.peak) - int(a.m.peak) })
	fmt.Fprintf(w, "| file | size | time | allocated | peak heap | read as |\n|---|---|---|---|---|---|\n")
	for _, r := range rs {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", r.name, bytesText(r.size), r.m.took.Round(time.Millisecond),
			bytesText(int(r.m.alloc)), bytesText(int(r.m.peak)), clipText(r.m.status, 100))
	}
	return nil
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
