package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/strata-kb/strata/ingestor/extract"
	"github.com/strata-kb/strata/ingestor/extract/detect"
	"github.com/strata-kb/strata/ingestor/extract/pdf"
	"github.com/strata-kb/strata/ingestor/isolate"
)

// childArgs carries the ingestor's command line to a child this test
// binary starts as the isolated reader.
const childArgs = "STRATA_TEST_INGESTOR_ARGS"

// TestMain: started with isolate.ChildEnv, this test binary is the
// ingestor's isolated reader, run through the ingestor's own start-up.
func TestMain(m *testing.M) {
	if os.Getenv(isolate.ChildEnv) == "1" {
		if err := run(context.Background(), strings.Fields(os.Getenv(childArgs))); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestTheIngestorIsItsOwnIsolatedReader: the ingestor's start-up, with
// isolate.ChildEnv, reads one file with its readers and limits and answers
// the document the worker would have read itself; its errors keep their kind.
func TestTheIngestorIsItsOwnIsolatedReader(t *testing.T) {
	iso := isolate.New(isolate.Config{MemoryBytes: 512 << 20, Command: func(ctx context.Context) *exec.Cmd {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childArgs+"=-s3-access-key test -s3-secret-key test-secret -log-level warn -ocr=false")
		return cmd
	}})
	lim := extract.DefaultLimits()
	md := []byte("# Runbook\n\nRestart the isolatedmarker service.\n\n## Rollback\n\nUndo it.\n")
	got, err := iso.Extract(context.Background(), md, "docs/runbook.md", lim)
	if err != nil {
		t.Fatal(err)
	}
	want, err := detect.NewRegistry(pdf.Poppler{}).Extract(context.Background(), md, "docs/runbook.md", lim)
	if err != nil {
		t.Fatal(err)
	}
	if got.Text != want.Text || len(got.Blocks) != len(want.Blocks) || got.Title != want.Title || got.Format != "markdown" {
		t.Fatalf("isolated: %q %d blocks %q; in process: %q %d blocks %q", got.Text, len(got.Blocks), got.Title, want.Text, len(want.Blocks), want.Title)
	}
	_, err = iso.Extract(context.Background(), []byte("\x00\x01binary"), "clip.mp4", lim)
	if !errors.Is(err, extract.ErrUnsupported) {
		t.Fatalf("an unsupported file: %v", err)
	}
}
