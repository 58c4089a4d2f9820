package pdf

import "golang.org/x/sys/unix"

// canLimitMemory: Linux sets another process's limits with prlimit(2).
const canLimitMemory = true

// limitMemory caps process pid at n bytes: its address space, or for a Go
// program (dataOnly) its data segment. A Go runtime reserves address space
// far beyond what it uses and dies at random under an address-space limit
// of 1 GiB while using 12 MiB; the data limit bounds the memory it writes.
func limitMemory(pid int, n int64, dataOnly bool) error {
	resource := unix.RLIMIT_AS
	if dataOnly {
		resource = unix.RLIMIT_DATA
	}
	return unix.Prlimit(pid, resource, &unix.Rlimit{Cur: uint64(n), Max: uint64(n)}, nil)
}
