package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/strata-kb/strata/deploy/localstack"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/testservers"
)

// The full-disk fault needs each engine node's data directory on a disk of
// its own that the run may fill: a size-limited tmpfs mounted on it before
// the cluster starts. Mounting needs root, and a mount namespace of the
// run's own (unshare -m) so that nothing is mounted on the host and every
// mount goes when the run ends. Go cannot move a running process into a
// new mount namespace (the namespace is per thread and the runtime has
// many), so strata-chaos, and TestChaosShort, run themselves again under
// unshare(1): MountNamespaceCommand.

// MountNamespaceEnv marks a process that runs in a mount namespace made for
// it (its value is "1"), so it does not run itself again.
const MountNamespaceEnv = "STRATA_CHAOS_MOUNT_NS"

// NeedsMounts reports whether faults include the full-disk fault and this
// process has not yet been run again in a mount namespace of its own.
func NeedsMounts(faults []string) bool {
	return slices.Contains(faults, FaultDiskFull) && os.Getenv(MountNamespaceEnv) != "1"
}

// MountNamespaceCommand is argv run again in a private mount namespace
// (unshare --mount --propagation private), marked by MountNamespaceEnv.
// The error says why it cannot be (not root, no unshare).
func MountNamespaceCommand(ctx context.Context, argv []string) (*exec.Cmd, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("mounting a disk per engine node needs root")
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		return nil, fmt.Errorf("unshare(1) (util-linux) is not installed: %w", err)
	}
	cmd := exec.CommandContext(ctx, unshare, append([]string{"--mount", "--propagation", "private", "--"}, argv...)...)
	cmd.Env = append(os.Environ(), MountNamespaceEnv+"=1")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	return cmd, nil
}

// disks are the engine nodes' data directories, each a tmpfs of its own,
// by victim name (nats-1, minio-3, weaviate-2).
type disks struct {
	dirs map[string]string
	// refused says why no disk was mounted ("" when they were, or when
	// the run has no full-disk fault): the fault is then skipped.
	refused string
}

// engineDirs are the data directories of the chaos cluster's engine nodes
// under the stack's data directory (testservers' layout).
func engineDirs(dataDir string) map[string]string {
	out := map[string]string{}
	for i := range 3 {
		out[fmt.Sprintf("nats-%d", i+1)] = testservers.NATSNodeDir(dataDir, i)
		out[fmt.Sprintf("weaviate-%d", i+1)] = testservers.WeaviateNodeDir(dataDir, i)
	}
	for i := range 4 {
		out[fmt.Sprintf("minio-%d", i+1)] = testservers.MinIONodeDir(dataDir, i)
	}
	return out
}

// mountDisks mounts a tmpfs of size bytes on every engine node's data
// directory under state, when faults include the full-disk fault. It
// mounts only in a namespace made for the run (MountNamespaceEnv), never
// on the host: outside one, or when a mount is refused, the disks are not
// mounted and refused says why.
func mountDisks(state string, faults []string, size int64) disks {
	if !slices.Contains(faults, FaultDiskFull) {
		return disks{}
	}
	// The marker is set by MountNamespaceCommand; children inherit both
	// it and the namespace. (PID 1's namespace cannot be read to compare
	// with in a container, even as root.)
	if os.Getenv(MountNamespaceEnv) != "1" {
		return disks{refused: "not in a mount namespace of its own (as root, strata-chaos and TestChaosShort run themselves again under unshare -m)"}
	}
	d := disks{dirs: engineDirs(filepath.Join(state, "data"))}
	for name, dir := range d.dirs {
		err := os.MkdirAll(dir, 0o755)
		if err == nil {
			err = syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, fmt.Sprintf("size=%d,mode=0755", size))
		}
		if err != nil {
			d.unmount()
			return disks{refused: fmt.Sprintf("mount a %d-byte tmpfs on %s's %s: %v", size, name, dir, err)}
		}
	}
	return d
}

// unmount takes the disks away (their data with them).
func (d disks) unmount() {
	for _, dir := range d.dirs {
		_ = syscall.Unmount(dir, syscall.MNT_DETACH)
	}
}

// ballastName is the file that fills a disk.
const ballastName = "strata-chaos-ballast"

// fill writes zeros to path until the disk is full and returns how much
// it wrote. A disk with room for more than limit bytes is not one the run
// mounted: fill stops there with an error rather than fill a real disk.
func fill(path string, limit int64) (int64, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return fillFile(f, limit)
}

