package e2e

// Per-document access control, end to end: documents get their readers from
// the strata-groups tag (or user metadata), API keys read a project with
// groups, and every tool answers a hidden document exactly like one that
// does not exist. TestAccessMatrix checks every tool x key x kind of groups
// over streamable HTTP (the protocol versions the other tests exercise) and
// stdio; TestAccessTagChange changes a document's tag under a searching client.

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/tags"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/strata-kb/strata/deploy/mcpclient"

	"github.com/strata-kb/strata/deploy/localstack"
	"github.com/strata-kb/strata/shared/bucket"
	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
)

// ---- keys ----

// accessKey is one API key of the stack: the project it reads, and its
// groups (admin: "*", every document of the project).
type accessKey struct {
	name    string
	key     string
	project string
	admin   bool
	groups  []string
}

var (
	accessAdmin   = accessKey{name: "admin", key: "access-admin-key-000000001", project: "acme", admin: true}
	accessMember  = accessKey{name: "member", key: "access-member-key-00000001", project: "acme", groups: []string{"hr"}}
	accessFinance = accessKey{name: "non-member", key: "access-finance-key-0000001", project: "acme", groups: []string{"finance"}}
	accessOther   = accessKey{name: "other-project", key: "access-beta-admin-key-0001", project: "beta", admin: true}
	accessKeys    = []accessKey{accessAdmin, accessMember, accessFinance, accessOther}
)

// accessKeysEnv is queryd's STRATA_API_KEYS for accessKeys: key=PROJECTS|GROUPS;...
func accessKeysEnv() string {
	var entries []string
	for _, k := range accessKeys {
		groups := strings.Join(k.groups, ",")
		if k.admin {
			groups = "*"
		}
		entries = append(entries, k.key+"="+k.project+"|"+groups)
	}
	return "STRATA_API_KEYS=" + strings.Join(entries, ";")
}

// adminsOnly is the readers of a document whose groups did not parse.
var adminsOnly = []string{"!"}

// reads reports whether k may read a document of project with readers
// (nil: no groups, every key of the project).
func (k accessKey) reads(project string, readers []string) bool {
	if project != k.project {
		return false
	}
	if k.admin || readers == nil {
		return true
	}
	for _, r := range readers {
		if slices.Contains(k.groups, r) {
			return true
		}
	}
	return false
}

// startAccess starts a stack whose queryd knows only accessKeys (the
// stack's own key is overridden), with the harness's client the admin's.
func startAccess(t *testing.T) *harness {
	t.Helper()
	return startAccessWith(t, nil)
}

