//go:build !linux

package pdf

import "errors"

// canLimitMemory: elsewhere the prlimit command, when present, sets the limit.
const canLimitMemory = false

func limitMemory(int, int64, bool) error { return errors.New("not supported on this system") }
