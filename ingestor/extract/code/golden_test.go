package code

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
)

var update = flag.Bool("update", false, "rewrite golden files")

// render describes the structure of doc, one line per block: kind, level,
// the block's line range and its first line; a heading that starts with
// comments or decorators also shows its last (signature) line.
func render(doc *extract.Document) string {
	var b strings.Builder
	lineOf := func(off int) int { return strings.Count(doc.Text[:off], "\n") + 1 }
	for _, blk := range doc.Blocks {
		s := doc.Text[blk.Start:blk.End]
		first, _, multi := strings.Cut(s, "\n")
		fmt.Fprintf(&b, "%-7s %d %3d-%-3d | %s\n", blk.Kind, blk.Level, lineOf(blk.Start), lineOf(blk.End), first)
		if blk.Kind == extract.Heading && multi {
			fmt.Fprintf(&b, "%17s > %s\n", "", s[strings.LastIndexByte(s, '\n')+1:])
		}
	}
	return b.String()
}

func TestGolden(t *testing.T) {
	for _, name := range []string{"sample.go", "sample.py"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata", name)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got := render(extractOK(t, path, data))
			golden := path + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("structure of %s differs from %s:\n got:\n%s\nwant:\n%s", name, golden, got, want)
			}
		})
	}
}