// startAccessWith is startAccess with extra environment per service.
func startAccessWith(t *testing.T, env map[string][]string) *harness {
	t.Helper()
	if env == nil {
		env = map[string][]string{}
	}
	env["queryd"] = append(env["queryd"], "STRATA_TOOL_BUDGET=0", accessKeysEnv())
	st := upShaped(t, t.TempDir(), nil, false, env, nil)
	t.Cleanup(func() {
		st.Stop(15 * time.Second)
		dumpLogsOnFailure(t, st)
	})
	s3, err := bucket.Client(st.Env.S3Endpoint, st.Env.S3AccessKey, st.Env.S3SecretKey, false)
	if err != nil {
		t.Fatal(err)
	}
	nc, js, err := pipeline.Connect(st.Env.NATSURL, "e2e", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return &harness{t: t, stack: st, s3: s3, mcp: connect(t, st.Env.MCPURL, accessAdmin.key), js: js}
}

// putAccess uploads an object with tags and user metadata.
func (h *harness) putAccess(key, content, contentType string, tagMap, meta map[string]string) error {
	h.t.Helper()
	_, err := h.s3.PutObject(context.Background(), localstack.Bucket, key, strings.NewReader(content), int64(len(content)),
		minio.PutObjectOptions{ContentType: contentType, UserTags: tagMap, UserMetadata: meta})
	if err == nil {
		h.events++
	}
	return err
}

// ---- callers: one MCP client of one key over one transport ----

type accCaller struct {
	transport string
	key       accessKey
	c         *client.Client
}

// accAnswer is what a call answered: its text (JSON on success, the error
// text on failure) and, on success, the text parsed.
type accAnswer struct {
	text string
	err  bool
	out  any
}

func (a accAnswer) String() string { return accClip(a.text, 400) }

func accClip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// call calls a tool, or resources/list or resources/read (args "uri").
func (c *accCaller) call(tool string, args map[string]any) accAnswer {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	switch tool {
	case "resources/list":
		var uris []string
		req := mcp.ListResourcesRequest{}
		for range 100 {
			res, err := c.c.ListResourcesByPage(ctx, req)
			if err != nil {
				return accAnswer{text: "rpc error: " + err.Error(), err: true}
			}
			for _, r := range res.Resources {
				uris = append(uris, r.URI)
			}
			if res.NextCursor == "" {
				break
			}
			req.Params.Cursor = res.NextCursor
		}
		b, _ := json.Marshal(uris)
		var out any
		_ = json.Unmarshal(b, &out)
		return accAnswer{text: string(b), out: out}
	case "resources/read":
		req := mcp.ReadResourceRequest{}
		req.Params.URI = args["uri"].(string)
		res, err := c.c.ReadResource(ctx, req)
		if err != nil {
			return accAnswer{text: "rpc error: " + err.Error(), err: true}
		}
		var b strings.Builder
		for _, rc := range res.Contents {
			if tc, ok := rc.(mcp.TextResourceContents); ok {
				b.WriteString(tc.Text)
			}
		}
		return accAnswer{text: b.String(), out: b.String()}
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.c.CallTool(ctx, req)
	if err != nil {
		return accAnswer{text: "rpc error: " + err.Error(), err: true}
	}
	var b strings.Builder
	for _, ct := range res.Content {
		if tc, ok := ct.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.IsError {
		return accAnswer{text: b.String(), err: true}
	}
	a := accAnswer{text: b.String()}
	if err := json.Unmarshal(mcpclient.JSON(res), &a.out); err != nil {
		a.out = nil // view_chunk_image answers prose beside the picture
	}
	return a
}

// list returns out[key] as a list (nil if absent); out itself when it is one.
func (a accAnswer) list(key string) []any {
	switch v := a.out.(type) {
	case []any:
		return v
	case map[string]any:
		l, _ := v[key].([]any)
		return l
	}
	return nil
}

func (a accAnswer) field(key string) any {
	m, _ := a.out.(map[string]any)
	return m[key]
}

// mentions reports whether any item's JSON contains needle.
func accMentions(items []any, needle string) bool {
	for _, it := range items {
		b, _ := json.Marshal(it)
		if strings.Contains(string(b), needle) {
			return true
		}
	}
	return false
}

// accConnectHTTP opens a session pinned to a protocol version (legacy
// initialize handshake) and checks the version negotiated.
func accConnectHTTP(t *testing.T, url, key, version string) *client.Client {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(url, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + key}))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, client.WithProtocolVersion(version))
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		t.Fatalf("start %s: %v", version, err)
	}
	t.Cleanup(func() { c.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = version
	init.Params.ClientInfo = mcp.Implementation{Name: "access-e2e-" + version, Version: "1"}
	res, err := c.Initialize(ctx, init)
	if err != nil {
		t.Fatalf("initialize %s: %v", version, err)
	}
	if res.ProtocolVersion != version {
		t.Errorf("asked for protocol %s, server negotiated %s", version, res.ProtocolVersion)
	}
	return c
}

// accConnectStdio runs queryd as a child process speaking MCP on stdio as
// the holder of key, with the stack queryd's own configuration.
func accConnectStdio(t *testing.T, h *harness, key string) *client.Client {
	t.Helper()
	env := append(slices.Clone(h.stack.ServiceEnv["queryd"]), "STRATA_TRANSPORT=stdio", "STRATA_STDIO_API_KEY="+key, "STRATA_LOG_FORMAT=text")
	c, err := client.NewStdioMCPClient(filepath.Join(h.stack.BinDir(), "queryd"), env)
	if err != nil {
		t.Fatalf("start queryd on stdio: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "access-e2e-stdio", Version: "1"}
	res, err := c.Initialize(context.Background(), init)
	if err != nil {
		t.Fatalf("initialize over stdio: %v", err)
	}
	t.Logf("stdio negotiated protocol %s", res.ProtocolVersion)
	return c
}

// accTransport is a way a key's client reaches queryd.
type accTransport struct {
	name    string
	connect func(t *testing.T, key string) *client.Client
}

// accTransports: the harness's own client (mcpclient.Connect, the newest
// protocol), the versions TestEveryMCPClient drives through the TypeScript
// SDK, pinned with mcp-go's client, and stdio.
func accTransports(h *harness) []accTransport {
	url := h.stack.Env.MCPURL
	out := []accTransport{{"http-default", func(t *testing.T, key string) *client.Client { return connect(t, url, key) }}}
	for _, v := range []string{"2025-11-25", "2025-06-18", "2025-03-26"} {
		out = append(out, accTransport{"http-" + v, func(t *testing.T, key string) *client.Client { return accConnectHTTP(t, url, key, v) }})
	}
	return append(out, accTransport{"stdio", func(t *testing.T, key string) *client.Client { return accConnectStdio(t, h, key) }})
}

// ---- the documents ----

// accTarget is one kind of document the matrix looks for: a Markdown file
// with a unique token and headings, a PNG (view_chunk_image), and a file on
// a branch of its own (list_branches), all with the same groups.
type accTarget struct {
	name    string // the kind of groups
	folder  string // its own folder, so a folder's visibility is the target's
	token   string // unique word; also the Markdown file's name
	readers []string
	tags    map[string]string
	meta    map[string]string

	// Found as the admin.
	fileID, folderID, chunkID, chunkText, sectionID, imageChunkID string
	vector                                                        []float64
	missing                                                       []string // ids the admin could not read: cells needing them fail
}

func (tg *accTarget) mdPath() string  { return tg.folder + "/" + tg.token + ".md" }
func (tg *accTarget) pngPath() string { return tg.folder + "/" + tg.token + ".png" }
func (tg *accTarget) branch() string  { return tg.token + "-draft" }

func (tg *accTarget) markdown() string {
	return fmt.Sprintf("# %s notes\n\nThe %s paragraph describes the %s kind of document in plain words.\n\n"+
		"## Details\n\nEvery %s detail is written here once.\n\n## Appendix\n\nNothing else.\n", tg.token, tg.token, tg.name, tg.token)
}

// accDoc is one uploaded document, for the counts every key should see.
type accDoc struct {
	project, branch, path string
	readers               []string
	chunks                int
	common                bool // holds accCommonWord
}

func (d accDoc) key() string {
	if d.branch != "" {
		return d.project + "@" + d.branch + "/" + d.path
	}
	return d.project + "/" + d.path
}

// accCommonWord is in 12 public and 12 hr files (folder many/).
const (
	accCommonWord = "commonpangolin"
	accFillers    = 12
)

type accFixture struct {
	targets []*accTarget
	docs    []*accDoc
	// fillerVector is the vector of a public filler chunk (search_files top 10).
	fillerVector []float64
}

// accUpload puts every document and waits until each is embedded.
func accUpload(t *testing.T, h *harness) *accFixture {
	fx := &accFixture{targets: []*accTarget{
		{name: "no-groups", folder: "public", token: "openquokka"},
		{name: "groups-tag", folder: "hr", token: "secretwombat", readers: []string{"hr"}, tags: map[string]string{"strata-groups": "hr"}},
		{name: "groups-metadata", folder: "payroll", token: "memonarwhal", readers: []string{"hr", "payroll"}, meta: map[string]string{"strata-groups": "hr, payroll"}},
		{name: "bad-groups-metadata", folder: "bad", token: "brokenaxolotl", readers: adminsOnly, meta: map[string]string{"strata-groups": "HR"}},
		{name: "bad-groups-tag", folder: "badtag", token: "taggedplatypus", readers: adminsOnly, tags: map[string]string{"strata-groups": accBadTag(t, h)}},
	}}
	put := func(d *accDoc, content, contentType string, tagMap, meta map[string]string) {
		t.Helper()
		if err := h.putAccess(d.key(), content, contentType, tagMap, meta); err != nil {
			t.Fatalf("put %s: %v", d.key(), err)
		}
		fx.docs = append(fx.docs, d)
	}
	png := pngFile(t)
	for _, tg := range fx.targets {
		put(&accDoc{project: "acme", path: tg.mdPath(), readers: tg.readers}, tg.markdown(), "text/markdown", tg.tags, tg.meta)
		put(&accDoc{project: "acme", path: tg.pngPath(), readers: tg.readers}, png, "image/png", tg.tags, tg.meta)
		put(&accDoc{project: "acme", branch: tg.branch(), path: tg.folder + "/draft.md", readers: tg.readers},
			"# Draft\n\nA draft on the "+tg.branch()+" branch.\n", "text/markdown", tg.tags, tg.meta)
	}
	for i := 1; i <= accFillers; i++ {
		put(&accDoc{project: "acme", path: fmt.Sprintf("many/pub-%02d.md", i), common: true},
			fmt.Sprintf("# Public %02d\n\nThe %s note number %02d for the public board.\n", i, accCommonWord, i), "text/markdown", nil, nil)
		put(&accDoc{project: "acme", path: fmt.Sprintf("many/hr-%02d.md", i), readers: []string{"hr"}, common: true},
			fmt.Sprintf("# People %02d\n\nThe %s note number %02d for the people board.\n", i, accCommonWord, i), "text/markdown", map[string]string{"strata-groups": "hr"}, nil)
	}
	put(&accDoc{project: "beta", path: "other.md"}, "# Other\n\nThe betaotter page of project beta.\n", "text/markdown", nil, nil)
	h.settle()

	// Wait, as each project's admin, until every document is embedded.
	admins := map[string]*accCaller{
		"acme": {transport: "http-default", key: accessAdmin, c: h.mcp},
		"beta": {transport: "http-default", key: accessOther, c: connect(t, h.stack.Env.MCPURL, accessOther.key)},
	}
	for _, d := range fx.docs {
		a := admins[d.project].call("object_status", map[string]any{"key": d.key(), "wait_seconds": 30})
		if a.err || a.field("state") != pipeline.StateEmbedded {
			t.Fatalf("%s not embedded as its project's admin sees it: %s", d.key(), a)
		}
	}
	// Chunk counts, and the ids the probes use, as the admin reads them.
	for _, d := range fx.docs {
		args := map[string]any{"project_reference": d.project, "file_path": d.path}
		if d.branch != "" {
			args["branch_id"] = ids.Branch(d.project, d.branch)
		}
		a := admins[d.project].call("list_file_chunks", args)
		if a.err {
			t.Errorf("admin cannot list the chunks of %s: %s", d.key(), a)
			continue
		}
		d.chunks = len(a.list("data"))
	}
	admin := admins["acme"]
	for _, tg := range fx.targets {
		tg.fileID = ids.File("acme", "", tg.mdPath())
		tg.folderID = ids.Folder("acme", "", tg.folder)
		a := admin.call("list_file_chunks", map[string]any{"project_reference": "acme", "file_path": tg.mdPath()})
		for _, c := range a.list("data") {
			if m := c.(map[string]any); strings.Contains(m["content"].(string), tg.token) {
				tg.chunkID, tg.chunkText = m["id"].(string), m["content"].(string)
				break
			}
		}
		if tg.chunkID == "" {
			tg.missing = append(tg.missing, "chunk: "+a.String())
			continue
		}
		if a := admin.call("get_info", map[string]any{"path_part_id": tg.chunkID}); a.err || a.field("section_id") == nil {
			tg.missing = append(tg.missing, "section: "+a.String())
		} else {
			tg.sectionID = a.field("section_id").(string)
		}
		if v := accVector(admin, tg.chunkID); v == nil {
			tg.missing = append(tg.missing, "vector")
		} else {
			tg.vector = v
		}
		a = admin.call("list_file_chunks", map[string]any{"project_reference": "acme", "file_path": tg.pngPath()})
		if l := a.list("data"); len(l) > 0 {
			tg.imageChunkID = l[0].(map[string]any)["id"].(string)
		} else {
			tg.missing = append(tg.missing, "image chunk: "+a.String())
		}
	}
	a := admin.call("list_file_chunks", map[string]any{"project_reference": "acme", "file_path": "many/pub-01.md"})
	if l := a.list("data"); len(l) > 0 {
		fx.fillerVector = accVector(admin, l[0].(map[string]any)["id"].(string))
	}
	if fx.fillerVector == nil {
		t.Errorf("no vector of many/pub-01.md as the admin reads it (%s): search_files' top 10 is not checked", a)
	}
	return fx
}

// accBadTag is the invalid strata-groups tag value the bad-tag target gets:
// "HR!" if an upload keeps it, else "HR" (a legal tag value, an invalid
// group). minio-go drops UserTags that fail its tag check ("!" is not an S3
// tag character; api-put-object.go ignores tags.NewTags' error) and uploads
// the object without tags, successfully: the object is then readable by the
// whole project. That is tried on the assets bucket, which sends no events.
func accBadTag(t *testing.T, h *harness) string {
	ctx := context.Background()
	const probe = "access-e2e/bad-tag-probe"
	_, err := h.s3.PutObject(ctx, localstack.AssetsBucket, probe, strings.NewReader("x"), 1,
		minio.PutObjectOptions{UserTags: map[string]string{"strata-groups": "HR!"}})
	if err != nil {
		t.Logf("PUT with the tag strata-groups=HR! refused (%v): the bad tag is HR", err)
		return "HR"
	}
	defer h.s3.RemoveObject(ctx, localstack.AssetsBucket, probe, minio.RemoveObjectOptions{})
	got, err := h.s3.GetObjectTagging(ctx, localstack.AssetsBucket, probe, minio.GetObjectTaggingOptions{})
	if err != nil || got.ToMap()["strata-groups"] != "HR!" {
		t.Logf("a PUT with UserTags strata-groups=HR! succeeded but the object has tags %q (%v): the bad tag is HR", got, err)
		return "HR"
	}
	return "HR!"
}

// accVector is a chunk's vector, as get_file_chunk_embedding gives it.
func accVector(c *accCaller, chunkID string) []float64 {
	a := c.call("get_file_chunk_embedding", map[string]any{"project_reference": "acme", "chunk_id": chunkID, "include_vector": true})
	raw, _ := a.field("vector").([]any)
	var v []float64
	for _, f := range raw {
		v = append(v, f.(float64))
	}
	return v
}

// ---- probes: one per tool (and id kind), each saying whether the target was visible ----

type accCell struct {
	visible bool
	answer  string
	problem string // besides visibility: a hidden answer unlike a missing one's
}

type accRun struct {
	c  *accCaller
	fx *accFixture
}

// accRandStem is a random lowercase word of n letters.
func accRandStem(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + rand.IntN(26))
	}
	return string(b)
}

// accRandID is a random UUID of the shape of Strata's (version 5).
func accRandID() string { return uuid.NewSHA1(uuid.New(), []byte("strata-access-e2e")).String() }

// probe calls tool with mk(value). The target is visible when seen accepts
// the answer. Otherwise the answer must be the one for mk(random), a thing
// that does not exist, with value and random replaced by the same
// placeholder: byte for byte, error or not (always), or only when the answer is
// an error (!always: listings, whose random counterpart is a missing
// project or folder).
func (x *accRun) probe(tool string, mk func(string) map[string]any, value, random string, always bool, seen func(accAnswer) bool) accCell {
	a := x.c.call(tool, mk(value))
	cell := accCell{visible: seen(a), answer: a.String()}
	if cell.visible || value == "" || (!always && !a.err) {
		return cell
	}
	b := x.c.call(tool, mk(random))
	hidden, missing := accStable(strings.ReplaceAll(a.text, value, "<ID>")), accStable(strings.ReplaceAll(b.text, random, "<ID>"))
	if hidden != missing || a.err != b.err {
		cell.problem = fmt.Sprintf("hidden answer (error=%v) differs from a missing one's (error=%v):\n      hidden:  %s\n      missing: %s",
			a.err, b.err, accClip(hidden, 400), accClip(missing, 400))
	}
	return cell
}

// accVolatile are answer fields that differ between two calls whatever
// they ask (object_status's own duration).
var accVolatile = regexp.MustCompile(`"waited_ms":\d+`)

func accStable(s string) string { return accVolatile.ReplaceAllString(s, `"waited_ms":<N>`) }

func accOK(a accAnswer) bool { return !a.err }

// accFixed is mk for a call without a variable part.
func accFixed(args map[string]any) func(string) map[string]any {
	return func(string) map[string]any { return args }
}

type accProbe struct {
	name  string
	needs func(tg *accTarget) string // "" or what the probe needs and the target lacks
	run   func(x *accRun, tg *accTarget) accCell
}

func accNeedChunk(tg *accTarget) string {
	if tg.chunkID == "" {
		return "the target's chunk id (admin could not list it)"
	}
	return ""
}

var accProbes = []accProbe{
	// Searches: the token is found only when the document is readable.
	{name: "search_keyword", run: func(x *accRun, tg *accTarget) accCell {
		return x.probe("search_keyword", accFixed(map[string]any{"query": tg.token, "top_k": 20}), "", "", false,
			func(a accAnswer) bool { return accMentions(a.list("results"), tg.token) })
	}},
	{name: "search_keyword-scoped", run: func(x *accRun, tg *accTarget) accCell {
		return x.probe("search_keyword", func(id string) map[string]any {
			return map[string]any{"query": tg.token, "parent_path_part_ids": []string{id}}
		}, tg.fileID, accRandID(), true, func(a accAnswer) bool { return !a.err && accMentions(a.list("results"), tg.token) })
	}},
	{name: "hybrid_search", run: func(x *accRun, tg *accTarget) accCell {
		return x.probe("hybrid_search", accFixed(map[string]any{"query": tg.token, "top_k": 20}), "", "", false,
			func(a accAnswer) bool { return accMentions(a.list("results"), tg.token) })
	}},
	{name: "hybrid_search-project", run: func(x *accRun, tg *accTarget) accCell {
		return x.probe("hybrid_search", func(p string) map[string]any {
			return map[string]any{"query": tg.token, "top_k": 20, "project_reference": p}
		}, "acme", accRandStem(4), false, func(a accAnswer) bool { return accMentions(a.list("results"), tg.token) })
	}},
	{name: "search_knowledge", needs: accNeedChunk, run: func(x *accRun, tg *accTarget) accCell {
		return x.probe("search_knowledge", accFixed(map[string]any{"query": tg.chunkText, "top_k": 20}), "", "", false,
			func(a accAnswer) bool { return accMentions(a.list("results"), tg.token) })
	}},
	{name: "search_knowledge-scoped", needs: accNeedChunk, run: func(x *accRun, tg *accTarget) accCell {
		return x.probe("search_knowledge", func(id string) map[string]any {
			return map[string]any{"query": tg.chunkText, "parent_path_part_ids": []string{id}}
		}, tg.fileID, accRandID(), true, func(a accAnswer) bool { return !a.err && accMentions(a.list("results"), tg.token) })
	}},
	{name: "query_documents", run: func(x *accRun, tg *accTarget) accCell {
		return x.probe("query_documents", accFixed(map[string]any{"query": tg.token, "limit": 20}), "", "", false,
			func(a accAnswer) bool { return accMentions(a.list("results"), tg.token) })
	}},
	{name: "search_files", needs: func(tg *accTarget) string {
		if tg.vector == nil {
			return "the target chunk's vector (admin's get_file_chunk_embedding gave none)"
		}
		return ""
	}, run: func(x *accRun, tg *accTarget) accCell {
		return x.probe("search_files", func(p string) map[string]any {
			return map[string]any{"project_reference": p, "query_vector": tg.vector, "dimension": "512", "similarity_threshold": 0.9, "limit": 100}
		}, "acme", accRandStem(4), false, func(a accAnswer) bool { return accMentions(a.list("data"), tg.chunkID) })
	}},

	// Reads by id or path: a hidden document answers like a missing one.
	{name: "get_file_chunk", needs: accNeedChunk, run: func(x *accRun, tg *accTarget) accCell {
		return x.probe("get_file_chunk", func(id string) map[string]any {
			return map[string]any{"project_reference": "acme", "chunk_id": id}
		}, tg.chunkID, accRandID(), true, accOK)
	}},
	{name: "get_file_chunk_embedding", needs: accNeedChunk, run: func(x *accRun, tg *accTarget) accCell {
		return x.probe("get_file_chunk_embedding", func(id string) map[string]any {
			return map[string]any{"project_reference": "acme", "chunk_id": id, "include_vector": true}
		}, tg.chunkID, accRandID(), true, accOK)
	}},
	{name: "list_file_chunks", run: func(x *accRun, tg *accTarget) accCell {
		return x.probe("list_file_chunks", func(s string) map[string]any {
			return map[string]any{"project_reference": "acme", "file_path": tg.folder + "/" + s + ".md"}
		}, tg.token, accRandStem(len(tg.token)), true, accOK)
	}},
	{name: "read-document", run: func(x *accRun, tg *accTarget) accCell {
		return x.probe("read", func(id string) map[string]any { return map[string]any{"path_part_id": id} }, tg.fileID, accRandID(), true, accOK)
	}},
	{name: "read-section", needs: func(tg *accTarget) string {
		if tg.sectionID == "" {
			return "the target's section id (admin's get_info of its chunk gave none)"
		}
		return ""
	}, run: func(x *accRun, tg *accTarget) accCell {
		return x.probe("read", func(id string) map[string]any { return map[string]any{"path_part_id": id} }, tg.sectionID, accRandID(), true, accOK)
	}},
	{name: "read-chunk", needs: accNeedChunk, run: func(x *accRun, tg *accTarget) accCell {
		return x.probe("read", func(id string) map[string]any { return map[string]any{"path_part_id": id} }, tg.chunkID, accRandID(), true, accOK)
	}},
	{name: "read_around", needs: accNeedChunk, run: func(x *accRun, tg *accTarget) accCell {
		return x.probe("read_around", func(id string) map[string]any { return map[string]any{"chunk_id": id} }, tg.chunkID, accRandID(), true, accOK)
	}},
	{name: "get_info-document", run: func(x *accRun, tg *accTarget) accCell {
		return x.probe("get_info", func(id string) map[string]any { return map[string]any{"path_part_id": id} }, tg.fileID, accRandID(), true, accOK)
	}},
	{name: "get_info-section", needs: func(tg *accTarget) string {
		if tg.sectionID == "" {
			return "the target's section id"
		}
		return ""
	}, run: func(x *accRun, tg *accTarget) accCell {
		return x.probe("get_info", func(id string) map[string]any { return map[string]any{"path_part_id": id} }, tg.sectionID, accRandID(), true, accOK)
	}},
	{name: "get_info-chunk", needs: accNeedChunk, run: func(x *accRun, tg *accTarget) accCell {
		return x.probe("get_info", func(id string) map[string]any { return map[string]any{"path_part_id": id} }, tg.chunkID, accRandID(), true, accOK)
	}},
	{name: "get_info-folder", run: func(x *accRun, tg *accTarget) accCell {
		return x.probe("get_info", func(id string) map[string]any { return map[string]any{"path_part_id": id} }, tg.folderID, accRandID(), true, accOK)
	}},
	{name: "read_chunk_neighbors", run: func(x *accRun, tg *accTarget) accCell {
		return x.probe("read_chunk_neighbors", func(s string) map[string]any {
			return map[string]any{"filePath": "/acme/" + tg.folder + "/" + s + ".md", "chunkIndex": 0}
		}, tg.token, accRandStem(len(tg.token)), true, accOK)
	}},
	{name: "view_chunk_image", needs: func(tg *accTarget) string {
		if tg.imageChunkID == "" {
			return "the target PNG's chunk id"
		}
		return ""
	}, run: func(x *accRun, tg *accTarget) accCell {
		return x.probe("view_chunk_image", func(id string) map[string]any { return map[string]any{"chunk_id": id} }, tg.imageChunkID, accRandID(), true, accOK)
	}},
	{name: "resources/read", run: func(x *accRun, tg *accTarget) accCell {
		return x.probe("resources/read", func(s string) map[string]any {
			return map[string]any{"uri": "strata://acme/" + tg.folder + "/" + s + ".md"}
		}, tg.token, accRandStem(len(tg.token)), true, accOK)
	}},
	{name: "list_contents-folder", run: func(x *accRun, tg *accTarget) accCell {
		return x.probe("list_contents", func(id string) map[string]any { return map[string]any{"path_part_id": id} }, tg.folderID, accRandID(), true, accOK)
	}},
	{name: "object_status", run: func(x *accRun, tg *accTarget) accCell {
		return x.probe("object_status", func(s string) map[string]any {
			return map[string]any{"key": "acme/" + tg.folder + "/" + s + ".md"}
		}, tg.token, accRandStem(len(tg.token)), true, func(a accAnswer) bool { return !a.err && a.field("state") != "unknown" })
	}},

	// Listings show only what is allowed.
	{name: "list_contents-project", run: func(x *accRun, tg *accTarget) accCell {
		return x.probe("list_contents", func(id string) map[string]any { return map[string]any{"path_part_id": id} },
			ids.Project("acme"), accRandID(), false, func(a accAnswer) bool { return accMentions(a.list("items"), tg.folderID) })
	}},
	{name: "find", run: func(x *accRun, tg *accTarget) accCell {
		return x.probe("find", accFixed(map[string]any{"name": tg.token}), "", "", false,
			func(a accAnswer) bool { return accMentions(a.list("results"), "/acme/"+tg.mdPath()) })
	}},
	{name: "find-folder", run: func(x *accRun, tg *accTarget) accCell {
		return x.probe("find", accFixed(map[string]any{"name": tg.folder, "kind": "FOLDER"}), "", "", false,
			func(a accAnswer) bool { return accMentions(a.list("results"), tg.folderID) })
	}},
	{name: "list_files", run: func(x *accRun, tg *accTarget) accCell {
		return x.probe("list_files", accFixed(map[string]any{}), "", "", false,
			func(a accAnswer) bool { return accMentions(a.list("files"), `"/acme/`+tg.mdPath()+`"`) })
	}},
	{name: "list_files-scope", run: func(x *accRun, tg *accTarget) accCell {
		return x.probe("list_files", accFixed(map[string]any{"scope": "/acme/" + tg.folder}), "", "", false,
			func(a accAnswer) bool { return accMentions(a.list("files"), `"/acme/`+tg.mdPath()+`"`) })
	}},
	{name: "list_files-branch", run: func(x *accRun, tg *accTarget) accCell {
		return x.probe("list_files", accFixed(map[string]any{}), "", "", false,
			func(a accAnswer) bool { return accMentions(a.list("files"), `"/acme@`+tg.branch()+`/`) })
	}},
	{name: "list_changes", run: func(x *accRun, tg *accTarget) accCell {
		return x.probe("list_changes", func(p string) map[string]any { return map[string]any{"project_reference": p, "limit": 500} },
			"acme", accRandStem(4), false, func(a accAnswer) bool { return accMentions(a.list("changes"), `"path":"`+tg.mdPath()+`"`) })
	}},
	{name: "list_branches", run: func(x *accRun, tg *accTarget) accCell {
		return x.probe("list_branches", func(p string) map[string]any { return map[string]any{"project_reference": p} },
			"acme", accRandStem(4), false, func(a accAnswer) bool { return accMentions(a.list("branches"), `"name":"`+tg.branch()+`"`) })
	}},
	{name: "resources/list", run: func(x *accRun, tg *accTarget) accCell {
		return x.probe("resources/list", accFixed(nil), "", "", false,
			func(a accAnswer) bool { return accMentions(a.list(""), "strata://acme/"+tg.mdPath()) })
	}},
}

// accFailure is one failing cell, for the summary.
type accFailure struct{ cell, want, got, answer string }

type accReport struct {
	mu    sync.Mutex
	fails []accFailure
}

func (r *accReport) add(f accFailure) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fails = append(r.fails, f)
}

