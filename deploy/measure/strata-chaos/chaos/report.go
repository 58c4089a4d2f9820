package chaos

import (
	"cmp"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"
)

// Layout describes the cluster a run starts, for the report.
const Layout = `- **NATS**: 3 nodes in one cluster; every stream and KV bucket with 3 replicas. Every service is given all three URLs.
- **MinIO**: 4 nodes, one drive each, one erasure set (EC:2: reads need 2 drives, writes 3, so any one node may be lost).
  Each node has both notification targets (durable JetStream with a queue directory of its own, and live). MinIO
  requires the same MINIO_* settings on every node, so all send to NATS node 1; MinIO's NATS client learns the other
  NATS nodes from the server and reconnects to one of them when node 1 is lost (durable events wait on disk meanwhile).
- **Weaviate**: 3 nodes, collections replicated twice (queryd reads at consistency ONE, the indexer writes at ALL).
  Services are given every node.
- **Services**: two processes each of ingestor, embedder, indexer and queryd. The ingestor and queryd take one S3 endpoint
  (` + "`-s3-endpoint`" + `): ingestor-1 and queryd-1 use MinIO node 1, ingestor-2 MinIO node 2, queryd-2 MinIO node 3. While
  an ingestor's MinIO node is down its fetches fail and the events are retried (1 s, 5 s, 30 s, 2 min backoff),
  by either replica, so the other ingestor takes them; queryd uses S3 only for view_chunk_image.
- **Clients**: the writers use all four MinIO nodes (each operation on the next node, moving on when one fails); the readers
  call both queryd replicas, retrying a failed call on the other one within ` + "2 s" + ` (a call still running is not cut short before then).`

// killFailures counts the reads not served after one kill.
type killFailures struct {
	kill          string
	slow, refused int
}

// failuresByKill counts failures by the last kill before each (the part
// of its Context before the first comma), in the order of the kills.
func failuresByKill(failures []ReadFailure) []killFailures {
	var out []killFailures
	index := map[string]int{}
	byTime := slices.Clone(failures)
	slices.SortStableFunc(byTime, func(a, b ReadFailure) int { return cmp.Compare(a.At, b.At) })
	for _, f := range byTime {
		kill, _, _ := strings.Cut(f.Context, ",")
		if kill == "" {
			kill = "no kill yet"
		}
		i, ok := index[kill]
		if !ok {
			i = len(out)
			index[kill] = i
			out = append(out, killFailures{kill: kill})
		}
		if f.Slow {
			out[i].slow++
		} else {
			out[i].refused++
		}
	}
	return out
}

// killsText says how processes were killed in the run.
func killsText(cfg Config) string {
	if cfg.KillEvery == 0 {
		return "No process is killed (-kill-every 0: a baseline of the same load)."
	}
	return fmt.Sprintf("%s after the previous fault ended (the cluster whole again; so no two members of one engine are ever down at once) one process, chosen in turn from a shuffled list of all %d (3 NATS, 4 MinIO, 3 Weaviate nodes, 8 service processes), takes the next fault of -faults %s: kill (SIGKILL, left down %s, started again), pause (SIGSTOP for %s to %s, then SIGCONT), diskfull (a NATS, MinIO or Weaviate node's disk filled for %s, then freed).",
		cfg.KillEvery, 16, strings.Join(cfg.Faults, ","), cfg.Down, cfg.PauseMin, cfg.PauseMax, cfg.DiskFullHold)
}

