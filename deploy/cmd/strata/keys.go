package main

// strata keys: API keys for queryd made and withdrawn while it runs. They
// live in a NATS KV bucket that every queryd started with -nats-url watches
// (queryd/auth, KeyStore), one record per key name, holding the key's
// SHA-256 and never the key (shared/apikeys: the bucket and the record).

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/shared/access"
	"github.com/strata-kb/strata/shared/apikeys"
	"github.com/strata-kb/strata/shared/objkey"
)

// keyInfo is what list shows of a record: everything but the hash, which
// would let anyone who reads the list test guesses offline.
type keyInfo struct {
	Name      string    `json:"name"`
	Projects  []string  `json:"projects"`
	Groups    []string  `json:"groups"`
	CreatedAt time.Time `json:"created_at"`
}

// keyPrefix marks Strata keys, so a leaked one is recognisable (secret scanners).
const keyPrefix = "sk-strata-"

// keyNameRE: a name is a KV key and a label in logs; no dots, which NATS
// subjects would split.
var keyNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

func runKeysCreate(ctx context.Context, a *app, name string, args []string) error {
	f := newFlags(name, "--name NAME --project P[,P...]|* [--groups G[,G...]|*]",
		"Makes a new API key for queryd and prints it once, as the last line: only its SHA-256 is kept\n"+
			"(NATS KV bucket "+apikeys.Bucket+"), so it cannot be shown again. Every queryd started with -nats-url\n"+
			"accepts it within a second. NAME labels the key in queryd's logs and in strata keys list; a\n"+
			"name in use is refused (strata keys revoke NAME first).")
	keyName := f.String("name", "", "the key's name: 1-64 letters, digits, _ and -")
	projects := f.String("project", "", "the projects the key reads: comma-separated names, or * for every project")
	groups := f.String("groups", "", "the groups it reads them with: comma-separated names, or * for every document (empty: only documents without groups)")
	replicas := f.Int("kv-replicas", 0, "replicas of the bucket, if this creates it (STRATA_KV_REPLICAS, else 1; as queryd -kv-replicas)")
	cf := addConnFlags(f, needNATS)
	if _, err := f.parse(a, args, 0, 0); err != nil {
		return err
	}
	rec, err := newKeyRecord(*keyName, *projects, *groups, a.now())
	if err != nil {
		return err
	}
	if *replicas == 0 {
		*replicas = envReplicas(a)
	}
	c, err := cf.resolve(a)
	if err != nil {
		return err
	}
	key, err := newKey()
	if err != nil {
		return err
	}
	rec.Hash = apikeys.Hash(key)
	if err := storeKey(ctx, c, rec, *replicas); err != nil {
		return err
	}
	printKeyCreated(a.stdout, rec, key)
	return nil
}

// newKeyRecord checks the arguments of create (usage errors) and returns the record without its hash.
func newKeyRecord(name, projects, groups string, now time.Time) (apikeys.Record, error) {
	switch {
	case name == "":
		return apikeys.Record{}, usagef("missing --name")
	case !keyNameRE.MatchString(name):
		return apikeys.Record{}, usagef("invalid --name %q: 1-64 letters, digits, _ and -, starting with a letter or digit", name)
	}
	ps, err := parseKeyProjects(projects)
	if err != nil {
		return apikeys.Record{}, err
	}
	gs, err := parseKeyGroups(groups)
	if err != nil {
		return apikeys.Record{}, err
	}
	return apikeys.Record{Name: name, Projects: ps, Groups: gs, CreatedAt: now.UTC().Truncate(time.Second)}, nil
}

// parseKeyProjects parses --project as queryd's -api-keys does (auth.ParseProjects).
func parseKeyProjects(spec string) ([]string, error) {
	ps := splitList(spec)
	if len(ps) == 0 {
		return nil, usagef("missing --project: comma-separated project names, or * for every project")
	}
	for _, p := range ps {
		if p != "*" && !objkey.ValidProject(p) {
			return nil, usagef("invalid project %q in --project: 1-63 letters, digits, _ and -, starting with a letter or digit; or *", p)
		}
	}
	if slices.Contains(ps, "*") && len(ps) > 1 {
		return nil, usagef("--project %q: * (every project) stands alone", spec)
	}
	return ps, nil
}

