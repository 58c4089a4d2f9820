package markdown

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestBoundNesting(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"> - 1. text", "> - 1. text"},
		{strings.Repeat("> ", 16) + "a", strings.Repeat("> ", 16) + "a"},
		{strings.Repeat("> ", 17) + "a", strings.Repeat("> ", 16) + "x a"},
		{strings.Repeat("- ", 20) + "a", strings.Repeat("- ", 16) + "x " + strings.Repeat("- ", 3) + "a"},
		{strings.Repeat(" ", 130) + "code", strings.Repeat(" ", 128) + "x code"},
		{strings.Repeat("* ", 40), strings.Repeat("* ", 40)}, // a thematic break
		{"12345678901. not a marker", "12345678901. not a marker"},
	} {
		src := []byte(c.in + "\n" + c.in)
		boundNesting(src)
		if want := c.want + "\n" + c.want; string(src) != want {
			t.Errorf("boundNesting(%q)\n got %q\nwant %q", c.in, src, want)
		}
	}
}

// TestPathologicalInputsStayFast guards against shapes goldmark handles in
// quadratic time; each took from 17 s to minutes per megabyte before
// boundNesting and without the link reference transformer, and takes well
// under a second now. The bound is loose for busy machines.
func TestPathologicalInputsStayFast(t *testing.T) {
	if testing.Short() {
		t.Skip("parses several megabytes")
	}
	var indented bytes.Buffer
	for indented.Len() < 1<<20 {
		for i := range 200 {
			indented.WriteString(strings.Repeat("  ", i) + "- a\n")
		}
	}
	for name, text := range map[string]string{
		"nested list markers": strings.Repeat("- ", 1<<19) + "a\n",
		"nested quotes":       strings.Repeat(">", 1<<20) + "a\n",
		"indented lists":      indented.String(),
		"link definitions":    strings.Repeat("[a]: b\n", 1<<20/7),
	} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			blocks := Blocks(text)
			if d := time.Since(start); d > 10*time.Second {
				t.Fatalf("%d bytes took %v", len(text), d)
			}
			checkBlocks(t, text, blocks)
		})
	}
}
