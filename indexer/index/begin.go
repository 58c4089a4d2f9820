package index

// The first step of a commit: the project is locked (in this process and
// across indexers), what an interrupted commit left is undone (recover.go),
// and the next sequence is intended before any of its objects is written.

import (
	"context"
	"fmt"
	"sync"

	"github.com/strata-kb/strata/shared/schema"
)

// begin locks the project, undoes what an interrupted commit left behind,
// and returns the next sequence. The caller must call the returned unlock.
func (w *Writer) begin(ctx context.Context, project string) (next int64, unlock func(), err error) {
	if err := w.ensureTenant(ctx, project); err != nil {
		return 0, nil, err
	}
	unlock, err = w.lock(ctx, project)
	if err != nil {
		return 0, nil, err
	}
	wm, err := w.settle(ctx, project)
	if err == nil {
		err = w.intend(ctx, project, wm+1)
	}
	if err != nil {
		unlock()
		return 0, nil, err
	}
	return wm + 1, unlock, nil
}

func (w *Writer) ensureTenant(ctx context.Context, project string) error {
	if _, ok := w.tenants.Load(project); ok {
		return nil
	}
	if err := schema.EnsureTenant(ctx, w.wv, project); err != nil {
		return err
	}
	w.tenants.Store(project, struct{}{})
	return nil
}

// lock makes the caller the only committer of project: in this process
// (a mutex) and across processes (the commit lease).
func (w *Writer) lock(ctx context.Context, project string) (unlock func(), err error) {
	m, _ := w.projects.LoadOrStore(project, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	if w.locks == nil {
		return mu.Unlock, nil
	}
	release, lost, err := w.locks.Acquire(ctx, project)
	if err != nil {
		mu.Unlock()
		return nil, err
	}
	w.leaseLost.Store(project, lost)
	return func() {
		w.fences.Delete(project)
		w.leaseLost.Delete(project)
		release()
		mu.Unlock()
	}, nil
}

// intend records that objects of commit seq are about to be written. It
// comes before any of them is: a crash from here on leaves an intent above
// the watermark for the next commit to see.
func (w *Writer) intend(ctx context.Context, project string, seq int64) error {
	if err := w.seqs.Intend(ctx, project, seq); err != nil {
		return err
	}
	fence, err := w.seqs.Claim(ctx, project, seq-1)
	if err != nil {
		return err
	}
	w.fences.Store(project, fence)
	return nil
}

// fenced returns ErrFenced when another indexer claimed project since this
// commit's intend: nothing more of this commit may be written. Checked
// before each write of objects, so a holder paused past its lease writes
// nothing once it wakes (publish is fenced in the store itself).
func (w *Writer) fenced(ctx context.Context, project string, step string) error {
	if w.pauseHook != nil {
		w.pauseHook(step)
	}
	fence, ok := w.fences.Load(project)
	if !ok {
		return fmt.Errorf("%s: no fence: the commit did not intend its sequence", project)
	}
	return w.seqs.Check(ctx, project, fence.(uint64))
}