// parseKeyGroups parses --groups as queryd's -api-keys does (auth.ParseGroups).
func parseKeyGroups(spec string) ([]string, error) {
	gs := splitList(spec)
	for _, g := range gs {
		if g != "*" && !access.ValidGroup(g) {
			return nil, usagef("invalid group %q in --groups: 1-%d characters of a-z 0-9 . _ : @ / + = -; or *", g, access.MaxGroupLength)
		}
	}
	if slices.Contains(gs, "*") && len(gs) > 1 {
		return nil, usagef("--groups %q: * (every document) stands alone", spec)
	}
	slices.Sort(gs)
	return slices.Compact(gs), nil
}

// splitList splits a comma-separated list, dropping blanks; never nil, so
// the record holds [] rather than null.
func splitList(spec string) []string {
	out := []string{}
	for _, s := range strings.Split(spec, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// envReplicas is STRATA_KV_REPLICAS (what `task up` gives the services), else 1.
func envReplicas(a *app) int {
	if n, err := strconv.Atoi(a.getenv("STRATA_KV_REPLICAS")); err == nil && n > 0 {
		return n
	}
	return 1
}

// newKey returns a new key: the prefix and 32 random bytes, base64url.
func newKey() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random key: %w", err)
	}
	return keyPrefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// storeKey writes rec under its name unless the name is in use.
func storeKey(ctx context.Context, c conn, rec apikeys.Record, replicas int) error {
	nc, js, err := connectNATS(c)
	if err != nil {
		return err
	}
	defer nc.Close()
	kv, err := openOrCreateKeys(ctx, js, replicas)
	if err != nil {
		return err
	}
	body, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	// Create fails when the name holds a key: a name never silently gets
	// a second key (a revoked name is free again).
	if _, err := kv.Create(ctx, rec.Name, body); errors.Is(err, jetstream.ErrKeyExists) {
		return fmt.Errorf("a key named %q exists: revoke it first (strata keys revoke %s) or choose another name", rec.Name, rec.Name)
	} else if err != nil {
		return fmt.Errorf("store key %q in kv %s: %w", rec.Name, apikeys.Bucket, err)
	}
	return nil
}

// openOrCreateKeys opens the bucket as it is, or creates it when no queryd
// has yet. It never updates an existing bucket: its replicas are queryd's
// -kv-replicas, which this command does not know.
func openOrCreateKeys(ctx context.Context, js jetstream.JetStream, replicas int) (jetstream.KeyValue, error) {
	kv, err := js.KeyValue(ctx, apikeys.Bucket)
	if !errors.Is(err, jetstream.ErrBucketNotFound) {
		return kv, wrapKV(err)
	}
	kv, err = js.CreateKeyValue(ctx, apikeys.BucketConfig(replicas))
	if errors.Is(err, jetstream.ErrBucketExists) { // a queryd created it meanwhile
		kv, err = js.KeyValue(ctx, apikeys.Bucket)
	}
	return kv, wrapKV(err)
}

// openKeys opens the bucket; (nil, nil) when it does not exist (no key was ever made).
func openKeys(ctx context.Context, js jetstream.JetStream) (jetstream.KeyValue, error) {
	kv, err := js.KeyValue(ctx, apikeys.Bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, nil
	}
	return kv, wrapKV(err)
}

func wrapKV(err error) error {
	if err != nil {
		return fmt.Errorf("open kv %s: %w", apikeys.Bucket, err)
	}
	return nil
}

func printKeyCreated(w io.Writer, rec apikeys.Record, key string) {
	fmt.Fprintf(w, "created key %q: %s\n", rec.Name, grantText(rec.Projects, rec.Groups))
	fmt.Fprintln(w, "Every queryd with -nats-url accepts it within a second. Store it now: it is shown only this once")
	fmt.Fprintln(w, "(Strata keeps its SHA-256). Send it as Authorization: Bearer <key>. The key:")
	fmt.Fprintln(w, key)
}

// grantText says what a key reads, in words.
func grantText(projects, groups []string) string {
	what := "projects " + strings.Join(projects, ",")
	if slices.Equal(projects, []string{"*"}) {
		what = "every project"
	}
	switch {
	case slices.Equal(groups, []string{"*"}):
		return what + ", every document (admin: groups *)"
	case len(groups) == 0:
		return what + ", only documents without groups (no --groups)"
	default:
		return what + ", documents without groups and those of groups " + strings.Join(groups, ",")
	}
}

func runKeysList(ctx context.Context, a *app, name string, args []string) error {
	f := newFlags(name, "[--json]",
		"Lists the API keys made with strata keys create: name, projects, groups and creation time, by name.\n"+
			"Never a key or its hash. (Keys of queryd's -api-keys are not listed.)")
	asJSON := f.Bool("json", false, "print the keys as JSON")
	cf := addConnFlags(f, needNATS)
	if _, err := f.parse(a, args, 0, 0); err != nil {
		return err
	}
	c, err := cf.resolve(a)
	if err != nil {
		return err
	}
	keys, err := listKeys(ctx, c)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(a.stdout, keys)
	}
	printKeys(a.stdout, keys)
	return nil
}

