package chaos

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/strata-kb/strata/deploy/localstack"
	"github.com/strata-kb/strata/ingestor/extract/pdf/pdfwrite"
	"github.com/strata-kb/strata/shared/bucket"
	"github.com/strata-kb/strata/shared/testservers"
)

// Project is the project every chaos file is uploaded to.
const Project = "chaos"

// tokenMeta is the user metadata key that names the version an object
// holds (x-amz-meta-chaos-token): the comparison reads it from the bucket.
const tokenMeta = "Chaos-Token"

// format is one kind of file the writers upload.
type format struct {
	ext, contentType string
	make             func(title, token string, words []string) []byte
}

var formats = []format{
	{"md", "text/markdown", func(title, token string, words []string) []byte {
		return []byte(fmt.Sprintf("# %s\n\nThe %s token marks this version.\n\n## Body\n\n%s\n", title, token, paragraphs(words)))
	}},
	{"txt", "text/plain", func(title, token string, words []string) []byte {
		return []byte(fmt.Sprintf("%s\n\nThe %s token marks this version.\n\n%s\n", title, token, paragraphs(words)))
	}},
	{"html", "text/html", func(title, token string, words []string) []byte {
		return []byte(fmt.Sprintf("<html><head><title>%s</title></head><body><main><h1>%s</h1><p>The %s token marks this version.</p><p>%s</p></main></body></html>",
			title, title, token, strings.Join(words, " ")))
	}},
	{"pdf", "application/pdf", func(title, token string, words []string) []byte {
		// Two pages, this version's token on the first.
		var lines []string
		for i := 0; i < len(words); i += 12 {
			lines = append(lines, strings.Join(words[i:min(i+12, len(words))], " "))
		}
		half := len(lines) / 2
		return pdfwrite.MakeTitled(title, []pdfwrite.Page{
			{Lines: append([]string{title, "", "The " + token + " token marks this version."}, lines[:half]...)},
			{Lines: lines[half:]},
		}, nil)
	}},
	{"docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", docx},
}

// docx writes a small Word document (as deploy/e2e's formats test does) with
// a heading, the token and the words.
func docx(title, token string, words []string) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	files := []struct{ name, body string }{
		{"[Content_Types].xml", `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>`},
		{"word/styles.xml", `<?xml version="1.0"?><w:styles xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/></w:style></w:styles>`},
		{"word/document.xml", `<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>` +
			`<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>` + title + `</w:t></w:r></w:p>` +
			`<w:p><w:r><w:t>The ` + token + ` token marks this version.</w:t></w:r></w:p>` +
			`<w:p><w:r><w:t>` + strings.Join(words, " ") + `</w:t></w:r></w:p>` +
			`</w:body></w:document>`},
	}
	for _, f := range files {
		w, _ := zw.Create(f.name)
		_, _ = w.Write([]byte(f.body))
	}
	_ = zw.Close()
	return buf.Bytes()
}

var vocabulary = strings.Fields(`river stone harbor ledger signal copper meadow lantern orbit quarry
	velvet canyon ember glacier harvest island jasmine kernel lattice marble nectar oyster pillar
	quartz saddle timber umbra vessel willow yarrow zenith anchor beacon cedar delta falcon garnet
	hollow ivory juniper kestrel lagoon mosaic nimbus opal prairie quiver rampart summit thistle`)

func paragraphs(words []string) string {
	var b strings.Builder
	for i := 0; i < len(words); i += 40 {
		b.WriteString(strings.Join(words[i:min(i+40, len(words))], " "))
		b.WriteString(".\n\n")
	}
	return b.String()
}

// keyState is what the writers did to one key.
type keyState struct {
	mu     sync.Mutex
	idx    int
	key    string // bucket key: chaos/<ext>/fNNN.<ext>
	format format
	// present: the last operation that succeeded was an upload.
	present bool
	// tokens are every version's token ever sent for this key, the last last.
	tokens []string
	// last is the last token sent, for the readers (who do not lock).
	last atomic.Pointer[string]
}

// path is the key's path inside the project, as the tools take it.
func (k *keyState) path() string { return strings.TrimPrefix(k.key, Project+"/") }

// writer drives uploads, overwrites and deletes at a steady rate against
// every MinIO node, moving on to the next node when one fails.
type writer struct {
	cfg     Config
	clients []*minio.Client
	keys    []*keyState
	next    atomic.Uint64 // round robin over the nodes
	gen     atomic.Uint64 // version counter: every token is new
	rng     *rand.Rand
	rngMu   sync.Mutex

	uploads, overwrites, deletes atomic.Int64
	failovers                    atomic.Int64 // operations that needed another node
	gaveUp                       atomic.Int64 // operations no node took within writeDeadline
	skipped                      atomic.Int64 // ticks with every writer busy
	failures                     []string
	failMu                       sync.Mutex
}

