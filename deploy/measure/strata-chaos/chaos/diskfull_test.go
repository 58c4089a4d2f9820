package chaos

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestFillStopsAtAFullDisk: the ballast ends at ENOSPC (/dev/full answers
// every write so) and never fills a disk bigger than the run's own.
func TestFillStopsAtAFullDisk(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	if n, err := fillFile(full, 8<<20); err != nil || n != 0 {
		t.Fatalf("a full disk: wrote %d, %v", n, err)
	}
	path := filepath.Join(t.TempDir(), ballastName)
	n, err := fill(path, 3<<20)
	if err == nil || !strings.Contains(err.Error(), "not full") {
		t.Fatalf("a disk with room: wrote %d, %v", n, err)
	}
	if n > 4<<20 {
		t.Fatalf("wrote %d bytes past a 3 MiB limit", n)
	}
}

// TestDisksAreMountedOnlyInANamespaceOfTheRunsOwn: in the namespace this
// machine started in, nothing is mounted and the run says why; in one of
// its own (a run under unshare -m as root), every engine node gets a tmpfs.
func TestDisksAreMountedOnlyInANamespaceOfTheRunsOwn(t *testing.T) {
	if d := mountDisks(t.TempDir(), []string{FaultKill}, 64<<20); d.dirs != nil || d.refused != "" {
		t.Fatalf("no full-disk fault asked, yet %+v", d)
	}
	state := t.TempDir()
	d := mountDisks(state, []string{FaultKill, FaultDiskFull}, 64<<20)
	defer d.unmount()
	if os.Getenv(MountNamespaceEnv) != "1" {
		if d.dirs != nil || d.refused == "" {
			t.Fatalf("mounted in the machine's own namespace: %+v", d)
		}
		t.Logf("refused, as it must be here: %s", d.refused)
		return
	}
	if d.refused != "" || len(d.dirs) != 10 {
		t.Fatalf("in a namespace of its own: %+v", d)
	}
	for name, dir := range d.dirs {
		var st syscall.Statfs_t
		if err := syscall.Statfs(dir, &st); err != nil || st.Blocks*uint64(st.Bsize) != 64<<20 {
			t.Errorf("%s's %s: %d blocks of %d, %v", name, dir, st.Blocks, st.Bsize, err)
		}
	}
}
