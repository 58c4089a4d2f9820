package markdown

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-kb/strata/ingestor/chunk"
	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/tokens"
)

// corpus holds real Markdown copied into testdata/bench (the README and docs
// as the tokenizer corpus stores them, the reference tool pages), so the
// module benchmarks on its own: headings, prose, lists, tables and code as
// people write them.
var corpus = []string{
	"testdata/bench/README.md.txt",
	"testdata/bench/docs__formats.md",
	"testdata/bench/reference-TOOLS.md",
	"testdata/bench/reference-README.md",
	"../pdf/testdata/hostile/README.md",
}

// benchInput repeats the corpus files, each separated by a blank line, up to
// about size bytes.
func benchInput(b *testing.B, size int) []byte {
	var files [][]byte
	for _, p := range corpus {
		data, err := os.ReadFile(filepath.FromSlash(p))
		if err != nil {
			b.Skipf("corpus file missing (module used outside the repository?): %v", err)
		}
		files = append(files, data)
	}
	var out []byte
	for len(out) < size {
		for _, f := range files {
			out = append(out, f...)
			out = append(out, "\n\n"...)
		}
	}
	return out
}

// BenchmarkExtractAndChunk measures Markdown extraction alone and
// extraction plus chunking with the ingestor's default options, in MB/s of
// input.
func BenchmarkExtractAndChunk(b *testing.B) {
	counter, err := tokens.New()
	if err != nil {
		b.Fatal(err)
	}
	data := benchInput(b, 1<<20)
	lim := extract.DefaultLimits()
	for _, withChunks := range []bool{false, true} {
		name := "extract"
		if withChunks {
			name = "extract+chunk"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			var blocks, chunks int
			for b.Loop() {
				doc, err := Extractor{}.Extract(context.Background(), data, "bench.md", lim)
				if err != nil {
					b.Fatal(err)
				}
				blocks, chunks = len(doc.Blocks), 0
				if withChunks {
					for _, s := range chunk.Split(doc, counter, chunk.Options{TargetTokens: 512}) {
						chunks += len(s.Chunks)
					}
				}
			}
			b.ReportMetric(float64(blocks), "blocks")
			if withChunks {
				b.ReportMetric(float64(chunks), "chunks")
			}
		})
	}
}
