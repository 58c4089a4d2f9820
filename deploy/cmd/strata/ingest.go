package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/strata-kb/strata/deploy/progress"
	"github.com/strata-kb/strata/shared/bucket"
	"github.com/strata-kb/strata/shared/objkey"
)

func runIngest(ctx context.Context, a *app, name string, args []string) error {
	f := newFlags(name, "DIR --project P [--prefix p] [flags]",
		"Uploads every file under DIR to the bucket as <project>/<prefix>/<path relative to DIR>, then waits\n"+
			"until each upload is searchable, showing how many files are pending, extracted, committed (keyword-\n"+
			"searchable), embedded (vector-searchable too) and failed. It ends with a summary and every failed\n"+
			"file with its reason, and exits 1 if any failed or did not finish. The wait reads each object's\n"+
			"state from the NATS KV bucket strata_objects.")
	project := f.String("project", a.getenv("STRATA_PROJECT"), "the project: the keys' first segment, <project> or <project>@<branch> (STRATA_PROJECT)")
	prefix := f.String("prefix", "", "folder inside the project to upload into")
	parallel := f.Int("parallel", 4, "concurrent uploads")
	noWait := f.Bool("no-wait", false, "stop after uploading")
	timeout := f.Duration("timeout", 5*time.Minute, "give up waiting when no file made progress for this long")
	cf := addConnFlags(f, needS3|needNATS)
	pos, err := f.parse(a, args, 1, 1)
	if err != nil {
		return err
	}
	if *project == "" {
		return usagef("missing --project")
	}
	if _, err := objkey.Parse(*project + "/x"); err != nil {
		return usagef("invalid --project %q: <project> or <project>@<branch>; a project is 1-63 letters, digits, _ and -", *project)
	}
	if *parallel < 1 {
		return usagef("--parallel must be at least 1")
	}
	if *timeout <= 0 {
		return usagef("--timeout must be positive")
	}
	files, err := listFiles(pos[0], *project, *prefix)
	if err != nil {
		return err
	}
	c, err := cf.resolve(a)
	if err != nil {
		return err
	}
	if err := c.require("s3-endpoint", "s3-access-key", "s3-secret-key", "bucket"); err != nil {
		return err
	}
	if len(files) == 0 {
		fmt.Fprintf(a.stdout, "no files under %s\n", pos[0])
		return nil
	}
	mc, err := s3Client(c)
	if err != nil {
		return err
	}
	if ok, err := mc.BucketExists(ctx, c.get("bucket")); err != nil {
		return fmt.Errorf("bucket %s at %s: %w", c.get("bucket"), c.get("s3-endpoint"), err)
	} else if !ok {
		return fmt.Errorf("bucket %s does not exist at %s", c.get("bucket"), c.get("s3-endpoint"))
	}
	up := uploadAll(ctx, a, mc, c.get("bucket"), files, *parallel)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if *noWait {
		printSummary(a.stdout, files, up, nil, 0)
		return failures(files, nil)
	}
	nc, js, err := connectNATS(c)
	if err != nil {
		return fmt.Errorf("%w (--no-wait uploads without waiting)", err)
	}
	defer nc.Close()
	w := &waiter{a: a, js: js, files: files, stall: *timeout}
	waited, err := w.wait(ctx)
	if err != nil {
		return err
	}
	printSummary(a.stdout, files, up, w, waited)
	return failures(files, w)
}

// file is one file of the folder and what became of it.
type file struct {
	path    string // on disk
	key     string // object key
	project string // the key's project (without branch)
	size    int64
	etag    string // of the upload
	// outcome
	stage  stage
	reason string // why it failed
	state  *objectState
}

// listFiles walks dir and returns every regular file (symbolic links to
// files included) with its key, sorted by key.
func listFiles(dir, project, prefix string) ([]*file, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, usagef("%s is not a folder", dir)
	}
	var out []*file
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		fi, err := os.Stat(p) // follows a symbolic link
		if err != nil {
			return err
		}
		if !fi.Mode().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		f := &file{path: p, key: objectKey(project, prefix, filepath.ToSlash(rel)), size: fi.Size()}
		if k, err := objkey.Parse(f.key); err != nil {
			f.stage, f.reason = stageFailed, "not uploaded: "+err.Error()
		} else {
			f.project = k.Project
		}
		out = append(out, f)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out, nil
}

