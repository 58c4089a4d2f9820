package chaos

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/minio/minio-go/v7"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/deploy/localstack"
	"github.com/strata-kb/strata/deploy/mcpclient"
	"github.com/strata-kb/strata/shared/pipeline"
)

// Problem is one way the index differs from the bucket.
type Problem struct {
	Key    string
	Detail string
}

// Comparison is the index compared with the bucket after the settle period.
type Comparison struct {
	Objects    int // live objects in the bucket
	Deleted    int // keys uploaded and deleted since
	Versions   int // tokens checked as no longer visible
	Lost       []Problem
	Duplicated []Problem
	Stale      []Problem
	// Status is what each queryd replica's status tool says of the project.
	Status []string
}

func (c *Comparison) clean() bool {
	return len(c.Lost) == 0 && len(c.Duplicated) == 0 && len(c.Stale) == 0
}

// verifier asks queryd (through MCP, as an agent would) what is indexed.
type verifier struct {
	urls    []string
	apiKey  string
	s3      *minio.Client
	js      jetstream.JetStream
	mu      sync.Mutex
	clients map[string]*client.Client
}

// call invokes a tool on queryd replica url, retrying transport failures for
// up to 30 s (the comparison is not a served-read measurement). It returns
// the answer's JSON, or the tool's error text.
func (v *verifier) call(ctx context.Context, url, tool string, args map[string]any) (json.RawMessage, string, error) {
	var last error
	for attempt := 0; attempt < 60; attempt++ {
		if attempt > 0 {
			time.Sleep(500 * time.Millisecond)
		}
		v.mu.Lock()
		c := v.clients[url]
		v.mu.Unlock()
		if c == nil {
			var err error
			if c, err = mcpclient.Connect(ctx, url, v.apiKey, "strata-chaos-verify"); err != nil {
				last = err
				continue
			}
			v.mu.Lock()
			v.clients[url] = c
			v.mu.Unlock()
		}
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = tool, args
		cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		res, err := c.CallTool(cctx, req)
		cancel()
		if err != nil {
			last = err
			c.Close()
			v.mu.Lock()
			v.clients[url] = nil
			v.mu.Unlock()
			continue
		}
		if res.IsError {
			return nil, mcpclient.Text(res), nil
		}
		return mcpclient.JSON(res), "", nil
	}
	return nil, "", fmt.Errorf("%s: %w", tool, last)
}

func (v *verifier) close() {
	for _, c := range v.clients {
		if c != nil {
			c.Close()
		}
	}
}

// bucketObject is a live object: its ETag and the token it holds.
type bucketObject struct {
	etag, token string
}

// listBucket reads every live chaos object and the token in its metadata.
func (v *verifier) listBucket(ctx context.Context) (map[string]bucketObject, error) {
	out := map[string]bucketObject{}
	for o := range v.s3.ListObjects(ctx, localstack.Bucket, minio.ListObjectsOptions{Prefix: Project + "/", Recursive: true}) {
		if o.Err != nil {
			return nil, o.Err
		}
		info, err := v.s3.StatObject(ctx, localstack.Bucket, o.Key, minio.StatObjectOptions{})
		if err != nil {
			return nil, fmt.Errorf("stat %s: %w", o.Key, err)
		}
		out[o.Key] = bucketObject{etag: strings.Trim(info.ETag, `"`), token: info.UserMetadata[tokenMeta]}
	}
	return out, nil
}

// idle reports whether every stage has taken and acknowledged everything.
func (v *verifier) idle(ctx context.Context) (bool, string) {
	for _, c := range []struct{ stream, consumer string }{
		{pipeline.ObjectsStream, pipeline.IngestorConsumer},
		{pipeline.ChunksStream, pipeline.IndexerChunksConsumer},
		{pipeline.ChunksStream, pipeline.EmbedderConsumer},
		{pipeline.EmbeddingsStream, pipeline.IndexerVectorsConsumer},
	} {
		cons, err := v.js.Consumer(ctx, c.stream, c.consumer)
		if err != nil {
			return false, fmt.Sprintf("%s: %v", c.consumer, err)
		}
		ci, err := cons.Info(ctx)
		if err != nil {
			return false, fmt.Sprintf("%s: %v", c.consumer, err)
		}
		if ci.NumPending > 0 || ci.NumAckPending > 0 {
			return false, fmt.Sprintf("%s: %d pending, %d unacknowledged", c.consumer, ci.NumPending, ci.NumAckPending)
		}
	}
	return true, ""
}

