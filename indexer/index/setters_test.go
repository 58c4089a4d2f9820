package index

// Tests build their writers with New and a few fields of Config, then give
// some of them more: these set what Config would have.

// SetBatchParallel sets Config.BatchParallel's field after New.
func (w *Writer) SetBatchParallel(n int) { w.batchParallel = max(n, 1) }

// SetCommitLocks sets Config.CommitLocks's field after New.
func (w *Writer) SetCommitLocks(l CommitLocks) { w.locks = l }

// SetRelabels sets Config.Relabels's field after New.
func (w *Writer) SetRelabels(r Relabels) { w.relabels = r }