func fillFile(f *os.File, limit int64) (int64, error) {
	block := make([]byte, 1<<20)
	var n int64
	for n <= limit {
		w, err := f.Write(block)
		n += int64(w)
		if errors.Is(err, syscall.ENOSPC) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
	return n, fmt.Errorf("wrote %d bytes to %s and it is not full: not a disk of the run's own", n, f.Name())
}

// needsRestartAfterFullDisk: the engines whose node must be restarted once
// space returns, as an operator would (found with this fault, Weaviate
// 1.35.2, nats-server of testservers' pin), and why.
var needsRestartAfterFullDisk = map[string]string{
	"nats":     "nats-server disables JetStream on a node whose disk filled (\"JetStream out of resources, will be DISABLED\") until it restarts",
	"weaviate": "Weaviate keeps failing every write to a bucket whose write-ahead log met the full disk (\"flushing WAL ...: no space left on device\") until it restarts",
}

// fillOne fills vic's disk, holds it full for cfg.DiskFullHold, frees it,
// restarts the node when its engine needs that (needsRestartAfterFullDisk;
// Helped says so) and waits until the cluster is whole. Resumed is how
// long after the disk was freed an upload made then was indexed and
// searchable.
func fillOne(ctx context.Context, cfg Config, c *cluster, vic *victim, dir string, began time.Time, last *atomic.Pointer[string], probe func(context.Context) (time.Duration, error)) Kill {
	start := time.Now()
	k := Kill{Kind: FaultDiskFull, Victim: vic.name, At: start.Sub(began), Paused: cfg.DiskFullHold}
	desc := fmt.Sprintf("%s's disk filled at %s for %s", vic.name, k.At.Round(time.Second), cfg.DiskFullHold.Round(time.Second))
	last.Store(&desc)
	ballast := filepath.Join(dir, ballastName)
	n, err := fill(ballast, cfg.DiskSize)
	k.Filled = n
	if err != nil {
		_ = os.Remove(ballast)
		k.Err = fmt.Sprintf("fill %s: %v", dir, err)
		return k
	}
	select {
	case <-ctx.Done():
	case <-time.After(cfg.DiskFullHold):
	}
	if err := os.Remove(ballast); err != nil {
		k.Err = fmt.Sprintf("free %s: %v", dir, err)
		return k
	}
	freed := time.Now()
	k.Restarted = freed.Sub(start)
	desc2 := fmt.Sprintf("%s's disk filled at %s for %s, freed, cluster not yet whole", vic.name, k.At.Round(time.Second), cfg.DiskFullHold.Round(time.Second))
	last.Store(&desc2)
	type probed struct {
		took time.Duration
		err  error
	}
	resumed := make(chan probed, 1)
	go func() {
		took, err := probe(ctx)
		resumed <- probed{took, err}
	}()

	if why, ok := needsRestartAfterFullDisk[vic.engine]; ok {
		k.Helped = "restarted once its disk was freed: " + why
		vic.kill()
		sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		err := vic.start(sctx)
		cancel()
		if err != nil {
			k.Err = fmt.Sprintf("restart after the disk was freed: %v", err)
		}
	}
	if k.Err == "" {
		wctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
		if err := c.whole(wctx); err != nil {
			k.Err = err.Error()
		}
		cancel()
	}
	k.Whole = time.Since(start)
	p := <-resumed
	k.Resumed = p.took
	if p.err != nil && k.Err == "" {
		k.Err = fmt.Sprintf("ingest after the disk was freed: %v", p.err)
	}
	desc3 := fmt.Sprintf("%s's disk filled at %s for %s, full service again after %s", vic.name, k.At.Round(time.Second), cfg.DiskFullHold.Round(time.Second), k.Whole.Round(time.Millisecond))
	last.Store(&desc3)
	return k
}

// ProbeProject holds the uploads that time how soon ingest resumes after
// a disk is freed: a project apart, so the comparison of Project with the
// bucket does not count them.
const ProbeProject = "chaosprobe"

// ingestProbe uploads a new Markdown file (trying every MinIO node) and
// waits until object_status says it is embedded and searchable, and
// returns how long that took from the call.
func ingestProbe(w *writer, v *verifier, n int64) func(context.Context) (time.Duration, error) {
	return func(ctx context.Context) (time.Duration, error) {
		start := time.Now()
		key := fmt.Sprintf("%s/diskfull-%03d.md", ProbeProject, n)
		body := []byte(fmt.Sprintf("# Disk freed %d\n\nThe zqprobe%06d token marks it.\n", n, n))
		var etag string
		var errs []error
		for i := 0; etag == "" && time.Since(start) < time.Minute; i++ {
			c := w.clients[i%len(w.clients)]
			pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			info, err := c.PutObject(pctx, localstack.Bucket, key, bytes.NewReader(body), int64(len(body)), minio.PutObjectOptions{ContentType: "text/markdown"})
			cancel()
			if err != nil {
				errs = append(errs, err)
				time.Sleep(200 * time.Millisecond)
				continue
			}
			etag = info.ETag
		}
		if etag == "" {
			return 0, fmt.Errorf("upload %s: %w", key, errors.Join(errs...))
		}
		var last string
		for time.Since(start) < 2*time.Minute {
			raw, errText, err := v.call(ctx, v.urls[0], "object_status", map[string]any{"key": key, "etag": etag})
			if err != nil {
				return 0, err
			}
			var st objectStatus
			if errText == "" {
				_ = json.Unmarshal(raw, &st)
				if st.State == pipeline.StateEmbedded && st.Searchable {
					return time.Since(start), nil
				}
				last = fmt.Sprintf("%s, searchable %v %s %s", st.State, st.Searchable, st.Note, st.Error)
			} else {
				last = errText
			}
			select {
			case <-ctx.Done():
				return 0, ctx.Err()
			case <-time.After(250 * time.Millisecond):
			}
		}
		return 0, fmt.Errorf("%s not searchable 2 minutes after its upload: %s", key, last)
	}
}
