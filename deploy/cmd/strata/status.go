package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/deploy/mcpclient"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/stagehealth"
)

func runStatus(ctx context.Context, a *app, name string, args []string) error {
	f := newFlags(name, "[--pipeline] [--json]",
		"Prints what the index holds (the MCP tool status): documents, chunks, embedded chunks, failed and\n"+
			"unsupported files and the commit watermark per project, and the failed files with why.\n"+
			"--pipeline adds each stage's lag and the dead letters, read from NATS JetStream, and each worker\n"+
			"replica held back by a full disk or over its memory budget.")
	pipe := f.Bool("pipeline", false, "also show each stage's lag (unprocessed and in-flight messages) and the dead letters")
	asJSON := f.Bool("json", false, "print the tool's answer as JSON")
	cf := addConnFlags(f, needMCP|needNATS)
	if _, err := f.parse(a, args, 0, 0); err != nil {
		return err
	}
	c, err := cf.resolve(a)
	if err != nil {
		return err
	}
	raw, err := callTool(ctx, c, "status", map[string]any{})
	if err != nil {
		return err
	}
	var lag []stageLag
	var replicas []stagehealth.Report
	if *pipe {
		if lag, replicas, err = pipelineLag(ctx, c); err != nil {
			return err
		}
	}
	if *asJSON {
		if !*pipe {
			return printJSON(a.stdout, raw)
		}
		return printJSON(a.stdout, map[string]any{"status": raw, "pipeline": lag, "replicas": replicas})
	}
	var st mcpclient.Status
	if err := json.Unmarshal(raw, &st); err != nil {
		return fmt.Errorf("status answer: %w", err)
	}
	printStatus(a.stdout, st)
	if *pipe {
		printLag(a.stdout, lag)
		printHeldBack(a.stdout, replicas)
	}
	return nil
}

// printHeldBack names each worker replica that a full disk or its memory
// budget holds back, and how many report nothing of the kind.
func printHeldBack(w io.Writer, replicas []stagehealth.Report) {
	fine := 0
	for _, r := range replicas {
		conds := r.Conditions()
		if len(conds) == 0 {
			fine++
			continue
		}
		for _, c := range conds {
			fmt.Fprintf(w, "  %s %s: %s\n", r.Stage, r.Instance, oneLine(c))
		}
	}
	fmt.Fprintf(w, "%s without a full disk or memory over budget\n", plural(fine, "worker replica", "worker replicas"))
}

func printStatus(w io.Writer, s mcpclient.Status) {
	cfg := s.Configuration
	search := cfg.Search
	if cfg.Embedding != "" && cfg.Embedding != "none" {
		search += fmt.Sprintf(" (embedding %s", cfg.Embedding)
		if cfg.Model != "" {
			search += ", model " + cfg.Model
		}
		if cfg.Dimensions > 0 {
			search += fmt.Sprintf(", %d-d", cfg.Dimensions)
		}
		search += ")"
	}
	fmt.Fprintf(w, "Search: %s; embeddings %s\n", search, cfg.Embeddings)
	fmt.Fprintf(w, "Total: %s, %s, %d failed, %d unsupported\n\n", plural(s.DocumentCount, "document", "documents"),
		plural(s.ChunkCount, "chunk", "chunks"), s.FailedCount, s.UnsupportedCount)
	if len(s.Projects) == 0 {
		fmt.Fprintln(w, "No projects yet: upload files (strata ingest DIR --project P).")
		return
	}
	t := newTable(w, "PROJECT", "DOCUMENTS", "CHUNKS", "EMBEDDED", "FAILED", "UNSUPPORTED", "WATERMARK")
	for _, p := range s.Projects {
		t.row(p.Project, strconv.Itoa(p.DocumentCount), strconv.Itoa(p.ChunkCount), strconv.Itoa(p.EmbeddedChunkCount),
			strconv.Itoa(p.FailedCount), strconv.Itoa(p.UnsupportedCount), strconv.FormatInt(p.Watermark, 10))
	}
	t.flush()
	header := false
	for _, p := range s.Projects {
		for _, f := range p.Failures {
			if !header {
				fmt.Fprintln(w, "\nFiles not indexed:")
				header = true
			}
			where := p.Project
			if f.Branch != "" {
				where += "@" + f.Branch
			}
			fmt.Fprintf(w, "  %s/%s (%s): %s\n", where, f.Path, f.Status, oneLine(f.Error))
		}
	}
}

// stageLag is one durable consumer's backlog.
type stageLag struct {
	Stream      string `json:"stream"`
	Consumer    string `json:"consumer"`
	Unprocessed uint64 `json:"unprocessed"`
	AckPending  int    `json:"ack_pending"`
	Missing     bool   `json:"missing,omitempty"` // the consumer does not exist (its stage never ran)
}

// stageConsumers are the pipeline's durable consumers, in pipeline order.
var stageConsumers = []struct{ stream, consumer string }{
	{pipeline.ObjectsStream, pipeline.IngestorConsumer},
	{pipeline.ChunksStream, pipeline.IndexerChunksConsumer},
	{pipeline.ChunksStream, pipeline.EmbedderConsumer},
	{pipeline.EmbeddingsStream, pipeline.IndexerVectorsConsumer},
}

func pipelineLag(ctx context.Context, c conn) ([]stageLag, []stagehealth.Report, error) {
	nc, js, err := connectNATS(c)
	if err != nil {
		return nil, nil, err
	}
	defer nc.Close()
	out, err := consumerLag(ctx, js)
	if err != nil {
		return nil, nil, err
	}
	n, err := deadLetterCount(ctx, js)
	if err != nil {
		return nil, nil, err
	}
	replicas, err := stagehealth.Read(ctx, js)
	if err != nil {
		return nil, nil, err
	}
	return append(out, stageLag{Stream: pipeline.DeadLetterStream, Unprocessed: n}), replicas, nil
}

func consumerLag(ctx context.Context, js jetstream.JetStream) ([]stageLag, error) {
	var out []stageLag
	for _, sc := range stageConsumers {
		l := stageLag{Stream: sc.stream, Consumer: sc.consumer}
		cons, err := js.Consumer(ctx, sc.stream, sc.consumer)
		switch {
		case errors.Is(err, jetstream.ErrConsumerNotFound) || errors.Is(err, jetstream.ErrStreamNotFound):
			l.Missing = true
		case err != nil:
			return nil, fmt.Errorf("consumer %s of %s: %w", sc.consumer, sc.stream, err)
		default:
			info := cons.CachedInfo()
			l.Unprocessed, l.AckPending = info.NumPending, info.NumAckPending
		}
		out = append(out, l)
	}
	return out, nil
}

func deadLetterCount(ctx context.Context, js jetstream.JetStream) (uint64, error) {
	st, err := js.Stream(ctx, pipeline.DeadLetterStream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("stream %s: %w", pipeline.DeadLetterStream, err)
	}
	return st.CachedInfo().State.Msgs, nil
}

func printLag(w io.Writer, lag []stageLag) {
	fmt.Fprintln(w, "\nPipeline:")
	t := newTable(w, "STREAM", "CONSUMER", "UNPROCESSED", "IN FLIGHT")
	for _, l := range lag {
		switch {
		case l.Consumer == "":
			t.row(l.Stream, "(dead letters)", strconv.FormatUint(l.Unprocessed, 10), "-")
		case l.Missing:
			t.row(l.Stream, l.Consumer, "not created yet", "-")
		default:
			t.row(l.Stream, l.Consumer, strconv.FormatUint(l.Unprocessed, 10), strconv.Itoa(l.AckPending))
		}
	}
	t.flush()
}
