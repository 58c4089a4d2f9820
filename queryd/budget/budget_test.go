package budget

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/nats-io/nats.go"

	"github.com/strata-kb/strata/queryd/auth"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/testservers/serverstest"
)

type session struct{ id string }

func (s session) Initialize()                                         {}
func (s session) Initialized() bool                                   { return true }
func (s session) NotificationChannel() chan<- mcp.JSONRPCNotification { return nil }
func (s session) SessionID() string                                   { return s.id }

var mcpServer = server.NewMCPServer("t", "1")

func call(t *testing.T, h server.ToolHandlerFunc, sessionID string) (string, bool) {
	t.Helper()
	ctx := mcpServer.WithContext(context.Background(), session{sessionID})
	res, err := h(ctx, mcp.CallToolRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var text []string
	for _, c := range res.Content {
		text = append(text, c.(mcp.TextContent).Text)
	}
	return strings.Join(text, "\n"), res.IsError
}

var answer server.ToolHandlerFunc = func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return mcp.NewToolResultText("answer"), nil
}

func TestBudgetWarnsThenStops(t *testing.T) {
	h := Middleware(Config{Limit: 20, Warn: 4}, &Memory{})(answer)
	for i := 1; i <= 20; i++ {
		text, isErr := call(t, h, "s1")
		remaining := 20 - i
		switch {
		case isErr || !strings.HasPrefix(text, "answer"):
			t.Fatalf("call %d: %q", i, text)
		case remaining > 4 && strings.Contains(text, "Tool budget"):
			t.Fatalf("call %d warned early: %q", i, text)
		case remaining <= 4 && remaining > 0 && !strings.Contains(text, "Wrap up soon"):
			t.Fatalf("call %d with %d left did not warn: %q", i, remaining, text)
		case remaining == 0 && !strings.Contains(text, "Synthesize your answer now"):
			t.Fatalf("last call did not say so: %q", text)
		}
	}
	if text, isErr := call(t, h, "s1"); !isErr || !strings.Contains(text, "exhausted") || strings.Contains(text, "answer\n") {
		t.Fatalf("call 21 must be refused without running the tool: %q", text)
	}
	if text, _ := call(t, h, "s2"); text != "answer" {
		t.Fatalf("another session has its own budget: %q", text)
	}
}