// writeDeadline bounds one operation's attempts over all nodes.
const writeDeadline = 60 * time.Second

func newWriter(cfg Config, st *localstack.Stack) (*writer, error) {
	w := &writer{cfg: cfg, rng: rand.New(rand.NewPCG(uint64(cfg.Seed), 7))}
	for _, ep := range st.Servers.S3Endpoints() {
		c, err := bucket.Client(ep, testservers.LocalS3AccessKey, testservers.LocalS3SecretKey, false)
		if err != nil {
			return nil, err
		}
		w.clients = append(w.clients, c)
	}
	for i := range cfg.Keys {
		f := formats[i%len(formats)]
		w.keys = append(w.keys, &keyState{idx: i, key: fmt.Sprintf("%s/%s/f%03d.%s", Project, f.ext, i, f.ext), format: f})
	}
	return w, nil
}

func (w *writer) intn(n int) int {
	w.rngMu.Lock()
	defer w.rngMu.Unlock()
	return w.rng.IntN(n)
}

// run issues cfg.WriteRate operations a second until ctx ends.
func (w *writer) run(ctx context.Context) {
	sem := make(chan struct{}, 16)
	t := time.NewTicker(time.Duration(float64(time.Second) / w.cfg.WriteRate))
	defer t.Stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		select {
		case sem <- struct{}{}:
		default:
			w.skipped.Add(1)
			continue
		}
		k := w.keys[w.intn(len(w.keys))]
		if !k.mu.TryLock() { // one operation per key at a time
			<-sem
			w.skipped.Add(1)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			defer k.mu.Unlock()
			// Writes in flight when the chaos phase ends still finish:
			// the comparison reads the bucket afterwards.
			w.operate(context.WithoutCancel(ctx), k)
		}()
	}
}

// operate uploads (absent key), overwrites (3 in 4) or deletes a key.
func (w *writer) operate(ctx context.Context, k *keyState) {
	if k.present && w.intn(4) == 0 {
		if w.try(ctx, "delete "+k.key, func(ctx context.Context, c *minio.Client) error {
			return c.RemoveObject(ctx, localstack.Bucket, k.key, minio.RemoveObjectOptions{})
		}) {
			k.present = false
			w.deletes.Add(1)
		}
		return
	}
	g := w.gen.Add(1)
	token := fmt.Sprintf("zq%03dv%06d", k.idx, g)
	n := 60 + w.intn(500)
	words := make([]string, n)
	for i := range words {
		words[i] = vocabulary[w.intn(len(vocabulary))]
	}
	title := fmt.Sprintf("Chaos file %s version %d", k.path(), g)
	body := k.format.make(title, token, words)
	k.tokens = append(k.tokens, token)
	k.last.Store(&token)
	if w.try(ctx, "put "+k.key, func(ctx context.Context, c *minio.Client) error {
		_, err := c.PutObject(ctx, localstack.Bucket, k.key, bytes.NewReader(body), int64(len(body)),
			minio.PutObjectOptions{ContentType: k.format.contentType, UserMetadata: map[string]string{tokenMeta: token}})
		return err
	}) {
		if k.present {
			w.overwrites.Add(1)
		} else {
			w.uploads.Add(1)
		}
		k.present = true
	}
}

// try runs op against one node after another until one takes it.
func (w *writer) try(ctx context.Context, what string, op func(context.Context, *minio.Client) error) bool {
	deadline := time.Now().Add(writeDeadline)
	start := int(w.next.Add(1))
	var errs []string
	for attempt := 0; time.Now().Before(deadline); attempt++ {
		c := w.clients[(start+attempt)%len(w.clients)]
		actx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := op(actx, c)
		cancel()
		if err == nil {
			if attempt > 0 {
				w.failovers.Add(1)
			}
			return true
		}
		errs = append(errs, fmt.Sprintf("%s: %v", c.EndpointURL().Host, err))
		time.Sleep(200 * time.Millisecond)
	}
	w.gaveUp.Add(1)
	w.failMu.Lock()
	w.failures = append(w.failures, fmt.Sprintf("%s: %s", what, strings.Join(errs, "; ")))
	w.failMu.Unlock()
	return false
}