// TestAccessMatrix: every tool x key (admin, member, non-member, another
// project's admin) x kind of groups (none, a tag, metadata, a bad tag, bad
// metadata), over streamable HTTP at each protocol version and over stdio.
func TestAccessMatrix(t *testing.T) {
	h := startAccess(t)
	began := time.Now()
	fx := accUpload(t, h)
	for _, tg := range fx.targets {
		if len(tg.missing) > 0 {
			t.Errorf("admin could not read every id of %s (%s): %v", tg.name, tg.mdPath(), tg.missing)
		}
	}
	t.Logf("uploaded and embedded %d documents in %s", len(fx.docs), time.Since(began).Round(time.Millisecond))
	report := &accReport{}
	began = time.Now()
	t.Run("matrix", func(t *testing.T) {
		for _, tr := range accTransports(h) {
			t.Run(tr.name, func(t *testing.T) {
				t.Parallel()
				for _, k := range accessKeys {
					x := &accRun{c: &accCaller{transport: tr.name, key: k, c: tr.connect(t, k.key)}, fx: fx}
					t.Run(k.name, func(t *testing.T) {
						for _, p := range accProbes {
							for _, tg := range fx.targets {
								cell := tr.name + " | " + k.name + " | " + p.name + " | " + tg.name
								if p.needs != nil {
									if why := p.needs(tg); why != "" {
										t.Errorf("%s: not run: needs %s", cell, why)
										report.add(accFailure{cell: cell, want: "run", got: "not run", answer: why})
										continue
									}
								}
								want := k.reads("acme", tg.readers)
								got := p.run(x, tg)
								if got.visible != want {
									t.Errorf("%s: visible=%v, want %v; answer: %s", cell, got.visible, want, got.answer)
									report.add(accFailure{cell: cell, want: fmt.Sprintf("visible=%v", want), got: fmt.Sprintf("visible=%v", got.visible), answer: got.answer})
								}
								if got.problem != "" {
									t.Errorf("%s: %s", cell, got.problem)
									report.add(accFailure{cell: cell, want: "hidden == missing", got: "differs", answer: got.problem})
								}
							}
						}
						x.checkCounts(t, report)
					})
				}
			})
		}
	})
	t.Logf("matrix: %d transports x %d keys x %d probes x %d targets in %s", len(accTransports(h)), len(accessKeys), len(accProbes),
		len(fx.targets), time.Since(began).Round(time.Millisecond))
	if len(report.fails) > 0 {
		sort.Slice(report.fails, func(i, j int) bool { return report.fails[i].cell < report.fails[j].cell })
		var b strings.Builder
		fmt.Fprintf(&b, "%d failing cells (transport | key | probe | target: want, got, answer):\n", len(report.fails))
		for _, f := range report.fails {
			fmt.Fprintf(&b, "  %s: want %s, got %s\n      %s\n", f.cell, f.want, f.got, strings.ReplaceAll(f.answer, "\n", "\n      "))
		}
		t.Log(b.String())
	}
}

