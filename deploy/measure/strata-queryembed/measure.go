package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/nats-io/nats.go"

	"github.com/strata-kb/strata/deploy/localstack"
	"github.com/strata-kb/strata/deploy/mcpclient"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/testservers"
)

// Local-stack credentials for the queryd this command starts (no secrets).
const (
	apiKey       = "strata-queryembed-bench-key"
	cursorSecret = "strata-queryembed-cursor-secret"
)

func measure(ctx context.Context, c config) error {
	started := time.Now()
	root, err := localstack.WorkspaceRoot()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "strata-queryembed-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cache, err := testservers.CacheDir()
	if err != nil {
		return err
	}
	bins, err := testservers.InstallAll(ctx, cache, os.Stderr)
	if err != nil {
		return err
	}
	ports, err := testservers.FreeStackPorts()
	if err != nil {
		return err
	}
	st, err := testservers.StartStack(ctx, testservers.StackOptions{Bins: bins, DataDir: dir, Ports: ports, Progress: os.Stderr})
	if err != nil {
		return err
	}
	defer st.Stop(10 * time.Second)
	wv, err := schema.NewClient(st.WeaviateHost, st.WeaviateGRPCHost, testservers.LocalWeaviateWriter)
	if err != nil {
		return err
	}
	if err := schema.Ensure(ctx, wv); err != nil {
		return fmt.Errorf("create the collections: %w", err)
	}

	lat, err := measureLatency(ctx, c, st.NATSURL)
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "building queryd")
	bin := filepath.Join(dir, "queryd")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./queryd/cmd/queryd")
	build.Dir, build.Env, build.Stdout, build.Stderr = root, localstack.WithGoExperiment(os.Environ()), os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("build queryd: %w", err)
	}
	var mem []memRow
	for _, provider := range []string{"none", "local"} {
		row, err := querydMemory(ctx, c, st, bin, dir, provider)
		if err != nil {
			return err
		}
		mem = append(mem, row)
	}
	report := render(c, lat, mem, time.Since(started))
	fmt.Print(report)
	if c.Out != "" {
		if err := os.WriteFile(c.Out, []byte(report), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", c.Out, err)
		}
	}
	return nil
}

// latency is what one side took per query, over every round.
type latency struct {
	library, requestReply []time.Duration
	responderRSS          int64 // kB, after the rounds
	responderHWM          int64
}

// measureLatency embeds the same queries in this process and through the
// responder, alternating which side goes first each round.
func measureLatency(ctx context.Context, c config, natsURL string) (latency, error) {
	var l latency
	p, err := newProvider(c.ModelDir)
	if err != nil {
		return l, err
	}
	self, err := os.Executable()
	if err != nil {
		return l, err
	}
	resp := exec.CommandContext(ctx, self, "-responder", "-nats-url", natsURL, "-embedding-model-dir", c.ModelDir)
	stdin, err := resp.StdinPipe()
	if err != nil {
		return l, err
	}
	stdout, err := resp.StdoutPipe()
	if err != nil {
		return l, err
	}
	resp.Stderr = os.Stderr
	if err := resp.Start(); err != nil {
		return l, fmt.Errorf("start the responder: %w", err)
	}
	defer func() { stdin.Close(); _ = resp.Wait() }()
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || strings.TrimSpace(line) != "ready" {
		return l, fmt.Errorf("responder did not start: %q %v", line, err)
	}
	nc, err := nats.Connect(natsURL, nats.Name("strata-queryembed"))
	if err != nil {
		return l, err
	}
	defer nc.Close()

	qs := queries(c.Queries, c.Seed)
	library := func(q string) error {
		ctx, cancel := timeout(ctx)
		defer cancel()
		_, err := p.Embed(ctx, []string{q})
		return err
	}
	requestReply := func(q string) error {
		ctx, cancel := timeout(ctx)
		defer cancel()
		v, err := remote(ctx, nc, q)
		if err == nil && len(v) != p.Dimensions() {
			err = fmt.Errorf("vector of %d dimensions, want %d", len(v), p.Dimensions())
		}
		return err
	}
	// Warm-up: both sides once over every query.
	for _, q := range qs {
		if err := library(q); err != nil {
			return l, err
		}
		if err := requestReply(q); err != nil {
			return l, err
		}
	}
	side := func(f func(string) error, into *[]time.Duration) error {
		for _, q := range qs {
			t := time.Now()
			if err := f(q); err != nil {
				return err
			}
			*into = append(*into, time.Since(t))
		}
		return nil
	}
	for round := range c.Rounds {
		fmt.Fprintf(os.Stderr, "latency round %d of %d\n", round+1, c.Rounds)
		first, second := func() error { return side(library, &l.library) }, func() error { return side(requestReply, &l.requestReply) }
		if round%2 == 1 {
			first, second = second, first
		}
		if err := first(); err != nil {
			return l, err
		}
		if err := second(); err != nil {
			return l, err
		}
	}
	l.responderRSS, l.responderHWM, err = memoryOf(resp.Process.Pid)
	return l, err
}

// memRow is one queryd's resident memory after the same calls.
type memRow struct {
	provider        string
	rss, hwm        int64 // kB
	calls, failures int
}

