package index

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/strata-kb/strata/shared/ids"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/schema"
	"github.com/strata-kb/strata/shared/wvquery"
)

// CommitsBucket is the NATS KV bucket holding each project's published
// commit sequence. It is the authority: a Weaviate read that comes back empty
// while a restarted weaviate-server is still loading its shards must never
// look like "sequence 0", or the rollback of unpublished commits would delete
// published ones. Weaviate's ProjectState object mirrors it for readers.
const CommitsBucket = pipeline.CommitsBucket

// Sequences stores published sequences.
type Sequences interface {
	Get(ctx context.Context, project string) (seq int64, found bool, err error)
	// Set raises the sequence to seq; it never lowers it.
	Set(ctx context.Context, project string, seq int64) error
	// Intend records that objects of commit seq are about to be written;
	// Intent returns the last sequence intended (0 when none was recorded).
	// A commit intended above the published sequence may have left objects
	// behind, and only then does the next commit have to roll back.
	Intend(ctx context.Context, project string, seq int64) error
	Intent(ctx context.Context, project string) (int64, error)
	// Claim makes the caller the project's committer in the store itself:
	// it rewrites the published sequence unchanged and returns the entry's
	// new revision, the commit's fence. A committer paused past its lease
	// while another claimed and committed then finds its fence gone.
	Claim(ctx context.Context, project string, published int64) (fence uint64, err error)
	// Publish raises the sequence to seq by compare-and-set on fence:
	// ErrFenced when another committer claimed since.
	Publish(ctx context.Context, project string, seq int64, fence uint64) error
	// Check returns ErrFenced when another committer claimed since fence.
	Check(ctx context.Context, project string, fence uint64) error
}

// ErrFenced means another indexer claimed the project since this commit
// began: this one's lease passed (the process was paused or cut off past
// it), so it must publish and write nothing more.
var ErrFenced = errors.New("commit fenced: another indexer has claimed the project since this commit began")

// IntentsBucket holds the last commit sequence each project's committer
// was about to write (see Sequences.Intend).
const IntentsBucket = "strata_commit_intents"

// KVSequences keeps sequences in NATS KV.
type KVSequences struct{ kv, intents jetstream.KeyValue }

// OpenSequences creates or opens the bucket.
func OpenSequences(ctx context.Context, js jetstream.JetStream, replicas int) (*KVSequences, error) {
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: CommitsBucket,
		Description: "Strata: published commit sequence per project", History: 1, Storage: jetstream.FileStorage, Replicas: replicas})
	if err != nil {
		return nil, fmt.Errorf("open kv %s: %w", CommitsBucket, err)
	}
	intents, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: IntentsBucket,
		Description: "Strata: commit sequence being written per project", History: 1, Storage: jetstream.FileStorage, Replicas: replicas})
	if err != nil {
		return nil, fmt.Errorf("open kv %s: %w", IntentsBucket, err)
	}
	return &KVSequences{kv: kv, intents: intents}, nil
}

// Intend implements Sequences.
func (k *KVSequences) Intend(ctx context.Context, project string, seq int64) error {
	if _, err := k.intents.Put(ctx, project, binary.BigEndian.AppendUint64(nil, uint64(seq))); err != nil {
		return fmt.Errorf("record intent %d of %s: %w", seq, project, err)
	}
	return nil
}

// Intent implements Sequences.
func (k *KVSequences) Intent(ctx context.Context, project string) (int64, error) {
	e, err := k.intents.Get(ctx, project)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read intent of %s: %w", project, err)
	}
	if len(e.Value()) != 8 {
		return 0, fmt.Errorf("intent of %s: corrupt value", project)
	}
	return int64(binary.BigEndian.Uint64(e.Value())), nil
}

// Claim implements Sequences.
func (k *KVSequences) Claim(ctx context.Context, project string, published int64) (uint64, error) {
	for range 20 {
		e, err := k.kv.Get(ctx, project)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
			rev, err := k.kv.Create(ctx, project, binary.BigEndian.AppendUint64(nil, uint64(published)))
			if err == nil || !errors.Is(err, jetstream.ErrKeyExists) {
				return rev, wrapClaim(project, err)
			}
		case err != nil:
			return 0, wrapClaim(project, err)
		default:
			// The value stays as it is (it never goes down); only its
			// revision moves, and becomes the fence.
			rev, err := k.kv.Update(ctx, project, e.Value(), e.Revision())
			if err == nil || !errors.Is(err, jetstream.ErrKeyExists) {
				return rev, wrapClaim(project, err)
			}
		}
	}
	return 0, fmt.Errorf("claim sequence of %s: too much contention", project)
}

func wrapClaim(project string, err error) error {
	if err != nil {
		return fmt.Errorf("claim sequence of %s: %w", project, err)
	}
	return nil
}

// Publish implements Sequences.
func (k *KVSequences) Publish(ctx context.Context, project string, seq int64, fence uint64) error {
	_, err := k.kv.Update(ctx, project, binary.BigEndian.AppendUint64(nil, uint64(seq)), fence)
	switch {
	case errors.Is(err, jetstream.ErrKeyExists):
		return fmt.Errorf("publish %d of %s: %w", seq, project, ErrFenced)
	case err != nil:
		return fmt.Errorf("publish sequence of %s: %w", project, err)
	}
	return nil
}

// Check implements Sequences.
func (k *KVSequences) Check(ctx context.Context, project string, fence uint64) error {
	e, err := k.kv.Get(ctx, project)
	if err != nil {
		return fmt.Errorf("check the fence of %s: %w", project, err)
	}
	if e.Revision() != fence {
		return fmt.Errorf("%s: %w", project, ErrFenced)
	}
	return nil
}

// Get implements Sequences.
func (k *KVSequences) Get(ctx context.Context, project string) (int64, bool, error) {
	e, err := k.kv.Get(ctx, project)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("read sequence of %s: %w", project, err)
	}
	if len(e.Value()) != 8 {
		return 0, false, fmt.Errorf("sequence of %s: corrupt value", project)
	}
	return int64(binary.BigEndian.Uint64(e.Value())), true, nil
}

// Set implements Sequences with compare-and-set, so it only ever rises.
func (k *KVSequences) Set(ctx context.Context, project string, seq int64) error {
	val := binary.BigEndian.AppendUint64(nil, uint64(seq))
	for range 20 {
		e, err := k.kv.Get(ctx, project)
		switch {
		case errors.Is(err, jetstream.ErrKeyNotFound):
			if _, err := k.kv.Create(ctx, project, val); err == nil || !errors.Is(err, jetstream.ErrKeyExists) {
				return err
			}
		case err != nil:
			return fmt.Errorf("publish sequence of %s: %w", project, err)
		default:
			if int64(binary.BigEndian.Uint64(e.Value())) >= seq {
				return nil
			}
			if _, err := k.kv.Update(ctx, project, val, e.Revision()); err == nil || !errors.Is(err, jetstream.ErrKeyExists) {
				return err
			}
		}
	}
	return fmt.Errorf("publish sequence of %s: too much contention", project)
}

// Watermark returns the project's published commit sequence (0 before the first commit).
// The authority is the Sequences store; an index written before it existed
// is read from its ProjectState once and then recorded there.
func (w *Writer) Watermark(ctx context.Context, project string) (int64, error) {
	seq, found, err := w.seqs.Get(ctx, project)
	if err != nil || found {
		return seq, err
	}
	props, err := w.object(ctx, schema.ProjectStateClass, project, ids.Project(project))
	if err != nil || props == nil {
		return 0, err
	}
	return int64(wvquery.Float(props, "sequence")), nil
}
