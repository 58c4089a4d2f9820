package index

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/shared/pipeline"
)

// Relabels tells readers which access changes are being applied
// (pipeline.RelabelsBucket), so a document's readers change when the
// change is read rather than when its last chunk is rewritten.
type Relabels interface {
	// Announce records r unless a later read of the file's tags is
	// announced; it returns the record's revision (0: not recorded).
	Announce(ctx context.Context, r pipeline.Relabel) (uint64, error)
	// Withdraw deletes the record put at revision, unless another replaced it.
	Withdraw(ctx context.Context, project, fileID string, revision uint64) error
}

// announceRelabel records, for readers, that ac is about to give the
// file's version fileVersionID its readers; the returned func withdraws
// the record once the change is done (applied, skipped or failed: a
// redelivery announces again). Announcing is best effort: without it the
// change is the same, readers only see it once its objects are written.
func (w *Writer) announceRelabel(ctx context.Context, ac pipeline.TagsChanged, fileVersionID string) (withdraw func()) {
	if w.relabels == nil || fileVersionID == "" {
		return func() {}
	}
	r := pipeline.Relabel{Project: ac.Object.Project, FileID: ac.FileID, FileVersionID: fileVersionID,
		Readers: ac.Access.Readers(), ReadAt: ac.Access.ReadAt, AnnouncedAt: w.now().UTC()}
	rev, err := w.relabels.Announce(ctx, r)
	if err != nil {
		w.log.Warn("announce access change", "file_id", ac.FileID, "err", err)
		return func() {}
	}
	if rev == 0 {
		return func() {}
	}
	return func() {
		// The change's own context may be cancelled (shutdown): the record still goes.
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := w.relabels.Withdraw(wctx, r.Project, r.FileID, rev); err != nil {
			w.log.Warn("withdraw access change", "file_id", ac.FileID, "err", err)
		}
	}
}

// KVRelabels keeps the records in NATS KV.
type KVRelabels struct{ kv jetstream.KeyValue }

// OpenRelabels creates or opens the bucket.
func OpenRelabels(ctx context.Context, js jetstream.JetStream, replicas int) (*KVRelabels, error) {
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: pipeline.RelabelsBucket,
		Description: "Strata: access changes being applied, read by queryd", History: 1,
		TTL: pipeline.RelabelMaxAge, Storage: jetstream.FileStorage, Replicas: replicas})
	if err != nil {
		return nil, fmt.Errorf("open kv %s: %w", pipeline.RelabelsBucket, err)
	}
	return &KVRelabels{kv: kv}, nil
}

// Announce implements Relabels: compare and set, so that of two changes of
// one file announced out of order the later read stays.
func (k *KVRelabels) Announce(ctx context.Context, r pipeline.Relabel) (uint64, error) {
	key := pipeline.RelabelKey(r.Project, r.FileID)
	val, err := json.Marshal(r)
	if err != nil {
		return 0, err
	}
	for range 5 {
		e, err := k.kv.Get(ctx, key)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			rev, err := k.kv.Create(ctx, key, val)
			if errors.Is(err, jetstream.ErrKeyExists) {
				continue // announced meanwhile: compare with it
			}
			if err != nil {
				return 0, fmt.Errorf("announce access change of %s: %w", r.FileID, err)
			}
			return rev, nil
		}
		if err != nil {
			return 0, fmt.Errorf("read access change of %s: %w", r.FileID, err)
		}
		var held pipeline.Relabel
		if json.Unmarshal(e.Value(), &held) == nil && !held.ReadAt.Before(r.ReadAt) {
			return 0, nil // a later (or this very) read is announced
		}
		rev, err := k.kv.Update(ctx, key, val, e.Revision())
		if err == nil {
			return rev, nil
		}
		if !isWrongRevision(err) {
			return 0, fmt.Errorf("announce access change of %s: %w", r.FileID, err)
		}
	}
	return 0, fmt.Errorf("announce access change of %s: the record kept changing", r.FileID)
}

// Withdraw implements Relabels.
func (k *KVRelabels) Withdraw(ctx context.Context, project, fileID string, revision uint64) error {
	err := k.kv.Delete(ctx, pipeline.RelabelKey(project, fileID), jetstream.LastRevision(revision))
	if err != nil && !isWrongRevision(err) {
		return fmt.Errorf("withdraw access change of %s: %w", fileID, err)
	}
	return nil
}

// isWrongRevision reports a compare-and-set that lost: the key changed
// (replicated streams answer with another code than single ones).
func isWrongRevision(err error) bool {
	var apiErr *jetstream.APIError
	return errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) ||
		errors.As(err, &apiErr) && (apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence ||
			apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequenceConstant)
}
