package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/deploy/progress"
	"github.com/strata-kb/strata/shared/pipeline"
)

// stage is where one uploaded file is.
type stage int

const (
	stagePending   stage = iota // uploaded; its event not processed yet
	stageExtracted              // the ingestor published its file version
	stageCommitted              // committed: keyword-searchable (indexed)
	stageEmbedded               // vectors written too: vector-searchable
	stageFailed                 // cannot be read, or not uploaded
)

var stageNames = [...]string{"pending", "extracted", "committed", "embedded", "failed"}

func (s stage) String() string { return stageNames[s] }

// final: nothing more will happen to the file (committed is final only
// once no vectors are coming, see waiter.settleCommitted).
func (s stage) final() bool { return s == stageEmbedded || s == stageFailed }

// objectState is an object's record in the KV bucket strata_objects
// (pipeline.ObjectState; read here field by field, stages when present).
type objectState struct {
	Key       string    `json:"key"`
	ETag      string    `json:"etag"`
	State     string    `json:"state"`
	Error     string    `json:"error"`
	Sequence  int64     `json:"sequence"`
	UpdatedAt time.Time `json:"updated_at"`
	Stages    struct {
		Uploaded  time.Time `json:"uploaded"`
		Seen      time.Time `json:"seen"`
		Extracted time.Time `json:"extracted"`
		Committed time.Time `json:"committed"`
		Embedded  time.Time `json:"embedded"`
	} `json:"stages"`
}

// classify says where an upload with etag is, given its key's recorded
// state (nil: none yet). A state of another upload of the key is pending.
func classify(etag string, st *objectState) (stage, string) {
	if st == nil {
		return stagePending, ""
	}
	if etag != "" && st.ETag != "" && strings.Trim(st.ETag, `"`) != etag {
		return stagePending, ""
	}
	switch st.State {
	case pipeline.StatePending:
		if !st.Stages.Extracted.IsZero() {
			return stageExtracted, ""
		}
		return stagePending, ""
	case pipeline.StateIndexed:
		return stageCommitted, ""
	case pipeline.StateEmbedded:
		return stageEmbedded, ""
	case pipeline.StateFailed:
		return stageFailed, st.Error
	case pipeline.StateDeleted:
		return stageFailed, "deleted from the bucket since the upload"
	}
	return stagePending, ""
}

// counts is how many files are at each stage.
type counts [len(stageNames)]int

func countStages(files []*file) (c counts) {
	for _, f := range files {
		c[f.stage]++
	}
	return c
}

// waitLine is the wait's progress: files per stage.
func waitLine(c counts, took time.Duration) string {
	total := 0
	parts := make([]string, len(c))
	for i, n := range c {
		parts[i] = fmt.Sprintf("%d %s", n, stageNames[i])
		total += n
	}
	return fmt.Sprintf("waiting %s: %s (of %d)", durationText(took), strings.Join(parts, ", "), total)
}

// waiter follows uploaded files until each is searchable or failed.
type waiter struct {
	a     *app
	js    jetstream.JetStream
	kv    jetstream.KeyValue
	files []*file
	stall time.Duration
	// settled: files whose stage is final, plus committed files once no
	// vectors are coming (no chunks, or no embedding provider).
	settled map[*file]bool
	// keywordOnly: committed files settled without vectors.
	keywordOnly int
	timedOut    bool
}

const pollEvery = 300 * time.Millisecond

func (w *waiter) wait(ctx context.Context) (time.Duration, error) {
	kv, err := w.js.KeyValue(ctx, pipeline.ObjectStateBucket)
	if err != nil {
		return 0, fmt.Errorf("KV bucket %s (created by the ingestor): %w", pipeline.ObjectStateBucket, err)
	}
	w.kv, w.settled = kv, map[*file]bool{}
	for _, f := range w.files {
		if f.stage == stageFailed { // not uploaded
			w.settled[f] = true
		}
	}
	start := w.a.now()
	var line atomic.Pointer[string]
	set := func() { s := waitLine(countStages(w.files), w.a.now().Sub(start)); line.Store(&s) }
	set()
	p := &progress.Line{Out: w.a.stdout, TTY: w.a.tty, Every: 5 * time.Second}
	stop := p.Run(func() string { return *line.Load() })
	lastProgress, idleSeen := w.a.now(), 0
	for len(w.settled) < len(w.files) {
		changed, err := w.poll(ctx)
		if err != nil {
			stop(*line.Load())
			return 0, err
		}
		set()
		if changed {
			lastProgress, idleSeen = w.a.now(), 0
		}
		if len(w.settled) == len(w.files) {
			break
		}
		// Files that stay committed while every stage after the commit is
		// idle will get no vectors (no chunks, or no embedding provider):
		// they are searchable by keyword. Seen idle twice, to be sure.
		if w.onlyCommittedLeft() {
			idle, err := pipelineIdle(ctx, w.js)
			if err != nil {
				stop(*line.Load())
				return 0, err
			}
			if idleSeen++; !idle {
				idleSeen = 0
			}
			if idleSeen >= 2 {
				w.settleCommitted()
				break
			}
		}
		if w.a.now().Sub(lastProgress) > w.stall {
			w.timedOut = true
			break
		}
		select {
		case <-ctx.Done():
			stop(*line.Load())
			return 0, ctx.Err()
		case <-time.After(pollEvery):
		}
	}
	took := w.a.now().Sub(start)
	set()
	stop(waitLine(countStages(w.files), took))
	return took, nil
}

