package markdown

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/extracttest"
)

func TestConformance(t *testing.T) {
	var samples []extracttest.Sample
	for _, p := range append(corpus, "testdata/frontmatter.md") {
		data, err := os.ReadFile(filepath.FromSlash(p))
		if err != nil {
			t.Fatal(err)
		}
		samples = append(samples, extracttest.Sample{Name: filepath.Base(p), Data: data})
	}
	for _, c := range cases {
		if strings.TrimSpace(c.in) != "" {
			samples = append(samples, extracttest.Sample{Name: c.name + ".md", Data: []byte(c.in)})
		}
	}
	// A YAML alias bomb: each key doubles the one before.
	bomb := "---\na0: &a0 [x, x]\n"
	for i := 1; i < 40; i++ {
		bomb += fmt.Sprintf("a%d: &a%d [*a%d, *a%d]\n", i, i, i-1, i-1)
	}
	bomb += "---\nText.\n"
	manyKeys := "---\n"
	for i := range 10 * maxFrontMatterKeys {
		manyKeys += fmt.Sprintf("key%d: %d\n", i, i)
	}
	manyKeys += "---\n"
	extracttest.RunConformance(t, extracttest.Harness{
		Extractor: Extractor{},
		Profile:   profile,
		Samples:   samples,
		Hostile: []extracttest.Sample{
			{Name: "nested-quotes.md", Data: []byte(strings.Repeat(">", 1<<16) + "a\n")},
			{Name: "nested-lists.md", Data: []byte(strings.Repeat("- ", 1<<15) + "a\n")},
			{Name: "nested-brackets.md", Data: []byte(strings.Repeat("[", 1<<16) + "a" + strings.Repeat("](b)", 1<<16))},
			{Name: "link-definitions.md", Data: []byte(strings.Repeat("[a]: b\n", 1<<14))},
			{Name: "unclosed-fences.md", Data: []byte(strings.Repeat("```\n~~~\n", 1<<12))},
			{Name: "table-columns.md", Data: []byte("|" + strings.Repeat(" a |", 1<<12) + "\n|" + strings.Repeat("---|", 1<<12) + "\n")},
			{Name: "alias-bomb.md", Data: []byte(bomb)},
			{Name: "many-keys.md", Data: []byte(manyKeys)},
			{Name: "front-matter-only.md", Data: []byte("---\ntitle: x\n---")},
			{Name: "nul.md", Data: []byte("# a\x00b"), Want: extract.ErrCorrupt},
		},
	})
}
