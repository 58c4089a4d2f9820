package tools

// list_failures: Strata's failures view, failed files and dead letters.

import (
	"context"
	_ "embed"
	"slices"
	"strings"
	"time"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/shared/objkey"
	"github.com/strata-kb/strata/shared/pipeline"
)

const listFailuresDescription = "Failures view: files that could not be ingested or indexed, with the stage (extract, or the pipeline stage that " +
	"dead-lettered the message), the reason, the attempts and the time; filterable by project and path prefix, newest first."

//go:embed schemas/list_failures.input.json
var listFailuresInput string

var listFailuresTool = define(ToolsetStrata, "list_failures", listFailuresDescription, listFailuresInput, (*Tools).listFailures)

type listFailuresArgs struct {
	ProjectReference *string  `json:"project_reference"`
	PathPrefix       *string  `json:"path_prefix"`
	Limit            *float64 `json:"limit"`
}

type failureOut struct {
	Project  string `json:"project"`
	Key      string `json:"key"`  // the object key (a member's: its container's, objectKey)
	Path     string `json:"path"` // the document's path (a member's: <container path>//<member path>)
	Branch   string `json:"branch,omitempty"`
	Stage    string `json:"stage"` // extract (recorded on the document) or ingestor / indexer / embedder (dead letter)
	Status   string `json:"status,omitempty"`
	Reason   string `json:"reason"`
	Attempts *int   `json:"attempts"` // dead letters: deliveries before giving up
	Time     string `json:"time"`
}

// MaxDeadLetterScan bounds the dead letters list_failures reads.
const MaxDeadLetterScan = 2000

func (t *Tools) listFailures(ctx context.Context, p auth.Principal, a listFailuresArgs) (any, error) {
	limit, err := intArg("limit", a.Limit, 50, 1, 200)
	if err != nil {
		return nil, err
	}
	prefix := ""
	if a.PathPrefix != nil {
		prefix = strings.TrimPrefix(*a.PathPrefix, "/")
	}
	projects, err := t.projectsNamed(ctx, p, a.ProjectReference)
	if err != nil {
		return nil, err
	}
	out := []failureOut{}
	for _, project := range projects {
		docs, err := t.failedDocuments(ctx, project, 10000)
		if err != nil {
			return nil, err
		}
		for _, d := range docs {
			if !strings.HasPrefix(d.FilePath, prefix) {
				continue
			}
			key := objectKey(project, d.Branch, d.FilePath)
			if d.AccessError != "" {
				out = append(out, failureOut{Project: project, Key: key, Path: d.FilePath, Branch: d.Branch, Stage: "access", Status: d.Status,
					Reason: accessFailure(d.AccessError), Time: d.UpdatedAt})
			}
			if d.Status == pipeline.StatusFailed || d.Status == pipeline.StatusUnsupported {
				out = append(out, failureOut{Project: project, Key: key, Path: d.FilePath, Branch: d.Branch, Stage: "extract", Status: d.Status,
					Reason: d.Error, Time: d.UpdatedAt})
			}
		}
	}
	// Dead letters name objects whose groups were never read: only admins
	// of a project see its dead letters.
	if t.dead != nil && p.Admin() {
		letters, err := t.dead.Recent(ctx, MaxDeadLetterScan)
		if err != nil {
			return nil, err
		}
		readable := map[string]bool{}
		for _, pr := range projects {
			readable[pr] = true
		}
		for _, l := range letters {
			if !readable[l.Project] {
				continue // unknown or foreign objects are not shown
			}
			k, err := objkey.Parse(l.ObjectKey)
			if err != nil || !strings.HasPrefix(k.Path, prefix) {
				continue
			}
			out = append(out, failureOut{Project: l.Project, Key: l.ObjectKey, Path: k.Path, Branch: k.Branch, Stage: l.Stage, Reason: l.Error,
				Attempts: ptr(l.Attempts), Time: l.FailedAt.UTC().Format(time.RFC3339Nano)})
		}
	}
	sortFailures(out)
	return map[string]any{"failures": out[:min(limit, len(out))], "total": len(out)}, nil
}

// sortFailures orders failures newest first (RFC 3339 times of one zone sort as text).
func sortFailures(fs []failureOut) {
	slices.SortStableFunc(fs, func(x, y failureOut) int { return strings.Compare(y.Time, x.Time) })
}

// accessFailure is the reason shown for a document whose groups could not
// be read.
func accessFailure(reason string) string {
	return "groups not applied, readable by admins only: " + reason
}

// objectKey is the key of the uploaded object that holds the document at
// path: its own, or a member's container's (objkey.ContainerOf), which is
// what object_status takes.
func objectKey(project, branch, path string) string {
	container, _ := objkey.ContainerOf(path)
	if branch != "" {
		return project + "@" + branch + "/" + container
	}
	return project + "/" + container
}
