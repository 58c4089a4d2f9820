package main

// How soon a tag change decides who reads a document: the same stack, two
// keys of one project (groups hr and finance), one document whose
// strata-groups tag flips between them; each sample is the time from the
// tagging call's return until both keys' keyword searches agree with it,
// and until the indexer has rewritten every object of the document (its
// announcement of the change is withdrawn), before the next flip.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/tags"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/deploy/mcpclient"
	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
)

// accessResult is every tag change measured, by document size.
type accessResult struct {
	Sizes   []int
	Samples map[int][]time.Duration // tagging call returned -> both keys see the change
	// Rewritten: tagging call returned -> every object holds the new
	// readers (the change's announcement is withdrawn).
	Rewritten map[int][]time.Duration
	// Announced: tagging call returned -> the indexer announced the change.
	Announced map[int][]time.Duration
	Failed    map[int]int
	Hidden    []hiddenRow // reads of a hidden document against a missing one
}

// measureAccessChanges runs cfg.AccessSamples tag changes on one document.
func measureAccessChanges(ctx context.Context, cfg Config, log io.Writer) (accessResult, error) {
	res := accessResult{Sizes: cfg.Sizes, Samples: map[int][]time.Duration{}, Rewritten: map[int][]time.Duration{}, Announced: map[int][]time.Duration{}, Failed: map[int]int{}}
	hrKey, financeKey := fmt.Sprintf("sk-hr-%016x", rand.Uint64()), fmt.Sprintf("sk-finance-%016x", rand.Uint64())
	env := map[string][]string{"queryd": {"STRATA_API_KEYS=" + hrKey + "=acme|hr;" + financeKey + "=acme|finance"}}
	stack, stop, err := startStack(ctx, cfg, env, "access changes", log)
	if err != nil {
		return res, err
	}
	defer stop()
	s3 := stack.S3
	clients := map[string]*bench{}
	for group, key := range map[string]string{"hr": hrKey, "finance": financeKey} {
		session, err := mcpclient.Connect(ctx, stack.Env.MCPURL, key, "strata-freshness-"+group)
		if err != nil {
			return res, fmt.Errorf("MCP session of %s: %w", group, err)
		}
		defer session.Close()
		clients[group] = &bench{cfg: cfg, mcp: session, log: log}
	}
	nc, js, err := pipeline.Connect(stack.Env.NATSURL, "strata-freshness", nil)
	if err != nil {
		return res, err
	}
	defer nc.Close()
	relabels, err := js.KeyValue(ctx, pipeline.RelabelsBucket)
	if err != nil {
		return res, fmt.Errorf("open %s: %w", pipeline.RelabelsBucket, err)
	}
	for _, size := range cfg.Sizes {
		if err := flipTags(ctx, cfg, s3, stack.Env.Bucket, relabels, clients, size, &res, log); err != nil {
			return res, err
		}
	}
	// Each flip ends where it began (an even count): back to hr, if odd.
	path := fmt.Sprintf("access/flip-%d.md", cfg.Sizes[0])
	if cfg.AccessSamples%2 == 1 {
		if err := setGroup(ctx, s3, stack.Env.Bucket, "acme/"+path, "hr"); err != nil {
			return res, err
		}
		time.Sleep(2 * time.Second)
	}
	hidden, err := measureHidden(ctx, clients["hr"], clients["finance"], path, cfg.HiddenCalls, log)
	if err != nil {
		return res, fmt.Errorf("hidden against missing: %w", err)
	}
	res.Hidden = hidden
	return res, nil
}

// setGroup sets the object's strata-groups tag.
func setGroup(ctx context.Context, s3 *minio.Client, bucketName, key, group string) error {
	t, err := tags.NewTags(map[string]string{"strata-groups": group}, true)
	if err != nil {
		return err
	}
	if err := s3.PutObjectTagging(ctx, bucketName, key, t, minio.PutObjectTaggingOptions{}); err != nil {
		return fmt.Errorf("tag %s %s: %w", key, group, err)
	}
	return nil
}

