package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/deploy/localstack"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/testservers"
)

// natsShell runs the documented `nats` commands as a user would after
// `go tool task up`: through sh, with the pinned CLI's cache folder on the
// PATH and the context strata-local selected (in a temporary config folder,
// so the user's contexts are never touched), without --server or NATS_URL.
type natsShell struct {
	t   *testing.T
	env []string
}

func newNATSShell(t *testing.T, st *localstack.Stack) *natsShell {
	t.Helper()
	for _, tool := range []string{"sh", "jq", "base64", "sed", "sha256sum", "cut"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not on PATH: the documented nats commands use it (Debian/Ubuntu: apt-get install jq coreutils sed)", tool)
		}
	}
	cache, err := testservers.CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	cli, err := testservers.InstallNATSCLI(context.Background(), cache, logWriter{t})
	if err != nil {
		t.Fatalf("the pinned nats CLI is needed (go install %s@%s from the module proxy): %v", testservers.NATSCLI.Package, testservers.NATSCLI.Version, err)
	}
	config := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", config) // the contexts live here, not in the user's ~/.config/nats
	if err := localstack.SelectNATSContext(context.Background(), cli, st.Env.NATSURL, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); name != "PATH" && name != "NATS_URL" && name != "NATS_CONTEXT" {
			env = append(env, kv)
		}
	}
	env = append(env, "PATH="+cache+string(os.PathListSeparator)+os.Getenv("PATH"))
	return &natsShell{t: t, env: env}
}

// readme runs lines copied verbatim from the documentation (README.md,
// docs/operations.md, docs/versions.md) as one sh script, with the shell
// variables the pages leave to the reader (e.g. seq=3), and returns what
// they printed. TestEveryREADMENATSCommandIsRun checks that every documented
// command is among the scripts of this file.
func (n *natsShell) readme(script string, vars ...string) string {
	n.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-ec", script)
	cmd.Env = append(slices.Clone(n.env), vars...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		n.t.Fatalf("%s\n(%v): %v\n%s", script, vars, err, out)
	}
	return string(out)
}

// lastJSON is the last line of out that is a JSON object (a reply's body).
func lastJSON(t *testing.T, out string) map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		var m map[string]any
		if json.Unmarshal([]byte(strings.TrimSpace(lines[i])), &m) == nil {
			return m
		}
	}
	t.Fatalf("no JSON in:\n%s", out)
	return nil
}

// consumerRow is one consumer's row of `nats consumer report`, by column title.
func consumerRow(t *testing.T, report, consumer string) map[string]string {
	t.Helper()
	var titles []string
	for _, line := range strings.Split(report, "\n") {
		cells := strings.Split(line, "│")
		if len(cells) < 3 {
			continue
		}
		cells = cells[1 : len(cells)-1]
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if cells[0] == "Consumer" {
			titles = cells
			continue
		}
		if titles != nil && cells[0] == consumer {
			row := map[string]string{}
			for i, title := range titles {
				row[title], _, _ = strings.Cut(cells[i], " ") // "1 / 8%": the count, not the share
			}
			return row
		}
	}
	t.Fatalf("no row for consumer %s in:\n%s", consumer, report)
	return nil
}

// deadLetter is one message of the documented dead-letter listing.
type deadLetter struct {
	seq     string
	headers map[string]string
}

var listedSeq = regexp.MustCompile(`Received JetStream message: stream: DEADLETTER seq: (\d+)`)

func parseDeadLetters(listing string) []deadLetter {
	var out []deadLetter
	for _, line := range strings.Split(listing, "\n") {
		if m := listedSeq.FindStringSubmatch(line); m != nil {
			out = append(out, deadLetter{seq: m[1], headers: map[string]string{}})
			continue
		}
		if k, v, ok := strings.Cut(line, ": "); ok && len(out) > 0 && strings.HasPrefix(k, "Strata-") {
			out[len(out)-1].headers[k] = v
		}
	}
	return out
}

