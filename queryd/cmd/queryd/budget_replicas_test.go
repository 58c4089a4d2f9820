package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/strata-kb/strata/queryd/budget"
	"github.com/strata-kb/strata/shared/pipeline"
)

// budgetMessages counts the NATS messages of the tool budget any client of
// url sends from now on: reads and writes of its KV bucket, handovers.
func budgetMessages(t *testing.T, url string) func() int64 {
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
		if strings.Contains(m.Subject, budget.Bucket) || strings.HasPrefix(m.Subject, budget.HandoverSubject) {
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

// call2026At makes a counted tool call of protocol 2026-07-28 (a run of the
// test key and client) on the queryd at addr and returns the answer. The
// call lacks its query: the tool refuses it, but it is counted first.
func call2026At(t *testing.T, addr, client string) string {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_keyword","arguments":{},"_meta":{`+
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":%q,"version":"1"},`+
		`"io.modelcontextprotocol/clientCapabilities":{}}}}`, client)
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", bytes.NewBufferString(body))
	req.Header.Set("Authorization", "Bearer "+testKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "search_keyword")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("HTTP %d: %s", resp.StatusCode, b)
	}
	return string(b)
}

// TestBudgetAcrossReplicas runs two queryd replicas (in this process, as
// run wires them) on one real nats-server with the default budget of 20: a
// run whose calls stay on one replica sends no NATS message after its first
// call and is refused at call 21; a run whose calls alternate between the
// replicas on every call is refused at call 21 too, through either.
func TestBudgetAcrossReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real nats-server")
	}
	url := natsWithBuckets(t)
	replicas := []string{startQueryd(t, "-nats-url", url), startQueryd(t, "-nats-url", url)}
	sent := budgetMessages(t, url)

	before := sent()
	call2026At(t, replicas[0], "one-replica")
	first := sent() - before
	for i := 2; i <= 20; i++ {
		if out := call2026At(t, replicas[0], "one-replica"); strings.Contains(out, "exhausted") {
			t.Fatalf("call %d refused: %s", i, out)
		}
	}
	if out := call2026At(t, replicas[0], "one-replica"); !strings.Contains(out, "Tool budget exhausted") {
		t.Fatalf("call 21 must be refused: %s", out)
	}
	if n := sent() - before - first; n != 0 {
		t.Fatalf("calls 2 to 21 on one replica sent %d budget messages to NATS, want none", n)
	}
	t.Logf("one replica: call 1 sent %d budget messages, calls 2-21 none", first)

	before = sent()
	for i := 1; i <= 20; i++ {
		if out := call2026At(t, replicas[i%2], "alternating"); strings.Contains(out, "exhausted") {
			t.Fatalf("call %d through replica %d refused: %s", i, i%2+1, out)
		}
	}
	for i := 21; i <= 22; i++ {
		if out := call2026At(t, replicas[i%2], "alternating"); !strings.Contains(out, "Tool budget exhausted") {
			t.Fatalf("call %d through replica %d must be refused: %s", i, i%2+1, out)
		}
	}
	t.Logf("alternating replicas: 22 calls sent %d budget messages", sent()-before)
}
