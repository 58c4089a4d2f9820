//go:build !linux

package isolate

import "os/exec"

// dieWithParent: only Linux kills a child with its parent; elsewhere the
// child ends at its own time limit.
func dieWithParent(*exec.Cmd) {}

// residentBytes: the memory budget is watched on Linux only; elsewhere the
// child's GOMEMLIMIT alone bounds it.
func residentBytes(int) (int64, bool) { return 0, false }
