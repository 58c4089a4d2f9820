package pdf

import "golang.org/x/sys/unix"

// canLimitMemory: Linux sets another process's limits with prlimit(2).
const canLimitMemory = true

// limitMemory caps the address space of process pid at n bytes.
func limitMemory(pid int, n int64) error {
	return unix.Prlimit(pid, unix.RLIMIT_AS, &unix.Rlimit{Cur: uint64(n), Max: uint64(n)}, nil)
}