// flipTags uploads one document of size bytes readable by hr and flips its
// tag between finance and hr cfg.AccessSamples times.
func flipTags(ctx context.Context, cfg Config, s3 *minio.Client, bucketName string, relabels jetstream.KeyValue, clients map[string]*bench, size int, res *accessResult, log io.Writer) error {
	token := fmt.Sprintf("access%016x", rand.Uint64())
	body := document(token, size)
	key := fmt.Sprintf("acme/access/flip-%d.md", size)
	if _, err := s3.PutObject(ctx, bucketName, key, strings.NewReader(body), int64(len(body)),
		minio.PutObjectOptions{ContentType: "text/markdown", UserTags: map[string]string{"strata-groups": "hr"}}); err != nil {
		return fmt.Errorf("upload: %w", err)
	}
	if err := waitReaders(ctx, clients, token, "hr", cfg.Timeout); err != nil {
		return fmt.Errorf("first version of %d bytes: %w", size, err)
	}
	relabelKey := pipeline.RelabelKey("acme", ids.File("acme", "", strings.TrimPrefix(key, "acme/")))
	group := "hr"
	for i := range cfg.AccessSamples {
		group = map[string]string{"hr": "finance", "finance": "hr"}[group]
		announced := watchAnnouncement(ctx, relabels, relabelKey)
		if err := setGroup(ctx, s3, bucketName, key, group); err != nil {
			return err
		}
		tagged := time.Now()
		if err := waitReaders(ctx, clients, token, group, cfg.Timeout); err != nil {
			res.Failed[size]++
			fmt.Fprintf(log, "%d B: access change %d to %s: %v\n", size, i, group, err)
			continue
		}
		readers := time.Since(tagged)
		if err := waitWithdrawn(ctx, relabels, relabelKey, cfg.Timeout); err != nil {
			res.Failed[size]++
			fmt.Fprintf(log, "%d B: access change %d to %s: %v\n", size, i, group, err)
			continue
		}
		res.Samples[size] = append(res.Samples[size], readers)
		res.Rewritten[size] = append(res.Rewritten[size], time.Since(tagged))
		at := announced()
		if !at.IsZero() {
			res.Announced[size] = append(res.Announced[size], at.Sub(tagged))
		}
		fmt.Fprintf(log, "%d B: access change %d to %s: announced %v, readers %v, objects %v\n", size, i, group, at.Sub(tagged), readers, time.Since(tagged))
	}
	return nil
}

// watchAnnouncement watches key from now on; the returned func gives when
// its first announcement arrived (zero: none), and stops the watch.
func watchAnnouncement(ctx context.Context, relabels jetstream.KeyValue, key string) func() time.Time {
	ctx, cancel := context.WithCancel(ctx)
	w, err := relabels.Watch(ctx, key, jetstream.UpdatesOnly())
	if err != nil {
		cancel()
		return func() time.Time { return time.Time{} }
	}
	first := make(chan time.Time, 1)
	go func() {
		defer close(first)
		for e := range w.Updates() {
			if e != nil && e.Operation() == jetstream.KeyValuePut {
				first <- time.Now()
				return
			}
		}
	}()
	return func() time.Time {
		defer cancel()
		select {
		case t := <-first:
			return t
		case <-time.After(100 * time.Millisecond):
			return time.Time{}
		}
	}
}