// reemitted lists the object keys of the events the ingestor re-emitted
// after stream sequence from (its reindex events' ids are "reindex-<key>-<sequencer>").
func (h *harness) reemitted(from uint64) []string {
	h.t.Helper()
	ctx := context.Background()
	st, err := h.js.Stream(ctx, pipeline.ObjectsStream)
	if err != nil {
		h.t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	var keys []string
	for seq := from + 1; seq <= info.State.LastSeq; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil {
			h.t.Fatal(err)
		}
		if id, ok := strings.CutPrefix(m.Header.Get("Nats-Msg-Id"), "reindex-"); ok {
			keys = append(keys, id[:strings.LastIndex(id, "-")])
		}
	}
	slices.Sort(keys)
	return keys
}

func (h *harness) lastObjectsSeq() uint64 {
	h.t.Helper()
	st, err := h.js.Stream(context.Background(), pipeline.ObjectsStream)
	if err != nil {
		h.t.Fatal(err)
	}
	info, err := st.Info(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	return info.State.LastSeq
}

// TestREADMENATSCommands runs every `nats` command of the README and of the
// pages it links (docs/operations.md, docs/versions.md) with the
// pinned CLI against the real stack, in the order an operator would meet
// them, and checks what each did.
func TestREADMENATSCommands(t *testing.T) {
	h := startWith(t, map[string][]string{"indexer": {"STRATA_RETRY_DELAYS=50ms"}})
	sh := newNATSShell(t, h.stack)
	ctx := context.Background()
	h.put("acme/docs/guide.md", guideV1)
	h.put("acme/notes.md", "# Notes\n\nnatsclinotes\n")
	h.put("acme@preview-42/docs/b.md", "# B\n\nbranch doc\n")
	h.put("acme@preview-42/other.md", "# Other\n\nbranch other\n")
	h.put("bad project/x.md", "dead-lettered: the key is outside the convention")
	h.settle()

	// Object state from strata_objects.
	state := lastJSON(t, sh.readme(`nats kv get --raw strata_objects "acme.$(printf %s acme/docs/guide.md | sha256sum | cut -c1-32)"`))
	if state["key"] != "acme/docs/guide.md" || (state["state"] != pipeline.StateIndexed && state["state"] != pipeline.StateEmbedded) || state["sequence"].(float64) < 1 {
		t.Fatalf("object state: %v", state)
	}

	// Releases: create, on a branch, list, and a version is never reused.
	created := lastJSON(t, sh.readme(`nats req strata.release.create '{"project":"acme","version":"v1.2.0"}'`))
	rel, _ := created["release"].(map[string]any)
	if rel == nil || rel["version"] != "v1.2.0" || rel["sequence"].(float64) != h.watermark("acme") {
		t.Fatalf("release create: %v (watermark %v)", created, h.watermark("acme"))
	}
	branch := lastJSON(t, sh.readme(`nats req strata.release.create '{"project":"acme","branch":"preview-42","version":"b1"}'`))
	if b, _ := branch["release"].(map[string]any); b == nil || b["version"] != "b1" {
		t.Fatalf("branch release: %v", branch)
	}
	listed := sh.readme(`nats req strata.release.list '{"project":"acme"}'`)
	if !strings.Contains(listed, `"version":"v1.2.0"`) || !strings.Contains(listed, rel["release_id"].(string)) {
		t.Fatalf("release list: %s", listed)
	}
	again := lastJSON(t, sh.readme(`nats req strata.release.create '{"project":"acme","version":"v1.2.0"}'`))
	if msg, _ := again["error"].(string); !strings.Contains(msg, "already exists") || again["release"] != nil {
		t.Fatalf("a version string was reused: %v", again)
	}

	// Reindex: unchanged files are skipped.
	before, from := h.watermark("acme"), h.lastObjectsSeq()
	sh.readme(`nats pub strata.reindex.acme '{}'`)
	h.events++
	var request uint64
	waitUntil(t, "the reindex request stored in OBJECTS", 60*time.Second, func() (bool, string) {
		request = h.lastObjectsSeq()
		return request > from, fmt.Sprintf("last sequence %d, %d before the request", request, from)
	})
	h.awaitIngested(request) // the request handled: anything it re-emitted is processed too
	if got := h.reemitted(from); len(got) != 0 || h.watermark("acme") != before {
		t.Fatalf("an unforced reindex of unchanged files re-emitted %v; watermark %v -> %v", got, before, h.watermark("acme"))
	}
	// A forced reindex of a prefix on a branch re-emits exactly its files.
	branchState := func() float64 {
		e, err := mustKV(t, h, pipeline.ObjectStateKey("acme", "acme@preview-42/docs/b.md"))
		if err != nil {
			t.Fatal(err)
		}
		var st pipeline.ObjectState
		_ = json.Unmarshal(e, &st)
		return float64(st.Sequence)
	}
	branchBefore, from := branchState(), h.lastObjectsSeq()
	sh.readme(`nats pub strata.reindex.acme '{"prefix":"docs/","branch":"preview-42","force":true}'`)
	h.events += 1 + 1
	h.settle()
	if got := h.reemitted(from); !slices.Equal(got, []string{"acme@preview-42/docs/b.md"}) {
		t.Fatalf("forced reindex of preview-42 docs/ re-emitted %v", got)
	}
	if got := branchState(); got <= branchBefore {
		t.Fatalf("the re-emitted branch file was not committed again: sequence %v -> %v", branchBefore, got)
	}
	// The documented model-change advice: a forced reindex of the whole project (main).
	before, from = h.watermark("acme"), h.lastObjectsSeq()
	sh.readme(`nats pub strata.reindex.acme '{"force":true}'`)
	h.events += 1 + 2
	h.settle()
	// Both commit again, at one or two sequences (group commit).
	if got, wm := h.reemitted(from), h.watermark("acme"); !slices.Equal(got, []string{"acme/docs/guide.md", "acme/notes.md"}) ||
		wm <= before || wm > before+2 || h.committedAt("acme/docs/guide.md") <= before || h.committedAt("acme/notes.md") <= before {
		t.Fatalf("forced reindex of acme re-emitted %v; watermark %v -> %v", got, before, wm)
	}

	// Lag per stage: with the ingestor stopped an upload waits unprocessed.
	if err := h.stack.Services["ingestor"].Stop(15 * time.Second); err != nil {
		t.Fatal(err)
	}
	h.put("acme/lag.md", "# Lag\n\nwaits for the ingestor\n")
	waitUntil(t, "the upload's event to reach OBJECTS", 60*time.Second, func() (bool, string) {
		last := h.lastObjectsSeq()
		return last >= from+4, fmt.Sprintf("last sequence %d, want %d", last, from+4)
	})
	if row := consumerRow(t, sh.readme(`nats consumer report OBJECTS`), pipeline.IngestorConsumer); row["Unprocessed"] != "1" {
		t.Fatalf("lag of the stopped ingestor: %v", row)
	}
	if err := h.stack.StartService(ctx, "ingestor"); err != nil {
		t.Fatal(err)
	}
	h.settle()
	if row := consumerRow(t, sh.readme(`nats consumer report OBJECTS`), pipeline.IngestorConsumer); row["Unprocessed"] != "0" || row["Ack Pending"] != "0" {
		t.Fatalf("ingestor lag after it caught up: %v", row)
	}
	chunks := sh.readme(`nats consumer report CHUNKS`)
	for _, c := range []string{pipeline.IndexerChunksConsumer, pipeline.EmbedderConsumer} {
		if row := consumerRow(t, chunks, c); row["Unprocessed"] != "0" || row["Ack Pending"] != "0" {
			t.Fatalf("%s lag after settling: %v", c, row)
		}
	}

	redriveAfterFix(t, h, sh)
	replayFromFirstEvent(t, h, sh)
}

// redriveAfterFix: with weaviate-server down the indexer dead-letters a
// file; the documented listing (no terminal) shows it with its sequence, and
// once weaviate-server is back, the documented re-drive indexes the file.
func redriveAfterFix(t *testing.T, h *harness, sh *natsShell) {
	t.Helper()
	if err := h.stack.Servers.Weaviate.Stop(15 * time.Second); err != nil {
		t.Fatal(err)
	}
	h.put("acme/later.md", "# Later\n\nredriven after the fix\n")
	var failed deadLetter
	for deadline := time.Now().Add(90 * time.Second); failed.seq == ""; time.Sleep(time.Second) {
		letters := parseDeadLetters(sh.readme(`nats sub --stream DEADLETTER --all --terminate-at-end --wait 2s --headers-only`))
		for _, d := range letters {
			if d.headers["Strata-Stage"] == "indexer" && d.headers["Strata-Original-Stream"] == pipeline.ChunksStream {
				failed = d
			}
		}
		if failed.seq != "" && !slices.ContainsFunc(letters, func(d deadLetter) bool { return d.headers["Strata-Stage"] == "ingestor" }) {
			t.Fatalf("the listing misses the ingestor's dead letter (bad project key): %v", letters)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no indexer dead letter listed while weaviate-server was down: %v", letters)
		}
	}
	if failed.headers["Strata-Error"] == "" || failed.headers["Strata-Kind"] != pipeline.KindFileVersion {
		t.Fatalf("dead letter headers as listed: %v", failed.headers)
	}
	one := sh.readme(`nats stream get DEADLETTER "$seq"`, "seq="+failed.seq)
	if !strings.Contains(one, "Strata-Stage: indexer") || !strings.Contains(one, "acme/later.md") {
		t.Fatalf("dead letter %s:\n%s", failed.seq, one)
	}
	if err := h.stack.Servers.Restart(context.Background(), testservers.Weaviate.Name); err != nil { // the fix
		t.Fatal(err)
	}
	h.awaitIndexerWrites()
	sh.readme(`subject=$(nats stream get DEADLETTER "$seq" | sed -n 's/^  Strata-Original-Subject: //p')
kind=$(nats stream get DEADLETTER "$seq" | sed -n 's/^  Strata-Kind: //p')
nats stream get DEADLETTER "$seq" --json | jq -r .data | base64 -d | nats pub -J --no-templates "$subject" ${kind:+-H "Strata-Kind:$kind"}`,
		"seq="+failed.seq)
	h.waitFor("the re-driven file indexed", "list_file_chunks", map[string]any{"project_reference": "acme", "file_path": "later.md"},
		func(out map[string]any, _ string) bool {
			return strings.Contains(contents(out), "redriven after the fix")
		})
}

// awaitIndexerWrites checks the fix as an operator would before re-driving:
// it uploads a canary until the indexer indexes one. The indexer's gRPC
// connection to Weaviate reconnects with a backoff, so the first uploads
// after a restart may still fail (and be dead-lettered).
func (h *harness) awaitIndexerWrites() {
	h.t.Helper()
	for attempt, deadline := 0, time.Now().Add(2*time.Minute); ; attempt++ {
		canary := fmt.Sprintf("canary %d", attempt)
		h.put("acme/canary.md", "# Canary\n\n"+canary+"\n")
		for wait := time.Now().Add(5 * time.Second); time.Now().Before(wait); time.Sleep(250 * time.Millisecond) {
			if out, errText := h.call("list_file_chunks", map[string]any{"project_reference": "acme", "file_path": "canary.md"}); errText == "" && strings.Contains(contents(out), canary) {
				return
			}
		}
		if time.Now().After(deadline) {
			h.t.Fatal("the indexer did not write to Weaviate again within 2 minutes of its restart")
		}
	}
}

// replayFromFirstEvent: after the documented `consumer rm` and an ingestor
// restart, the new consumer delivers every stored bucket event from the
// first, and the replay changes nothing a reader sees (a deleted file stays
// deleted).
func replayFromFirstEvent(t *testing.T, h *harness, sh *natsShell) {
	t.Helper()
	ctx := context.Background()
	h.remove("acme/notes.md")
	h.settle()
	notes := map[string]any{"project_reference": "acme", "file_path": "notes.md"}
	h.waitFor("notes.md deleted", "list_file_chunks", notes, func(_ map[string]any, errText string) bool { return errText != "" })
	stored := h.lastObjectsSeq()
	sh.readme(`nats consumer rm -f OBJECTS ingestor    # then restart the ingestor (locally: go tool task down; go tool task up): it starts over from the first event`)
	if _, err := h.js.Consumer(ctx, pipeline.ObjectsStream, pipeline.IngestorConsumer); err == nil {
		t.Fatal("consumer rm left the ingestor's consumer in place")
	}
	if err := h.stack.Services["ingestor"].Stop(15 * time.Second); err != nil {
		t.Fatal(err)
	}
	if err := h.stack.StartService(ctx, "ingestor"); err != nil {
		t.Fatal(err)
	}
	h.settle()
	c, err := h.js.Consumer(ctx, pipeline.ObjectsStream, pipeline.IngestorConsumer)
	if err != nil {
		t.Fatal(err)
	}
	ci, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ci.Delivered.Consumer < stored || ci.Config.DeliverPolicy != jetstream.DeliverAllPolicy {
		t.Fatalf("the new consumer did not replay from the first event: delivered %d of %d stored, policy %v", ci.Delivered.Consumer, stored, ci.Config.DeliverPolicy)
	}
	if _, errText := h.call("list_file_chunks", notes); errText == "" {
		t.Fatal("the replay resurrected a deleted file")
	}
	if sr, _ := h.call("search_keyword", map[string]any{"query": "natsclinotes"}); len(results(sr)) != 0 {
		t.Fatalf("search finds the deleted file after the replay: %v", sr)
	}
	if out, errText := h.call("list_file_chunks", map[string]any{"project_reference": "acme", "file_path": "docs/guide.md"}); errText != "" || len(chunksOf(out)) != 3 {
		t.Fatalf("guide after the replay: %v %s", out, errText)
	}
}

func mustKV(t *testing.T, h *harness, key string) ([]byte, error) {
	t.Helper()
	kv, err := h.js.KeyValue(context.Background(), pipeline.ObjectStateBucket)
	if err != nil {
		return nil, err
	}
	e, err := kv.Get(context.Background(), key)
	if err != nil {
		return nil, err
	}
	return e.Value(), nil
}

// readmeNATSLine finds a `nats` command in a line of shell: at its start,
// after a pipe or in a command substitution.
var readmeNATSLine = regexp.MustCompile(`(^|[|;(]\s*)nats\s`)

// inlineNATS finds `nats ...` code spans in the documentation's prose.
var inlineNATS = regexp.MustCompile("`(nats [^`]+)`")

// natsCommands returns the `nats` command lines of one Markdown page: in
// code blocks, and code spans in the prose with <project> read as acme.
func natsCommands(page string) []string {
	var commands []string
	inBlock := false
	for _, line := range strings.Split(page, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			inBlock = !inBlock
			continue
		}
		if inBlock {
			if !strings.HasPrefix(trimmed, "#") && readmeNATSLine.MatchString(trimmed) {
				commands = append(commands, trimmed)
			}
			continue
		}
		for _, m := range inlineNATS.FindAllStringSubmatch(line, -1) {
			if strings.Contains(m[1], "'") { // a command with arguments, not a name like `nats pub`
				commands = append(commands, strings.ReplaceAll(m[1], "<project>", "acme"))
			}
		}
	}
	return commands
}

