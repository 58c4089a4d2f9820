package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/strata-kb/strata/shared/objkey"
	"github.com/strata-kb/strata/shared/pipeline"
)

func runReleaseCreate(ctx context.Context, a *app, name string, args []string) error {
	f := newFlags(name, "VERSION --project P [--branch B] [--json]",
		"Pins the project's current commit (or its branch's) under VERSION: a request on "+pipeline.ReleaseCreateSubject+",\n"+
			"answered by the indexer. Searches and reads with release_version VERSION then see exactly what was\n"+
			"visible now. Version strings are never reused.")
	project := projectFlag(f, a)
	branch := f.String("branch", "", "pin this branch instead of main")
	asJSON := f.Bool("json", false, "print the indexer's reply as JSON")
	cf := addConnFlags(f, needNATS)
	pos, err := f.parse(a, args, 1, 1)
	if err != nil {
		return err
	}
	if err := checkProject(*project); err != nil {
		return err
	}
	var reply pipeline.ReleaseReply
	raw, err := askIndexer(ctx, a, cf, pipeline.ReleaseCreateSubject, pipeline.ReleaseRequest{Project: *project, Branch: *branch, Version: pos[0]}, &reply)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(a.stdout, raw)
	}
	if reply.Release == nil {
		return fmt.Errorf("reply of %s has no release: %s", pipeline.ReleaseCreateSubject, clip(string(raw), 200))
	}
	printReleaseCreated(a.stdout, *reply.Release)
	return nil
}

func printReleaseCreated(w io.Writer, r pipeline.Release) {
	where := r.Project
	if r.Branch != "" {
		where += "@" + r.Branch
	}
	fmt.Fprintf(w, "release %s of %s pins sequence %d\n  release_id %s\n", r.Version, where, r.Sequence, r.ReleaseID)
	if r.BranchID != "" {
		fmt.Fprintf(w, "  branch_id  %s\n", r.BranchID)
	}
}

func runReleaseList(ctx context.Context, a *app, name string, args []string) error {
	f := newFlags(name, "--project P [--json]",
		"Lists the project's releases (all branches), oldest first: a request on "+pipeline.ReleaseListSubject+".")
	project := projectFlag(f, a)
	asJSON := f.Bool("json", false, "print the indexer's reply as JSON")
	cf := addConnFlags(f, needNATS)
	if _, err := f.parse(a, args, 0, 0); err != nil {
		return err
	}
	if err := checkProject(*project); err != nil {
		return err
	}
	var reply struct {
		Releases []pipeline.Release `json:"releases"`
	}
	raw, err := askIndexer(ctx, a, cf, pipeline.ReleaseListSubject, map[string]string{"project": *project}, &reply)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(a.stdout, raw)
	}
	printReleases(a.stdout, *project, reply.Releases)
	return nil
}

func printReleases(w io.Writer, project string, rs []pipeline.Release) {
	if len(rs) == 0 {
		fmt.Fprintf(w, "project %s has no releases\n", project)
		return
	}
	t := newTable(w, "VERSION", "BRANCH", "SEQUENCE", "CREATED", "RELEASE_ID")
	for _, r := range rs {
		branch := r.Branch
		if branch == "" {
			branch = "main"
		}
		t.row(r.Version, branch, strconv.FormatInt(r.Sequence, 10), stamp(r.CreatedAt), r.ReleaseID)
	}
	t.flush()
}

// projectFlag is --project of the commands about one project, by default
// STRATA_PROJECT.
func projectFlag(f *flags, a *app) *string {
	return f.String("project", a.getenv("STRATA_PROJECT"), "the project (STRATA_PROJECT)")
}

func checkProject(p string) error {
	if p == "" {
		return usagef("missing --project")
	}
	if !objkey.ValidProject(p) {
		return usagef("invalid project %q: 1-63 letters, digits, _ and -, starting with a letter or digit", p)
	}
	return nil
}

// askIndexer resolves the command's connection settings, sends the indexer
// a JSON request and decodes its reply into reply; a reply that carries an
// error is that error. It returns the reply's body too, for --json.
func askIndexer(ctx context.Context, a *app, cf *connFlags, subject string, req, reply any) (json.RawMessage, error) {
	c, err := cf.resolve(a)
	if err != nil {
		return nil, err
	}
	raw, err := natsRequest(ctx, c, subject, req)
	if err != nil {
		return nil, err
	}
	var failed struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(raw, reply); err != nil {
		return nil, fmt.Errorf("reply of %s: %w", subject, err)
	}
	if err := json.Unmarshal(raw, &failed); err == nil && failed.Error != "" {
		return nil, errors.New(failed.Error)
	}
	return raw, nil
}

// natsRequest sends a JSON request and returns the reply's body.
func natsRequest(ctx context.Context, c conn, subject string, body any) (json.RawMessage, error) {
	nc, _, err := connectNATS(c)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	data, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 45*time.Second)
	defer cancel()
	m, err := nc.RequestWithContext(ctx, subject, data)
	if errors.Is(err, nats.ErrNoResponders) {
		return nil, fmt.Errorf("nobody answers %s: is the indexer running?", subject)
	}
	if err != nil {
		return nil, fmt.Errorf("request %s: %w", subject, err)
	}
	return m.Data, nil
}