// waitWithdrawn polls the relabels bucket every 10 ms until it holds no
// announcement under key: the indexer is done with the file's change.
func waitWithdrawn(ctx context.Context, relabels jetstream.KeyValue, key string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		_, err := relabels.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return nil
		}
		if err != nil && ctx.Err() == nil {
			return fmt.Errorf("read %s: %w", key, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the change of %s not done within %v", key, timeout)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// waitReaders polls both keys' keyword search every 10 ms until exactly
// reader finds token.
func waitReaders(ctx context.Context, clients map[string]*bench, token, reader string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		agree := true
		for group, b := range clients {
			out, err := b.call(ctx, "search_keyword", map[string]any{"query": token, "top_k": 1})
			if err != nil {
				if ctx.Err() != nil {
					return fmt.Errorf("readers not %s within %v", reader, timeout)
				}
				return err
			}
			if found := len(list(out, "results")) > 0; found != (group == reader) {
				agree = false
			}
		}
		if agree {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("readers not %s within %v", reader, timeout)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// renderAccess is the Markdown report of the tag changes.
func renderAccess(cfg Config, r accessResult, took time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# How soon a tag change applies\n\n")
	fmt.Fprintf(&b, "Command: `go run ./deploy/measure/strata-freshness -access-samples %d -hidden-calls %d -sizes %s -out %s` (%s, took %s).\n\n",
		cfg.AccessSamples, cfg.HiddenCalls, sizeList(cfg.Sizes), relOut(cfg), time.Now().UTC().Format("2006-01-02"), took.Round(time.Second))
	fmt.Fprintf(&b, "One document's `strata-groups` tag flips between `hr` and `finance` (`PutObjectTagging`); a sample is the time from the\n"+
		"tagging call's return until the `hr` key's and the `finance` key's `search_keyword` both answer as the new tag says\n"+
		"(polled every 10 ms). Nothing is re-extracted or re-embedded: the tagging event becomes an access change the indexer\n"+
		"applies to every object of the document and commits. The indexer announces the change before it starts\n"+
		"(`strata_relabels`), and queryd reads the document with the announced readers until the indexer, done, withdraws it:\n"+
		"\"announced\" is the time until the announcement is in the bucket, \"all objects\" until it is withdrawn.\n"+
		"Each flip waits for the previous one to be done. Weaviate flushes memtables 2 s after their first write\n"+
		"(`PERSISTENCE_MEMTABLES_FLUSH_DIRTY_AFTER_SECONDS`, as the stack sets it; why: docs/decisions.md).\n\n")
	fmt.Fprintf(&b, "| document | samples | failed | announced p50 | readers follow p50 | p90 | max | all objects rewritten p50 | p90 |\n|---|---|---|---|---|---|---|---|---|\n")
	for _, size := range r.Sizes {
		s, all, ann := slices.Clone(r.Samples[size]), slices.Clone(r.Rewritten[size]), slices.Clone(r.Announced[size])
		slices.Sort(s)
		slices.Sort(all)
		slices.Sort(ann)
		q := func(s []time.Duration, p float64) string {
			if len(s) == 0 {
				return "-"
			}
			return fmt.Sprintf("%d ms", s[min(len(s)-1, int(p*float64(len(s))))].Milliseconds())
		}
		fmt.Fprintf(&b, "| %s | %d | %d | %s | %s | %s | %s | %s | %s |\n", sizeList([]int{size}), len(s), r.Failed[size],
			q(ann, 0.5), q(s, 0.5), q(s, 0.9), q(s, 1), q(all, 0.5), q(all, 0.9))
	}
	b.WriteString(renderHidden(r.Hidden, cfg.HiddenCalls))
	return b.String()
}

// sizeList writes sizes as -sizes takes them.
func sizeList(sizes []int) string {
	var out []string
	for _, n := range sizes {
		switch {
		case n%1_000_000 == 0:
			out = append(out, fmt.Sprintf("%dMB", n/1_000_000))
		case n%1_000 == 0:
			out = append(out, fmt.Sprintf("%dKB", n/1_000))
		default:
			out = append(out, fmt.Sprint(n))
		}
	}
	return strings.Join(out, ",")
}

func relOut(cfg Config) string {
	if rel, ok := strings.CutPrefix(cfg.Out, cfg.Root+string(os.PathSeparator)); ok {
		return rel
	}
	return cfg.Out
}
