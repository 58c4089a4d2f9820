package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"
)

// render writes the report: per event path, scenario and size, the
// percentiles of upload -> keyword-searchable and upload -> vector-searchable,
// then where the time went, stage by stage.
func render(cfg Config, results []modeResult, took time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Freshness: upload to searchable\n\n")
	fmt.Fprintf(&b, "`go run ./deploy/measure/strata-freshness` (part of `go tool task bench`), commit %s, %d cores, %s, run took %s, load average at the end %s.\n\n",
		commit(cfg.Root), runtime.NumCPU(), time.Now().UTC().Format("2006-01-02"), took.Round(time.Second), loadAverage())
	b.WriteString("Each sample PUTs one Markdown file with minio-go and polls queryd over MCP every 10 ms from the moment the PUT returns: " +
		"`search_keyword` for a word only that file holds (keyword-searchable), and `hybrid_search` with alpha 1 restricted to the file's path " +
		"until a hit has a vector rank (vector-searchable, local USE-Lite model). \"loaded\" runs beside a background of 1 KB uploads to another project. " +
		"The event paths run one after the other on fresh stacks: **live** is MinIO's live target (plain NATS, at once) with the durable one beside it; " +
		"**durable** is the queue-directory target alone, which MinIO replays every 3 s.\n\n")
	b.WriteString("Goal (issue 14): keyword p50 <= 500 ms and p99 <= 1.5 s for files up to 100 KB; vector p50 <= 1.5 s.\n\n")
	for _, r := range results {
		fmt.Fprintf(&b, "## %s events\n\n", r.Mode)
		if r.LoadRate > 0 {
			fmt.Fprintf(&b, "Background load achieved: %.1f uploads/s (asked %d).\n\n", r.LoadRate, cfg.Load)
		}
		b.WriteString("| scenario | size | n | keyword p50 | p90 | p99 | vector p50 | p90 | p99 | failed |\n|---|---|---|---|---|---|---|---|---|---|\n")
		for _, loaded := range []bool{false, true} {
			for _, size := range cfg.Sizes {
				var kw, vec []time.Duration
				n, failed := 0, 0
				for _, s := range r.Samples {
					if s.Loaded != loaded || s.Size != size {
						continue
					}
					n++
					if s.Err != "" {
						failed++
					}
					if s.Keyword > 0 {
						kw = append(kw, s.Keyword)
					}
					if s.Vector > 0 {
						vec = append(vec, s.Vector)
					}
				}
				if n == 0 {
					continue
				}
				fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s | %s | %s | %s | %d |\n", scenario(loaded), sizeName(size), n,
					pct(kw, 50), pct(kw, 90), pct(kw, 99), pct(vec, 50), pct(vec, 90), pct(vec, 99), failed)
			}
		}
		b.WriteString("\nWhere the time went (p50 of each step, from `object_status` stages; uploaded is MinIO's clock):\n\n")
		b.WriteString("| scenario | size | upload -> seen | seen -> extracted | extracted -> committed | committed -> embedded |\n|---|---|---|---|---|---|\n")
		for _, loaded := range []bool{false, true} {
			for _, size := range cfg.Sizes {
				var seen, extracted, committed, embedded []time.Duration
				for _, s := range r.Samples {
					st := s.Stages
					if s.Loaded != loaded || s.Size != size || st.Uploaded.IsZero() {
						continue
					}
					seen = appendStep(seen, st.Uploaded, st.Seen)
					extracted = appendStep(extracted, st.Seen, st.Extracted)
					committed = appendStep(committed, st.Extracted, st.Committed)
					embedded = appendStep(embedded, st.Committed, st.Embedded)
				}
				if len(seen) == 0 {
					continue
				}
				fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", scenario(loaded), sizeName(size),
					pct(seen, 50), pct(extracted, 50), pct(committed, 50), pct(embedded, 50))
			}
		}
		var errs []string
		for _, s := range r.Samples {
			if s.Err != "" && len(errs) < 5 {
				errs = append(errs, fmt.Sprintf("- %s, %s: %s", scenario(s.Loaded), sizeName(s.Size), s.Err))
			}
		}
		if len(errs) > 0 {
			b.WriteString("\nFailures (first five):\n\n" + strings.Join(errs, "\n") + "\n")
		}
		b.WriteString("\n")
	}
	return b.String()
}

func appendStep(l []time.Duration, from, to time.Time) []time.Duration {
	if from.IsZero() || to.IsZero() {
		return l
	}
	return append(l, to.Sub(from))
}

// pct is the nearest-rank percentile, "-" for no data.
func pct(l []time.Duration, p int) string {
	if len(l) == 0 {
		return "-"
	}
	s := slices.Clone(l)
	slices.Sort(s)
	i := (p*len(s)+99)/100 - 1
	return ms(s[max(0, min(i, len(s)-1))])
}

func ms(d time.Duration) string {
	if d >= time.Second {
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
	return fmt.Sprintf("%d ms", d.Milliseconds())
}

func scenario(loaded bool) string {
	if loaded {
		return "loaded"
	}
	return "one at a time"
}

func sizeName(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%d MB", n/1_000_000)
	case n >= 1_000 && n%1_000 == 0:
		return fmt.Sprintf("%d KB", n/1_000)
	}
	return fmt.Sprintf("%d B", n)
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

func commit(root string) string {
	out, err := exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}