type objectStatus struct {
	State         string `json:"state"`
	ETag          string `json:"etag"`
	FileVersionID string `json:"file_version_id"`
	Searchable    bool   `json:"searchable"`
	Note          string `json:"note"`
	Error         string `json:"error"`
}

// quick compares the latest state of every key (object_status) with the
// bucket: cheap enough to repeat while the cluster settles. It returns
// what is not there yet.
func (v *verifier) quick(ctx context.Context, keys []*keyState, live map[string]bucketObject) ([]Problem, error) {
	var out []Problem
	for _, k := range keys {
		o, isLive := live[k.key]
		if !isLive && len(k.tokens) == 0 {
			continue
		}
		args := map[string]any{"key": k.key}
		if isLive {
			args["etag"] = o.etag
		}
		raw, errText, err := v.call(ctx, v.urls[0], "object_status", args)
		if err != nil {
			return nil, err
		}
		var st objectStatus
		if errText == "" {
			_ = json.Unmarshal(raw, &st)
		}
		switch {
		case errText != "":
			out = append(out, Problem{k.key, "object_status: " + errText})
		case isLive && (st.State != pipeline.StateEmbedded || !st.Searchable):
			out = append(out, Problem{k.key, fmt.Sprintf("latest upload (ETag %s) is %s, searchable %v: %s %s", o.etag, st.State, st.Searchable, st.Note, st.Error)})
		case !isLive && st.State != pipeline.StateDeleted && st.State != "unknown":
			out = append(out, Problem{k.key, fmt.Sprintf("deleted from the bucket, but its state is %s (ETag %s)", st.State, st.ETag)})
		}
	}
	return out, nil
}

type chunk struct {
	ID            string `json:"id"`
	FileVersionID string `json:"file_version_id"`
	Index         int    `json:"index"`
	Content       string `json:"content"`
}

