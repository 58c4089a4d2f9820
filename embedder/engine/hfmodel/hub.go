package hfmodel

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"

	"github.com/strata-kb/strata/shared/usercache"
)

// DefaultHubURL is Hugging Face's hub; any server with the same URL layout
// (a mirror, or a test server) works: <base>/<id>/resolve/<revision>/<file>.
const DefaultHubURL = "https://huggingface.co"

// maxFileBytes bounds one downloaded file (the pin is checked only at the
// end, so a broken server must not be able to fill the disk first).
const maxFileBytes = 16 << 30

// HubRef names a model repository on the hub at one revision.
type HubRef struct {
	ID       string // "org/name" (or a legacy "name")
	Revision string // a commit hash (best), tag or branch
}

func (r HubRef) String() string { return r.ID + "@" + r.Revision }

var (
	hubIDPart   = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	hubRevision = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]*$`)
	sha256Hex   = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// ParseHubRef parses "org/name@revision". The revision is required: a
// model must not change under a running system.
func ParseHubRef(s string) (HubRef, error) {
	id, rev, ok := strings.Cut(s, "@")
	if !ok || rev == "" {
		return HubRef{}, fmt.Errorf("%q: want <org>/<name>@<revision> (a commit hash, tag or branch) or a model directory", s)
	}
	parts := strings.Split(id, "/")
	if len(parts) > 2 {
		return HubRef{}, fmt.Errorf("%q: a hub id is <org>/<name>", s)
	}
	for _, p := range parts {
		if !hubIDPart.MatchString(p) || strings.Contains(p, "..") {
			return HubRef{}, fmt.Errorf("%q: bad hub id", s)
		}
	}
	if !hubRevision.MatchString(rev) || strings.Contains(rev, "..") {
		return HubRef{}, fmt.Errorf("%q: bad revision %q", s, rev)
	}
	return HubRef{ID: id, Revision: rev}, nil
}

// Pins maps files of a model repository (paths such as
// "1_Pooling/config.json") to their SHA-256, lowercase hex. The pins are
// also the list of files to fetch.
type Pins map[string]string

// ParsePins reads "file=sha256,file=sha256,..." or, when s starts with
// "@", the file named after it in sha256sum's output format
// ("<sha256>  <file>" lines; make it with `sha256sum` over a trusted copy).
func ParsePins(s string) (Pins, error) {
	pins := Pins{}
	add := func(file, sum string) error {
		file, sum = strings.TrimSpace(file), strings.ToLower(strings.TrimSpace(sum))
		if !sha256Hex.MatchString(sum) {
			return fmt.Errorf("pin for %q: %q is not a SHA-256 in hex", file, sum)
		}
		if err := checkRepoPath(file); err != nil {
			return err
		}
		if old, dup := pins[file]; dup && old != sum {
			return fmt.Errorf("%q is pinned twice", file)
		}
		pins[file] = sum
		return nil
	}
	if name, ok := strings.CutPrefix(s, "@"); ok {
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("pin file: %w", err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		for line := 1; sc.Scan(); line++ {
			text := strings.TrimSpace(sc.Text())
			if text == "" || strings.HasPrefix(text, "#") {
				continue
			}
			sum, file, ok := strings.Cut(text, " ")
			file = strings.TrimPrefix(strings.TrimLeft(file, " "), "*") // "*" marks binary mode
			if !ok {
				return nil, fmt.Errorf("pin file %s:%d: want \"<sha256>  <file>\"", name, line)
			}
			if err := add(strings.TrimPrefix(file, "./"), sum); err != nil {
				return nil, fmt.Errorf("pin file %s:%d: %w", name, line, err)
			}
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("pin file: %w", err)
		}
	} else {
		for _, item := range strings.Split(s, ",") {
			if strings.TrimSpace(item) == "" {
				continue
			}
			file, sum, ok := strings.Cut(item, "=")
			if !ok {
				return nil, fmt.Errorf("pin %q: want <file>=<sha256>", item)
			}
			if err := add(file, sum); err != nil {
				return nil, err
			}
		}
	}
	if len(pins) == 0 {
		return nil, errors.New("no pins")
	}
	return pins, nil
}

// checkRepoPath accepts relative slash-separated paths that stay inside
// the repository.
func checkRepoPath(p string) error {
	if p == "" || path.IsAbs(p) || strings.Contains(p, `\`) || path.Clean(p) != p || p == "." ||
		p == ".." || strings.HasPrefix(p, "../") {
		return fmt.Errorf("file %q: want a relative path inside the model repository", p)
	}
	return nil
}

// sortedFiles lists the pinned files in order.
func (p Pins) sortedFiles() []string {
	out := make([]string, 0, len(p))
	for f := range p {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// key identifies a pin set (part of the cache directory's name).
func (p Pins) key() string {
	h := sha256.New()
	for _, f := range p.sortedFiles() {
		fmt.Fprintf(h, "%s %s\n", p[f], f)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// verify checks every pinned file under dir.
func (p Pins) verify(dir string) error {
	for _, f := range p.sortedFiles() {
		sum, err := fileSHA256(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			return err
		}
		if sum != p[f] {
			return fmt.Errorf("%s: SHA-256 %s does not match the pin %s", f, sum, p[f])
		}
	}
	return nil
}

// ModelCacheDir is where fetched models are kept: $STRATA_MODEL_CACHE, else
// <user cache dir>/strata/models (~/.cache/strata/models on Linux).
func ModelCacheDir() (string, error) { return usercache.Dir("STRATA_MODEL_CACHE", "models") }

// FetchOptions configures Fetch.
type FetchOptions struct {
	BaseURL  string       // DefaultHubURL when empty
	CacheDir string       // ModelCacheDir() when empty
	Client   *http.Client // http.DefaultClient when nil
	Log      func(string) // progress, may be nil
}

// Fetch makes the pinned files of ref available under the cache and
// returns their directory. A cached copy is checked against the pins and
// used without the network. Otherwise every file is downloaded from
// <base>/<id>/resolve/<revision>/<file> into a temporary directory beside
// the cache entry and checked against its pin; only when all match is the
// directory renamed into place, so the cache never holds a partial or
// unverified model. Concurrent fetchers wait for each other (a lock file).
func Fetch(ctx context.Context, ref HubRef, pins Pins, opt FetchOptions) (string, error) {
	dir, err := fetch(ctx, ref, pins, opt)
	if err != nil {
		return "", fmt.Errorf("fetch model %s: %w", ref, err)
	}
	return dir, nil
}

func fetch(ctx context.Context, ref HubRef, pins Pins, opt FetchOptions) (string, error) {
	if len(pins) == 0 {
		return "", errors.New("no SHA-256 pins: every file to fetch must be pinned")
	}
	logf := func(format string, args ...any) {
		if opt.Log != nil {
			opt.Log(fmt.Sprintf(format, args...))
		}
	}
	base := strings.TrimRight(opt.BaseURL, "/")
	if base == "" {
		base = DefaultHubURL
	}
	if u, err := url.Parse(base); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("hub URL %q: want http(s)://host[/path]", base)
	}
	cache := opt.CacheDir
	if cache == "" {
		var err error
		if cache, err = ModelCacheDir(); err != nil {
			return "", err
		}
	}
	client := opt.Client
	if client == nil {
		client = http.DefaultClient
	}
	parent := filepath.Join(cache, strings.ReplaceAll(ref.ID, "/", "--"))
	final := filepath.Join(parent, strings.ReplaceAll(ref.Revision, "/", "--")+"-"+pins.key())

	if _, err := os.Stat(final); err == nil {
		if err := pins.verify(final); err == nil {
			return final, nil
		} else {
			logf("model %s: cached copy %s is damaged (%v); fetching it again", ref, final, err)
		}
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	unlock, err := lockFile(filepath.Join(parent, ".lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(final); err == nil { // fetched while we waited, or damaged
		if err := pins.verify(final); err == nil {
			return final, nil
		}
		if err := os.RemoveAll(final); err != nil {
			return "", err
		}
	}
	tmp, err := os.MkdirTemp(parent, ".fetch-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	for _, f := range pins.sortedFiles() {
		u := base + "/" + escapePath(ref.ID) + "/resolve/" + url.PathEscape(ref.Revision) + "/" + escapePath(f)
		logf("model %s: downloading %s", ref, f)
		if err := download(ctx, client, u, filepath.Join(tmp, filepath.FromSlash(f)), pins[f]); err != nil {
			return "", fmt.Errorf("%s: %w", f, err)
		}
	}
	if err := os.Rename(tmp, final); err != nil {
		return "", err
	}
	logf("model %s: installed in %s", ref, final)
	return final, nil
}

func escapePath(p string) string {
	parts := strings.Split(p, "/")
	for i := range parts {
		parts[i] = url.PathEscape(parts[i])
	}
	return strings.Join(parts, "/")
}

// download writes one file and checks its length and SHA-256.
func download(ctx context.Context, client *http.Client, u, dst, want string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", "strata-hfmodel")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return fmt.Errorf("GET %s: %s (no such file at this revision: check the pinned file names)", u, resp.Status)
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("GET %s: %s (the hub answers so for an unknown id or revision, and for gated or private models)", u, resp.Status)
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), io.LimitReader(resp.Body, maxFileBytes+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	switch {
	case err != nil && resp.ContentLength > 0:
		return fmt.Errorf("GET %s: truncated: %d of %d bytes: %w", u, n, resp.ContentLength, err)
	case err != nil:
		return fmt.Errorf("GET %s: after %d bytes: %w", u, n, err)
	case n > maxFileBytes:
		return fmt.Errorf("GET %s: larger than %d bytes", u, int64(maxFileBytes))
	case resp.ContentLength >= 0 && n != resp.ContentLength:
		return fmt.Errorf("GET %s: truncated: %d of %d bytes", u, n, resp.ContentLength)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("SHA-256 %s does not match the pin %s (%d bytes from %s)", got, want, n, u)
	}
	return nil
}

// lockFile takes an exclusive lock on path (created if needed).
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// Options configures Open.
type Options struct {
	// SHA256 pins the files: required for a hub model (and the list of
	// files to fetch); for a directory, the pinned files are checked.
	SHA256 Pins
	Fetch  FetchOptions
}

// Open loads a model from a directory, or from the hub when model is
// "<org>/<name>@<revision>" (fetched into the cache first, see Fetch).
func Open(ctx context.Context, model string, opt Options) (*Model, error) {
	if st, err := os.Stat(model); err == nil && st.IsDir() {
		if len(opt.SHA256) > 0 {
			if err := opt.SHA256.verify(model); err != nil {
				return nil, fmt.Errorf("load local model %s: %w", model, err)
			}
		}
		return Load(model, "")
	}
	ref, err := ParseHubRef(model)
	if err != nil {
		return nil, fmt.Errorf("local model: %w", err)
	}
	dir, err := Fetch(ctx, ref, opt.SHA256, opt.Fetch)
	if err != nil {
		return nil, err
	}
	return Load(dir, path.Base(ref.ID))
}