// objectKey is <project>/<prefix>/<rel>, without empty segments from the prefix's slashes.
func objectKey(project, prefix, rel string) string {
	parts := []string{project}
	if p := strings.Trim(prefix, "/"); p != "" {
		parts = append(parts, p)
	}
	return path.Join(append(parts, rel)...)
}

func s3Client(c conn) (*minio.Client, error) {
	endpoint, secure := c.get("s3-endpoint"), false
	switch {
	case strings.HasPrefix(endpoint, "https://"):
		endpoint, secure = strings.TrimPrefix(endpoint, "https://"), true
	case strings.HasPrefix(endpoint, "http://"):
		endpoint = strings.TrimPrefix(endpoint, "http://")
	}
	return bucket.Client(strings.TrimSuffix(endpoint, "/"), c.get("s3-access-key"), c.get("s3-secret-key"), secure)
}

// uploadStats is what the upload did.
type uploadStats struct {
	files, failed int
	bytes         int64
	took          time.Duration
}

// uploadAll uploads files with n workers, drawing a progress line.
func uploadAll(ctx context.Context, a *app, mc *minio.Client, bucketName string, files []*file, n int) uploadStats {
	var total int64
	var todo []*file
	for _, f := range files {
		if f.stage != stageFailed {
			todo = append(todo, f)
			total += f.size
		}
	}
	start := a.now()
	p := &progress.Line{Out: a.stdout, TTY: a.tty, Every: 5 * time.Second}
	var sent atomic.Int64
	var done, failed atomic.Int64
	line := func() string {
		return uploadLine(int(done.Load()), len(todo), int(failed.Load()), sent.Load(), total, a.now().Sub(start))
	}
	stop := p.Run(line)
	work := make(chan *file)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for f := range work {
				if err := upload(ctx, mc, bucketName, f, &sent); err != nil {
					f.stage, f.reason = stageFailed, "upload: "+oneLine(err.Error())
					failed.Add(1)
				}
				done.Add(1)
			}
		}()
	}
	for _, f := range todo {
		if ctx.Err() != nil {
			break
		}
		work <- f
	}
	close(work)
	wg.Wait()
	stop(line())
	return uploadStats{files: int(done.Load()), failed: int(failed.Load()), bytes: sent.Load(), took: a.now().Sub(start)}
}

func upload(ctx context.Context, mc *minio.Client, bucketName string, f *file, sent *atomic.Int64) error {
	r, err := os.Open(f.path)
	if err != nil {
		return err
	}
	defer r.Close()
	ct := mime.TypeByExtension(path.Ext(f.key))
	if ct == "" {
		ct = "application/octet-stream"
	}
	cr := &countingReader{r: r, n: sent}
	info, err := mc.PutObject(ctx, bucketName, f.key, cr, f.size, minio.PutObjectOptions{ContentType: ct})
	if err != nil {
		sent.Add(-cr.read) // a retry of the file counts again
		return err
	}
	f.etag = strings.Trim(info.ETag, `"`)
	return nil
}

type countingReader struct {
	r    io.Reader
	n    *atomic.Int64
	read int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	c.read += int64(n)
	return n, err
}

// uploadLine is the upload's progress: files, bytes and rate.
func uploadLine(done, total, failed int, sent, bytes int64, took time.Duration) string {
	s := fmt.Sprintf("uploading: %d/%d files, %s/%s, %s", done, total, bytesText(sent), bytesText(bytes), rateText(sent, took))
	if failed > 0 {
		s += fmt.Sprintf(", %d failed", failed)
	}
	return s
}

// failures is the command's error when files failed or (after a wait w)
// did not finish.
func failures(files []*file, w *waiter) error {
	bad := 0
	for _, f := range files {
		if f.stage == stageFailed || (w != nil && !w.settled[f]) {
			bad++
		}
	}
	if bad == 0 {
		return nil
	}
	return errors.New(plural(bad, "file", "files") + fmt.Sprintf(" of %d not searchable (see above)", len(files)))
}
