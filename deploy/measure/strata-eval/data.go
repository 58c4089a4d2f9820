package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Doc is one corpus document.
type Doc struct {
	ID    string `json:"_id"`
	Title string `json:"title"`
	Text  string `json:"text"`
}

// Markdown is the file a document is uploaded as.
func (d Doc) Markdown() string { return "# " + d.Title + "\n\n" + d.Text + "\n" }

// Key is the document's object key in the bucket: project = dataset.
func (d Doc) Key(dataset string) string { return dataset + "/" + d.ID + ".md" }

// Query is one labelled query.
type Query struct {
	ID   string `json:"_id"`
	Text string `json:"text"`
}

// Qrels are graded judgements: query id → document id → grade (> 0 relevant).
type Qrels map[string]map[string]int

// Dataset is a corpus with queries and judgements, possibly subsampled.
type Dataset struct {
	Name    string
	Docs    []Doc   // the documents uploaded
	Queries []Query // the queries evaluated: each has at least one relevant document
	Qrels   Qrels

	CorpusSize    int // documents in corpus.jsonl
	JudgedQueries int // queries in queries.jsonl with at least one relevant document
	// KeptRelevant is, when documents were subsampled, how many of those
	// kept are judged relevant to an evaluated query (all of them are kept).
	KeptRelevant int
}

// Subsampled reports whether documents or queries were left out.
func (d *Dataset) Subsampled() bool {
	return len(d.Docs) < d.CorpusSize || len(d.Queries) < d.JudgedQueries
}

// docIDRE keeps document ids usable as file names.
var docIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$`)

// loadDataset reads <dir>/<name>/{corpus.jsonl,queries.jsonl,qrels.tsv}.
func loadDataset(dir, name string) (*Dataset, error) {
	base := filepath.Join(dir, name)
	if _, err := os.Stat(filepath.Join(base, "corpus.jsonl")); err != nil {
		return nil, fmt.Errorf("dataset %s: %w\n%s", name, err, datasetHelp(dir))
	}
	d := &Dataset{Name: name}
	docs, err := readJSONL[Doc](filepath.Join(base, "corpus.jsonl"))
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, doc := range docs {
		if !docIDRE.MatchString(doc.ID) {
			return nil, fmt.Errorf("%s corpus: document id %q cannot be a file name", name, doc.ID)
		}
		if seen[doc.ID] {
			return nil, fmt.Errorf("%s corpus: duplicate document id %q", name, doc.ID)
		}
		seen[doc.ID] = true
	}
	queries, err := readJSONL[Query](filepath.Join(base, "queries.jsonl"))
	if err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(base, "qrels.tsv"))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer f.Close()
	if d.Qrels, err = parseQrels(f); err != nil {
		return nil, fmt.Errorf("%s qrels.tsv: %w", name, err)
	}
	d.Docs, d.CorpusSize = docs, len(docs)
	for _, q := range queries {
		if d.Qrels.relevant(q.ID) > 0 {
			d.Queries = append(d.Queries, q)
		}
	}
	d.JudgedQueries = len(d.Queries)
	if len(d.Docs) == 0 || len(d.Queries) == 0 {
		return nil, fmt.Errorf("%s: no documents or no judged queries in %s", name, base)
	}
	return d, nil
}

// readJSONL decodes a file of JSON objects, one per line.
func readJSONL[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []T
	dec := json.NewDecoder(bufio.NewReader(f))
	for {
		var v T
		if err := dec.Decode(&v); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("%s: record %d: %w", path, len(out)+1, err)
		}
		out = append(out, v)
	}
}

// parseQrels reads "query-id<TAB>corpus-id<TAB>score" lines after a header.
func parseQrels(r io.Reader) (Qrels, error) {
	q := Qrels{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || (n == 1 && strings.HasPrefix(line, "query-id")) {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 3 {
			return nil, fmt.Errorf("line %d: want query-id, corpus-id and score, got %q", n, line)
		}
		grade, err := strconv.Atoi(f[2])
		if err != nil {
			return nil, fmt.Errorf("line %d: score %q is not an integer", n, f[2])
		}
		if q[f[0]] == nil {
			q[f[0]] = map[string]int{}
		}
		q[f[0]][f[1]] = max(q[f[0]][f[1]], grade)
	}
	return q, sc.Err()
}

// relevant counts a query's relevant (grade > 0) documents.
func (q Qrels) relevant(query string) int {
	n := 0
	for _, g := range q[query] {
		if g > 0 {
			n++
		}
	}
	return n
}

// subsample keeps the first maxQueries judged queries and at most maxDocs
// documents (0 = no limit), always keeping every document an evaluated
// query judges relevant, then filling up in corpus order.
func (d *Dataset) subsample(maxDocs, maxQueries int) {
	if maxQueries > 0 && len(d.Queries) > maxQueries {
		d.Queries = d.Queries[:maxQueries]
	}
	if maxDocs <= 0 || len(d.Docs) <= maxDocs {
		return
	}
	keep := map[string]bool{}
	for _, q := range d.Queries {
		for id, g := range d.Qrels[q.ID] {
			if g > 0 {
				keep[id] = true
			}
		}
	}
	free := maxDocs - len(keep)
	var docs []Doc
	for _, doc := range d.Docs {
		switch {
		case keep[doc.ID]:
			d.KeptRelevant++
		case free > 0:
			free--
		default:
			continue
		}
		docs = append(docs, doc)
	}
	d.Docs = docs
}

// datasetHelp says what the evaluation needs when its data folder is
// missing: the datasets are not in the repository (they are large and
// carry their own licences), so a user fetches them once.
func datasetHelp(dir string) string {
	return fmt.Sprintf(`strata-eval reads BEIR-style datasets from %s/<name>/{corpus.jsonl,queries.jsonl,qrels.tsv}:
  scifact   BEIR SciFact test split (5,183 abstracts, 300 queries; CC BY-NC 2.0):
            https://public.ukp.informatik.tu-darmstadt.de/thakur/BEIR/datasets/scifact.zip
  cranfield Cranfield collection (1,400 abstracts, 225 queries; no licence stated, distributed for research):
            http://ir.dcs.gla.ac.uk/resources/test_collections/cran/ (cran.tar.gz), converted to that layout
Unpack each into its own folder there, or point -data at a folder that has them.`, dir)
}
