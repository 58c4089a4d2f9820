package main

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/shared/apikeys"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/testservers/serverstest"
)

// TestNewKeyRecord: the record of create's arguments, as stored: names
// trimmed, groups sorted, the time in seconds, UTC.
func TestNewKeyRecord(t *testing.T) {
	rec, err := newKeyRecord("ci-bot", "acme, beta", "hr,finance", time.Date(2026, 1, 2, 3, 4, 5, 999, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	rec.Hash = "%s"
	body, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"ci-bot","hash":"%s","projects":["acme","beta"],"groups":["finance","hr"],"created_at":"2026-01-02T03:04:05Z"}`
	if string(body) != want {
		t.Fatalf("record:\n got %s\nwant %s", body, want)
	}
	// No groups is [], not null; * stays alone.
	rec, _ = newKeyRecord("all", "*", "", time.Now())
	if body, _ := json.Marshal(rec); !strings.Contains(string(body), `"projects":["*"],"groups":[]`) {
		t.Fatalf("record of an all-projects key without groups: %s", body)
	}
}

func TestKeysUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"keys"}, "strata keys: missing command: want create, list, revoke"},
		{[]string{"keys", "create", "--project", "acme"}, "strata keys create: missing --name"},
		{[]string{"keys", "create", "--name", "a.b", "--project", "acme"}, `invalid --name "a.b"`},
		{[]string{"keys", "create", "--name", "ci"}, "strata keys create: missing --project"},
		{[]string{"keys", "create", "--name", "ci", "--project", "acme,../x"}, `invalid project "../x" in --project`},
		{[]string{"keys", "create", "--name", "ci", "--project", "*,acme"}, "* (every project) stands alone"},
		{[]string{"keys", "create", "--name", "ci", "--project", "acme", "--groups", "HR"}, `invalid group "HR" in --groups`},
		{[]string{"keys", "create", "--name", "ci", "--project", "acme", "--groups", "*,hr"}, "* (every document) stands alone"},
		{[]string{"keys", "create", "ci", "--project", "acme"}, `strata keys create: unexpected argument "ci"`},
		{[]string{"keys", "revoke"}, "strata keys revoke: missing arguments: usage: strata keys revoke NAME"},
		{[]string{"keys", "list", "extra"}, `strata keys list: unexpected argument "extra"`},
	} {
		code, stdout, stderr := runArgs(t, nil, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 || stdout != "" {
			t.Errorf("strata %s: exit %d, stdout %q, stderr %q; want exit 2 and %q", strings.Join(tc.args, " "), code, stdout, stderr, tc.want)
		}
	}
}

var keyRE = regexp.MustCompile(`^sk-strata-[A-Za-z0-9_-]{43}$`)

// TestKeys runs create, list and revoke against a real nats-server.
func TestKeys(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real nats-server")
	}
	env := map[string]string{"STRATA_NATS_URL": serverstest.NATS(t)}
	strata := func(args ...string) (int, string, string) { t.Helper(); return runArgs(t, env, args...) }

	// Before any key: the bucket does not exist; list and revoke say so plainly.
	if code, out, errOut := strata("keys", "list"); code != 0 || !strings.Contains(out, "no keys") {
		t.Fatalf("list without a bucket: %d %q %q", code, out, errOut)
	}
	if code, _, errOut := strata("keys", "revoke", "nobody"); code != exitError || errOut != "strata keys revoke: no key named \"nobody\" (strata keys list shows the names)\n" {
		t.Fatalf("revoke without a bucket: exit %d, %q", code, errOut)
	}

	code, out, errOut := strata("keys", "create", "--name", "ci-bot", "--project", "acme,beta", "--groups", "hr,finance")
	if code != 0 || errOut != "" {
		t.Fatalf("create: exit %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	key := lines[len(lines)-1]
	if !keyRE.MatchString(key) || !strings.Contains(out, `created key "ci-bot": projects acme,beta, documents without groups and those of groups finance,hr`) ||
		!strings.Contains(out, "shown only this once") || strings.Count(out, key) != 1 {
		t.Fatalf("create: the key must be the last line, once:\n%s", out)
	}
	_, out, _ = strata("keys", "create", "--name", "admin", "--project", "*", "--groups", "*")
	admin := lastLine(out)
	if !keyRE.MatchString(admin) || admin == key || !strings.Contains(out, "every project, every document (admin: groups *)") {
		t.Fatalf("create admin:\n%s", out)
	}
	_, out, _ = strata("keys", "create", "--name", "plain", "--project", "acme")
	plain := lastLine(out)
	if !strings.Contains(out, "projects acme, only documents without groups (no --groups)") {
		t.Fatalf("create without groups:\n%s", out)
	}

	// An existing name is refused and keeps its key.
	code, out, errOut = strata("keys", "create", "--name", "ci-bot", "--project", "gamma")
	if code != exitError || out != "" || !strings.Contains(errOut, `a key named "ci-bot" exists: revoke it first`) {
		t.Fatalf("create an existing name: exit %d, %q, %q", code, out, errOut)
	}

	secrets := []string{key, admin, plain, apikeys.Hash(key), apikeys.Hash(admin), apikeys.Hash(plain)}
	code, out, _ = strata("keys", "list")
	if code != 0 {
		t.Fatalf("list: exit %d", code)
	}
	for _, want := range []string{"NAME", "PROJECTS", "GROUPS", "CREATED", "ci-bot", "acme,beta", "finance,hr", "admin", "* (every document)",
		"plain", "- (documents without groups only)", time.Now().UTC().Format("2006-01-02")} {
		if !strings.Contains(out, want) {
			t.Errorf("list lacks %q:\n%s", want, out)
		}
	}
	noSecret(t, "list", out, secrets)
	code, out, _ = strata("keys", "list", "--json")
	var listed []map[string]any
	if err := json.Unmarshal([]byte(out), &listed); code != 0 || err != nil || len(listed) != 3 {
		t.Fatalf("list --json: exit %d, %v:\n%s", code, err, out)
	}
	if listed[0]["name"] != "admin" || listed[1]["name"] != "ci-bot" || listed[2]["name"] != "plain" || listed[1]["created_at"] == "" {
		t.Errorf("list --json: %v", listed)
	}
	for _, k := range listed {
		if _, ok := k["hash"]; ok {
			t.Errorf("list --json shows a hash: %v", k)
		}
	}
	noSecret(t, "list --json", out, secrets)
	noKeyInBucket(t, env["STRATA_NATS_URL"], []string{key, admin, plain}, apikeys.Hash(key))

	// Revoke: gone from the list, the name free again; unknown names exit 1.
	if code, out, errOut := strata("keys", "revoke", "ci-bot"); code != 0 || !strings.Contains(out, `revoked key "ci-bot"`) {
		t.Fatalf("revoke: exit %d, %q, %q", code, out, errOut)
	}
	if _, out, _ := strata("keys", "list"); strings.Contains(out, "ci-bot") {
		t.Fatalf("a revoked key is listed:\n%s", out)
	}
	for _, name := range []string{"ci-bot", "never-made", "bad.name"} {
		code, out, errOut := strata("keys", "revoke", name)
		if code != exitError || out != "" || !strings.Contains(errOut, "no key named \""+name+"\"") {
			t.Errorf("revoke %s: exit %d, %q, %q; want exit 1 and a clear message", name, code, out, errOut)
		}
	}
	code, out, _ = strata("keys", "create", "--name", "ci-bot", "--project", "acme")
	if code != 0 || lastLine(out) == key {
		t.Fatalf("create a revoked name again: exit %d\n%s", code, out)
	}
	noKeyInBucket(t, env["STRATA_NATS_URL"], []string{key, admin, plain, lastLine(out)}, "")
}

func lastLine(out string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	return lines[len(lines)-1]
}

func noSecret(t *testing.T, what, out string, secrets []string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(out, s) {
			t.Errorf("%s prints a key or hash (%s...):\n%s", what, s[:12], out)
		}
	}
}

// noKeyInBucket reads every message of the bucket's stream, raw (data,
// subject and headers), and fails if one holds a key's text. wantHash, if
// set, must be found: the scan does see the records.
func noKeyInBucket(t *testing.T, url string, keys []string, wantHash string) {
	t.Helper()
	ctx := context.Background()
	nc, js, err := pipeline.Connect(url, "keys-test", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	st, err := js.Stream(ctx, "KV_"+apikeys.Bucket)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var raw strings.Builder
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && seq > 0; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		raw.WriteString(m.Subject + "\n" + string(m.Data) + "\n")
		for k, v := range m.Header {
			raw.WriteString(k + ": " + strings.Join(v, ",") + "\n")
		}
	}
	for _, k := range keys {
		if strings.Contains(raw.String(), k) || strings.Contains(raw.String(), strings.TrimPrefix(k, keyPrefix)) {
			t.Errorf("the bucket holds a key's text (%s...)", k[:14])
		}
	}
	if wantHash != "" && !strings.Contains(raw.String(), wantHash) {
		t.Errorf("the scan found no record with hash %s... in:\n%s", wantHash[:12], raw.String())
	}
	if !t.Failed() {
		t.Logf("scanned %d messages of KV_%s: no key text", info.State.Msgs, apikeys.Bucket)
	}
}