// querydMemory starts queryd with the provider, makes c.Calls
// hybrid_search calls and reads its resident memory.
func querydMemory(ctx context.Context, c config, st *testservers.Stack, bin, dir, provider string) (memRow, error) {
	row := memRow{provider: provider}
	port, err := testservers.FreePorts(1)
	if err != nil {
		return row, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port[0])
	p, err := testservers.Start(testservers.Spec{Name: "queryd-" + provider, Path: bin, LogFile: filepath.Join(dir, "queryd-"+provider+".log"),
		Args: []string{"-addr", addr, "-weaviate-host", st.WeaviateHost, "-weaviate-grpc", st.WeaviateGRPCHost,
			"-weaviate-api-key", testservers.LocalWeaviateReader, "-api-keys", apiKey + "=*|*", "-cursor-secret", cursorSecret,
			"-embedding-provider", provider, "-embedding-model-dir", c.ModelDir, "-tool-budget", "0", "-tool-budget-warn", "0"}})
	if err != nil {
		return row, fmt.Errorf("start queryd (%s): %w", provider, err)
	}
	defer p.Stop(10 * time.Second)
	ready, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := p.WaitReady(ready, testservers.HTTPReady("http://"+addr+"/readyz")); err != nil {
		return row, fmt.Errorf("queryd (%s) not ready: %w", provider, err)
	}
	client, err := mcpclient.Connect(ctx, "http://"+addr+"/mcp", apiKey, "strata-queryembed")
	if err != nil {
		return row, fmt.Errorf("connect to queryd (%s): %w", provider, err)
	}
	defer client.Close()
	for _, q := range queries(c.Calls, c.Seed+1) {
		req := mcp.CallToolRequest{}
		req.Params.Name = "hybrid_search" // served with and without a model (keyword only)
		req.Params.Arguments = map[string]any{"query": q}
		res, err := client.CallTool(ctx, req)
		row.calls++
		if err != nil || res.IsError {
			row.failures++
			if row.failures == 1 {
				fmt.Fprintf(os.Stderr, "queryd (%s) hybrid_search: %v %s\n", provider, err, resultText(res))
			}
		}
	}
	runtime.GC()
	row.rss, row.hwm, err = memoryOf(p.Pid())
	return row, err
}

func resultText(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	return mcpclient.Text(res)
}

// memoryOf reads a process's resident set and its peak, in kB.
func memoryOf(pid int) (rss, hwm int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("read the memory of process %d: %w", pid, err)
	}
	defer f.Close()
	b, _ := io.ReadAll(f)
	for _, line := range strings.Split(string(b), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		n, _ := strconv.ParseInt(fields[1], 10, 64)
		switch fields[0] {
		case "VmRSS:":
			rss = n
		case "VmHWM:":
			hwm = n
		}
	}
	return rss, hwm, nil
}

func pct(ds []time.Duration, p float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s))*p+0.999999) - 1
	return s[max(0, min(i, len(s)-1))]
}

func ms(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 3, 64) }

func mib(kb int64) string { return strconv.FormatFloat(float64(kb)/1024, 'f', 1, 64) }

func render(c config, l latency, mem []memRow, took time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Query vectors: in queryd against over NATS, side by side\n\n")
	fmt.Fprintf(&b, "Written by `go run ./deploy/measure/strata-queryembed -queries %d -rounds %d -calls %d -out docs/bench/query-embedding.md` on %s (took %s).\n",
		c.Queries, c.Rounds, c.Calls, time.Now().UTC().Format("2006-01-02 15:04 UTC"), took.Round(time.Second))
	fmt.Fprintf(&b, "Machine: %d CPUs, %s; nats-server, weaviate-server and this command share it. Model: USE-Lite 512-d (embedder/engine/uselite), the default.\n\n", runtime.NumCPU(), runtime.Version())
	fmt.Fprintf(&b, "## Latency of one query's vector\n\n")
	fmt.Fprintf(&b, "The same %d queries (4-9 words) per side per round, %d rounds alternating which side goes first, after a warm-up of both. "+
		"Library: `Provider.Embed` in this process, as queryd does. Request-reply: a NATS request to a second process holding the same model "+
		"(this command re-run with -responder), the reply the vector as raw float32s. Milliseconds, nearest-rank percentiles.\n\n", c.Queries, c.Rounds)
	fmt.Fprintf(&b, "| way | calls | p50 | p95 | p99 |\n|---|---:|---:|---:|---:|\n")
	for _, r := range []struct {
		name string
		ds   []time.Duration
	}{{"library (queryd imports embedder/engine)", l.library}, {"request-reply over NATS", l.requestReply}} {
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s |\n", r.name, len(r.ds), ms(pct(r.ds, .5)), ms(pct(r.ds, .95)), ms(pct(r.ds, .99)))
	}
	fmt.Fprintf(&b, "\nRequest-reply / library p50: %.2fx (+%s ms).\n\n",
		float64(pct(l.requestReply, .5))/float64(pct(l.library, .5)), ms(pct(l.requestReply, .5)-pct(l.library, .5)))
	fmt.Fprintf(&b, "## Resident memory\n\n")
	fmt.Fprintf(&b, "A real queryd (built from this checkout) started against the same servers, once per provider, after %d hybrid_search calls on an empty index "+
		"(each embeds its query when there is a model); VmRSS and its peak VmHWM from /proc. The responder is the process that would hold the model "+
		"instead of queryd.\n\n", c.Calls)
	fmt.Fprintf(&b, "| process | RSS MiB | peak MiB | calls | tool errors |\n|---|---:|---:|---:|---:|\n")
	for _, m := range mem {
		fmt.Fprintf(&b, "| queryd, -embedding-provider %s | %s | %s | %d | %d |\n", m.provider, mib(m.rss), mib(m.hwm), m.calls, m.failures)
	}
	fmt.Fprintf(&b, "| responder holding the model (after the latency rounds) | %s | %s | - | - |\n", mib(l.responderRSS), mib(l.responderHWM))
	if len(mem) == 2 {
		fmt.Fprintf(&b, "\nThe model costs queryd %s MiB resident (local minus none).\n", mib(mem[1].rss-mem[0].rss))
	}
	return b.String()
}
