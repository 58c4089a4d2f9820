//go:build !linux

package isolate

import (
	"os"
	"os/exec"
)

// ownGroup: only Linux kills a child with its parent; elsewhere the child
// ends at its own time limit.
func ownGroup(*exec.Cmd) {}

// killGroup kills p alone.
func killGroup(p *os.Process) { _ = p.Kill() }

// residentBytes: the memory budget is watched on Linux only; elsewhere the
// child's GOMEMLIMIT alone bounds it.
func residentBytes(int) (int64, bool) { return 0, false }