// TestEveryREADMENATSCommandIsRun: every `nats` command line of README.md
// and of the pages under docs/ (docs/operations.md holds the operators'
// commands, docs/versions.md the releases') appears verbatim among the
// scripts TestREADMENATSCommands runs, and README.md links every page that
// has such commands, so a reader finds each of them from the README.
func TestEveryREADMENATSCommandIsRun(t *testing.T) {
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	source, err := os.ReadFile("natscli_test.go")
	if err != nil {
		t.Fatal(err)
	}
	commands := natsCommands(string(readme))
	perPage := map[string]int{}
	for _, page := range pages {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		found := natsCommands(string(text))
		if len(found) == 0 {
			continue
		}
		name := "docs/" + filepath.Base(page)
		perPage[name] = len(found)
		if !strings.Contains(string(readme), "]("+name) {
			t.Errorf("%s has %d nats commands, but README.md does not link it", name, len(found))
		}
		commands = append(commands, found...)
	}
	if perPage["docs/operations.md"] < 10 {
		t.Errorf("docs/operations.md has %d nats commands; the operators' commands (reindex, lag, dead letters, replay) belong there", perPage["docs/operations.md"])
	}
	if len(commands) < 15 {
		t.Fatalf("found only %d nats commands in README.md and docs/*.md; the parser is broken: %q", len(commands), commands)
	}
	for _, c := range commands {
		if !strings.Contains(string(source), c) {
			t.Errorf("documented command not run by TestREADMENATSCommands: %s", c)
		}
		if strings.Contains(c, "--server") || strings.Contains(c, "stream view") {
			t.Errorf("documented command needs a server flag or a terminal: %s", c)
		}
	}
}
