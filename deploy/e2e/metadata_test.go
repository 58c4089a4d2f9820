package e2e

// Document metadata end to end: S3 tags, S3 user metadata, front matter,
// HTML <meta> and PDF document info become one metadata map per document;
// hybrid_search and list_documents filter by it inside the index; hits say
// where they are (metadata, pages, citation, resource links); a tag change
// moves a document between filters without a new version; and a key only
// hidden documents have is as unknown as one no document has.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/tags"

	"github.com/strata-kb/strata/deploy/localstack"
	"github.com/strata-kb/strata/deploy/mcpclient"
	"github.com/strata-kb/strata/ingestor/extract/pdf/pdfwrite"
)

func TestDocumentMetadata(t *testing.T) {
	h := startAccess(t)
	put := func(key, content, contentType string, tagMap, meta map[string]string) {
		t.Helper()
		if err := h.putAccess(key, content, contentType, tagMap, meta); err != nil {
			t.Fatalf("put %s: %v", key, err)
		}
	}
	const word = "zebracorn"
	put("acme/legal/contract-2024.md", "---\ntitle: Contract 2024\nyear: 2024\ntags: [contracts, legal]\nsigned: 2024-03-01\n---\n# Contract\n\nThe "+word+" indemnification clause.\n",
		"text/markdown", map[string]string{"status": "final"}, map[string]string{"Department": "Legal"})
	put("acme/legal/contract-2023.md", "---\nyear: 2023\n---\n# Old contract\n\nAn older "+word+" agreement.\n",
		"text/markdown", nil, map[string]string{"department": "legal"})
	// The tag wins over S3 metadata, which wins over the file.
	put("acme/legal/memo.md", "---\ndepartment: ops\n---\n# Memo\n\nA "+word+" memo.\n",
		"text/markdown", map[string]string{"department": "litigation"}, map[string]string{"department": "legal"})
	// Readable by hr only; its salary-band key exists nowhere else.
	put("acme/hr/handbook.md", "---\nyear: 2024\nsalary-band: 5\n---\n# Handbook\n\nThe "+word+" leave policy.\n",
		"text/markdown", map[string]string{"strata-groups": "hr", "department": "hr"}, nil)
	put("acme/eng/notes.html", `<html><head><title>Notes</title><meta name="author" content="Ada Lovelace"><meta name="keywords" content="engines, notes"></head><body><p>Engine `+word+` notes.</p></body></html>`,
		"text/html", nil, nil)
	pdf := pdfwrite.MakeWithInfo(map[string]string{"Title": "Annual report", "Author": "Grace Hopper"}, []pdfwrite.Page{
		{Lines: []string{"Introduction", "", "Nothing about animals here."}},
		{Lines: []string{"Results", "", "The quokkamarker result is on page two."}},
		{Lines: []string{"Appendix", "", "More " + word + " text."}},
	}, []pdfwrite.OutlineItem{{Title: "Introduction", Page: 1, Level: 1}, {Title: "Results", Page: 2, Level: 1}, {Title: "Appendix", Page: 3, Level: 1}})
	put("acme/reports/annual.pdf", string(pdf), "application/pdf", map[string]string{"department": "finance"}, nil)
	h.settle()
	h.waitFor("six documents listed", "list_documents", map[string]any{"project_reference": "acme"}, func(out map[string]any, _ string) bool {
		return out != nil && len(out["documents"].([]any)) == 6
	})

	clients := map[string]*client.Client{}
	for _, k := range accessKeys {
		clients[k.name] = connect(t, h.stack.Env.MCPURL, k.key)
	}
	searchAt := func(alpha float64, k accessKey, filter map[string]any) (paths []string, errText string) {
		t.Helper()
		c := &accCaller{key: k, c: clients[k.name]}
		a := c.call("hybrid_search", map[string]any{"project_reference": "acme", "query": word, "alpha": alpha, "top_k": 20, "metadata": filter})
		if a.err {
			return nil, a.text
		}
		for _, r := range a.list("results") {
			p := r.(map[string]any)["document_path"].(string)
			if !slices.Contains(paths, p) {
				paths = append(paths, p)
			}
		}
		sort.Strings(paths)
		return paths, ""
	}
	search := func(k accessKey, filter map[string]any) ([]string, string) { return searchAt(0, k, filter) }
	cases := []struct {
		name   string
		key    accessKey
		filter map[string]any
		want   []string
	}{
		{"S3 metadata, any case", accessAdmin, map[string]any{"department": "LEGAL"}, []string{"legal/contract-2023.md", "legal/contract-2024.md"}},
		{"tag over S3 metadata over file", accessAdmin, map[string]any{"department": "litigation"}, []string{"legal/memo.md"}},
		{"front matter number range", accessAdmin, map[string]any{"year": map[string]any{"gte": 2024}}, []string{"hr/handbook.md", "legal/contract-2024.md"}},
		{"number equality", accessAdmin, map[string]any{"year": 2023}, []string{"legal/contract-2023.md"}},
		{"list contains", accessAdmin, map[string]any{"tags": "contracts"}, []string{"legal/contract-2024.md"}},
		{"any of", accessAdmin, map[string]any{"department": map[string]any{"any": []any{"hr", "finance"}}}, []string{"hr/handbook.md", "reports/annual.pdf"}},
		{"date range", accessAdmin, map[string]any{"signed": map[string]any{"gte": "2024-01-01", "lt": "2025-01-01T00:00:00Z"}}, []string{"legal/contract-2024.md"}},
		{"HTML meta exists", accessAdmin, map[string]any{"author": map[string]any{"exists": true}, "keywords": "engines"}, []string{"eng/notes.html"}},
		{"PDF info", accessAdmin, map[string]any{"author": "grace hopper"}, []string{"reports/annual.pdf"}},
		{"exists false", accessAdmin, map[string]any{"year": map[string]any{"exists": false}}, []string{"eng/notes.html", "legal/memo.md", "reports/annual.pdf"}},
		{"ANDed keys", accessAdmin, map[string]any{"department": "legal", "year": map[string]any{"lt": 2024}}, []string{"legal/contract-2023.md"}},
		{"hidden documents stay hidden", accessFinance, map[string]any{"year": map[string]any{"gte": 2024}}, []string{"legal/contract-2024.md"}},
		{"a member sees its group's", accessMember, map[string]any{"department": "hr"}, []string{"hr/handbook.md"}},
	}
	for _, c := range cases {
		got, errText := search(c.key, c.filter)
		if errText != "" || !slices.Equal(got, c.want) {
			t.Errorf("%s: %v as %s: got %q %s, want %q", c.name, c.filter, c.key.name, got, errText, c.want)
		}
		// Vector search filters the chunk vectors, which carry the metadata too:
		// a vector ranking returns every readable chunk, so the matches are exactly the filter's.
		got, errText = searchAt(1, c.key, c.filter)
		if errText != "" || !slices.Equal(got, c.want) {
			t.Errorf("%s (vector): %v as %s: got %q %s, want %q", c.name, c.filter, c.key.name, got, errText, c.want)
		}
	}

	// Clear errors naming the key and the operator; a key only hidden
	// documents have is answered exactly as one no document has.
	for _, c := range []struct {
		filter map[string]any
		want   []string
	}{
		{map[string]any{"nokey": "x"}, []string{`unknown key "nokey"`}},
		{map[string]any{"year": map[string]any{"between": 1}}, []string{`key "year"`, "between", "unknown operator"}},
		{map[string]any{"department": map[string]any{"gte": 5}}, []string{`key "department"`, "range"}},
		{map[string]any{"year": map[string]any{"gte": "soon"}}, []string{`key "year"`, "gte", "number or a date"}},
		{map[string]any{"year": "abc"}, []string{`key "year"`, "numbers"}},
		{map[string]any{"year": []any{2023, 2024}}, []string{`key "year"`, "any"}},
	} {
		_, errText := search(accessAdmin, c.filter)
		for _, w := range c.want {
			if !strings.Contains(errText, w) {
				t.Errorf("%v: error %q does not say %q", c.filter, errText, w)
			}
		}
	}
	_, hidden := search(accessFinance, map[string]any{"salary-band": 5})
	_, missing := search(accessFinance, map[string]any{"salary-bank": 5})
	if hidden == "" || strings.ReplaceAll(hidden, "salary-band", "KEY") != strings.ReplaceAll(missing, "salary-bank", "KEY") {
		t.Errorf("a key of hidden documents is answered unlike a missing one: %q vs %q", hidden, missing)
	}
	if got, errText := search(accessMember, map[string]any{"salary-band": 5}); errText != "" || !slices.Equal(got, []string{"hr/handbook.md"}) {
		t.Errorf("hr member filtering by its document's key: %q %s", got, errText)
	}

	// Hits say where they are: metadata, pages and a citation, and a resource link per document.
	res := callRaw(t, h.mcp, "hybrid_search", map[string]any{"project_reference": "acme", "query": "quokkamarker", "alpha": 0})
	out := decodeJSON(t, mcpclient.JSON(res))
	hits := out["results"].([]any)
	if len(hits) == 0 {
		t.Fatalf("no hit for the PDF's page 2 text: %s", mcpclient.Text(res))
	}
	top := hits[0].(map[string]any)
	if top["document_path"] != "reports/annual.pdf" || top["page_start"] != float64(2) || top["page_end"] != float64(2) ||
		!strings.Contains(fmt.Sprint(top["citation"]), "reports/annual.pdf, page 2") {
		t.Errorf("PDF hit: path %v pages %v-%v citation %v", top["document_path"], top["page_start"], top["page_end"], top["citation"])
	}
	meta, _ := top["metadata"].(map[string]any)
	if meta["author"] != "Grace Hopper" || meta["title"] != "Annual report" || meta["department"] != "finance" {
		t.Errorf("PDF hit metadata: %v", meta)
	}
	if top["relevance"] == "low" || strings.HasPrefix(mcpclient.Text(res), "No strong match") {
		t.Errorf("an exact match is marked low: %v / %.80s", top["relevance"], mcpclient.Text(res))
	}
	// A query no document is about: every hit low, and the text says so first.
	weak := callRaw(t, h.mcp, "hybrid_search", map[string]any{"project_reference": "acme", "query": "photosynthesis chlorophyll mitochondria"})
	if first, ok := weak.Content[0].(mcp.TextContent); !ok || !strings.HasPrefix(first.Text, "No strong match") {
		t.Errorf("a query matching nothing well does not start with the notice: %v", weak.Content[0])
	}
	for _, r := range decodeJSON(t, mcpclient.JSON(weak))["results"].([]any) {
		if level := r.(map[string]any)["relevance"]; level != "low" {
			t.Errorf("a hit sharing no word with the query is %v", level)
		}
	}
	if !hasResourceLink(res, "strata://acme/reports/annual.pdf") {
		t.Errorf("no resource_link for the hit's document: %v", res.Content)
	}
	res = callRaw(t, h.mcp, "hybrid_search", map[string]any{"project_reference": "acme", "query": word, "alpha": 0, "top_k": 20})
	for _, p := range []string{"legal/contract-2024.md", "eng/notes.html"} {
		if !hasResourceLink(res, "strata://acme/"+p) {
			t.Errorf("no resource_link for %s", p)
		}
	}
	for _, r := range decodeJSON(t, mcpclient.JSON(res))["results"].([]any) {
		hit := r.(map[string]any)
		if hit["document_path"] == "legal/contract-2024.md" {
			m := hit["metadata"].(map[string]any)
			if m["year"] != float64(2024) || m["department"] != "Legal" || m["status"] != "final" || !strings.Contains(fmt.Sprint(m["tags"]), "contracts") {
				t.Errorf("contract hit metadata: %v", m)
			}
			if !strings.Contains(fmt.Sprint(hit["citation"]), "legal/contract-2024.md") {
				t.Errorf("contract citation: %v", hit["citation"])
			}
		}
		if hit["document_path"] == "hr/handbook.md" {
			if _, ok := hit["metadata"].(map[string]any)["strata-groups"]; ok {
				t.Errorf("the access tag shows as metadata: %v", hit["metadata"])
			}
		}
	}

	// get_info shows a document's metadata.
	info, errText := h.call("get_info", map[string]any{"path_part_id": pathPartOf(t, h, "reports/annual.pdf")})
	if errText != "" || info["metadata"].(map[string]any)["author"] != "Grace Hopper" {
		t.Errorf("get_info metadata: %v %s", info["metadata"], errText)
	}

	// list_documents pages through a filter.
	var listed []string
	args := map[string]any{"project_reference": "acme", "metadata": map[string]any{"year": map[string]any{"gte": 2023}}, "limit": 1}
	for range 5 {
		page, errText := h.call("list_documents", args)
		if errText != "" {
			t.Fatalf("list_documents: %s", errText)
		}
		for _, d := range page["documents"].([]any) {
			listed = append(listed, d.(map[string]any)["document_path"].(string))
		}
		next, _ := page["next_cursor"].(string)
		if next == "" {
			break
		}
		args["cursor"] = next
	}
	if want := []string{"hr/handbook.md", "legal/contract-2023.md", "legal/contract-2024.md"}; !slices.Equal(listed, want) {
		t.Errorf("list_documents year >= 2023: %q, want %q", listed, want)
	}

	// A tag change moves a document between filters, without a new version.
	before := pathInfo(t, h, "legal/contract-2023.md")["file_version_id"]
	tg, _ := tags.NewTags(map[string]string{"department": "finance"}, true)
	if err := h.s3.PutObjectTagging(context.Background(), localstack.Bucket, "acme/legal/contract-2023.md", tg, minio.PutObjectTaggingOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		got, _ := search(accessAdmin, map[string]any{"department": "finance"})
		if slices.Equal(got, []string{"legal/contract-2023.md", "reports/annual.pdf"}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tag change did not reach the filter: %q", got)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, alpha := range []float64{0, 1} {
		if got, _ := searchAt(alpha, accessAdmin, map[string]any{"department": "legal"}); !slices.Equal(got, []string{"legal/contract-2024.md"}) {
			t.Errorf("after the tag change, department legal (alpha %v): %q", alpha, got)
		}
		if got, _ := searchAt(alpha, accessAdmin, map[string]any{"department": "finance"}); !slices.Equal(got, []string{"legal/contract-2023.md", "reports/annual.pdf"}) {
			t.Errorf("after the tag change, department finance (alpha %v): %q", alpha, got)
		}
	}
	if after := pathInfo(t, h, "legal/contract-2023.md")["file_version_id"]; after != before {
		t.Errorf("a tag change made a new file version: %v -> %v", before, after)
	}
}

// callRaw calls a tool and returns its whole result.
func callRaw(t *testing.T, c *client.Client, tool string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = tool, args
	res, err := c.CallTool(context.Background(), req)
	if err != nil || res.IsError {
		t.Fatalf("%s: %v %v", tool, err, res)
	}
	return res
}

func decodeJSON(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("not a JSON object: %v: %.300s", err, b)
	}
	return out
}

func hasResourceLink(res *mcp.CallToolResult, uri string) bool {
	for _, c := range res.Content {
		if l, ok := c.(mcp.ResourceLink); ok && l.URI == uri {
			return true
		}
	}
	return false
}

// pathPartOf is the path_part_id of a document of acme.
func pathPartOf(t *testing.T, h *harness, path string) string {
	t.Helper()
	out, errText := h.call("list_documents", map[string]any{"project_reference": "acme", "path_prefix": path})
	if errText != "" || len(out["documents"].([]any)) == 0 {
		t.Fatalf("list_documents %s: %s", path, errText)
	}
	return out["documents"].([]any)[0].(map[string]any)["path_part_id"].(string)
}

func pathInfo(t *testing.T, h *harness, path string) map[string]any {
	t.Helper()
	info, errText := h.call("get_info", map[string]any{"path_part_id": pathPartOf(t, h, path)})
	if errText != "" {
		t.Fatalf("get_info %s: %s", path, errText)
	}
	return info
}
