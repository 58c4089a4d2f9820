package main

// Whether a hidden document can be told from a missing one by time: one
// key reads, alternately, a document of another group (hidden from it) and
// one that does not exist, by chunk id, by document id and by path, and
// the p50s are compared (the answers' texts are equal by the e2e tests).

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/strata-kb/strata/shared/ids"
)

// hiddenRow is one kind of read, hidden against missing.
type hiddenRow struct {
	Name            string
	Hidden, Missing []time.Duration
}

// measureHidden reads the document at path (readable by owner, hidden from
// outsider) calls times each way, alternating.
func measureHidden(ctx context.Context, owner, outsider *bench, path string, calls int, log io.Writer) ([]hiddenRow, error) {
	out, err := owner.call(ctx, "list_file_chunks", map[string]any{"project_reference": "acme", "file_path": path, "limit": 1})
	if err != nil {
		return nil, fmt.Errorf("chunks of %s: %w", path, err)
	}
	var chunks []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(out["data"], &chunks); err != nil || len(chunks) == 0 {
		return nil, fmt.Errorf("chunks of %s: none (%v)", path, err)
	}
	fileID := ids.File("acme", "", path)
	rows := []struct {
		name string
		args func(hidden bool) (string, map[string]any)
	}{
		{"get_file_chunk (chunk id)", func(hidden bool) (string, map[string]any) {
			id := chunks[0].ID
			if !hidden {
				id = uuid.NewString()
			}
			return "get_file_chunk", map[string]any{"project_reference": "acme", "chunk_id": id}
		}},
		{"read (document id)", func(hidden bool) (string, map[string]any) {
			id := fileID
			if !hidden {
				id = ids.File("acme", "", fmt.Sprintf("access/none-%d.md", rand.Uint64()))
			}
			return "read", map[string]any{"path_part_id": id}
		}},
		{"list_file_chunks (path)", func(hidden bool) (string, map[string]any) {
			p := path
			if !hidden {
				p = fmt.Sprintf("access/none-%d.md", rand.Uint64())
			}
			return "list_file_chunks", map[string]any{"project_reference": "acme", "file_path": p}
		}},
	}
	var res []hiddenRow
	for _, r := range rows {
		row := hiddenRow{Name: r.name}
		for i := range 2 * calls {
			hidden := i%2 == 0
			tool, args := r.args(hidden)
			d, err := timeRefusal(ctx, outsider, tool, args)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", r.name, err)
			}
			if hidden {
				row.Hidden = append(row.Hidden, d)
			} else {
				row.Missing = append(row.Missing, d)
			}
		}
		fmt.Fprintf(log, "%s: hidden p50 %v, missing p50 %v\n", r.name, p50(row.Hidden), p50(row.Missing))
		res = append(res, row)
	}
	return res, nil
}

// timeRefusal times one call that must be answered as not found.
func timeRefusal(ctx context.Context, b *bench, tool string, args map[string]any) (time.Duration, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = tool, args
	start := time.Now()
	res, err := b.mcp.CallTool(ctx, req)
	d := time.Since(start)
	if err != nil {
		return 0, err
	}
	if !res.IsError {
		return 0, fmt.Errorf("%s %v was answered, want not found", tool, args)
	}
	return d, nil
}

func p50(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

// renderHidden is the report's table of hidden against missing reads.
func renderHidden(rows []hiddenRow, calls int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n## A hidden document against a missing one\n\n"+
		"The `finance` key reads the `hr` document (hidden from it) and a random id or path (missing), alternately,\n"+
		"%d calls each, one client over streamable HTTP; both answers are \"not found\", byte for byte (deploy/e2e TestAccessMatrix).\n\n", calls)
	fmt.Fprintf(&b, "| read | hidden p50 | missing p50 | hidden / missing |\n|---|---|---|---|\n")
	for _, r := range rows {
		h, m := p50(r.Hidden), p50(r.Missing)
		fmt.Fprintf(&b, "| %s | %.3f ms | %.3f ms | %.2f |\n", r.Name, millis(h), millis(m), float64(h)/float64(m))
	}
	return b.String()
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
