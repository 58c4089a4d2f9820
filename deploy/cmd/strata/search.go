package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/strata-kb/strata/deploy/mcpclient"
	"github.com/strata-kb/strata/shared/ids"
)

func runSearch(ctx context.Context, a *app, name string, args []string) error {
	f := newFlags(name, "QUERY... [--project P] [--top-k N] [flags]",
		"Searches the index with the MCP tool hybrid_search (keyword and vector ranks fused) and prints the\n"+
			"best chunks with where they come from and why they matched. Without --project, every project the\n"+
			"API key may read is searched. The words of QUERY are joined with spaces.")
	project := f.String("project", a.getenv("STRATA_PROJECT"), "project to search (STRATA_PROJECT); empty: all")
	topK := f.Int("top-k", 10, "number of results, 1-50")
	branch := f.String("branch", "", "search this branch of the project (its files over main's)")
	release := f.String("release", "", "search a release of the project (its version string)")
	prefix := f.String("prefix", "", "only files whose path starts with this")
	alpha := f.Float64("alpha", -1, "0 keyword only .. 1 vector only (default: the server's, 0.25)")
	asJSON := f.Bool("json", false, "print the tool's answer as JSON")
	cf := addConnFlags(f, needMCP)
	words, err := f.parse(a, args, 1, -1)
	if err != nil {
		return err
	}
	query := strings.TrimSpace(strings.Join(words, " "))
	if query == "" {
		return usagef("empty query")
	}
	if *topK < 1 || *topK > 50 {
		return usagef("--top-k must be 1 to 50, got %d", *topK)
	}
	if *alpha != -1 && (*alpha < 0 || *alpha > 1) {
		return usagef("--alpha must be from 0 to 1, got %g", *alpha)
	}
	if (*branch != "" || *release != "") && *project == "" {
		return usagef("--branch and --release need --project")
	}
	c, err := cf.resolve(a)
	if err != nil {
		return err
	}
	toolArgs := map[string]any{"query": query, "top_k": *topK}
	if *project != "" {
		toolArgs["project_reference"] = *project
	}
	if *branch != "" {
		toolArgs["branch_id"] = ids.Branch(*project, *branch)
	}
	if *release != "" {
		toolArgs["release_version"] = *release
	}
	if *prefix != "" {
		toolArgs["path_prefix"] = *prefix
	}
	if *alpha != -1 {
		toolArgs["alpha"] = *alpha
	}
	raw, err := callTool(ctx, c, "hybrid_search", toolArgs)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(a.stdout, raw)
	}
	var out mcpclient.HybridAnswer
	if err := json.Unmarshal(raw, &out); err != nil {
		return fmt.Errorf("hybrid_search answer: %w", err)
	}
	printSearch(a.stdout, out)
	return nil
}

func printSearch(w io.Writer, s mcpclient.HybridAnswer) {
	var marks []string
	for p, wm := range s.Watermarks {
		marks = append(marks, fmt.Sprintf("%s@%d", p, wm))
	}
	sort.Strings(marks)
	how := fmt.Sprintf("%s fusion, alpha %g", s.Fusion, s.Alpha)
	if s.Model != "" && s.Model != "none" {
		how += ", model " + s.Model
	}
	if len(marks) > 0 {
		how += "; read at " + strings.Join(marks, " ")
	}
	fmt.Fprintf(w, "%s for %q (%s)\n", plural(len(s.Results), "result", "results"), s.Query, how)
	for i, r := range s.Results {
		where := r.Project
		if r.Branch != "" {
			where += "@" + r.Branch
		}
		where += "/" + r.DocumentPath
		if len(r.HeadingPath) > 0 {
			where += " › " + clip(strings.Join(r.HeadingPath, " › "), 80)
		}
		fmt.Fprintf(w, "\n%2d. %s  (score %.4f, chunk %d)\n", i+1, where, r.Score, r.Index)
		var why []string
		if e := r.Explain; e.KeywordRank != nil {
			why = append(why, fmt.Sprintf("keyword #%d (bm25 %.3f)", *e.KeywordRank, deref(e.KeywordScore)))
		}
		if e := r.Explain; e.VectorRank != nil {
			why = append(why, fmt.Sprintf("vector #%d (cosine %.3f)", *e.VectorRank, deref(e.VectorSimilarity)))
		}
		if len(why) > 0 {
			fmt.Fprintf(w, "    %s\n", strings.Join(why, " · "))
		}
		fmt.Fprintf(w, "    %s\n", clip(r.Content, 300))
	}
}

func deref(f *float64) float64 {
	if f == nil {
		return 0
	}
	return *f
}