// poll reads the state of every unsettled file (8 at a time) and reports
// whether any moved.
func (w *waiter) poll(ctx context.Context) (bool, error) {
	var todo []*file
	for _, f := range w.files {
		if !w.settled[f] {
			todo = append(todo, f)
		}
	}
	var (
		mu       sync.Mutex
		changed  bool
		firstErr error
		wg       sync.WaitGroup
		sem      = make(chan struct{}, 8)
	)
	for _, f := range todo {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			st, err := w.state(ctx, f)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				return
			}
			s, reason := classify(f.etag, st)
			if s != f.stage {
				changed = true
			}
			f.stage, f.reason, f.state = s, reason, st
			if s.final() {
				w.settled[f] = true
			}
		}()
	}
	wg.Wait()
	return changed, firstErr
}

func (w *waiter) state(ctx context.Context, f *file) (*objectState, error) {
	e, err := w.kv.Get(ctx, pipeline.ObjectStateKey(f.project, f.key))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("state of %s: %w", f.key, err)
	}
	var st objectState
	if err := json.Unmarshal(e.Value(), &st); err != nil {
		return nil, fmt.Errorf("state of %s: %w", f.key, err)
	}
	return &st, nil
}

func (w *waiter) onlyCommittedLeft() bool {
	for _, f := range w.files {
		if !w.settled[f] && f.stage != stageCommitted {
			return false
		}
	}
	return true
}

func (w *waiter) settleCommitted() {
	for _, f := range w.files {
		if !w.settled[f] && f.stage == stageCommitted {
			w.settled[f] = true
			w.keywordOnly++
		}
	}
}

// pipelineIdle: every consumer after the commit (the indexer's of CHUNKS, the
// embedder, the indexer's of EMBEDDINGS) has nothing unprocessed or in flight.
func pipelineIdle(ctx context.Context, js jetstream.JetStream) (bool, error) {
	lag, err := consumerLag(ctx, js)
	if err != nil {
		return false, err
	}
	for _, l := range lag {
		if l.Stream != pipeline.ObjectsStream && (l.Unprocessed > 0 || l.AckPending > 0) {
			return false, nil
		}
	}
	return true, nil
}

// printSummary ends ingest: what was uploaded, how long until searchable,
// and every file that failed or did not finish, with why.
func printSummary(out io.Writer, files []*file, up uploadStats, w *waiter, waited time.Duration) {
	fmt.Fprintf(out, "\nUploaded %s (%s) in %s, %s.\n", plural(up.files-up.failed, "file", "files"), bytesText(up.bytes),
		durationText(up.took), rateText(up.bytes, up.took))
	c := countStages(files)
	if w != nil {
		var parts []string
		if n := c[stageEmbedded]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d embedded (keyword and vector search)", n))
		}
		if w.keywordOnly > 0 {
			parts = append(parts, fmt.Sprintf("%d committed without vectors (keyword search; no chunks or no embedding provider)", w.keywordOnly))
		}
		if n := c[stageFailed]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d failed", n))
		}
		if len(parts) == 0 {
			parts = []string{"none searchable"}
		}
		fmt.Fprintf(out, "After %s: %s.\n", durationText(waited), strings.Join(parts, ", "))
		if lat := latencies(files); lat != "" {
			fmt.Fprintln(out, lat)
		}
	}
	var failed, unfinished []*file
	for _, f := range files {
		switch {
		case f.stage == stageFailed:
			failed = append(failed, f)
		case w != nil && !w.settled[f]:
			unfinished = append(unfinished, f)
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(out, "\nFailed (%d):\n", len(failed))
		for _, f := range failed {
			fmt.Fprintf(out, "  %s: %s\n", f.key, oneLine(f.reason))
		}
	}
	if len(unfinished) > 0 {
		why := ""
		if w.timedOut {
			why = fmt.Sprintf(", nothing moved for %s", durationText(w.stall))
		}
		fmt.Fprintf(out, "\nNot searchable yet (%d%s):\n", len(unfinished), why)
		for _, f := range unfinished {
			fmt.Fprintf(out, "  %s: %s\n", f.key, f.stage)
		}
	}
}

// latencies summarises upload -> committed and upload -> embedded from the
// objects' stage times (when the stack records them).
func latencies(files []*file) string {
	var committed, embedded []time.Duration
	for _, f := range files {
		if f.state == nil || f.state.Stages.Uploaded.IsZero() || f.stage == stageFailed {
			continue
		}
		s := f.state.Stages
		if !s.Committed.IsZero() {
			committed = append(committed, s.Committed.Sub(s.Uploaded))
		}
		if !s.Embedded.IsZero() {
			embedded = append(embedded, s.Embedded.Sub(s.Uploaded))
		}
	}
	var parts []string
	for _, x := range []struct {
		what string
		d    []time.Duration
	}{{"keyword-searchable", committed}, {"embedded", embedded}} {
		if len(x.d) == 0 {
			continue
		}
		slices.Sort(x.d)
		parts = append(parts, fmt.Sprintf("%s median %s, max %s", x.what, durationText(x.d[len(x.d)/2]), durationText(x.d[len(x.d)-1])))
	}
	if len(parts) == 0 {
		return ""
	}
	return "Upload to " + strings.Join(parts, "; ") + "."
}