// listKeys reads every record of the bucket, sorted by name.
func listKeys(ctx context.Context, c conn) ([]keyInfo, error) {
	nc, js, err := connectNATS(c)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	kv, err := openKeys(ctx, js)
	if err != nil || kv == nil {
		return []keyInfo{}, err
	}
	w, err := kv.WatchAll(ctx, jetstream.IgnoreDeletes())
	if err != nil {
		return nil, fmt.Errorf("read kv %s: %w", apikeys.Bucket, err)
	}
	defer func() { _ = w.Stop() }()
	out := []keyInfo{}
	for e := range w.Updates() {
		if e == nil { // the end of the current values
			break
		}
		out = append(out, infoOf(e.Key(), e.Value()))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// infoOf is what list shows of a record; one that does not decode is
// listed by name with no grant (queryd refuses its key too).
func infoOf(name string, value []byte) keyInfo {
	var r apikeys.Record
	if err := json.Unmarshal(value, &r); err != nil {
		return keyInfo{Name: name, Projects: []string{}, Groups: []string{}}
	}
	info := keyInfo{Name: name, Projects: r.Projects, Groups: r.Groups, CreatedAt: r.CreatedAt}
	if info.Projects == nil {
		info.Projects = []string{}
	}
	if info.Groups == nil {
		info.Groups = []string{}
	}
	return info
}

func printKeys(w io.Writer, keys []keyInfo) {
	if len(keys) == 0 {
		fmt.Fprintln(w, "no keys (strata keys create makes one)")
		return
	}
	t := newTable(w, "NAME", "PROJECTS", "GROUPS", "CREATED")
	for _, k := range keys {
		projects, groups := strings.Join(k.Projects, ","), strings.Join(k.Groups, ",")
		if projects == "" {
			projects = "- (unreadable record)"
		}
		switch groups {
		case "":
			groups = "- (documents without groups only)"
		case "*":
			groups = "* (every document)"
		}
		t.row(k.Name, projects, groups, stamp(k.CreatedAt))
	}
	t.flush()
}

func runKeysRevoke(ctx context.Context, a *app, name string, args []string) error {
	f := newFlags(name, "NAME",
		"Withdraws the API key named NAME: its record is purged from the NATS KV bucket "+apikeys.Bucket+" and\n"+
			"every queryd with -nats-url refuses the key within a second. The name can then be used again.")
	cf := addConnFlags(f, needNATS)
	pos, err := f.parse(a, args, 1, 1)
	if err != nil {
		return err
	}
	c, err := cf.resolve(a)
	if err != nil {
		return err
	}
	if err := revokeKey(ctx, c, pos[0]); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "revoked key %q: every queryd with -nats-url refuses it within a second\n", pos[0])
	return nil
}

// revokeKey purges the record of name; an unknown name is an error.
func revokeKey(ctx context.Context, c conn, name string) error {
	nc, js, err := connectNATS(c)
	if err != nil {
		return err
	}
	defer nc.Close()
	unknown := fmt.Errorf("no key named %q (strata keys list shows the names)", name)
	if !keyNameRE.MatchString(name) {
		return unknown // not a valid KV key either: no such record can exist
	}
	kv, err := openKeys(ctx, js)
	if err != nil {
		return err
	}
	if kv == nil {
		return unknown
	}
	e, err := kv.Get(ctx, name)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return unknown
	}
	if err != nil {
		return fmt.Errorf("read key %q: %w", name, err)
	}
	// Purge, not delete: the record is removed, not just marked. The
	// revision makes it the record just read, not one created meanwhile.
	if err := kv.Purge(ctx, name, jetstream.LastRevision(e.Revision())); err != nil {
		return fmt.Errorf("revoke key %q: %w", name, err)
	}
	return nil
}