// readable reports whether the caller's key reads d.
func (x *accRun) readable(d *accDoc) bool { return x.c.key.reads(d.project, d.readers) }

// docAt finds an uploaded document.
func (x *accRun) docAt(project, branch, path string) *accDoc {
	for _, d := range x.fx.docs {
		if d.project == project && d.branch == branch && d.path == path {
			return d
		}
	}
	return nil
}

// checkCounts: counts, failures and top-k answers are those of the
// documents the key reads.
func (x *accRun) checkCounts(t *testing.T, report *accReport) {
	fail := func(what, want, got, answer string) {
		cell := x.c.transport + " | " + x.c.key.name + " | " + what
		t.Errorf("%s: want %s, got %s; answer: %s", cell, want, got, answer)
		report.add(accFailure{cell: cell, want: want, got: got, answer: answer})
	}
	k := x.c.key
	var docs, chunks, mainChunks, common int
	var bad []string
	for _, d := range x.fx.docs {
		if !x.readable(d) {
			continue
		}
		docs++
		chunks += d.chunks
		if d.branch == "" {
			mainChunks += d.chunks
		}
		if d.common {
			common++
		}
		if k.admin && slices.Equal(d.readers, adminsOnly) {
			bad = append(bad, d.key())
		}
	}
	slices.Sort(bad)

	// status: the key's project only, its counts, and the bad-groups
	// documents among the failures for its admin only.
	st := x.c.call("status", map[string]any{})
	var projects []string
	for _, p := range st.list("projects") {
		ps := p.(map[string]any)
		projects = append(projects, ps["project"].(string))
		if ps["project"] != k.project {
			continue
		}
		if n := int(ps["documentCount"].(float64)); n != docs {
			fail("status documentCount", fmt.Sprint(docs), fmt.Sprint(n), st.String())
		}
		if n := int(ps["chunkCount"].(float64)); n != chunks {
			fail("status chunkCount", fmt.Sprint(chunks), fmt.Sprint(n), st.String())
		}
		var failed []string
		for _, f := range ps["failures"].([]any) {
			fm := f.(map[string]any)
			d := accDoc{project: k.project, path: fm["path"].(string)}
			if b, _ := fm["branch"].(string); b != "" {
				d.branch = b
			}
			failed = append(failed, d.key())
			if !strings.Contains(fmt.Sprint(fm["error"]), "HR") {
				fail("status failure reason of "+d.key(), `the bad value "HR"`, fmt.Sprint(fm["error"]), st.String())
			}
		}
		slices.Sort(failed)
		if !slices.Equal(failed, bad) {
			fail("status failures", fmt.Sprint(bad), fmt.Sprint(failed), st.String())
		}
	}
	if !slices.Equal(projects, []string{k.project}) {
		fail("status projects", fmt.Sprint([]string{k.project}), fmt.Sprint(projects), st.String())
	}
	if n, _ := st.field("documentCount").(float64); int(n) != docs {
		fail("status total documentCount", fmt.Sprint(docs), fmt.Sprint(n), st.String())
	}

	// list_failures, over every project and for the key's own.
	for _, args := range []map[string]any{{}, {"project_reference": k.project}} {
		lf := x.c.call("list_failures", args)
		var failed []string
		for _, f := range lf.list("failures") {
			fm := f.(map[string]any)
			failed = append(failed, fm["key"].(string))
			if !strings.Contains(fmt.Sprint(fm["reason"]), "HR") {
				fail(fmt.Sprintf("list_failures%v reason of %v", args, fm["key"]), `the bad value "HR"`, fmt.Sprint(fm["reason"]), lf.String())
			}
		}
		slices.Sort(failed)
		if lf.err || !slices.Equal(failed, bad) || lf.field("total") != float64(len(bad)) {
			fail(fmt.Sprintf("list_failures%v", args), fmt.Sprint(bad), fmt.Sprint(failed), lf.String())
		}
	}
	if k.project != "acme" { // acme's failures to another project's key: a missing project's answer
		a := x.c.call("list_failures", map[string]any{"project_reference": "acme"})
		b := x.c.call("list_failures", map[string]any{"project_reference": "zqxw"})
		if !a.err || strings.ReplaceAll(a.text, "acme", "<P>") != strings.ReplaceAll(b.text, "zqxw", "<P>") {
			fail("list_failures(acme)", "a missing project's answer: "+b.String(), a.String(), a.String())
		}
	}

	// get_info tells an admin who reads a document (access, groups, the
	// bad value); to anyone else it says nothing of the document's groups.
	for _, tg := range x.fx.targets {
		if !k.reads("acme", tg.readers) {
			continue // hidden: the matrix's get_info-document cell covers it
		}
		gi := x.c.call("get_info", map[string]any{"path_part_id": tg.fileID})
		access, _ := gi.field("access").(string)
		groups := fmt.Sprint(gi.field("groups"))
		accessErr := fmt.Sprint(gi.field("access_error"))
		wantAccess, wantGroups := "", fmt.Sprint(nil)
		if k.admin {
			switch {
			case tg.readers == nil:
				wantAccess = "project"
			case slices.Equal(tg.readers, adminsOnly):
				wantAccess = "admins"
			default:
				wantAccess, wantGroups = "groups", fmt.Sprint(toAny(tg.readers))
			}
		}
		if gi.err || access != wantAccess || groups != wantGroups {
			fail("get_info access of "+tg.name, fmt.Sprintf("access %q groups %s", wantAccess, wantGroups), fmt.Sprintf("access %q groups %s", access, groups), gi.String())
		}
		if wantAccess == "admins" && !strings.Contains(accessErr, "HR") {
			fail("get_info access_error of "+tg.name, `the bad value "HR"`, accessErr, gi.String())
		}
	}

	// The root lists the key's project only.
	root := x.c.call("list_contents", map[string]any{})
	var roots []string
	for _, it := range root.list("items") {
		roots = append(roots, it.(map[string]any)["name"].(string))
	}
	if !slices.Equal(roots, []string{k.project}) || root.field("total") != 1.0 {
		fail("list_contents root", fmt.Sprint([]string{k.project}), fmt.Sprint(roots), root.String())
	}

	// Counts of the fillers: find totals, and the folder's listing total.
	readableFillers := func(prefix string) int {
		n := 0
		for _, d := range x.fx.docs {
			if d.common && strings.HasPrefix(d.path, "many/"+prefix) && x.readable(d) {
				n++
			}
		}
		return n
	}
	for _, prefix := range []string{"pub-", "hr-"} {
		f := x.c.call("find", map[string]any{"name": prefix, "kind": "DOCUMENT", "limit": 100})
		if n, _ := f.field("total").(float64); f.err || int(n) != readableFillers(prefix) || len(f.list("results")) != readableFillers(prefix) {
			fail("find "+prefix+" total", fmt.Sprint(readableFillers(prefix)), fmt.Sprintf("%v (%d listed)", f.field("total"), len(f.list("results"))), f.String())
		}
	}
	many := ids.Folder("acme", "", "many")
	lc := x.c.call("list_contents", map[string]any{"path_part_id": many, "limit": 100})
	if k.project == "acme" {
		want := readableFillers("")
		if n, _ := lc.field("total").(float64); lc.err || int(n) != want || len(lc.list("items")) != want {
			fail("list_contents many/ total", fmt.Sprint(want), fmt.Sprintf("%v (%d listed)", lc.field("total"), len(lc.list("items"))), lc.String())
		}
	} else {
		missing := ids.Folder("acme", "", "zzzz")
		b := x.c.call("list_contents", map[string]any{"path_part_id": missing, "limit": 100})
		if strings.ReplaceAll(lc.text, many, "<ID>") != strings.ReplaceAll(b.text, missing, "<ID>") {
			fail("list_contents many/", "a missing folder's answer: "+b.String(), lc.String(), lc.String())
		}
	}

	// Top 10 of the common word: exactly 10 hits when the key reads 10 or
	// more, and every hit readable.
	type topK struct {
		tool  string
		args  map[string]any
		list  string
		want  int // -1: at most the readable ones, all readable
		place func(m map[string]any) (project, branch, path string)
	}
	hitPlace := func(m map[string]any) (string, string, string) {
		b, _ := m["branch"].(string)
		return fmt.Sprint(m["project"]), b, fmt.Sprint(m["document_path"])
	}
	want := func(n int) int {
		if n >= 10 {
			return 10
		}
		return -1
	}
	checks := []topK{
		{"search_keyword", map[string]any{"query": accCommonWord, "top_k": 10}, "results", min(10, common), hitPlace},
		{"hybrid_search", map[string]any{"query": accCommonWord, "top_k": 10}, "results", want(mainChunks), hitPlace},
		{"search_knowledge", map[string]any{"query": accCommonWord + " note for the board", "top_k": 10}, "results", want(mainChunks), hitPlace},
		{"query_documents", map[string]any{"query": accCommonWord, "limit": 10}, "results", want(mainChunks), func(m map[string]any) (string, string, string) {
			fp := strings.TrimPrefix(fmt.Sprint(m["filePath"]), "/")
			head, path, _ := strings.Cut(fp, "/")
			project, branch, _ := strings.Cut(head, "@")
			return project, branch, path
		}},
	}
	if k.project == "acme" && x.fx.fillerVector != nil {
		checks = append(checks, topK{"search_files", map[string]any{"project_reference": "acme", "query_vector": x.fx.fillerVector, "dimension": "512",
			"limit": 10, "similarity_threshold": 0}, "data", want(mainChunks), func(m map[string]any) (string, string, string) {
			c := m["chunk"].(map[string]any)
			return "acme", "", fmt.Sprint(c["file_path"])
		}})
	}
	for _, c := range checks {
		a := x.c.call(c.tool, c.args)
		hits := a.list(c.list)
		if a.err || (c.want >= 0 && len(hits) != c.want) {
			fail(c.tool+" top 10 of "+accCommonWord, fmt.Sprintf("%d hits", c.want), fmt.Sprintf("%d hits", len(hits)), a.String())
			continue
		}
		for _, hit := range hits {
			project, branch, path := c.place(hit.(map[string]any))
			if d := x.docAt(project, branch, path); d == nil || !x.readable(d) {
				fail(c.tool+" top 10 of "+accCommonWord, "only readable documents", fmt.Sprintf("a hit in %s@%s/%s", project, branch, path), a.String())
				break
			}
		}
	}
}