// WriteMarkdown writes the run's report.
func (r *Result) WriteMarkdown(out io.Writer) error {
	var b strings.Builder
	cfg := r.Config
	p := func(f string, a ...any) { fmt.Fprintf(&b, f, a...) }
	p("# Chaos: the cluster under load while processes are killed\n\n")
	command := cfg.Command
	if command == "" {
		command = fmt.Sprintf("go run ./deploy/measure/strata-chaos -minutes %g", cfg.Duration.Minutes())
	}
	p("`%s`, %s, %d CPUs (the whole cluster and the load on one machine).\n\n",
		command, r.Started.UTC().Format("2006-01-02 15:04 UTC"), runtime.NumCPU())
	p("**%s**\n\n", r.Summary())
	p("## The cluster\n\n%s\n\n", Layout)
	p("## The run\n\n")
	p("For %s: %.0f bucket operations a second over %d keys of 5 formats (Markdown, text, HTML, PDF, DOCX; an absent key is uploaded, a present one overwritten 3 times in 4 and deleted 1 in 4), every version with a token of its own; %.0f MCP reads a second from %d readers (search_keyword, hybrid_search, query_documents, search_knowledge, list_file_chunks, status, object_status, list_documents). %s The ingestors reconcile every %s (min age %s). Seed %d (-seed).\n\n",
		cfg.Duration, cfg.WriteRate, cfg.Keys, cfg.ReadRate, cfg.Readers, killsText(cfg), cfg.ReconcileInterval, cfg.ReconcileMinAge, cfg.Seed)
	p("### Writes\n\n")
	p("| uploads | overwrites | deletes | uploads/s held | moved to another MinIO node | gave up after %s |\n|---|---|---|---|---|---|\n", writeDeadline)
	p("| %d | %d | %d | %.2f | %d | %d |\n\n", r.Uploads, r.Overwrites, r.Deletes, r.UploadsPerSecond, r.Failovers, r.GaveUp)
	if r.WritesAfterPhase > time.Second {
		p("The writes in flight when the phase ended took %s more to finish; they are in the counts above, not in the rates.\n\n", r.WritesAfterPhase.Round(time.Second))
	}
	if r.WritesSkipped > 0 {
		p("%d operations were not issued because every writer was busy or their key was being written.\n\n", r.WritesSkipped)
	}
	for _, f := range r.WriteFailures {
		p("- write failure: %s\n", clip(f, 500))
	}
	p("### Reads\n\n")
	refused := r.RefusedReads()
	p("| reads | a second | served within %s | of them by a second attempt | hedged | p50 | p99 | not served | of them slow | refused |\n|---|---|---|---|---|---|---|---|---|---|\n", ServeWithin)
	p("| %d | %.1f | %d | %d | %d | %s | %s | %d | %d | %d |\n\n", r.Reads, r.ReadsPerSecond, r.Served, r.Retried, r.Hedged, r.ReadP50.Round(time.Millisecond), r.ReadP99.Round(time.Millisecond), len(r.ReadFailures), len(r.ReadFailures)-refused, refused)
	p("A read goes to one queryd replica, one that passed its last readiness check (/readyz, every %s, as a load balancer's health check); an attempt that fails is sent at once to the other%s. A second attempt: a retry or a hedge that answered. Slow: an attempt was still running at %s. Refused: every attempt, on both replicas, failed with an error before then. The longest time without any read served: %s, from %s.\n\n",
		HealthEvery, hedgeText(r.Config.HedgeAfter), ServeWithin, r.LongestReadGap.Round(time.Millisecond), r.LongestReadGapAt.Round(time.Second))
	p("| tool | reads | not served | slow | p50 | p99 |\n|---|---|---|---|---|---|\n")
	for _, tool := range sortedTools(r.ReadsByTool) {
		t := r.ReadsByTool[tool]
		p("| %s | %d | %d | %d | %s | %s |\n", tool, t.Reads, t.Failed, t.Slow, t.Percentile(0.5).Round(time.Millisecond), t.Percentile(0.99).Round(time.Millisecond))
	}
	p("\n")
	if r.ReadsSkipped > 0 {
		p("%d reads were not issued because every reader was busy: the rate was not held.\n\n", r.ReadsSkipped)
	}
	if len(r.ReadFailures) > 0 {
		// Refused reads first: no replica could answer them.
		failures := slices.Clone(r.ReadFailures)
		slices.SortStableFunc(failures, func(a, b ReadFailure) int {
			switch {
			case a.Slow == b.Slow:
				return 0
			case b.Slow:
				return -1
			}
			return 1
		})
		p("Reads not served, by the last kill before them:\n\n| after | not served | slow | refused |\n|---|---|---|---|\n")
		for _, k := range failuresByKill(failures) {
			p("| %s | %d | %d | %d |\n", k.kill, k.slow+k.refused, k.slow, k.refused)
		}
		p("\n")
		p("| at | tool | took | why | after | errors |\n|---|---|---|---|---|---|\n")
		for i, f := range failures {
			if i == 50 {
				p("| ... | %d more | | | | |\n", len(failures)-50)
				break
			}
			p("| %s | %s | %s | %s | %s | %s |\n", f.At.Round(time.Second), f.Tool, f.Took.Round(time.Millisecond), f.Why(), f.Context, md(strings.Join(f.Errors, "; "), 400))
		}
		p("\n")
	}
	p("### Kills\n\n")
	if w, ok := r.WorstKill(); ok {
		p("Worst time from a kill to full service: **%s** (%s; it includes the %s the process was left down).\n\n", w.Whole.Round(time.Millisecond), w.Victim, cfg.Down)
	}
	p("| # | fault | process | at | ready again | full service | ingest resumed | error or note |\n|---|---|---|---|---|---|---|---|\n")
	for i, k := range r.Kills {
		resumed := ""
		if k.Kind == FaultDiskFull && k.Skipped == "" {
			resumed = k.Resumed.Round(time.Millisecond).String()
		}
		note := strings.Join(slices.DeleteFunc([]string{k.Err, k.Helped, k.Skipped}, func(s string) bool { return s == "" }), "; ")
		p("| %d | %s | %s | %s | %s | %s | %s | %s |\n", i+1, k.What(), k.Victim, k.At.Round(time.Second), k.Restarted.Round(time.Millisecond), k.Whole.Round(time.Millisecond), resumed, md(note, 300))
	}
	p("\n\"Ready again\" is the killed process answering its readiness check (a paused one: continued with SIGCONT; a full disk: freed); \"full service\" is every engine whole again: every NATS node's /healthz (its streams and consumers current), every MinIO node with its write quorum, the Weaviate cluster settled (every node healthy, one Raft leader, in sync) and all 8 service processes ready. \"Ingest resumed\": a file uploaded when a full disk was freed was embedded and searchable this long after (object_status).\n\n")
	if slices.Contains(cfg.Faults, FaultDiskFull) {
		if r.DisksRefused != "" {
			p("Full-disk faults were skipped: %s.\n\n", r.DisksRefused)
		} else {
			p("Every engine node's data directory was a tmpfs of %d MiB of its own (a mount namespace of the run's own); the embedders' vector cache was a quarter of it (it reserves its size on every NATS node's disk). A full-disk fault wrote a ballast file until the disk was full, held it %s and deleted it. A NATS or a Weaviate node is restarted once its disk is freed, as an operator would: the note says why each needs it; MinIO needs nothing.\n\n", cfg.DiskSize>>20, cfg.DiskFullHold)
		}
	}
	if len(r.CPU) > 0 {
		names := make([]string, 0, len(r.CPU))
		total := 0.0
		for n, v := range r.CPU {
			names = append(names, n)
			total += v
		}
		sort.Slice(names, func(i, j int) bool { return r.CPU[names[i]] > r.CPU[names[j]] })
		capacity := r.PhaseTook.Seconds() * float64(runtime.NumCPU())
		p("### Where the CPU went\n\n%.0f CPU seconds of the %.0f the machine had over the chaos phase (%.0f%%); a process restarted during it counts from its restart.\n\n| process | CPU s | share of the machine |\n|---|---|---|\n", total, capacity, 100*total/capacity)
		for _, n := range names {
			p("| %s | %.1f | %.1f%% |\n", n, r.CPU[n], 100*r.CPU[n]/capacity)
		}
		p("\n")
	}
	p("## The index compared with the bucket\n\n")
	if c := r.Comparison; c != nil {
		p("After the chaos phase the pipeline settled in %s (every consumer with nothing pending, every key's object_status matching the bucket). Then, through queryd's tools: %d live objects (each: object_status of its ETag embedded and searchable, list_file_chunks showing that version alone with each chunk index once and its token, search_keyword finding its token), %d deleted keys (list_file_chunks: file not found), %d tokens of overwritten or deleted versions (search_keyword finds none), list_documents (each live object once, nothing else) and each queryd replica's status:\n\n",
			r.SettleTook.Round(time.Second), c.Objects, c.Deleted, c.Versions)
		for _, s := range c.Status {
			p("- %s\n", s)
		}
		p("\n")
		for _, g := range []struct {
			name string
			l    []Problem
		}{{"Lost", c.Lost}, {"Duplicated", c.Duplicated}, {"Stale", c.Stale}} {
			p("%s: %d\n\n", g.name, len(g.l))
			for i, pr := range g.l {
				if i == 50 {
					p("- ... %d more\n", len(g.l)-50)
					break
				}
				p("- `%s`: %s\n", pr.Key, md(pr.Detail, 400))
			}
			if len(g.l) > 0 {
				p("\n")
			}
		}
	} else {
		p("No comparison was made (the run stopped early).\n\n")
	}
	_, err := io.WriteString(out, b.String())
	return err
}

func sortedTools(m map[string]*ToolReads) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func md(s string, n int) string {
	return strings.NewReplacer("|", "\\|", "\n", " ").Replace(clip(s, n))
}

// hedgeText says how reads were hedged, as a clause of the report's
// sentence on the client's policy.
func hedgeText(d time.Duration) string {
	if d <= 0 {
		return " (no hedging: -hedge-after 0)"
	}
	return fmt.Sprintf(", and one not answered within %s (-hedge-after) is also sent to the other (hedged; at most %.0f%% of the reads over time, %d at once), the first answer winning", d, HedgeShare*100, HedgeBurst)
}
