package auth

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/strata-kb/strata/shared/access"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/shared/apikeys"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/testservers"
	"github.com/strata-kb/strata/shared/testservers/serverstest"
)

// revokeBound is the requirement: a key created or revoked is accepted or
// refused by every replica within this long.
const revokeBound = time.Second

// recordJSON is a record as `strata keys create` writes it (apikeys.Record).
const recordJSON = `{"name":"ci-bot","hash":"%s","projects":["acme","beta"],"groups":["finance","hr"],"created_at":"2026-01-02T03:04:05Z"}`

func TestParseRecord(t *testing.T) {
	key := "sk-strata-contract-0123456789"
	h, p, err := parseRecord("ci-bot", []byte(strings.Replace(recordJSON, "%s", apikeys.Hash(key), 1)))
	if err != nil {
		t.Fatal(err)
	}
	if h != [32]byte(mustHex(t, apikeys.Hash(key))) || p.KeyName != "ci-bot" || !p.CanRead("beta") || p.CanRead("gamma") ||
		!slices.Equal(p.Groups(), []string{"finance", "hr"}) || p.Admin() {
		t.Fatalf("record: %x %+v", h, p)
	}
	good := func() apikeys.Record {
		return apikeys.Record{Name: "k", Hash: apikeys.Hash(key), Projects: []string{"acme"}, Groups: []string{"hr"}}
	}
	for name, r := range map[string]func(*apikeys.Record){
		"other name":     func(r *apikeys.Record) { r.Name = "other" },
		"short hash":     func(r *apikeys.Record) { r.Hash = r.Hash[:10] },
		"key as hash":    func(r *apikeys.Record) { r.Hash = key },
		"no project":     func(r *apikeys.Record) { r.Projects = nil },
		"bad project":    func(r *apikeys.Record) { r.Projects = []string{"../x"} },
		"two in one":     func(r *apikeys.Record) { r.Projects = []string{"acme,beta"} },
		"bad group":      func(r *apikeys.Record) { r.Groups = []string{"HR"} },
		"star and group": func(r *apikeys.Record) { r.Groups = []string{"*", "hr"} },
	} {
		rec := good()
		r(&rec)
		body, _ := json.Marshal(rec)
		if _, _, err := parseRecord("k", body); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, _, err := parseRecord("k", []byte("not json")); err == nil {
		t.Error("not json: accepted")
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ownNATS is a nats-server the test stops and starts again (same port, same data).
type ownNATS struct {
	bin, data string
	port, mon int
	url       string
	p         *testservers.Process
}

func startOwnNATS(t *testing.T) *ownNATS {
	t.Helper()
	serverstest.NATS(t) // installs the pinned nats-server if missing
	dir, err := testservers.CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	ports, err := testservers.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	n := &ownNATS{bin: testservers.NATSServer.Path(dir), data: t.TempDir(), port: ports[0], mon: ports[1]}
	n.url = fmt.Sprintf("nats://127.0.0.1:%d", n.port)
	n.start(t)
	t.Cleanup(func() {
		if n.p != nil {
			_ = n.p.Stop(5 * time.Second)
		}
	})
	return n
}

func (n *ownNATS) start(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := testservers.StartNATS(ctx, n.bin, n.data, n.port, n.mon, n.data, false)
	if err != nil {
		t.Fatal(err)
	}
	n.p = p
}

func (n *ownNATS) stop(t *testing.T) {
	t.Helper()
	if err := n.p.Stop(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	n.p = nil
}

// replica is one queryd's view: its own NATS connection, key store and middleware.
type replica struct {
	store *KeyStore
	h     http.Handler
}

func startReplica(t *testing.T, ctx context.Context, url string, flagKeys *Keys) replica {
	t.Helper()
	nc, js, err := pipeline.Connect(url, "keystore-test", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	s := NewKeyStore(nil)
	go func() { _ = s.Watch(ctx, js, 1) }()
	select {
	case <-s.Loaded():
	case <-time.After(10 * time.Second):
		t.Fatal("key store not loaded within 10 s")
	}
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := FromContext(r.Context())
		_, _ = w.Write([]byte(p.KeyName))
	})
	return replica{store: s, h: Middleware(Lookups{flagKeys, s})(ok)}
}

func (r replica) status(key string) int {
	req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	rec := httptest.NewRecorder()
	r.h.ServeHTTP(rec, req)
	return rec.Code
}

// await polls every replica until each answers want for key, and fails the
// test if one still does not revokeBound after start (taken before the
// change was written). It returns how long the slowest took.
func await(t *testing.T, what string, start time.Time, replicas []replica, key string, want int) time.Duration {
	t.Helper()
	deadline := start.Add(revokeBound)
	var slowest time.Duration
	for i, r := range replicas {
		for r.status(key) != want {
			if time.Now().After(deadline) {
				t.Fatalf("%s: replica %d still answers %d after %s", what, i+1, r.status(key), revokeBound)
			}
			time.Sleep(time.Millisecond)
		}
		slowest = max(slowest, time.Since(start))
	}
	t.Logf("%s: every replica answers %d after %s", what, want, slowest)
	return slowest
}

func putRecord(t *testing.T, kv jetstream.KeyValue, name, key string, projects, groups []string) {
	t.Helper()
	body, err := json.Marshal(apikeys.Record{Name: name, Hash: apikeys.Hash(key), Projects: projects, Groups: groups, CreatedAt: time.Now().UTC()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(context.Background(), name, body); err != nil {
		t.Fatal(err)
	}
}

// TestKeyStoreReplicas runs two key stores ("replicas") on one real
// nats-server: a key put in the bucket authenticates on both within a
// second, a changed grant applies, a purged or deleted key is refused by
// both within a second, and -api-keys keys are unaffected throughout.
func TestKeyStoreReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real nats-server")
	}
	url := serverstest.NATS(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	flagKeys, err := ParseKeys("flag-key-0123456789=acme|hr")
	if err != nil {
		t.Fatal(err)
	}
	nc, js, err := pipeline.Connect(url, "keystore-test-cli", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	kv, err := OpenKeysBucket(ctx, js, 1)
	if err != nil {
		t.Fatal(err)
	}
	// A key made before the replicas start is loaded with the bucket.
	putRecord(t, kv, "early", "sk-strata-early-0123456789", []string{"acme"}, nil)
	replicas := []replica{startReplica(t, ctx, url, flagKeys), startReplica(t, ctx, url, flagKeys)}
	for i, r := range replicas {
		if r.status("sk-strata-early-0123456789") != 200 || r.status("flag-key-0123456789") != 200 || r.status("sk-strata-unknown-0123") != 401 {
			t.Fatalf("replica %d after loading: early %d, flag %d, unknown %d", i+1, r.status("sk-strata-early-0123456789"),
				r.status("flag-key-0123456789"), r.status("sk-strata-unknown-0123"))
		}
	}

	key := "sk-strata-live-0123456789abcdef"
	start := time.Now()
	putRecord(t, kv, "live", key, []string{"acme"}, []string{"hr", "finance"})
	await(t, "created", start, replicas, key, 200)
	p, ok := replicas[1].store.Lookup(key)
	if !ok || p.KeyName != "live" || !slices.Equal(p.Groups(), []string{"finance", "hr"}) || p.CanRead("beta") {
		t.Fatalf("principal of the stored key: %+v %v", p, ok)
	}
	// A new grant under the same name applies to the same key.
	putRecord(t, kv, "live", key, []string{"*"}, []string{"*"})
	deadline := time.Now().Add(revokeBound)
	for p, _ := replicas[0].store.Lookup(key); !p.AllowsAll() || !p.Admin(); p, _ = replicas[0].store.Lookup(key) {
		if time.Now().After(deadline) {
			t.Fatalf("new grant not applied: %+v", p)
		}
		time.Sleep(time.Millisecond)
	}

	start = time.Now()
	if err := kv.Purge(ctx, "live"); err != nil { // what strata keys revoke does
		t.Fatal(err)
	}
	took := await(t, "revoked (purge)", start, replicas, key, 401)
	t.Logf("revoke propagation (from calling purge to refused by both replicas): %s", took)
	start = time.Now()
	if err := kv.Delete(ctx, "early"); err != nil {
		t.Fatal(err)
	}
	await(t, "revoked (delete)", start, replicas, "sk-strata-early-0123456789", 401)

	// A record that does not parse authenticates nothing, and withdraws
	// the key its name had.
	key2 := "sk-strata-second-0123456789"
	start = time.Now()
	putRecord(t, kv, "second", key2, []string{"beta"}, nil)
	await(t, "created again", start, replicas, key2, 200)
	start = time.Now()
	if _, err := kv.Put(ctx, "second", []byte(`{"name":"second","hash":"`+apikeys.Hash(key2)+`","projects":["../etc"]}`)); err != nil {
		t.Fatal(err)
	}
	await(t, "invalid record", start, replicas, key2, 401)
	for i, r := range replicas {
		if r.status("flag-key-0123456789") != 200 {
			t.Errorf("replica %d: the -api-keys key stopped working", i+1)
		}
	}
}

// TestKeyStoreKeepsKeysWhileNATSIsDown restarts the nats-server under a
// store: while it is down the store keeps the keys it knew (the decision in
// Watch), and once it is back the watch resumes, so a revocation made then
// reaches the store.
func TestKeyStoreKeepsKeysWhileNATSIsDown(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real nats-server")
	}
	srv := startOwnNATS(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	nc, js, err := pipeline.Connect(srv.url, "keystore-test-cli", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	kv, err := OpenKeysBucket(ctx, js, 1)
	if err != nil {
		t.Fatal(err)
	}
	key := "sk-strata-outage-0123456789"
	putRecord(t, kv, "outage", key, []string{"acme"}, nil)
	r := startReplica(t, ctx, srv.url, nil)
	if r.status(key) != 200 {
		t.Fatal("stored key refused before the outage")
	}
	srv.stop(t)
	time.Sleep(500 * time.Millisecond) // deliberately: the replica has had time to lose its connection
	if r.status(key) != 200 {
		t.Fatal("stored key refused while NATS is down: the store must keep the keys it knew")
	}
	srv.start(t)
	// The CLI's connection reconnects too; revoke as soon as it can.
	deadline := time.Now().Add(30 * time.Second)
	for {
		pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
		err := kv.Purge(pctx, "outage")
		pcancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("revoke after the restart: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	revoked := time.Now()
	for r.status(key) != 401 {
		if time.Since(revoked) > 30*time.Second {
			t.Fatal("a key revoked after NATS came back still authenticates after 30 s: the watch did not resume")
		}
		time.Sleep(10 * time.Millisecond)
	}
	took := time.Since(revoked)
	t.Logf("after a nats-server restart, a revocation reached the store in %s", took.Round(time.Millisecond))
	if took > 5*time.Second { // the watch is set up again on reconnect, not after the consumer's heartbeats time out
		t.Errorf("revocation after a restart took %s: the watch was not set up again on reconnect", took)
	}
}

func TestLookupsAndNilKeys(t *testing.T) {
	var none *Keys
	if _, ok := none.Lookup("anything-0123456789"); ok {
		t.Fatal("nil Keys knows a key")
	}
	flag, _ := ParseKeys("same-key-0123456789=acme")
	other, _ := ParseKeys("same-key-0123456789=*|*")
	p, ok := Lookups{none, flag, other}.Lookup("same-key-0123456789")
	if !ok || p.AllowsAll() {
		t.Fatalf("the first lookup that knows a key answers: %+v %v", p, ok)
	}
	if _, ok := (Lookups{none}).Lookup("same-key-0123456789"); ok {
		t.Fatal("no lookup knows it")
	}
}

// switchable is a key lookup whose answer the test changes.
type switchable struct{ p *Principal }

func (s switchable) Lookup(key string) (Principal, bool) {
	if s.p == nil || key != "stdio-key-0123456789" {
		return Principal{}, false
	}
	return *s.p, true
}

func TestWithLiveKey(t *testing.T) {
	p := NewPrincipal("k", []string{"acme"}, nil)
	s := switchable{p: &p}
	ctx := WithLiveKey(context.Background(), &s, "stdio-key-0123456789")
	derived, cancel := context.WithCancel(context.WithValue(ctx, struct{}{}, "other"))
	defer cancel()
	if got, ok := FromContext(derived); !ok || !got.CanRead("acme") {
		t.Fatalf("before: %+v %v", got, ok)
	}
	if g := access.GrantFrom(derived); g.Admin || len(g.Groups) > 0 {
		t.Fatalf("grant before: %+v, want none", g)
	}
	p = NewPrincipal("k", []string{"beta"}, []string{"*"}) // granted otherwise
	if got, ok := FromContext(derived); !ok || !got.CanRead("beta") || !got.Admin() {
		t.Fatalf("after a new grant: %+v %v", got, ok)
	}
	if !access.GrantFrom(derived).Admin {
		t.Fatal("the index reads' grant did not follow the key's new groups")
	}
	p = NewPrincipal("k", []string{"beta"}, []string{"hr"})
	if g := access.GrantFrom(derived); g.Admin || !slices.Equal(g.Groups, []string{"hr"}) {
		t.Fatalf("grant after groups hr: %+v", g)
	}
	s.p = nil // revoked
	if got, ok := FromContext(derived); ok {
		t.Fatalf("after revoking: %+v", got)
	}
	if g := access.GrantFrom(derived); g.Admin || len(g.Groups) > 0 {
		t.Fatalf("grant of a revoked key: %+v", g)
	}
	if derived.Value(struct{}{}) != "other" {
		t.Fatal("other values lost")
	}
	admin := NewPrincipal("k", []string{"beta"}, []string{"*"})
	if got, ok := FromContext(WithPrincipal(derived, admin)); !ok || !got.Admin() || !access.GrantFrom(WithPrincipal(derived, admin)).Admin {
		t.Fatal("a WithPrincipal below wins")
	}
}

func TestMiddlewareFunc(t *testing.T) {
	p := NewPrincipal("k", []string{"acme"}, nil)
	s := switchable{p: &p}
	h := Middleware(&s)(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	call := func() int {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		req.Header.Set("Authorization", "Bearer stdio-key-0123456789")
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	if call() != 200 {
		t.Fatal("known key refused")
	}
	s.p = nil
	if code := call(); code != 401 {
		t.Fatalf("withdrawn key: %d (the lookup is asked on every request)", code)
	}
}
