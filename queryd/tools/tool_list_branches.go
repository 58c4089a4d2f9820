package tools

// list_branches: a project's branches with the branch_id the other tools take.

import (
	"context"
	_ "embed"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/shared/ids"
)

const listBranchesDescription = "List a project's branches: main (branch_id null) and every branch that has files, with the branch_id the other tools take."

//go:embed schemas/list_branches.input.json
var listBranchesInput string

var listBranchesTool = define(ToolsetStrata, "list_branches", listBranchesDescription, listBranchesInput, (*Tools).listBranches)

type listBranchesArgs struct {
	ProjectReference string `json:"project_reference"`
}

// BranchOut is one branch; main has branch_id null.
type BranchOut struct {
	BranchID *string `json:"branch_id"`
	Name     string  `json:"name"`
}

func (t *Tools) listBranches(ctx context.Context, p auth.Principal, a listBranchesArgs) (any, error) {
	project, err := t.resolveProject(ctx, p, a.ProjectReference)
	if err != nil {
		return nil, err
	}
	names, err := t.view.Branches(ctx, project)
	if err != nil {
		return nil, err
	}
	out := []BranchOut{{Name: "main"}}
	for _, n := range names {
		id := ids.Branch(project, n)
		out = append(out, BranchOut{BranchID: &id, Name: n})
	}
	return map[string]any{"branches": out}, nil
}