// TestKVSharedAcrossReplicas counts one session through two "replicas",
// each with its own KV handle on one NATS server.
func TestKVSharedAcrossReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real nats-server")
	}
	url := serverstest.NATS(t)
	var handlers []server.ToolHandlerFunc
	for range 2 {
		nc, js, err := pipeline.Connect(url, "budget-test", nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		kv, err := OpenKV(context.Background(), js, 1, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		handlers = append(handlers, Middleware(Config{Limit: 5, Warn: 2}, kv)(answer))
	}
	for i := 1; i <= 5; i++ {
		if _, isErr := call(t, handlers[i%2], "shared-session"); isErr {
			t.Fatalf("call %d refused", i)
		}
	}
	if text, isErr := call(t, handlers[0], "shared-session"); !isErr || !strings.Contains(text, "exhausted") {
		t.Fatalf("the 6th call through either replica must be refused: %q", text)
	}
}

// callAs calls h with no MCP session, as a 2026-07-28 client does: the
// principal's key and the client name in _meta identify the run.
func callAs(t *testing.T, h server.ToolHandlerFunc, key, client string) (string, bool) {
	t.Helper()
	keys, err := auth.ParseKeys(key + "-0123456789abcdef=*")
	if err != nil {
		t.Fatal(err)
	}
	p, _ := keys.Lookup(key + "-0123456789abcdef")
	req := mcp.CallToolRequest{}
	if client != "" {
		req.Params.Meta = &mcp.Meta{AdditionalFields: map[string]any{mcp.MetaKeyClientInfo: map[string]any{"name": client, "version": "1"}}}
	}
	res, err := h(auth.WithPrincipal(context.Background(), p), req)
	if err != nil {
		t.Fatal(err)
	}
	var text []string
	for _, c := range res.Content {
		text = append(text, c.(mcp.TextContent).Text)
	}
	return strings.Join(text, "\n"), res.IsError
}

// TestRunsWithoutSession: without a session, calls count by API key and
// client name; the 21st call of one run is refused, other runs go on.
func TestRunsWithoutSession(t *testing.T) {
	h := Middleware(Config{Limit: 20, Warn: 4}, &Memory{})(answer)
	for i := 1; i <= 20; i++ {
		if _, isErr := callAs(t, h, "k1", "agent-a"); isErr {
			t.Fatalf("call %d refused", i)
		}
	}
	if text, isErr := callAs(t, h, "k1", "agent-a"); !isErr || !strings.Contains(text, "exhausted") {
		t.Fatalf("call 21 of a sessionless run must be refused: %q", text)
	}
	if _, isErr := callAs(t, h, "k1", "agent-b"); isErr {
		t.Fatal("another client under the same key is another run")
	}
	if _, isErr := callAs(t, h, "k2", "agent-a"); isErr {
		t.Fatal("another key is another run")
	}
	for i := 1; i <= 20; i++ {
		callAs(t, h, "k3", "")
	}
	if _, isErr := callAs(t, h, "k3", ""); !isErr {
		t.Fatal("a client that names itself not at all is still counted, by its key")
	}
}

// TestIdleGapStartsNewRun: a session (or key) that pauses longer than the
// idle gap gets a fresh budget; shorter pauses stay in the run.
func TestIdleGapStartsNewRun(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	h := Middleware(Config{Limit: 3, Warn: 1, Idle: 5 * time.Minute, Now: func() time.Time { return now }}, &Memory{})(answer)
	for i := 1; i <= 3; i++ {
		now = now.Add(4 * time.Minute) // pauses under the gap keep the run
		if _, isErr := call(t, h, "long-lived"); isErr {
			t.Fatalf("call %d refused", i)
		}
	}
	if _, isErr := call(t, h, "long-lived"); !isErr {
		t.Fatal("the 4th call of the run must be refused")
	}
	now = now.Add(5*time.Minute + time.Second)
	if text, isErr := call(t, h, "long-lived"); isErr || text != "answer" {
		t.Fatalf("after the idle gap a new run starts: %q", text)
	}
}

// TestBudgetAppliesToChosenTools: tools outside the budgeted toolsets
// (Veryfront's paging tools by default) are never counted nor refused.
func TestBudgetAppliesToChosenTools(t *testing.T) {
	counted := func(tool string) bool { return tool != "list_file_chunks" }
	h := Middleware(Config{Limit: 2, Warn: 0, Applies: counted}, &Memory{})(answer)
	page := func() (string, bool) {
		req := mcp.CallToolRequest{}
		req.Params.Name = "list_file_chunks"
		res, err := h(mcpServer.WithContext(context.Background(), session{"s"}), req)
		if err != nil {
			t.Fatal(err)
		}
		return res.Content[0].(mcp.TextContent).Text, res.IsError
	}
	for i := 1; i <= 30; i++ {
		if text, isErr := page(); isErr || text != "answer" {
			t.Fatalf("paging call %d: %q", i, text)
		}
	}
	call(t, h, "s")
	call(t, h, "s")
	if _, isErr := call(t, h, "s"); !isErr {
		t.Fatal("counted tools still stop at the budget")
	}
	if _, isErr := page(); isErr {
		t.Fatal("paging goes on after the budget is spent")
	}
}

// TestKVIdleGap: the shared counter starts a new run after the gap too.
func TestKVIdleGap(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real nats-server")
	}
	nc, js, err := pipeline.Connect(serverstest.NATS(t), "budget-test", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	kv, err := OpenKV(context.Background(), js, 1, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for i := 1; i <= 3; i++ {
		if n, err := kv.Use(context.Background(), "run", now, time.Minute); err != nil || n != i {
			t.Fatalf("call %d counted %d, %v", i, n, err)
		}
	}
	if n, err := kv.Use(context.Background(), "run", now.Add(2*time.Minute), time.Minute); err != nil || n != 1 {
		t.Fatalf("after the gap: %d, %v", n, err)
	}
}

// TestStdioRunIsTheProcess: mcp-go names every stdio session "stdio"; two
// queryd processes sharing a NATS KV must not share one run, so the run of a
// stdio session is this process's.
func TestStdioRunIsTheProcess(t *testing.T) {
	ctx := mcpServer.WithContext(context.Background(), session{"stdio"})
	run := RunOf(ctx, mcp.CallToolRequest{})
	if run == "session:stdio" || !strings.HasPrefix(run, "stdio:") || len(run) < len("stdio:")+16 {
		t.Fatalf("stdio run %q must name this process", run)
	}
	if again := RunOf(ctx, mcp.CallToolRequest{}); again != run {
		t.Fatalf("one process is one run: %q then %q", run, again)
	}
}

// budgetWiretap counts the NATS messages of the tool budget every client of
// url sends: KV reads and writes of the bucket, and handover requests.
func budgetWiretap(t *testing.T, url string) func() int64 {
	t.Helper()
	nc, _, err := pipeline.Connect(url, "budget-wiretap", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	// A mark the wiretap publishes to itself comes after every message
	// the server took before it: once it is back, those are counted.
	const mark = "budget-wiretap.mark"
	var n, marks atomic.Int64
	if _, err := nc.Subscribe(">", func(m *nats.Msg) {
		if m.Subject == mark {
			marks.Add(1)
			return
		}
		if strings.Contains(m.Subject, Bucket) || strings.HasPrefix(m.Subject, HandoverSubject) {
			n.Add(1)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return func() int64 {
		want := marks.Load() + 1
		if err := nc.Publish(mark, nil); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(30 * time.Second); marks.Load() < want; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("gave up after 30 s waiting for the wiretap's own mark (%d budget messages counted)", n.Load())
			}
		}
		return n.Load()
	}
}

// kvReplicas opens the budget on n connections to url, as n replicas do.
func kvReplicas(t *testing.T, url string, n int) []*KV {
	t.Helper()
	var out []*KV
	for range n {
		nc, js, err := pipeline.Connect(url, "budget-test", nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		kv, err := OpenKV(context.Background(), js, 1, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, kv)
	}
	return out
}

// TestKVRunOnOneReplicaSendsNothing: a run whose calls stay on one replica
// takes the run at its first call (a KV read and a KV write) and sends no
// NATS message for any later call, counted by a wiretap on every subject;
// it is still refused at call 21.
func TestKVRunOnOneReplicaSendsNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real nats-server")
	}
	url := serverstest.NATS(t)
	sent := budgetWiretap(t, url)
	replicas := kvReplicas(t, url, 2) // the other replica is there, never called
	h := Middleware(Config{Limit: 20, Warn: 4}, replicas[0])(answer)
	before := sent()
	if _, isErr := call(t, h, "one-replica"); isErr {
		t.Fatal("call 1 refused")
	}
	first := sent() - before
	if first == 0 || first > 4 {
		t.Fatalf("taking the run sent %d budget messages, want a read and a write", first)
	}
	for i := 2; i <= 20; i++ {
		if _, isErr := call(t, h, "one-replica"); isErr {
			t.Fatalf("call %d refused", i)
		}
	}
	if text, isErr := call(t, h, "one-replica"); !isErr || !strings.Contains(text, "exhausted") {
		t.Fatalf("call 21 must be refused: %q", text)
	}
	if n := sent() - before - first; n != 0 {
		t.Fatalf("calls 2 to 21 on the owning replica sent %d budget messages to NATS, want 0", n)
	}
	t.Logf("call 1: %d budget messages; calls 2-21: none", first)
}

// TestKVRunAlternatingReplicas: a run whose calls alternate between two
// replicas on every call is handed over at every call and refused at
// exactly call 21, through either replica; each call reports its true count.
func TestKVRunAlternatingReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real nats-server")
	}
	url := serverstest.NATS(t)
	sent := budgetWiretap(t, url)
	replicas := kvReplicas(t, url, 2)
	now := time.Now()
	for i := 1; i <= 25; i++ {
		n, err := replicas[i%2].Use(context.Background(), "alternating", now, time.Minute)
		if err != nil || n != i {
			t.Fatalf("call %d through replica %d counted %d, %v", i, i%2, n, err)
		}
	}
	before := sent()
	var hs []server.ToolHandlerFunc
	for _, kv := range replicas {
		hs = append(hs, Middleware(Config{Limit: 20, Warn: 4}, kv)(answer))
	}
	for i := 1; i <= 20; i++ {
		if text, isErr := call(t, hs[i%2], "alternating-session"); isErr {
			t.Fatalf("call %d through replica %d refused: %q", i, i%2, text)
		}
	}
	for i := 21; i <= 22; i++ {
		if text, isErr := call(t, hs[i%2], "alternating-session"); !isErr || !strings.Contains(text, "exhausted") {
			t.Fatalf("call %d through replica %d must be refused: %q", i, i%2, text)
		}
	}
	t.Logf("22 alternating calls: %d budget messages", sent()-before)
}

// TestKVRunContinuesAfterRelease: a replica that stops hands its runs back;
// one that dies without doing so is taken over from the run's entry, which
// has the count as of when it took the run (the calls it counted since are
// lost with it).
func TestKVRunContinuesAfterRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real nats-server")
	}
	url := serverstest.NATS(t)
	replicas := kvReplicas(t, url, 3)
	now := time.Now()
	use := func(kv *KV, run string) int {
		t.Helper()
		n, err := kv.Use(context.Background(), run, now, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for i := 1; i <= 5; i++ {
		use(replicas[0], "released")
	}
	replicas[0].Release(context.Background())
	if n := use(replicas[1], "released"); n != 6 {
		t.Fatalf("after a release the run goes on at 6, got %d", n)
	}
	// Replica 1 owns both runs now; it dies (stops answering) after 3 calls
	// of a run whose entry it wrote at its first.
	for i := 1; i <= 3; i++ {
		use(replicas[1], "crashed")
	}
	if err := replicas[1].sub.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	if n := use(replicas[2], "crashed"); n != 1 {
		t.Fatalf("a dead owner's run continues from its entry (taken at call 1, before it counted): got %d", n)
	}
	// It had taken "released" at 5 (its entry) and counted call 6 in memory:
	// that call is lost with it.
	if n := use(replicas[2], "released"); n != 6 {
		t.Fatalf("a dead owner's run continues from its entry's count: got %d", n)
	}
}

// TestKVEntryEncoding: entries written before owners existed (16 bytes)
// read as a run without owner.
func TestKVEntryEncoding(t *testing.T) {
	last := time.Unix(1700000000, 5)
	n, l, owner := decode(encode(7, last, "replica-a"))
	if n != 7 || !l.Equal(last) || owner != "replica-a" {
		t.Fatalf("round trip: %d %v %q", n, l, owner)
	}
	n, l, owner = decode(encode(3, last, "")[:16])
	if n != 3 || !l.Equal(last) || owner != "" {
		t.Fatalf("old entry: %d %v %q", n, l, owner)
	}
	if n, l, _ := decode(encode(0, time.Time{}, "x")); n != 0 || !l.IsZero() {
		t.Fatalf("no call yet: %d %v", n, l)
	}
}

// TestKVConcurrentReplicas: calls of one run made at once through three
// replicas each get a different count, and together every count from 1 to
// their number: the run is never counted by two replicas at once.
func TestKVConcurrentReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real nats-server")
	}
	replicas := kvReplicas(t, serverstest.NATS(t), 3)
	now := time.Now()
	const calls = 90
	seen := make(chan int, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() {
			n, err := replicas[i%3].Use(context.Background(), "concurrent", now, time.Hour)
			if err != nil {
				t.Error(err)
			}
			seen <- n
		})
	}
	wg.Wait()
	close(seen)
	got := map[int]bool{}
	for n := range seen {
		if got[n] {
			t.Fatalf("count %d given twice", n)
		}
		got[n] = true
	}
	for i := 1; i <= calls; i++ {
		if !got[i] {
			t.Fatalf("count %d never given", i)
		}
	}
}

// TestKVRefreshesOwnedEntry: a run owned for longer than a quarter of the
// bucket's TTL gets its entry rewritten with its count, so it does not
// expire under the run.
func TestKVRefreshesOwnedEntry(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real nats-server")
	}
	kv := kvReplicas(t, serverstest.NATS(t), 1)[0]
	now := time.Now()
	for i := 1; i <= 3; i++ {
		if _, err := kv.Use(context.Background(), "long", now, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	e, err := kv.kv.Get(context.Background(), keyOf("long"))
	if err != nil {
		t.Fatal(err)
	}
	if n, _, owner := decode(e.Value()); n != 0 || owner != kv.id {
		t.Fatalf("entry after taking the run: %d calls, owner %q", n, owner)
	}
	if _, err := kv.Use(context.Background(), "long", now.Add(kv.refresh+time.Second), time.Hour); err != nil {
		t.Fatal(err)
	}
	if e, err = kv.kv.Get(context.Background(), keyOf("long")); err != nil {
		t.Fatal(err)
	}
	if n, _, owner := decode(e.Value()); n != 4 || owner != kv.id {
		t.Fatalf("entry after a refresh: %d calls, owner %q; want 4, this replica", n, owner)
	}
}
