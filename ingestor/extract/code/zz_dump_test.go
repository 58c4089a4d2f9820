package code

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
)

func TestZZDump(t *testing.T) {
	for _, p := range dumpFiles() {
		data, _ := os.ReadFile(p)
		doc, err := Extractor{}.Extract(context.Background(), data, p, extract.DefaultLimits())
		if err != nil {
			fmt.Println(p, err)
			continue
		}
		checkInvariants(t, doc, data)
		fmt.Printf("=== %s %s %d blocks %q\n", p, doc.Language, len(doc.Blocks), doc.Warnings)
		if os.Getenv("QUIET") == "" {
			for _, s := range titles(doc) {
				fmt.Println("  ", s)
			}
		}
	}
}

func dumpFiles() []string {
	if p := os.Getenv("DUMPLIST"); p != "" {
		b, _ := os.ReadFile(p)
		return strings.Fields(string(b))
	}
	return strings.Fields(os.Getenv("DUMP"))
}
