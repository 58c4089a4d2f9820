//go:build ignore

// make.go writes the identifiers dataset from the Go distribution's own
// sources (BSD-3-Clause, see LICENSE-go): go run make.go "$(go env GOROOT)".
// Documents are Go source files (title = path under src, text truncated);
// queries are identifiers and file names that name exactly one document,
// which is the one relevant document.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

var packages = []string{"encoding/asn1", "encoding/json", "net/http", "net/url", "time", "strings", "strconv",
	"crypto/x509", "crypto/tls", "internal/godebugs", "archive/zip", "compress/flate", "regexp/syntax", "text/template"}

const maxBytes = 8000

func main() {
	src := filepath.Join(os.Args[1], "src")
	type doc struct{ ID, Title, Text string }
	var docs []doc
	for _, p := range packages {
		files, _ := filepath.Glob(filepath.Join(src, p, "*.go"))
		sort.Strings(files)
		n := 0
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") || n >= 16 {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				panic(err)
			}
			text := string(b)
			if len(text) > maxBytes {
				text = text[:strings.LastIndexByte(text[:maxBytes], '\n')+1]
			}
			rel, _ := filepath.Rel(src, f)
			docs = append(docs, doc{strings.NewReplacer("/", "-").Replace(rel), rel, text})
			n++
		}
	}
	word := regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
	in := map[string]map[string]bool{} // word -> docs holding it
	for _, d := range docs {
		for _, w := range word.FindAllString(d.Text, -1) {
			if in[w] == nil {
				in[w] = map[string]bool{}
			}
			in[w][d.ID] = true
		}
	}
	only := func(w string) string {
		if len(in[w]) != 1 {
			return ""
		}
		for id := range in[w] {
			return id
		}
		return ""
	}
	baseCount := map[string]int{}
	for _, d := range docs {
		baseCount[filepath.Base(d.Title)]++
	}
	type query struct{ ID, Text, Doc string }
	var queries []query
	funcRE := regexp.MustCompile(`(?m)^func (?:\([^)]*\) )?([A-Za-z][A-Za-z0-9]*)\(`)
	snakeRE := regexp.MustCompile(`\b[a-z0-9]+(?:_[a-z0-9]+){1,}\b`)
	seen := map[string]bool{}
	for _, d := range docs {
		var fn, snake []string
		for _, m := range funcRE.FindAllStringSubmatch(d.Text, -1) {
			if len(m[1]) >= 8 && only(m[1]) == d.ID && strings.ContainsAny(m[1][1:], "ABCDEFGHIJKLMNOPQRSTUVWXYZ") {
				fn = append(fn, m[1])
			}
		}
		for _, m := range snakeRE.FindAllString(d.Text, -1) {
			if len(m) >= 8 && only(m) == d.ID {
				snake = append(snake, m)
			}
		}
		for _, pick := range [][]string{fn, snake} {
			if len(pick) > 0 && !seen[pick[len(pick)/2]] {
				w := pick[len(pick)/2]
				seen[w] = true
				queries = append(queries, query{fmt.Sprintf("q%03d", len(queries)), w, d.ID})
			}
		}
		if base := filepath.Base(d.Title); baseCount[base] == 1 {
			queries = append(queries, query{fmt.Sprintf("q%03d", len(queries)), base, d.ID})
		}
	}
	corpus, _ := os.Create("corpus.jsonl")
	enc := json.NewEncoder(corpus)
	for _, d := range docs {
		enc.Encode(map[string]string{"_id": d.ID, "title": d.Title, "text": d.Text})
	}
	corpus.Close()
	qf, _ := os.Create("queries.jsonl")
	qenc := json.NewEncoder(qf)
	var qrels strings.Builder
	qrels.WriteString("query-id\tcorpus-id\tscore\n")
	for _, q := range queries {
		qenc.Encode(map[string]string{"_id": q.ID, "text": q.Text})
		fmt.Fprintf(&qrels, "%s\t%s\t1\n", q.ID, q.Doc)
	}
	qf.Close()
	os.WriteFile("qrels.tsv", []byte(qrels.String()), 0o644)
	fmt.Println(len(docs), "documents,", len(queries), "queries")
}