// TestAccessTagChange: while a member searches in a loop, the hr
// document's tag becomes finance. Within seconds the member no longer finds
// it and the finance key does, without re-ingesting, and list_changes since
// the sequence before says deleted to the one and added to the other.
func TestAccessTagChange(t *testing.T) {
	h := startAccess(t)
	const token = "secretwombat"
	const key = "acme/hr/" + token + ".md"
	if err := h.putAccess(key, "# Salaries\n\nThe "+token+" memo lists the salary bands.\n\n## Bands\n\nBand four is under review.\n",
		"text/markdown", map[string]string{"strata-groups": "hr"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := h.putAccess("acme/public/open.md", "# Open\n\nThe openquokka menu.\n", "text/markdown", nil, nil); err != nil {
		t.Fatal(err)
	}
	h.settle()
	url := h.stack.Env.MCPURL
	admin := &accCaller{transport: "http-default", key: accessAdmin, c: h.mcp}
	member := &accCaller{transport: "http-default", key: accessMember, c: connect(t, url, accessMember.key)}
	finance := &accCaller{transport: "http-default", key: accessFinance, c: connect(t, url, accessFinance.key)}
	if a := admin.call("object_status", map[string]any{"key": key, "wait_seconds": 30}); a.field("searchable") != true {
		t.Fatalf("not searchable: %s", a)
	}
	sees := func(c *accCaller) (bool, accAnswer) {
		a := c.call("search_keyword", map[string]any{"query": token})
		return !a.err && accMentions(a.list("results"), token), a
	}
	if ok, a := sees(member); !ok {
		t.Fatalf("before the change the member must find the hr document: %s", a)
	}
	if ok, a := sees(finance); ok {
		t.Fatalf("before the change the finance key must not find the hr document: %s", a)
	}
	chunksBefore := admin.call("list_file_chunks", map[string]any{"project_reference": "acme", "file_path": "hr/" + token + ".md"})
	before := admin.call("list_changes", map[string]any{"project_reference": "acme"})
	seq, _ := before.field("next_since_sequence").(float64)
	if before.err || seq == 0 {
		t.Fatalf("list_changes before the change: %s", before)
	}

	// A member's client keeps searching while the tag changes.
	type look struct {
		at   time.Time
		seen bool
	}
	var looks []look
	var looksMu sync.Mutex
	looksAfter := func(at time.Time) (n int) { // calls answered after at
		looksMu.Lock()
		defer looksMu.Unlock()
		for _, l := range looks {
			if l.at.After(at) {
				n++
			}
		}
		return n
	}
	stop := make(chan struct{})
	loopDone := make(chan struct{})
	looper := &accCaller{transport: "http-default", key: accessMember, c: connect(t, url, accessMember.key)}
	loopStart := time.Now()
	go func() {
		defer close(loopDone)
		for {
			select {
			case <-stop:
				return
			default:
			}
			ok, _ := sees(looper)
			looksMu.Lock()
			looks = append(looks, look{time.Now(), ok})
			looksMu.Unlock()
		}
	}()
	waitUntil(t, "the looping member's first searches before the tag change", 60*time.Second, func() (bool, string) {
		n := looksAfter(loopStart)
		return n >= 2, fmt.Sprintf("%d calls answered", n)
	})

	newTags, err := tags.MapToObjectTags(map[string]string{"strata-groups": "finance"})
	if err != nil {
		t.Fatal(err)
	}
	announcements := watchRelabels(t, h)
	changed := time.Now()
	if err := h.s3.PutObjectTagging(context.Background(), localstack.Bucket, key, newTags, minio.PutObjectTaggingOptions{}); err != nil {
		t.Fatalf("put tagging: %v", err)
	}
	h.events++
	var memberLost, financeGained time.Duration
	deadline := changed.Add(10 * time.Second)
	for memberLost == 0 || financeGained == 0 {
		if time.Now().After(deadline) {
			_, m := sees(member)
			_, f := sees(finance)
			close(stop)
			<-loopDone
			t.Fatalf("10 s after the tag change: member lost it: %v (%s), finance gained it: %v (%s); member's answer %s; finance's answer %s",
				memberLost > 0, memberLost, financeGained > 0, financeGained, m, f)
		}
		if memberLost == 0 {
			if ok, _ := sees(member); !ok {
				memberLost = time.Since(changed)
			}
		}
		if financeGained == 0 {
			if ok, _ := sees(finance); ok {
				financeGained = time.Since(changed)
			}
		}
		time.Sleep(20 * time.Millisecond) // the poll interval
	}
	// The loop keeps going past the change: two calls answered more than
	// 500 ms after both keys saw it (the second begun after that).
	applied := time.Now()
	waitUntil(t, "the looping member's calls 500 ms past the applied tag change", 60*time.Second, func() (bool, string) {
		n := looksAfter(applied.Add(500 * time.Millisecond))
		return n >= 2, fmt.Sprintf("%d calls answered since, %s after the change applied", n, time.Since(applied).Round(time.Millisecond))
	})
	close(stop)
	<-loopDone
	t.Logf("tag change applied: the member lost the document after %s, the finance key gained it after %s",
		memberLost.Round(time.Millisecond), financeGained.Round(time.Millisecond))

	// The looping member saw it, then never again: no flapping.
	flip := -1
	for i, l := range looks {
		if !l.seen && flip < 0 {
			flip = i
		}
		if l.seen && flip >= 0 {
			t.Errorf("the looping member found the document again at call %d (%s after the change) after losing it at call %d",
				i, l.at.Sub(changed).Round(time.Millisecond), flip)
			break
		}
	}
	if flip <= 0 {
		t.Errorf("the looping member's %d calls: never found it before the change or never lost it (first loss at %d)", len(looks), flip)
	} else {
		t.Logf("the looping member made %d calls; its first without the document came %s after the change",
			len(looks), looks[flip].at.Sub(changed).Round(time.Millisecond))
	}

	// The change feed since the sequence before.
	h.settle()
	// The indexer announced the change to readers while applying it, and withdrew it when done.
	fileKey := pipeline.RelabelKey("acme", ids.File("acme", "", "hr/"+token+".md"))
	var ops []string
	for _, e := range announcements() {
		if e.Key() != fileKey {
			continue
		}
		op := "delete"
		if e.Operation() == jetstream.KeyValuePut {
			var r pipeline.Relabel
			_ = json.Unmarshal(e.Value(), &r)
			op = "put " + strings.Join(r.Readers, ",")
		}
		ops = append(ops, op)
	}
	// (A redelivered event may announce and withdraw again.)
	if len(ops) < 2 || ops[0] != "put finance" || ops[len(ops)-1] != "delete" || slices.ContainsFunc(ops, func(op string) bool {
		return op != "put finance" && op != "delete"
	}) {
		t.Errorf("the relabels bucket's updates of the file: %q, want the announcement of finance, then its withdrawal", ops)
	}
	for _, c := range []struct {
		caller *accCaller
		want   string
	}{{member, "deleted"}, {finance, "added"}} {
		a := c.caller.call("list_changes", map[string]any{"project_reference": "acme", "since_sequence": seq})
		if a.err || !accMentions(a.list("changes"), `"change":"`+c.want+`"`) || !accMentions(a.list("changes"), `"path":"hr/`+token+`.md"`) || len(a.list("changes")) != 1 {
			t.Errorf("list_changes since %v as %s: want one change %s of hr/%s.md, got %s", seq, c.caller.key.name, c.want, token, a)
		}
	}
	t.Logf("list_changes since %v as admin: %s", seq, admin.call("list_changes", map[string]any{"project_reference": "acme", "since_sequence": seq}))

	// No re-ingest: the same version and chunks.
	chunksAfter := admin.call("list_file_chunks", map[string]any{"project_reference": "acme", "file_path": "hr/" + token + ".md"})
	idsOf := func(a accAnswer) []string {
		var out []string
		for _, c := range a.list("data") {
			m := c.(map[string]any)
			out = append(out, fmt.Sprint(m["file_version_id"], "/", m["id"]))
		}
		return out
	}
	if before, after := idsOf(chunksBefore), idsOf(chunksAfter); len(before) == 0 || !slices.Equal(before, after) {
		t.Errorf("a tag change must not make a new version: chunks before %v, after %v", before, after)
	}

	// Reads by id follow: the member gets a missing chunk's answer, finance the chunk.
	if l := chunksAfter.list("data"); len(l) > 0 {
		id := l[0].(map[string]any)["id"].(string)
		x := &accRun{c: member}
		cell := x.probe("get_file_chunk", func(id string) map[string]any {
			return map[string]any{"project_reference": "acme", "chunk_id": id}
		}, id, accRandID(), true, accOK)
		if cell.visible || cell.problem != "" {
			t.Errorf("member's get_file_chunk after the change: visible=%v %s %s", cell.visible, cell.answer, cell.problem)
		}
		if a := finance.call("get_file_chunk", map[string]any{"project_reference": "acme", "chunk_id": id}); a.err {
			t.Errorf("finance's get_file_chunk after the change: %s", a)
		}
	}
	revokeWhileCalling(t, h, token)
}

// watchRelabels follows the relabels bucket from now on; the returned
// func gives the updates seen so far.
func watchRelabels(t *testing.T, h *harness) func() []jetstream.KeyValueEntry {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	kv, err := h.js.KeyValue(ctx, pipeline.RelabelsBucket)
	if err != nil {
		t.Fatalf("the indexer makes the relabels bucket: %v", err)
	}
	w, err := kv.WatchAll(ctx, jetstream.UpdatesOnly())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []jetstream.KeyValueEntry
	go func() {
		for e := range w.Updates() {
			if e != nil {
				mu.Lock()
				seen = append(seen, e)
				mu.Unlock()
			}
		}
	}()
	return func() []jetstream.KeyValueEntry {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

// revokeWhileCalling makes a key with strata keys create, has a client
// call with it in a loop, revokes it, and checks that queryd refuses it
// within a second of the revoke (and served it until then).
func revokeWhileCalling(t *testing.T, h *harness, token string) {
	cli := newStrataCLI(t, h)
	out := cli.ok("keys", "create", "--name", "finance-agent", "--project", "acme", "--groups", "finance")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	key := strings.TrimSpace(lines[len(lines)-1])
	if list := cli.ok("keys", "list"); strings.Contains(list, key) || !strings.Contains(list, "finance-agent") {
		t.Fatalf("strata keys list must name the key and never show it:\n%s", list)
	}
	created := time.Now()
	var c *client.Client
	for {
		var err error
		if c, err = mcpclient.Connect(context.Background(), h.stack.Env.MCPURL, key, "strata-e2e-revoke"); err == nil {
			break
		}
		if time.Since(created) > time.Second {
			t.Fatalf("a created key is not accepted within 1 s: %v", err)
		}
		time.Sleep(20 * time.Millisecond) // the poll interval; 1 s is the documented bound
	}
	defer c.Close()
	call := func() (served bool, text string) {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = "search_keyword", map[string]any{"query": token}
		res, err := c.CallTool(context.Background(), req)
		if err != nil {
			return false, err.Error()
		}
		return !res.IsError, fmt.Sprint(res.Content)
	}
	if served, text := call(); !served || !strings.Contains(text, token) {
		t.Fatalf("the new finance key must find the finance document: %s", text)
	}
	type result struct {
		at     time.Time
		served bool
	}
	var results []result
	var resultsMu sync.Mutex
	answered := func(after time.Time, servedOnly bool) (n int) {
		resultsMu.Lock()
		defer resultsMu.Unlock()
		for _, r := range results {
			if r.at.After(after) && (r.served || !servedOnly) {
				n++
			}
		}
		return n
	}
	stop, done := make(chan struct{}), make(chan struct{})
	loopStart := time.Now()
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			served, _ := call()
			resultsMu.Lock()
			results = append(results, result{time.Now(), served})
			resultsMu.Unlock()
		}
	}()
	waitUntil(t, "the looping client served before the revoke", 60*time.Second, func() (bool, string) {
		return answered(loopStart, true) > 0, fmt.Sprintf("%d calls answered, none served", answered(loopStart, false))
	})
	cli.ok("keys", "revoke", "finance-agent")
	revoked := time.Now()
	// The loop keeps calling past the 1-s bound: two calls answered 1.5 s
	// after the revoke or later (the second begun after that).
	waitUntil(t, "the looping client's calls 1.5 s past the revoke", 60*time.Second, func() (bool, string) {
		n := answered(revoked.Add(1500*time.Millisecond), false)
		return n >= 2, fmt.Sprintf("%d calls answered since, %s after the revoke", n, time.Since(revoked).Round(time.Millisecond))
	})
	close(stop)
	<-done
	var lastServed time.Time
	servedBefore := 0
	for _, r := range results {
		if r.served {
			lastServed = r.at
			if r.at.Before(revoked) {
				servedBefore++
			}
		}
	}
	if servedBefore == 0 {
		t.Fatalf("the looping client was never served before the revoke (%d calls)", len(results))
	}
	if d := lastServed.Sub(revoked); d > time.Second {
		t.Errorf("a call was served %s after strata keys revoke returned, want refused within 1 s", d)
	}
	t.Logf("revoke while calling: %d calls, %d served before the revoke, last served %s after it",
		len(results), servedBefore, lastServed.Sub(revoked).Round(time.Millisecond))
	if code, _, stderr := cli.run("keys", "revoke", "finance-agent"); code != 1 || stderr == "" {
		t.Errorf("revoking an unknown name: exit %d, stderr %q; want exit 1 with a message", code, stderr)
	}
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, v := range ss {
		out[i] = v
	}
	return out
}