// compare checks the index against the bucket, through queryd's tools:
//   - every live object: object_status of its ETag is embedded and
//     searchable; list_file_chunks shows one version, that one, with every
//     chunk index once and its token; search_keyword finds its token;
//   - every deleted key: list_file_chunks finds no file;
//   - every token of an overwritten or deleted version: search_keyword
//     finds no chunk holding it;
//   - list_documents lists each live object once and nothing else;
//   - each queryd replica's status counts the live objects' documents and
//     chunks, every chunk embedded.
func (v *verifier) compare(ctx context.Context, keys []*keyState, live map[string]bucketObject) (*Comparison, error) {
	cmp := &Comparison{Objects: len(live)}
	lost := func(k, f string, a ...any) { cmp.Lost = append(cmp.Lost, Problem{k, fmt.Sprintf(f, a...)}) }
	stale := func(k, f string, a ...any) { cmp.Stale = append(cmp.Stale, Problem{k, fmt.Sprintf(f, a...)}) }
	dup := func(k, f string, a ...any) { cmp.Duplicated = append(cmp.Duplicated, Problem{k, fmt.Sprintf(f, a...)}) }
	q, err := v.quick(ctx, keys, live)
	if err != nil {
		return nil, err
	}
	for _, p := range q {
		if _, isLive := live[p.Key]; isLive {
			lost(p.Key, "%s", p.Detail)
		} else {
			stale(p.Key, "%s", p.Detail)
		}
	}
	liveTokens := map[string]bool{}
	for _, o := range live {
		liveTokens[o.token] = true
	}
	chunkTotal := 0
	var oldTokens []string
	for _, k := range keys {
		o, isLive := live[k.key]
		for _, t := range k.tokens {
			if t != o.token || !isLive {
				oldTokens = append(oldTokens, t)
			}
		}
		if !isLive {
			if len(k.tokens) > 0 {
				cmp.Deleted++
			}
			raw, errText, err := v.call(ctx, v.urls[0], "list_file_chunks", map[string]any{"project_reference": Project, "file_path": k.path()})
			if err != nil {
				return nil, err
			}
			if errText == "" {
				stale(k.key, "deleted from the bucket, but list_file_chunks shows it: %s", clip(string(raw), 300))
			} else if !strings.Contains(errText, "file not found") {
				stale(k.key, "deleted from the bucket; list_file_chunks: %s", errText)
			}
			continue
		}
		raw, errText, err := v.call(ctx, v.urls[0], "list_file_chunks", map[string]any{"project_reference": Project, "file_path": k.path(), "limit": 100})
		if err != nil {
			return nil, err
		}
		if errText != "" {
			lost(k.key, "list_file_chunks: %s", errText)
			continue
		}
		var page struct {
			Data []chunk `json:"data"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return nil, fmt.Errorf("list_file_chunks %s: %w", k.key, err)
		}
		chunkTotal += len(page.Data)
		versions := map[string]bool{}
		indexes := map[int]int{}
		hasToken := false
		for _, c := range page.Data {
			versions[c.FileVersionID] = true
			indexes[c.Index]++
			if strings.Contains(c.Content, o.token) {
				hasToken = true
			}
			for _, t := range k.tokens {
				if t != o.token && strings.Contains(c.Content, t) {
					stale(k.key, "chunk %d shows %s of an older version (the bucket holds %s)", c.Index, t, o.token)
				}
			}
		}
		if len(versions) > 1 {
			dup(k.key, "list_file_chunks shows %d versions at once: %v", len(versions), keysOf(versions))
		}
		for i, n := range indexes {
			if n > 1 {
				dup(k.key, "chunk index %d listed %d times", i, n)
			}
		}
		if !hasToken && len(page.Data) > 0 {
			lost(k.key, "no chunk holds the latest version's token %s", o.token)
		}
		if len(page.Data) == 0 {
			lost(k.key, "no chunks")
		}
		raw, errText, err = v.call(ctx, v.urls[0], "search_keyword", map[string]any{"query": o.token, "top_k": 5})
		if err != nil {
			return nil, err
		}
		if errText != "" || !hitHolds(raw, o.token) {
			lost(k.key, "search_keyword does not find the latest token %s: %s", o.token, clip(errText, 200))
		}
	}
	// No version but the latest is found by its token.
	cmp.Versions = len(oldTokens)
	var mu sync.Mutex
	var wg sync.WaitGroup
	var firstErr error
	work := make(chan string)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range work {
				raw, _, err := v.call(ctx, v.urls[0], "search_keyword", map[string]any{"query": t, "top_k": 5})
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				if err == nil && hitHolds(raw, t) {
					stale(keyOfToken(keys, t), "search_keyword finds %s, a token of an overwritten or deleted version", t)
				}
				mu.Unlock()
			}
		}()
	}
	for _, t := range oldTokens {
		work <- t
	}
	close(work)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	// Every document once, and none that is not in the bucket.
	listed := map[string]int{}
	var cursor any
	for {
		args := map[string]any{"project_reference": Project, "limit": 100}
		if cursor != nil {
			args["cursor"] = cursor
		}
		raw, errText, err := v.call(ctx, v.urls[0], "list_documents", args)
		if err != nil {
			return nil, err
		}
		if errText != "" {
			if len(live) > 0 {
				lost("", "list_documents: %s", errText)
			}
			break
		}
		var page struct {
			Documents []struct {
				Path string `json:"document_path"`
			} `json:"documents"`
			NextCursor *string `json:"next_cursor"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return nil, fmt.Errorf("list_documents: %w", err)
		}
		for _, d := range page.Documents {
			listed[strings.TrimPrefix(d.Path, "/")]++
		}
		if page.NextCursor == nil || *page.NextCursor == "" {
			break
		}
		cursor = *page.NextCursor
	}
	for path, n := range listed {
		key := path
		if !strings.HasPrefix(key, Project+"/") {
			key = Project + "/" + key
		}
		if n > 1 {
			dup(key, "list_documents lists it %d times", n)
		}
		if _, ok := live[key]; !ok {
			stale(key, "list_documents lists it; it is not in the bucket")
		}
	}
	for key := range live {
		if listed[strings.TrimPrefix(key, Project+"/")] == 0 && listed[key] == 0 {
			lost(key, "list_documents does not list it")
		}
	}
	// Each replica's counts.
	for i, url := range v.urls {
		raw, errText, err := v.call(ctx, url, "status", map[string]any{})
		if err != nil {
			return nil, err
		}
		if errText != "" {
			lost("", "queryd-%d status: %s", i+1, errText)
			continue
		}
		var st struct {
			Projects []struct {
				Project            string `json:"project"`
				DocumentCount      int    `json:"documentCount"`
				ChunkCount         int    `json:"chunkCount"`
				EmbeddedChunkCount int    `json:"embeddedChunkCount"`
				FailedCount        int    `json:"failedCount"`
				Watermark          int64  `json:"watermark"`
			} `json:"projects"`
		}
		if err := json.Unmarshal(raw, &st); err != nil {
			return nil, fmt.Errorf("status: %w", err)
		}
		for _, p := range st.Projects {
			if p.Project != Project {
				continue
			}
			line := fmt.Sprintf("queryd-%d: %d documents, %d chunks, %d embedded, %d failed, watermark %d", i+1, p.DocumentCount, p.ChunkCount, p.EmbeddedChunkCount, p.FailedCount, p.Watermark)
			cmp.Status = append(cmp.Status, line)
			switch {
			case p.DocumentCount < len(live):
				lost("", "%s: fewer documents than the %d live objects", line, len(live))
			case p.DocumentCount > len(live):
				dup("", "%s: more documents than the %d live objects", line, len(live))
			}
			if p.ChunkCount != chunkTotal {
				dup("", "%s: the live objects' chunks listed one by one are %d", line, chunkTotal)
			}
			if p.EmbeddedChunkCount < p.ChunkCount {
				lost("", "%s: %d chunks without a vector", line, p.ChunkCount-p.EmbeddedChunkCount)
			}
			if p.FailedCount > 0 {
				lost("", "%s: failed files", line)
			}
		}
	}
	for _, l := range [][]Problem{cmp.Lost, cmp.Duplicated, cmp.Stale} {
		sort.SliceStable(l, func(i, j int) bool { return l[i].Key < l[j].Key })
	}
	return cmp, nil
}

