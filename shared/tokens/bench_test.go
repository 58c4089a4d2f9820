package tokens

import (
	"strings"
	"testing"
)

func BenchmarkCount(b *testing.B) {
	c, err := New()
	if err != nil {
		b.Fatal(err)
	}
	text := strings.Repeat("Strata turns uploaded files into versioned chunks that agents search and read through MCP tools. ", 1000)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		c.Count(text)
	}
}
