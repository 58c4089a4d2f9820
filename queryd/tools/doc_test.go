package tools

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated part of docs/tools.md (TestToolsDoc)")

const (
	docPath  = "../../docs/tools.md"
	docBegin = "<!-- BEGIN GENERATED: go test ./queryd/tools -run TestToolsDoc -update -->\n"
	docEnd   = "<!-- END GENERATED -->\n"
)

// TestToolsDoc: the part of docs/tools.md between the markers is what the
// tools' definitions give (Doc); -update rewrites it.
func TestToolsDoc(t *testing.T) {
	raw, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	page := string(raw)
	before, rest, ok := strings.Cut(page, docBegin)
	_, after, ok2 := strings.Cut(rest, docEnd)
	if !ok || !ok2 {
		t.Fatalf("%s has no generated part: it must hold the lines\n%s...\n%s", docPath, docBegin, docEnd)
	}
	want := before + docBegin + Doc() + docEnd + after
	if page == want {
		return
	}
	if *update {
		if err := os.WriteFile(docPath, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/tools.md is not what the tools' definitions give (a tool, its description or its schema changed): " +
		"regenerate it with\n\tGOEXPERIMENT=jsonv2 go test ./queryd/tools -run TestToolsDoc -update\nand commit it")
}