// hitHolds reports whether a search answer has a hit whose content holds
// token (the answer also repeats the query).
func hitHolds(raw json.RawMessage, token string) bool {
	var out struct {
		Results []struct {
			Content string `json:"content"`
		} `json:"results"`
	}
	if json.Unmarshal(raw, &out) != nil {
		return false
	}
	for _, h := range out.Results {
		if strings.Contains(h.Content, token) {
			return true
		}
	}
	return false
}

func keysOf(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// keyOfToken finds which key a token was uploaded to.
func keyOfToken(keys []*keyState, t string) string {
	for _, k := range keys {
		if slices.Contains(k.tokens, t) {
			return k.key
		}
	}
	return ""
}

// settle waits until the pipeline is idle and every key's latest state
// matches the bucket (or until timeout), then compares everything.
func (v *verifier) settle(ctx context.Context, keys []*keyState, timeout time.Duration, logf func(string, ...any)) (*Comparison, time.Duration, error) {
	began := time.Now()
	deadline := began.Add(timeout)
	var live map[string]bucketObject
	for {
		var err error
		if live, err = v.listBucket(ctx); err != nil {
			return nil, 0, fmt.Errorf("list the bucket: %w", err)
		}
		idle, why := v.idle(ctx)
		var pending []Problem
		if idle {
			if pending, err = v.quick(ctx, keys, live); err != nil {
				return nil, 0, err
			}
			if len(pending) == 0 {
				break
			}
			why = fmt.Sprintf("%d keys differ from the bucket, e.g. %s: %s", len(pending), pending[0].Key, pending[0].Detail)
		}
		if time.Now().After(deadline) {
			logf("not settled after %s: %s; comparing as it is", timeout, why)
			break
		}
		logf("settling: %s", why)
		select {
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		case <-time.After(5 * time.Second):
		}
	}
	took := time.Since(began)
	cmp, err := v.compare(ctx, keys, live)
	if err != nil {
		return nil, took, err
	}
	return cmp, took, nil
}
