package code

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/extracttest"
)

func TestConformance(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "langs", "*"))
	paths = append([]string{filepath.Join("testdata", "sample.go"), filepath.Join("testdata", "sample.py")}, paths...)
	var samples []extracttest.Sample
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		samples = append(samples, extracttest.Sample{Name: filepath.Base(p), Data: data})
	}
	var big strings.Builder
	for i := 0; big.Len() < 256<<10; i++ {
		big.WriteString("// Handler number documents itself.\nfunc (s *Server) handle")
		big.WriteString(strings.Repeat("x", i%13))
		big.WriteString("(ctx context.Context) error {\n\tif err := s.step(ctx); err != nil {\n\t\treturn err\n\t}\n\treturn nil\n}\n\n")
	}
	extracttest.RunConformance(t, extracttest.Harness{
		Extractor: Extractor{},
		Profile:   profile,
		Samples:   samples,
		Big:       &extracttest.Sample{Name: "big.go", Data: []byte("package big\n\n" + big.String())},
		Hostile: []extracttest.Sample{
			{Name: "braces.go", Data: []byte("func f() " + strings.Repeat("{", 1<<16) + strings.Repeat("}", 1<<16))},
			{Name: "indent.py", Data: []byte(strings.Repeat("class A:\n", 1) + func() string {
				var b strings.Builder
				for i := range 2000 {
					b.WriteString(strings.Repeat(" ", i) + "def f():\n")
				}
				return b.String()
			}())},
			{Name: "unclosed.c", Data: []byte("/* never closed\n" + strings.Repeat("int f() {}\n", 1000))},
			{Name: "one-line.js", Data: []byte(strings.Repeat("function f(){return 1};", 1<<15))},
			{Name: "binary.go", Data: []byte("package x\x00"), Want: extract.ErrCorrupt},
			{Name: "notes.txt", Data: []byte("not code"), Want: extract.ErrUnsupported},
		},
	})
}
