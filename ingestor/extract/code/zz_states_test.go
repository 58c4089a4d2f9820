package code

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestZZStates(t *testing.T) {
	p := os.Getenv("STATES")
	if p == "" {
		t.Skip()
	}
	data, _ := os.ReadFile(p)
	text := string(data)
	lines, _, _ := scanLines(context.Background(), text, specs[Language(p, data)].syn)
	for i, l := range lines {
		fmt.Printf("%4d %d %3d | %s\n", i+1, l.state, l.depth, strings.TrimRight(text[l.start:l.end], "\r"))
	}
}
