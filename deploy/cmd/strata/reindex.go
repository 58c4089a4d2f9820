package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/strata-kb/strata/shared/pipeline"
)

func runReindex(ctx context.Context, a *app, name string, args []string) error {
	f := newFlags(name, "--project P [--prefix p] [--branch B] [--force] [--retag]",
		"Asks the ingestor to list the project's objects in the bucket again and re-emit work for them\n"+
			"(published on "+pipeline.ReindexSubject+".<project> and stored in the OBJECTS stream, so it is never lost).\n"+
			"Unchanged files are skipped unless --force; objects whose notifications were lost are recovered.")
	project := projectFlag(f, a)
	prefix := f.String("prefix", "", "only paths under this prefix (within the project)")
	branch := f.String("branch", "", "a branch instead of main")
	force := f.Bool("force", false, "re-process files that are indexed already (after an extractor or model change)")
	retag := f.Bool("retag", false, "re-read the tags of files indexed before their tags were compared (once, after upgrading): a tag change each, nothing extracted again")
	asJSON := f.Bool("json", false, "print the request and where it was stored as JSON")
	cf := addConnFlags(f, needNATS)
	if _, err := f.parse(a, args, 0, 0); err != nil {
		return err
	}
	if err := checkProject(*project); err != nil {
		return err
	}
	req := pipeline.ReindexRequest{Prefix: *prefix, Branch: *branch, Force: *force, Retag: *retag}
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	nc, js, err := cf.connectNATS(a)
	if err != nil {
		return err
	}
	defer nc.Close()
	subject := pipeline.ReindexSubject + "." + *project
	ack, err := js.Publish(ctx, subject, body) // like `nats pub`, but waits until JetStream stored it
	if err != nil {
		return fmt.Errorf("publish %s: %w", subject, err)
	}
	if *asJSON {
		return printJSON(a.stdout, map[string]any{"subject": subject, "request": req, "stream": ack.Stream, "sequence": ack.Sequence})
	}
	printReindex(a.stdout, *project, req, ack.Stream, ack.Sequence)
	return nil
}

func printReindex(w io.Writer, project string, req pipeline.ReindexRequest, stream string, seq uint64) {
	what := project
	if req.Branch != "" {
		what += "@" + req.Branch
	}
	if req.Prefix != "" {
		what += "/" + req.Prefix
	}
	mode := "changed and unprocessed files"
	switch {
	case req.Force:
		mode = "every file (forced)"
	case req.Retag:
		mode = "changed and unprocessed files, and the tags of files never compared"
	}
	fmt.Fprintf(w, "reindex of %s requested: %s (stored in %s at sequence %d)\n", what, mode, stream, seq)
}
